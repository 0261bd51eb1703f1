"""Shared builders for the memsched tests: tiny workloads and scenarios."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from inaplanner.memsched.workload import JobSpec, SimConfig, Workload, two_layer_dnn
from inaplanner.model import Host, Job, Link, Scenario, Switch

#: one packet of 62 values (248 bytes), one layer, no computation: the unit of the Fig. 3 trace
ONE_PACKET = Workload(name="one", partition_bytes=(248,), partition_layer=(1,), layers=1,
                      compute_per_layer_s=0.0, comm_comp_ratio=1.0)


def small_mixed(jobs: int = 4, workers: int = 4, mb: float = 0.25, **knobs: object) -> SimConfig:
    """A scaled-down ESA §7.2 setting: DNN A and B alternating, partitions of ``mb`` MB (A) and
    ``mb / 2`` (B), computation, jitter and start spread scaled by ``mb / 4``."""
    scale = mb / 4
    a = two_layer_dnn("A", mb, 0.32 * scale, 2.0)
    b = two_layer_dnn("B", mb / 2, 0.64 * scale, 0.5)
    specs = tuple(JobSpec(f"j{i}", a if i % 2 == 0 else b, workers) for i in range(jobs))
    base: dict[str, object] = {"iterations": 2, "jitter_s": 300e-6 * scale,
                               "start_spread_s": 1e-3 * scale}
    base.update(knobs)
    return SimConfig(jobs=specs, **base)  # type: ignore[arg-type]


def star_scenario(jobs: int = 2, workers: int = 3, aggregators: int | None = 1000,
                  pipelines: int = 1) -> Scenario:
    """One programmable switch S1, ``jobs`` jobs of ``workers`` workers and one PS each."""
    nodes: list = [Switch(id="S1", programmable=True, pipelines=pipelines, aggregators=aggregators)]
    links = []
    job_list = []
    port = 1
    for j in range(jobs):
        ws = [f"w{j}_{k}" for k in range(workers)]
        ps = f"ps{j}"
        for h in [*ws, ps]:
            nodes.append(Host(id=h))
            links.append(Link(a=h, b="S1", capacity=100.0, a_port=None, b_port=port))
            port += 1
        job_list.append(Job(id=f"job{j}", workers=ws, parameter_servers=[ps], model_mb=4.0,
                            layers=4, comm_comp_ratio=2.0 if j % 2 == 0 else 0.5,
                            remaining_s=100.0 * (j + 1)))
    sc = Scenario(name="star", nodes=nodes, links=links, jobs=job_list)
    sc.validate()
    return sc


@pytest.fixture
def one_packet() -> Workload:
    return ONE_PACKET


@pytest.fixture
def mixed() -> Callable[..., SimConfig]:
    """Factory: :func:`small_mixed`."""
    return small_mixed


@pytest.fixture
def make_star() -> Callable[..., Scenario]:
    """Factory: :func:`star_scenario`."""
    return star_scenario


@pytest.fixture
def star() -> Scenario:
    return star_scenario()
