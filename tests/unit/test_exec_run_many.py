"""Executor.run_many: several fixed commands, one result each, in one process where the host allows."""

import os
import subprocess

import pytest

from linerate.errors import ExecError
from linerate.exec import Executor, FakeExecutor, LocalExecutor, NetnsExecutor
from linerate.exec.ssh import SshExecutor


def test_every_executor_satisfies_the_protocol_with_run_many():
    assert isinstance(LocalExecutor(), Executor) and isinstance(NetnsExecutor("lr-x-dut"), Executor)
    assert isinstance(FakeExecutor(), Executor)
    assert callable(getattr(SshExecutor, "run_many"))


def test_local_run_many_splits_outputs_statuses_and_quoting():
    host = LocalExecutor()
    echo, failed, odd, empty = host.run_many([["echo", "hi there"], ["sh", "-c", "echo oops >&2; exit 3"],
                                              ["printf", "%s", "a; rm -rf /tmp/x $(id)"], ["true"]])
    assert echo.argv == ("echo", "hi there") and echo.stdout == "hi there\n" and echo.returncode == 0
    assert echo.stderr == "" and echo.host == "localhost"
    assert failed.returncode == 3 and "oops" in failed.stderr  # stderr comes back with the failed command
    assert odd.stdout == "a; rm -rf /tmp/x $(id)"  # an argument stays one argument, never shell code
    assert empty.stdout == "" and empty.returncode == 0


def test_local_run_many_is_one_process(monkeypatch):
    started = []
    real = subprocess.Popen

    def counting(argv, **kwargs):
        started.append(list(argv))
        return real(argv, **kwargs)

    monkeypatch.setattr(subprocess, "Popen", counting)
    results = LocalExecutor().run_many([["echo", "a"], ["echo", "b"], ["echo", "c"]])
    assert [r.stdout for r in results] == ["a\n", "b\n", "c\n"]
    assert len(started) == 1 and started[0][:2] == ["sh", "-c"]


def test_netns_run_many_runs_the_batch_inside_the_namespace(monkeypatch):
    """One `ip netns exec NS [taskset] sh -c SCRIPT`; run here without the namespace prefix."""
    started = []
    real = subprocess.Popen

    def without_netns(argv, **kwargs):
        started.append(list(argv))
        assert argv[:4] == ["ip", "netns", "exec", "lr-t1-dut"] and argv[4:7] == ["taskset", "--cpu-list", "0"]
        return real(argv[7:], **kwargs)

    monkeypatch.setattr(subprocess, "Popen", without_netns)
    host = NetnsExecutor("lr-t1-dut", (0,))
    first, second = host.run_many([["echo", "x y"], ["sh", "-c", "exit 2"]])
    assert len(started) == 1 and started[0][7:9] == ["sh", "-c"]
    assert first.stdout == "x y\n" and first.host == "netns:lr-t1-dut" and second.returncode == 2


def test_local_run_many_timeout_raises():
    with pytest.raises(ExecError):
        LocalExecutor().run_many([["sleep", "5"]], timeout_s=0.2)


def test_fake_run_many_replays_each_argv_in_order():
    fake = FakeExecutor().respond(["uname"], "Linux\n").respond(["cat"], returncode=1, stderr="no such file")
    uname, cat, unknown = fake.run_many([["uname", "-s"], ["cat", "/nope"], ["missing"]], timeout_s=3)
    assert fake.calls == [("uname", "-s"), ("cat", "/nope"), ("missing",)]
    assert uname.stdout == "Linux\n" and cat.returncode == 1 and cat.stderr == "no such file"
    assert unknown.returncode == 127  # failures are results, never raised


def test_a_command_timed_out_or_stopped_takes_what_it_started_with_it(tmp_path):
    """A stop (a signal raising in linerate) or a timeout kills the command's whole process group: a
    script's children (tcpdump under GNU timeout, which leaves the group only without --foreground)
    used to run on in a kept lab."""
    import time

    marker = tmp_path / "child.pid"
    script = f"sleep 300 & echo $! > {marker}; wait"
    with pytest.raises(ExecError) as raised:
        LocalExecutor().run(["sh", "-c", script], timeout_s=1)
    assert raised.value.returncode is None  # timed out
    pid = int(marker.read_text())
    time.sleep(0.2)
    assert not os.path.exists(f"/proc/{pid}") or open(f"/proc/{pid}/stat").read().split()[2] == "Z"
