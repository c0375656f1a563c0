"""Pools from Python: launches spread over members, map() in order,
launch_async overlapping across members, per-member stats."""

import os
import time

import numpy as np
import pytest

import catalyst_remote as cr

from conftest import Gate
from test_session import PREFIX, expected_map, sample


@pytest.fixture
def four(start_executor):
    return [start_executor() for _ in range(4)]


def check_map_sweep(pool, kernels, members):
    """map() of the map kernel over 40 inputs: every result right, and
    every one of the pool's `members` members used."""
    pool.send_binary(os.path.join(kernels, "map.o"))
    inputs = [sample("float64", (16, 3), seed) for seed in range(40)]
    results = pool.map(f"{PREFIX}map_r2_e8", "map.o", inputs, outputs=[("float64", 2)])
    stats = pool.members()
    assert [r[0].tobytes() for r in results] == [expected_map(x).tobytes() for x in inputs]
    assert len(stats) == members
    assert sum(m["launches"] for m in stats) == 40
    assert all(m["launches"] > 0 for m in stats), stats


def test_map_over_a_listed_pool(four, kernels):
    address = "pool:" + ",".join(e.address for e in four)
    with cr.Pool(address, min_members=4) as pool:
        check_map_sweep(pool, kernels, 4)


def test_async_launches_overlap_across_members(four, kernels, tmp_path):
    """Four launches at once run at once, one on each member."""
    address = "pool:" + ",".join(e.address for e in four)
    gates = [Gate(tmp_path, tag) for tag in range(1, 5)]
    with cr.Pool(address, min_members=4) as pool:
        pool.send_binary(os.path.join(kernels, "member.o"))
        futures = [pool.launch_async(g.ENTRY, "member.o", *g.args, outputs=[("int64", 1)])
                   for g in gates]
        try:
            for g in gates:
                g.wait_running()
        finally:
            for g in gates:
                if os.path.exists(g.path):
                    g.open()
        results = [f.result(timeout=90) for f in futures]
    for g, r in zip(gates, results):
        g.check(r[0])
    assert len({int(r[0][1]) for r in results}) == 4, "one launch on each member"


def test_pool_of_an_announcement_directory(start_executor, kernels, tmp_path):
    for _ in range(2):
        start_executor("--announce", str(tmp_path))
    with cr.Pool(f"pool:{tmp_path}", min_members=2) as pool:
        pool.send_binary(os.path.join(kernels, "map.o"))
        x = sample("int16", (7,))
        (out,) = pool.launch(f"{PREFIX}map_r1_e2", "map.o", x, outputs=[("int16", 1)])
        assert out.tobytes() == expected_map(x).tobytes()
        assert len(pool.members()) == 2


def test_too_few_members(executor):
    with pytest.raises(cr.Timeout, match="1 of the 2 members needed"):
        cr.Pool(f"pool:{executor.address}", min_members=2, handshake_timeout_ms=1000)


def test_a_pool_address_is_required():
    with pytest.raises(cr.BadArgument, match="starts with 'pool:'"):
        cr.Pool("127.0.0.1:1")
    with pytest.raises(TypeError, match="unknown options"):
        cr.Pool("pool:127.0.0.1:1", tokn="x")


def test_map_shows_progress_when_asked(four, kernels, capsys):
    address = "pool:" + ",".join(e.address for e in four)
    with cr.Pool(address, min_members=4) as pool:
        pool.send_binary(os.path.join(kernels, "map.o"))
        inputs = [sample("int8", (3,), seed) for seed in range(12)]
        pool.map(f"{PREFIX}map_r1_e1", "map.o", inputs, outputs=[("int8", 1)])
        assert capsys.readouterr().err == "", "progress shown without being asked for"
        pool.map(f"{PREFIX}map_r1_e1", "map.o", inputs, outputs=[("int8", 1)], progress=True)
        shown = capsys.readouterr().err
    assert "12/12" in shown, shown


def test_progress_line_without_tqdm():
    import io

    from catalyst_remote import _progress

    out = io.StringIO()
    with _progress.bar(3, "sweep", True, stream=out) as bar:
        for _ in range(3):
            bar.advance()
    assert out.getvalue() == "\rsweep: 0/3\rsweep: 1/3\rsweep: 2/3\rsweep: 3/3\n"
    out = io.StringIO()
    with _progress.elapsed("long launch", stream=out, every=0.01):
        time.sleep(0.05)
    assert out.getvalue().startswith("\rlong launch: ") and out.getvalue().endswith(" s\n")


def test_residents_in_a_pool(start_executor, kernels):
    """An upload reaches both members, and launches on either read it; a
    kept output stays on its member, where the launch that reads it runs;
    every value is NumPy's own."""
    two = [start_executor() for _ in range(2)]
    address = "pool:" + ",".join(e.address for e in two)
    rng = np.random.default_rng(5)
    x = rng.integers(0, 200, size=(4000,), dtype=np.uint8)
    h = rng.integers(0, 200, size=(9,), dtype=np.uint8)
    with cr.Pool(address, min_members=2, strategy="zerocopy") as pool:
        pool.send_binary(os.path.join(kernels, "copy.o"))
        pool.send_binary(os.path.join(kernels, "concat.o"))
        r = pool.upload(x[::2])
        for _ in range(4):
            (out,) = pool.launch(f"{PREFIX}copy_r1_e1", "copy.o", r, outputs=[("uint8", 1)])
            assert np.array_equal(out, x[::2])
        assert all(m["launches"] == 2 for m in pool.members()), pool.members()
        assert np.array_equal(r.fetch(), x[::2])
        (k,) = pool.launch(f"{PREFIX}copy_r1_e1", "copy.o", r, outputs=[("uint8", 1)], keep=True)
        (c,) = pool.launch(f"{PREFIX}concat_2", "concat.o", k, h, outputs=[("uint8", 1)],
                           keep=True)
        expected = np.concatenate([(x[::2] + 1).astype(np.uint8), (h + 32).astype(np.uint8)])
        assert np.array_equal(c.fetch(), expected)
        for each in (r, k, c):
            each.release()
        assert sum(m["residents"]["held"] for m in pool.members()) == 0
