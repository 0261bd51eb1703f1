"""ARO: aggregator-aware routing optimisation for Clos networks (paper 004, Luo et al.).

Presets as in the paper's Table II: ``aro`` (QSR only), ``aro-acc`` (SRO + APP + QSR),
``aro-raw`` (none). Every switch can be overridden per run (``--param sro=true`` ...).
"""

from inaplanner.planners.aro.planner import AroPlanner

PLANNERS = [
    AroPlanner("aro", "ARO: exact aggregator-aware routing MILP (QSR for multi-task models)",
               sro=False, app=False, qsr=True),
    AroPlanner("aro-acc", "ARO with SRO, APP and QSR: faster, no optimality proof",
               sro=True, app=True, qsr=True),
    AroPlanner("aro-raw", "ARO without accelerations: continuous rates everywhere",
               sro=False, app=False, qsr=False),
]

__all__ = ["PLANNERS", "AroPlanner"]
