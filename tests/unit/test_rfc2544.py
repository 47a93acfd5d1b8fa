"""RFC 2544 packet-rate search: trafgen's packet description and summary (real captures), unsent vs
DUT loss, MLRsearch driven over a simulated path, every trial stored, resume by replay."""

import argparse
import math
import re

import pytest

from linerate.cli.search_cmds import frame_sizes_type
from linerate.errors import ConfigError, LinerateError, ParseError
from linerate.search.frame_path import count_ruleset, parse_count
from linerate.search.measurer import PacketTrial, unsent_frames
from linerate.kinds.rfc2544.search import SearchSettings, search_frame_size
from linerate.kinds.rfc2544.table import render_table
from linerate.testbed.lab_path import lab_description
from linerate.store import Store
from linerate.traffic import frames, trafgen
from tests.conftest import DATA, capture

FLOW4 = trafgen.FlowSpec(4, "32:14:82:f8:30:a1", "36:7b:fc:46:c0:64", "198.18.0.2", "198.19.0.2", dst_port=5201)
FLOW6 = trafgen.FlowSpec(6, "32:14:82:f8:30:a1", "36:7b:fc:46:c0:64", "2001:2:0:1::2", "2001:2:0:2::2")


def test_packet_config_sizes_and_checks():
    config = trafgen.packet_config(FLOW4, 64)
    assert "fill(0x00, 18)" in config and "dp=5201" in config and "ipv4(saddr=198.18.0.2" in config
    assert "fill(0x00, 1472)" in trafgen.packet_config(FLOW4, 1518)  # 1518 - 4 FCS - 42 headers
    assert "fill(0x00, 18)" in trafgen.packet_config(FLOW6, 84) and "hoplimit=64" in trafgen.packet_config(FLOW6, 84)
    with pytest.raises(ConfigError, match="66 to 9018"):
        trafgen.packet_config(FLOW6, 64)
    with pytest.raises(ConfigError, match="MAC"):
        trafgen.packet_config(trafgen.FlowSpec(4, "x; rm -rf /", FLOW4.dst_mac, "198.18.0.2", "198.19.0.2"), 64)
    assert trafgen.send_argv("eth0", 1000, 500) == ["trafgen", "--dev", "eth0", "--conf", "-", "--rate", "1000pps",
                                                    "--num", "500", "--cpus", "1"]
    assert "--rate" not in trafgen.send_argv("eth0", None, 500)


def test_imix_is_csits_mix_sent_as_one_evenly_spread_cycle():
    # CSIT methodology: IPv4 28x64B, 16x570B, 4x1518B; IPv6 28x78B, 16x570B, 4x1518B
    assert frames.cycle("imix", 4) == [64, 570, 64, 64, 570, 64, 1518, 570, 64, 64, 570, 64]
    assert sorted(frames.cycle("imix", 6)) == [78] * 7 + [570] * 4 + [1518]
    assert frames.mean_bytes("imix", 4) == pytest.approx(4246 / 12) and frames.mean_bytes("imix", 6) == 362.0
    assert frames.mean_bytes(64, 4) == 64 and frames.cycle(1518, 6) == [1518] and frames.largest("imix", 4) == 1518
    config = trafgen.packet_config(FLOW4, "imix")
    fills = [int(size) for size in re.findall(r"fill\(0x00, (\d+)\)", config)]
    assert fills == [size - 4 - 42 for size in frames.cycle("imix", 4)]  # one trafgen packet per frame of the cycle
    assert config.count("eth(da=") == 12 and config.count("dp=5201") == 12
    assert [frames.label(f) for f in (64, "imix")] == ["64 B", "IMIX"]
    assert frames.describe("imix", 6) == "IMIX = 7 x 78 + 4 x 570 + 1 x 1518 B (mean 362.0 B)"
    with pytest.raises(ConfigError, match="or imix"):
        trafgen.check_frame_size("imax", 4)
    assert frame_sizes_type("64,IMIX") == [64, "imix"] and frame_sizes_type("rfc2544,imix")[-2:] == [1518, "imix"]
    with pytest.raises(argparse.ArgumentTypeError, match="imix"):
        frame_sizes_type("64,jumbo")


def test_imix_search_uses_the_mean_frame_rate(tmp_path):
    _, result = search(Store(tmp_path / "s.db"), SimulatedPath(dut_fps=10e6, generator_fps=10e6), frame="imix")
    theoretical = 1e9 / (8 * (4246 / 12 + 20))  # 334,374 frames/s of 353.8-byte mean frames
    assert result.theoretical_fps == pytest.approx(theoretical) and result.limit == "line rate"
    assert result.to_dict()["ndr_bps"] == pytest.approx(result.ndr_fps * 8 * 4246 / 12)
    table = render_table([result], lab_description({"link_rate": "1g"}), SearchSettings(), "MLRsearch 1.2.1", "simulated")
    assert re.search(r"^\s+IMIX\s+334,374\s", table, re.M) and "IMIX = 7 x 64 + 4 x 570 + 1 x 1518 B" in table


def test_trafgen_summary_from_real_runs():
    shaped = trafgen.parse(capture("trafgen/ipv4_1518_90kpps_shaped.txt"))
    assert (shaped.packets, shaped.bytes) == (270000, 408780000) and shaped.cpu_s == pytest.approx(3.318148)
    v6 = trafgen.parse(capture("trafgen/ipv6_84_1kpps.txt"))
    assert v6.packets == 1000 and v6.cpu_s == pytest.approx(1.000081)
    with pytest.raises(ParseError, match="no send summary .*Syntax error"):
        trafgen.parse("Syntax error at line 1, char 'i': syntax error\n")


def test_unsent_is_what_was_late_not_dut_loss():
    shaped = trafgen.parse(capture("trafgen/ipv4_1518_90kpps_shaped.txt"))
    # 270,000 frames meant for 3 s took 3.318 s: at the achieved rate 244,113 went out in time
    assert unsent_frames(270000, shaped, 3.0) == 270000 - math.floor(270000 * 3.0 / 3.318148)
    on_time = trafgen.Sent(1000, 80000, 1.000081)
    assert unsent_frames(1000, on_time, 1.0) == 0  # within the 0.1% tolerance
    assert unsent_frames(1000, trafgen.Sent(900, 72000, 0.9), 1.0) == 100  # never emitted
    trial = PacketTrial(1.0, 1000.0, 1000, 1000, 990, 10, 0, 1.0)
    assert trial.loss_ratio == pytest.approx(0.01) and trial.to_result().loss_ratio == pytest.approx(0.01)
    late = PacketTrial(1.0, 1000.0, 1000, 1000, 1000, 0, 50, 1.05)
    assert late.loss_ratio == pytest.approx(0.05) and late.to_result().unsent_count == 50


def test_count_rule_and_its_reading():
    rules = count_ruleset(6, "2001:2:0:1::2", 5201)
    assert "ip6 saddr 2001:2:0:1::2 udp dport 5201 counter drop" in rules  # down to empty datagrams (66 B IPv6)
    assert count_ruleset(4, "198.18.0.2", 5201, "accept").endswith("udp length >= 24 counter accept\n  }\n}\n")
    listing = ('{"nftables": [{"metainfo": {"version": "1.0.6"}}, {"table": {"family": "inet", "name": "x"}}, '
               '{"rule": {"expr": [{"match": {}}, {"counter": {"packets": 81274, "bytes": 121911000}}, {"drop": null}]}}]}')
    assert parse_count(listing) == 81274
    with pytest.raises(ParseError):
        parse_count('{"nftables": []}')


class SimulatedPath:
    """A DUT that forwards at most dut_fps and a generator that sends at most generator_fps."""

    generator = "simulated"
    link_bps = 1e9  # the emulated 1 Gbit/s link
    shared_kernel = True
    description = "a simulated 1 Gbit/s path"

    def __init__(self, dut_fps, generator_fps, fail_after=None):
        self.dut_fps, self.generator_fps, self.fail_after = dut_fps, generator_fps, fail_after
        self.count, self.sends = 0, 0

    def send(self, frame_bytes, rate_pps, count, *, to_dut=True):
        self.sends += 1
        if self.fail_after is not None and self.sends > self.fail_after:
            raise RuntimeError("interrupted")
        rate = self.generator_fps if rate_pps is None else min(rate_pps, self.generator_fps)
        seconds = count / rate
        if to_dut:
            self.count += min(count, math.floor(self.dut_fps * seconds))
        return trafgen.Sent(count, round(count * frames.mean_bytes(frame_bytes, 4)), seconds)

    def forwarded(self):
        return self.count

    def check(self, frame_bytes):
        return None  # it makes every frame

    def dut_counters(self):
        return {"lan0_rx_packets": self.count}


def search(store, path, name="s", frame=64):
    exp = store.create_experiment(name, "rfc2544", {})
    params = {"frame_bytes": frame, "family": 4, "firewall": "none"}
    return exp, search_frame_size(path, store, exp, params, SearchSettings(1.0, 0.005, settle_s=0.0))


def test_search_finds_the_dut_limit_and_stores_every_trial(tmp_path):
    store = Store(tmp_path / "s.db")
    exp, result = search(store, SimulatedPath(dut_fps=300_000, generator_fps=900_000))
    assert 0.99 * 300_000 <= result.ndr_fps <= 300_000 and result.ndr_fps <= result.pdr_fps
    assert result.limit == "DUT" and not result.generator_limited
    assert result.pdr_fps <= 300_000 / (1 - 0.005) + 1
    rows = store.search_trials(store.searches(exp)[0]["id"])
    assert len(rows) == len(result.trials) and rows[0]["purpose"] == "ceiling"
    assert [r["seq"] for r in rows] == list(range(len(rows)))
    assert store.searches(exp)[0]["library"] == "MLRsearch 1.2.1" and store.searches(exp)[0]["status"] == "done"


def test_search_at_line_rate_and_generator_bound(tmp_path):
    store = Store(tmp_path / "s.db")
    _, at_line = search(store, SimulatedPath(dut_fps=10e6, generator_fps=10e6), "a", frame=1518)
    assert at_line.ndr_fps == pytest.approx(81274.4, rel=1e-4) and at_line.limit == "line rate"
    _, slow_sender = search(store, SimulatedPath(dut_fps=10e6, generator_fps=170_000), "b")
    assert slow_sender.generator_limited and slow_sender.ndr_fps <= 170_000
    assert "generator" in render_table([at_line, slow_sender], lab_description({"link_rate": "1g"}), SearchSettings(), "MLRsearch 1.2.1",
                                       "simulated")


def test_interrupted_search_resumes_by_replay_without_measuring_twice(tmp_path):
    store = Store(tmp_path / "s.db")
    exp = store.create_experiment("r", "rfc2544", {})
    params = {"frame_bytes": 64, "family": 4}
    with pytest.raises(RuntimeError):
        search_frame_size(SimulatedPath(300_000, 900_000, fail_after=4), store, exp, params, SearchSettings(settle_s=0.0))
    search_id = store.searches(exp)[0]["id"]
    assert len(store.search_trials(search_id)) == 4 and store.searches(exp)[0]["status"] == "failed"
    fresh = SimulatedPath(300_000, 900_000)
    fresh.count = 10**6  # counters are cumulative on a real path too: only deltas matter
    resumed = search_frame_size(fresh, store, exp, params, SearchSettings(settle_s=0.0))
    assert resumed.replayed == 3  # the ceiling probe is reused, the three search trials replayed
    assert fresh.sends == len(store.search_trials(search_id)) - 4
    _, straight = search(Store(tmp_path / "t.db"), SimulatedPath(300_000, 900_000))
    assert resumed.ndr_fps == straight.ndr_fps and resumed.pdr_fps == straight.pdr_fps


def test_settings_are_checked():
    with pytest.raises(ConfigError, match="--pdr-loss"):
        SearchSettings(1.0, 0.7)
    with pytest.raises(ConfigError, match="--trial-duration"):
        SearchSettings(0.0)


def test_iperf3_udp_sender_sizes_argv_and_real_summaries():
    from linerate.traffic import iperf3_udp

    assert iperf3_udp.send_argv(FLOW4, 64, 1000, 500) == ["iperf3", "-c", "198.19.0.2", "-p", "5201", "-4", "-u", "-l",
                                                        "18", "-b", str(1000 * 18 * 8), "-k", "500", "-J"]
    assert iperf3_udp.send_argv(FLOW6, 1518, None, 10)[7:11] == ["-l", "1452", "-b", "0"]  # 0: unpaced
    assert (iperf3_udp.min_frame(4), iperf3_udp.min_frame(6)) == (64, 82)  # iperf3's 16-byte minimum block
    with pytest.raises(ConfigError, match="too small for iperf3 UDP over IPv6 .* use 82 B"):
        iperf3_udp.check_frame(78, 6)
    with pytest.raises(ConfigError, match="IMIX mixes frame sizes and iperf3 sends one size"):
        iperf3_udp.check_frame("imix", 4)
    unpaced = iperf3_udp.parse_send((DATA / "iperf3" / "udp_frames_18B_unpaced.json").read_text())
    assert (unpaced.packets, unpaced.bytes, unpaced.cpu_s) == (100000, 1800000, pytest.approx(0.638789))
    paced = iperf3_udp.parse_send((DATA / "iperf3" / "udp_frames_1472B_800m.json").read_text())
    assert paced.packets == 60000 and paced.cpu_s == pytest.approx(0.883613)  # 800 Mbit/s of 1472-byte blocks
    assert unsent_frames(60000, paced, 60000 / 67_934) == 0
    with pytest.raises(ParseError, match="no JSON: iperf3: parameter error - block size invalid"):
        iperf3_udp.parse_send(capture("iperf3/udp_block_too_small.txt"))


@pytest.mark.parametrize("has_trafgen, asked, expected", [
    (True, "auto", "trafgen 0.6.8"), (False, "auto", "iperf3 3.12 (UDP)"), (True, "iperf3", "iperf3 3.12 (UDP)"),
    (False, "trafgen", "install netsniff-ng there, or use --generator iperf3")])
def test_sender_choice(has_trafgen, asked, expected):
    from linerate.exec.fake import FakeExecutor
    from linerate.search.frame_path import choose_sender

    client = FakeExecutor("client").respond(["iperf3", "--version"], "iperf 3.12 (cJSON 1.7.15)\n")
    if has_trafgen:  # trafgen 0.6.8 prints its version and exits 1
        client.respond(["trafgen", "--version"], "trafgen 0.6.8 (Flutternozzle), Git id: (none)\n", returncode=1)
    if expected.startswith("install"):
        with pytest.raises(LinerateError, match=expected):
            choose_sender(client, asked)
    else:
        sender = choose_sender(client, asked)
        assert sender.name == expected
        assert sender.count_verdict == ("drop" if expected.startswith("trafgen") else "accept")


def test_html_report_of_a_search_made_by_the_rfc2544_command(tmp_path):
    """`linerate rfc2544` stores its goals, not an experiment file's keys: the page reads both."""
    from linerate.kinds.rfc2544.html import render_search_report

    store = Store(tmp_path / "s.db")
    settings = SearchSettings(2.0, 0.01, settle_s=0.0)
    exp = store.create_experiment("cli", "rfc2544", {"test": "rfc2544", "goals": settings.goals()})
    search_frame_size(SimulatedPath(300_000, 900_000), store, exp, {"frame_bytes": 64, "family": 4}, settings)
    html = render_search_report(store, store.experiment(exp))
    assert "at most 1% loss" in html and "trials of 2 s" in html and "<details>" in html
    assert '<pre aria-label="search options">' in html  # no experiment file: the stored options instead


def test_a_sender_that_prints_no_summary_is_an_error_naming_what_it_said():
    from linerate.errors import ExecError
    from linerate.exec.fake import FakeExecutor
    from linerate.traffic.iperf3_udp import Iperf3UdpSender

    # iperf3 3.12 puts an option error on stderr and its usage on stdout, even with -J
    client = FakeExecutor("client").respond(["iperf3"], "Usage: iperf3 [-s|-c host] [options]\n", returncode=1,
                                            stderr="iperf3: parameter error - block size invalid\n")
    with pytest.raises(ExecError, match="no JSON: Usage: iperf3.*stderr: iperf3: parameter error"):
        Iperf3UdpSender("3.12").send(client, "eth0", FLOW4, 64, 1000, 10)
    assert client.calls[0][:3] == ("iperf3", "-c", "198.19.0.2")


def test_a_search_whose_ceiling_is_below_mlrsearchs_default_minimum_runs(tmp_path):
    """MLRsearch's Config checks max_load against its default min_load (9001) as it is set: a path whose
    generator or link tops out below that (1518 B frames on a 100 Mbit/s link: 8,127 frames/s) was a
    ValueError traceback; the minimum is now set first."""
    _, result = search(Store(tmp_path / "s.db"), SimulatedPath(dut_fps=10e6, generator_fps=5_000), frame=1518)
    assert 0.9 * 5_000 <= result.ndr_fps <= 5_000 and result.generator_limited


def test_a_trial_sent_in_one_burst_still_counts_its_whole_window():
    """At 100 kbit/s a 0.1 s trial is 8 frames that trafgen puts out in ~95 us: counted as a 95 us trial,
    MLRsearch repeated it until its duration sum was met (188 trials of one load in 4 minutes)."""
    burst = PacketTrial(0.1, 80.0, 8, 8, 8, 0, 0, 95e-6)
    assert burst.to_result().offered_duration == pytest.approx(0.1)
    late = PacketTrial(1.0, 1000.0, 1000, 1000, 1000, 0, 0, 1.2)
    assert late.to_result().offered_duration == pytest.approx(1.2)  # a late sender's longer time stays its own


class StraySender(SimulatedPath):
    """Another sender on the path for the first `stray` trials (a killed command's trafgen still running):
    the server counts its frames too."""

    def __init__(self, *args, stray=1, **kwargs):
        super().__init__(*args, **kwargs)
        self.stray = stray

    def send(self, frame_bytes, rate_pps, count, *, to_dut=True):
        sent = super().send(frame_bytes, rate_pps, count, to_dut=to_dut)
        if to_dut and self.stray:
            self.stray -= 1
            self.count += 3 * count  # frames this trial never sent
        return sent


def test_a_trial_whose_server_counted_more_than_was_sent_does_not_count():
    from linerate.search.measurer import measure

    with pytest.raises(LinerateError, match="another sender is on this path"):
        measure(StraySender(dut_fps=300_000, generator_fps=900_000), 64, 1.0, 100_000, settle_s=0)


def test_a_disturbed_trial_is_measured_again_and_said(tmp_path):
    store = Store(tmp_path / "s.db")
    _, result = search(store, StraySender(dut_fps=300_000, generator_fps=900_000, stray=2))
    assert 0.99 * 300_000 <= result.ndr_fps <= 300_000  # the disturbed trials measured again, not believed
    assert all(t.forwarded <= t.sent for t in result.trials)
