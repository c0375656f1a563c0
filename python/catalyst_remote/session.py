"""Sessions and pools: launches on NumPy arrays.

A :class:`Session` talks to one executor, a :class:`Pool` to many behind
one ``pool:`` address; both launch the same way::

    with Session("127.0.0.1:7000") as s:
        s.send_binary("kernels.o")
        (out,) = s.launch("_catalyst_pyface_scale", "kernels.o", x,
                          outputs=[("float64", 1)])

Inputs are any NumPy arrays (every dtype without Python objects, any
strides, negative ones too, zero-size, rank 0), read in place without a
staging copy. Each output is named by its dtype and rank; it comes back as
an array that owns the buffer the library filled, freed once, by NumPy,
when the array dies.

Every call releases the GIL while it waits, so launches on different
sessions, or on one pool's members, overlap from threads. Ctrl-C during a
call on the main thread raises KeyboardInterrupt within a moment and
leaves the session closed: the executor's connection process ends with
the connection, and a later call raises SessionClosed. (signal.signal()
for SIGINT puts Python's handler in front of the package's; the package
puts its own back within 50 ms of the next call's start, and a Ctrl-C
before that raises KeyboardInterrupt once that call ends.)
"""

import concurrent.futures
import contextlib
import json
import os
import threading

import numpy as np

from . import _native, _progress
from .errors import BadArgument
from .resident import RemoteArray

_native.set_resident_type(RemoteArray)

_FORMATS = {"object": 0, "asset": 1}


def _option_strings(options):
    """The library's "name=value" options, for those given (not None)."""
    out = []
    for name, value in options.items():
        if value is None:
            continue
        if isinstance(value, bool):
            value = int(value)
        elif isinstance(value, os.PathLike):
            value = os.fspath(value)
        out.append(f"{name}={value}")
    return out


def _keep_flags(keep, count):
    """launch()'s keep as a flag per output: False (none), True (all) or
    the indices of those kept."""
    if keep is False or keep is None:
        return [False] * count
    if keep is True:
        return [True] * count
    try:
        indices = [int(i) for i in keep]
    except TypeError:
        raise TypeError(f"keep is True, False or a list of output indices, not {keep!r}") from None
    bad = [i for i in indices if not 0 <= i < count]
    if bad:
        raise BadArgument(f"keep names outputs {bad}; the launch has {count}")
    return [i in indices for i in range(count)]


class _Target:
    """What Session and Pool share: one native target and its launches."""

    def __init__(self, address, options, async_workers):
        if not isinstance(address, str) or not address:
            raise BadArgument(f"an executor address is a non-empty string, not {address!r}")
        self._address = address
        self._native = _native.Target.open(address, _option_strings(options))
        self._async_workers = async_workers
        self._async = None
        self._async_lock = threading.Lock()
        # launch()'s prepared launches by (entry, obj, outputs), so that
        # launching the same kernel again costs a few comparisons in C++,
        # not a parse (python/native/LaunchCache.h).
        self._launches = self._native.launch_cache()

    @property
    def address(self):
        """The address this was opened with."""
        return self._address

    @property
    def closed(self):
        """Whether it was closed (by close(), or by Ctrl-C under a call)."""
        return self._native.closed

    def send_binary(self, path, kind="object"):
        """Ships a relocatable object ("object": linked, its symbols
        launchable) or an asset file ("asset": stored under its file name
        for kernels to open) to the executor; a pool sends it to every
        member, and to members that join later."""
        if kind not in _FORMATS:
            raise BadArgument(f"kind is 'object' or 'asset', not {kind!r}")
        self._native.send_binary(os.fspath(path), _FORMATS[kind])

    def prepare(self, entry, obj, outputs=(), keep=False):
        """A launch of `entry` in `obj` with these output kinds, parsed once:
        call it with the inputs, as many times as you like. The fastest way
        to launch the same kernel again and again. keep as launch()'s."""
        outputs = list(outputs)
        flags = _keep_flags(keep, len(outputs))
        call = self._native.prepare(entry, obj or "", outputs, flags)
        if not any(flags):
            return call
        return lambda *inputs: self._kept(call(*inputs), outputs, flags)

    def launch(self, entry, obj, *inputs, outputs=(), keep=False, progress=False):
        """Runs `entry` (Catalyst's ``void entry(void *rv, void *av)``) from
        the shipped object `obj` on `inputs` (arrays, or RemoteArrays the
        executor keeps); returns a tuple of arrays, one per (dtype, rank) in
        `outputs`. keep=True, or a list of output indices, leaves those
        outputs in the executor: they come back as RemoteArrays. progress=True
        shows the time it has taken so far while it runs."""
        if keep is not False:
            call = self.prepare(entry, obj, outputs, keep)
        else:
            call = self._launches(entry, obj, outputs)
        if not progress:
            return call(*inputs)
        with _progress.elapsed(f"{entry} on {self._address}"):
            return call(*inputs)

    def launch_async(self, entry, obj, *inputs, outputs=(), keep=False):
        """launch() in the background: returns a concurrent.futures.Future
        of its result. The inputs must not change until it is done."""
        if keep is not False:
            call = self.prepare(entry, obj, outputs, keep)
        else:
            call = self._launches(entry, obj, outputs)
        return self._executor().submit(call, *inputs)

    def upload(self, array):
        """Copies `array` into the executor, which keeps it for this session,
        and returns it as a RemoteArray: launches given it read it there,
        none of its bytes crossing again (resident.py). On a pool, every
        member gets a copy, members joining later included."""
        if isinstance(array, RemoteArray):
            raise BadArgument("the array to upload is a RemoteArray already")
        array = np.asarray(array)
        handle = self._native.upload(array)
        return RemoteArray(self, handle, array.shape, array.dtype)

    def _kept(self, results, outputs, flags):
        """results, its kept outputs ((handle, shape) pairs) as RemoteArrays."""
        return tuple(
            RemoteArray(self, r[0], r[1], np.dtype(outputs[i][0])) if flags[i] else r
            for i, r in enumerate(results)
        )

    def call_wrapper(self, symbol, data=b""):
        """Calls an ORC wrapper function in the executor process with
        `data` as its argument buffer; returns its result buffer."""
        return self._native.call_wrapper(symbol, bytes(data))

    @contextlib.contextmanager
    def trace(self, path):
        """Writes a Perfetto trace of the calls made inside the block to
        `path` (the trace CATALYST_REMOTE_TRACE writes: open it in
        https://ui.perfetto.dev); a pool traces every member, joining ones
        too. On leaving the block the file holds every launch made in it,
        whole, and takes nothing more. Raises, naming the file, when `path`
        cannot be written or a trace is on already (the environment's, or
        an enclosing block's)."""
        self.start_trace(path)
        try:
            yield os.fspath(path)
        finally:
            self.stop_trace()

    def start_trace(self, path):
        """trace()'s start, for where a block does not fit (a notebook)."""
        self._native.start_trace(os.fspath(path))

    def stop_trace(self):
        """Ends the trace, once the calls writing to it have written;
        nothing to do when none is on."""
        self._native.stop_trace()

    def describe(self):
        """Everything the library knows of this target, as a dict."""
        return json.loads(self._native.describe())

    def stats(self):
        """The launch counters and phase times (nanoseconds) as a dict:
        launches, last and total, and for a pool each member's."""
        return self.describe()["stats"]

    def close(self):
        """Waits for launches started with launch_async, then ends the
        session (or every member's). Closing twice is harmless, and so is
        closing a session whose executor has gone (stopped, or lost): what
        the session held there went with it."""
        with self._async_lock:
            pool, self._async = self._async, None
        if pool is not None:
            pool.shutdown(wait=True)
        self._native.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _executor(self):
        with self._async_lock:
            if self._async is None:
                if self._native.closed:
                    self._native.describe()  # raises SessionClosed
                self._async = concurrent.futures.ThreadPoolExecutor(
                    max_workers=self._async_workers, thread_name_prefix="catalyst-remote"
                )
            return self._async


# Session's options, which a Pool passes to every member.
_SESSION_OPTIONS = (
    "token",
    "token_file",
    "strategy",
    "transport",
    "liveness_ms",
    "wire",
    "handshake_timeout_ms",
    "launch_timeout_ms",
    "max_output_mib",
    "profile",
    "trace",
)


class Session(_Target):
    """One executor's session.

    address: "host:port", "[v6]:port", "name:port" or "unix:PATH".
    token / token_file: the executor's secret (its --token-file); else
        CATALYST_REMOTE_TOKEN_FILE / CATALYST_REMOTE_TOKEN as in C.
    strategy: "zerocopy", "batched", "naive" or "auto".
    transport: "auto", "tcp" or "local" ("shm" too, its name before 0.1.0).
    liveness_ms: how long a silent executor is trusted (0: for ever).
    Other options, each as the C ABI's environment sets them: wire,
    handshake_timeout_ms, launch_timeout_ms, max_output_mib, profile and
    trace (a Perfetto trace file of everything the session does).

    Launches on one session run one at a time, in order; launch_async
    queues behind them.
    """

    def __init__(
        self,
        address,
        *,
        token=None,
        token_file=None,
        strategy=None,
        transport=None,
        liveness_ms=None,
        wire=None,
        handshake_timeout_ms=None,
        launch_timeout_ms=None,
        max_output_mib=None,
        profile=None,
        trace=None,
    ):
        super().__init__(
            address,
            dict(
                token=token,
                token_file=token_file,
                strategy=strategy,
                transport=transport,
                liveness_ms=liveness_ms,
                wire=wire,
                handshake_timeout_ms=handshake_timeout_ms,
                launch_timeout_ms=launch_timeout_ms,
                max_output_mib=max_output_mib,
                profile=profile,
                trace=trace,
            ),
            async_workers=1,
        )

    def info(self):
        """The executor as it announced itself: version, protocol,
        strategies, and how this session uses it."""
        described = self.describe()
        described.pop("stats", None)
        return described

    def __repr__(self):
        state = "closed" if self.closed else "open"
        return f"Session({self._address!r}, {state})"


class Pool(_Target):
    """Many executors behind one address: "pool:DIR" (the files executors
    started with --announce DIR write), "pool:pmix" (the job's PMIx), or
    "pool:ADDR,ADDR,...".

    min_members: how many members open() waits for (up to the handshake
        timeout); retry: run a launch again on another member when its own
        is lost mid-launch (off by default: a kernel may drive hardware).
    The session options are Session's, for every member.

    A launch goes to the least-loaded member; launch_async and map() keep
    launches in flight on every member at once. call_wrapper runs on the
    oldest member.
    """

    def __init__(self, address, *, min_members=None, retry=None, async_workers=32, **options):
        if not isinstance(address, str) or not address.startswith("pool:"):
            raise BadArgument(f"a pool's address starts with 'pool:', not {address!r}")
        unknown = sorted(set(options) - set(_SESSION_OPTIONS))
        if unknown:
            raise TypeError(f"Pool() got unknown options {unknown}; a member's are {_SESSION_OPTIONS}")
        super().__init__(
            address,
            dict(pool_min=min_members, pool_retry=retry, **options),
            async_workers=async_workers,
        )

    def members(self):
        """The members now, each a dict (name, address, healthy, ...)."""
        return self.stats()["members"]

    def map(self, entry, obj, inputs, outputs=(), progress=False):
        """Launches `entry` once per item of `inputs` (each a tuple of
        arrays, or one array) across the members; returns the results in
        the order of `inputs`. progress=True shows a bar as they finish.
        The first failure is raised once every launch has ended."""
        call = self.prepare(entry, obj, outputs)
        executor = self._executor()
        futures = [
            executor.submit(call, *(item if isinstance(item, tuple) else (item,)))
            for item in inputs
        ]
        with _progress.bar(len(futures), f"{entry} on {self._address}", progress) as bar:
            for _ in concurrent.futures.as_completed(futures):
                bar.advance()
        return [f.result() for f in futures]

    def __repr__(self):
        state = "closed" if self.closed else "open"
        return f"Pool({self._address!r}, {state})"

