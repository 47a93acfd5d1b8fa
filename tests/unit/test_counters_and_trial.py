import math
import time

import pytest

from linerate import counters
from linerate.exec import FakeExecutor
from linerate.model import TrialParams
from linerate.dut.linux import (CONNTRACK_ARGV, INTERRUPTS_ARGV, LINK_STATS_ARGV, NSTAT_ARGV, PROC_STAT_ARGV,
                                QDISC_STATS_ARGV, SOFTNET_ARGV)
from linerate.trial import READ_COST_FACTOR, needed_duration_s, run_trial, window_offsets, window_problem
from tests.conftest import capture, read_data


def test_link_stats_and_nstat_parse_recorded_output():
    links = counters.parse_link_stats(read_data("ip", "dut_link_stats.json"))
    assert "lan0_rx_packets" in links and "wan0_tx_packets" in links
    assert not any(key.startswith("lo_") for key in links)
    snmp = counters.parse_nstat(read_data("nstat", "dut_nstat.json"))
    assert snmp["ipv4_forwarded"] > 0


def test_delta_sums_forwarded_and_drops():
    before = {"ipv4_forwarded": 10, "ipv6_forwarded": 5, "lan0_rx_dropped": 1, "ipv4_in_discards": 0}
    after = {"ipv4_forwarded": 110, "ipv6_forwarded": 5, "lan0_rx_dropped": 4, "ipv4_in_discards": 2}
    d = counters.delta(before, after)
    assert d["forwarded_packets"] == 100
    assert d["dropped_packets"] == 5


def make_dut(forwarded_after: int) -> FakeExecutor:
    """Full reads before and after the run (counters), two window reads in between (CPU, interrupts)."""
    dut = FakeExecutor("dut")
    dut.respond(LINK_STATS_ARGV, read_data("ip", "dut_link_stats.json"))
    calls = iter([0, forwarded_after])
    dut.respond_with(NSTAT_ARGV, lambda argv: (0, '{"kernel": {"IpForwDatagrams": %d}}' % next(calls), ""))
    # recorded here: the DUT of a 100 Mbit/s lab after a 1 Gbit/s UDP trial
    qdiscs = iter(["[]", read_data("tc", "qdisc_all_udp_overload.json")])
    dut.respond_with(QDISC_STATS_ARGV, lambda argv: (0, next(qdiscs), ""))
    # full before, window 1, window 2, full after
    stats = iter(["cpu0 0 0 0 0 0 0 0 0\ncpu1 0 0 0 0 0 0 0 0\n",
                  "cpu0 10 0 10 100 0 0 0 0\ncpu1 0 0 0 100 0 0 0 0\n",
                  "cpu0 10 0 10 100 0 0 80 0\ncpu1 0 0 0 200 0 0 0 0\n",
                  "cpu0 20 0 20 200 0 0 90 0\ncpu1 0 0 0 300 0 0 0 0\n"])
    dut.respond_with(PROC_STAT_ARGV, lambda argv: (0, next(stats), ""))
    irqs = iter(["  CPU0 CPU1\n 36: 0 0 PCI-MSIX virtio1-input.0\n", "  CPU0 CPU1\n 36: 5 0 PCI-MSIX virtio1-input.0\n",
                 "  CPU0 CPU1\n 36: 905 0 PCI-MSIX virtio1-input.0\n", "  CPU0 CPU1\n 36: 1000 0 PCI-MSIX virtio1-input.0\n"])
    dut.respond_with(INTERRUPTS_ARGV, lambda argv: (0, next(irqs), ""))
    dut.respond(CONNTRACK_ARGV, "", returncode=1, stderr="No such file or directory")
    dut.respond(SOFTNET_ARGV, capture("linux/softnet_stat.txt"))
    return dut


def slow_client(seconds: float) -> FakeExecutor:
    """An iperf3 that takes its time, as a real one does: the DUT is read while it runs."""
    def answer(argv):
        time.sleep(seconds)
        return 0, read_data("iperf3", "tcp_forward_p1.json"), ""
    return FakeExecutor("client").respond_with(["iperf3"], answer)


def test_telemetry_window_starts_after_the_omit_period_and_ends_before_the_run():
    start, end = window_offsets(TrialParams(duration_s=10, omit_s=2))
    assert 2.0 < start < 2.5 and 11.0 < end < 12.0
    start, end = window_offsets(TrialParams(duration_s=1, omit_s=0))
    assert 0 < start < end <= 1.0


def test_a_generator_that_ends_before_the_window_keeps_its_figure_with_partial_telemetry():
    """Issue #25: a late telemetry read never throws away a throughput the generator measured."""
    client = FakeExecutor("client").respond(["iperf3"], read_data("iperf3", "tcp_forward_p1.json"))
    trial = run_trial(client, make_dut(500), TrialParams(duration_s=1, omit_s=0), "198.19.0.2")
    assert trial.ok and trial.throughput_bps > 1e9
    dut = trial.telemetry["dut"]
    assert "ended before window read 1" in dut["partial"] and dut["window_reads"] == 0 and "cpu" not in dut
    assert trial.dut_counters["forwarded_packets"] == 500, "the full reads around the run still give counters"


def test_the_second_read_leaves_room_for_the_measured_read_cost():
    params = TrialParams(duration_s=3, omit_s=1)
    _, cheap = window_offsets(params, 0.002)
    _, dear = window_offsets(params, 0.3)
    assert dear < cheap and cheap - dear == pytest.approx((READ_COST_FACTOR * 0.3) - (0.002 + 0.05))
    assert window_problem(params, 0.002) is None
    problem = window_problem(TrialParams(duration_s=1, omit_s=0), 0.5)
    needed = needed_duration_s(0.5)  # 0.3 s of window + 0.4 s of margins + READ_COST_FACTOR x 0.5 s, rounded up
    assert needed == math.ceil(0.3 + 0.4 + READ_COST_FACTOR * 0.5) and f"use duration_s >= {needed}" in problem
    assert needed_duration_s(0.02) == 1
    assert window_problem(TrialParams(duration_s=needed_duration_s(0.5), omit_s=0), 0.5) is None


def test_run_trial_with_fake_executors():
    client = slow_client(1.0)
    trial = run_trial(client, make_dut(500), TrialParams(duration_s=1, omit_s=0), "198.19.0.2")
    assert trial.ok and trial.throughput_bps > 1e9
    assert trial.dut_counters["forwarded_packets"] == 500
    # the shaper's drops (root tbf of wan0, which counts its child's) and wire frames of both ports
    assert trial.dut_counters["shaper_dropped"] == 310464
    assert trial.dut_counters["wire_frames"] == 18 + 34783
    assert trial.dut_counters["dropped_packets"] >= 310464
    assert client.calls[0][:3] == ("iperf3", "--client", "198.19.0.2")
    # the DUT's CPU split over the window: cpu0 all softirq, cpu1 idle; the NIC queue's interrupts
    cpu0, cpu1 = trial.telemetry["dut"]["cpu"]
    assert cpu0["softirq_pct"] == 100.0 and cpu1["busy_pct"] == 0.0
    assert trial.telemetry["dut"]["interrupts"] == {"virtio1-input.0": 900}
    assert trial.telemetry["dut"]["unavailable"] == ["conntrack count (nf_conntrack not loaded)"]
    assert 0.3 < trial.telemetry["dut"]["window_s"] < 0.8
    assert trial.telemetry["dut"]["window_reads"] == 2 and "partial" not in trial.telemetry["dut"]
    assert trial.dut_counters["softnet_dropped"] == 0
    assert "### linerate: cat /proc/stat" in trial.telemetry_raw["dut"]["before"]
    assert "### linerate: ip -j -s link show" not in trial.telemetry_raw["dut_window"]["before"], \
        "only files are read inside the window"


def test_run_trial_keeps_the_figure_when_the_dut_cannot_be_read():
    dut = FakeExecutor("dut")  # answers nothing: like a dropped connection
    trial = run_trial(slow_client(0.5), dut, TrialParams(duration_s=1, omit_s=0), "198.19.0.2")
    assert trial.ok and trial.throughput_bps > 1e9
    partial = trial.telemetry["dut"]["partial"]
    assert "DUT counters before the run" in partial and "window read 1" in partial
    assert trial.dut_counters == {}


def test_run_trial_error_exit0_is_failed():
    client = FakeExecutor().respond(["iperf3"], read_data("iperf3", "error_connection_refused_rc0.json"))
    trial = run_trial(client, None, TrialParams(), "198.19.0.2")
    assert trial.status == "failed" and "Connection refused" in trial.error


def test_run_trial_without_output_keeps_stderr():
    client = FakeExecutor().respond(["iperf3"], "", returncode=1, stderr="iperf3: unrecognized option")
    trial = run_trial(client, None, TrialParams(), "198.19.0.2")
    assert trial.status == "failed" and "unrecognized option" in trial.error


def test_fake_executor_longest_prefix_and_check():
    fake = FakeExecutor().respond(["ip"], "short").respond(["ip", "-j"], "long")
    assert fake.run(["ip", "-j", "link"]).stdout == "long"
    assert fake.run(["ip", "link"]).stdout == "short"
    from linerate.errors import ExecError
    with pytest.raises(ExecError):
        fake.run(["unknown"])


def test_a_window_read_that_ends_after_the_traffic_is_not_used():
    """A second read slowed by a loaded DUT past the generator's end would average idle time in."""
    dut = make_dut(500)
    calls = {"n": 0}
    stats = ["cpu0 0 0 0 0 0 0 0 0\n", "cpu0 10 0 10 100 0 0 0 0\n", "cpu0 10 0 10 100 0 0 80 0\n",
             "cpu0 20 0 20 200 0 0 90 0\n"]

    def slow_second_window_read(argv):
        calls["n"] += 1
        if calls["n"] == 3:
            time.sleep(1.0)  # planned before the end, still running when iperf3 is done
        return 0, stats[min(calls["n"], 4) - 1], ""
    dut.respond_with(PROC_STAT_ARGV, slow_second_window_read)
    trial = run_trial(slow_client(1.2), dut, TrialParams(duration_s=1, omit_s=0), "198.19.0.2", read_cost_s=0.002)
    assert trial.ok and trial.throughput_bps > 1e9
    assert trial.telemetry["dut"]["window_reads"] == 1 and "midpoint came after iperf3 ended" in trial.telemetry["dut"]["partial"]


def test_a_first_read_slow_under_load_moves_the_second_earlier():
    """A DUT read over SSH into a busy one-vCPU guest took 1.1-1.3 s under load and 0.3 s idle: the second
    read, placed by the idle cost, ended after iperf3 did and the trial lost its CPU split."""
    from linerate.trial import latest_second_read

    params = TrialParams(duration_s=3, omit_s=1)
    _, planned = window_offsets(params, 0.3)
    assert latest_second_read(params, 1.2) < planned < latest_second_read(params, 0.1)
    assert latest_second_read(params, 1.2) + 1.2 * 1.5 / 2 <= 0.3 + 1 + 3  # half as slow again: midpoint in time

    dut = make_dut(500)
    slow = iter([0.8, 0.8])  # both window reads, under load

    def stat(argv, answers=iter(["cpu0 0 0 0 0 0 0 0 0\n", "cpu0 10 0 10 100 0 0 0 0\n",
                                 "cpu0 10 0 10 100 0 0 80 0\n", "cpu0 20 0 20 200 0 0 90 0\n"])):
        text = next(answers)
        if text.startswith("cpu0 10 0 10 100"):
            time.sleep(next(slow, 0))
        return 0, text, ""

    dut.respond_with(PROC_STAT_ARGV, stat)
    trial = run_trial(slow_client(2.2), dut, TrialParams(duration_s=2, omit_s=0), "198.19.0.2", read_cost_s=0.05)
    assert trial.telemetry["dut"]["window_reads"] == 2, trial.telemetry
