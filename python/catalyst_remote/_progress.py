"""Progress shown while launches run, when the caller asks for it.

A sweep gets a bar: Debian's python3-tqdm when it is installed, else one
plain line rewritten in place on stderr. A single long launch gets the time
it has taken so far, since nothing can tell how far a kernel has come.
"""

import contextlib
import sys
import threading
import time

try:  # optional: Debian's python3-tqdm
    import tqdm as _tqdm
except ImportError:  # pragma: no cover - depends on the machine
    _tqdm = None


class _NoBar:
    def advance(self):
        pass


class _LineBar:
    """"label: done/total" rewritten on stderr."""

    def __init__(self, total, label, stream):
        self._total, self._label, self._stream = total, label, stream
        self._done = 0
        self._draw()

    def advance(self):
        self._done += 1
        self._draw()

    def _draw(self):
        self._stream.write(f"\r{self._label}: {self._done}/{self._total}")
        self._stream.flush()

    def close(self):
        self._stream.write("\n")
        self._stream.flush()


class _TqdmBar:
    def __init__(self, total, label):
        self._bar = _tqdm.tqdm(total=total, desc=label)

    def advance(self):
        self._bar.update(1)

    def close(self):
        self._bar.close()


@contextlib.contextmanager
def bar(total, label, enabled, stream=None):
    """A bar over `total` launches, or nothing when not enabled."""
    if not enabled:
        yield _NoBar()
        return
    shown = _TqdmBar(total, label) if _tqdm and stream is None else _LineBar(
        total, label, stream or sys.stderr
    )
    try:
        yield shown
    finally:
        shown.close()


@contextlib.contextmanager
def elapsed(label, stream=None, every=0.5):
    """Shows "label: 12.5 s" on stderr, updated while the block runs."""
    stream = stream or sys.stderr
    done = threading.Event()
    start = time.monotonic()

    def show():
        while not done.wait(every):
            stream.write(f"\r{label}: {time.monotonic() - start:.1f} s")
            stream.flush()

    shower = threading.Thread(target=show, name="catalyst-remote progress", daemon=True)
    shower.start()
    try:
        yield
    finally:
        done.set()
        shower.join()
        stream.write(f"\r{label}: {time.monotonic() - start:.1f} s\n")
        stream.flush()
