"""What every loader checks before it trusts a document: size, nesting, numbers, text.

Every file inaplanner reads (scenario and plan JSON, node-link JSON, GraphML, GML, ``testbed.toml``,
monitoring recordings) goes through these checks, so bad input ends in one
:class:`~inaplanner.errors.ValidationError` naming the file, the element and the cause, never in a
traceback, a hang or a silently changed document:

- **size**: a file larger than the limit of its type is refused before it is read
  (:data:`MAX_INPUT_MB`; override per type with ``INAPLANNER_MAX_<TYPE>_MB``, e.g.
  ``INAPLANNER_MAX_GRAPHML_MB=512``, or for every type with ``INAPLANNER_MAX_INPUT_MB``);
- **JSON** (:func:`parse_json`): duplicate keys, ``NaN``/``Infinity`` and numbers that overflow to
  infinity (``1e999``) are refused; nesting deeper than :data:`MAX_DEPTH` is refused (deeper input
  would exhaust Python's stack);
- **values** (:func:`check_tree`): every float finite, every integer within 64 bits, every string
  valid Unicode (no lone surrogates, which cannot be written as UTF-8);
- **ids** (:func:`check_id`): no control characters and no code point XML 1.0 cannot hold, since ids
  are written to GraphML and GML and shown in terminals;
- **XML** (:func:`check_xml`): a document with a DTD is refused before anything is expanded, which
  rules out entity expansion ("billion laughs", quadratic blow-up) and external entities alike.
  This is defusedxml's ``forbid_dtd=True`` done with the standard library's expat (GraphML never
  needs a DTD), so no extra dependency is needed; the same pass finds duplicate node ids and edges
  whose ends are not declared nodes, which networkx would merge or invent silently.
"""

from __future__ import annotations

import gc
import json
import math
import os
import re
import unicodedata
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any
from xml.parsers import expat

from inaplanner.errors import ValidationError

#: Largest accepted file per type, in MB (10^6 bytes). Generous for real topologies (a k=32
#: fat-tree is about 6 MB of native JSON) and small enough that parsing ends in seconds.
MAX_INPUT_MB: dict[str, float] = {
    "json": 256.0,
    "graphml": 64.0,
    "gml": 64.0,
    "toml": 32.0,  # the emulated testbed of fat-tree k=64 (5,120 switches) is 5.2 MB
    "recording": 1024.0,
}

#: Deepest nesting of arrays/objects accepted in any document (ours need fewer than 10 levels).
MAX_DEPTH = 64

#: Integers must fit 64 bits: [-2^63, 2^64 - 1] (P4Runtime ids are unsigned 64-bit).
INT_MIN = -(2**63)
INT_MAX = 2**64 - 1

_LABEL = {"json": "JSON", "graphml": "GraphML", "gml": "GML", "toml": "TOML",
          "recording": "recording"}


def max_bytes(kind: str) -> int:
    """The size limit of a file type in bytes, after the environment's overrides."""
    mb = MAX_INPUT_MB[kind]
    for var in (f"INAPLANNER_MAX_{kind.upper()}_MB", "INAPLANNER_MAX_INPUT_MB"):
        raw = os.environ.get(var)
        if raw:
            try:
                value = float(raw)
            except ValueError:
                raise ValidationError(f"{var} must be a number of MB, got {raw!r}") from None
            if not math.isfinite(value) or value <= 0:
                raise ValidationError(f"{var} must be a number of MB > 0, got {raw!r}")
            mb = value
            break
    return int(mb * 1_000_000)


def check_size(path: str | os.PathLike[str], kind: str) -> None:
    """Refuse a file over the limit of its type (before reading it); a missing file is refused too."""
    source = os.fspath(path)
    try:
        size = os.stat(source).st_size
    except FileNotFoundError:
        raise ValidationError("cannot read: no such file", source=source) from None
    except OSError as exc:
        raise ValidationError(f"cannot read: {exc.strerror or exc}", source=source) from None
    limit = max_bytes(kind)
    if size > limit:
        raise ValidationError(
            f"file is {size / 1e6:.1f} MB, over the {limit / 1e6:g} MB limit for {_LABEL[kind]} "
            f"files (set INAPLANNER_MAX_{kind.upper()}_MB to raise it)",
            source=source,
        )


def read_bytes(path: str | os.PathLike[str], kind: str) -> bytes:
    """The file's bytes after the size check; any OS error is one ValidationError."""
    source = os.fspath(path)
    check_size(source, kind)
    try:
        with open(source, "rb") as fh:
            return fh.read(max_bytes(kind) + 1)
    except FileNotFoundError:
        raise ValidationError("cannot read: no such file", source=source) from None
    except OSError as exc:
        raise ValidationError(f"cannot read: {exc.strerror or exc}", source=source) from None


def decode_utf8(data: bytes, source: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise ValidationError(
            f"not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start})",
            f"line {line}", source,
        ) from None


# ---- JSON ---------------------------------------------------------------------------------------


class _Refused(Exception):
    def __init__(self, why: str) -> None:
        self.why = why


class _BadNumber:
    """A number the parser met that no float or 64-bit integer holds; refused by :func:`check_tree`
    with the element's path."""

    def __init__(self, text: str) -> None:
        self.text = text

    def why(self) -> str:
        if any(c in self.text for c in ".eE"):
            return f"{_short(self.text)} is not a finite number (out of range of a double)"
        return f"integer with {len(self.text.lstrip('-'))} digits is out of range (64 bits)"


class _DupDict(dict[str, Any]):
    """An object in which a key was repeated (``dup`` is the first one); refused with its path."""

    dup: str = ""


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in pairs:
        if k in out:
            bad = _DupDict(out)
            bad.dup = k
            return bad
        out[k] = v
    return out


def _constant(name: str) -> Any:
    raise _Refused(f"{name} is not a finite number")


def _float(text: str) -> Any:
    value = float(text)
    return value if math.isfinite(value) else _BadNumber(text)


def _int(text: str) -> Any:
    if len(text.lstrip("-")) > 20:  # beyond 64 bits whatever the digits; also avoids int() cost
        return _BadNumber(text)
    value = int(text)
    return value if INT_MIN <= value <= INT_MAX else _BadNumber(text)


#: JSON text that may decode to a lone surrogate: an escape \uD800 to \uDFFF, or one in the text
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_SURROGATE = re.compile(r"[\ud800-\udfff]")


def _may_hold_surrogate(text: str) -> bool:
    return bool(("\\u" in text and _SURROGATE_ESCAPE.search(text))
                or (not text.isascii() and _SURROGATE.search(text)))


_CONTAINERS = (dict, list)


def _too_deep(doc: Any) -> bool:
    """Whether a dict or list sits at depth :data:`MAX_DEPTH` or more (the root is at 0), walking
    containers only, level by level."""
    level = [doc] if type(doc) in _CONTAINERS else []
    depth = 0
    while level:
        if depth >= MAX_DEPTH:
            return True
        below: list[Any] = []
        for c in level:
            below.extend([v for v in (c.values() if type(c) is dict else c) if type(v) in _CONTAINERS])
        level = below
        depth += 1
    return False


@contextmanager
def collection_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector while a large document is parsed or built: it would
    otherwise walk the growing heap again and again (``load_scenario`` of a fat-tree k=64 file:
    3.2 s instead of 4.0 s). It resumes afterwards, and stays off if it was off (as in the GUI,
    where pyqtgraph's collector runs it from a timer on the UI thread: see ``gui.gcguard``)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def parse_json(text: str, source: str = "", where: str = "") -> Any:
    """``json.loads`` that refuses duplicate keys, non-finite and out-of-range numbers and deep
    nesting, and then checks the result with :func:`check_tree`; one ValidationError naming the
    element (its JSON path) else.

    The parser's hooks see every number and object, so when none was refused and the text holds
    no surrogate escape, only the nesting is left to check: a walk over the containers alone,
    not every value (a fat-tree k=64 file: 0.2 s instead of 0.8 s). Anything else takes the full
    :func:`check_tree`, which names the element."""
    refused: list[bool] = []

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        out = _pairs(items)
        if type(out) is not dict:
            refused.append(True)
        return out

    def number(make: Any) -> Any:
        def parse(t: str) -> Any:
            value = make(t)
            if type(value) is _BadNumber:
                refused.append(True)
            return value
        return parse

    try:
        with collection_paused():
            doc = json.loads(text, object_pairs_hook=pairs, parse_constant=_constant,
                             parse_float=number(_float), parse_int=number(_int))
    except _Refused as exc:
        raise ValidationError(exc.why, where, source) from None
    except RecursionError:
        raise ValidationError(f"nested deeper than {MAX_DEPTH} levels", where, source) from None
    except json.JSONDecodeError as exc:
        at = f"line {exc.lineno} column {exc.colno}"
        raise ValidationError(f"not valid JSON: {exc.msg}", f"{where}: {at}" if where else at,
                              source) from None
    except ValueError as exc:
        raise ValidationError(f"not valid JSON: {exc}", where, source) from None
    if refused or _may_hold_surrogate(text) or _too_deep(doc):
        check_tree(doc, where, source)
    return doc


# ---- values -------------------------------------------------------------------------------------


def _short(text: str, n: int = 40) -> str:
    return text if len(text) <= n else text[:n] + "..."


def _join(where: str, part: Any) -> str:
    if isinstance(part, int):
        return f"{where}[{part}]"
    return f"{where}.{part}" if where else str(part)


def valid_unicode(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def check_number(value: Any, where: str, source: str = "") -> None:
    """A float must be finite; an int must fit 64 bits (bools pass)."""
    if isinstance(value, bool):
        return
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValidationError(f"{value!r} is not a finite number", where, source)
    elif isinstance(value, int) and not INT_MIN <= value <= INT_MAX:
        digits = len(str(abs(value))) if abs(value) < 10**4000 else "over 4000"
        raise ValidationError(f"integer with {digits} digits is out of range (64 bits)", where,
                              source)


def _path(where: str, ref: tuple | None) -> str:
    """The element path of a :func:`check_tree` stack entry: ``ref`` is (parent ref, key or index),
    rendered only when an element is refused (building every path up front was most of the walk's
    time on a fat-tree k=64 file)."""
    parts = []
    while ref is not None:
        ref, part = ref
        parts.append(part)
    at = where
    for part in reversed(parts):
        at = _join(at, part)
    return at


def check_tree(doc: Any, where: str = "", source: str = "") -> None:
    """Walk a parsed document without recursion: nesting at most :data:`MAX_DEPTH`, numbers finite
    and within 64 bits, strings (and keys) valid Unicode. ``where`` prefixes element paths."""
    stack: list[tuple[Any, tuple | None, int]] = [(doc, None, 0)]
    while stack:
        value, ref, depth = stack.pop()
        if isinstance(value, dict):
            if depth >= MAX_DEPTH:
                raise ValidationError(f"nested deeper than {MAX_DEPTH} levels", _path(where, ref), source)
            if isinstance(value, _DupDict):
                raise ValidationError(f"duplicate key {_short(value.dup)!r} in one object (JSON "
                                      "would keep only the last; remove one)",
                                      _path(where, ref) or "(top level)", source)
            for k, v in value.items():
                if isinstance(k, str) and not k.isascii() and not valid_unicode(k):
                    raise ValidationError("key is not valid Unicode (a lone surrogate)", _path(where, ref),
                                          source)
                stack.append((v, (ref, k), depth + 1))
        elif isinstance(value, (list, tuple)):
            if depth >= MAX_DEPTH:
                raise ValidationError(f"nested deeper than {MAX_DEPTH} levels", _path(where, ref), source)
            for i, v in enumerate(value):
                stack.append((v, (ref, i), depth + 1))
        elif isinstance(value, str):
            if not value.isascii() and not valid_unicode(value):
                raise ValidationError("text is not valid Unicode (a lone surrogate)", _path(where, ref),
                                      source)
        elif isinstance(value, bool):
            continue
        elif isinstance(value, float):
            if not math.isfinite(value):
                check_number(value, _path(where, ref), source)
        elif isinstance(value, int):
            if not INT_MIN <= value <= INT_MAX:
                check_number(value, _path(where, ref), source)
        elif isinstance(value, _BadNumber):
            raise ValidationError(value.why(), _path(where, ref), source)


def bad_id_char(text: str) -> str | None:
    """The first character an id must not hold (a control character, a lone surrogate, or a code
    point XML 1.0 cannot carry), or None."""
    if text.isascii() and text.isprintable():  # the usual id: no control character, no surrogate
        return None
    for ch in text:
        cat = unicodedata.category(ch)
        if cat in ("Cc", "Cs") or ch in ("\ufffe", "\uffff"):
            return ch
    return None


def check_id(value: Any, where: str, source: str = "") -> None:
    """An id (or a name shown as one) must be printable text: see :func:`bad_id_char`."""
    if not isinstance(value, str):
        return
    ch = bad_id_char(value)
    if ch is None:
        return
    if unicodedata.category(ch) == "Cs":
        raise ValidationError(f"{_short(ascii(value))} is not valid Unicode (a lone surrogate)",
                              where, source)
    raise ValidationError(f"{_short(ascii(value))} holds the control character U+{ord(ch):04X}",
                          where, source)


# ---- XML ----------------------------------------------------------------------------------------


@dataclass
class XMLFacts:
    """What the safety pass over a GraphML document learned."""

    node_ids: list[str] = field(default_factory=list)
    edge_ends: list[tuple[str, str]] = field(default_factory=list)


def check_xml(data: bytes, source: str, what: str = "GraphML") -> XMLFacts:
    """Parse ``data`` once with expat, refusing any DTD (and so every entity declaration and
    external entity) and duplicate GraphML node ids; return the node ids and edge ends."""
    facts = XMLFacts()
    seen: set[str] = set()
    parser = expat.ParserCreate(namespace_separator=" ")
    parser.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)

    def refuse(why: str) -> Callable[..., Any]:
        def handler(*args: Any) -> Any:
            raise _Refused(why)
        return handler

    parser.StartDoctypeDeclHandler = refuse(
        "XML with a DTD (<!DOCTYPE ...>) is refused: entity expansion and external entities are "
        "off, and GraphML needs no DTD")
    parser.EntityDeclHandler = refuse("XML entity declarations are refused")
    parser.ExternalEntityRefHandler = refuse("XML external entities are refused")

    def start(name: str, attrs: dict[str, str]) -> None:
        local = name.rsplit(" ", 1)[-1]
        if local == "node":
            nid = attrs.get("id")
            if nid is not None:
                if nid in seen:
                    raise _Refused(f"duplicate node id {_short(nid)!r}")
                seen.add(nid)
                facts.node_ids.append(nid)
        elif local == "edge":
            facts.edge_ends.append((attrs.get("source", ""), attrs.get("target", "")))

    parser.StartElementHandler = start
    try:
        parser.Parse(data, True)
    except _Refused as exc:
        raise ValidationError(exc.why, f"line {parser.CurrentLineNumber}", source) from None
    except expat.ExpatError as exc:
        raise ValidationError(f"not valid {what}: {expat.ErrorString(exc.code)} (line {exc.lineno}, "
                              f"column {exc.offset + 1})", "", source) from None
    except (LookupError, ValueError) as exc:  # e.g. an unknown encoding in the XML declaration
        text = " ".join(str(exc).split())
        raise ValidationError(f"not valid {what}: {text[:120]}", "", source) from None
    except RecursionError:
        raise ValidationError(f"nested deeper than {MAX_DEPTH} levels", "", source) from None
    return facts
