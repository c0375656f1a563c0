"""Pools of executors that a cluster's launcher starts, from Python.

    with mpirun_pool(4) as pool:                  # Open MPI, four executors
        pool.send_binary("kernels.o")
        results = pool.map(entry, "kernels.o", inputs, outputs=[("float64", 1)])

    with srun_pool(16, token_file="~/.catalyst-remote.token",
                   announce_dir="~/pools") as pool:   # inside a Slurm allocation
        ...

Each helper starts N executors with the launcher, every one told to
announce itself in a new directory (--announce DIR), waits for all N
announcements, and returns a :class:`LaunchedPool`: a Pool of
"pool:DIR" that needs all N members, whose close() (or the end of
``with``) closes it, then sends the launcher SIGTERM, which passes it to
every executor (each withdraws its announcement, lets running launches
finish, and ends), waits a bounded time, and removes the directory.
Whatever is still open at exit is closed then. An interpreter killed
with SIGKILL (or by the out-of-memory killer) closes nothing: the
launcher then runs under a lifeline (_lifeline.py) that sends it SIGTERM
the moment the interpreter is gone, which ends its executors within
their --stop-grace (5 s by default; STOP_TIMEOUT at most), and removes
the directory.

Members on other machines need two things: a directory every node sees
(announce_dir= on a shared file system; the default, a new temporary
directory, is seen by this machine only) and a secret, since executors
listen beyond loopback only with one: with token_file= they bind 0.0.0.0
(and announce the node's name) and the pool proves the same secret;
without it they bind 127.0.0.1, for members on this machine.

Thread-safety: a LaunchedPool is used as a Pool is; close() is idempotent.
"""

import os
import shutil
import tempfile

from . import _process
from .errors import BadArgument, Error, Timeout
from .executor import _bind_host, _expanded, default_executor_bin
from .session import Pool

TOKEN_ENV = "CATALYST_REMOTE_TOKEN_FILE"

STOP_TIMEOUT = 15.0
"""Seconds a launcher has, after SIGTERM, to end its executors (each
takes up to its --stop-grace, 5 s by default) before it and what it
started on this machine are killed."""


class LaunchedPool(Pool):
    """A Pool whose members a launcher started, and ends when it closes."""

    def __init__(self, launcher, announce_dir, members, **options):
        self._launcher = launcher
        self._announce_dir = announce_dir
        super().__init__(f"pool:{announce_dir}", min_members=members, **options)
        _process.at_exit(self.close)

    @property
    def announce_dir(self):
        """The directory the members announce themselves in (removed on close)."""
        return self._announce_dir

    @property
    def launcher_pid(self):
        """The pid of the process that runs the launcher for this
        interpreter and ends it should the interpreter be killed
        (catalyst_remote/_lifeline.py); its process group is the
        launcher's."""
        return self._launcher.pid

    def close(self):
        """Closes the pool, then ends the launcher and its executors and
        removes the announcement directory. Closing twice is harmless."""
        try:
            super().close()
        finally:
            _end(self._launcher, self._announce_dir)
            _process.forget_at_exit(self.close)


def mpirun_pool(n, *, mpirun="mpirun", extra_args=(), executor_args=(), executor_bin=None,
                token_file=None, bind=None, announce_dir=None, ready_timeout=60.0,
                **pool_options):
    """A pool of `n` executors started by Open MPI's mpirun:
    ``mpirun --oversubscribe -n N [--allow-run-as-root] [-x CATALYST_REMOTE_TOKEN_FILE]
    EXTRA_ARGS EXECUTOR --bind HOST:0 --announce DIR EXECUTOR_ARGS``.

    extra_args go to mpirun (e.g. ["--hostfile", "hosts"]), executor_args to
    each executor. --allow-run-as-root is added as root (Open MPI refuses
    root otherwise); the token reaches the executors through -x, since
    mpirun passes on only the variables it is told to. Open MPI ends the
    whole job when one rank dies: a lost member ends every member.
    pool_options are Pool's (retry, timeouts, strategy, ...).
    """
    _check_count(n)
    argv = [_find_launcher(mpirun, "mpirun", "openmpi-bin"), "--oversubscribe", "-n", str(n)]
    if os.geteuid() == 0:
        argv.append("--allow-run-as-root")
    if token_file is not None:
        argv += ["-x", TOKEN_ENV]
    return _start(argv + list(extra_args), n, "mpirun", executor_bin, executor_args, token_file,
                  bind, announce_dir, ready_timeout, pool_options)


def srun_pool(n, *, srun="srun", extra_args=(), executor_args=(), executor_bin=None,
              token_file=None, bind=None, announce_dir=None, ready_timeout=60.0,
              **pool_options):
    """A pool of `n` executors started as one Slurm job step, from inside an
    allocation (salloc, sbatch): ``srun -n N --kill-on-bad-exit=0 EXTRA_ARGS
    EXECUTOR --bind HOST:0 --announce DIR EXECUTOR_ARGS``.

    --kill-on-bad-exit=0 keeps the others serving when one executor dies
    (the pool drops that member). srun passes the environment on, the
    token's file included. extra_args go to srun (e.g. ["--overlap"] when
    the allocation's tasks are taken, ["-N", "4"]), executor_args to each
    executor; announce_dir must be on a file system the nodes share.
    pool_options are Pool's.
    """
    _check_count(n)
    argv = _srun_argv(_find_launcher(srun, "srun", "slurm-client"), n, extra_args)
    return _start(argv, n, "srun", executor_bin, executor_args, token_file, bind, announce_dir,
                  ready_timeout, pool_options)


def _srun_argv(srun, n, extra_args):
    return [srun, "-n", str(n), "--kill-on-bad-exit=0", *extra_args]


def _check_count(n):
    if not isinstance(n, int) or isinstance(n, bool) or n < 1:
        raise BadArgument(f"a pool needs at least one executor: n is a positive int, not {n!r}")


def _find_launcher(command, parameter, package):
    found = shutil.which(_expanded(command))
    if found is None:
        raise Error(
            f"{parameter}={command!r} is not a program on PATH: install it (Debian package "
            f"{package}) or name it with {parameter}="
        )
    return found


def _executor_argv(executor_bin, bind, announce_dir, executor_args):
    return [_expanded(executor_bin or default_executor_bin()), "--bind", f"{bind}:0",
            "--announce", announce_dir, *map(str, executor_args)]


def _start(launcher_argv, n, what, executor_bin, executor_args, token_file, bind, announce_dir,
           ready_timeout, pool_options):
    """Starts the launcher, waits for `n` announcements, opens the pool;
    on any failure ends the launcher and removes the directory."""
    env = dict(os.environ)
    if token_file is not None:
        token_file = os.path.abspath(_expanded(token_file))
        env[TOKEN_ENV] = token_file
    bind = _bind_host(bind or ("0.0.0.0" if token_file else "127.0.0.1"))
    parent = None if announce_dir is None else _expanded(announce_dir)
    directory = tempfile.mkdtemp(prefix="catalyst-remote-pool-", dir=parent)
    launcher = None
    try:
        argv = launcher_argv + _executor_argv(executor_bin, bind, directory, executor_args)
        launcher = _process.Child(argv, env=env, what=what,
                                  lifeline=_process.Lifeline(STOP_TIMEOUT, directory))
        _await_announcements(launcher, what, directory, n, ready_timeout)
        return LaunchedPool(launcher, directory, n, token_file=token_file, **pool_options)
    except BaseException:
        _end(launcher, directory)
        raise


def _announced(directory):
    # Executors write ".NAME.addr.PID" and rename it to "NAME.addr" whole.
    return sum(1 for f in os.listdir(directory) if f.endswith(".addr") and not f.startswith("."))


def _await_announcements(launcher, what, directory, n, ready_timeout):
    if launcher.wait_for(lambda: _announced(directory) >= n, ready_timeout, poll=0.05):
        return
    announced = _announced(directory)
    status = launcher.exit_status()
    launcher.stop(STOP_TIMEOUT)
    said = launcher.output() or "(nothing)"
    if status is not None:
        raise Error(f"{what} exited with status {status} when {announced} of the {n} executors "
                    f"had announced themselves; it said:\n{said}")
    raise Timeout(f"{announced} of the {n} executors announced themselves in {directory} within "
                  f"ready_timeout={ready_timeout} s (ended {what}); it said:\n{said}")


def _end(launcher, directory):
    if launcher is not None:
        launcher.stop(STOP_TIMEOUT)
    # Announcements of executors killed before they could withdraw go too.
    shutil.rmtree(directory, ignore_errors=True)
