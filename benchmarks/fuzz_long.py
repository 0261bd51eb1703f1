"""The long fuzz run of issue 16: 10,000+ mutated documents through every loader, a share of them
through the CLI commands that read them. Prints the counts (inputs tried, refused cleanly,
accepted, round-tripped, tracebacks, hangs) per kind and in total; exit code 1 when anything but a
clean refusal or a faithful load happened (the first findings are printed).

    .venv/bin/python benchmarks/fuzz_long.py                 # 10,000 cases, seed 0
    .venv/bin/python benchmarks/fuzz_long.py --cases 2000 --cli-every 10 --seed 7

The mutations and checks are those of ``tests/fuzz`` (``tests/fuzz/fuzzlib.py``), driven here by a
seeded ``random.Random`` instead of hypothesis so that a run is fast and reproducible.
"""

from __future__ import annotations

import argparse
import importlib.util
import random
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _fuzzlib():
    spec = importlib.util.spec_from_file_location("fuzzlib", ROOT / "tests" / "fuzz" / "fuzzlib.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["fuzzlib"] = module
    spec.loader.exec_module(module)
    return module


#: share of cases per kind (scenarios come in four formats, so they get most)
WEIGHTS = {"scenario": 0.55, "plan": 0.15, "testbed": 0.15, "recording": 0.15}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", type=int, default=10_000, help="mutated inputs (default 10,000)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--cli-every", type=int, default=25, metavar="N",
                    help="also run every N-th case through its CLI commands (default 25)")
    ap.add_argument("--budget", type=float, default=10.0, help="seconds per case before a hang")
    args = ap.parse_args()

    fz = _fuzzlib()
    rnd = random.Random(args.seed)
    counts: Counter[tuple[str, str]] = Counter()
    cli: Counter[str] = Counter()
    findings: list[str] = []
    slowest = (0.0, "")
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="inaplanner-fuzz-") as tmp_s:
        tmp = Path(tmp_s)
        (tmp / "seeds").mkdir()
        seeds = fz.make_seeds(tmp / "seeds")
        inputs = fz.make_inputs(tmp)
        by_kind = {k: [s for s in seeds if s.kind == k] for k in WEIGHTS}
        kinds, weights = zip(*WEIGHTS.items(), strict=True)
        for i in range(args.cases):
            kind = rnd.choices(kinds, weights)[0]
            seed = rnd.choice(by_kind[kind])
            case_dir = tmp / f"case{i % 64}"
            case_dir.mkdir(exist_ok=True)
            for old in case_dir.iterdir():
                old.unlink()
            path = fz.case_path(case_dir, seed, fz.mutate(seed.data, rnd))
            t0 = time.perf_counter()
            try:
                outcome = fz.check_file(kind, path, case_dir, args.budget)
            except fz.Finding as exc:
                text = str(exc)
                outcome = "hang" if text.startswith("hang") else "traceback"
                if len(findings) < 20:
                    findings.append(f"case {i} ({seed.name}): {text}")
            dt = time.perf_counter() - t0
            if dt > slowest[0]:
                slowest = (dt, f"case {i} ({seed.name}, {path.stat().st_size} bytes)")
            counts[(kind, outcome)] += 1
            if args.cli_every and i % args.cli_every == 0:
                for argv in fz.cli_commands(kind, path, inputs, case_dir):
                    try:
                        code, _out, _err = fz.run_cli(argv, args.budget)
                        cli[f"exit {code}"] += 1
                    except fz.Finding as exc:
                        cli["traceback/hang"] += 1
                        if len(findings) < 20:
                            findings.append(f"case {i} CLI {argv[0]} ({seed.name}): {exc}")
    elapsed = time.perf_counter() - start

    outcomes = ("refused", "accepted", "roundtripped", "traceback", "hang")
    print(f"fuzz_long: {args.cases} mutated inputs, seed {args.seed}, {elapsed:.1f} s "
          f"(slowest case {slowest[0]:.2f} s: {slowest[1]})")
    print(f"{'kind':<10}" + "".join(f"{o:>14}" for o in ("tried", *outcomes)))
    total: Counter[str] = Counter()
    for kind in WEIGHTS:
        row = {o: counts[(kind, o)] for o in outcomes}
        tried = sum(row.values())
        total.update(row)
        total["tried"] += tried
        print(f"{kind:<10}{tried:>14}" + "".join(f"{row[o]:>14}" for o in outcomes))
    print(f"{'total':<10}{total['tried']:>14}" + "".join(f"{total[o]:>14}" for o in outcomes))
    accepted = total["accepted"] + total["roundtripped"]
    print(f"refused cleanly: {total['refused']}; accepted: {accepted} (scenarios among them "
          f"round-tripped through native/node-link/GraphML/GML with the same hash: "
          f"{total['roundtripped']}); tracebacks: {total['traceback']}; hangs: {total['hang']}")
    print("CLI runs: " + ", ".join(f"{k}: {v}" for k, v in sorted(cli.items())) +
          f" (total {sum(cli.values())})")
    for f in findings:
        print("FINDING " + f)
    return 1 if findings else 0


if __name__ == "__main__":
    raise SystemExit(main())
