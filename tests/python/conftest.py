"""What the Python package's tests share: real executors, the kernels
built for the other tests, and the plugin with wrapper functions.

ctest sets CATALYST_REMOTE_TEST_EXECUTOR, _KERNELS and _PLUGIN; a run
without them fails rather than testing something else.
"""

import os
import re
import subprocess
import threading
import time

import pytest


def _required(name):
    value = os.environ.get(name)
    if not value:
        pytest.fail(f"{name} is not set: run these tests through ctest")
    return value


@pytest.fixture(scope="session")
def executor_bin():
    return _required("CATALYST_REMOTE_TEST_EXECUTOR")


@pytest.fixture(scope="session")
def kernels():
    """The directory of the test kernels' objects (map.o, sleepy.o, ...)."""
    return _required("CATALYST_REMOTE_TEST_KERNELS")


@pytest.fixture(scope="session")
def plugin():
    return _required("CATALYST_REMOTE_TEST_PLUGIN")


class RunningExecutor:
    """An executor process on a port the kernel picked."""

    def __init__(self, executor_bin, *args, env=None, ready_timeout=30.0):
        self.proc = subprocess.Popen(
            [executor_bin, "--bind", "127.0.0.1:0", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, **(env or {})},
        )
        self.stderr = []
        found = threading.Event()
        self.address = None

        def read_stdout():
            for line in self.proc.stdout:
                m = re.match(r"Listening on (\S+:\d+)", line)
                if m and self.address is None:
                    self.address = m.group(1)
                    found.set()

        def read_stderr():
            for line in self.proc.stderr:
                self.stderr.append(line)

        threading.Thread(target=read_stdout, daemon=True).start()
        threading.Thread(target=read_stderr, daemon=True).start()
        deadline = time.monotonic() + ready_timeout
        while not found.wait(0.05):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(
                    f"executor did not start listening: {''.join(self.stderr)}"
                )

    def connection_pids(self):
        """The executor's connection processes (its children)."""
        path = f"/proc/{self.proc.pid}/task/{self.proc.pid}/children"
        with open(path) as f:
            return [int(p) for p in f.read().split()]

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


@pytest.fixture
def start_executor(executor_bin):
    """Starts executors with extra arguments; stops them all at the end."""
    started = []

    def start(*args, env=None):
        e = RunningExecutor(executor_bin, *args, env=env)
        started.append(e)
        return e

    yield start
    for e in started:
        e.stop()


@pytest.fixture
def executor(start_executor):
    return start_executor()


def wait_for(condition, timeout, what):
    """Polls condition() until it is true; fails naming `what` after timeout."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out after {timeout} s waiting for {what}")
        time.sleep(0.02)


class Gate:
    """A launch of member.o's whose_gate: it writes its executor's pid to
    a file, then runs until the test removes the file (a minute at most),
    and returns {tag, pid}, or {-1, pid} when the minute ran out. A test
    knows, without timing anything, that what it did while the gate stood
    did not wait for that launch."""

    ENTRY = "_catalyst_pyface_whose_gate"

    def __init__(self, directory, tag):
        import numpy as np

        self.path = os.path.join(str(directory), f"gate.{tag}")
        self.tag = tag
        self.args = (np.array([60000, tag], dtype=np.int64),
                     np.frombuffer(self.path.encode() + b"\0", dtype=np.int8))

    def running(self):
        try:
            with open(self.path) as f:
                return f.read().endswith("\n")
        except FileNotFoundError:
            return False

    def wait_running(self, timeout=30):
        wait_for(self.running, timeout, f"gate {self.tag}'s launch to run")

    def open(self):
        os.unlink(self.path)

    def check(self, out):
        assert out[0] == self.tag, f"gate {self.tag} ran out its minute: {out}"
