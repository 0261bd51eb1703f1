"""Topology builders, programmable-switch marking, job placement and layout (Qt-free)."""

from inaplanner.topologies.builders import (
    aro_fig1,
    fat_tree,
    grid_fig1,
    grid_testbed,
    inart_fig1,
    inart_testbed,
    leaf_spine,
)
from inaplanner.topologies.layout import auto_layout, force_layout, tiered_layout
from inaplanner.topologies.marking import (
    hosts_by_switch,
    leaf_switches,
    mark_programmable,
    place_jobs,
    set_max_fan_in,
)

__all__ = [
    "aro_fig1",
    "auto_layout",
    "fat_tree",
    "force_layout",
    "grid_fig1",
    "grid_testbed",
    "hosts_by_switch",
    "inart_fig1",
    "inart_testbed",
    "leaf_spine",
    "leaf_switches",
    "mark_programmable",
    "place_jobs",
    "set_max_fan_in",
    "tiered_layout",
]
