"""Arrays kept in the executor: send once, launch on them many times.

:meth:`Session.upload` copies an array into the executor, which keeps it
for the session, and returns a :class:`RemoteArray`; a launch given one as
an input reads it there, so none of its bytes cross again. A launch with
``keep=True`` (or a list of output indices) leaves its outputs there and
returns them as RemoteArrays, ready for the next launch::

    with Session(address) as s:
        h = s.upload(hamiltonian)                  # crosses once
        for theta in thetas:
            (e,) = s.launch("energy", "k.o", h, theta, outputs=[("float64", 0)])
        (state,) = s.launch("evolve", "k.o", h, keep=True, outputs=[("complex128", 1)])
        final = state.fetch()                      # crosses when asked for

An upload of any layout is kept dense in row-major order. A RemoteArray
belongs to the session that made it; it is freed by release(), by leaving
its ``with`` block, when it is garbage-collected, or with its session.
Sessions whose strategy is not zerocopy refuse them. A pool's upload
reaches every member; an output a pool's launch keeps stays on its member,
where launches that read it run.
"""

import numpy as np


class RemoteArray:
    """A tensor the executor keeps for one session: its shape and dtype,
    fetch() to bring its values back, release() to free it."""

    __slots__ = ("_session", "_handle", "shape", "dtype", "__weakref__")

    def __init__(self, session, handle, shape, dtype):
        self._session = session
        self._handle = handle
        self.shape = tuple(int(n) for n in shape)
        self.dtype = np.dtype(dtype)

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def itemsize(self):
        return self.dtype.itemsize

    @property
    def nbytes(self):
        return int(np.prod(self.shape, dtype=np.int64)) * self.dtype.itemsize

    @property
    def released(self):
        """Whether release() ran (the session's end frees it too)."""
        return self._handle == 0

    def fetch(self):
        """Its values, as a fresh array; it stays in the executor."""
        if self._handle == 0:
            from .errors import BadArgument

            raise BadArgument("fetch of a released RemoteArray")
        return self._session._native.fetch(self._handle, (self.dtype, self.ndim))

    def release(self):
        """Frees it in the executor. Releasing twice is harmless; so is
        releasing one whose session has closed, which freed it already."""
        handle, self._handle = self._handle, 0
        if handle == 0 or self._session.closed:
            return
        self._session._native.release(handle)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.release()

    def __del__(self):
        # Nobody is left to tell: a failure here (the session's connection
        # gone) means the executor freed it already.
        try:
            self.release()
        except Exception:
            pass

    def __repr__(self):
        state = "released" if self._handle == 0 else f"resident {self._handle}"
        return f"RemoteArray(shape={self.shape}, dtype={self.dtype}, {state})"
