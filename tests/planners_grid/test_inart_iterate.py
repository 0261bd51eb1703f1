"""R-InArt when its limit stops the LP (Eq. 5) before the optimum (issue 13, item 2): the rounding
follows the interior-point method's last iterate instead of giving up to the ATP-style fallback,
and the plan says so, with no bound."""

from __future__ import annotations

import subprocess
import sys

from inaplanner.evaluate import evaluate
from inaplanner.planners import get, run_planner
from inaplanner.planners.inart import Eq5
from inaplanner.topologies import fat_tree, mark_programmable, place_jobs


def _fat_tree_k8():
    """``generate fat-tree --k 8 --programmable 0.2 --pipelines 4 --jobs 2 --tasks-per-job 2
    --workers-per-job 50 --seed 1``."""
    sc = fat_tree(8)
    mark_programmable(sc, 0.2, pipelines=4, seed=1)
    place_jobs(sc, 2, 2, 50, seed=1)
    return sc


def test_inart_rounds_the_lps_last_iterate_when_a_limit_stops_it(monkeypatch):
    sc = _fat_tree_k8()
    real = Eq5.solve
    given: list[float] = []

    def stopped(self, time_limit, cancel, options=None):  # the real LP, stopped as a limit would
        given.append(time_limit)
        return real(self, time_limit, cancel, options={"ipm_iteration_limit": 8})

    monkeypatch.setattr(Eq5, "solve", stopped)
    plan = run_planner(get("inart"), sc, {"seed": 0, "time_limit": 60})
    info = plan.planner
    assert len(given) == 1 and given[0] < 60  # the LP gets what is left of the limit, less the reserve
    assert info.status == "timeout" and plan.bound is None and info.params["lp_objective"] is None
    assert info.params["plan_source"] == "R-InArt rounding of the LP's last iterate"
    assert "last interior-point iterate" in info.params["stopped"]
    ev = evaluate(sc, plan)
    assert ev.feasible and not ev.errors and not ev.violations
    # the fallback would have been 6.47 here; the iterate's rounding reaches 9.11
    assert ev.objective > 1.2 * info.params["fallback_objective"]


def test_inart_gives_the_lps_bound_when_the_lp_ends():
    """The same scenario with the LP left to end: its optimum is the bound, and the plan says
    it comes from the LP's rounding."""
    sc = _fat_tree_k8()
    plan = run_planner(get("inart"), sc, {"seed": 0, "time_limit": 60})
    info = plan.planner
    assert info.params["plan_source"] == "R-InArt rounding"
    assert plan.bound is not None and plan.bound == info.params["lp_objective"]
    assert "stopped" not in info.params


def test_plan_command_says_why_a_limit_stopped_the_planner(tmp_path):
    """``inaplanner plan`` prints the planner's reason when a limit cut it short (the plan's
    ``stopped``), and no such line when nothing did."""
    scenario = tmp_path / "ft8.json"
    gen = ["generate", "fat-tree", "--k", "8", "--programmable", "0.2", "--pipelines", "4", "--jobs", "2",
           "--tasks-per-job", "2", "--workers-per-job", "50", "--seed", "1", "-o", str(scenario)]
    subprocess.run([sys.executable, "-m", "inaplanner", "-q", *gen], check=True, capture_output=True)

    def plan(*limit: str) -> list[str]:
        out = subprocess.run([sys.executable, "-m", "inaplanner", "-q", "plan", str(scenario), "--planner", "inart",
                              *limit, "-o", str(tmp_path / "plan.json")], check=True, capture_output=True, text=True)
        return out.stdout.splitlines()

    cut = plan("--time-limit", "0.1")  # the whole run takes about 1.3 s
    assert "status timeout" in cut[0]
    assert cut[1].startswith("  stopped: ") and "time limit" in cut[1]
    whole = plan()
    assert "status timeout" not in whole[0] and not any("stopped" in line for line in whole)
