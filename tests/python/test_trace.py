"""Traces from Python: `with target.trace(path)` writes the Perfetto trace
CATALYST_REMOTE_TRACE writes, for the calls made inside the block only, on
a session and on every member of a pool; refusals name the file."""

import json
import os

import numpy as np
import pytest

import catalyst_remote as cr

from test_session import PREFIX, expected_map, sample

ENTRY = f"{PREFIX}map_r1_e8"


def host_launches(path):
    """The host's `launch ENTRY` spans in the trace at path (the executor's
    own spans of the same launches carry no `entry` argument)."""
    with open(path) as f:
        events = json.load(f)["traceEvents"]
    return [e for e in events
            if e.get("ph") == "X" and e["name"] == f"launch {ENTRY}" and "entry" in e.get("args", {})]


def spans_named(path, prefix):
    with open(path) as f:
        return [e for e in json.load(f)["traceEvents"]
                if e.get("ph") == "X" and e["name"].startswith(prefix)]


def launch(target, seed):
    x = sample("float64", (5,), seed)
    (out,) = target.launch(ENTRY, "map.o", x, outputs=[("float64", 1)])
    assert out.tobytes() == expected_map(x).tobytes()


@pytest.fixture
def session(executor, kernels):
    with cr.Session(executor.address) as s:
        s.send_binary(os.path.join(kernels, "map.o"))
        yield s


def test_trace_holds_the_launches_made_in_the_block(session, tmp_path):
    path = tmp_path / "launches.json"
    launch(session, 1)
    with session.trace(path) as written:
        assert written == os.fspath(path)
        launch(session, 2)
        launch(session, 3)
    launch(session, 4)
    spans = host_launches(path)
    assert len(spans) == 2, spans
    # The launch numbers count every launch of the session: the traced
    # ones are its second and third.
    assert sorted(s["args"]["launch"] for s in spans) == [2, 3]
    assert len(spans_named(path, "trace ")) == 1


def test_a_second_trace_is_refused_naming_the_first(session, tmp_path):
    first, second = tmp_path / "first.json", tmp_path / "second.json"
    with session.trace(first):
        with pytest.raises(cr.Error, match="first.json"):
            with session.trace(second):
                pass
        launch(session, 1)
    assert len(host_launches(first)) == 1
    assert not second.exists()
    # Stopped: a new trace may start.
    with session.trace(second):
        launch(session, 2)
    assert len(host_launches(second)) == 1


def test_an_unwritable_path_is_refused_naming_it(session, tmp_path):
    path = tmp_path / "no-such-dir" / "t.json"
    with pytest.raises(cr.Error, match="no-such-dir"):
        with session.trace(path):
            pytest.fail("the block ran without a trace")
    launch(session, 1)  # the session is still usable


def test_stop_without_a_trace_and_trace_after_close(session, tmp_path):
    session.stop_trace()
    session.close()
    with pytest.raises(cr.SessionClosed):
        session.start_trace(tmp_path / "t.json")


def test_a_pool_traces_every_member(start_executor, kernels, tmp_path):
    members = [start_executor() for _ in range(2)]
    path = tmp_path / "pool.json"
    address = "pool:" + ",".join(e.address for e in members)
    with cr.Pool(address, min_members=2) as pool:
        pool.send_binary(os.path.join(kernels, "map.o"))
        inputs = [sample("float64", (5,), seed) for seed in range(8)]
        with pool.trace(path):
            results = pool.map(ENTRY, "map.o", inputs, outputs=[("float64", 1)])
        pool.map(ENTRY, "map.o", inputs[:2], outputs=[("float64", 1)])
        used = [m["address"] for m in pool.members() if m["launches"] > 0]
    assert [r[0].tobytes() for r in results] == [expected_map(x).tobytes() for x in inputs]
    spans = host_launches(path)
    assert len(spans) == 8, spans
    traced = {s["args"]["executor_pid"] for s in spans}
    assert len(traced) == len(used) == 2, (traced, used)
    assert len(spans_named(path, "trace ")) == 2
