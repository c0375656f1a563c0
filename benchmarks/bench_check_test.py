#!/usr/bin/env python3
"""The regression guard's judgement (tools/bench-check), on runs written here.

    bench_check_test.py TOOLS_BENCH_CHECK

Runs shaped as catalyst-remote-bench writes them: a baseline written from
three runs passes against the same runs; a row 25% slower fails, named;
a row missing, or a baseline missing, is an error of its own.
"""

import json
import os
import subprocess
import sys
import tempfile

ROWS = ["launch/zerocopy/8B/1in/rank1", "launch/batched/8B/1in/rank1",
        "launch/local/8B/1in/rank1", "launch/zerocopy/1MiB/1in/rank1"]
BASE = {"launch/zerocopy/8B/1in/rank1": 1.10, "launch/batched/8B/1in/rank1": 1.60,
        "launch/local/8B/1in/rank1": 0.25, "launch/zerocopy/1MiB/1in/rank1": 1.05}


def run_file(directory, name, ratios, skip=()):
    benchmarks = [{"name": f"{row}/iterations:1000/manual_time", "run_type": "iteration",
                   "ratio_to_raw": ratio} for row, ratio in ratios.items() if row not in skip]
    path = os.path.join(directory, name)
    with open(path, "w") as f:
        json.dump({"context": {}, "benchmarks": benchmarks}, f)
    return path


def check(tool, *args):
    p = subprocess.run([tool, *args], capture_output=True, text=True)
    return p.returncode, p.stdout + p.stderr


def expect(cond, what, output):
    if not cond:
        print(f"FAILED: {what}\n{output}")
        sys.exit(1)


def main(tool):
    with tempfile.TemporaryDirectory() as d:
        runs = [run_file(d, f"run{i}.json", {r: v * (1 + 0.01 * i) for r, v in BASE.items()})
                for i in range(3)]
        baseline = os.path.join(d, "baselines", "kind.json")
        rc, out = check(tool, "write", baseline, "--tolerance", "0.15", *runs)
        expect(rc == 0, "write succeeds", out)
        with open(baseline) as f:
            stored = json.load(f)
        expect(abs(stored["rows"][ROWS[0]]["ratio"] - 1.111) < 1e-3, "the median is stored", out)
        expect(all(r["tolerance"] == 0.15 for r in stored["rows"].values()),
               "the tolerance given is stored for every row", out)

        rc, out = check(tool, "compare", baseline, *runs)
        expect(rc == 0, "the same runs pass", out)

        slower = dict(BASE, **{ROWS[2]: BASE[ROWS[2]] * 1.25})
        slow_runs = [run_file(d, f"slow{i}.json", slower) for i in range(3)]
        rc, out = check(tool, "compare", baseline, *slow_runs)
        expect(rc == 1, "a row 25% slower fails", out)
        expect(f"slower: {ROWS[2]}" in out, "the slower row is named", out)
        expect(f"slower: {ROWS[0]}" not in out, "rows that did not grow are not named", out)

        faster = dict(BASE, **{ROWS[1]: BASE[ROWS[1]] * 0.5})
        rc, out = check(tool, "compare", baseline, run_file(d, "fast.json", faster))
        expect(rc == 0, "a faster row passes", out)

        rc, out = check(tool, "compare", baseline, run_file(d, "gap.json", BASE, skip=[ROWS[3]]))
        expect(rc == 2 and ROWS[3] in out, "a missing row is an error naming it", out)

        old_format = os.path.join(d, "old.json")
        with open(old_format, "w") as f:
            json.dump({"tolerance": 0.1, "rows": {r: {"ratio": v} for r, v in BASE.items()}}, f)
        rc, out = check(tool, "compare", old_format, *runs)
        expect(rc == 2 and "lacks a ratio and a tolerance" in out,
               "a baseline without tolerances is an error naming the row", out)

        rc, out = check(tool, "compare", os.path.join(d, "none.json"), *runs)
        expect(rc == 2 and "cannot read the baseline" in out, "a missing baseline is an error", out)

        # Without --tolerance: derived per row from how far a check's median
        # (--group runs) strays; at least 15%.
        rc, out = check(tool, "write", baseline, *runs)
        with open(baseline) as f:
            expect(json.load(f)["rows"][ROWS[0]]["tolerance"] == 0.15,
                   "the derived tolerance has its floor", out)
        # Two groups of five: the 1 MiB row at 1.05, then at 1.575; the
        # others steady. Its medians stray 20% from the median of all.
        two_level = [run_file(d, f"level{i}.json",
                              dict(BASE, **{ROWS[3]: BASE[ROWS[3]] * (1 if i < 5 else 1.5)}))
                     for i in range(10)]
        rc, out = check(tool, "write", baseline, "--group", "5", *two_level)
        with open(baseline) as f:
            rows = json.load(f)["rows"]
        expect(rc == 0 and rows[ROWS[3]]["tolerance"] == 0.40, "a two-level row gets room", out)
        expect(rows[ROWS[0]]["tolerance"] == 0.15, "a steady row keeps the floor", out)
        rc, out = check(tool, "write", baseline, "--group", "x", *runs)
        expect(rc == 2 and "--group takes a number" in out, "a bad --group is refused", out)
        # The local row is judged by its fastest run: three runs of five at a
        # slow level do not move it (they would move a median); all runs
        # slower do (the "slower" case above).
        one_slow = [run_file(d, f"oneslow{i}.json",
                             dict(BASE, **{ROWS[2]: BASE[ROWS[2]] * (3 if i < 3 else 1)}))
                    for i in range(5)]
        rc, out = check(tool, "write", baseline, "--tolerance", "0.15", *runs)
        rc, out = check(tool, "compare", baseline, *one_slow)
        expect(rc == 0, "slow runs of the local row are not a slowdown while one is fast", out)
    print("bench-check: all cases behave")


if __name__ == "__main__":
    main(sys.argv[1])
