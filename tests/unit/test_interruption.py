"""A termination signal ends a run at the next safe point, whatever code it lands in: the
SIGTERM/SIGHUP handler raises errors.Interrupted, a BaseException, which no best-effort handler
(`except LinerateError`, `except Exception`) may swallow. Each best-effort read below gets a host
that sends SIGTERM to this very process while it is being read."""

import io
import os
import signal
import subprocess
import sys
from types import SimpleNamespace

import pytest

from linerate.cli import main
from linerate.dut.linux import LinuxDriver
from linerate.errors import Interrupted, LinerateError
from linerate.exec import FakeExecutor
from linerate.kinds.base import read_or_empty
from linerate.lab.signals import terminations_raise
from linerate.testbed.fingerprint import host_fingerprint
from linerate.trial import measure_read_cost_or_none


class SignalledHost(FakeExecutor):
    """A host whose every command is interrupted by a signal to this process."""

    def __init__(self, signum: int = signal.SIGTERM):
        super().__init__("signalled")
        self.signum = signum

    def run(self, argv, **kwargs):
        os.kill(os.getpid(), self.signum)
        return super().run(argv, **kwargs)

    def run_many(self, argvs, **kwargs):
        os.kill(os.getpid(), self.signum)
        return super().run_many(argvs, **kwargs)


def failing_read() -> dict:
    raise LinerateError("the DUT did not answer")


BEST_EFFORT_READS = {
    "read_or_empty": lambda host: read_or_empty(lambda: LinuxDriver().state_counters(host))(),
    "measure_read_cost_or_none": lambda host: measure_read_cost_or_none(LinuxDriver(), host),
    "host_fingerprint": lambda host: host_fingerprint(host, LinuxDriver(), ("eth0",)),
    "dut_snapshot": lambda host: LinuxDriver().snapshot(host),
    "link_speed": lambda host: LinuxDriver().link_speed_mbps(host, "eth0"),
}


@pytest.mark.parametrize("read", BEST_EFFORT_READS.values(), ids=BEST_EFFORT_READS.keys())
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP])
def test_a_signal_inside_a_best_effort_read_stops_the_run(read, signum):
    with pytest.raises(Interrupted) as stopped:
        with terminations_raise():
            read(SignalledHost(signum))
    assert stopped.value.exit_code == 128 + signum


def test_best_effort_reads_still_absorb_real_failures_and_say_why():
    read = read_or_empty(failing_read, "the DUT's counters")
    assert read() == {} and read.take_missing() == ["the DUT's counters: the DUT did not answer"]


def test_interrupted_is_no_error_any_handler_catches():
    assert not issubclass(Interrupted, Exception)


def test_the_cli_exits_with_the_signals_code(monkeypatch, capsys):
    def stopped(args):
        raise Interrupted("stopped by SIGTERM; what was created was removed", signal.SIGTERM)

    monkeypatch.setattr("linerate.cli.build_parser", lambda words: _parser_calling(stopped))
    assert main(["calc"]) == 143
    assert capsys.readouterr().err.strip() == "linerate: stopped by SIGTERM; what was created was removed"


def _parser_calling(handler):
    import argparse

    parser = argparse.ArgumentParser()
    parser.set_defaults(handler=handler)
    parser.add_argument("command")
    return parser


@pytest.mark.parametrize("sig,raised", [(signal.SIGTERM, Interrupted), (signal.SIGHUP, Interrupted),
                                        (signal.SIGINT, KeyboardInterrupt)])
def test_a_signal_inside_a_restore_waits_until_it_has_finished(sig, raised):
    """Putting a DUT's knobs back must not be cut in half: the signal is held, every step runs, then it is
    raised; an error of the block's own goes on unchanged."""
    from linerate.lab.signals import terminations_deferred

    steps = []
    with pytest.raises(raised):
        with terminations_deferred():
            os.kill(os.getpid(), sig)
            steps += ["ttl back", "tso back", "server stopped"]
    assert steps == ["ttl back", "tso back", "server stopped"]
    with pytest.raises(ValueError):
        with terminations_deferred():
            os.kill(os.getpid(), sig)
            raise ValueError("the block's own")
    assert signal.getsignal(signal.SIGTERM) is not None


@pytest.mark.parametrize("sig,raised", [(signal.SIGTERM, Interrupted), (signal.SIGINT, KeyboardInterrupt)])
def test_a_signal_while_a_namespace_lab_is_removed_waits_for_the_removal_then_ends_the_run(sig, raised):
    """A signal during a lab's removal is neither allowed to cut it in half nor lost: the lab is removed,
    then the run ends as it would have (a lost SIGTERM let a multi-lab run go on to its next lab)."""
    import contextlib
    import time

    from linerate.testbed.namespace import NamespaceTestbed

    bed = NamespaceTestbed.__new__(NamespaceTestbed)
    bed._signals = contextlib.ExitStack()
    removed = []

    def down():
        os.kill(os.getpid(), sig)
        time.sleep(0.05)
        removed.append("every namespace")

    bed.up, bed.down = (lambda: bed), down
    before = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT)}
    with pytest.raises(raised):
        with bed:
            pass
    assert removed == ["every namespace"]
    assert {s: signal.getsignal(s) for s in before} == before


@pytest.mark.parametrize("sig,raised", [(signal.SIGTERM, Interrupted), (signal.SIGHUP, Interrupted),
                                        (signal.SIGINT, KeyboardInterrupt)])
def test_a_signal_while_lab_up_builds_removes_the_half_built_lab_and_keeps_nothing(sig, raised):
    from linerate.cli.lab_cmds import up_and_kept

    # Python's own SIGINT handler, as an interactive shell gives it: a job started in the background (CI's
    # `.ci/run < /dev/null &`) inherits SIGINT ignored, which linerate honours
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)

    done = []

    class HalfBuilt:
        class registry:
            @staticmethod
            def keep(record):
                done.append("kept")

        record = None

        def up(self):
            done.append("first namespace")
            os.kill(os.getpid(), sig)
            done.append("second namespace")

        def down(self):
            os.kill(os.getpid(), sig)  # a second signal does not cut the removal short
            done.append("removed")

    try:
        with pytest.raises(raised):
            up_and_kept(HalfBuilt())
    finally:
        signal.signal(signal.SIGINT, previous)
    assert done == ["first namespace", "removed"]


@pytest.mark.parametrize("command, code", [("report", 0), ("list", 0), ("run", 141), ("tune", 141), ("cps", 141),
                                           ("testbed", 141)])
def test_a_closed_output_pipe_ends_a_measuring_command_as_not_finished(monkeypatch, capsys, command, code):
    """`linerate run … | head -2`: the reader leaves, the next print raises BrokenPipeError. A command that
    only prints loses nothing (0, as `report | head` should); one that measures or changes something
    stopped part-way and must not look finished."""
    def closed(args):
        raise BrokenPipeError

    monkeypatch.setattr("linerate.cli.build_parser", lambda words: _parser_calling(closed))
    monkeypatch.setattr(sys, "stderr", io.StringIO())
    said = sys.stderr
    monkeypatch.setattr(said, "close", lambda: None)
    assert main([command]) == code
    assert ("--resume" in said.getvalue()) == (code == 141)


def test_a_second_signal_during_a_clean_up_lets_every_clean_up_after_it_run():
    """A double Ctrl-C or two TERMs: the second arrives while the first one's clean-ups run. It must
    neither cut the clean-up it lands in (held) nor skip the ones after it (not raised again: the
    command is already ending); outside such an unwinding, a held signal still ends the command."""
    import time

    from linerate.lab.signals import terminations_deferred

    steps = []
    with terminations_raise(), pytest.raises(Interrupted):
        try:
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(1)  # the first signal raises here
        finally:
            with terminations_deferred():
                os.kill(os.getpid(), signal.SIGTERM)
                steps.append("nginx stopped")
            steps.append("DUT knobs restored")
    assert steps == ["nginx stopped", "DUT knobs restored"]
    with terminations_raise(), pytest.raises(Interrupted):
        with terminations_deferred():
            os.kill(os.getpid(), signal.SIGTERM)
            steps.append("a restore not cut in half")
    assert steps[-1] == "a restore not cut in half"


def test_a_signal_while_nginx_stops_waits_until_it_is_stopped_and_its_directory_gone():
    from linerate.traffic.nginx_server import NginxServer, ServerSpec

    host = FakeExecutor("server")
    workdir = "/tmp/linerate-0123456789abcdef-0123456789abcdef/linerate-nginx.AbC123"
    host.respond(["cat", f"{workdir}/nginx.pid"], "4242\n")
    gone = []
    host.respond_with(["ps", "-p", "4242"], lambda argv: (1, "", "") if gone else (0, "nginx\n", ""))

    def quit_then_signal(argv):
        os.kill(os.getpid(), signal.SIGTERM)  # the second signal, as nginx is asked to quit
        gone.append(True)
        return 0, "", ""

    host.respond_with(["kill", "-QUIT"], quit_then_signal)
    server = NginxServer(host, {4: "198.19.0.2"}, ServerSpec((1024,)), workdir=workdir, sleep=lambda s: None)
    with terminations_raise(), pytest.raises(Interrupted):
        server.stop()
    assert ("rm", "-rf", "--", workdir) in host.calls and server.stopped


def test_a_signal_in_a_clean_up_nested_in_another_waits_for_the_outer_one():
    """A counting table and its journal entry go together: a signal while the table is dropped (an inner
    deferred block) must not skip the journal step after it (the outer block's)."""
    from linerate.lab.signals import terminations_deferred

    steps = []
    with terminations_raise(), pytest.raises(Interrupted):
        with terminations_deferred():
            with terminations_deferred():
                os.kill(os.getpid(), signal.SIGTERM)
                steps.append("table dropped")
            steps.append("journal entry closed")
    assert steps == ["table dropped", "journal entry closed"]


class SignalledAt(FakeExecutor):
    """A host that interrupts this process while it runs the command starting with `prefix` (after the
    command itself has done its work, as a signal landing while a remote `nft create table` returns)."""

    def __init__(self, prefix: tuple[str, ...]):
        super().__init__("server")
        self.prefix = prefix

    def run(self, argv, **kwargs):
        result = super().run(argv, **kwargs)
        if tuple(argv[:len(self.prefix)]) == self.prefix:
            os.kill(os.getpid(), signal.SIGTERM)
        return result


def test_a_signal_as_the_rfc2544_counting_table_is_made_drops_it_again():
    from linerate.search.frame_path import COUNT_TABLE, FramePath

    server = SignalledAt(("nft", "create", "table")).respond(["nft"], "")
    path = FramePath.__new__(FramePath)
    path.server, path.family, path.flow, path.sender = server, 4, None, None
    with pytest.raises(Interrupted):
        with terminations_raise():
            path.__enter__()
    assert ("nft", "delete", "table", "inet", COUNT_TABLE) in server.calls and not path.table_left


def test_a_signal_as_the_rfc9693_counting_table_or_capture_is_made_removes_them_again():
    from linerate.search.state_path import COUNT_TABLE, StatePath

    for prefix in (("nft", "create", "table"), ("mktemp",)):
        host = SignalledAt(prefix).respond(["trafgen", "--version"], "trafgen 0.6.8\n")
        host.respond(["mktemp"], "/tmp/linerate-rfc9693.abc123.pcap\n").respond(["nft"], "")
        path = StatePath.__new__(StatePath)
        path.client = path.server = host
        path.family, path.forward = 4, SimpleNamespace(src_ip="198.18.0.2", dst_ip="198.19.0.2", port=5201)
        with pytest.raises(Interrupted):
            with terminations_raise():
                path.__enter__()
        made = [call for call in host.calls if call[:3] == ("nft", "create", "table") or call[:1] == ("mktemp",)]
        removed = [call for call in host.calls if call[:4] == ("nft", "delete", "table", "inet") or call[:2] == ("rm", "-f")]
        assert made and len(removed) == len(made), (prefix, host.calls)
        assert ("nft", "delete", "table", "inet", COUNT_TABLE) in host.calls


IGNORED_AT_START = """
import os, signal, sys, time
from linerate.errors import Interrupted
from linerate.lab.signals import terminations_deferred, terminations_raise
signal.signal(signal.SIGHUP, signal.SIG_IGN)  # as nohup(1) starts it
signal.signal(signal.SIGINT, signal.SIG_IGN)  # as a non-interactive shell starts a background job
with terminations_raise():
    for sig in (signal.SIGHUP, signal.SIGINT):
        with terminations_deferred():
            os.kill(os.getpid(), sig)
        os.kill(os.getpid(), sig)
    time.sleep(0.1)
    print("ran on", flush=True)
    try:
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(5)
    except Interrupted as exc:
        sys.exit(exc.exit_code)
"""


def test_a_hangup_or_interrupt_ignored_at_start_stays_ignored_and_sigterm_still_ends_the_run():
    """nohup and a shell's background job start a command with SIGHUP / SIGINT ignored, to keep it running;
    linerate keeps that, and SIGTERM (systemd, timeout, kill) still ends it with 143."""
    proc = subprocess.run([sys.executable, "-c", IGNORED_AT_START], capture_output=True, text=True, timeout=30)
    assert proc.stdout == "ran on\n" and proc.returncode == 143, (proc.stdout, proc.stderr)
