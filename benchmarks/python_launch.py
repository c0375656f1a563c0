#!/usr/bin/env python3
"""Launches from Python beside the same launches through the C ABI.

    python_launch.py --executor EXE --capi-bench BIN --kernel forward.o
                     [--package DIR] [--quick] [--out FILE] [SAMPLE OPTIONS]

One executor of its own on 127.0.0.1, placed as catalyst-remote-bench places
its (CATALYST_REMOTE_BENCH_PIN: split, the default, puts this script and the
C program on one CPU and the executor with its connection processes on
another; same; none), serves every launch, each in shared memory (transport
local, strategy zerocopy). The launch is forward.o's forward_1_r1: one dense
rank-1 uint8 input, handed back as the output, which comes into a fresh
buffer freed right after the launch, in C and in Python alike.

Per size (8 B and 256 MiB; the smallest sampled in batches of --launches
launches, the others one launch a sample), three ways take turns sample by
sample, the first place rotating, so that all see the same machine:
  capi      catalyst-remote-capi-launch-bench, the C ABI's launch, in a
            process of its own driven over a pipe (its own clock, the
            pipe outside the timing)
  session   Session.launch(entry, object, x, outputs=[("uint8", 1)])
  prepared  Session.prepare(entry, object, outputs) once, then call(x)
The row keeps each way's median launch time (capi_us, session_us,
prepared_us), Python's ratios to the C ABI (session_over_capi,
prepared_over_capi) and the CPU time the calling process spent per launch
(capi_cpu_us, ...: every thread's; it includes the library's spin while it
waits for the executor, which yields between looks, so it grows when the
executor is slow to answer).

Memory: in fresh processes, taking turns, the resident set after a 4 KiB
launch and the peak resident set around one launch of 256 MiB each way, read
while the input and output are held: the peak beyond the resident set and
the two buffers is what the launch needed, as the C ABI's memory/host_peak
measures it (benchmarks/MemoryBench.cpp).

The results are Google Benchmark-shaped JSON (a context and rows named
python/launch/SIZE and python/memory/SIZE) that tools/bench-report reads.
Standard library, NumPy and catalyst_remote only.
"""

import argparse
import datetime
import json
import os
import queue
import socket
import statistics
import subprocess
import sys
import threading
import time

ENTRY = "forward_1_r1"
OUTPUTS = [("uint8", 1)]
WAYS = ["capi", "session", "prepared"]
MIB = 1 << 20
# Sample counts: (8 B samples, launches per 8 B sample, big samples, memory runs).
PRESETS = {"default": (51, 400, 21, 3), "quick": (15, 200, 7, 1)}
# A launch, a command to the C program or an executor's start past this
# means something is stuck: the run fails rather than hangs.
DEADLINE_S = 120.0


def size_label(n):
    for unit, scale in (("GiB", 1 << 30), ("MiB", MIB), ("KiB", 1 << 10)):
        if n >= scale and n % scale == 0:
            return "%d%s" % (n // scale, unit)
    return "%dB" % n


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--executor", required=True, help="catalyst-remote-executor to start")
    p.add_argument("--capi-bench", required=True, help="catalyst-remote-capi-launch-bench")
    p.add_argument("--kernel", required=True, help="forward.o, the benchmarks' kernel")
    p.add_argument("--package", help="a directory to import catalyst_remote from")
    p.add_argument("--quick", action="store_true", help="fewer samples (the quick preset)")
    p.add_argument("--sizes", default="8,%d" % (256 * MIB), help="bytes each way, comma list")
    p.add_argument("--samples", type=int, help="samples of the smallest size")
    p.add_argument("--launches", type=int, help="launches per sample of the smallest size")
    p.add_argument("--big-samples", type=int, help="samples (one launch each) of the others")
    p.add_argument("--memory-bytes", type=int, default=256 * MIB, help="the memory probe's size")
    p.add_argument("--memory-runs", type=int, help="memory probes per way (0: none)")
    p.add_argument("--link", default="loopback", help="the link's name, kept in the context")
    p.add_argument("--out", help="the JSON file (default: stdout)")
    args = p.parse_args(argv)
    preset = PRESETS["quick" if args.quick else "default"]
    for name, value in zip(["samples", "launches", "big_samples", "memory_runs"], preset):
        if getattr(args, name) is None:
            setattr(args, name, value)
    args.sizes = sorted(int(s) for s in args.sizes.split(","))
    if args.samples < 1 or args.launches < 1 or args.big_samples < 1 or args.memory_runs < 0:
        p.error("--samples, --launches and --big-samples are at least 1, --memory-runs 0")
    if not args.sizes or args.sizes[0] < 1 or args.memory_bytes < 1:
        p.error("--sizes and --memory-bytes are positive byte counts")
    return args


# --- Placement, as benchmarks/Pinning.cpp places catalyst-remote-bench's.


def plan_cpus():
    """(mode, this script's CPU, the executor's CPU) from CATALYST_REMOTE_BENCH_PIN."""
    mode = os.environ.get("CATALYST_REMOTE_BENCH_PIN") or "split"
    if mode not in ("split", "same", "none"):
        sys.exit("CATALYST_REMOTE_BENCH_PIN is '%s': use split, same or none" % mode)
    if mode == "none":
        return mode, None, None
    cpus = sorted(os.sched_getaffinity(0))[:2]
    if mode == "same" or len(cpus) < 2:
        return "same", cpus[0], cpus[0]
    return mode, cpus[0], cpus[1]


def describe_plan(mode, mine, peers):
    if mode == "none":
        return "none: the scheduler decides"
    if mode == "same":
        return "same: every process on CPU %d" % mine
    return ("split: this script and the C ABI's program on CPU %d, the executor and its "
            "connection processes on CPU %d" % (mine, peers))


# --- Child processes: lines read with a deadline.


class Lines:
    """A child's stdout, line by line, each read bounded by a deadline."""

    def __init__(self, stream, what):
        self._what = what
        self._queue = queue.Queue()
        threading.Thread(target=self._pump, args=(stream,), daemon=True).start()

    def _pump(self, stream):
        for line in stream:
            self._queue.put(line)
        self._queue.put(None)

    def next(self, timeout=DEADLINE_S):
        try:
            line = self._queue.get(timeout=timeout)
        except queue.Empty:
            raise RuntimeError("%s said nothing for %.0f s" % (self._what, timeout)) from None
        if line is None:
            raise RuntimeError("%s ended (its stderr says why)" % self._what)
        return line


def child_env(**extra):
    # The executor asks no secret, so no session should offer one.
    env = {k: v for k, v in os.environ.items()
           if k not in ("CATALYST_REMOTE_TOKEN_FILE", "CATALYST_REMOTE_TOKEN")}
    env.update(extra)
    return env


class Executor:
    """An executor on 127.0.0.1, on CPU `cpu` (its connection processes
    are forked from it and inherit the CPU)."""

    def __init__(self, path, cpu):
        pin = (lambda: os.sched_setaffinity(0, {cpu})) if cpu is not None else None
        self.proc = subprocess.Popen([path, "--bind", "127.0.0.1:0"], stdout=subprocess.PIPE,
                                     text=True, env=child_env(), preexec_fn=pin)
        lines = Lines(self.proc.stdout, "the executor")
        self.address = None
        while self.address is None:
            line = lines.next()
            if line.startswith("Listening on "):
                self.address = line.split()[2]

    def stop(self):
        """SIGTERM, and SIGKILL when that did not end it in time."""
        for signal_it in (self.proc.terminate, self.proc.kill):
            signal_it()
            try:
                self.proc.wait(timeout=15)
                return
            except subprocess.TimeoutExpired:
                pass


class CapiLauncher:
    """catalyst-remote-capi-launch-bench, open on the executor, timing
    launches on demand."""

    def __init__(self, args, address):
        self.kernel = args.kernel
        self.proc = subprocess.Popen([args.capi_bench, address, args.kernel, ENTRY],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                     env=shared_memory_env())
        self._lines = Lines(self.proc.stdout, "catalyst-remote-capi-launch-bench")
        self.session = json.loads(self._lines.next())

    def launch_ns(self, size, count):
        """Each launch's time and the CPU time spent on all, as timed()."""
        self.proc.stdin.write("time %d %d\n" % (size, count))
        self.proc.stdin.flush()
        answer = json.loads(self._lines.next())
        if answer.get("bytes") != size or len(answer.get("launch_ns", [])) != count:
            raise RuntimeError("catalyst-remote-capi-launch-bench answered %r" % answer)
        return answer["launch_ns"], answer["cpu_ns"]

    def close(self):
        self.proc.stdin.write("quit\n")
        self.proc.stdin.close()
        self.proc.wait(timeout=DEADLINE_S)


def shared_memory_env(**extra):
    return child_env(CATALYST_REMOTE_TRANSPORT="local", CATALYST_REMOTE_STRATEGY="zerocopy",
                     **extra)


# --- Python's launches.


def pattern(np, size):
    """`size` bytes, all touched, none alike their neighbours; no other
    array of that size is made on the way (the memory probe counts them)."""
    x = np.empty(size, np.uint8)
    x[:256] = (np.arange(256) * 131 + 7)[: min(size, 256)] % 256
    done = min(size, 256)
    while done < size:
        step = min(done, size - done)
        x[done:done + step] = x[:step]
        done += step
    return x


def check_output(np, result, x, how):
    (y,) = result
    if y.shape != x.shape or not np.array_equal(y, x):
        raise RuntimeError("%s returned something other than its input" % how)


def open_session(catalyst_remote, address, kernel):
    s = catalyst_remote.Session(address, transport="local", strategy="zerocopy")
    s.send_binary(kernel)
    info = s.info()
    if info.get("transport") != "local" or info.get("strategy") != "zerocopy":
        raise RuntimeError("the Python session uses %s/%s, not local/zerocopy" % (
            info.get("transport"), info.get("strategy")))
    return s


def timed(launch, x, count):
    """Nanoseconds of each of `count` launches, and the CPU time this
    process spent on them all (every thread's). Each result is dropped (its
    buffer freed) before the clock is read, as the C side frees its."""
    clock = time.perf_counter_ns
    out = []
    cpu_start = time.process_time_ns()
    for _ in range(count):
        start = clock()
        launch(x)
        out.append(clock() - start)
    return out, time.process_time_ns() - cpu_start


# --- Launch times.


def measure_size(np, session, prepared, capi, size, samples, per_sample):
    """({way: [ns, ...]}, {way: CPU ns}) for `size`, the ways taking turns
    sample by sample."""
    x = pattern(np, size)
    kernel = capi.kernel

    def session_launch(a):
        return session.launch(ENTRY, kernel, a, outputs=OUTPUTS)

    python = {"session": session_launch, "prepared": prepared}
    for way, launch in python.items():
        check_output(np, launch(x), x, way)
    ways = {"capi": lambda n: capi.launch_ns(size, n)}
    ways.update({way: (lambda n, f=f: timed(f, x, n)) for way, f in python.items()})
    # One untimed round: the first launches of a size pay for what later
    # ones reuse (the executor's slab, the C program's check).
    for run in ways.values():
        run(per_sample)
    times = {way: [] for way in WAYS}
    cpu = {way: 0 for way in WAYS}
    for i in range(samples):
        for way in WAYS[i % 3:] + WAYS[: i % 3]:
            ns, cpu_ns = ways[way](per_sample)
            times[way] += ns
            cpu[way] += cpu_ns
    return times, cpu


def launch_row(size, times, cpu, samples, per_sample):
    us = {way: statistics.median(ns) / 1e3 for way, ns in times.items()}
    # The calling process's CPU time per launch, the library's spin while
    # it waits included (see the module's description).
    cpu_us = {way + "_cpu_us": ns / 1e3 / len(times[way]) for way, ns in cpu.items()}
    return make_row("python/launch/%s" % size_label(size), us["prepared"], samples * per_sample,
                    bytes=size, samples=samples, launches_per_sample=per_sample,
                    capi_us=us["capi"], session_us=us["session"], prepared_us=us["prepared"],
                    launch_us=us["prepared"], session_over_capi=us["session"] / us["capi"],
                    prepared_over_capi=us["prepared"] / us["capi"], **cpu_us)


# --- Memory.


def status_bytes(field):
    with open("/proc/self/status") as f:
        for line in f:
            name, _, value = line.partition(":")
            if name == field:
                return int(value.split()[0]) * 1024
    raise RuntimeError("no %s in /proc/self/status" % field)


def memory_child(address, kernel, size):
    """The Python side of the memory probe, in a fresh interpreter: what
    the C program's --peak does, through Session.launch."""
    import numpy as np
    import catalyst_remote

    s = open_session(catalyst_remote, address, kernel)
    small = pattern(np, 4096)
    check_output(np, s.launch(ENTRY, kernel, small, outputs=OUTPUTS), small, "a 4 KiB launch")
    rss_before = status_bytes("VmRSS")
    x = pattern(np, size)
    result = s.launch(ENTRY, kernel, x, outputs=OUTPUTS)
    # Read while the output is still held: it is one of the two buffers.
    hwm = status_bytes("VmHWM")
    check_output(np, result, x, "the big launch")
    s.close()
    print(json.dumps({"bytes": size, "rss_before_input": rss_before, "hwm_after_launch": hwm}))


def run_probe(cmd, env, what):
    done = subprocess.run(cmd, stdout=subprocess.PIPE, text=True, env=env, timeout=DEADLINE_S)
    if done.returncode != 0:
        raise RuntimeError("%s failed (exit %d; its stderr says why)" % (what, done.returncode))
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    # Beyond the resident set before the launch and the two buffers.
    return (figures["hwm_after_launch"] - figures["rss_before_input"] - 2 * figures["bytes"]) / MIB


def measure_memory(args, address):
    size = args.memory_bytes
    cmds = {
        "capi": ([args.capi_bench, "--peak", str(size), address, args.kernel, ENTRY],
                 "the C ABI's memory probe"),
        "python": ([sys.executable, os.path.abspath(__file__), "--memory-child", address,
                    args.kernel, str(size)], "the Python memory probe"),
    }
    paths = [os.path.abspath(args.package)] if args.package else []
    paths += [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    env = shared_memory_env(PYTHONPATH=os.pathsep.join(paths))
    over = {way: [] for way in cmds}
    for i in range(args.memory_runs):
        for way in (["capi", "python"] if i % 2 == 0 else ["python", "capi"]):
            cmd, what = cmds[way]
            over[way].append(run_probe(cmd, env, what))
    capi, python = (statistics.median(over[w]) for w in ("capi", "python"))
    return make_row("python/memory/%s" % size_label(size), 0.0, args.memory_runs, bytes=size,
                    runs=args.memory_runs, capi_over_buffers_MiB=capi,
                    python_over_buffers_MiB=python, python_minus_capi_MiB=python - capi,
                    python_over_capi=(python / capi) if capi > 0 else None)


# --- Results.


def make_row(name, real_us, iterations, **counters):
    row = {"name": name, "run_name": name, "run_type": "iteration", "repetitions": 1,
           "repetition_index": 0, "threads": 1, "iterations": iterations,
           "real_time": real_us, "cpu_time": real_us, "time_unit": "us"}
    row.update({k: v for k, v in counters.items() if v is not None})
    return row


def context(args, plan, address, capi_session, np):
    return {
        "date": datetime.datetime.now(datetime.timezone.utc).astimezone().isoformat(),
        "host_name": socket.gethostname(),
        "executable": os.path.abspath(__file__),
        "num_cpus": os.cpu_count(),
        "library_build_type": "release",
        "link": args.link,
        "preset": "quick" if args.quick else "default",
        "pinning": describe_plan(*plan),
        "executor": address,
        "kernel": "%s of %s" % (ENTRY, os.path.basename(args.kernel)),
        "capi_session": "%s/%s" % (capi_session.get("transport"), capi_session.get("strategy")),
        "python_session": "local/zerocopy",
        "python": sys.version.split()[0],
        "numpy": np.__version__,
    }


def run(args):
    load_before = list(os.getloadavg())
    plan = plan_cpus()
    mode, mine, peers = plan
    if mode != "none":
        # Before anything starts a thread or a child: they inherit it.
        os.sched_setaffinity(0, {mine})
    executor = Executor(args.executor, peers)
    try:
        import numpy as np
        import catalyst_remote

        capi = CapiLauncher(args, executor.address)
        session = open_session(catalyst_remote, executor.address, args.kernel)
        prepared = session.prepare(ENTRY, args.kernel, OUTPUTS)
        rows = []
        for size in args.sizes:
            small = size == args.sizes[0]
            samples = args.samples if small else args.big_samples
            per_sample = args.launches if small else 1
            times, cpu = measure_size(np, session, prepared, capi, size, samples, per_sample)
            rows.append(launch_row(size, times, cpu, samples, per_sample))
        capi.close()
        session.close()
        if args.memory_runs:
            rows.append(measure_memory(args, executor.address))
        ctx = context(args, plan, executor.address, capi.session, np)
        ctx["load_avg"] = load_before
    finally:
        executor.stop()
    ctx["load_avg_after"] = list(os.getloadavg())
    return {"context": ctx, "benchmarks": rows}


def main(argv):
    if argv[:1] == ["--memory-child"]:
        memory_child(argv[1], argv[2], int(argv[3]))
        return 0
    args = parse_args(argv)
    if args.package:
        sys.path.insert(0, os.path.abspath(args.package))
    results = run(args)
    text = json.dumps(results, indent=2) + "\n"
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
