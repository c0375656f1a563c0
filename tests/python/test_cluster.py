"""Pools whose executors a cluster's launcher starts: four members under
Open MPI's mpirun from Python, every one used, and nothing left once the
pool is closed; the launcher's failures; srun's command line."""

import os
import shutil
import subprocess
import sys
import textwrap

import pytest

import catalyst_remote as cr
from catalyst_remote import cluster

from conftest import wait_for
from test_executor import alive
from test_pool import check_map_sweep
from test_session import PREFIX, expected_map, sample

needs_mpirun = pytest.mark.skipif(
    shutil.which("mpirun") is None,
    reason="Open MPI's mpirun is not installed: needs the Debian package openmpi-bin",
)


def processes_naming(text):
    """The live processes whose command line contains `text`."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                if text.encode() in f.read():
                    found.append(int(entry))
        except OSError:  # ended while we looked
            continue
    return found


def announcements(directory):
    if not os.path.isdir(directory):
        return []
    return [f for f in os.listdir(directory) if f.endswith(".addr")]


@needs_mpirun
def test_map_over_a_pool_mpirun_started(executor_bin, kernels):
    pool = cr.mpirun_pool(4, executor_bin=executor_bin, ready_timeout=60)
    directory = pool.announce_dir
    with pool:
        assert isinstance(pool, cr.Pool)
        assert len(announcements(directory)) == 4
        # mpirun, four executors and their connection processes (the pool's sessions).
        assert len(processes_naming(directory)) >= 5
        check_map_sweep(pool, kernels, 4)
    assert processes_naming(directory) == [], "an executor or mpirun outlived close()"
    assert not os.path.exists(directory)
    pool.close()  # twice is harmless


@needs_mpirun
def test_a_token_binds_beyond_loopback(executor_bin, kernels, tmp_path):
    """With token_file the members listen on every address, announce this
    machine's name, and the pool proves the secret mpirun passed on (-x)."""
    token = tmp_path / "token"
    subprocess.run([executor_bin, "--new-token", str(token)], check=True, timeout=30)
    with cr.mpirun_pool(2, executor_bin=executor_bin, token_file=token,
                        announce_dir=tmp_path) as pool:
        directory = pool.announce_dir
        assert os.path.dirname(directory) == str(tmp_path)
        for name in announcements(directory):
            with open(os.path.join(directory, name)) as f:
                assert not f.read().startswith("127."), name
        pool.send_binary(os.path.join(kernels, "map.o"))
        x = sample("int32", (9,))
        (out,) = pool.launch(f"{PREFIX}map_r1_e4", "map.o", x, outputs=[("int32", 1)])
        assert out.tobytes() == expected_map(x).tobytes()
    assert processes_naming(directory) == []


@needs_mpirun
def test_launcher_that_ends_early_is_reported(executor_bin, tmp_path):
    with pytest.raises(cr.Error, match=r"(?s)mpirun exited with status \d+ when 0 of the 2.*"
                                       r"no-such-option"):
        cr.mpirun_pool(2, executor_bin=executor_bin, executor_args=["--no-such-option"],
                       announce_dir=tmp_path)
    assert os.listdir(tmp_path) == [], "the announcement directory was left"


@needs_mpirun
def test_members_that_never_announce_time_out(tmp_path):
    script, pids = tmp_path / "silent-executor", tmp_path / "pids"
    script.write_text(f"#!/bin/sh\necho $$ >> {pids}\necho warming up\nexec sleep 600\n")
    script.chmod(0o755)
    with pytest.raises(cr.Timeout, match=r"(?s)0 of the 2 executors announced.*"
                                         r"ready_timeout=5 s.*warming up"):
        cr.mpirun_pool(2, executor_bin=str(script), ready_timeout=5)
    started = [int(p) for p in pids.read_text().split()]
    assert len(started) == 2
    assert not any(alive(p) for p in started), "a member outlived the failed start"


def pool_of_a_killed_interpreter(start_pool, directory):
    """Runs `start_pool` (code that opens a pool announcing in
    `directory`, as `pool`) in an interpreter of its own, kills it with
    SIGKILL once the pool is up, and waits for what it started to end."""
    code = textwrap.dedent(f"""
        import os, time
        import catalyst_remote as cr
        {start_pool}
        print(pool.announce_dir, flush=True)
        time.sleep(600)
    """)
    interpreter = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE,
                                   text=True)
    try:
        pool_dir = interpreter.stdout.readline().strip()
        assert pool_dir.startswith(str(directory)), "the pool did not start"
        assert len(processes_naming(pool_dir)) >= 3
        interpreter.kill()
        interpreter.wait(30)
        # The executors stop at once when idle: well within their 5 s grace.
        wait_for(lambda: processes_naming(pool_dir) == [], 10,
                 "the launcher and its executors to end with their interpreter")
        wait_for(lambda: not os.path.exists(pool_dir), 5, "the pool's directory to go")
    finally:
        if interpreter.poll() is None:
            interpreter.kill()


@needs_mpirun
def test_pool_ends_with_an_interpreter_killed_hard(executor_bin, tmp_path):
    """SIGKILL gives the interpreter no chance to close its pool: the
    lifeline mpirun runs under ends mpirun, and mpirun its executors."""
    pool_of_a_killed_interpreter(
        f"pool = cr.mpirun_pool(2, executor_bin={executor_bin!r}, announce_dir={str(tmp_path)!r})",
        tmp_path)


def test_a_missing_launcher_names_its_package():
    with pytest.raises(cr.Error, match="mpirun='no-such-mpirun'.*openmpi-bin"):
        cr.mpirun_pool(2, mpirun="no-such-mpirun")
    with pytest.raises(cr.Error, match="srun='no-such-srun'.*slurm-client"):
        cr.srun_pool(2, srun="no-such-srun")


def test_a_pool_needs_members():
    for n in (0, -1, 2.0, True):
        with pytest.raises(cr.BadArgument, match="positive int"):
            cr.srun_pool(n)


def test_srun_command_line(executor_bin):
    launcher = cluster._srun_argv("/usr/bin/srun", 8, ["--overlap"])
    executor = cluster._executor_argv(executor_bin, "0.0.0.0", "/shared/pool", ["--workers", 2])
    assert launcher + executor == [
        "/usr/bin/srun", "-n", "8", "--kill-on-bad-exit=0", "--overlap",
        executor_bin, "--bind", "0.0.0.0:0", "--announce", "/shared/pool", "--workers", "2",
    ]


# cluster.SlurmTest.PythonsSrunPoolServesAndEndsWithIt brings a Slurm
# cluster up on this machine and runs this test in it, naming in
# CATALYST_REMOTE_TEST_SLURM a folder of the cluster's for announcements.
@pytest.mark.skipif("CATALYST_REMOTE_TEST_SLURM" not in os.environ,
                    reason="needs a Slurm cluster: cluster.SlurmTest runs it in one")
def test_map_over_a_pool_srun_started(executor_bin, kernels):
    pool = cr.srun_pool(4, executor_bin=executor_bin, extra_args=["-J", "python-srun-pool"],
                        announce_dir=os.environ["CATALYST_REMOTE_TEST_SLURM"], ready_timeout=60)
    directory = pool.announce_dir
    with pool:
        assert len(announcements(directory)) == 4
        check_map_sweep(pool, kernels, 4)
    assert not os.path.exists(directory)
    # Slurm's step daemons end the executors after srun has gone.
    wait_for(lambda: processes_naming(directory) == [], 15, "the executors to end with the pool")


@pytest.mark.skipif("CATALYST_REMOTE_TEST_SLURM" not in os.environ,
                    reason="needs a Slurm cluster: cluster.SlurmTest runs it in one")
def test_srun_pool_ends_with_an_interpreter_killed_hard(executor_bin):
    """As under mpirun: srun, sent SIGTERM by the lifeline, ends its step."""
    directory = os.environ["CATALYST_REMOTE_TEST_SLURM"]
    pool_of_a_killed_interpreter(
        f"pool = cr.srun_pool(2, executor_bin={executor_bin!r}, announce_dir={directory!r}, "
        f"extra_args=['-J', 'python-srun-killed'], ready_timeout=60)", directory)
