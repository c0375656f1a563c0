#!/usr/bin/env python3
"""Drives catalyst-remote-executor the way Catalyst's Python launcher
(catalyst.executor.Executor, frontend/catalyst/executor/ in Catalyst's
source) drives its own catalyst-executor:

- it runs `EXECUTABLE --bind=127.0.0.1:PORT [--plugin=PATH ...]` with stdout
  and stderr merged into one line-buffered pipe, in a session of its own;
- the executor is ready when a line matches `Listening on \\S+:\\d+`;
- a line containing `Address already in use` is a port conflict: it stops
  that executor and tries another port (the pinned one first, then random
  ones from 20000-59999);
- it stops the executor with SIGTERM, and SIGKILLs it 10 s later.

On top of that, a host connects a real session through the C ABI
(libcatalyst_remote.so, by ctypes), launches kernels, and starts one that
would run for ten minutes; then SIGTERM must end the executor and every
connection process within those 10 s, and leave no asset directory behind.
A second executor, given every flag in the other spelling (`--flag VALUE`)
and two addresses, must announce both and stop on SIGHUP (how the launcher's
ssh session ends a remote executor) as cleanly.

usage: catalyst_launcher_test.py --executor PATH --library PATH
           --kernels DIR --plugin TEST_PLUGIN --plugin RT_PLUGIN
(the test plugins of tests/plugin: `tick` needs the first, and the second
logs each connection's runtime initialization)
"""

import argparse
import ctypes
import os
import random
import re
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

READY = re.compile(r"Listening on \S+:\d+")
PORT_CONFLICT = re.compile(r"Address already in use")
READY_TIMEOUT = 60.0  # the launcher's default
STOP_TIMEOUT = 10.0  # what the launcher waits before SIGKILL
LONG_KERNEL_MS = 600_000


class Failure(Exception):
    pass


def check(condition, message):
    if not condition:
        raise Failure(message)


def wait_until(predicate, timeout, what):
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise Failure(f"{what}: not within {timeout:.0f} s")
        time.sleep(0.02)


PR_SET_PDEATHSIG = 1


def die_with_parent():
    """In the child before exec: a test that crashes leaves no executor."""
    ctypes.CDLL(None).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


class Executor:
    """One executor process, its merged output read line by line."""

    started = []  # every one, so that a failed test leaves none running

    def __init__(self, argv, env):
        self.proc = subprocess.Popen(
            argv,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            bufsize=1,
            env=env,
            start_new_session=True,
            preexec_fn=die_with_parent,
        )
        self.lines = []
        self.lock = threading.Lock()
        self.ready = threading.Event()
        self.conflict = threading.Event()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()
        Executor.started.append(self)

    @staticmethod
    def kill_all():
        for executor in Executor.started:
            if executor.proc.poll() is None:
                os.killpg(executor.proc.pid, signal.SIGKILL)
                executor.proc.wait()

    def _read(self):
        for raw in self.proc.stdout:
            line = raw.rstrip("\n")
            print(f"[executor] {line}", file=sys.stderr, flush=True)
            with self.lock:
                self.lines.append(line)
            if PORT_CONFLICT.search(line):
                self.conflict.set()
            if READY.search(line):
                self.ready.set()

    def output(self):
        with self.lock:
            return "\n".join(self.lines)

    def wait_ready(self):
        """True once ready, False on a port conflict; raises on anything else."""
        deadline = time.monotonic() + READY_TIMEOUT
        while time.monotonic() < deadline:
            if self.ready.wait(0.25):
                return True
            if self.conflict.is_set():
                return False
            if self.proc.poll() is not None:
                self.reader.join(5)  # its last lines may still be in the pipe
                if self.conflict.is_set():
                    return False
                raise Failure(f"the executor exited ({self.proc.returncode}) before it was "
                              f"ready:\n{self.output()}")
        raise Failure(f"no readiness line within {READY_TIMEOUT:.0f} s:\n{self.output()}")

    def announced(self):
        with self.lock:
            return [m.group(0) for m in map(READY.search, self.lines) if m]

    def stop(self, sig=signal.SIGTERM):
        """Signals the executor; the seconds it took to exit, None if it had to be killed."""
        start = time.monotonic()
        self.proc.send_signal(sig)
        try:
            self.proc.wait(STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            return None
        self.reader.join(5)
        return time.monotonic() - start


def start_on_free_port(argv_for_port, env, pinned_port):
    """The launcher's port search: the pinned port, then random ones."""
    ports = [pinned_port] + [random.randint(20000, 59999) for _ in range(6)]
    conflicts = []
    for port in ports:
        executor = Executor(argv_for_port(port), env)
        if executor.wait_ready():
            return executor, port, conflicts
        conflicts.append((port, executor))
        try:  # its own exit status, before the launcher would stop it
            executor.proc.wait(STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            executor.stop()
    raise Failure(f"no free port among {ports}")


def alive(pid):
    """True while pid exists and is not a zombie."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            stat = f.read()
    except OSError:
        return False
    return stat[stat.rfind(")") + 2] != "Z"


def children_of(parent):
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2:].split()
        if int(fields[1]) == parent and fields[0] != "Z":
            pids.append(int(entry))
    return pids


def asset_root(tmpdir):
    """Where Catalyst's executor, and so this one, keeps connections' assets."""
    return os.path.join(tmpdir, "catalyst-assets")


def asset_dirs(tmpdir):
    """The connections' asset directories left in the root."""
    root = asset_root(tmpdir)
    return os.listdir(root) if os.path.isdir(root) else []


class Memref1(ctypes.Structure):
    """A rank-1 memref descriptor."""
    _fields_ = [("allocated", ctypes.c_void_p), ("aligned", ctypes.c_void_p),
                ("offset", ctypes.c_int64), ("size", ctypes.c_int64),
                ("stride", ctypes.c_int64)]


FAILURE_HANDLER = ctypes.CFUNCTYPE(None, ctypes.c_char_p)


class Api:
    """The library's __catalyst__remote__NAME functions as attributes NAME.

    (Python would mangle a name that starts with two underscores inside a
    class); `await`, a keyword, is await_."""

    def __init__(self, lib):
        self._lib = lib

    def __getattr__(self, name):
        function = getattr(self._lib, "__catalyst__remote__" + name.rstrip("_"))
        setattr(self, name, function)
        return function


class Host:
    """A session through the C ABI, as a Catalyst-compiled program opens one."""

    def __init__(self, library):
        self.api = Api(ctypes.CDLL(library))
        self.libc = ctypes.CDLL(None)
        self.failures = []
        # A failure returns to the caller instead of aborting the test.
        self.handler = FAILURE_HANDLER(lambda m: self.failures.append(m.decode()))
        self.api.set_failure_handler(self.handler)
        size_p = ctypes.POINTER(ctypes.c_size_t)
        void_pp = ctypes.POINTER(ctypes.c_void_p)
        memref_args = [ctypes.c_int64, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_size_t,
                       void_pp, size_p, size_p, ctypes.c_size_t, void_pp, size_p, size_p]
        self.api.open.argtypes = [ctypes.c_char_p]
        self.api.open.restype = ctypes.c_int64
        self.api.send_binary.argtypes = [ctypes.c_int64, ctypes.c_char_p,
                                                             ctypes.c_uint32]
        self.api.send_binary.restype = ctypes.c_int64
        self.api.launch.argtypes = memref_args
        self.api.launch.restype = None
        self.api.launch_async.argtypes = [ctypes.c_int64, ctypes.c_char_p,
                                                              ctypes.c_char_p]
        self.api.launch_async.restype = ctypes.c_int64
        self.api.launch_async_memrefs.argtypes = memref_args
        self.api.launch_async_memrefs.restype = ctypes.c_int64
        self.api.await_.argtypes = [ctypes.c_int64]
        self.api.close.argtypes = [ctypes.c_int64]
        self.api.close.restype = ctypes.c_int64
        self.libc.free.argtypes = [ctypes.c_void_p]
        self.session = 0
        self.kept = []  # what a queued launch reads until it is awaited

    def checked(self, what, result):
        check(not self.failures, f"{what} failed: {self.failures}")
        return result

    def open(self, address, heartbeats):
        # Read when the session opens: 0 asks the executor for no heartbeats.
        os.environ["CATALYST_REMOTE_LIVENESS_MS"] = "10000" if heartbeats else "0"
        self.session = self.checked("open", self.api.open(address.encode()))
        check(self.session > 0, f"open returned {self.session}")

    def send(self, path, fmt):
        rc = self.api.send_binary(self.session, path.encode(), fmt)
        self.checked(f"send_binary {path}", rc)
        check(rc == 0, f"send_binary {path} returned {rc}")

    def _lingering_args(self, ms):
        value = ctypes.c_int64(ms)
        inp = Memref1(ctypes.addressof(value), ctypes.addressof(value), 0, 1, 1)
        out = Memref1()
        ins = (ctypes.c_void_p * 1)(ctypes.addressof(inp))
        outs = (ctypes.c_void_p * 1)(ctypes.addressof(out))
        one = (ctypes.c_size_t * 1)(1)
        eight = (ctypes.c_size_t * 1)(8)
        self.kept.append((value, inp, ins, outs, one, eight))
        return out, (self.session, b"_catalyst_pyface_lingering", b"lingering.o", 1, ins, one,
                     eight, 1, outs, one, eight)

    def lingering(self, ms):
        """Runs lingering(ms) and returns its output."""
        out, args = self._lingering_args(ms)
        self.api.launch(*args)
        self.checked("launch lingering", None)
        check(out.size == 1 and out.aligned, f"lingering returned size {out.size}")
        result = ctypes.c_int64.from_address(out.aligned).value
        self.libc.free(out.allocated)
        return result

    def start_lingering(self, ms):
        _, args = self._lingering_args(ms)
        return self.checked("queue lingering",
                            self.api.launch_async_memrefs(*args))

    def tick(self):
        token = self.api.launch_async(self.session,
                                                           b"_catalyst_pyface_tick", b"tick.o")
        self.api.await_(token)
        self.checked("tick (needs the plugin)", None)


def conflicting_start(options, env):
    """A port already taken: the executor must say so and exit non-zero."""
    holder = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    holder.bind(("127.0.0.1", 0))
    holder.listen()
    taken = holder.getsockname()[1]
    plugins = [f"--plugin={p}" for p in options.plugin]
    try:
        executor, port, conflicts = start_on_free_port(
            lambda port: [options.executor, f"--bind=127.0.0.1:{port}"] + plugins, env, taken)
    finally:
        holder.close()
    check(conflicts and conflicts[0][0] == taken, f"port {taken}, held open, was not refused")
    refused = conflicts[0][1]
    check(refused.proc.returncode > 0,
          f"refused on port {taken}, the executor ended with {refused.proc.returncode}")
    check(not refused.ready.is_set(), f"refused executor announced itself:\n{refused.output()}")
    return executor, port


def only_connection(executor):
    wait_until(lambda: len(children_of(executor.proc.pid)) == 1, 10, "one connection process")
    return children_of(executor.proc.pid)[0]


def start_long_kernel(host, executor, tmpdir):
    """Starts a kernel that would run for ten minutes; returns its process
    and the launch's token once it runs."""
    connection = only_connection(executor)
    started = os.path.join(asset_root(tmpdir), str(connection), "started")
    if os.path.exists(started):
        os.remove(started)  # a short launch made it
    token = host.start_lingering(LONG_KERNEL_MS)
    wait_until(lambda: os.path.exists(started), 30, "the long kernel starting")
    return connection, token


def check_stops(executor, sig, connection, host, token, tmpdir):
    """sig ends the executor and its connection, the long kernel running,
    within the launcher's 10 s, and takes the connection's assets with it."""
    took = executor.stop(sig)
    check(took is not None, f"the executor outlived {sig.name} by {STOP_TIMEOUT:.0f} s and was "
          f"killed:\n{executor.output()}")
    wait_until(lambda: not alive(connection), STOP_TIMEOUT - took,
               f"connection process {connection} ending")
    check(not asset_dirs(tmpdir), f"assets left behind: {asset_dirs(tmpdir)}")
    check("the host closed" not in executor.output(),
          f"the executor blamed the host for its own stop:\n{executor.output()}")
    print(f"{sig.name}: stopped in {took:.2f} s, a {LONG_KERNEL_MS // 1000} s kernel running",
          file=sys.stderr)
    host.api.await_(token)
    check(host.failures, "the long launch reported no failure although its executor stopped")
    host.api.close(host.session)


def serve_and_terminate(options, env, tmpdir):
    """The launcher's start and stop, a host as Catalyst's own runtime is
    (it asks for no heartbeats, so a busy connection must be killed)."""
    executor, port = conflicting_start(options, env)
    check(executor.announced() == [f"Listening on 127.0.0.1:{port}"],
          f"announced {executor.announced()} for one --bind on port {port}")
    host = Host(options.library)
    host.open(f"127.0.0.1:{port}", heartbeats=False)
    for kernel in ("lingering", "tick"):
        host.send(os.path.join(options.kernels, f"{kernel}.o"), 0)
    asset = os.path.join(tmpdir, "weights.bin")
    with open(asset, "wb") as f:
        f.write(b"\x01" * 4096)
    host.send(asset, 1)
    check(host.lingering(3) == 3, "lingering(3) did not return 3")
    host.tick()
    connection = only_connection(executor)
    with open(env["CATALYST_TEST_RT_LOG"]) as f:
        check(f"initialize {connection}" in f.read().split("\n"),
              "the runtime plugin did not initialize the connection")
    check(os.path.exists(os.path.join(asset_root(tmpdir), str(connection), "weights.bin")),
          "the asset is not in the connection's directory")
    connection, token = start_long_kernel(host, executor, tmpdir)
    check_stops(executor, signal.SIGTERM, connection, host, token, tmpdir)


def spelled_apart_and_hung_up(options, env, tmpdir):
    """Every flag as `--flag VALUE`, two addresses; SIGHUP, the end of the
    ssh session a remote executor runs in, stops it (the host asks for
    heartbeats, so the connection's own heartbeat thread ends it)."""
    argv = [options.executor, "--bind", "127.0.0.1:0", "--bind", "127.0.0.1:0"]
    for plugin in options.plugin:
        argv += ["--plugin", plugin]
    executor = Executor(argv, env)
    check(executor.wait_ready(), f"refused:\n{executor.output()}")
    wait_until(lambda: len(executor.announced()) == 2, 10, "a readiness line per address")
    ports = {line.rsplit(":", 1)[1] for line in executor.announced()}
    check(len(ports) == 2, f"two addresses, announced {executor.announced()}")
    host = Host(options.library)
    host.open(f"127.0.0.1:{ports.pop()}", heartbeats=True)
    for kernel in ("lingering", "tick"):
        host.send(os.path.join(options.kernels, f"{kernel}.o"), 0)
    host.tick()
    connection, token = start_long_kernel(host, executor, tmpdir)
    check_stops(executor, signal.SIGHUP, connection, host, token, tmpdir)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--executor", required=True)
    parser.add_argument("--library", required=True)
    parser.add_argument("--kernels", required=True)
    parser.add_argument("--plugin", action="append", required=True)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="launcher-test-") as tmpdir:
        env = dict(os.environ)
        env["TMPDIR"] = tmpdir  # where the executor makes its asset root
        env["CATALYST_TEST_RT_LOG"] = os.path.join(tmpdir, "rt.log")
        open(env["CATALYST_TEST_RT_LOG"], "w").close()
        try:
            serve_and_terminate(options, env, tmpdir)
            spelled_apart_and_hung_up(options, env, tmpdir)
        except Failure as failure:
            print(f"FAILED: {failure}", file=sys.stderr)
            return 1
        finally:
            Executor.kill_all()
    print("passed", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
