"""Sessions on NumPy arrays: every dtype and layout against NumPy's own
computation of the same kernel, outputs that own their buffers, async
launches that overlap the caller, prepared launches, stats and info."""

import gc
import os
import re
import subprocess
import threading

import numpy as np
import pytest

import catalyst_remote as cr

from conftest import Gate

PREFIX = "_catalyst_pyface_"
DTYPES = [
    "bool", "int8", "uint8", "int16", "uint16", "float16", "int32", "uint32", "float32",
    "int64", "uint64", "float64", "complex64", "complex128",
]
MULTIPLIER = {1: 3, 2: 5, 4: 7, 8: 11, 16: 13}


def expected_map(x):
    """map.c's kernel in NumPy: element i (row-major) of the dense output
    is in[i] * k + i over the element's bytes as an unsigned integer."""
    size = x.dtype.itemsize
    flat = np.ascontiguousarray(x).reshape(-1)
    n = flat.size
    i = np.arange(n, dtype=np.uint64)
    if size <= 8:
        u = np.dtype(f"uint{8 * size}")
        bits = flat.view(u).astype(np.uint64)
        out = (bits * np.uint64(MULTIPLIER[size]) + i).astype(u)
        return out.view(x.dtype).reshape(x.shape)
    halves = flat.view(np.uint64).reshape(n, 2)  # little-endian: low, high
    out = np.empty((n, 2), dtype=np.uint64)
    for k in range(n):
        value = int(halves[k, 0]) | int(halves[k, 1]) << 64
        value = (value * 13 + (int(i[k]) << 64 | int(i[k]))) % (1 << 128)
        out[k] = (value & (2**64 - 1), value >> 64)
    return out.reshape(-1).view(x.dtype).reshape(x.shape)


def sample(dtype, shape, seed=1):
    rng = np.random.default_rng(seed)
    raw = rng.integers(0, 256, size=int(np.prod(shape)) * np.dtype(dtype).itemsize, dtype=np.uint8)
    return raw.view(dtype).reshape(shape)


def layouts(dtype):
    """(name, array) of every layout a caller can hand in."""
    base = sample(dtype, (6, 8))
    return [
        ("contiguous", base),
        ("fortran", np.asfortranarray(base)),
        ("transposed", base.T),
        ("strided", base[::2, 1::3]),
        ("negative", base[::-1, ::-2]),
        ("broadcast", np.broadcast_to(base[0], (3, 8))),
        ("zero-size", base[:0]),
        ("rank0", np.array(base[2, 3])),
        ("rank1", base[1]),
        ("rank4", sample(dtype, (2, 3, 2, 2))),
    ]


@pytest.fixture
def session(executor, kernels):
    with cr.Session(executor.address) as s:
        s.send_binary(os.path.join(kernels, "map.o"))
        yield s


@pytest.mark.parametrize("dtype", DTYPES)
def test_every_dtype_and_layout_matches_numpy(session, dtype):
    for name, x in layouts(dtype):
        entry = f"{PREFIX}map_r{x.ndim}_e{x.dtype.itemsize}"
        (out,) = session.launch(entry, "map.o", x, outputs=[(dtype, x.ndim)])
        assert out.dtype == x.dtype, name
        assert out.shape == x.shape, name
        want = expected_map(x)
        assert out.tobytes() == want.tobytes(), f"{dtype} {name}"


def test_inputs_are_not_copied_or_changed(session):
    x = np.arange(1000, dtype=np.int64)
    before = x.copy()
    x.setflags(write=False)
    (out,) = session.launch(f"{PREFIX}map_r1_e8", "map.o", x, outputs=[("int64", 1)])
    assert np.array_equal(x, before)
    assert np.array_equal(out, expected_map(before))


def resident_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def test_outputs_own_their_buffers(session):
    """A view keeps the buffer alive after its array is gone (a 32 MiB
    buffer freed early is unmapped: reading it would crash), and every
    buffer is freed once its last array dies (40 launches of 32 MiB leave
    no more than a few resident)."""
    x = np.arange(4 << 20, dtype=np.float64)
    want = expected_map(x)
    (out,) = session.launch(f"{PREFIX}map_r1_e8", "map.o", x, outputs=[("float64", 1)])
    assert out.flags.writeable and out.base is not None
    view = out[-1000:]
    del out
    gc.collect()
    assert view.tobytes() == want[-1000:].tobytes()
    del view
    before = resident_bytes()
    for _ in range(40):
        (out,) = session.launch(f"{PREFIX}map_r1_e8", "map.o", x, outputs=[("float64", 1)])
        del out
    grew = resident_bytes() - before
    assert grew < 256 << 20, f"40 launches of 32 MiB outputs left {grew >> 20} MiB resident"


def test_prepared_launch_runs_again_and_again(session):
    call = session.prepare(f"{PREFIX}map_r2_e4", "map.o", outputs=[("float32", 2)])
    for seed in range(20):
        x = sample("float32", (5, 7), seed)
        (out,) = call(x)
        assert out.tobytes() == expected_map(x).tobytes()
    assert session.stats()["launches"] == 20


def test_prepared_launch_takes_its_inputs_by_position(session):
    """A prepared launch is called with its inputs alone: a keyword is a
    TypeError (not silently dropped), and it is made by prepare() only."""
    call = session.prepare(f"{PREFIX}map_r1_e8", "map.o", outputs=[("float64", 1)])
    x = sample("float64", (5,))
    with pytest.raises(TypeError, match="positional arguments, not keywords"):
        call(x, extra=x)
    with pytest.raises(TypeError):
        type(call)()
    assert "map_r1_e8 in map.o, 1 outputs" in repr(call)
    (out,) = call(x)
    assert out.tobytes() == expected_map(x).tobytes()
    assert session.stats()["launches"] == 1


def test_launch_tells_output_kinds_apart(session):
    """Session.launch keeps what it prepared by entry, object and output
    kinds: the same kinds again, however spelt, launch the same; other
    kinds, or the same list changed in place, launch what they say."""
    entry = f"{PREFIX}map_r1_e8"
    x = sample("float64", (6,))
    outputs = [("float64", 1)]
    for kinds in (outputs, [("float64", 1)], [(np.float64, 1)], ((np.dtype("float64"), 1),)):
        (out,) = session.launch(entry, "map.o", x, outputs=kinds)
        assert out.dtype == np.float64 and out.tobytes() == expected_map(x).tobytes()
    outputs[0] = ("int64", 1)
    (out,) = session.launch(entry, "map.o", x, outputs=outputs)
    assert out.dtype == np.int64 and out.tobytes() == expected_map(x).tobytes()
    (out,) = session.launch(entry, "map.o", x, outputs=[(np.uint64, 1)])
    assert out.dtype == np.uint64
    # A record dtype spelt as a list, changed in place inside the same tuple.
    fields = [("a", "f4"), ("b", "i4")]
    kind = (fields, 1)
    (out,) = session.launch(entry, "map.o", x, outputs=[kind])
    assert out.dtype.names == ("a", "b")
    fields[1] = ("c", "u4")
    (out,) = session.launch(entry, "map.o", x, outputs=[kind])
    assert out.dtype.names == ("a", "c")
    with pytest.raises(TypeError, match="output 0 must be a \\(dtype, rank\\) pair"):
        session.launch(entry, "map.o", x, outputs=[["float64", 1]])
    assert session.stats()["launches"] == 8


def test_launch_past_the_kept_launches(session):
    """More kinds than Session.launch keeps (64): each still launches what
    it says, the first again too."""
    cases = [(dtype, rank) for rank in range(5) for dtype in DTYPES]
    assert len(cases) > 64
    for dtype, rank in cases + cases[:3]:
        x = sample(dtype, (2,) * rank, seed=rank)
        entry = f"{PREFIX}map_r{rank}_e{x.dtype.itemsize}"
        (out,) = session.launch(entry, "map.o", x, outputs=[(dtype, rank)])
        assert out.dtype == x.dtype and out.tobytes() == expected_map(x).tobytes(), (dtype, rank)


def test_stats_and_info(session):
    x = np.zeros(16, dtype=np.int32)
    session.launch(f"{PREFIX}map_r1_e4", "map.o", x, outputs=[("int32", 1)])
    stats = session.stats()
    assert stats["launches"] == 1
    assert stats["last"]["round_trips"] >= 1
    assert stats["total"]["bytes_sent"] > 0
    info = session.info()
    assert info["kind"] == "session"
    assert info["strategy"] in ("zerocopy", "batched", "naive")
    assert info["transport"] in ("tcp", "unix", "local")
    assert info["executor"]["protocol"] > 0


def test_one_version_everywhere(session, executor_bin):
    """The package, the executor it talks to and the executor's --version
    name the same release."""
    assert re.fullmatch(r"\d+\.\d+\.\d+", cr.__version__), cr.__version__
    assert session.info()["executor"]["version"] == cr.__version__
    printed = subprocess.run([executor_bin, "--version"], capture_output=True, text=True,
                             timeout=30)
    assert printed.returncode == 0, printed.stderr
    protocol = session.info()["executor"]["protocol"]
    assert printed.stdout == f"catalyst-remote-executor {cr.__version__}, protocol {protocol}\n"


@pytest.mark.parametrize("strategy,transport", [
    ("naive", "tcp"), ("batched", "tcp"), ("zerocopy", "tcp"), ("zerocopy", "local")])
def test_strategies_and_transports(executor, kernels, strategy, transport):
    x = sample("float64", (9, 4))[::-1]
    with cr.Session(executor.address, strategy=strategy, transport=transport) as s:
        s.send_binary(os.path.join(kernels, "map.o"))
        (out,) = s.launch(f"{PREFIX}map_r2_e8", "map.o", x, outputs=[("float64", 2)])
        assert s.info()["strategy"] == strategy
        assert s.info()["transport"] == transport
    assert out.tobytes() == expected_map(x).tobytes()


def test_launch_async_overlaps_the_caller(executor, kernels, tmp_path):
    """launch_async() returns while its kernel runs."""
    gate = Gate(tmp_path, 7)
    with cr.Session(executor.address) as s:
        s.send_binary(os.path.join(kernels, "member.o"))
        future = s.launch_async(gate.ENTRY, "member.o", *gate.args, outputs=[("int64", 1)])
        gate.wait_running()
        assert not future.done()
        gate.open()
        (out,) = future.result(timeout=90)
    gate.check(out)


def test_launches_on_two_sessions_overlap_from_threads(start_executor, kernels, tmp_path):
    """The GIL is released while a launch waits: while one thread's launch
    runs, the main thread launches on another session."""
    addresses = [start_executor().address, start_executor().address]
    sessions = [cr.Session(a) for a in addresses]
    for s in sessions:
        s.send_binary(os.path.join(kernels, "member.o"))
    gate = Gate(tmp_path, 7)
    results = []
    waiting = threading.Thread(target=lambda: results.append(
        sessions[0].launch(gate.ENTRY, "member.o", *gate.args, outputs=[("int64", 1)])))
    waiting.start()
    try:
        gate.wait_running()
        (short,) = sessions[1].launch(f"{PREFIX}whose", "member.o",
                                      np.array([0, 8], dtype=np.int64), outputs=[("int64", 1)])
        assert short[0] == 8
    finally:
        if os.path.exists(gate.path):
            gate.open()
        waiting.join()
    for s in sessions:
        s.close()
    assert len(results) == 1
    gate.check(results[0][0])


def test_call_wrapper(start_executor, plugin):
    e = start_executor("--plugin", plugin)
    with cr.Session(e.address) as s:
        assert s.call_wrapper("test_plugin_echo_reverse", b"abcdef") == b"fedcba"
        assert s.call_wrapper("test_plugin_three_bytes") == b"xyz"


def test_assets_and_close_twice(executor, kernels, tmp_path):
    asset = tmp_path / "table.bin"
    asset.write_bytes(b"\x01\x02\x03")
    s = cr.Session(executor.address)
    s.send_binary(asset, kind="asset")
    s.close()
    s.close()
    assert s.closed
    with pytest.raises(cr.SessionClosed):
        s.stats()
