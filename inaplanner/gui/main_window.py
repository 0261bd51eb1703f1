"""The main window: canvas in the middle, docks around it, menus; other GUI parts plug in through
``install(window)`` (see ``PLUGIN_MODULES``)."""

from __future__ import annotations

import importlib
import logging
import os
import traceback
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtGui import (
    QAction,
    QCloseEvent,
    QDragEnterEvent,
    QDropEvent,
    QGuiApplication,
    QKeySequence,
    QUndoStack,
)
from PySide6.QtWidgets import (
    QApplication,
    QDialog,
    QDockWidget,
    QFrame,
    QInputDialog,
    QLabel,
    QMainWindow,
    QMenu,
    QMessageBox,
    QScrollArea,
    QToolBar,
    QUndoView,
    QWidget,
)

from inaplanner.errors import InaplannerError
from inaplanner.gui import theme
from inaplanner.gui.autosave import Autosave
from inaplanner.gui.canvas.view import TOOLS, Canvas
from inaplanner.gui.editor import FRAGMENT_MIME, Editor, watch
from inaplanner.gui.files import FileController
from inaplanner.gui.gcguard import clear_clipboard_at_exit, ensure_main_thread_gc
from inaplanner.gui.inspector import Inspector
from inaplanner.gui.jobs_panel import JobsPanel
from inaplanner.gui.theme import icon
from inaplanner.model import Scenario
from inaplanner.model.document import ScenarioDocument

log = logging.getLogger(__name__)

#: Modules that add to the window with ``install(window)``; a module that is not there is skipped.
PLUGIN_MODULES = (
    "inaplanner.gui.planning.wiring",
    "inaplanner.gui.deploy_dialog.wiring",
    "inaplanner.gui.monitor.panel",
    "inaplanner.gui.export",
    "inaplanner.gui.memsim",
    "inaplanner.gui.sweep",
)

TOOL_INFO = {
    "select": ("Select", "S", "Select, move and rubber-band select (S)"),
    "pan": ("Pan", "Space", "Drag the view (Space; the middle button pans in any tool)"),
    "host": ("Host", "H", "Click on the canvas to add a host: a worker or parameter server (H)"),
    "switch": ("Switch", "W", "Click on the canvas to add a switch (W)"),
    "programmable": ("Programmable switch", "P", "Click on the canvas to add a programmable switch (P)"),
    "link": ("Link", "L", "Drag from one node to another to link them (L)"),
}


class MainWindow(QMainWindow):
    """The desktop planner's window. Tests drive it through ``editor``, ``canvas``, ``files``,
    ``inspector``, ``jobs_panel`` and the actions; set ``headless_errors`` to record error
    messages in ``last_error`` instead of opening dialogs."""

    document_replaced = Signal()

    def __init__(
        self,
        document: ScenarioDocument | None = None,
        *,
        theme_mode: str = "system",
        recovery_dir: str | None = None,
        plugins: bool = True,
    ) -> None:
        super().__init__()
        ensure_main_thread_gc()  # worker threads must never run Python's collector on Qt objects
        self.document = document if document is not None else ScenarioDocument(Scenario("untitled"))
        self.headless_errors = False
        self.last_error: tuple[str, str] | None = None
        self.answers: dict[str, Any] = {}  # preset answers to questions (tests, scripting)
        self.actions_by_name: dict[str, QAction] = {}
        self._menus: dict[str, QMenu] = {}
        self.undo_stack = QUndoStack(self)
        self.undo_stack.setUndoLimit(0)
        self.editor = Editor(self.document, self.undo_stack)
        app = QApplication.instance()
        self.theme_mode = theme_mode
        self.colours = theme.resolve(theme_mode) if app is not None else theme.LIGHT
        self.canvas = Canvas(self.document, self.editor, self.colours, self)
        self.canvas.error.connect(self.show_error)
        self.setCentralWidget(self.canvas)
        self.setWindowIcon(icon("inaplanner"))
        self.setAcceptDrops(True)
        self.resize(1280, 800)
        self.setDockOptions(QMainWindow.DockOption.AnimatedDocks | QMainWindow.DockOption.AllowTabbedDocks)

        self.files = FileController(self)
        self.inspector = Inspector(self)
        self.jobs_panel = JobsPanel(self)
        self.undo_view = QUndoView(self.undo_stack)
        self.undo_view.setEmptyLabel("(opened)")
        self._build_menus()
        self._build_toolbars()
        self.inspector_dock = self.add_dock("Inspector", self.inspector)
        self.jobs_dock = self.add_dock("Jobs", self.jobs_panel)
        self.history_dock = self.add_dock("History", self.undo_view)
        self.tabifyDockWidget(self.inspector_dock, self.jobs_dock)
        self.tabifyDockWidget(self.jobs_dock, self.history_dock)
        from inaplanner.gui.canvas import hotlists

        hotlists.install(self)  # the Links and Switches hot lists, tabbed with the above
        self.inspector_dock.raise_()
        self._overlay_label = QLabel("")
        self.statusBar().addPermanentWidget(self._overlay_label)

        self.undo_stack.cleanChanged.connect(self._on_clean_changed)
        self.undo_stack.indexChanged.connect(self._on_index_changed)
        self.canvas.overlay_changed.connect(self._on_overlay_changed)
        watch(self, self.document, self._on_document_event)
        self.autosave = Autosave(self, recovery_dir)
        hints = QGuiApplication.styleHints()
        if hasattr(hints, "colorSchemeChanged"):
            hints.colorSchemeChanged.connect(self._on_system_scheme)
        self.update_title()
        if plugins:
            self._install_plugins()
            self._arrange_docks()
            self._build_run_bar()

    # ---- API used by the other GUI parts ---------------------------------------------------------

    def scenario(self) -> Scenario:
        return self.document.scenario

    def add_dock(self, title: str, widget: QWidget, area: Qt.DockWidgetArea = Qt.DockWidgetArea.RightDockWidgetArea) -> QDockWidget:
        """A dock holding ``widget`` (in a scroll area, so a crowded window still fits the screen;
        ``dock.content`` is the widget itself)."""
        dock = QDockWidget(title, self)
        dock.setObjectName(f"dock-{title}")
        scroll = QScrollArea(dock)
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        scroll.setWidget(widget)
        dock.setWidget(scroll)
        dock.content = widget
        self.addDockWidget(area, dock)
        view_menu = self.menu("View")
        panels = self._menus.get("View/Panels")
        if panels is None:
            panels = view_menu.addMenu("Panels")
            self._menus["View/Panels"] = panels
        toggle = dock.toggleViewAction()
        toggle.setToolTip(f"Show or hide the {title} panel")
        panels.addAction(toggle)
        return dock

    def menu(self, name: str) -> QMenu:
        """The top-level menu called ``name`` (created, before Help, when missing)."""
        if name in self._menus:
            return self._menus[name]
        bar = self.menuBar()
        help_menu = self._menus.get("Help")
        m = QMenu(name, self)
        m.setToolTipsVisible(True)
        if help_menu is not None:
            bar.insertMenu(help_menu.menuAction(), m)
        else:
            bar.addMenu(m)
        self._menus[name] = m
        return m

    def show_error(self, title: str, message: str) -> None:
        """One dialog with the message (recorded in ``last_error`` when ``headless_errors``)."""
        self.last_error = (title, message)
        log.info("%s: %s", title, message)
        self.status(f"{title}: {message}")
        if self.headless_errors:
            return
        QMessageBox.critical(self, title, message)

    def status(self, message: str, timeout_ms: int = 8000) -> None:
        self.statusBar().showMessage(message, timeout_ms)

    def guard(self, title: str, fn: Callable[[], Any]) -> Any:
        """Run ``fn``; show an InaplannerError as one error dialog and return None."""
        try:
            return fn()
        except InaplannerError as exc:
            self.show_error(title, str(exc))
            return None

    def ask(self, key: str, title: str, text: str, buttons: QMessageBox.StandardButton,
            default: QMessageBox.StandardButton) -> QMessageBox.StandardButton:
        """A yes/no style question; ``answers[key]`` answers it without a dialog."""
        if key in self.answers:
            return self.answers[key]
        if self.headless_errors:
            return default
        return QMessageBox.question(self, title, text, buttons, default)

    def set_document(self, scenario: Scenario, path: str | None, modified: bool = False,
                     validated: bool = False) -> None:
        """Start over on a scenario (open/new): empty undo history, clean unless ``modified`` (a
        restored autosave), overlay cleared."""
        self.document.open(scenario, path, validated)
        self.undo_stack.clear()
        if modified:
            self.undo_stack.resetClean()
        else:
            self.undo_stack.setClean()
        self.document.modified = modified
        self.canvas.fit()
        self.update_title()
        self.document_replaced.emit()

    def is_modified(self) -> bool:
        return bool(self.document.modified)

    # ---- plug-ins ------------------------------------------------------------------------------

    def _install_plugins(self) -> None:
        """``install(window)`` of every plug-in module present. A broken plug-in is logged and
        listed in ``plugin_errors``; the window works without it."""
        self.plugins: dict[str, Any] = {}
        self.plugin_errors: dict[str, str] = {}
        for name in PLUGIN_MODULES:
            try:
                module = importlib.import_module(name)
            except ModuleNotFoundError as exc:
                if exc.name and name.startswith(exc.name):
                    continue
                self._plugin_failed(name, exc)
                continue
            except Exception as exc:  # a plug-in must not take the window down
                self._plugin_failed(name, exc)
                continue
            install = getattr(module, "install", None)
            if install is None:
                continue
            try:
                self.plugins[name] = install(self)
            except Exception as exc:
                self._plugin_failed(name, exc)

    def _plugin_failed(self, name: str, exc: BaseException) -> None:
        self.plugin_errors[name] = "".join(traceback.format_exception(exc))
        log.warning("GUI plug-in %s failed to install: %s", name, exc)
        self.status(f"{name} is unavailable: {exc}")

    def _build_run_bar(self) -> None:
        """Run, Cancel and the latest run's progress in a tool bar: always in view."""
        ctrl = getattr(self, "planning", None)
        if ctrl is None or not hasattr(ctrl, "run_action"):
            return
        from inaplanner.gui.planning.planner_panel import RunStrip

        bar = QToolBar("Run", self)
        bar.setObjectName("toolbar-run")
        bar.addAction(ctrl.run_action)
        bar.addAction(ctrl.cancel_action)
        self.run_strip = RunStrip(ctrl.manager)
        bar.addWidget(self.run_strip)
        self.addToolBar(bar)

    def _arrange_docks(self) -> None:
        """Plug-in docks share one tab group per side, so the window fits a laptop screen."""
        own = {self.inspector_dock, self.jobs_dock, self.history_dock, self.links_dock, self.switches_dock}
        for area in (Qt.DockWidgetArea.RightDockWidgetArea, Qt.DockWidgetArea.BottomDockWidgetArea,
                     Qt.DockWidgetArea.LeftDockWidgetArea):
            group = [d for d in self.findChildren(QDockWidget)
                     if d not in own and self.dockWidgetArea(d) == area and not d.isFloating()]
            for prev, dock in zip(group, group[1:], strict=False):
                self.tabifyDockWidget(prev, dock)
            if group:
                group[0].raise_()
                if area == Qt.DockWidgetArea.BottomDockWidgetArea:
                    self.resizeDocks([group[0]], [200], Qt.Orientation.Vertical)
        self.resizeDocks([self.inspector_dock], [400], Qt.Orientation.Horizontal)

    # ---- menus and tool bars ---------------------------------------------------------------------

    def action(self, name: str, text: str, slot: Callable[[], Any], shortcut: QKeySequence | str | None = None,
               tip: str = "", icon_name: str | None = None, checkable: bool = False) -> QAction:
        act = QAction(text, self)
        if shortcut is not None:
            act.setShortcut(QKeySequence(shortcut))
        keys = act.shortcut().toString(QKeySequence.SequenceFormat.NativeText)
        act.setToolTip(f"{tip or text}" + (f" ({keys})" if keys else ""))
        act.setStatusTip(tip or text)
        if icon_name:
            act.setIcon(icon(icon_name))
            act.setProperty("icon_name", icon_name)
        act.setCheckable(checkable)
        if checkable:
            act.toggled.connect(slot)
        else:
            act.triggered.connect(lambda _checked=False: slot())
        self.actions_by_name[name] = act
        self.addAction(act)
        return act

    def _build_menus(self) -> None:
        f = self.files
        file_menu = self.menu("File")
        file_menu.addAction(self.action("new", "&New", f.new, "Ctrl+N", "Start an empty scenario", "new"))
        file_menu.addAction(self.action("open", "&Open...", f.open_dialog, "Ctrl+O",
                                        "Open a scenario: inaplanner JSON, GraphML, Topology Zoo GML, node-link JSON", "open"))
        self.recent_menu = file_menu.addMenu("Open &Recent")
        self.recent_menu.aboutToShow.connect(self._fill_recent)
        file_menu.addAction(self.action("generate", "&Generate...", self._generate, "Ctrl+G",
                                        "Generate a leaf-spine, a fat-tree or a paper's testbed", "generate"))
        file_menu.addSeparator()
        file_menu.addAction(self.action("save", "&Save", f.save, "Ctrl+S",
                                        "Save the scenario (inaplanner JSON, atomic)", "save"))
        file_menu.addAction(self.action("save_as", "Save &As...", f.save_as_dialog, "Ctrl+Shift+S",
                                        "Save the scenario under a new name"))
        file_menu.addAction(self.action("export", "&Export...", f.export_dialog, "Ctrl+E",
                                        "Write the scenario as GraphML, GML or inaplanner JSON"))
        file_menu.addSeparator()
        file_menu.addAction(self.action("quit", "&Quit", self.close, "Ctrl+Q", "Close the window"))

        edit = self.menu("Edit")
        undo = self.undo_stack.createUndoAction(self, "&Undo")
        undo.setShortcut(QKeySequence("Ctrl+Z"))
        undo.setIcon(icon("undo"))
        undo.setProperty("icon_name", "undo")
        undo.setToolTip("Undo the last edit (Ctrl+Z)")
        redo = self.undo_stack.createRedoAction(self, "&Redo")
        redo.setShortcuts([QKeySequence("Ctrl+Shift+Z"), QKeySequence("Ctrl+Y")])
        redo.setIcon(icon("redo"))
        redo.setProperty("icon_name", "redo")
        redo.setToolTip("Redo the edit undone last (Ctrl+Shift+Z)")
        self.actions_by_name["undo"] = undo
        self.actions_by_name["redo"] = redo
        edit.addAction(undo)
        edit.addAction(redo)
        edit.addSeparator()
        edit.addAction(self.action("cut", "Cu&t", self.cut, "Ctrl+X", "Copy the selected nodes, then delete them"))
        edit.addAction(self.action("copy", "&Copy", self.copy, "Ctrl+C", "Copy the selected nodes and the links among them"))
        edit.addAction(self.action("paste", "&Paste", self.paste, "Ctrl+V", "Paste copied nodes"))
        edit.addAction(self.action("delete", "&Delete", self.delete_selection, "Del",
                                   "Delete the selected nodes and links", "delete"))
        edit.addAction(self.action("select_all", "Select &All", self.select_all, "Ctrl+A", "Select every node"))
        edit.addAction(self.action("rename", "Re&name...", self.rename_dialog, "F2", "Rename the selected node"))
        align = edit.addMenu("&Align")
        for mode, text, key in (
            ("left", "Left edges", "Ctrl+Alt+Left"),
            ("right", "Right edges", "Ctrl+Alt+Right"),
            ("top", "Top edges", "Ctrl+Alt+Up"),
            ("bottom", "Bottom edges", "Ctrl+Alt+Down"),
            ("hcentre", "Vertical line (same x)", "Ctrl+Alt+H"),
            ("vcentre", "Horizontal line (same y)", "Ctrl+Alt+V"),
            ("hdistribute", "Distribute horizontally", "Ctrl+Alt+D"),
            ("vdistribute", "Distribute vertically", "Ctrl+Alt+E"),
        ):
            align.addAction(self.action(f"align_{mode}", text, lambda m=mode: self.align(m), key, f"Align the selected nodes: {text.lower()}"))
        edit.addAction(self.action("snap", "S&nap to Grid", self._set_snap, "Ctrl+Shift+G",
                                   "Snap moved and added nodes to a 20-unit grid", "grid", checkable=True))

        view = self.menu("View")
        view.addAction(self.action("fit", "&Fit to View", self.canvas.fit, "Ctrl+0", "Show the whole network", "fit"))
        view.addAction(self.action("zoom_in", "Zoom &In", lambda: self.canvas.zoom_by(1.25), "Ctrl++", "Zoom in", "zoom-in"))
        view.addAction(self.action("zoom_out", "Zoom &Out", lambda: self.canvas.zoom_by(0.8), "Ctrl+-", "Zoom out", "zoom-out"))
        view.addAction(self.action("find", "F&ind Node...", self.find_dialog, "Ctrl+F", "Find a node by name", "find"))
        view.addSeparator()
        view.addAction(self.action("layout_tiered", "&Tiered Layout", lambda: self.relayout("tiered"), "Ctrl+Shift+T",
                                   "Hosts, leaves, aggregation and spines/cores in rows (Clos networks)", "layout"))
        view.addAction(self.action("layout_force", "F&orce Layout", lambda: self.relayout("force"), "Ctrl+Shift+F",
                                   "A force-directed layout for other networks"))
        view.addAction(self.action("layout_auto", "&Automatic Layout", lambda: self.relayout("auto"), "Ctrl+Shift+L",
                                   "Tiered for Clos networks, force-directed otherwise"))
        view.addSeparator()
        view.addAction(self.action("clear_overlay", "&Clear Overlay", lambda: self.canvas.set_overlay(None), "Ctrl+Shift+X",
                                   "Stop painting the plan's loads"))
        view.addAction(self.action("legend", "Show &Legend", self._set_legend, "Ctrl+Shift+K",
                                   "Show the overlay's colour legend", checkable=True))
        view.addAction(self.action("next_task", "Focus &Next Task", lambda: self.canvas.step_task(1), "T",
                                   "Show only the next task's aggregation tree, the rest dimmed (after the "
                                   "last: all tasks)"))
        view.addAction(self.action("previous_task", "Focus &Previous Task", lambda: self.canvas.step_task(-1),
                                   "Shift+T", "Show only the previous task's aggregation tree"))
        view.addAction(self.action("group_pods", "&Group Pods and Racks", self._set_grouping, "Ctrl+Shift+P",
                                   "Draw the pods (racks) of a large network as boxes until zoomed in "
                                   "(double-click a box to open it)", checkable=True))
        self.actions_by_name["group_pods"].setChecked(True)
        self.actions_by_name["legend"].setChecked(True)
        self.actions_by_name["zoom_in"].setShortcuts([QKeySequence("Ctrl++"), QKeySequence("Ctrl+=")])
        self.actions_by_name["delete"].setShortcuts([QKeySequence("Del"), QKeySequence("Backspace")])
        theme_menu = view.addMenu("T&heme")
        for mode, key in (("system", "Ctrl+Alt+0"), ("light", "Ctrl+Alt+1"), ("dark", "Ctrl+Alt+2")):
            theme_menu.addAction(self.action(f"theme_{mode}", mode.capitalize(), lambda m=mode: self.set_theme(m), key,
                                             f"Use the {mode} colours"))
        self.menu("Plan")
        self.menu("Tools")
        help_menu = self.menu("Help")
        help_menu.addAction(self.action("about", "&About", self._about, "F1", "About inaplanner"))

    def _build_toolbars(self) -> None:
        bar = QToolBar("Main", self)
        bar.setObjectName("toolbar-main")
        bar.setIconSize(QSize(20, 20))
        for name in ("new", "open", "save", "undo", "redo", "delete", "fit", "find"):
            bar.addAction(self.actions_by_name[name])
        self.addToolBar(bar)
        palette = QToolBar("Palette", self)
        palette.setObjectName("toolbar-palette")
        palette.setIconSize(QSize(24, 24))
        self.tool_actions: dict[str, QAction] = {}
        for tool in TOOLS:
            text, key, tip = TOOL_INFO[tool]
            act = QAction(icon(f"tool-{tool}"), text, self)
            act.setProperty("icon_name", f"tool-{tool}")
            act.setCheckable(True)
            act.setShortcut(QKeySequence(key))
            act.setToolTip(tip)
            act.triggered.connect(lambda _c=False, t=tool: self.canvas.set_tool(t))
            palette.addAction(act)
            self.tool_actions[tool] = act
            self.actions_by_name[f"tool_{tool}"] = act
            self.addAction(act)
        self.tool_actions["select"].setChecked(True)
        self.canvas.tool_changed.connect(self._on_tool_changed)
        self.addToolBar(Qt.ToolBarArea.LeftToolBarArea, palette)

    # ---- edit actions ----------------------------------------------------------------------------

    def delete_selection(self) -> None:
        nodes = self.canvas.selected_nodes()
        links = self.canvas.selected_links()
        if nodes or links:
            self.guard("Cannot delete", lambda: self.editor.remove(nodes, links))

    def select_all(self) -> None:
        self.canvas.select(self.canvas.canvas_scene().node_ids)

    def copy(self) -> str | None:
        nodes = self.canvas.selected_nodes()
        if not nodes:
            return None
        text = self.editor.copy(nodes)
        from PySide6.QtCore import QMimeData

        mime = QMimeData()
        mime.setData(FRAGMENT_MIME, text.encode("utf-8"))
        mime.setText(text)
        QGuiApplication.clipboard().setMimeData(mime)
        clear_clipboard_at_exit()
        self.status(f"copied {len(nodes)} node(s)")
        return text

    def cut(self) -> None:
        if self.copy() is not None:
            self.delete_selection()

    def paste(self, text: str | None = None) -> list[str]:
        if text is None:
            mime = QGuiApplication.clipboard().mimeData()
            if mime is None:
                return []
            if mime.hasFormat(FRAGMENT_MIME):
                text = bytes(mime.data(FRAGMENT_MIME).data()).decode("utf-8")
            else:
                text = mime.text()
        ids = self.guard("Cannot paste", lambda: self.editor.paste(text)) or []
        if ids:
            self.canvas.select(ids)
        return ids

    def align(self, mode: str) -> None:
        nodes = self.canvas.selected_nodes()
        if len(nodes) >= 2:
            self.guard("Cannot align", lambda: self.editor.align(nodes, mode))

    def relayout(self, kind: str) -> None:
        self.guard("Cannot lay out", lambda: self.editor.layout(kind))
        self.canvas.fit()

    def rename_dialog(self) -> None:
        nodes = self.canvas.selected_nodes()
        if len(nodes) != 1:
            self.status("select one node to rename")
            return
        new, ok = QInputDialog.getText(self, "Rename", f"New name for {nodes[0]}:", text=nodes[0])
        if ok and new:
            self.guard("Cannot rename", lambda: self.editor.rename(nodes[0], new))

    def find_dialog(self) -> None:
        name, ok = QInputDialog.getText(self, "Find node", "Node name:")
        if ok and name:
            found = self.canvas.find(name)
            self.status(f"found {found}" if found else f"no node called {name!r}")

    def _set_snap(self, on: bool) -> None:
        self.canvas.canvas_scene().snap_to_grid = bool(on)

    def _set_grouping(self, on: bool) -> None:
        self.canvas.canvas_scene().set_grouping(bool(on))
        self.canvas.viewport().update()

    def _set_legend(self, on: bool) -> None:
        self.canvas.show_legend = bool(on)
        self.canvas.viewport().update()

    def set_theme(self, mode: str) -> None:
        app = QApplication.instance()
        self.theme_mode = mode
        self.colours = theme.apply(app, mode) if isinstance(app, QApplication) else theme.resolve(mode)
        self.canvas.set_colours(self.colours)
        for act in self.actions_by_name.values():
            name = act.property("icon_name")
            if name:
                act.setIcon(icon(str(name)))

    def _on_system_scheme(self, *_args: object) -> None:
        if self.theme_mode == "system":
            self.set_theme("system")

    def _generate(self) -> None:
        from inaplanner.gui.generate_dialog import GenerateDialog

        dlg = GenerateDialog(self)
        if dlg.exec():
            spec = self.guard("Cannot generate", dlg.spec)
            if spec is not None:
                self.generate(spec)

    def generate(self, spec: Any) -> bool:
        """Build the network ``spec`` (a :class:`GenerateSpec`) and put it in place (undoable). It
        is built in a file job, the window going on (fat-tree k=64 takes 3.5 s)."""
        from inaplanner.gui.generate_dialog import build

        sc = self.files.work(f"generating {spec.kind}", "Cannot generate", lambda _job: build(spec),
                             discard_on_stop=True)
        if sc is None:
            return False
        self.load_generated(sc)
        return True

    def load_generated(self, scenario: Scenario) -> None:
        """Put a generated scenario in place (undoable) and show all of it."""
        self.guard("Cannot generate", lambda: self.editor.replace(scenario, f"Generate {scenario.name}"))
        self.document.path = None
        self.update_title()  # the title names the generated network, not the file before it
        self.canvas.fit()

    def _about(self) -> None:
        from inaplanner import __version__

        QMessageBox.about(self, "About inaplanner",
                          f"inaplanner {__version__}\nPlan in-network aggregation for ML training datacenters.")

    def _fill_recent(self) -> None:
        self.recent_menu.clear()
        paths = self.files.recent()
        if not paths:
            a = self.recent_menu.addAction("(none)")
            a.setEnabled(False)
        for p in paths:
            a = self.recent_menu.addAction(os.path.basename(p))
            a.setToolTip(p)
            a.triggered.connect(lambda _c=False, p=p: self.files.open_path(p))

    # ---- reactions -------------------------------------------------------------------------------

    def _on_tool_changed(self, tool: str) -> None:
        for name, act in self.tool_actions.items():
            act.setChecked(name == tool)

    def _on_clean_changed(self, clean: bool) -> None:
        self.document.modified = not clean
        self.update_title()

    def _on_overlay_changed(self, overlay: object) -> None:
        if overlay is None:
            self._overlay_label.setText("")
        else:
            s = overlay.summary()
            bad = s["violated_links"] + s["violated_switches"]
            self._overlay_label.setText(f"{s['title']}: objective {s['objective']:.6g}" + (f", {bad} violation(s)" if bad else ""))

    def _on_index_changed(self, _index: int) -> None:
        self.update_title()

    def _on_document_event(self, _event: object) -> None:
        self.update_title()

    def update_title(self) -> None:
        doc = self.document
        name = os.path.basename(doc.path) if doc.path else doc.scenario.name
        self.setWindowTitle(f"{name}{' *' if doc.modified else ''} - inaplanner")

    # ---- drag and drop, closing ------------------------------------------------------------------

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:  # noqa: N802
        if event.mimeData().hasUrls() and any(u.isLocalFile() for u in event.mimeData().urls()):
            event.acceptProposedAction()
        else:
            event.ignore()

    def dropEvent(self, event: QDropEvent) -> None:  # noqa: N802
        paths = [u.toLocalFile() for u in event.mimeData().urls() if u.isLocalFile()]
        if paths:
            event.acceptProposedAction()
            self.files.open_path(paths[0])

    def confirm_discard(self) -> bool:
        """When there are unsaved changes ask Save / Discard / Cancel; True when it is fine to go on."""
        if not self.is_modified():
            return True
        answer = self.ask(
            "unsaved",
            "Unsaved changes",
            "The scenario has unsaved changes. Save them first?",
            QMessageBox.StandardButton.Save | QMessageBox.StandardButton.Discard | QMessageBox.StandardButton.Cancel,
            QMessageBox.StandardButton.Cancel,
        )
        if answer == QMessageBox.StandardButton.Save:
            return bool(self.files.save())
        return answer == QMessageBox.StandardButton.Discard

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802
        job = self.files.jobs.current
        if job is not None:  # its outcome is still to be put in place or reported
            self.status(f"{job.what} is under way: close when it has ended, or Stop it first")
            event.ignore()
            return
        if not self.confirm_discard():
            event.ignore()
            return
        self.autosave.finish()
        self.shutdown()
        event.accept()

    def shutdown(self) -> None:
        """Release what would outlive the closed window: every plug-in's workers, threads and
        timers (its ``shutdown()``), the dialogs it opened, and the canvas's hold on the document.
        Qt deletes a closed window later, from whatever event loop runs next; after this nothing
        of it still runs or reaches Python code by then."""
        if getattr(self, "_shut_down", False):
            return
        self._shut_down = True
        for name, plugin in getattr(self, "plugins", {}).items():
            stop = getattr(plugin, "shutdown", None)
            if callable(stop):
                try:
                    stop()
                except Exception as exc:  # one plug-in must not keep the others running
                    log.warning("GUI plug-in %s failed to shut down: %s", name, exc)
        for dialog in self.findChildren(QDialog):
            dialog.close()
        self.files.jobs.finish()
        self.canvas.shutdown()
