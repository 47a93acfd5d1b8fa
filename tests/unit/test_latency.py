"""Latency under load: fping's -C output (real captures, tests/data/fping), the RTT summary, the
probes' place in a trial (idle before the load, loaded inside the measured window), reports."""

import time

import pytest

from linerate.diagnose.facts import cell_facts
from linerate.diagnose.rules import diagnose
from linerate.errors import ConfigError, ParseError
from linerate.exec import FakeExecutor
from linerate.experiment.config import parse_experiment
from linerate.model import TrialParams
from linerate.stats import summarize as summarize_cell
from linerate.traffic import latency
from linerate.trial import run_trial, window_offsets
from tests.conftest import capture, read_data

SERVER = "198.19.0.2"


def fping_output(name: str) -> str:
    return "".join(line for line in capture(f"fping/{name}").splitlines(keepends=True) if not line.startswith("#"))


def test_parse_idle_and_loaded_captures():
    idle = latency.parse_fping(fping_output("ipv4_idle.txt"), SERVER)
    assert len(idle) == 30 and idle[0] == 0.079 and None not in idle
    loaded = latency.parse_fping(fping_output("ipv4_loaded_cubic.txt"), SERVER)
    assert len(loaded) == 100 and loaded[0] == 25.7 and min(loaded) > 20
    v6 = latency.parse_fping(fping_output("ipv6_idle.txt"), "2001:2:0:2::2")
    assert len(v6) == 30 and max(v6) < 1


def test_unanswered_probes_are_kept_as_lost():
    samples = latency.parse_fping(fping_output("ipv4_loaded_some_late.txt"), SERVER, 60)
    assert len(samples) == 60 and samples.count(None) == 9 and samples[-1] == 23.7
    summary = latency.summarize(samples)
    assert (summary.sent, summary.lost) == (60, 9)
    assert len(latency.parse_fping(fping_output("ipv4_loaded_some_late.txt"), SERVER)) == 61  # as printed
    none = latency.summarize(latency.parse_fping(fping_output("ipv4_unanswered.txt"), "198.19.0.9"))
    assert (none.sent, none.lost, none.p50_ms, none.max_ms) == (10, 10, None, None)


def test_parse_rejects_other_addresses_and_empty_output():
    with pytest.raises(ParseError, match="no RTT line for 198.19.0.3"):
        latency.parse_fping(fping_output("ipv4_idle.txt"), "198.19.0.3")
    with pytest.raises(ParseError, match="no output"):
        latency.parse_fping("", SERVER)
    with pytest.raises(ParseError, match="Name or service"):
        latency.parse_fping("fping: Name or service not known\n", SERVER)


def test_percentiles_interpolate_between_ranks_and_ignore_lost_probes():
    summary = latency.summarize([4.0, None, 1.0, 3.0, 2.0, None])
    assert (summary.sent, summary.lost, summary.max_ms) == (6, 2, 4.0)
    assert (summary.p50_ms, summary.p90_ms, summary.p99_ms) == pytest.approx((2.5, 3.7, 3.97))
    one = latency.summarize([0.05])
    assert one.p50_ms == one.p99_ms == one.max_ms == 0.05
    loaded = latency.summarize(latency.parse_fping(fping_output("ipv4_loaded_cubic.txt"), SERVER))
    assert 20 < loaded.p50_ms <= loaded.p90_ms <= loaded.p99_ms <= loaded.max_ms < 30


def test_fping_argv_and_probe_count():
    assert latency.fping_argv("2001:2:0:2::2", 6, 345) == [
        "fping", "-6", "-C", "345", "-p", "10", "-q", "-t", "1000", "2001:2:0:2::2"]
    assert latency.probe_count(3.45) == 345 and latency.probe_count(0.001) == 1


def probing_client(iperf3_seconds: float) -> tuple[FakeExecutor, list]:
    """iperf3 that runs for a while, fping that answers with the idle or the loaded capture; every
    call is timed, so the test can see when each probe ran."""
    times = []

    def iperf3(argv):
        times.append(("iperf3", time.monotonic()))
        time.sleep(iperf3_seconds)
        return 0, read_data("iperf3", "tcp_forward_p1.json"), ""

    def fping(argv):
        count = int(argv[argv.index("-C") + 1])
        times.append(("fping", time.monotonic(), count))
        name = "ipv4_idle.txt" if count == latency.IDLE_PROBES else "ipv4_loaded_cubic.txt"
        return 0, "", fping_output(name)

    return FakeExecutor("client").respond_with(["iperf3"], iperf3).respond_with(["fping"], fping), times


def test_trial_probes_idle_before_the_load_and_loaded_inside_the_window():
    client, times = probing_client(1.5)
    params = TrialParams(duration_s=1, omit_s=0, latency=True)
    trial = run_trial(client, None, params, SERVER)
    assert trial.ok, trial.error
    assert [t[0] for t in times] == ["fping", "iperf3", "fping"]
    first_at, second_at = window_offsets(params)
    launched = times[1][1]
    assert times[2][1] - launched == pytest.approx(first_at, abs=0.1)
    assert times[2][2] == latency.probe_count(second_at - first_at)
    assert client.calls[0] == tuple(latency.fping_argv(SERVER, 4, latency.IDLE_PROBES))
    assert trial.rtt_idle_sent == 30 and trial.rtt_idle_p50_ms < 0.1  # the capture holds 30 probes
    # fping is asked for the window's probes (~50); the recorded answer holds 100: only those are counted
    assert trial.rtt_loaded_sent == latency.probe_count(second_at - first_at) < 100 and 23 < trial.rtt_loaded_p50_ms < 27 and trial.rtt_loaded_lost == 0
    assert trial.telemetry["latency"]["loaded"][0] == 25.7 and trial.telemetry["latency"]["interval_ms"] == 10
    assert trial.to_dict()["latency"] is True


def test_trial_without_fping_fails_and_says_why():
    client = FakeExecutor("client").respond(["iperf3"], read_data("iperf3", "tcp_forward_p1.json"))
    client.respond(["fping"], "", returncode=127, stderr="bash: fping: command not found")
    trial = run_trial(client, None, TrialParams(duration_s=1, omit_s=0, latency=True), SERVER)
    assert not trial.ok and trial.error.startswith("latency probe (idle)") and "command not found" in trial.error
    assert [call[0] for call in client.calls] == ["fping"]  # no load is sent when the probe cannot run


def test_a_load_that_ends_before_the_window_fails_a_latency_trial():
    client, times = probing_client(0.0)
    trial = run_trial(client, None, TrialParams(duration_s=1, omit_s=1, latency=True), SERVER)
    assert not trial.ok and "ended before the measured window" in trial.error
    assert [t[0] for t in times] == ["fping", "iperf3"]


def test_trials_without_latency_run_no_probe():
    client, times = probing_client(0.0)
    trial = run_trial(client, None, TrialParams(duration_s=1, omit_s=0), SERVER)
    assert trial.ok and trial.rtt_idle_sent is None and [t[0] for t in times] == ["iperf3"]


def test_latency_in_experiment_files_and_params():
    experiment = parse_experiment('name = "bloat"\nlatency = true\n[axes]\nfirewall = ["none", "stateful"]\n')
    assert all(cell["latency"] is True for cell in experiment.cells())
    with pytest.raises(ConfigError, match="latency"):
        parse_experiment('name = "bloat"\nlatency = "yes"\n')
    with pytest.raises(ConfigError, match="latency"):
        TrialParams(latency=1)


def test_cell_summary_and_facts_carry_rtt():
    summary = summarize_cell([941e6, 940e6], rtt={"rtt_loaded_p50_ms": [24.0, 26.0], "rtt_idle_p50_ms": [None, 0.1]})
    assert summary.rtt_loaded_p50_ms_mean == 25.0 and summary.rtt_idle_p50_ms_mean == 0.1
    assert summary.rtt_loaded_p99_ms_mean is None
    facts = cell_facts({"streams": 1}, [], mean_bps=941e6, retransmits=0, ceiling_bps=941.48e6,
                       line_rate_source="emulated", flags=(), rtt_idle_p50_ms=summary.rtt_idle_p50_ms_mean,
                       rtt_loaded_p50_ms=summary.rtt_loaded_p50_ms_mean)
    assert [v.code for v in diagnose(facts) if v.code == "queue-under-load"] == ["queue-under-load"]
