"""RemoteArrays: arrays kept in the executor. Uploads of every layout
come back as they were; launches read them there and keep outputs there,
through launch, prepare and launch_async; fetch brings values back; bad
handles raise naming what is wrong; release is idempotent and happens on
garbage collection and with the session. Every value is checked against
NumPy's own."""

import gc
import os

import numpy as np
import pytest

import catalyst_remote as cr

PREFIX = "_catalyst_pyface_"


@pytest.fixture
def session(executor, kernels):
    with cr.Session(executor.address, strategy="zerocopy") as s:
        s.send_binary(os.path.join(kernels, "copy.o"))
        s.send_binary(os.path.join(kernels, "concat.o"))
        yield s


def concat2(a, b):
    """concat.c's concat_2 in NumPy: the inputs end to end, input k's
    bytes plus 31 * k + 1."""
    return np.concatenate([(a + 1).astype(np.uint8), (b + 32).astype(np.uint8)])


def test_an_upload_of_any_layout_comes_back_as_it_was(session):
    base = np.arange(6 * 8, dtype=np.float32).reshape(6, 8)
    for name, x in [("dense", base), ("transposed", base.T), ("strided", base[::2, 1::3]),
                    ("negative", base[::-1, ::-2]), ("broadcast", np.broadcast_to(base[0], (3, 8)))]:
        with session.upload(x) as r:
            assert r.shape == x.shape and r.dtype == x.dtype and r.ndim == 2, name
            assert r.nbytes == x.size * 4
            assert np.array_equal(r.fetch(), x), name
            (out,) = session.launch(f"{PREFIX}copy_r2_e4", "copy.o", r, outputs=[("float32", 2)])
            assert np.array_equal(out, x), name
        assert r.released


def test_a_chain_stays_in_the_executor_until_fetched(session):
    rng = np.random.default_rng(3)
    x = rng.integers(0, 200, size=300000, dtype=np.uint8)
    h = rng.integers(0, 200, size=50, dtype=np.uint8)
    r = session.upload(x)
    (a,) = session.launch(f"{PREFIX}copy_r1_e1", "copy.o", r, outputs=[("uint8", 1)], keep=True)
    assert isinstance(a, cr.RemoteArray) and a.shape == (300000,) and a.dtype == np.uint8
    before = session.stats()["total"]["bytes_received"]
    (b,) = session.prepare(f"{PREFIX}concat_2", "concat.o", outputs=[("uint8", 1)], keep=[0])(a, h)
    stats = session.stats()
    assert stats["total"]["bytes_received"] - before < 64 << 10, "the kept output stays"
    assert stats["last"]["resident_bytes"] == 300000 + 300050
    assert stats["residents"]["held"] == 3
    assert np.array_equal(b.fetch(), concat2(x, h))
    future = session.launch_async(f"{PREFIX}concat_2", "concat.o", b, h,
                                  outputs=[("uint8", 1)], keep=[0])
    (c,) = future.result()
    assert c.shape == (300100,)
    assert np.array_equal(c.fetch(), concat2(concat2(x, h), h))
    for each in (r, a, b, c):
        each.release()
        each.release()  # harmless
    assert session.stats()["residents"]["held"] == 0


def test_bad_handles_raise_naming_what_is_wrong(session, executor, kernels):
    x = np.arange(16, dtype=np.uint8)
    r = session.upload(x)
    with pytest.raises(cr.BadArgument, match="is a RemoteArray already"):
        session.upload(r)
    with pytest.raises(cr.BadArgument, match="keep names outputs \\[3\\]"):
        session.launch(f"{PREFIX}copy_r1_e1", "copy.o", x, outputs=[("uint8", 1)], keep=[3])
    with cr.Session(executor.address, strategy="zerocopy") as other:
        other.send_binary(os.path.join(kernels, "copy.o"))
        with pytest.raises(cr.BadArgument, match="belongs to another session"):
            other.launch(f"{PREFIX}copy_r1_e1", "copy.o", r, outputs=[("uint8", 1)])
    r.release()
    with pytest.raises(cr.BadArgument, match="released"):
        r.fetch()
    with pytest.raises(cr.BadArgument, match="input 0 is a RemoteArray that was released"):
        session.launch(f"{PREFIX}copy_r1_e1", "copy.o", r, outputs=[("uint8", 1)])
    with cr.Session(executor.address, strategy="batched") as batched:
        with pytest.raises(cr.BadArgument, match="need the zerocopy strategy"):
            batched.upload(x)


def test_residents_go_with_garbage_and_with_their_session(session, executor):
    x = np.zeros(1000, dtype=np.float64)
    r = session.upload(x)
    assert session.stats()["residents"]["held"] == 1
    del r
    gc.collect()
    assert session.stats()["residents"]["held"] == 0, "released when garbage-collected"
    kept = session.upload(x)
    session.close()
    kept.release()  # harmless: the session's end freed it
    assert kept.released
