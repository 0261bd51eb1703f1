"""inaplanner: a planner for in-network aggregation (INA) in ML training datacenters."""

from pathlib import Path

__version__ = "0.1.0"

#: The source checkout (holds resources/, p4/, sample_topologies/); the package is installed editable.
ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_topologies"
RESOURCES = ROOT / "resources"
P4_DIR = ROOT / "p4"
