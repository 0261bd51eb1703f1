"""deployment_params: what the data plane writes per switch and job (priorities, ranges, seeds)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from inaplanner.errors import ValidationError
from inaplanner.memsched.deployment import (
    DEFAULT_AGGREGATORS,
    deployment_params,
    job_priority_value,
)
from inaplanner.memsched.hashing import agg_index, seed_for
from inaplanner.memsched.priority import choose_frac_bits, priority, quantise
from inaplanner.model import Plan, PlannerInfo, Route, Scenario, TaskPlan


def test_esa_params_per_switch_and_job(star: Scenario) -> None:
    params = deployment_params(star)
    assert list(params) == ["S1"]
    jobs = params["S1"]
    assert list(jobs) == ["job0", "job1"]
    # Eq. (1) with the scenario fields, one fixed-point scale for the whole scenario
    values = {j.id: [priority(layer, j.layers, j.comm_comp_ratio, j.remaining_s)
                     for layer in range(1, j.layers + 1)] for j in star.jobs}
    frac = choose_frac_bits(v for vs in values.values() for v in vs)
    for job in star.jobs:
        p = jobs[job.id]
        assert p.job_num == star.jobs.index(job) + 1
        assert p.layer_priorities == tuple(quantise(v, frac) for v in values[job.id])
        assert p.priority == p.layer_priorities[0] and p.priority_frac_bits == frac
        assert p.indexing == "hash" and p.agg_base == 0 and p.agg_size == 1000
        assert p.hash_seed == seed_for("S1")
        assert [(a.ps, a.pipeline, a.fan_in) for a in p.aggregates] == [(job.parameter_servers[0], 0, 3)]
    # job0: comm/comp 2, 100 s left; job1: comm/comp 0.5, 200 s left -> job0 ranks higher
    assert jobs["job0"].priority > jobs["job1"].priority
    assert jobs["job0"].layer_priorities[0] > jobs["job0"].layer_priorities[3]
    assert max(p.priority for p in jobs.values()) > 127  # the top priority uses the 8 bits
    # the data plane's index is the documented hash
    p = jobs["job1"]
    assert agg_index(p.job_num, 77, p.agg_size, p.agg_base, p.hash_seed) < 1000


def test_switchml_splits_the_pool_evenly(make_star: Callable[..., Scenario]) -> None:
    sc = make_star(jobs=3, workers=2, aggregators=1000)
    params = deployment_params(sc, policy="switchml")["S1"]
    ranges = [(p.agg_base, p.agg_base + p.agg_size) for p in params.values()]
    assert ranges == [(0, 333), (333, 666), (666, 999)]
    assert all(p.indexing == "modulo" for p in params.values())


def test_missing_aggregators_default_or_refused(make_star: Callable[..., Scenario]) -> None:
    sc = make_star(aggregators=None)
    assert deployment_params(sc)["S1"]["job0"].agg_size == DEFAULT_AGGREGATORS
    with pytest.raises(ValidationError, match="S1.*aggregators"):
        deployment_params(sc, default_aggregators=None)


def test_attained_service_stands_in_for_remaining_time(make_star: Callable[..., Scenario]) -> None:
    sc = make_star()
    for job in sc.jobs:
        job.remaining_s = None
    assert job_priority_value(sc.jobs[0], attained_s=10.0) == pytest.approx(priority(1, 4, 2.0, 10.0))
    p = deployment_params(sc, attained_s={"job0": 10.0, "job1": 10.0})["S1"]
    assert p["job0"].priority_value == pytest.approx(priority(1, 4, 2.0, 10.0))


def test_with_a_plan_fan_in_comes_from_the_evaluator(make_star: Callable[..., Scenario]) -> None:
    from inaplanner.io.native import scenario_sha256

    sc = make_star(jobs=1, workers=3)
    routes = [Route(worker=w, path=[w, "S1", "ps0"], merge_at=["S1"]) for w in sc.jobs[0].workers[:2]]
    routes.append(Route(worker="w0_2", path=["w0_2", "S1", "ps0"], merge_at=[]))  # not aggregated
    plan = Plan(scenario_sha256=scenario_sha256(sc), planner=PlannerInfo(name="test"),
                tasks=[TaskPlan(job="job0", ps="ps0", rate=10.0, routes=routes)])
    p = deployment_params(sc, plan)["S1"]["job0"]
    assert [(a.ps, a.fan_in) for a in p.aggregates] == [("ps0", 2)]
    bad = Plan(scenario_sha256=plan.scenario_sha256, planner=PlannerInfo(name="test"),
               tasks=[TaskPlan(job="job0", ps="ps0", rate=10.0,
                               routes=[Route(worker="w0_0", path=["w0_0", "ps0"], merge_at=[])])])
    with pytest.raises(ValidationError, match="plan is invalid"):
        deployment_params(sc, bad)


def test_unknown_policy_is_refused(star: Scenario) -> None:
    with pytest.raises(ValidationError, match="policy"):
        deployment_params(star, policy="fifo")


def test_to_dict_is_json_ready(star: Scenario) -> None:
    import json

    d = deployment_params(star)["S1"]["job0"].to_dict()
    assert json.loads(json.dumps(d))["aggregates"][0]["fan_in"] == 3
