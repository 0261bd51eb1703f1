"""`inaplanner gui sample --plan P --screenshot OUT.png` under a real X server (Xvfb)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import numpy as np
from PySide6.QtGui import QImage

from inaplanner.gui.app import sample_scenario
from inaplanner.io.native import save_plan


def pixels(path) -> np.ndarray:
    img = QImage(str(path)).convertToFormat(QImage.Format.Format_RGB32)
    assert not img.isNull()
    ptr = img.constBits()
    arr = np.frombuffer(ptr, dtype=np.uint8, count=img.sizeInBytes()).reshape(img.height(), img.bytesPerLine() // 4, 4)
    return arr[:, : img.width(), [2, 1, 0]].astype(float)  # memory order is B, G, R, A


def test_screenshot_of_the_sample_with_an_overlay(xvfb, tmp_path, hand_plan):
    sc, _ = sample_scenario()
    assert sc.jobs, "the sample has a job"
    # a hand-made plan for the sample: workers merge at their leaf, then at the PS's leaf
    from inaplanner.io.native import scenario_sha256
    from inaplanner.model import Plan, PlannerInfo, Route, TaskPlan

    job = sc.jobs[0]
    ps = job.parameter_servers[0]
    leaf_of = {lk.a: lk.b for lk in sc.links if not sc.is_switch(lk.a) and sc.is_switch(lk.b)}
    spine = next(s.id for s in sc.switches() if s.tier == "spine")
    routes = []
    for w in job.workers:
        if leaf_of[w] == leaf_of[ps]:
            routes.append(Route(w, [w, leaf_of[w], ps], [leaf_of[w]]))
        else:
            routes.append(Route(w, [w, leaf_of[w], spine, leaf_of[ps], ps], [leaf_of[w], leaf_of[ps]]))
    plan = Plan(scenario_sha256(sc), PlannerInfo("by-hand"), [TaskPlan(job.id, ps, 10.0, routes)])
    plan_path = tmp_path / "plan.json"
    save_plan(plan, plan_path)
    out = tmp_path / "shot.png"
    exe = shutil.which("inaplanner", path=os.path.dirname(sys.executable)) or shutil.which("inaplanner")
    cmd = [exe] if exe else [sys.executable, "-m", "inaplanner"]
    env = dict(os.environ, DISPLAY=xvfb, QT_QPA_PLATFORM="xcb", INAPLANNER_RECOVERY_DIR=str(tmp_path / "rec"))
    proc = subprocess.run([*cmd, "gui", "sample", "--plan", str(plan_path), "--screenshot", str(out),
                           "--size", "1200x760", "--theme", "light"],
                          env=env, capture_output=True, text=True, timeout=90)
    assert proc.returncode == 0, proc.stderr
    assert out.exists()
    px = pixels(out)
    h, w, _ = px.shape
    assert w >= 1200 and h >= 700
    assert px.std() > 20  # not blank
    # the overlay paints task flows in the first task colour (#0072b2) somewhere on the canvas
    blue = (np.abs(px[..., 0] - 0x00) < 40) & (np.abs(px[..., 1] - 0x72) < 40) & (np.abs(px[..., 2] - 0xB2) < 40)
    assert blue.sum() > 50
    assert not (tmp_path / "rec").exists() or not any((tmp_path / "rec").iterdir())
