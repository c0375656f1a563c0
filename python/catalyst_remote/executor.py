"""An executor started on this machine, usable wherever Catalyst's
``catalyst.Executor`` is.

Catalyst's backline takes any object as a node's executor that has the
class attributes ``address`` and ``launch`` and reads ``triple``, ``host``
and ``resolve()``; code written for ``catalyst.Executor`` also uses
``stop()`` and ``with``. :class:`Executor` has all of them and starts
``catalyst-remote-executor`` instead of Catalyst's own::

    with Executor(plugins=["libdevice.so"]) as ex:
        print(ex.address)                      # "127.0.0.1:PORT"
        with ex.session() as s:
            s.send_binary("kernels.o")

    ex = Executor(port=7000)
    ex.resolve().address                       # "127.0.0.1:7000", not started yet
    ex.launch()                                # ... ex.stop() (or at exit)

    Executor("node7:7000").launch()            # attach: started by someone else

It starts one executor process bound to ``bind:port`` (port 0, chosen by
the system, unless pinned), waits for its ``Listening on HOST:PORT`` line,
and on stop() sends SIGTERM, waits, and SIGKILLs what is left; the
executor's connection processes end with it. An executor on another
machine is not started from here (Catalyst does that over ssh): start
``catalyst-remote-executor`` there and attach with ``address=``.

Thread-safety: launch() and stop() may be called from any thread; one lock
orders them.
"""

import logging
import os
import platform
import re
import shutil
import sys
import threading

from . import _process
from .errors import BadArgument, Error, Timeout

logger = logging.getLogger(__name__)
logger.addHandler(logging.NullHandler())

EXECUTOR_ENV = "CATALYST_REMOTE_EXECUTOR"
EXECUTOR_NAME = "catalyst-remote-executor"

# The line the executor prints for each address once it listens (the one
# Catalyst's launcher waits for).
_LISTENING = re.compile(r"Listening on (\S+:\d+)\s*$")

# Catalyst's Executor parameters that only a remote executor uses.
_REMOTE_ONLY = ("host", "user", "workspace", "deploy", "sudo", "sudo_password")

_ARCHITECTURES = {"x86_64": "x86_64", "amd64": "x86_64", "aarch64": "aarch64", "arm64": "aarch64"}


def machine_triple(system=None, machine=None):
    """The LLVM target triple of a machine by its ``uname -s`` and
    ``uname -m`` (this one's by default), named as Catalyst names it; None
    for one Catalyst does not compile for."""
    system = (system or platform.system()).strip().lower()
    arch = _ARCHITECTURES.get((machine or platform.machine()).strip().lower())
    if arch is None:
        return None
    if system == "linux":
        return f"{arch}-unknown-linux-gnu"
    if system == "darwin":
        return f"{'arm64' if arch == 'aarch64' else arch}-apple-darwin"
    return None


def default_executor_bin():
    """The executor this package runs when not told which: $CATALYST_REMOTE_EXECUTOR,
    else the one installed with the package (found relative to it, in the
    build tree as once installed), else catalyst-remote-executor on PATH."""
    named = os.environ.get(EXECUTOR_ENV)
    if named:
        return named
    try:
        from ._paths import EXECUTOR_FROM_PACKAGE
    except ImportError:  # a source tree: CMake generates _paths.py in the built package
        EXECUTOR_FROM_PACKAGE = None
    beside = None
    if EXECUTOR_FROM_PACKAGE:
        package = os.path.dirname(os.path.abspath(__file__))
        beside = os.path.normpath(os.path.join(package, EXECUTOR_FROM_PACKAGE))
        if os.access(beside, os.X_OK):
            return beside
    on_path = shutil.which(EXECUTOR_NAME)
    if on_path:
        return on_path
    raise Error(
        f"found no {EXECUTOR_NAME}: {EXECUTOR_ENV} is unset, "
        f"{beside or 'the package names none of its own'} is not there, and PATH has none; "
        f"pass executor_bin= or set {EXECUTOR_ENV}"
    )


def _is_loopback(address):
    if address.startswith("unix:"):
        return True
    host = address.rsplit(":", 1)[0].strip("[]")
    return host in ("localhost", "::1") or host.startswith("127.")


def _bind_host(bind):
    """`bind` as --bind takes it: an IPv6 literal in brackets."""
    if not isinstance(bind, str) or not bind:
        raise BadArgument(f"bind is a host name or address, not {bind!r}")
    if ":" in bind and not bind.startswith("["):
        return f"[{bind}]"
    return bind


def _dialable(address):
    """Where a host on this machine reaches an executor listening at
    `address`: a wildcard bind is reached on loopback."""
    host, _, port = address.rpartition(":")
    if host == "0.0.0.0":
        return f"127.0.0.1:{port}"
    if host == "[::]":
        return f"[::1]:{port}"
    return address


def _expanded(path):
    return os.path.expanduser(os.path.expandvars(os.fspath(path)))


def _refuse_remote(given):
    for name in _REMOTE_ONLY:
        if given[name]:
            raise BadArgument(
                f"Executor({name}=...) asks for an executor on another machine, which "
                "catalyst_remote.Executor does not start: start catalyst-remote-executor there "
                "(with --token-file beyond loopback) and attach with Executor(address='HOST:PORT')"
            )


def _pinned(port):
    if port is None or port == 0:
        return None
    if not isinstance(port, int) or isinstance(port, bool) or not 0 < port < 65536:
        raise BadArgument(f"port is a TCP port (1-65535), or None to let the system choose, "
                          f"not {port!r}")
    return port


class _ListeningLine:
    """Looks for the executor's first "Listening on HOST:PORT" in its output
    (on the reader thread), copying every line to stderr when asked."""

    def __init__(self, name, echo):
        self.address = None  # set once, by the reader thread
        self._name = name
        self._echo = echo

    def see(self, line):
        if self._echo:
            print(f"[{self._name}] {line}", file=sys.stderr, flush=True)
        match = _LISTENING.match(line)
        if match and self.address is None:
            self.address = match.group(1)

    def heard(self):
        return self.address is not None


class Executor:
    """A catalyst-remote-executor on this machine, served at :attr:`address`.

    Construction starts nothing; launch() (or ``with``) starts it, stop()
    ends it; both are idempotent, and what is still running at exit is
    stopped then. Parameters, as Catalyst's where they apply here:

    address: attach to an executor started elsewhere: launch() only makes
        this address the executor's (the options below are not used).
    port: the port to listen on (default: one the system picks); pinned,
        resolve() commits to it before launch, and a port in use is an
        error rather than a reason to pick another.
    plugins: shared libraries the executor loads (--plugin, in order).
    executor_bin: the executor to run (default: default_executor_bin()).
    ready_timeout: seconds to wait for it to listen.
    name: what log lines and errors call it.
    env: variables added to this process's environment for it ($VAR in a
        value expands, as Catalyst's does).
    verbose: 0 quiet, 1 log starts and stops (logger catalyst_remote.executor),
        2 also copy the executor's output to stderr as "[name] line".
    triple: the LLVM triple compiled code is for (default: this machine's).
    token_file: the secret hosts must prove (--token-file); session() uses it.
    args: more executor arguments (e.g. ["--workers", "8"]).
    bind: the address to listen on (default 127.0.0.1; "0.0.0.0" for other
        machines, with token_file).

    Catalyst's parameters for an executor on another machine (host, user,
    workspace, deploy, sudo, sudo_password) raise BadArgument.
    """

    STOP_TIMEOUT = 10.0
    """Seconds between SIGTERM and SIGKILL: the executor's own --stop-grace
    (5 s by default) for running launches, and time to spare."""

    def __init__(
        self,
        address=None,
        *,
        port=None,
        plugins=None,
        executor_bin=None,
        ready_timeout=60.0,
        name="executor",
        env=None,
        verbose=1,
        triple=None,
        token_file=None,
        args=(),
        bind="127.0.0.1",
        host=None,
        user="",
        workspace=None,
        deploy=None,
        sudo=False,
        sudo_password=None,
    ):
        _refuse_remote(dict(host=host, user=user, workspace=workspace, deploy=deploy, sudo=sudo,
                            sudo_password=sudo_password))
        if address is not None and (not isinstance(address, str) or not address):
            raise BadArgument(f"address is 'HOST:PORT' or 'unix:PATH', not {address!r}")
        self.host = None  # always this machine, as far as Catalyst's backline asks
        self.name = name
        self._attached = address is not None
        self._address = address
        self._port = _pinned(port)
        self._bind = _bind_host(bind)
        self._plugins = [_expanded(p) for p in plugins or ()]
        self._executor_bin = executor_bin
        self._ready_timeout = ready_timeout
        self._env = dict(env or {})
        self._verbose = verbose
        self._triple = triple
        self._token_file = None if token_file is None else os.fspath(token_file)
        self._args = [str(a) for a in args]
        self._child = None  # guarded by _lock, as are the flags below
        self._launched = False
        self._committed = False
        self._lock = threading.Lock()

    @property
    def address(self):
        """Where hosts reach the executor ("HOST:PORT"). RuntimeError until
        launch(), or resolve() committed to it."""
        if not (self._launched or self._committed):
            raise RuntimeError(
                f"Executor {self.name!r} is not launched: call .launch() or use `with Executor()`"
            )
        return self._address

    @property
    def triple(self):
        """The LLVM target triple of the executor's machine: triple= when
        given, else this machine's; None for an attached executor beyond
        loopback (its machine is unknown here)."""
        if self._triple is not None:
            return self._triple
        if self._attached and not _is_loopback(self._address):
            return None
        return machine_triple()

    @property
    def pid(self):
        """The executor's process id while this started one, else None."""
        child = self._child
        return None if child is None else child.pid

    @property
    def token_file(self):
        return self._token_file

    def resolve(self):
        """Commits to the address before launching, as Catalyst's backline
        asks: self when the address is known (attached, or port= pinned),
        None when only launching can tell it (a port the system picks)."""
        with self._lock:
            if self._launched or self._committed or self._attached:
                self._committed = True
                return self
            if self._port is None:
                return None
            self._address = _dialable(f"{self._bind}:{self._port}")
            self._committed = True
            return self

    def launch(self):
        """Starts the executor and waits until it listens; returns self.
        Launching a launched executor does nothing."""
        with self._lock:
            if self._launched:
                return self
            if not self._attached:
                self._start()
                _process.at_exit(self.stop)
            self._launched = True
        return self

    def stop(self):
        """Ends the executor this started and its connection processes,
        and returns once they are all gone: SIGTERM, then SIGKILL to what is
        left after STOP_TIMEOUT s; what survives even that is named in a
        RuntimeWarning. An attached executor is left running. Stopping twice
        is harmless."""
        with self._lock:
            self._launched = False
            child, self._child = self._child, None
            if child is not None:
                child.stop(self.STOP_TIMEOUT)
                self._note(f"stopped (pid {child.pid}, status {child.exit_status()})")
        _process.forget_at_exit(self.stop)

    def session(self, **options):
        """A Session to this executor, with its token_file unless told
        otherwise (options are Session's)."""
        from .session import Session

        if self._token_file is not None:
            options.setdefault("token_file", self._token_file)
        return Session(self.address, **options)

    def __enter__(self):
        return self.launch()

    def __exit__(self, *exc):
        self.stop()

    def __repr__(self):
        mode = "attached" if self._attached else "local"
        return (f"Executor(name={self.name!r}, mode={mode}, launched={self._launched}, "
                f"address={self._address!r})")

    def _argv(self, port):
        # --with-parent: an interpreter killed with SIGKILL cannot stop it.
        argv = [_expanded(self._executor_bin or default_executor_bin()),
                "--bind", f"{self._bind}:{port}", "--with-parent"]
        for plugin in self._plugins:
            argv += ["--plugin", plugin]
        if self._token_file is not None:
            argv += ["--token-file", self._token_file]
        return argv + self._args

    def _environment(self):
        env = dict(os.environ)
        env.update({k: os.path.expandvars(str(v)) for k, v in self._env.items()})
        return env

    def _start(self):
        argv = self._argv(self._port or 0)
        listening = _ListeningLine(self.name, echo=self._verbose >= 2)
        self._note(f"starting {' '.join(argv)}")
        child = _process.Child(argv, env=self._environment(), what=f"executor {self.name!r}",
                               on_line=listening.see)
        try:
            ready = child.wait_for(listening.heard, self._ready_timeout)
        except BaseException:  # Ctrl-C while waiting: nobody else would stop it
            child.stop(self.STOP_TIMEOUT)
            raise
        if not ready:
            exited = child.exit_status() is not None
            child.stop(self.STOP_TIMEOUT)
            raise self._start_failure(argv, exited, child)
        self._child = child
        if not self._committed:
            self._address = _dialable(listening.address)
        self._note(f"listening on {listening.address} (pid {child.pid})")

    def _start_failure(self, argv, exited, child):
        said = child.output() or "(nothing)"
        if exited and self._port is not None and "Address already in use" in said:
            return Error(
                f"executor {self.name!r}: port {self._port} on {self._bind} is already in use "
                f"(Executor port={self._port}): end what holds it, or leave port= unset to let "
                f"the system pick a free one"
            )
        if exited:
            return Error(
                f"executor {self.name!r} ({argv[0]}) exited with status {child.exit_status()} "
                f"before listening; it said:\n{said}"
            )
        return Timeout(
            f"executor {self.name!r} ({argv[0]}) did not say 'Listening on HOST:PORT' within "
            f"ready_timeout={self._ready_timeout} s (stopped it); it said:\n{said}"
        )

    def _note(self, message):
        if self._verbose >= 1:
            logger.info("%s: %s", self.name, message)
