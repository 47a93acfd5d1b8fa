"""State files are input: crafted records must never make `lab clean` delete a file, touch a
namespace linerate did not make, or signal a process it did not start."""

import json
import os
import stat
import subprocess
import sys

import pytest

from linerate.cli import main
from linerate.errors import ConfigError, LabError
from linerate.lab.registry import LabRecord, Registry, RecordError, vet
from linerate.process import ProcessRef


def dead_ref() -> ProcessRef:
    child = subprocess.Popen(["true"])
    child.wait()
    return ProcessRef(child.pid, 1)


def write_record(state_dir, name, doc):
    state_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    state_dir.chmod(0o700)
    (state_dir / f"{name}.json").write_text(json.dumps(doc))


@pytest.fixture
def state_dir(tmp_path, monkeypatch):
    path = tmp_path / "labs"
    monkeypatch.setenv("LINERATE_STATE_DIR", str(path))
    return path


def test_crafted_records_are_reported_and_nothing_is_touched(state_dir, tmp_path, capsys):
    victim = tmp_path / "victim"
    victim.write_text("precious")
    sleeper = subprocess.Popen(["sleep", "30"])  # a live process linerate never started
    dead = dead_ref()
    try:
        base = {"firewall": "none", "mtu": 1500, "owner": {"pid": dead.pid, "start_time": dead.start_time},
                "created": 0, "servers": []}
        write_record(state_dir, "evil1", {**base, "lab_id": "evil1", "namespaces": [f"../../{victim}"]})
        write_record(state_dir, "evil2", {**base, "lab_id": "evil2", "namespaces": ["/proc/1/ns/net"]})
        write_record(state_dir, "evil3", {**base, "lab_id": "evil3", "namespaces": ["lr-evil3-dut"],
                                          "servers": [{"pid": sleeper.pid,
                                                       "start_time": ProcessRef.of(sleeper.pid).start_time}]})
        write_record(state_dir, "evil4", {**base, "lab_id": "other", "namespaces": []})  # name mismatch
        (state_dir / "evil5.json").write_text("[" * 50000)  # nesting bomb
        assert main(["lab", "clean"]) == 1
        out = capsys.readouterr().out
        untouched = [line for line in out.splitlines() if "untouched" in line]
        assert len(untouched) == 5 and all(any(f"evil{i}" in line for line in untouched) for i in range(1, 6))
        assert "not one linerate derives" in out and f"pid {sleeper.pid} is alive but not inside" in out
        assert "names lab 'other'" in out and "not JSON" in out
        assert victim.read_text() == "precious" and sleeper.poll() is None
        assert sorted(p.name for p in state_dir.glob("*.json")) == [f"evil{i}.json" for i in range(1, 6)]
    finally:
        sleeper.kill()
        sleeper.wait()


def test_a_recycled_pid_is_never_signalled(state_dir):
    me = ProcessRef.of(os.getpid())
    record = LabRecord("abc", owner=ProcessRef(me.pid, me.start_time + 1))  # "owner" looks dead
    assert record.orphaned()
    record.servers.append(me)  # our own pid, alive, but in no lab namespace
    assert any("not inside" in p for p in vet(record))


def test_duplicate_name_never_removes_the_existing_record(state_dir):
    registry = Registry()
    first = LabRecord("dup1", "stateful", 1500, None, namespaces=["lr-dup1-client"])
    registry.create(first)
    with pytest.raises(ConfigError, match="already exists"):
        registry.create(LabRecord("dup1", "none", 9000, None))
    assert registry.load("dup1").firewall == "stateful"


def test_files_are_private_and_links_are_not_followed(state_dir, tmp_path):
    registry = Registry()
    registry.create(LabRecord("p1", owner=ProcessRef.me()))
    assert stat.S_IMODE(os.stat(state_dir).st_mode) == 0o700
    assert stat.S_IMODE(os.stat(state_dir / "p1.json").st_mode) == 0o600
    elsewhere = tmp_path / "elsewhere.json"
    elsewhere.write_text(LabRecord("p2").to_json())
    os.symlink(elsewhere, state_dir / "p2.json")
    with pytest.raises(LabError, match="symbolic link"):
        registry.load("p2")
    target = tmp_path / "target"
    target.write_text("keep")
    # a planted link where a temp file could be written is never written through
    os.symlink(target, state_dir / ".linerate-p1.99999.deadbeef.tmp")
    registry.save(LabRecord("p1", owner=ProcessRef.me()))
    assert target.read_text() == "keep"


def test_stale_temp_files_of_dead_writers_are_removed_by_writes_only(state_dir):
    registry = Registry()
    registry.create(LabRecord("t1", owner=ProcessRef.me()))
    dead = dead_ref()
    stale = state_dir / f".linerate-t1.{dead.pid}.0123abcd.tmp"
    live = state_dir / f".linerate-t1.{os.getpid()}.0123abcd.tmp"
    foreign = state_dir / f".foo.{dead.pid}.abcdef12.tmp"  # not linerate's name pattern
    stale.write_text("half")
    live.write_text("being written")
    foreign.write_text("someone else's")
    registry.all()  # reading (lab status) deletes nothing
    assert stale.exists() and live.exists() and foreign.exists()
    registry.create(LabRecord("t2", owner=ProcessRef.me()))  # a write sweeps linerate's own stale temps
    assert not stale.exists() and live.exists() and foreign.exists()


@pytest.mark.parametrize("argv", [["lab", "down", "../x"], ["lab", "down", "a" * 300],
                                  ["lab", "stop-server", "../../etc"], ["trial", "--lab", "/proc/1"],
                                  ["lab", "up", "--name", ""]])
def test_lab_names_are_validated_at_input(state_dir, argv, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "lab name" in err
    assert not state_dir.exists()


@pytest.mark.parametrize("doc", [
    [], "text", {"lab_id": "ok"} | {"extra": 1}, {"lab_id": "BAD"}, {"lab_id": "ok", "mtu": "1500"},
    {"lab_id": "ok", "owner": {"pid": -1, "start_time": 0}}, {"lab_id": "ok", "owner": {"pid": True, "start_time": 0}},
    {"lab_id": "ok", "namespaces": [1]}, {"lab_id": "ok", "kind": "other"}, {"lab_id": "ok", "params": {"a": [1]}},
    {"lab_id": "ok", "cpus": [True]}, {"lab_id": "ok", "cpus": [-1]}, {"lab_id": "ok", "cpus": [8192]},
    {"lab_id": "ok", "cpus": "0-1"},
])
def test_malformed_records_are_rejected(doc):
    with pytest.raises(RecordError):
        LabRecord.from_json(json.dumps(doc))


def test_sigkill_during_preflight_leaves_a_record_that_clean_removes(state_dir):
    """No root needed to see the bookkeeping: a probe record of a dead owner whose namespace is
    already gone is cleaned; the real-namespace version runs in tests/privileged."""
    Registry().create(LabRecord("abc123", owner=dead_ref(), kind="probe", namespaces=["lr-probe-abc123"]))
    proc = subprocess.run([sys.executable, "-m", "linerate", "lab", "clean"], capture_output=True, text=True)
    assert proc.returncode == 0 and "removed probe abc123" in proc.stdout
    assert list(state_dir.glob("*.json")) == []


def test_a_record_keeps_the_cpus_its_lab_was_laid_out_over():
    assert LabRecord.from_json(LabRecord("ok", cpus=[0, 1]).to_json()).cpus == [0, 1]
    assert LabRecord.from_json(json.dumps({"lab_id": "ok"})).cpus == []  # a record from before: the command's own
