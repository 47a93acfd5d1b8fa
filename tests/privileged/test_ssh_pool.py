"""A generator pool on real hosts over SSH: two clients and two servers, each an sshd in a namespace of
its own (tests/privileged/sshbed.py), each pair through DUT ports of its own. `testbed check` checks
every host and the path of every pair; a trial launches both pairs and sums them over their common window."""

import json
from pathlib import Path

import pytest

from tests.privileged.conftest import linerate
from tests.privileged.sshbed import SshBed, sh

SHAPED_BPS = 100e6  # each pair's way out of the DUT (tbf on wan0 and wan1)
# TCP goodput under a shaper that counts whole Ethernet frames: 1448 payload bytes per 1514-byte frame
GOODPUT_BPS = SHAPED_BPS * 1448 / 1514


@pytest.fixture(scope="module")
def pool(tmp_path_factory):
    bed = SshBed(tmp_path_factory.mktemp("sshpool"), pairs=2)
    try:
        bed.build()
        bed.trust_all()
        for port in ("wan0", "wan1"):
            sh("tc", "qdisc", "add", "dev", port, "root", "tbf", "rate", "100mbit", "burst", "20k", "latency", "50ms",
               ns=bed.ns("dut"))
        yield bed
    finally:
        bed.teardown()


def scratch_dirs() -> set[str]:
    return {p.name for p in Path("/tmp").glob("linerate-*") if p.is_dir()}  # the hosts share this machine's /tmp


def iperf3_anywhere(bed: SshBed) -> list[int]:
    return [pid for role in bed.roles for pid in bed.pids_in(role) if bed.comm(pid) == "iperf3"]


def test_testbed_check_checks_every_host_and_the_path_of_every_pair(pool):
    before = scratch_dirs()
    doc = json.loads(linerate("testbed", "check", str(pool.pool_inventory()), "--json").stdout)
    checks = {c["name"]: c for c in doc["checks"]}
    assert doc["ok"], doc["checks"]
    for role in ("client", "client2", "server", "server2", "dut"):
        assert checks[f"{role} ssh"]["ok"] and checks[f"{role} clock"]["ok"]
    for role in ("client", "client2", "server", "server2"):
        assert checks[f"{role} iperf3"]["ok"]
    for pair in ("client -> server", "client2 -> server2"):
        assert "DUT forwarded" in checks[f"path IPv4 {pair}"]["detail"]
    assert set(doc["environment"]) == {"client", "client2", "server", "server2", "dut"}
    assert not iperf3_anywhere(pool) and scratch_dirs() == before


def test_a_pool_trial_sums_both_pairs_over_the_window_in_which_both_sent(pool):
    before = scratch_dirs()
    out = json.loads(linerate("trial", "--testbed", str(pool.pool_inventory()), "--duration", "5", "--json").stdout)
    assert out["status"] == "ok", out.get("error")
    window, pairs = out["telemetry"]["pool"], out["telemetry"]["pairs"]
    assert [(p["client"], p["server"]) for p in pairs] == [("client", "server"), ("client2", "server2")]
    # each pair at its shaper's goodput; the aggregate is their sum over the common window
    assert all(p["throughput_bps"] == pytest.approx(GOODPUT_BPS, rel=0.06) for p in pairs), pairs
    assert out["throughput_bps"] == pytest.approx(sum(p["throughput_bps"] for p in pairs), rel=1e-6)
    assert window["pairs"] == 2 and 2.5 <= window["window_s"] <= 5.1
    assert out["telemetry"]["dut"]["window_reads"] == 2  # the DUT read over SSH within the common window
    assert not iperf3_anywhere(pool) and scratch_dirs() == before


def test_a_test_that_drives_one_pair_is_refused_on_a_pool_before_anything_runs(pool, tmp_path):
    before = scratch_dirs()
    db = tmp_path / "r.db"
    for argv in (["cps", "--object-sizes", "1k"], ["rfc2544", "--frame-sizes", "1518"]):
        proc = linerate(*argv, "--testbed", str(pool.pool_inventory()), "--db", str(db), check=False)
        assert proc.returncode == 2 and "generator pool of 2 pairs" in proc.stderr, proc.stderr
        assert "Traceback" not in proc.stderr
    assert not db.exists() and not iperf3_anywhere(pool) and scratch_dirs() == before
