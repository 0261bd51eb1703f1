"""Byte-level fuzzing of every loader (hypothesis drives the mutations of valid documents: the
bundled samples in every scenario format, a planner's plan, a testbed.toml, CSV and SQLite
recordings), and of the CLI commands that read them, in-process.

Every case must end as a clean one-line refusal naming the file, or load; a loaded scenario must
round-trip through native JSON, node-link JSON, GraphML and GML with the same hash. No traceback,
no hang (each case has a time budget). The long variant is ``benchmarks/fuzz_long.py``.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

SETTINGS = dict(deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture,
                                       HealthCheck.data_too_large])


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    return tmp_path_factory.mktemp("fuzzwork")


def _run(fuzzlib, seeds, kind, data, work):
    pool = [s for s in seeds if s.kind == kind]
    seed = data.draw(st.sampled_from(pool), label="seed")
    rnd = data.draw(st.randoms(use_true_random=False), label="mutations")
    case = fuzzlib.mutate(seed.data, rnd)
    d = fuzzlib.fresh_dir(work)
    path = fuzzlib.case_path(d, seed, case)
    return fuzzlib.check_file(kind, path, d)


@settings(max_examples=160, **SETTINGS)
@given(data=st.data())
def test_mutated_scenarios_are_refused_cleanly_or_round_trip(fuzzlib, seeds, work, data):
    assert _run(fuzzlib, seeds, "scenario", data, work) in ("refused", "roundtripped")


@settings(max_examples=50, **SETTINGS)
@given(data=st.data())
def test_mutated_plans_are_refused_cleanly_or_load(fuzzlib, seeds, work, data):
    assert _run(fuzzlib, seeds, "plan", data, work) in ("refused", "accepted")


@settings(max_examples=50, **SETTINGS)
@given(data=st.data())
def test_mutated_testbed_files_are_refused_cleanly_or_load(fuzzlib, seeds, work, data):
    assert _run(fuzzlib, seeds, "testbed", data, work) in ("refused", "accepted")


@settings(max_examples=50, **SETTINGS)
@given(data=st.data())
def test_mutated_recordings_are_refused_cleanly_or_load(fuzzlib, seeds, work, data):
    assert _run(fuzzlib, seeds, "recording", data, work) in ("refused", "accepted")


@settings(max_examples=40, **SETTINGS)
@given(data=st.data())
def test_cli_commands_on_mutated_files_end_in_one_line_or_succeed(fuzzlib, seeds, inputs, work,
                                                                  data):
    seed = data.draw(st.sampled_from(seeds), label="seed")
    rnd = data.draw(st.randoms(use_true_random=False), label="mutations")
    d = fuzzlib.fresh_dir(work)
    path = fuzzlib.case_path(d, seed, fuzzlib.mutate(seed.data, rnd))
    for argv in fuzzlib.cli_commands(seed.kind, path, inputs, d):
        code, _out, err = fuzzlib.run_cli(argv)
        assert code in (0, 1, 2), (argv, code, err)
        if code == 2:
            assert path.name in err or str(inputs.plan) in err or "switch" in err, (argv, err)
