"""The numbers behind the Compare charts (Qt-free): taken from each result's evaluation, never
recomputed. Tests call these with small results and compare with what the charts hold."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from inaplanner.evaluate import Evaluation
from inaplanner.views.runs import PlanResult


@dataclass
class ObjectiveSeries:
    labels: list[str]
    objectives: list[float]
    bounds: list[float | None]


def objective_series(results: Sequence[PlanResult]) -> ObjectiveSeries:
    """Per result: the evaluator's objective and the planner's proven bound (None when none)."""
    return ObjectiveSeries(
        [r.title for r in results], [r.objective for r in results], [r.bound for r in results]
    )


@dataclass
class ThroughputSeries:
    jobs: list[str]
    labels: list[str]
    values: np.ndarray  # (results, jobs) Gbps; 0 where a result's scenario lacks the job


def throughput_series(results: Sequence[PlanResult]) -> ThroughputSeries:
    """Job throughput (sum of its tasks' rates, ``Evaluation.job_throughput``) per result and job."""
    jobs: list[str] = []
    for r in results:
        for j in r.evaluation.job_throughput:
            if j not in jobs:
                jobs.append(j)
    values = np.zeros((len(results), len(jobs)))
    for i, r in enumerate(results):
        for k, j in enumerate(jobs):
            values[i, k] = float(r.evaluation.job_throughput.get(j, 0.0))
    return ThroughputSeries(jobs, [r.title for r in results], values)


def load_cdf(ev: Evaluation) -> tuple[np.ndarray, np.ndarray]:
    """Empirical CDF of link utilisation (load / capacity, background included) over every directed
    link with capacity > 0: (each distinct utilisation, fraction of links at or below it). One
    point per distinct value draws the same steps as one per link: a fat-tree k=64 has 393,216
    directed links but a few hundred values, and the chart took 1.9 s on the UI thread."""
    cap = ev.link_capacity
    util = ev.link_utilisation[cap > 0].ravel()
    x, counts = np.unique(util, return_counts=True)
    y = np.cumsum(counts, dtype=float) / max(util.size, 1)
    return x, y
