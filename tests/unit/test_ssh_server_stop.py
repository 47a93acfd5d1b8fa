"""Stopping an SSH testbed's iperf3 server by its pid file (testbed/ssh_restore.py stop_server): an iperf3 that
outlives TERM gets KILL, and one that outlives both is never reported stopped (its journal entry stays open).
The host is a FakeExecutor answering `ps -p PID -o comm=` as procps does: the command name, exit 0, while the
process exists; nothing, exit 1, once it is gone (ps(1))."""

import itertools

import pytest

from linerate.errors import LinerateError
from linerate.exec.fake import FakeExecutor
from linerate.testbed.ssh_restore import stop_server

PIDFILE = "/tmp/linerate-k3y-scratch/iperf3-5201.pid"


def server_host(dies_on: set[str]) -> FakeExecutor:
    host = FakeExecutor("server")
    host.running = True
    host.respond_with(["cat", PIDFILE], lambda argv: (0, "4242\n", "") if host.running else (1, "", "No such file"))
    host.respond_with(["ps", "-p"], lambda argv: (0, "iperf3\n", "") if host.running else (1, "", ""))

    def kill(argv):
        if argv[2] in dies_on:
            host.running = False
        return 0, "", ""
    host.respond_with(["kill", "-s"], kill)
    host.respond(["rm", "-f", PIDFILE])
    return host


def stop(host: FakeExecutor) -> str:
    ticks = itertools.count(0, 0.5)
    return stop_server(host, PIDFILE, clock=lambda: next(ticks), sleep=lambda s: None)


def test_an_iperf3_that_ends_on_term_is_stopped_by_term_alone():
    host = server_host({"TERM"})
    assert stop(host) == "stopped pid 4242"
    assert ("kill", "-s", "KILL", "4242") not in host.calls and ("rm", "-f", PIDFILE) in host.calls


def test_an_iperf3_that_outlives_term_gets_kill():
    host = server_host({"KILL"})
    assert stop(host) == "stopped pid 4242 (KILL after 5 s of TERM)" and not host.running
    assert host.calls.index(("kill", "-s", "TERM", "4242")) < host.calls.index(("kill", "-s", "KILL", "4242"))


def test_an_iperf3_that_outlives_kill_is_not_reported_stopped():
    host = server_host(set())
    with pytest.raises(LinerateError, match="still running after TERM and KILL"):
        stop(host)
    assert ("rm", "-f", PIDFILE) not in host.calls  # the pid file stays: the next restore tries again
