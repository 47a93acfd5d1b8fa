"""traffic/tcp_timings.py: connect, first-byte, response and client-delay times per connection from
real packet captures (tests/data/capture/cases.toml names each one's source and what it shows), the
capture filter applied by the real tcpdump to a real capture, tcpdump's stderr, and the wrapper
script run for real (without tcpdump: the command still runs and keeps its exit status)."""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import tomllib
from pathlib import Path

import dpkt
import pytest

from linerate.errors import ParseError
from linerate.traffic import tcp_timings

DATA = Path(__file__).parent.parent / "data" / "capture"
CASES = tomllib.loads((DATA / "cases.toml").read_text())["capture"]


def case(name):
    return next(c for c in CASES if c["file"] == name)


def parsed(name):
    c = case(name)
    return tcp_timings.parse_capture((DATA / name).read_bytes(), c["server"], c["port"])


def test_times_per_connection_match_tcpdumps_own_decoding_of_a_real_capture():
    c = case("resp_1_benchmark.pcap")
    connections = parsed(c["file"])
    assert len(connections) == c["connections"]
    by_port = {conn.client[1]: conn for conn in connections}
    for port, expected in c["expect"].items():
        conn = by_port[int(port)]
        got = [conn.connect_s, conn.first_byte_s, conn.response_s, conn.client_delay_s]
        assert [round(v * 1e6) for v in got] == expected, port
    assert all(conn.syn_retransmits == 0 and conn.client[0] == "127.0.0.1" for conn in connections)


@pytest.mark.parametrize("name", ["lab_ipv4_h2load_nginx.pcap", "lab_ipv6_h2load_nginx.pcap"])
def test_linux_cooked_captures_of_h2load_agree_with_h2loads_own_summary(name):
    """On the wire a connection is never slower than h2load saw it: h2load starts its clock before the
    SYN leaves and stops it after the byte arrived (src/h2load.cc)."""
    c = case(name)
    connections = parsed(name)
    assert len(connections) == c["connections"]
    assert all(conn.synack_at and conn.request_at and conn.first_byte_at for conn in connections)
    connect = [conn.connect_s * 1e6 for conn in connections]
    ttfb = [conn.first_byte_s * 1e6 for conn in connections]
    assert min(connect) <= c["h2load_connect_us"][0] and max(connect) <= c["h2load_connect_us"][1]
    assert min(ttfb) <= c["h2load_ttfb_us"][0] and max(ttfb) <= c["h2load_ttfb_us"][1]
    assert all(abs(conn.first_byte_s - (conn.connect_s + conn.client_delay_s + conn.response_s)) < 1e-6
               for conn in connections)
    log = tcp_timings.parse_capture_log((DATA / c["log"]).read_text())
    assert log.listening and log.captured == 4 * c["connections"] and log.dropped == 0
    summary = tcp_timings.summarize(connections, log)
    assert summary["connections"] == 120 and summary["without_first_byte"] == 0
    assert summary["ttfb"]["p50"] <= summary["ttfb"]["p90"] <= summary["ttfb"]["p99"] <= max(ttfb) / 1e6


def test_another_server_or_port_finds_nothing():
    assert tcp_timings.parse_capture((DATA / "lab_ipv4_h2load_nginx.pcap").read_bytes(), "198.19.0.3", 8080) == []
    assert tcp_timings.parse_capture((DATA / "resp_1_benchmark.pcap").read_bytes(), "127.0.0.1", 6380) == []


def _segment(ts, src, sport, dst, dport, flags, seq, ack=0, payload=b""):
    tcp = dpkt.tcp.TCP(sport=sport, dport=dport, flags=flags, seq=seq, ack=ack, off=5, data=payload)
    ip = dpkt.ip6.IP6(src=bytes.fromhex(src), dst=bytes.fromhex(dst), nxt=6, hlim=64, data=tcp, plen=len(tcp))
    return ts, bytes(dpkt.ethernet.Ethernet(src=b"\x02" * 6, dst=b"\x04" * 6, type=0x86DD, data=ip))


CLIENT, SERVER = "20010002000000010000000000000002", "20010002000000020000000000000002"
SYN, SYNACK, ACK, PSHACK = 0x02, 0x12, 0x10, 0x18


def _pcap(segments):
    out = io.BytesIO()
    writer = dpkt.pcap.Writer(out, linktype=dpkt.pcap.DLT_EN10MB)
    for ts, frame in segments:
        writer.writepkt(frame, ts=ts)
    return out.getvalue()


def test_retransmitted_syns_a_reused_port_and_a_stray_synack():
    segments = [
        _segment(1.000, CLIENT, 40000, SERVER, 80, SYN, 100),
        _segment(2.000, CLIENT, 40000, SERVER, 80, SYN, 100),  # the same ISN: retransmitted
        _segment(2.001, SERVER, 80, CLIENT, 40000, SYNACK, 900, ack=999),  # acknowledges another ISN
        _segment(2.002, SERVER, 80, CLIENT, 40000, SYNACK, 900, ack=101),
        _segment(2.003, CLIENT, 40000, SERVER, 80, PSHACK, 101, 901, b"GET / HTTP/1.1\r\n\r\n"),
        _segment(2.010, SERVER, 80, CLIENT, 40000, ACK, 901, 119),  # no data: not the first byte
        _segment(2.013, SERVER, 80, CLIENT, 40000, PSHACK, 901, 119, b"HTTP/1.1 200 OK\r\n"),
        _segment(3.000, CLIENT, 40000, SERVER, 80, SYN, 5000),  # the port again, another ISN: a new connection
    ]
    first, second = tcp_timings.parse_capture(_pcap(segments), "2001:2:0:2::2", 80)
    assert first.syn_retransmits == 1 and first.connect_s == pytest.approx(1.002)
    assert first.first_byte_s == pytest.approx(1.013) and first.response_s == pytest.approx(0.010)
    assert first.client_delay_s == pytest.approx(0.001)
    assert second.syn_at == 3.0 and second.synack_at is None and second.first_byte_s is None
    summary = tcp_timings.summarize([first, second])
    assert summary["without_synack"] == 1 and summary["connections_with_syn_retransmits"] == 1


def test_not_a_capture_is_a_parse_error():
    with pytest.raises(ParseError):
        tcp_timings.parse_capture(b"tcpdump: any: You don't have permission", "198.19.0.2", 8080)


def test_sample_mask_keeps_small_trials_whole_and_skips_bit_zero():
    assert tcp_timings.sample_mask(tcp_timings.SAMPLE_ABOVE) == 0
    assert tcp_timings.sample_mask(tcp_timings.SAMPLE_ABOVE + 1) == 0b10
    assert tcp_timings.sample_mask(5 * tcp_timings.SAMPLE_ABOVE) == 0b1110
    assert "& 6 = 0" in tcp_timings.capture_filter("198.19.0.2", 8080, 6)
    with pytest.raises(ValueError):
        tcp_timings.capture_filter("not-an-address", 8080)


@pytest.mark.skipif(shutil.which("tcpdump") is None, reason="tcpdump not installed (make install adds it)")
@pytest.mark.parametrize("name", ["resp_1_benchmark.pcap", "lab_ipv4_h2load_nginx.pcap", "lab_ipv6_h2load_nginx.pcap"])
def test_the_filter_applied_by_tcpdump_keeps_what_the_times_need(name, tmp_path):
    """tcpdump -r CAPTURE -w OUT FILTER: the filtered capture gives the same times, with fewer packets."""
    c = case(name)
    for mask in (0, 2):
        out = tmp_path / f"filtered{mask}.pcap"
        expression = tcp_timings.capture_filter(c["server"], c["port"], mask)
        subprocess.run(["tcpdump", "-r", str(DATA / name), "-w", str(out), expression], check=True,
                       capture_output=True)
        every = {conn.client: conn for conn in parsed(name)}
        kept = tcp_timings.parse_capture(out.read_bytes(), c["server"], c["port"])
        assert kept and all(every[conn.client].first_byte_s == conn.first_byte_s for conn in kept)
        assert all(conn.response_s is not None and conn.client_delay_s is not None for conn in kept)
        if mask:
            assert 0 < len(kept) < len(every) and all(conn.client[1] & mask == 0 for conn in kept)
        else:
            assert len(kept) == len(every)


def test_the_wrapper_runs_the_command_without_tcpdump_and_keeps_its_exit_status(tmp_path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("sh", "timeout", "grep", "sleep"):
        os.symlink(shutil.which(tool), bin_dir / tool)
    capture = tmp_path / "capture"
    argv = tcp_timings.wrap_argv([str(bin_dir / "sh"), "-c", 'echo "$0 ran"; exit 3', "h2load"], str(capture),
                                 tcp_timings.capture_filter("198.19.0.2", 8080), 10)
    done = subprocess.run(argv, capture_output=True, text=True, env={"PATH": str(bin_dir)}, timeout=30)
    assert (done.returncode, done.stdout) == (3, "h2load ran\n")
    log = tcp_timings.parse_capture_log((tmp_path / "capture.log").read_text())
    assert not log.listening and "tcpdump" in log.problem and "No such file" in log.problem


def test_tcpdumps_own_words():
    denied = "tcpdump: any: You don't have permission to perform this capture on that device\n(socket: Operation " \
             "not permitted)\n"  # tcpdump 4.99.3 run by a user without CAP_NET_RAW, here
    log = tcp_timings.parse_capture_log(denied)
    assert not log.listening and log.problem == denied.replace("\n", " ").strip()
    dropped = tcp_timings.parse_capture_log(
        "tcpdump: listening on any, link-type LINUX_SLL2 (Linux cooked v2), snapshot length 128 bytes\n"
        "1021 packets captured\n1300 packets received by filter\n279 packets dropped by kernel\n")
    assert (dropped.listening, dropped.captured, dropped.dropped) == (True, 1021, 279)


def test_a_client_without_tcpdump_still_has_its_trial_and_is_told_why_there_are_no_percentiles():
    from linerate.exec.fake import FakeExecutor
    from linerate.kinds.cps import capture as client_capture

    client = FakeExecutor("client")
    client.respond(["mktemp"], "/tmp/linerate-capture.Ab12Cd\n")
    client.respond(["cat", "--", "/tmp/linerate-capture.Ab12Cd.log"],
                   "/usr/bin/timeout: failed to run command ‘tcpdump’: No such file or directory\n")
    client.respond(["base64"], "")
    client.respond(["rm"])
    started = client_capture.start(client, "http://[2001:2:0:2::2]:8080/obj1k.bin", 40_000)
    assert (started.server, started.port, started.mask) == ("2001:2:0:2::2", 8080, 0b110)
    summary, note = client_capture.finish(client, started)
    assert summary == {} and "tcpdump did not capture on client" in note and "apt-get install tcpdump" in note
    assert ("rm", "-f", "--", started.path, started.path + ".log") in client.calls
