"""rfc9693 without root: the unique-tuple pcap, the pacing estimate, the clearing parsers on real outputs,
the searches against a simulated state table, the capacity's limit, and a stored run reported and resumed."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest

from linerate.dut.state_parsers import parse_deleted_states
from linerate.kinds.rfc9693.options import parse_options
from linerate.kinds.rfc9693.search import capacity_limit, forwarding_loss, search_capacity, search_rate
from linerate.search.measurer import unsent_frames
from linerate.search.state_path import PACED_TOLERANCE, StateTrial
from linerate.traffic import trafgen, tuples

DATA = Path(__file__).parents[1] / "data" / "state_clear"
FLOW = tuples.TupleFlow(4, "02:00:00:00:00:0a", "02:00:00:00:00:0b", "198.18.0.2", "198.19.0.2", 5201)


def _records(data: bytes) -> list[tuple[float, bytes]]:
    magic, major, minor, _, _, snap, link = struct.unpack("<IHHiIII", data[:24])
    assert (magic, major, minor, link) == (tuples.PCAP_MAGIC_US, 2, 4, 1)
    out, at = [], 24
    while at < len(data):
        sec, usec, caplen, length = struct.unpack("<IIII", data[at:at + 16])
        assert caplen == length
        out.append((sec + usec / 1e6, data[at + 16:at + 16 + caplen]))
        at += 16 + caplen
    return out


def _sum16(data: bytes) -> int:
    if len(data) % 2:
        data += b"\0"
    total = sum(struct.unpack(f"!{len(data) // 2}H", data))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return total


def test_pcap_frames_have_unique_ports_valid_checksums_and_paced_timestamps():
    records = _records(tuples.pcap(FLOW, 100, 64, 10_000.0))
    assert len(records) == 100
    ports = set()
    for _, frame in records:
        assert len(frame) == 60  # 64 with the FCS the NIC adds
        ip, udp = frame[14:34], frame[34:]
        assert _sum16(ip) == 0xFFFF  # the IPv4 header checksum verifies
        pseudo = ip[12:20] + struct.pack("!BBH", 0, 17, len(udp))
        assert _sum16(pseudo + udp) == 0xFFFF  # so does UDP's
        sport, dport = struct.unpack("!HH", udp[:4])
        assert dport == 5201
        ports.add(sport)
    assert ports == set(range(tuples.PORT_LO, tuples.PORT_LO + 100))
    per_group = tuples.group_size(10_000.0)  # 20 frames per 2 ms
    assert per_group == 20
    times = sorted({t for t, _ in records})
    assert len(times) == 5 and times[1] - times[0] == pytest.approx(0.002, abs=1e-6)


def test_reverse_pcap_answers_every_connection_and_ipv6_checksums_verify():
    flow6 = tuples.TupleFlow(6, "02:00:00:00:00:0a", "02:00:00:00:00:0b", "2001:2:0:1::2", "2001:2:0:2::2", 5201)
    back = flow6.reversed_by("02:00:00:00:00:0c", "02:00:00:00:00:0d")
    for index, (_, frame) in enumerate(_records(tuples.pcap(back, 10, 78, None))):
        ip, udp = frame[14:54], frame[54:]
        assert ip[8:24] == bytes.fromhex("20010002000000020000000000000002")  # from the server
        pseudo = ip[8:40] + struct.pack("!I3xB", len(udp), 17)
        assert _sum16(pseudo + udp) == 0xFFFF
        assert struct.unpack("!HH", udp[:4]) == (5201, tuples.PORT_LO + index)


def test_pacer_learns_the_overshoot_per_sleep():
    pacer = tuples.Pacer(0.0)
    rate, count = 10_000.0, 2000  # 100 groups of 20 frames: 99 sleeps
    scheduled = tuples.sleeps(count, rate) * 0.002
    pacer.learn(count, rate, scheduled + 99 * 45e-6, 0.0)
    assert pacer.overshoot_s == pytest.approx(45e-6, rel=1e-6)
    pacer.learn(count, None, 1.0, 0.0)  # unpaced runs say nothing
    assert pacer.overshoot_s == pytest.approx(45e-6, rel=1e-6)


def test_paced_sends_are_late_only_beyond_the_tolerance():
    assert unsent_frames(1000, trafgen.Sent(1000, 60000, 0.1015), 0.1, PACED_TOLERANCE) == 0  # a sleep's jitter
    assert unsent_frames(1000, trafgen.Sent(1000, 60000, 0.125), 0.1, PACED_TOLERANCE) == 200
    assert unsent_frames(1000, trafgen.Sent(990, 59400, 0.1), 0.1, PACED_TOLERANCE) == 10


@pytest.mark.parametrize("name, deleted", [("pfctl_k_pfsense_scripts.txt", 2), ("ct_D_kubernetes_none.txt", 0)])
def test_clearing_outputs_parse_on_real_captures(name, deleted):
    text = (DATA / name).read_text()
    assert text.startswith("# source: https://") and " — " in text.splitlines()[0]
    assert parse_deleted_states(text) == deleted


def test_clearing_output_missing_tool_is_none():
    assert parse_deleted_states("sh: 1: conntrack: not found") is None


class Table:
    """A simulated stateful DUT: `size` entries; a burst of more than `queue` frames above `rate_ok`
    connections/s loses the excess (its queues); states above the size are evicted (early_drop)."""

    def __init__(self, size: int, rate_ok: float, queue: int = 1500):
        self.size, self.rate_ok, self.queue, self.calls = size, rate_ok, queue, []

    def __call__(self, purpose: str, connections: int, rate: float | None) -> StateTrial:
        self.calls.append((purpose, connections, rate))
        if rate is None:
            return StateTrial(purpose, connections, None, connections, connections / 200_000, 0, 0, 0, 0.0, 0)
        forwarded = connections if rate <= self.rate_ok or connections <= self.queue else self.queue
        held = min(forwarded, self.size)
        evicted = max(0, forwarded - self.size)
        before = {"state_count": 0, "state_max": self.size, "early_drop": 0}
        between = {"state_count": held, "state_max": self.size, "early_drop": evicted}
        return StateTrial(purpose, connections, rate, connections, connections / rate, forwarded, held, forwarded,
                          connections / rate, 0, 0, before, between, dict(between))


def test_capacity_search_finds_the_table_within_precision_and_says_why():
    table = Table(4096, rate_ok=30_000)
    result = search_capacity(table, 100_000.0, 1000, tuples.TUPLE_SPACE, 0.01)
    assert result.held is not None and 0.97 * 4096 <= result.held <= 4096
    assert result.failed is not None and result.failed <= 1.01 * 4096 + 1
    assert result.rate <= 30_000  # halved until the bursts fit the rate the DUT keeps up with
    limit = capacity_limit(result, "linux", {"udp_timeout": 30}, "set by dut_sysctls")
    assert limit["limit"] == "state table"
    assert "4,096" in limit["evidence"] and "early_drop" in limit["evidence"]


def test_capacity_bound_and_timeout_limits():
    roomy = search_capacity(Table(1_000_000, rate_ok=1e9), 50_000.0, 1000, 8000, 0.01)
    assert roomy.held == 8000 and roomy.failed is None
    assert capacity_limit(roomy, "linux", {}, None)["limit"] == "search bound"
    slow = search_capacity(Table(10_000, rate_ok=1e9), 100.0, 1000, 64_000, 0.01, timeout_s=30)
    assert capacity_limit(slow, "linux", {"udp_timeout": 30}, None)["limit"] == "state table"
    slow.failed, slow.rate = 4000, 100.0  # 40 s to open them at 100/s: past a 30 s timeout
    slow.trials.append(StateTrial("capacity", 4000, 100.0, 4000, 40.0, 4000, 3000, 4000, 40.0, 0, 0,
                                  {"state_count": 0, "state_max": 10_000}, {"state_count": 4000, "state_max": 10_000},
                                  {"state_count": 3000, "state_max": 10_000}))
    assert capacity_limit(slow, "linux", {"udp_timeout": 30}, None)["limit"] == "state timeout"


def test_forwarding_loss_is_not_a_full_table():
    lost = StateTrial("capacity", 2000, 1e5, 2000, 0.02, 1500, 1500, 1500, 0.02, 0, 0, {},
                      {"state_count": 1500, "state_max": 4096}, {"state_count": 1500, "state_max": 4096})
    full = StateTrial("capacity", 5000, 1e4, 5000, 0.5, 4800, 4096, 4800, 0.5, 0, 0, {"early_drop": 0},
                      {"state_count": 4096, "state_max": 4096}, {"state_count": 4096, "state_max": 4096, "early_drop": 704})
    assert forwarding_loss(lost) and not forwarding_loss(full)


def test_rate_search_is_mlrsearch_ndr_over_the_simulated_dut():
    table = Table(4096, rate_ok=30_000, queue=500)
    rate = search_rate(table, 1000, 200.0, 200_000.0, 0.01)
    assert rate is not None and 0.98 * 30_000 <= rate <= 30_000
    # a ceiling under MLRsearch's default minimum (9001): was a ValueError from Config (--max-rate 5000, --link 1m)
    slow = search_rate(Table(4096, rate_ok=30_000, queue=500), 1000, 5.0, 5_000.0, 0.01)
    assert slow is not None and 0.98 * 5_000 <= slow <= 5_000


def test_options_refuse_with_the_key_named():
    with pytest.raises(ValueError, match="max_connections"):
        parse_options({"max_connections": 70_000})
    with pytest.raises(ValueError, match="start_connections"):
        parse_options({"start_connections": 5000, "max_connections": 4000})
    assert parse_options({}).frame_for(6) == 66


class FakePath:
    generator, link_bps = "trafgen 0.6.8", None

    def __init__(self, table: Table):
        self.table = table

    def trial(self, purpose, connections, rate, frame_bytes):
        return self.table(purpose, connections, rate)

    def state_timeouts(self):
        return {"udp_timeout": 30, "tcp_timeout_time_wait": 120}


def test_stored_run_reports_and_resumes_without_measuring(tmp_path):
    from linerate.kinds.rfc9693 import report
    from linerate.kinds.rfc9693.run import search_combination
    from linerate.store.db import Store

    store = Store(tmp_path / "s.db")
    experiment_id = store.create_experiment("r", "run", {"test": "rfc9693"})
    params = {"test": "rfc9693", "family": 4, "repetition": 1, "firewall": "stateful"}
    options = parse_options({"max_connections": 20_000})
    table = Table(4096, rate_ok=30_000)
    first = search_combination(store, experiment_id, params, options, FakePath(table), "linux", "set by test")
    measured = len(table.calls)
    assert first.capacity.held is not None and abs(first.capacity.held - 4096) <= 0.03 * 4096
    rows = store.search_trials(store.searches(experiment_id)[0]["id"])
    assert len(rows) == measured and {r["purpose"] for r in rows} == {"ceiling", "rate", "capacity"}
    again = search_combination(store, experiment_id, params, options, None, "linux", "set by test")
    assert again.replayed == measured and again.capacity.held == first.capacity.held and again.rate == first.rate
    row = store.experiment(experiment_id)
    doc = json.loads(report.render(store, row, "json"))
    found = doc["searches"][0]
    assert found["capacity"] == first.capacity.held and found["limit"] == "state table"
    assert found["state_max"] == 4096 and found["sustained_udp_bound"] == pytest.approx(4096 / 30)
    text = report.render(store, row, "md")
    assert "state table" in text and "Little's law" in text
    assert report.render(store, row, "csv").splitlines()[0].startswith("experiment,family,firewall")
    assert "<table>" in report.render(store, row, "html")


def test_linux_clearing_discards_the_entry_listing_and_reads_the_count():
    """conntrack -D lists every entry it deletes on stdout (32,000 states here overran the VM agent's
    4 MiB): the driver discards stdout on the host, in a fixed script, and reads the count on stderr."""
    from linerate.dut.linux import LinuxDriver
    from linerate.exec.fake import FakeExecutor

    host = FakeExecutor("dut").respond(["sh", "-c"], stderr="conntrack v1.4.7 (conntrack-tools): 32000 flow entries "
                                       "have been deleted.\n")
    assert LinuxDriver().clear_states(host, 4, "198.18.0.2", "198.19.0.2") == 32000
    [argv] = host.calls
    assert argv[:4] == ("sh", "-c", 'exec "$@" >/dev/null', "conntrack")
    assert argv[4:] == ("conntrack", "-D", "-f", "ipv4", "-p", "udp", "-s", "198.18.0.2", "-d", "198.19.0.2")


def test_frames_the_generator_sent_late_do_not_shrink_the_table():
    """A loaded host sends a few frames of a trial late, every connection still crosses and is validated:
    the size held (CI once read a 512-entry table as 199 because trials at 200 had late frames)."""
    import dataclasses

    table = Table(512, rate_ok=1e9)

    def late_generator(purpose, connections, rate):
        done = table(purpose, connections, rate)
        return dataclasses.replace(done, unsent=5) if rate is not None else done

    result = search_capacity(late_generator, 100_000.0, 200, 4000, 0.01)
    assert 0.97 * 512 <= result.held <= 512, result
    assert capacity_limit(result, "linux", {"udp_timeout": 30}, None)["limit"] == "state table"
