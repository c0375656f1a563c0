"""Executor: a real catalyst-remote-executor started and stopped from
Python, leaving no process behind; what Catalyst's backline and code
written for catalyst.Executor ask of it; its errors."""

import os
import signal
import socket
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import catalyst_remote as cr

from conftest import wait_for

from test_session import PREFIX, expected_map, sample

REMOTE_ONLY = [
    ("host", "node7"),
    ("user", "me"),
    ("workspace", "~/ws"),
    ("deploy", ["build/"]),
    ("sudo", True),
    ("sudo_password", "secret"),
]


def alive(pid):
    """Whether pid is a process that has not ended (a zombie has)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            state = f.read().rpartition(")")[2].split()[0]
    except FileNotFoundError:
        return False
    return state != "Z"


def children(pid):
    with open(f"/proc/{pid}/task/{pid}/children") as f:
        return [int(p) for p in f.read().split()]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def launch_map(session, kernels):
    session.send_binary(os.path.join(kernels, "map.o"))
    x = sample("float64", (6, 5))
    (out,) = session.launch(f"{PREFIX}map_r2_e8", "map.o", x, outputs=[("float64", 2)])
    assert out.tobytes() == expected_map(x).tobytes()


@pytest.fixture
def make(executor_bin):
    """Executor(...) with the build's executor; every one stopped at the end."""
    made = []

    def build(*args, **kwargs):
        kwargs.setdefault("executor_bin", executor_bin)
        ex = cr.Executor(*args, **kwargs)
        made.append(ex)
        return ex

    yield build
    for ex in made:
        ex.stop()


def test_stop_leaves_no_process(make, kernels):
    ex = make().launch()
    pid = ex.pid
    s = ex.session()
    launch_map(s, kernels)
    connections = children(pid)
    assert len(connections) == 1, connections
    ex.stop()
    assert not alive(pid), "the executor outlived stop()"
    assert not any(alive(c) for c in connections), "a connection process outlived stop()"
    with pytest.raises(cr.Error):
        launch_map(s, kernels)
    s.close()
    assert ex.pid is None


def group(pgid):
    """The live (not zombie) processes of process group pgid, as ps sees
    them: independent of the package's own look at /proc."""
    table = subprocess.run(["ps", "-e", "-o", "pid=,pgid=,stat="], capture_output=True,
                           text=True, check=True).stdout
    rows = (line.split() for line in table.splitlines())
    return [int(pid) for pid, g, stat in rows if int(g) == pgid and not stat.startswith("Z")]


def test_stop_after_mixed_use_leaves_no_process(make, kernels):
    """Layouts, async launches on other sessions, a crash, a short session
    and an idle one left open: stop() returns with every process gone, and
    closing what is left of the sessions afterwards is not an error."""
    ex = make().launch()
    pid = ex.pid
    s = ex.session()
    launch_map(s, kernels)
    s.send_binary(os.path.join(kernels, "copy.o"))
    for x in (np.arange(6.0).reshape(2, 3)[:, ::-1], np.zeros((0, 3)),
              np.arange(12.0).reshape(3, 4)[::2, 1::2]):
        (out,) = s.launch(f"{PREFIX}copy_r2_e8", "copy.o", x, outputs=[("float64", 2)])
        assert np.array_equal(out, x)
    others = [ex.session() for _ in range(4)]
    for o in others:
        o.send_binary(os.path.join(kernels, "sleepy.o"))
    ms = np.array([300], dtype=np.int64)
    futures = [o.launch_async(f"{PREFIX}sleepy", "sleepy.o", ms, outputs=[("int64", 1)])
               for o in others]
    assert [f.result()[0][0] for f in futures] == [300] * 4
    for o in others:
        o.close()
    idle = ex.session()
    launch_map(idle, kernels)
    s.send_binary(os.path.join(kernels, "crash.o"))
    with pytest.raises(cr.KernelCrashed):
        s.launch(f"{PREFIX}crash", "crash.o")
    with ex.session() as short:
        launch_map(short, kernels)
    ex.stop()
    assert group(pid) == [], "processes of the executor outlived stop()"
    # Their executor is gone: closing is all that is left to do.
    idle.close()
    s.close()


def test_stop_ends_what_outlives_the_program(tmp_path):
    """A process the program started that ignores SIGTERM and outlives it
    is killed before stop() returns."""
    from catalyst_remote import _process
    started = tmp_path / "started"
    code = textwrap.dedent(f"""
        import os, signal, subprocess, sys, time
        subprocess.Popen([sys.executable, "-c",
                          "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN);"
                          "open({str(started)!r}, 'w').close(); time.sleep(600)"])
        while not os.path.exists({str(started)!r}):
            time.sleep(0.01)
        print("ready", flush=True)
        time.sleep(600)
    """)
    child = _process.Child([sys.executable, "-c", code], what="a test program")
    assert child.wait_for(lambda: "ready" in child.output(), 30), child.output()
    members = group(child.pid)
    assert len(members) == 2, members
    child.stop(timeout=1.0)
    assert group(child.pid) == [], "a process of the program outlived stop()"
    assert not any(alive(p) for p in members)


def test_context_manager_launches_and_stops(make, kernels):
    ex = make()
    with pytest.raises(RuntimeError, match="not launched"):
        ex.address
    with ex as entered:
        assert entered is ex
        pid = ex.pid
        host, _, port = ex.address.rpartition(":")
        assert host == "127.0.0.1" and int(port) > 0
        with cr.Session(ex.address) as s:
            launch_map(s, kernels)
    assert not alive(pid)
    with pytest.raises(RuntimeError, match="not launched"):
        ex.address


def test_launch_and_stop_are_idempotent(make):
    ex = make()
    assert ex.launch() is ex
    pid = ex.pid
    assert ex.launch() is ex and ex.pid == pid
    ex.stop()
    ex.stop()
    assert not alive(pid)


def test_stopped_at_exit(executor_bin):
    """An executor nobody stopped ends with the interpreter that started it."""
    code = textwrap.dedent(f"""
        import catalyst_remote as cr
        ex = cr.Executor(executor_bin={executor_bin!r}).launch()
        print(ex.pid, flush=True)
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    pid = int(done.stdout.split()[0])
    assert not alive(pid), "the executor outlived the interpreter"


def test_executor_ends_with_an_interpreter_killed_hard(executor_bin):
    """SIGKILL leaves the interpreter no chance to stop its executor: the
    executor sees its parent gone (--with-parent) and stops itself."""
    code = textwrap.dedent(f"""
        import sys, time
        import catalyst_remote as cr
        ex = cr.Executor(executor_bin={executor_bin!r}).launch()
        print(ex.pid, flush=True)
        time.sleep(600)
    """)
    interpreter = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        pid = int(interpreter.stdout.readline())
        interpreter.kill()
        interpreter.wait(30)
        wait_for(lambda: not alive(pid), 5.0, "the executor to end with its interpreter")
    finally:
        if interpreter.poll() is None:
            interpreter.kill()


def test_executor_started_from_a_shell_outlives_it(executor_bin, kernels, tmp_path):
    """A daemon started on purpose (--bind alone, from a shell) keeps
    serving once its shell has gone."""
    log = tmp_path / "executor.log"
    # Nothing here says a launcher started it, even when the tests run in a job.
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLURM_", "OMPI_", "PMIX_"))}
    shell = subprocess.run(
        # The shell goes once the executor listens, so that the executor
        # knew it as its parent.
        ["sh", "-c", f"{executor_bin} --bind 127.0.0.1:0 >{log} 2>&1 & echo $!; "
                     f"until grep -q Listening {log}; do sleep 0.02; done"],
        capture_output=True, text=True, check=True, timeout=30, env=env)
    pid = int(shell.stdout)
    try:
        address = log.read_text().split("Listening on ")[1].split()[0]
        with cr.Session(address) as s:
            launch_map(s, kernels)
        assert alive(pid)
    finally:
        os.kill(pid, signal.SIGTERM)


def test_pinned_port_resolves_before_launch(make, kernels):
    port = free_port()
    ex = make(port=port)
    assert ex.resolve() is ex
    assert ex.address == f"127.0.0.1:{port}"
    assert ex.pid is None  # committed, not started
    ex.launch()
    assert ex.address == f"127.0.0.1:{port}"
    with ex.session() as s:
        launch_map(s, kernels)


def test_unpinned_port_resolves_only_by_launching(make):
    ex = make()
    assert ex.resolve() is None
    with pytest.raises(RuntimeError):
        ex.address


def test_port_in_use_is_a_clear_error(make):
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        port = held.getsockname()[1]
        ex = make(port=port)
        with pytest.raises(cr.Error, match=f"port {port} on 127.0.0.1 is already in use.*port="):
            ex.launch()
    assert ex.pid is None
    with pytest.raises(RuntimeError):
        ex.address


@pytest.mark.parametrize("name,value", REMOTE_ONLY)
def test_remote_parameters_are_refused(name, value):
    with pytest.raises(ValueError, match=rf"Executor\({name}=.*address="):
        cr.Executor(**{name: value})


def test_attach_mode_carries_the_address(make, kernels):
    running = make().launch()
    attached = cr.Executor(running.address)
    with pytest.raises(RuntimeError, match="not launched"):
        attached.address
    assert attached.launch() is attached
    assert attached.address == running.address
    assert attached.pid is None
    assert attached.triple == running.triple  # loopback: this machine
    with attached.session() as s:
        launch_map(s, kernels)
    attached.stop()
    assert alive(running.pid), "stopping an attached executor ended the real one"
    assert cr.Executor("node7:7000").triple is None
    assert cr.Executor("node7:7000").resolve().address == "node7:7000"


def test_plugins_are_loaded(make, plugin):
    with make(plugins=[plugin]) as ex, ex.session() as s:
        assert s.call_wrapper("test_plugin_three_bytes") == b"xyz"


def test_token_file_and_extra_arguments(make, executor_bin, kernels, tmp_path):
    token, other = tmp_path / "token", tmp_path / "other"
    for path in (token, other):
        subprocess.run([executor_bin, "--new-token", str(path)], check=True, timeout=30)
    with make(token_file=token, args=["--workers", "2"]) as ex:
        with ex.session() as s:
            launch_map(s, kernels)
        with pytest.raises(cr.Error, match="secret"):
            cr.Session(ex.address, token_file=other)


def test_what_catalysts_backline_asks(make):
    ex = make(name="controller")
    assert all(hasattr(type(ex), m) for m in ("address", "launch"))
    assert ex.host is None
    assert isinstance(ex.triple, str) and ex.triple.count("-") >= 2
    assert make(triple="aarch64-unknown-linux-gnu").triple == "aarch64-unknown-linux-gnu"
    assert cr.executor.machine_triple("Linux", "x86_64") == "x86_64-unknown-linux-gnu"
    assert cr.executor.machine_triple("Darwin", "arm64") == "arm64-apple-darwin"
    assert cr.executor.machine_triple("Linux", "riscv64") is None
    assert "controller" in repr(ex)


def test_default_executor_is_the_packages(monkeypatch, kernels):
    """Without executor_bin or CATALYST_REMOTE_EXECUTOR, the executor the
    package names relative to itself (_paths.py) is run."""
    monkeypatch.delenv("CATALYST_REMOTE_EXECUTOR", raising=False)
    with cr.Executor() as ex, ex.session() as s:
        launch_map(s, kernels)


def test_environment_variable_names_the_executor(monkeypatch, tmp_path):
    monkeypatch.setenv("CATALYST_REMOTE_EXECUTOR", str(tmp_path / "no-such-executor"))
    with pytest.raises(cr.Error, match="could not start executor.*no-such-executor"):
        cr.Executor().launch()


def test_executor_that_exits_early_shows_its_output(make):
    ex = make(args=["--no-such-option"])
    with pytest.raises(cr.Error, match=r"(?s)exited with status \d+ before listening.*no-such"):
        ex.launch()


def test_executor_that_never_listens_times_out_and_is_killed(make, tmp_path):
    script = tmp_path / "silent-executor"
    pid_file = tmp_path / "pid"
    script.write_text(f"#!/bin/sh\necho $$ > {pid_file}\necho warming up >&2\nexec sleep 600\n")
    script.chmod(0o755)
    ex = make(executor_bin=str(script), ready_timeout=3.0)
    with pytest.raises(cr.Timeout, match="(?s)ready_timeout=3.0 s.*warming up"):
        ex.launch()
    pid = int(pid_file.read_text())
    assert not alive(pid)


def test_environment_reaches_the_executor(make, tmp_path):
    script = tmp_path / "env-executor"
    script.write_text('#!/bin/sh\necho "seen $SEEN"\nexit 3\n')
    script.chmod(0o755)
    ex = make(executor_bin=str(script), env={"SEEN": "$HOME/x"})
    with pytest.raises(cr.Error, match=f"seen {os.environ['HOME']}/x"):
        ex.launch()


def test_verbose_copies_the_output(make, capfd):
    with make(verbose=2, name="chatty"):
        pass
    assert "[chatty] Listening on 127.0.0.1:" in capfd.readouterr().err


def test_bad_arguments():
    with pytest.raises(cr.BadArgument, match="port"):
        cr.Executor(port=70000)
    with pytest.raises(cr.BadArgument, match="bind"):
        cr.Executor(bind="")
    with pytest.raises(cr.BadArgument, match="address"):
        cr.Executor(address="")

