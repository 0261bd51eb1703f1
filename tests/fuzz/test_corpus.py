"""The fixed corpus of issue 16 (``tests/data/fuzz/``, one file per defect): every file is refused
by its loader and by every CLI command that reads it, with one line naming the file, the element
and the cause, and exit code 2 (never a traceback, never exit 0)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from inaplanner.errors import ValidationError

CORPUS = Path(__file__).resolve().parents[1] / "data" / "fuzz"

#: file-name prefix -> what the one-line refusal must say (a regular expression).
CAUSE = {
    "d01": r"nested deeper than \d+ levels",
    "d02": r"out of range|greater than the maximum",
    "d03": r"not a finite number",
    "d04": r"not valid Unicode",
    "d05": r"x_extra must be a JSON object",
    "d06": r"capacity must be a number",
    "d07": r"order must be an integer",
    "d08": r"graph attributes must be an object",
    "d09": r"not UTF-8|nested deeper|not a finite number|control character",
    "d10": r"DTD",
    "d11": r"x_extra may hold only 'x-' keys",
    "d12": r"not a finite number|less than the minimum|out of range",
    "d13": r"duplicate node id",
    "d14": r"not a declared node",
    "d15": r"control character",
    "d16": r"duplicate key",
    "d17": r"greater than the maximum",
    "rec": r"nested deeper|not a finite number|out of range|not UTF-8|cannot read",
}

FILES = sorted(p.name for p in CORPUS.iterdir())


def test_the_corpus_covers_every_defect():
    prefixes = {name.split("_")[0] for name in FILES}
    assert {f"d{i:02d}" for i in range(1, 18)} <= prefixes


@pytest.mark.parametrize("name", FILES)
def test_loader_refuses_with_one_line(name, fuzzlib):
    kind = fuzzlib.kind_of_name(name)
    path = CORPUS / name
    with pytest.raises(ValidationError) as info:
        fuzzlib.load(kind, path)
    text = str(info.value)
    assert "\n" not in text
    assert text.startswith(str(path)), text
    assert re.search(CAUSE[name.split("_")[0]], text), text


@pytest.mark.parametrize("name", FILES)
def test_cli_refuses_with_one_line(name, fuzzlib, inputs, tmp_path):
    kind = fuzzlib.kind_of_name(name)
    path = CORPUS / name
    for argv in fuzzlib.cli_commands(kind, path, inputs, tmp_path):
        code, _out, err = fuzzlib.run_cli(argv)
        assert code == 2, (argv, err)
        assert err.count("\n") == 1 and name in err, err
    assert not (tmp_path / "converted.graphml").exists()
