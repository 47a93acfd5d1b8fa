"""`linerate rfc2544` through real namespace labs: NDR at 1518 bytes on the emulated 1 Gbit/s link
is the theoretical frame rate (never above), 64 bytes is flagged as sender-bound with the
generator's ceiling shown, every search trial is stored and --resume replays instead of measuring,
IMIX is rated at its mean frame and reaches the DUT as that mix. What a rule list costs in NDR is a
measurement, not a check: bench/firewall_rule_cost.py."""

import json
import sqlite3

import pytest

from tests.privileged.conftest import linerate

THEORETICAL_1518 = 1e9 / (8 * (1518 + 20))  # 81,274 frames/s


def says_its_limit(result) -> None:
    """What a search may be held to on a shared 2-CPU machine: never above the theoretical rate,
    and the limit it names agrees with its figure ("line rate" exactly when the NDR is within 1% of
    it, RFC 2544's tolerance here). How close to line rate this machine gets is a speed figure:
    bench/generator.py measures it."""
    assert 0 < result["ndr_fps"] <= result["theoretical_fps"] + 0.5, result
    assert (result["limit"] == "line rate") == (result["ndr_fps"] >= 0.99 * result["theoretical_fps"]), result


def search_trials(db):
    return sqlite3.connect(db).execute("SELECT COUNT(*) FROM search_trials").fetchone()[0]


def test_rfc2544_on_the_emulated_link(tmp_path):
    db = str(tmp_path / "r.db")
    out = linerate("rfc2544", "--link", "1g", "--frame-sizes", "1518,64,imix", "--relative-width", "0.1", "--db", db,
                   "--json", timeout=600)
    doc = json.loads(out.stdout)
    by_size = {r["frame_bytes"]: r for r in doc["results"]}
    big, small, imix = by_size[1518], by_size[64], by_size["imix"]
    assert big["theoretical_fps"] == pytest.approx(THEORETICAL_1518)
    says_its_limit(big)
    # 64-byte frames at 1 Gbit/s are 1.49 M/s: a namespace sender sharing its 2 CPUs with the DUT stops below that,
    # and which of the two a loaded machine makes the limit is its speed: the limit named agrees with the trials
    says_its_limit(small)
    assert small["limit"] != "line rate" and small["ndr_fps"] > 10_000, small
    for result in doc["results"]:
        assert result["ndr_fps"] <= result["pdr_fps"]
    # IMIX: rated at its mean frame (353.8 B), and what reached the DUT was that mix: its bytes per
    # frame on the veth (no FCS there) are the mean less 4, in every trial
    assert imix["theoretical_fps"] == pytest.approx(1e9 / (8 * (4246 / 12 + 20))) and imix["ndr_fps"] <= imix["pdr_fps"]
    conn = sqlite3.connect(db)
    imix_id = [sid for sid, params in conn.execute("SELECT id, params FROM searches")
               if json.loads(params)["frame_bytes"] == "imix"][0]
    for (counters,) in conn.execute("SELECT dut_counters FROM search_trials WHERE search_id = ?", (imix_id,)):
        counters = json.loads(counters)
        assert counters["lan0_rx_bytes"] / counters["lan0_rx_packets"] == pytest.approx(4246 / 12 - 4, abs=0.05)
    stored = search_trials(db)
    assert stored == sum(r["trials"] for r in doc["results"])
    goals = json.loads(conn.execute("SELECT goals FROM searches LIMIT 1").fetchone()[0])
    assert [g["name"] for g in goals] == ["NDR", "PDR"] and goals[1]["loss_ratio"] == 0.005
    assert {r[0] for r in conn.execute("SELECT library FROM searches")} == {"MLRsearch 1.2.1"}

    # an interrupted run is continued: mark it unfinished, resume, and nothing is measured again
    conn.execute("UPDATE experiments SET status='running'")
    conn.commit()
    again = linerate("rfc2544", "--link", "1g", "--frame-sizes", "1518,64,imix", "--relative-width", "0.1", "--db", db, "--json", "--resume",
                     timeout=600)
    assert "measured" not in again.stderr and "replayed" in again.stderr
    assert search_trials(db) == stored
    assert {r["frame_bytes"]: r["ndr_fps"] for r in json.loads(again.stdout)["results"]} == \
        {1518: big["ndr_fps"], 64: small["ndr_fps"], "imix": imix["ndr_fps"]}


def test_iperf3_udp_fallback_counts_like_trafgen_and_refuses_imix(tmp_path):
    """iperf3 UDP with a fixed -l instead of trafgen: the same count at the server (its datagrams let
    through to the iperf3 server, its connect datagram not counted), a limit that agrees with the NDR."""
    db = str(tmp_path / "i.db")
    out = linerate("rfc2544", "--link", "1g", "--frame-sizes", "1518", "--generator", "iperf3", "--relative-width", "0.1",
                   "--db", db, "--json",
                   timeout=600)
    [result] = json.loads(out.stdout)["results"]
    says_its_limit(result)  # iperf3 paces by timer: with both CPUs busy it measured 78,082 (96%) once
    conn = sqlite3.connect(db)
    assert conn.execute("SELECT generator FROM searches").fetchone()[0].startswith("iperf3 3.")
    for sent, forwarded, loss in conn.execute("SELECT sent, forwarded, dut_loss FROM search_trials WHERE purpose = 'search'"):
        assert forwarded == sent - loss and forwarded <= sent  # never the connect datagram on top
    refused = linerate("rfc2544", "--link", "1g", "--frame-sizes", "imix", "--generator", "iperf3", "--db", db,
                       check=False)
    assert refused.returncode == 2 and "IMIX mixes frame sizes" in refused.stderr


def test_ipv6_smallest_frames_carry_no_payload_and_are_still_counted(tmp_path):
    """A 66-byte IPv6 frame is headers only (an empty UDP datagram): the server's count must see it."""
    out = linerate("rfc2544", "--link", "1g", "--family", "6", "--frame-sizes", "66", "--relative-width", "0.1",
                   "--db", str(tmp_path / "6.db"),
                   "--json", timeout=600)
    [result] = json.loads(out.stdout)["results"]
    assert result["theoretical_fps"] == pytest.approx(1e9 / (8 * (66 + 20)))
    assert 10_000 < result["ndr_fps"] <= result["pdr_fps"], result
