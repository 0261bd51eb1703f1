"""Live load monitoring of a deployed testbed (Qt-free).

:class:`~inaplanner.monitor.poller.Poller` reads per-port counters over P4Runtime in a background
thread and yields :class:`~inaplanner.monitor.series.Snapshot` objects of per-direction link rates;
:mod:`~inaplanner.monitor.rates` holds the pure rate math, :mod:`~inaplanner.monitor.recording`
the CSV / SQLite recording and replay, :mod:`~inaplanner.monitor.alerts` the alert rules and
:mod:`~inaplanner.monitor.drive` makes emulated switches follow a plan.
"""

from inaplanner.monitor.alerts import Alert, AlertRule, AlertTracker
from inaplanner.monitor.rates import RateTracker, Reading, counter_delta
from inaplanner.monitor.recording import Recording, load_recording, open_recorder
from inaplanner.monitor.series import Snapshot, planned_loads

__all__ = [
    "Alert",
    "AlertRule",
    "AlertTracker",
    "RateTracker",
    "Reading",
    "Recording",
    "Snapshot",
    "counter_delta",
    "load_recording",
    "open_recorder",
    "planned_loads",
]
