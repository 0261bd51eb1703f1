"""The one number formatter (inaplanner.views.fmt): tricky values, units, and that every former
copy (report, overlay, CLI) now prints through it."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from inaplanner.views import fmt
from inaplanner.views.fmt import delta, fixed, gbps, nbytes, num, pct, seconds, signed, signed_pct


@pytest.mark.parametrize(("value", "text"), [
    (60.0, "60"),  # never 60.000000
    (100.19999999999, "100.2"),  # never 100.19999999999
    (0.1 + 0.2, "0.3"),  # never 0.30000000000000004
    (1e-6, "1e-6"),
    (3.38206e-06, "3.38206e-6"),
    (1e-13, "0"),  # float noise
    (-0.0, "0"),
    (-1.5, "-1.5"),
    (1000.0, "1000"),  # never 1e+03
    (123456789.0, "123457000"),
    (1e300, "1e300"),
    (10**20, "1e20"),
    (2.5e20, "2.5e20"),
    (0.00012345, "0.00012345"),
    (5, "5"),
    (math.inf, "inf"),
    (-math.inf, "-inf"),
    (math.nan, "nan"),
    (None, "-"),
])
def test_num_has_no_float_noise(value, text):
    assert num(value) == text


def test_num_digits_and_thousands():
    assert num(1234567, 3) == "1230000"
    assert num(1234567, 3, thousands=True) == "1,230,000"
    assert num(-123456.7, thousands=True) == "-123,457"
    assert num(99.96, 3) == "100"
    assert num(0.000123456, 3) == "0.000123"
    assert num(1e-5, zero=1e-4) == "0"


def test_fixed_and_percentages():
    assert fixed(-0.0001, 2) == "0.00"  # never -0.00
    assert fixed(1.005, 1) == "1.0"
    assert fixed(2.5e20) == "2.5e20"  # huge: no 21-digit column
    assert fixed(None) == "-"
    assert pct(1.002) == "100.2 %"
    assert pct(0.8, 2) == "80.00 %"
    assert pct(1e-9) == "0.0 %"
    assert pct(math.inf) == "inf %"
    assert pct(None) == "-"
    assert signed_pct(0.125) == "+12.5 %"
    assert signed_pct(-0.03) == "-3.0 %"
    assert signed_pct(-0.0001) == "0.0 %"  # never -0.0 %
    assert signed_pct(math.inf) == "+inf %"


def test_signed_and_delta():
    assert signed(0.5) == "+0.5"
    assert signed(-1.0) == "-1"
    assert signed(0.0) == "0"
    # two objectives that both print as 100: no change, not +3.38206e-06
    assert num(100.0) == num(100.00000338206) == "100"
    assert delta(100.0, 100.00000338206) == "0"
    assert delta(100.0, 101.5) == "+1.5"
    assert delta(2.0, 1.0) == "-1"
    assert delta(0.0, 1e-6) == "+1e-6"  # a real change from zero is shown
    assert delta(None, 1.0) == "-"
    assert delta(1.0, math.inf) == "+inf"


def test_units_pick_a_readable_prefix():
    assert gbps(100.0) == "100 Gbps"
    assert gbps(1e-6) == "1 kbps"
    assert gbps(0.3) == "300 Mbps"
    assert gbps(1600.0) == "1.6 Tbps"
    assert gbps(999.99) == "1 Tbps"  # rounding moves it to the next prefix
    assert gbps(1e-14) == "0 Gbps"
    assert gbps(None) == "-"
    assert seconds(60.0) == "60 s"
    assert seconds(0.0042) == "4.2 ms"
    assert seconds(10e-6) == "10 us"
    assert seconds(math.nan) == "nan s"
    assert nbytes(5e6) == "5 MB"
    assert nbytes(306) == "306 B"
    assert nbytes(1.5e9) == "1.5 GB"
    assert nbytes(-2e3) == "-2 kB"


@given(st.floats(allow_nan=False, allow_infinity=False, min_value=-1e14, max_value=1e14),
       st.integers(min_value=1, max_value=12))
def test_num_round_trips_to_its_significant_digits(x, digits):
    text = num(x, digits)
    back = float(text)
    if abs(x) < fmt.ZERO:
        assert back == 0.0
    else:
        assert back == pytest.approx(x, rel=10.0 ** (1 - digits))
        mantissa = text.split("e")[0]
        assert not mantissa.endswith(".") and not ("." in mantissa and mantissa.endswith("0"))
        significant = mantissa.lstrip("-").replace(".", "").lstrip("0")
        assert len(significant.rstrip("0") or "0") <= digits


def test_the_former_copies_print_through_it():
    from inaplanner.report import fmt as report_fmt
    from inaplanner.views.overlay import fmt as overlay_fmt

    assert report_fmt.num is num and report_fmt.pct is pct and report_fmt.signed is signed
    assert overlay_fmt(1000.0) == "1000" and overlay_fmt(2.4321) == "2.43"
    assert overlay_fmt(math.nan) == "-" and overlay_fmt(None) == "-"


def test_the_planner_form_shows_60_not_60_000000(qtbot):
    from inaplanner.gui.planning.param_form import _editor, get_value, set_value
    from inaplanner.planners.base import Param

    w = _editor(Param("time_limit", float, 60.0, "seconds", min=0.1, max=1e6))
    qtbot.addWidget(w)
    set_value(w, 60.0)
    assert w.text() == "60" and get_value(w) == 60.0
    set_value(w, 0.25)
    assert w.text() == "0.25"
    set_value(w, 0.1 + 0.2)  # six decimals of precision, shown without the float noise
    assert w.text() == "0.3"
    set_value(w, 0.1000015)
    assert w.text() == "0.100002" or w.text() == "0.100001"  # the spin box keeps six decimals


def test_names_stop_at_the_limit_and_count_the_rest():
    from inaplanner.views.fmt import names

    ids = [f"S{i}" for i in range(256)]
    assert names(ids) == ", ".join(ids[:12]) + " and 244 more"
    assert names(ids[:12]) == ", ".join(ids[:12])
    assert names(["A", "B", "C"], limit=2) == "A, B and 1 more"
    assert names([]) == ""
