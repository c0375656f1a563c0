"""benchmarks/python_launch.py keeps working: run with a handful of
samples against a real executor, it writes well-formed rows, and
tools/bench-report makes its table of them. No timing is asserted: how
fast is the benchmark's to say, on a quiet machine.

ctest sets CATALYST_REMOTE_TEST_EXECUTOR, CATALYST_REMOTE_BENCH_DIR (the
build's benchmarks/: the C ABI's program and the kernels) and
CATALYST_REMOTE_SOURCE_DIR.
"""

import json
import math
import os
import subprocess
import sys

from conftest import _required

SIZES = [8, 64 << 10]
MEMORY_BYTES = 1 << 20


def run_benchmark(tmp_path):
    source = _required("CATALYST_REMOTE_SOURCE_DIR")
    bench = _required("CATALYST_REMOTE_BENCH_DIR")
    out = tmp_path / "python.json"
    done = subprocess.run(
        [sys.executable, os.path.join(source, "benchmarks", "python_launch.py"),
         "--executor", _required("CATALYST_REMOTE_TEST_EXECUTOR"),
         "--capi-bench", os.path.join(bench, "catalyst-remote-capi-launch-bench"),
         "--kernel", os.path.join(bench, "kernels", "forward.o"),
         "--sizes", ",".join(map(str, SIZES)), "--samples", "2", "--launches", "3",
         "--big-samples", "2", "--memory-bytes", str(MEMORY_BYTES), "--memory-runs", "1",
         "--out", str(out)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=240)
    assert done.returncode == 0, done.stderr
    with open(out) as f:
        return out, json.load(f)


def positive(row, name):
    value = row.get(name)
    assert isinstance(value, (int, float)) and math.isfinite(value) and value > 0, (name, row)
    return value


def check_launch_row(row, samples, per_sample):
    assert row["run_type"] == "iteration" and row["time_unit"] == "us"
    assert (row["samples"], row["launches_per_sample"]) == (samples, per_sample)
    capi = positive(row, "capi_us")
    session = positive(row, "session_us")
    prepared = positive(row, "prepared_us")
    assert row["real_time"] == prepared
    assert math.isclose(row["session_over_capi"], session / capi)
    assert math.isclose(row["prepared_over_capi"], prepared / capi)


def test_rows_are_well_formed_and_reported(tmp_path):
    path, results = run_benchmark(tmp_path)
    context = results["context"]
    assert context["link"] == "loopback"
    assert context["capi_session"] == "local/zerocopy"
    assert len(context["load_avg"]) == 3 and context["pinning"]
    rows = {row["name"]: row for row in results["benchmarks"]}
    assert set(rows) == {"python/launch/8B", "python/launch/64KiB", "python/memory/1MiB"}
    check_launch_row(rows["python/launch/8B"], 2, 3)
    check_launch_row(rows["python/launch/64KiB"], 2, 1)
    memory = rows["python/memory/1MiB"]
    assert memory["bytes"] == MEMORY_BYTES and memory["runs"] == 1
    for name in ("capi_over_buffers_MiB", "python_over_buffers_MiB", "python_minus_capi_MiB"):
        assert math.isfinite(memory[name]), (name, memory)

    report_dir = tmp_path / "report"
    done = subprocess.run(
        [sys.executable, os.path.join(_required("CATALYST_REMOTE_SOURCE_DIR"), "tools",
                                      "bench-report"), str(report_dir), "loopback=%s" % path],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    summary = (report_dir / "summary.md").read_text()
    assert "Python beside the C ABI" in summary
    assert "| 8B |" in summary and "| 64KiB |" in summary
    assert "Memory beyond the 1MiB input and output" in summary
