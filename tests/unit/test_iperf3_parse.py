import json

import pytest

from linerate.errors import ParseError
from linerate.model import TrialParams
from linerate.traffic import iperf3
from tests.conftest import read_data


def parse(name, **params):
    text = read_data("iperf3", name)
    p = TrialParams(**params)
    return iperf3.parse(text, p, iperf3.client_argv(p, "198.19.0.2")), json.loads(text)


def test_forward_uses_receiver_side_throughput():
    trial, doc = parse("tcp_forward_p1.json")
    assert trial.ok
    assert trial.throughput_bps == doc["end"]["sum_received"]["bits_per_second"]
    assert trial.sender_bps == doc["end"]["sum_sent"]["bits_per_second"]
    assert trial.retransmits == doc["end"]["sum_sent"]["retransmits"]
    assert trial.cpu_local_pct == pytest.approx(98.98, abs=0.01)
    assert trial.cpu_remote_pct == pytest.approx(39.65, abs=0.01)
    assert trial.generator_version == "iperf 3.12" and trial.generator == "iperf3"
    assert trial.congestion == "bbr"


def test_reverse_and_parallel_and_ipv6():
    rev, doc = parse("tcp_reverse_p1.json", direction="reverse")
    assert rev.throughput_bps == doc["end"]["sum_received"]["bits_per_second"]
    p4, doc = parse("tcp_ipv6_p4.json", family=6, streams=4)
    assert p4.ok and p4.throughput_bps == doc["end"]["sum_received"]["bits_per_second"]
    assert len(doc["end"]["streams"]) == 4


def test_bidir_reports_both_directions_and_sums_retransmits():
    trial, doc = parse("tcp_bidir_p1.json", direction="bidir")
    end = doc["end"]
    assert trial.reverse_throughput_bps == end["sum_received_bidir_reverse"]["bits_per_second"]
    assert trial.retransmits == end["sum_sent"]["retransmits"] + end["sum_sent_bidir_reverse"]["retransmits"]


def test_udp_reports_loss_and_jitter_from_receiver():
    trial, doc = parse("udp_overload_loss.json", protocol="udp")
    received = doc["end"]["sum_received"]
    assert trial.throughput_bps == received["bits_per_second"]
    assert trial.lost_percent == pytest.approx(received["lost_percent"])
    assert trial.lost_percent > 0
    assert trial.jitter_ms == pytest.approx(received["jitter_ms"])


@pytest.mark.parametrize("name,message", [
    ("error_connection_refused_rc0.json", "unable to connect to server: Connection refused"),
    ("error_server_busy.json", "the server is busy running a test. try again later"),
])
def test_error_field_is_a_failed_trial_never_a_zero(name, message):
    trial, _ = parse(name)
    assert not trial.ok
    assert trial.status == "failed"
    assert trial.error == message
    assert trial.throughput_bps is None


def test_non_json_output_is_a_parse_error():
    with pytest.raises(ParseError, match="not JSON"):
        iperf3.parse(read_data("iperf3", "error_bad_option.txt"), TrialParams(), [])
    with pytest.raises(ParseError):
        iperf3.parse("[1, 2]", TrialParams(), [])


def test_client_argv_is_a_list_with_every_mode():
    p = TrialParams(family=6, streams=4, direction="reverse", duration_s=7, omit_s=2, congestion="cubic")
    argv = iperf3.client_argv(p, "2001:2:0:2::2")
    assert argv[:3] == ["iperf3", "--client", "2001:2:0:2::2"]
    for flag, value in (("--parallel", "4"), ("--time", "7"), ("--omit", "2"), ("--congestion", "cubic")):
        assert argv[argv.index(flag) + 1] == value
    assert "-6" in argv and "--reverse" in argv and "--json" in argv
    udp = iperf3.client_argv(TrialParams(protocol="udp", direction="bidir", udp_bitrate_bps=5_000_000), "x")
    assert "--bidir" in udp and udp[udp.index("--bitrate") + 1] == "5000000"


def test_params_recovered_from_recorded_json():
    p = iperf3.params_from_json(read_data("iperf3", "tcp_forward_p2_omit1.json"))
    assert (p.streams, p.omit_s, p.direction, p.protocol) == (2, 1, "forward", "tcp")
    assert iperf3.params_from_json(read_data("iperf3", "tcp_bidir_p1.json")).direction == "bidir"
    assert iperf3.params_from_json(read_data("iperf3", "tcp_reverse_p1.json")).direction == "reverse"
    assert iperf3.params_from_json(read_data("iperf3", "udp_100m.json")).protocol == "udp"
    assert iperf3.params_from_json(read_data("iperf3", "tcp_ipv6_p4.json")).family == 6
