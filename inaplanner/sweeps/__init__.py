"""Resilience and growth sweeps (Qt-free): which failure hurts the training jobs most, per planner.

- :mod:`.cases`: the named case generators (single-link, single-switch, pod, random-k, capacity,
  jobs) over the existing what-if changes.
- :mod:`.symmetry`: symmetric cases collapsed (colour refinement, checked against exact orbits).
- :mod:`.run`: one case with one planner, evaluated (what every worker runs).
- :mod:`.backends`: a local pool of worker processes or a Dask cluster.
- :mod:`.store`: results appended to an SQLite file as they arrive (resume, inspection).
- :mod:`.engine`: the sweep from end to end, and its summary.
"""

from inaplanner.sweeps.cases import BASELINE, GENERATORS, Case, generate, parse_generators
from inaplanner.sweeps.engine import SweepSpec, format_summary, run_sweep, summarise

__all__ = ["BASELINE", "GENERATORS", "Case", "SweepSpec", "format_summary", "generate",
           "parse_generators", "run_sweep", "summarise"]
