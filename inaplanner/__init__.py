"""inaplanner: a planner for in-network aggregation (INA) in ML training datacenters.

The program's data (icons, the bundled sample scenarios, the P4 programs and their P4Info) is
package data, read through :mod:`importlib.resources`, so an installed wheel has all of it and
never reads a source checkout. (The checkout's top-level ``resources/``, ``p4/`` and
``sample_topologies/`` are links to these folders.)
"""

from importlib.resources import files
from pathlib import Path

__version__ = "0.2.0"

_PACKAGE = Path(str(files(__name__)))
#: Bundled sample scenarios (``*.json``).
SAMPLES = _PACKAGE / "sample_topologies"
#: Icons and the desktop entry.
RESOURCES = _PACKAGE / "resources"
#: The P4 programs and the P4Info of the contract.
P4_DIR = _PACKAGE / "p4"
