"""The controller: every edit of the desktop planner as an undoable command on a QUndoStack.

An edit runs at once on the document (which validates it and raises ``ValidationError`` with the
document untouched when a rule breaks); only an edit that succeeded lands on the undo stack. A
command holds the operations it ran (so redo runs them again on the identical state) and the
``Change`` records they returned (so undo reverts them, last first).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from PySide6.QtCore import QObject
from PySide6.QtGui import QUndoCommand, QUndoStack

from inaplanner.errors import ValidationError
from inaplanner.io.native import scenario_from_dict, scenario_to_dict
from inaplanner.model import Host, Job, Link, Scenario, Switch
from inaplanner.model.document import Change, DocEvent, ScenarioDocument, make_node
from inaplanner.topologies.layout import auto_layout, force_layout, tiered_layout

Op = Callable[[], Change]

FRAGMENT_FORMAT = "inaplanner-fragment"
FRAGMENT_MIME = "application/x-inaplanner-fragment"
ALIGN_MODES = ("left", "right", "top", "bottom", "hcentre", "vcentre", "hdistribute", "vdistribute")
LAYOUTS = {"tiered": tiered_layout, "force": force_layout, "auto": auto_layout}


def watch(obj: QObject, document: ScenarioDocument, callback: Callable[[DocEvent], None]) -> None:
    """Subscribe ``callback`` to the document for as long as the Qt object ``obj`` lives."""
    unsubscribe = document.subscribe(callback)
    obj.destroyed.connect(lambda *_: unsubscribe())


def apply_all(ops: Sequence[Op]) -> list[Change]:
    """Run ops in order; if one fails, undo those that ran (last first) and re-raise."""
    done: list[Change] = []
    try:
        for op in ops:
            done.append(op())
    except Exception:
        for change in reversed(done):
            change.undo()
        raise
    return done


class DocCommand(QUndoCommand):
    """Edits already applied once; redo applies them again, undo reverts them."""

    def __init__(self, text: str, ops: Sequence[Op], changes: list[Change]) -> None:
        super().__init__(text)
        self._ops = list(ops)
        self._changes = changes
        self._first = True

    def redo(self) -> None:
        if self._first:
            self._first = False
            return
        self._changes = apply_all(self._ops)

    def undo(self) -> None:
        for change in reversed(self._changes):
            change.undo()
        self._changes = []


def _prefix(node_id: str) -> str:
    m = re.match(r"^(.*?)(\d+)$", node_id)
    return m.group(1) if m and m.group(1) else node_id + "_"


class Editor:
    """Undoable edits of a document. Every method either does the whole edit (one undo step) or
    raises an :class:`~inaplanner.errors.InaplannerError` and changes nothing."""

    def __init__(self, document: ScenarioDocument, stack: QUndoStack | None = None) -> None:
        self.document = document
        self.stack = stack if stack is not None else QUndoStack()
        self.default_capacity = 100.0

    # ---- plumbing ----------------------------------------------------------------------------

    def run(self, text: str, ops: Sequence[Op] | Op) -> list[Change]:
        ops = [ops] if callable(ops) else list(ops)
        changes = apply_all(ops)
        self.stack.push(DocCommand(text, ops, changes))
        return changes

    @property
    def scenario(self) -> Scenario:
        return self.document.scenario

    # ---- nodes -------------------------------------------------------------------------------

    def add_node(self, kind: str, pos: tuple[float, float], node_id: str | None = None, **attrs: Any) -> str:
        """Add a host, a switch or a programmable switch (kind "host", "switch", "programmable")."""
        doc = self.document
        if kind == "programmable":
            attrs.setdefault("programmable", True)
            kind = "switch"
        nid = node_id or doc.unique_id("H" if kind == "host" else "S")
        node = make_node(kind, nid, (float(pos[0]), float(pos[1])), **attrs)
        self.run(f"Add {nid}", lambda: doc.add_node(node))
        return nid

    def remove(self, node_ids: Iterable[str] = (), link_indices: Iterable[int] = ()) -> None:
        """Delete links and nodes (with their links and places in jobs) as one step."""
        doc = self.document
        ids = list(dict.fromkeys(node_ids))
        links = sorted(set(link_indices))
        ops: list[Op] = []
        if links:
            ops.append(lambda: doc.remove_links(links))
        if ids:
            ops.append(lambda: doc.remove_nodes(ids))
        if not ops:
            return
        what = ", ".join(ids[:3]) + ("..." if len(ids) > 3 else "") if ids else f"{len(links)} link(s)"
        self.run(f"Delete {what}", ops)

    def set_node(self, node_id: str, **attrs: Any) -> None:
        doc = self.document
        self.run(f"Edit {node_id}", lambda: doc.set_node_attrs(node_id, **attrs))

    def set_nodes(self, node_ids: Iterable[str], **attrs: Any) -> None:
        """Bulk edit: the same fields on several nodes, one undo step."""
        doc = self.document
        ids = list(node_ids)
        ops = [(lambda nid=nid: doc.set_node_attrs(nid, **attrs)) for nid in ids]
        self.run(f"Edit {len(ids)} node(s)", ops)

    def set_programmable(self, node_id: str, programmable: bool = True, pipelines: int | None = None) -> None:
        attrs: dict[str, Any] = {"programmable": programmable}
        if pipelines is not None:
            attrs["pipelines"] = pipelines
            attrs["port_pipeline"] = None
        self.set_node(node_id, **attrs)

    def set_port_pipeline(self, switch_id: str, port: int, pipeline: int) -> None:
        """Put one port of a switch on a pipeline (the map starts from the default split)."""
        sc = self.scenario
        sw = sc.node(switch_id)
        if not isinstance(sw, Switch):
            raise ValidationError(f"{switch_id!r} is a host; only switches have pipelines", switch_id)
        if port not in sc.switch_ports(switch_id):
            raise ValidationError(f"switch {switch_id!r} has no port {port}", switch_id)
        current = sc.port_pipeline_map(switch_id)
        current[port] = int(pipeline)
        self.set_node(switch_id, port_pipeline=current)

    def rename(self, old_id: str, new_id: str) -> None:
        doc = self.document
        self.run(f"Rename {old_id} to {new_id}", lambda: doc.rename_node(old_id, new_id))

    def move_nodes(self, positions: Mapping[str, tuple[float, float]]) -> None:
        doc = self.document
        pos = {k: (float(v[0]), float(v[1])) for k, v in positions.items()}
        if not pos:
            return
        self.run(f"Move {len(pos)} node(s)", lambda: doc.move_nodes(pos))

    # ---- links -------------------------------------------------------------------------------

    def connect(self, a: str, b: str, capacity: float | None = None, **attrs: Any) -> int:
        """Draw a link a - b (ports numbered automatically). Returns its index."""
        doc = self.document
        sc = self.scenario
        if sc.link_between(a, b) is not None:
            raise ValidationError(f"{a} and {b} are already linked", "links")
        link = Link(a=a, b=b, capacity=float(capacity if capacity is not None else self.default_capacity), **attrs)
        changes = self.run(f"Link {a} - {b}", lambda: doc.add_link(link))
        return int(changes[0].value)

    def set_link(self, index: int, **attrs: Any) -> None:
        doc = self.document
        self.run("Edit link", lambda: doc.set_link_attrs(index, **attrs))

    def set_links(self, indices: Iterable[int], **attrs: Any) -> None:
        doc = self.document
        idx = list(indices)
        self.run(f"Edit {len(idx)} link(s)", [(lambda i=i: doc.set_link_attrs(i, **attrs)) for i in idx])

    # ---- jobs --------------------------------------------------------------------------------

    def new_job(self, workers: Iterable[str], parameter_servers: Iterable[str], job_id: str | None = None, **attrs: Any) -> str:
        doc = self.document
        taken = {j.id for j in self.scenario.jobs}
        jid = job_id
        if jid is None:
            k = 0
            while f"job{k}" in taken:
                k += 1
            jid = f"job{k}"
        job = Job(jid, list(workers), list(parameter_servers), **attrs)
        self.run(f"Add job {jid}", lambda: doc.add_job(job))
        return jid

    def set_job(self, job_id: str, **attrs: Any) -> None:
        doc = self.document
        self.run(f"Edit job {job_id}", lambda: doc.set_job(job_id, **attrs))

    def remove_job(self, job_id: str) -> None:
        doc = self.document
        self.run(f"Remove job {job_id}", lambda: doc.remove_job(job_id))

    # ---- whole scenario ----------------------------------------------------------------------

    def replace(self, scenario: Scenario, text: str | None = None) -> None:
        doc = self.document
        self.run(text or f"Replace with {scenario.name}", lambda: doc.replace_scenario(scenario))

    def layout(self, kind: str = "auto") -> None:
        """Re-place every node with a layout of ``inaplanner.topologies.layout`` (one undo step)."""
        if kind not in LAYOUTS:
            raise ValidationError(f"unknown layout {kind!r} (one of {', '.join(LAYOUTS)})")
        sc = self.scenario
        old = {n.id: n.pos for n in sc.nodes}
        try:
            new = LAYOUTS[kind](sc)
        finally:
            for n in sc.nodes:
                n.pos = old[n.id]
        self.move_nodes(new)

    def align(self, node_ids: Sequence[str], mode: str) -> None:
        """Line nodes up (left/right/top/bottom edges, centres) or space them evenly."""
        if mode not in ALIGN_MODES:
            raise ValidationError(f"unknown alignment {mode!r} (one of {', '.join(ALIGN_MODES)})")
        self.move_nodes(align_positions({i: self.scenario.node(i).pos or (0.0, 0.0) for i in node_ids}, mode))

    # ---- clipboard ---------------------------------------------------------------------------

    def copy(self, node_ids: Iterable[str]) -> str:
        """The selected nodes and the links among them as a JSON fragment (for the clipboard)."""
        sc = self.scenario
        ids = set(node_ids)
        nodes = [n for n in sc.nodes if n.id in ids]
        links = [lk for lk in sc.links if lk.a in ids and lk.b in ids]
        part = Scenario("fragment", nodes, links, [])
        doc = scenario_to_dict(part)
        doc["format"] = FRAGMENT_FORMAT
        del doc["jobs"]
        return json.dumps(doc)

    def paste(self, text: str, offset: tuple[float, float] = (40.0, 40.0)) -> list[str]:
        """Add a copied fragment with fresh ids, shifted by ``offset``; returns the new ids."""
        try:
            doc = json.loads(text)
        except ValueError:
            raise ValidationError("the clipboard does not hold inaplanner nodes") from None
        if not isinstance(doc, dict) or doc.get("format") != FRAGMENT_FORMAT:
            raise ValidationError("the clipboard does not hold inaplanner nodes")
        doc = dict(doc, format="inaplanner-scenario", jobs=[])
        part = scenario_from_dict(doc, "clipboard")
        taken = {n.id for n in self.scenario.nodes}
        rename: dict[str, str] = {}
        for n in part.nodes:
            prefix = _prefix(n.id)
            k = 1
            while f"{prefix}{k}" in taken:
                k += 1
            rename[n.id] = f"{prefix}{k}"
            taken.add(rename[n.id])
        new_nodes = []
        for n in part.nodes:
            x, y = n.pos or (0.0, 0.0)
            n.id = rename[n.id]
            n.pos = (x + offset[0], y + offset[1])
            new_nodes.append(n)
        new_links = [
            Link(rename[lk.a], rename[lk.b], lk.capacity, lk.a_port, lk.b_port, lk.background, dict(lk.extra))
            for lk in part.links
        ]
        d = self.document
        ops: list[Op] = [(lambda n=n: d.add_node(n)) for n in new_nodes]
        ops += [(lambda lk=lk: d.add_link(lk)) for lk in new_links]
        if ops:
            self.run(f"Paste {len(new_nodes)} node(s)", ops)
        return [n.id for n in new_nodes]


def align_positions(pos: Mapping[str, tuple[float, float]], mode: str) -> dict[str, tuple[float, float]]:
    """New positions for an alignment (pure; see :meth:`Editor.align`)."""
    if not pos:
        return {}
    xs = {k: p[0] for k, p in pos.items()}
    ys = {k: p[1] for k, p in pos.items()}
    out: dict[str, tuple[float, float]] = {}
    if mode in ("left", "right", "hcentre"):
        x = min(xs.values()) if mode == "left" else max(xs.values()) if mode == "right" else sum(xs.values()) / len(xs)
        out = {k: (x, ys[k]) for k in pos}
    elif mode in ("top", "bottom", "vcentre"):
        y = min(ys.values()) if mode == "top" else max(ys.values()) if mode == "bottom" else sum(ys.values()) / len(ys)
        out = {k: (xs[k], y) for k in pos}
    elif mode in ("hdistribute", "vdistribute"):
        axis = 0 if mode == "hdistribute" else 1
        order = sorted(pos, key=lambda k: (pos[k][axis], k))
        lo, hi = pos[order[0]][axis], pos[order[-1]][axis]
        step = (hi - lo) / (len(order) - 1) if len(order) > 1 else 0.0
        for i, k in enumerate(order):
            v = lo + i * step
            out[k] = (v, pos[k][1]) if axis == 0 else (pos[k][0], v)
    else:
        raise ValidationError(f"unknown alignment {mode!r}")
    return out


def host_or_switch(node: Host | Switch) -> str:
    return "switch" if isinstance(node, Switch) else "host"
