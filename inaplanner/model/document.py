"""The edited scenario: small reversible edits with change events (Qt-free).

:class:`ScenarioDocument` is the only way the desktop planner changes a :class:`Scenario`. Each edit
checks the result against the scenario rules (CONTRACTS.md) and, when a rule breaks, puts everything
back and raises the :class:`~inaplanner.errors.ValidationError`: a failed edit never leaves the
scenario half changed. A successful edit returns a :class:`Change` whose ``undo()`` reverts it
exactly, and tells every subscriber what changed with a :class:`DocEvent`.

The GUI wraps these edits in undo commands (``inaplanner.gui.editor``); tests and scripts can use
the document directly, with no Qt at all.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from inaplanner.errors import ValidationError
from inaplanner.model.scenario import Host, Job, Link, Node, Scenario, Switch, default_port_pipeline

EVENT_KINDS = (
    "node_added",
    "node_removed",
    "node_changed",
    "nodes_moved",
    "link_added",
    "link_removed",
    "link_changed",
    "job_changed",
    "reset",
)

#: Attributes ``set_node_attrs`` may change, by node kind (``id`` changes through ``rename_node``).
HOST_ATTRS = frozenset({"pos", "extra"})
SWITCH_ATTRS = frozenset(
    {
        "tier",
        "programmable",
        "pipelines",
        "port_pipeline",
        "aggregation_capacity",
        "aggregation_background",
        "aggregators",
        "max_fan_in",
        "target",
        "pos",
        "extra",
    }
)
LINK_ATTRS = frozenset({"capacity", "a_port", "b_port", "background", "extra"})
JOB_ATTRS = frozenset(
    {"workers", "parameter_servers", "model_mb", "weight", "layers", "comm_comp_ratio", "remaining_s", "extra"}
)


@dataclass(frozen=True)
class DocEvent:
    """What changed: ``kind`` (one of :data:`EVENT_KINDS`), the node or job ids and link indices.

    For a rename, ``ids`` is ``(old, new)``. For ``link_removed`` the indices are those the links had
    before the removal."""

    kind: str
    ids: tuple[str, ...] = ()
    indices: tuple[int, ...] = ()


@dataclass
class Change:
    """The result of one edit: ``value`` (what the edit returns, e.g. the new link's index or the old
    attribute values) and ``undo()``, which restores the document exactly as it was before."""

    text: str
    value: Any
    _revert: Callable[[], None]
    _done: bool = True

    def undo(self) -> None:
        if not self._done:
            raise RuntimeError(f"change {self.text!r} is already undone")
        self._revert()
        self._done = False


def _copy_job(job: Job) -> Job:
    return dataclasses.replace(
        job, workers=list(job.workers), parameter_servers=list(job.parameter_servers), extra=dict(job.extra)
    )


def _free_port(taken: set[int]) -> int:
    port = 1
    while port in taken:
        port += 1
    return port


class ScenarioDocument:
    """A scenario being edited: ``scenario``, ``path`` (None until saved), ``modified``."""

    def __init__(self, scenario: Scenario | None = None, path: str | None = None) -> None:
        self.scenario = scenario if scenario is not None else Scenario("untitled")
        self.path = path
        self.modified = False
        self._subscribers: list[Callable[[DocEvent], None]] = []
        #: counts the changes: every edit, move and replacement (moves do not touch the scenario's
        #: revision, which keeps indexes of it; data that holds positions follows this instead)
        self.generation = 0
        self._memo: dict[str, tuple[Scenario, int, Any]] = {}

    # ---- observers ---------------------------------------------------------------------------

    def subscribe(self, callback: Callable[[DocEvent], None]) -> Callable[[], None]:
        """Call ``callback(event)`` after every change; returns a function that unsubscribes."""
        self._subscribers.append(callback)

        def unsubscribe() -> None:
            if callback in self._subscribers:
                self._subscribers.remove(callback)

        return unsubscribe

    def _emit(self, kind: str, ids: Iterable[str] = (), indices: Iterable[int] = ()) -> None:
        self.generation += 1
        event = DocEvent(kind, tuple(ids), tuple(indices))
        for cb in list(self._subscribers):
            cb(event)

    def memo(self, name: str, make: Callable[[], Any]) -> Any:
        """``make()`` made once per state of the document: a second call before any change gives
        the same object (e.g. the canonical file document, 1.2 s to build at fat-tree k=64, which
        a save, the autosave and every planner run of one state share). The object must not be
        modified by whoever gets it."""
        held = self._memo.get(name)
        if held is not None and held[0] is self.scenario and held[1] == self.generation:
            return held[2]
        value = make()
        self._memo[name] = (self.scenario, self.generation, value)
        return value

    def set_clean(self, path: str | None = None) -> None:
        """Mark the document saved (to ``path`` when given)."""
        if path is not None:
            self.path = path
        self.modified = False

    # ---- helpers -----------------------------------------------------------------------------

    def _touched(self) -> None:
        self.scenario.touch()
        self.modified = True

    def _checked(self, revert: Callable[[], None]) -> None:
        """Validate after an in-place edit; on a broken rule put things back and re-raise."""
        self.scenario.touch()
        try:
            self.scenario.validate()
        except ValidationError as exc:
            revert()
            self.scenario.touch()
            raise exc from None
        self.modified = True

    def _lists(self) -> tuple[list[Node], list[Link], list[Job]]:
        sc = self.scenario
        return list(sc.nodes), list(sc.links), [_copy_job(j) for j in sc.jobs]

    def _restore_lists(self, saved: tuple[list[Node], list[Link], list[Job]]) -> None:
        sc = self.scenario
        sc.nodes[:] = saved[0]
        sc.links[:] = saved[1]
        sc.jobs[:] = [_copy_job(j) for j in saved[2]]
        self._touched()

    def node(self, node_id: str) -> Node:
        return self.scenario.node(node_id)

    def unique_id(self, prefix: str) -> str:
        """The first free id ``prefix1``, ``prefix2``, ..."""
        taken = {n.id for n in self.scenario.nodes}
        i = 1
        while f"{prefix}{i}" in taken:
            i += 1
        return f"{prefix}{i}"

    # ---- nodes -------------------------------------------------------------------------------

    def add_node(self, node: Node, index: int | None = None) -> Change:
        """Insert ``node`` (at ``index``, default last). Value: its index."""
        sc = self.scenario
        if sc.has_node(node.id):
            raise ValidationError(f"a node named {node.id!r} already exists", "nodes")
        at = len(sc.nodes) if index is None else index
        saved = self._lists()
        sc.nodes.insert(at, node)
        self._checked(lambda: self._restore_lists(saved))
        self._emit("node_added", (node.id,), (at,))

        def revert() -> None:
            self._restore_lists(saved)
            self._emit("node_removed", (node.id,), (at,))

        return Change(f"add {node.id}", at, revert)

    def remove_nodes(self, ids: Iterable[str]) -> Change:
        """Remove nodes, their links, and their places in jobs; a job left with no worker or no PS is
        removed too. Value: the removed jobs' ids."""
        sc = self.scenario
        gone = set(ids)
        for node_id in gone:
            sc.node(node_id)  # unknown id -> ValidationError
        saved = self._lists()
        removed_links = [i for i, lk in enumerate(sc.links) if lk.a in gone or lk.b in gone]
        sc.nodes[:] = [n for n in sc.nodes if n.id not in gone]
        sc.links[:] = [lk for lk in sc.links if lk.a not in gone and lk.b not in gone]
        dropped: list[str] = []
        jobs: list[Job] = []
        for j in sc.jobs:
            workers = [w for w in j.workers if w not in gone]
            pss = [p for p in j.parameter_servers if p not in gone]
            if not workers or not pss:
                dropped.append(j.id)
                continue
            jobs.append(dataclasses.replace(j, workers=workers, parameter_servers=pss, extra=dict(j.extra)))
        sc.jobs[:] = jobs
        self._checked(lambda: self._restore_lists(saved))
        ordered = [n.id for n in saved[0] if n.id in gone]
        if removed_links:
            self._emit("link_removed", (), removed_links)
        self._emit("node_removed", ordered)
        self._emit("job_changed")

        def revert() -> None:
            self._restore_lists(saved)
            self._emit("node_added", ordered)
            if removed_links:
                self._emit("link_added", (), removed_links)
            self._emit("job_changed")

        return Change(f"remove {len(ordered)} node(s)", dropped, revert)

    def set_node_attrs(self, node_id: str, **attrs: Any) -> Change:
        """Change fields of one node. Value: the old values (a dict)."""
        node = self.scenario.node(node_id)
        allowed = SWITCH_ATTRS if isinstance(node, Switch) else HOST_ATTRS
        bad = sorted(set(attrs) - allowed)
        if bad:
            raise ValidationError(f"{node.kind} {node_id!r} has no editable field {bad[0]!r}", node_id)
        attrs = {k: _normalise_node_value(k, v) for k, v in attrs.items()}
        old = {k: getattr(node, k) for k in attrs}

        def put(values: Mapping[str, Any]) -> None:
            for k, v in values.items():
                setattr(node, k, v)

        put(attrs)
        self._checked(lambda: put(old))
        moved_only = set(attrs) == {"pos"}
        self._emit("nodes_moved" if moved_only else "node_changed", (node_id,))

        def revert() -> None:
            put(old)
            self._touched()
            self._emit("nodes_moved" if moved_only else "node_changed", (node.id,))

        return Change(f"edit {node_id}", old, revert)

    def rename_node(self, old_id: str, new_id: str) -> Change:
        """Give a node a new id everywhere (links, jobs). Value: the old id."""
        sc = self.scenario
        node = sc.node(old_id)
        if not isinstance(new_id, str) or not new_id.strip():
            raise ValidationError("a node id must be a non-empty string", old_id)
        new_id = new_id.strip()
        if new_id == old_id:
            return Change("rename", old_id, lambda: None)
        if sc.has_node(new_id):
            raise ValidationError(f"a node named {new_id!r} already exists", old_id)
        self._rename(node, old_id, new_id)
        self._emit("node_changed", (old_id, new_id))

        def revert() -> None:
            self._rename(node, new_id, old_id)
            self._emit("node_changed", (new_id, old_id))

        return Change(f"rename {old_id} to {new_id}", old_id, revert)

    def _rename(self, node: Node, old: str, new: str) -> None:
        node.id = new
        for lk in self.scenario.links:
            if lk.a == old:
                lk.a = new
            if lk.b == old:
                lk.b = new
        for j in self.scenario.jobs:
            j.workers = [new if w == old else w for w in j.workers]
            j.parameter_servers = [new if p == old else p for p in j.parameter_servers]
        self._touched()

    def move_nodes(self, positions: Mapping[str, tuple[float, float]]) -> Change:
        """Set node positions (no rule depends on them, so no validation). Value: old positions."""
        sc = self.scenario
        nodes = {nid: sc.node(nid) for nid in positions}
        old = {nid: n.pos for nid, n in nodes.items()}
        for nid, p in positions.items():
            nodes[nid].pos = (float(p[0]), float(p[1]))
        self.modified = True
        self._emit("nodes_moved", tuple(positions))

        def revert() -> None:
            for nid, p in old.items():
                nodes[nid].pos = p
            self.modified = True
            self._emit("nodes_moved", tuple(old))

        return Change(f"move {len(positions)} node(s)", old, revert)

    # ---- links -------------------------------------------------------------------------------

    def add_link(self, link: Link, index: int | None = None) -> Change:
        """Insert a link; a switch end without a port gets the lowest free port number, and a switch
        with its own port->pipeline map puts a new port on the pipeline of the default split.
        Value: the link's index."""
        sc = self.scenario
        for end in (link.a, link.b):
            sc.node(end)
        saved = self._lists()
        old_maps: dict[str, dict[int, int] | None] = {}
        for end, attr in ((link.a, "a_port"), (link.b, "b_port")):
            node = sc.node(end)
            if not isinstance(node, Switch):
                continue
            ports = set(sc.switch_ports(end))
            if getattr(link, attr) is None:
                setattr(link, attr, _free_port(ports))
            port = getattr(link, attr)
            if node.port_pipeline is not None and port not in node.port_pipeline:
                old_maps[end] = dict(node.port_pipeline)
                ports.add(port)
                default = default_port_pipeline(sorted(ports), node.pipelines)
                node.port_pipeline = {**node.port_pipeline, port: default[port]}
        at = len(sc.links) if index is None else index
        sc.links.insert(at, link)

        def put_back() -> None:
            self._restore_lists(saved)
            for sid, m in old_maps.items():
                sw = sc.node(sid)
                assert isinstance(sw, Switch)
                sw.port_pipeline = m

        self._checked(put_back)
        self._emit("link_added", (link.a, link.b), (at,))
        if old_maps:
            self._emit("node_changed", tuple(old_maps))

        def revert() -> None:
            put_back()
            self._touched()
            self._emit("link_removed", (link.a, link.b), (at,))
            if old_maps:
                self._emit("node_changed", tuple(old_maps))

        return Change(f"link {link.a} - {link.b}", at, revert)

    def remove_links(self, indices: Iterable[int]) -> Change:
        """Remove links by index. Value: the removed (index, link) pairs."""
        sc = self.scenario
        idx = sorted(set(indices))
        for i in idx:
            if not 0 <= i < len(sc.links):
                raise ValidationError(f"no link number {i}", "links")
        saved = self._lists()
        removed = [(i, sc.links[i]) for i in idx]
        gone = set(idx)
        sc.links[:] = [lk for i, lk in enumerate(sc.links) if i not in gone]
        self._checked(lambda: self._restore_lists(saved))
        self._emit("link_removed", (), idx)

        def revert() -> None:
            self._restore_lists(saved)
            self._emit("link_added", (), idx)

        return Change(f"remove {len(idx)} link(s)", removed, revert)

    def set_link_attrs(self, index: int, **attrs: Any) -> Change:
        """Change fields of one link. Value: the old values."""
        sc = self.scenario
        if not 0 <= index < len(sc.links):
            raise ValidationError(f"no link number {index}", "links")
        link = sc.links[index]
        bad = sorted(set(attrs) - LINK_ATTRS)
        if bad:
            raise ValidationError(f"a link has no editable field {bad[0]!r}", f"links[{index}]")
        if "capacity" in attrs and attrs["capacity"] is not None:
            attrs["capacity"] = _as_float(attrs["capacity"], f"links[{index}].capacity")
        if "background" in attrs:
            bg = attrs["background"]
            attrs["background"] = (
                _as_float(bg[0], f"links[{index}].background"),
                _as_float(bg[1], f"links[{index}].background"),
            )
        old = {k: getattr(link, k) for k in attrs}

        def put(values: Mapping[str, Any]) -> None:
            for k, v in values.items():
                setattr(link, k, v)

        put(attrs)
        self._checked(lambda: put(old))
        self._emit("link_changed", (link.a, link.b), (index,))

        def revert() -> None:
            put(old)
            self._touched()
            self._emit("link_changed", (link.a, link.b), (index,))

        return Change(f"edit link {link.a} - {link.b}", old, revert)

    # ---- jobs --------------------------------------------------------------------------------

    def add_job(self, job: Job, index: int | None = None) -> Change:
        """Insert a job. Value: its index."""
        sc = self.scenario
        if any(j.id == job.id for j in sc.jobs):
            raise ValidationError(f"a job named {job.id!r} already exists", "jobs")
        saved = self._lists()
        at = len(sc.jobs) if index is None else index
        sc.jobs.insert(at, job)
        self._checked(lambda: self._restore_lists(saved))
        self._emit("job_changed", (job.id,))

        def revert() -> None:
            self._restore_lists(saved)
            self._emit("job_changed", (job.id,))

        return Change(f"add job {job.id}", at, revert)

    def remove_job(self, job_id: str) -> Change:
        """Remove a job. Value: (index, job)."""
        sc = self.scenario
        job = sc.job(job_id)
        saved = self._lists()
        at = sc.jobs.index(job)
        del sc.jobs[at]
        self._touched()
        self._emit("job_changed", (job_id,))

        def revert() -> None:
            self._restore_lists(saved)
            self._emit("job_changed", (job_id,))

        return Change(f"remove job {job_id}", (at, job), revert)

    def set_job(self, job_id: str, **attrs: Any) -> Change:
        """Change fields of a job (``id`` renames it). Value: the old values."""
        sc = self.scenario
        job = sc.job(job_id)
        allowed = JOB_ATTRS | {"id"}
        bad = sorted(set(attrs) - allowed)
        if bad:
            raise ValidationError(f"a job has no editable field {bad[0]!r}", f"job {job_id}")
        if "id" in attrs and attrs["id"] != job_id and any(j.id == attrs["id"] for j in sc.jobs):
            raise ValidationError(f"a job named {attrs['id']!r} already exists", f"job {job_id}")
        for key in ("workers", "parameter_servers"):
            if key in attrs:
                attrs[key] = list(attrs[key])
        for key in ("model_mb", "weight", "comm_comp_ratio", "remaining_s"):
            if key in attrs and attrs[key] is not None:
                attrs[key] = _as_float(attrs[key], f"job {job_id}.{key}")
        old = {k: getattr(job, k) for k in attrs}

        def put(values: Mapping[str, Any]) -> None:
            for k, v in values.items():
                setattr(job, k, v)

        put(attrs)
        self._checked(lambda: put(old))
        ids = tuple(dict.fromkeys((job_id, job.id)))
        self._emit("job_changed", ids)

        def revert() -> None:
            put(old)
            self._touched()
            self._emit("job_changed", ids)

        return Change(f"edit job {job_id}", old, revert)

    # ---- whole scenario ----------------------------------------------------------------------

    def replace_scenario(self, scenario: Scenario) -> Change:
        """Put another (valid) scenario in place. Value: the old scenario."""
        scenario.touch()
        scenario.validate()
        old = self.scenario
        self.scenario = scenario
        self.modified = True
        self._emit("reset")

        def revert() -> None:
            self.scenario = old
            self.modified = True
            self._emit("reset")

        return Change(f"replace with {scenario.name}", old, revert)

    def open(self, scenario: Scenario, path: str | None, validated: bool = False) -> None:
        """Start over on a loaded scenario (not an undoable edit): clean, with ``path``.
        ``validated``: the loader has just made and checked it (skips a second check of a big
        network, and keeps what was derived from it meanwhile, see :meth:`Scenario.derived`)."""
        if not validated:
            scenario.touch()
            scenario.validate()
        self.scenario = scenario
        self.path = path
        self.modified = False
        self._emit("reset")


def _as_float(value: Any, where: str) -> float:
    try:
        out = float(value)
    except (TypeError, ValueError):
        raise ValidationError(f"expected a number, got {value!r}", where) from None
    return out


def _normalise_node_value(key: str, value: Any) -> Any:
    if key == "pos" and value is not None:
        return (float(value[0]), float(value[1]))
    if key == "port_pipeline" and value is not None:
        return {int(k): int(v) for k, v in dict(value).items()}
    if key in ("aggregation_capacity",) and value is not None:
        return _as_float(value, key)
    if key == "aggregation_background":
        return _as_float(value, key)
    if key == "programmable":
        return bool(value)
    return value


def make_node(kind: str, node_id: str, pos: tuple[float, float] | None = None, **attrs: Any) -> Node:
    """A new host or switch (``kind`` "host", "switch")."""
    if kind == "host":
        return Host(node_id, pos)
    if kind == "switch":
        return Switch(node_id, pos=pos, **attrs)
    raise ValidationError(f"unknown node kind {kind!r} (host or switch)", "kind")
