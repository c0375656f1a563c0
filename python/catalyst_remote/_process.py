"""A program this package starts and owns: an executor, or a cluster's
launcher (mpirun, srun) starting many.

Such a program writes for as long as it runs (an executor logs every
session), so its output is read as it comes, or a full pipe would stop
it; its first and last lines are kept, since they say why it failed to
start. It runs in a session of its own, so that Ctrl-C at the terminal
reaches this process, which stops it in order, rather than killing it
mid-way; and its stop is bounded: SIGTERM, a wait, then SIGKILL to its
whole process group, so that nothing it started outlives it on this
machine.

    child = Child(argv, env=env, what="the executor", on_line=look_for_ready)
    ...
    child.stop(timeout=10.0)       # idempotent, from any thread
    child.output()                 # why it ended, in its own words

Whatever is still running when the interpreter exits is stopped then:
owners register their stop with at_exit() and take it back with
forget_at_exit() once stopped. An interpreter killed with SIGKILL runs
no such handler: a program given a Lifeline runs under _lifeline.py,
which ends it (SIGTERM, then SIGKILL after the lifeline's grace) once
this interpreter is gone, however it ended.

Thread-safety: one reader thread owns the pipe and keeps lines under
_lock; on_line runs on that thread. stop() may be called from several
threads at once: _stop_lock orders them.
"""

import atexit
import collections
import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
import warnings

from .errors import Error

# How long a process killed with SIGKILL may take to be reaped, and how
# long its output may take to drain once it is gone.
_KILL_WAIT = 5.0
_DRAIN_WAIT = 2.0


_LIFELINE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_lifeline.py")


class Lifeline(collections.namedtuple("Lifeline", ["grace", "remove"], defaults=[None])):
    """The program ends once this interpreter is gone: SIGTERM, then
    SIGKILL `grace` seconds later; then the directory `remove` (if any)
    is removed."""


class Child:
    """A started program whose merged stdout and stderr are read as they
    come; its first `head_lines` lines (where a program says what it
    refused, before its usage) and last `tail_lines` are kept. With a
    `lifeline`, pid is that of the lifeline process that runs it."""

    def __init__(self, argv, *, env=None, what, on_line=None, head_lines=10, tail_lines=30,
                 lifeline=None):
        self._what = what
        self._on_line = on_line
        self._head_lines = head_lines
        self._head = []
        self._tail = collections.deque(maxlen=tail_lines)
        self._dropped = 0
        self._lock = threading.Lock()
        self._stop_lock = threading.Lock()
        # The write end, never written to, lives as long as this object
        # or this interpreter; non-inheritable, so that no other program
        # started here keeps the lifeline's pipe open.
        self._lifeline_end = None
        pass_fds = ()
        if lifeline is not None:
            read_end, self._lifeline_end = os.pipe()
            argv = [sys.executable, _LIFELINE, str(read_end), str(lifeline.grace),
                    *(["--remove", lifeline.remove] if lifeline.remove else []), "--", *argv]
            pass_fds = (read_end,)
        try:
            self._proc = subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
                errors="replace",
                bufsize=1,
                env=env,
                start_new_session=True,
                pass_fds=pass_fds,
            )
        except OSError as e:
            self._close_lifeline()
            raise Error(f"could not start {what} ({argv[0]}): {e.strerror or e}") from e
        finally:
            for fd in pass_fds:
                os.close(fd)
        self._reader = threading.Thread(
            target=self._read, name=f"catalyst-remote {what}", daemon=True
        )
        self._reader.start()

    @property
    def pid(self):
        return self._proc.pid

    def exit_status(self):
        """None while it runs, else its exit status (negative: the signal)."""
        return self._proc.poll()

    def wait_for(self, condition, timeout, poll=0.02):
        """Polls condition() until it holds (True), the program ends, or
        `timeout` seconds pass (False; exit_status() tells which)."""
        deadline = time.monotonic() + timeout
        while not condition():
            if self._proc.poll() is not None or time.monotonic() >= deadline:
                return condition()
            time.sleep(poll)
        return True

    def output(self):
        """What it wrote, once whatever it wrote before ending was read
        (waited for briefly), as one string: its first and last lines."""
        if self._proc.poll() is not None:
            self._reader.join(_DRAIN_WAIT)
        with self._lock:
            skipped = [f"[... {self._dropped} lines ...]"] if self._dropped else []
            return "\n".join([*self._head, *skipped, *self._tail])

    def stop(self, timeout):
        """SIGTERM; returns once it and every process of its group (what it
        started) are gone. Whatever is left `timeout` seconds after the
        SIGTERM is killed with SIGKILL; what survives that too is named in
        a warning (RuntimeWarning) rather than passed over. Idempotent."""
        with self._stop_lock:
            deadline = time.monotonic() + timeout
            if self._proc.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    self._proc.terminate()
                try:
                    self._proc.wait(timeout)
                except subprocess.TimeoutExpired:
                    pass
            # Its own children may outlive it (ended by their own means, or
            # not at all): they get the rest of the timeout, then SIGKILL.
            if not _wait_until(lambda: self._proc.poll() is not None and not self.group(),
                               deadline):
                self._kill_group()
            self._reader.join(_DRAIN_WAIT)
            self._close_lifeline()

    def _close_lifeline(self):
        if self._lifeline_end is not None:
            os.close(self._lifeline_end)
            self._lifeline_end = None

    def group(self):
        """The pids of the live processes in its process group (it, and
        what it started), zombies aside."""
        return _group_members(self._proc.pid)

    def _kill_group(self):
        # While it is unreaped its pid (its group's id, from
        # start_new_session) cannot be reused; once reaped, the group lives
        # on only while a member does, and a new process cannot take its id
        # before the group is empty.
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self._proc.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self._proc.wait(_KILL_WAIT)
        gone = lambda: self._proc.poll() is not None and not self.group()
        if not _wait_until(gone, time.monotonic() + _KILL_WAIT):
            left = sorted(set(self.group()) | ({self._proc.pid} if self._proc.poll() is None
                                                else set()))
            warnings.warn(
                f"{self._what}: processes {', '.join(map(str, left))} (its group "
                f"{self._proc.pid}) survived SIGKILL for {_KILL_WAIT} s; giving up on them",
                RuntimeWarning, stacklevel=3)

    def _keep(self, line):
        if len(self._head) < self._head_lines:
            self._head.append(line)
            return
        if len(self._tail) == self._tail.maxlen:
            self._dropped += 1
        self._tail.append(line)

    def _read(self):
        for line in self._proc.stdout:
            line = line.rstrip("\n")
            with self._lock:
                self._keep(line)
            if self._on_line is not None:
                self._on_line(line)
        self._proc.stdout.close()


def _wait_until(condition, deadline, poll=0.01):
    """Polls condition() until it holds (True) or the deadline passes."""
    while not condition():
        if time.monotonic() >= deadline:
            return condition()
        time.sleep(poll)
    return True


def _group_members(pgid):
    """The live (not zombie) processes whose process group is pgid, read
    from /proc."""
    members = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as f:
                stat = f.read()
        except OSError:  # ended while looked at
            continue
        # "pid (comm) state ppid pgrp ...": comm may hold spaces and ")".
        fields = stat[stat.rindex(b")") + 2:].split()
        if len(fields) > 2 and fields[0] != b"Z" and int(fields[2]) == pgid:
            members.append(int(entry.name))
    return members


_registered = {}
_registered_lock = threading.Lock()


def at_exit(stop):
    """Calls stop() when the interpreter exits, unless forgotten before."""
    with _registered_lock:
        _registered[stop] = None


def forget_at_exit(stop):
    with _registered_lock:
        _registered.pop(stop, None)


@atexit.register
def _stop_everything():
    with _registered_lock:
        stops = list(_registered)
        _registered.clear()
    for stop in reversed(stops):
        # At exit nobody is left to tell: each stop is best effort, and
        # one failing must not keep the others from running.
        with contextlib.suppress(Exception):
            stop()
