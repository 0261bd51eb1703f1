"""Aggregator-memory scheduling (the ESA paper): priorities, a one-switch simulator of SwitchML / ATP /
ESA, and the per-switch parameters deployment writes into packets and tables. Qt-free.

* :mod:`.priority` — ESA Eq. (1), its 8-bit fixed-point encoding, downgrading.
* :mod:`.hashing` — the aggregator index hash(job, seq) shared by simulator and data plane.
* :mod:`.workload` — DNN A / DNN B, jobs, :class:`SimConfig`, the paper's presets.
* :mod:`.simulator` — :func:`simulate` (discrete-event, per-packet allocation, real values).
* :mod:`.bound` — the unlimited-memory run: the JCT no memory policy can beat.
* :mod:`.deployment` — :func:`deployment_params` for the data-plane helper.
* :mod:`.from_scenario` — a simulation of the jobs meeting at one switch of a scenario.
* :mod:`.cli` — ``inaplanner memsim``.
"""

from inaplanner.memsched.bound import lower_bound, speedup_ceiling, unlimited_memory
from inaplanner.memsched.deployment import (
    DEFAULT_AGGREGATORS,
    AggregateSpec,
    JobMemParams,
    deployment_params,
    job_priority_value,
)
from inaplanner.memsched.hashing import agg_index, seed_for
from inaplanner.memsched.priority import (
    PRIORITY_MAX,
    choose_frac_bits,
    dequantise,
    downgrade,
    priority,
    quantise,
)
from inaplanner.memsched.results import JobStats, SimResult
from inaplanner.memsched.simulator import priority_table, simulate, simulate_all
from inaplanner.memsched.workload import (
    DNN_A,
    DNN_B,
    MB,
    POLICIES,
    PRESETS,
    JobSpec,
    SimConfig,
    Workload,
    paper_jobs,
    preset,
    two_layer_dnn,
)

__all__ = [
    "DEFAULT_AGGREGATORS",
    "DNN_A",
    "DNN_B",
    "MB",
    "POLICIES",
    "PRESETS",
    "PRIORITY_MAX",
    "AggregateSpec",
    "JobMemParams",
    "JobSpec",
    "JobStats",
    "SimConfig",
    "SimResult",
    "Workload",
    "agg_index",
    "choose_frac_bits",
    "dequantise",
    "deployment_params",
    "downgrade",
    "job_priority_value",
    "lower_bound",
    "paper_jobs",
    "preset",
    "priority",
    "priority_table",
    "quantise",
    "seed_for",
    "simulate",
    "simulate_all",
    "speedup_ceiling",
    "two_layer_dnn",
    "unlimited_memory",
]
