"""Search trials keep the generator's command line (trafgen or iperf3, as run on the client), as
throughput trials keep theirs: stored with each trial, replayed on resume, migrated in as '[]'."""

import json
import math
import sqlite3

from linerate.exec.fake import FakeExecutor
from linerate.search.frame_path import FramePath
from linerate.search.measurer import PacketTrial, SentBy, measure
from linerate.kinds.rfc2544.search import SearchSettings, _trial_from_row, search_frame_size
from linerate.store import Store, schema
from linerate.traffic import frames, iperf3_udp, trafgen
from linerate.traffic.trafgen import TrafgenSender
from tests.conftest import capture
from tests.unit.test_rfc2544 import FLOW4, SimulatedPath

TRAFGEN_SUMMARY = "\n{packets} packets outgoing\n{octets} bytes outgoing\n1 sec, 0 usec on CPU0 ({packets} packets)\n"


class ArgvPath(SimulatedPath):
    """SimulatedPath whose sends say which command sent (as FramePath's do)."""

    def send(self, frame_bytes, rate_pps, count, *, to_dut=True):
        sent = super().send(frame_bytes, rate_pps, count, to_dut=to_dut)
        argv = ("trafgen", "--dev", "eth0", "--conf", "-", *(["--rate", f"{rate_pps}pps"] if rate_pps else []),
                "--num", str(count), "--cpus", "1")
        return SentBy(sent.packets, sent.bytes, sent.cpu_s, argv)


def test_measure_keeps_the_argv_a_path_reports():
    trial = measure(ArgvPath(300_000, 900_000), 64, 1.0, 1000.0, settle_s=0.0)
    assert trial.argv == ("trafgen", "--dev", "eth0", "--conf", "-", "--rate", "1000pps", "--num", "1000", "--cpus", "1")
    assert trial.to_record()["argv"] == list(trial.argv)
    plain = measure(SimulatedPath(300_000, 900_000), 64, 1.0, 1000.0, settle_s=0.0)  # a plain Sent: no command known
    assert plain.argv == () and plain.to_record()["argv"] == []


def test_every_stored_search_trial_has_its_argv_and_resume_replays_it(tmp_path):
    store = Store(tmp_path / "s.db")
    exp = store.create_experiment("a", "rfc2544", {})
    params = {"frame_bytes": 64, "family": 4}
    result = search_frame_size(ArgvPath(300_000, 900_000), store, exp, params, SearchSettings(settle_s=0.0))
    rows = store.search_trials(store.searches(exp)[0]["id"])
    assert len(rows) == len(result.trials) > 2
    ceiling, *searched = rows
    assert ceiling["purpose"] == "ceiling" and "--rate" not in json.loads(ceiling["argv"])  # unpaced probe
    for row in searched:
        argv = json.loads(row["argv"])
        assert argv[0] == "trafgen" and argv[argv.index("--num") + 1] == str(row["intended_count"])
        assert argv[argv.index("--rate") + 1] == f"{max(1, round(row['intended_load_fps']))}pps"
    again = search_frame_size(ArgvPath(300_000, 900_000), store, exp, params, SearchSettings(settle_s=0.0))
    assert again.replayed == len(searched)
    assert [list(t.argv) for t in again.trials] == [json.loads(r["argv"]) for r in rows]


class FakeFramePath(FramePath):
    def __init__(self, sender, client):
        self.client, self.server, self.device, self.flow, self.mtu, self.family = client, None, "eth0", FLOW4, 1500, 4
        self.sender = sender


def test_frame_path_reports_the_command_its_sender_ran():
    client = FakeExecutor("client").respond(["trafgen"], TRAFGEN_SUMMARY.format(packets=500, octets=32000))
    sent = FakeFramePath(TrafgenSender("0.6.8"), client).send(64, 1000, 500)
    assert isinstance(sent, SentBy) and sent.packets == 500
    assert list(sent.argv) == trafgen.send_argv("eth0", 1000, 500) and client.calls == [sent.argv]

    summary = json.dumps({"start": {}, "end": {"sum_sent": {"packets": 10, "bytes": 180, "seconds": 0.01}}})
    client = FakeExecutor("client").respond(["iperf3"], summary)
    sent = FakeFramePath(iperf3_udp.Iperf3UdpSender("3.12"), client).send(64, None, 10)
    assert list(sent.argv) == iperf3_udp.send_argv(FLOW4, 64, None, 10) and sent.cpu_s == 0.01


def test_older_database_gets_the_column_with_no_argv(tmp_path):
    path = tmp_path / "old.db"
    conn = sqlite3.connect(path)
    before_argv = next(i for i, steps in enumerate(schema.MIGRATIONS) if any("search_trials ADD COLUMN argv" in str(step)
                                                                         for step in steps))
    for version in schema.MIGRATIONS[:before_argv]:
        for step in version:
            conn.execute(step) if isinstance(step, str) else step(conn)
    conn.execute(f"PRAGMA user_version = {before_argv}")
    conn.execute("INSERT INTO experiments (name, started_at) VALUES ('x', 0)")
    conn.execute("INSERT INTO searches (experiment_id, key, params, goals, library, started_at) "
                 "VALUES (1, 'k', '{}', '[]', 'MLRsearch 1.2.1', 0)")
    conn.execute("INSERT INTO search_trials (search_id, seq, purpose, intended_duration_s, intended_count, sent, "
                 "forwarded, dut_loss, unsent, send_s) VALUES (1, 0, 'search', 1, 10, 10, 10, 0, 0, 1)")
    conn.commit()
    conn.close()
    store = Store(path)
    assert store.schema_version == len(schema.MIGRATIONS)
    assert store.search_trials(1)[0]["argv"] == "[]"
    assert _trial_from_row(store.search_trials(1)[0]) == PacketTrial(1.0, None, 10, 10, 10, 0, 0, 1.0)


def test_a_paced_send_spaces_frames_with_a_bucket_on_its_own_interface_and_removes_it():
    """trafgen's --rate sends each second's frames at once (trafgen.c shaper_delay): a paced path puts a
    tbf at the trial's rate on the sender's interface, sends through it (--qdisc-path) and removes it;
    what the bucket dropped or still held when trafgen exited was not offered in time."""
    queue = capture("tc/tbf_pacing_20k.txt")
    client = FakeExecutor("client").respond(["timeout", "-s", "INT"],
                                            TRAFGEN_SUMMARY.format(packets=20000, octets=1200000))
    client.respond(["tc", "-s", "-j", "qdisc", "show"], queue).respond(["tc", "qdisc"])
    path = FakeFramePath(TrafgenSender("0.6.8"), client)
    path.paced = True
    sent = path.send(64, 20000, 20000)
    assert sent.packets == 20000
    assert list(sent.argv) == ["timeout", "-s", "INT", "7", *trafgen.send_argv("eth0", 20000, 20000), "--qdisc-path"]
    [pace] = trafgen.pace_argvs("eth0", 20000, 64, 4)
    assert client.calls[0] == tuple(pace) and client.calls[-1] == tuple(trafgen.unpace_argv("eth0"))
    # the bucket is held still before its counters are read: what it queues then is what never leaves
    held = trafgen.hold_argv("eth0", 20000, 64, 4)
    assert client.calls[-3:-1] == [tuple(held), ("tc", "-s", "-j", "qdisc", "show", "dev", "eth0")]
    assert held[:9] == ["tc", "qdisc", "change", "dev", "eth0", "root", "handle", trafgen.PACING_HANDLE, "tbf"]
    assert held[held.index("rate") + 1] == "8bit" and held[held.index("burst") + 1] == "60"  # one frame a minute
    assert held[held.index("limit") + 1] == pace[pace.index("limit") + 1]  # nothing it queues is dropped by the change
    # the bucket as the kernel took it (the real capture): 20,000 frames of 60 bytes/s = 9.6 Mbit/s, 2 ms deep
    real = trafgen.parse_queue_stats(queue)
    assert (real.sent, real.dropped, real.backlog) == (20000, 0, 0)
    assert pace[pace.index("rate") + 1] == "9600000bit" and int(pace[pace.index("burst") + 1]) == 2400
    # 300 frames still queued and 200 dropped when trafgen exited: 500 not offered in time
    client.respond(["tc", "-s", "-j", "qdisc", "show"], queue.replace('"drops":0', '"drops":200').replace(
        '"qlen":0', '"qlen":300'))
    late = path.send(64, 20000, 20000)
    assert late.packets == 19500 and late.bytes == 19500 * 60
    assert trafgen.parse_queue_stats(capture("tc/tbf_pacing_backpressure.txt")).dropped == 0


def test_unpaced_paths_and_probes_send_as_before():
    client = FakeExecutor("client").respond(["trafgen"], TRAFGEN_SUMMARY.format(packets=500, octets=32000))
    path = FakeFramePath(TrafgenSender("0.6.8"), client)
    path.paced = True
    path.send(64, None, 500)  # the generator's ceiling: as fast as it can, no bucket
    assert [call[0] for call in client.calls] == ["trafgen"] and "--qdisc-path" not in client.calls[0]
    imix = trafgen.pace_argvs("eth0", 1000, "imix", 4)[0]
    sizes = [s - 4 for s in frames.cycle("imix", 4)]
    assert imix[imix.index("rate") + 1] == f"{math.ceil(1000 * sum(sizes) / len(sizes) * 8)}bit"


def test_a_paced_send_gives_its_interface_back_the_qdiscs_it_held():
    """A pool's client port is shaped as its pair link: pacing replaces that qdisc for the send, and the send
    puts the pair link back after removing the bucket."""
    client = FakeExecutor("client").respond(["timeout", "-s", "INT"],
                                            TRAFGEN_SUMMARY.format(packets=20000, octets=1200000))
    client.respond(["tc", "-s", "-j", "qdisc", "show"], capture("tc/tbf_pacing_20k.txt")).respond(["tc", "qdisc"])
    path = FakeFramePath(TrafgenSender("0.6.8"), client)
    path.paced, path.own_qdisc = True, (("tc", "qdisc", "replace", "dev", "eth0", "root", "handle", "1:", "tbf"),
                                        ("tc", "qdisc", "add", "dev", "eth0", "parent", "1:1", "handle", "2:", "tbf"))
    path.send(64, 20000, 20000)
    unpace = client.calls.index(tuple(trafgen.unpace_argv("eth0")))
    assert client.calls[unpace + 1:] == list(path.own_qdisc)
