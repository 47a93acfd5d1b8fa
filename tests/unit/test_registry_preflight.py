import os
import subprocess

from linerate.lab.registry import LabRecord, Registry
from linerate.process import ProcessRef
from linerate.preflight import Check, check_binaries, parse_iperf3_version, require
from linerate.exec import FakeExecutor
from linerate.errors import PreflightError

import pytest


def test_record_round_trip_and_orphan_detection(tmp_path):
    registry = Registry(tmp_path)
    child = subprocess.Popen(["sleep", "0"])
    child.wait()
    dead = ProcessRef(child.pid, 12345)
    alive = ProcessRef.of(os.getpid())
    registry.save(LabRecord("a1", "none", 1500, dead, namespaces=["lr-a1-client"]))
    registry.save(LabRecord("b2", "nat", 9000, alive))
    registry.save(LabRecord("c3", "stateful", 1500, None))
    records = {r.lab_id: r for r in registry.all()}
    assert records["a1"].orphaned() and records["a1"].namespaces == ["lr-a1-client"]
    assert not records["b2"].orphaned()
    assert not records["c3"].orphaned()  # kept on purpose by `lab up`
    registry.remove("a1")
    assert registry.load("a1") is None


def test_recycled_pid_is_not_taken_for_the_owner():
    me = ProcessRef.of(os.getpid())
    assert me.alive()
    assert not ProcessRef(me.pid, me.start_time + 1).alive()


def test_iperf3_version_parse():
    assert parse_iperf3_version("iperf 3.12 (cJSON 1.7.15)") == (3, 12)
    assert parse_iperf3_version("iperf 3.9.1") == (3, 9, 1)
    assert parse_iperf3_version("nonsense") is None


def test_missing_binaries_are_all_reported_with_fixes():
    host = FakeExecutor().respond(["iperf3", "--version"], "iperf 3.1.3")
    checks = check_binaries(which=lambda name: None if name in ("nft", "ethtool") else f"/bin/{name}", host=host)
    with pytest.raises(PreflightError) as info:
        require(checks)
    text = str(info.value)
    assert "nft" in text and "ethtool" in text and "3.7 or newer" in text
    assert info.value.exit_code == 2


def test_optional_checks_only_fail_when_asked_for():
    checks = [Check("qdisc netem", False, "unavailable: sch_netem is not in this kernel", required=False)]
    require(checks)
    with pytest.raises(PreflightError, match="sch_netem"):
        require(checks, extra_required=["qdisc netem"])
