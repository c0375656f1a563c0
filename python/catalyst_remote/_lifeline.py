"""Runs a cluster's launcher (mpirun, srun) for a Python interpreter, and
ends it once that interpreter is gone, however it ended.

    python3 _lifeline.py FD GRACE [--remove DIR] -- LAUNCHER ARGS...

The interpreter holds the write end of a pipe whose read end is FD here,
and never writes to it: the pipe reads end-of-file only once every
process that held the write end has ended, SIGKILL and the out-of-memory
killer included, which no handler in the interpreter would see. Then the
launcher gets SIGTERM, which it passes to every executor it started (each
withdraws its announcement and stops, its launches given --stop-grace);
whatever launcher is left GRACE seconds later gets SIGKILL, and its
executors, which watch their launcher, stop on their own. DIR, the
pool's announcement directory, is then removed.

SIGTERM, SIGINT and SIGHUP sent here go on to the launcher: the
interpreter's own stop is unchanged. This process exits as the launcher
did (a launcher killed by a signal: the same signal).

A script of its own rather than a module of the package: it needs only
the standard library, and runs without importing the native extension.
"""

import contextlib
import os
import select
import shutil
import signal
import subprocess
import sys
import time

_FORWARDED = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
# How often to look at the launcher where pidfds are missing.
_LOOK_EVERY = 0.2


def _parse(argv):
    try:
        fd, grace, rest = int(argv[1]), float(argv[2]), argv[3:]
        remove = None
        if rest[:1] == ["--remove"]:
            remove, rest = rest[1], rest[2:]
        if rest[:1] != ["--"] or len(rest) < 2:
            raise ValueError("no launcher after --")
        return fd, grace, remove, rest[1:]
    except (IndexError, ValueError) as e:
        sys.exit(f"_lifeline.py: usage: FD GRACE [--remove DIR] -- LAUNCHER ARGS... ({e})")


def _wait_for_either(fd, launcher):
    """Returns once the interpreter is gone (True) or the launcher ended
    (False)."""
    poller = select.poll()
    poller.register(fd, select.POLLIN)
    pidfd = None
    try:
        pidfd = os.pidfd_open(launcher.pid)
        poller.register(pidfd, select.POLLIN)
    except (AttributeError, OSError):  # before Python 3.9 or Linux 5.3
        pass
    try:
        while launcher.poll() is None:
            events = poller.poll(None if pidfd is not None else _LOOK_EVERY * 1000)
            if any(f == fd for f, _ in events):
                # Nothing is ever written: readable means end-of-file.
                return True
        return False
    finally:
        if pidfd is not None:
            os.close(pidfd)


def _end(launcher, grace):
    launcher.send_signal(signal.SIGTERM)
    deadline = time.monotonic() + grace
    while launcher.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    if launcher.poll() is None:
        launcher.kill()
        launcher.wait()


def _exit_as(status):
    if status < 0:
        signal.signal(-status, signal.SIG_DFL)
        os.kill(os.getpid(), -status)
    sys.exit(status)


def main(argv):
    fd, grace, remove, command = _parse(argv)
    try:
        launcher = subprocess.Popen(command, stdin=subprocess.DEVNULL)
    except OSError as e:
        sys.exit(f"could not start {command[0]}: {e.strerror or e}")
    for sig in _FORWARDED:
        signal.signal(sig, lambda number, _frame: launcher.send_signal(number))
    if _wait_for_either(fd, launcher):
        # Nobody may be left to read it: the interpreter read this output.
        with contextlib.suppress(OSError):
            print(f"catalyst-remote: the Python process that started {command[0]} has ended: "
                  "ending it", file=sys.stderr, flush=True)
        _end(launcher, grace)
        if remove is not None:
            shutil.rmtree(remove, ignore_errors=True)
    _exit_as(launcher.wait())


if __name__ == "__main__":
    main(sys.argv)
