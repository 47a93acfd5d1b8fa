"""Hostile inputs as root: a hostile DUT behind a real sshd (its sysctl prints 30 MB, terminal
escapes or binary; its `ip -j -s link` a counter of 1e400; its sysctl -w a 30 MB error), device
nodes as outputs (mknod), an immutable --db, a shared state directory, a planted `<id>.vm` link
beside real labs, a VM lab killed while it boots, and `testbed restore` with no --db from another
directory after a SIGKILLed run that used --db elsewhere.

Everything a test creates is removed by it: the sshd hosts by the module fixture (SshBed), labs by
`lab clean`/`lab down` (and the conftest fixture), device nodes and files with tmp_path."""

import json
import os
import signal
import stat
import subprocess
import time
from pathlib import Path

import pytest

from linerate.lab.netns import NETNS_DIR
from linerate.lab.registry import LabRecord, Registry
from linerate.model import probe_namespace
from linerate.process import ProcessRef
from tests.conftest import DATA
from tests.privileged.conftest import LINERATE, linerate, netns_names, pid_alive, unique_lab_name
from tests.privileged.sshbed import SshBed, sh
from tests.privileged.test_testbed_ssh import iperf3_on, sigkill_when

# lab names no other run chose (a fixed one meets what a killed run on this machine left)
PA1 = unique_lab_name("pa1")
PB1 = unique_lab_name("pb1")
PC1 = unique_lab_name("pc1")
SH1 = unique_lab_name("sh1")
VMK1 = unique_lab_name("vmk1")

TTL = "net.ipv4.ip_default_ttl"
FAKE_SYSCTL = """#!/bin/sh
mode=$(cat {mode} 2>/dev/null)
if [ "$1" = "-n" ] && [ "$2" = "{ttl}" ]; then
  case "$mode" in
    huge) head -c 30000000 /dev/zero | tr '\\0' '7'; echo; exit 0;;
    escape) printf '\\033]0;title\\007\\033[31m64\\n'; exit 0;;
    binary) printf '6\\0014\\377\\376\\n'; exit 0;;
  esac
fi
if [ "$1" = "-w" ] && [ "$mode" = "hugeerr" ]; then
  head -c 30000131 /dev/zero | tr '\\0' 'E' >&2; exit 1
fi
exec {real} "$@"
"""
FAKE_IP = """#!/bin/sh
if [ "$1" = "-j" ] && [ "$2" = "-s" ] && [ "$3" = "link" ]; then
  case "$(cat {mode} 2>/dev/null)" in
    overflow) echo '[{{"ifname":"lan0","stats64":{{"rx":{{"packets":1e400,"bytes":1}},"tx":{{"packets":1,"bytes":1}}}}}}]'
              exit 0;;
    flood) exec yes 9;;
    hang) sleep 900 & exec sleep 901;;
  esac
fi
exec {real} "$@"
"""
EXPERIMENT = """name = "hostile"
duration_s = 1
omit_s = 0
repetitions = {repetitions}
max_retries = 0
seed = 7
[axes]
dut_sysctls = ["net.ipv4.ip_default_ttl=50"]
"""


@pytest.fixture(scope="module")
def bed(tmp_path_factory):
    root = tmp_path_factory.mktemp("hostile")
    mode = root / "mode"
    mode.write_text("normal")
    overlays = {}
    for binary, template in (("sysctl", FAKE_SYSCTL), ("ip", FAKE_IP)):
        real = Path(subprocess.run(["readlink", "-f", f"/usr/sbin/{binary}"], capture_output=True, text=True,
                                   check=True).stdout.strip())
        copy = root / f"real-{binary}"
        subprocess.run(["cp", "-p", str(real), str(copy)], check=True)
        fake = root / f"fake-{binary}"
        fake.write_text(template.format(mode=mode, ttl=TTL, real=copy))
        fake.chmod(0o755)
        overlays[str(real)] = fake
    testbed = SshBed(root, overlays={"dut": overlays})
    testbed.mode = mode
    try:
        testbed.build()
        testbed.trust_all()
        yield testbed
    finally:
        testbed.teardown()


def ttl(bed) -> str:
    return sh("cat", "/proc/sys/net/ipv4/ip_default_ttl", ns=bed.ns("dut")).strip()


def journal_files(tmp_path) -> list[Path]:
    return list((tmp_path / "journal").glob("*.db")) if (tmp_path / "journal").exists() else []


def no_escapes_no_traceback(proc) -> None:
    both = proc.stdout + proc.stderr
    assert "\x1b" not in both and "\x07" not in both and "Traceback" not in both, both[-2000:]
    assert max((len(line) for line in both.splitlines()), default=0) < 2000
    assert "7" * 300 not in both and "E" * 300 not in both


@pytest.mark.parametrize("mode", ["huge", "escape", "binary"])
def test_a_hostile_dut_value_is_never_journaled_nor_written_back(bed, tmp_path, mode):
    bed.mode.write_text(mode)
    try:
        exp = tmp_path / "exp.toml"
        exp.write_text(EXPERIMENT.format(repetitions=1))
        db = tmp_path / "r.db"
        proc = linerate("run", str(exp), "--testbed", str(bed.inventory()), "--db", str(db), check=False)
        no_escapes_no_traceback(proc)
        assert ttl(bed) == "64"  # the change whose original could not be kept was never made
        if mode == "huge":  # more than the output cap: the read failed, the trial failed
            assert "printed more than" in proc.stdout + proc.stderr
        else:
            assert proc.returncode == 2 and "not a value linerate could put back" in proc.stderr
        assert db.stat().st_size < 2_000_000
        for path in journal_files(tmp_path):
            assert path.stat().st_size < 200_000
        again = linerate("testbed", "restore", str(bed.inventory()), check=False)
        no_escapes_no_traceback(again)
        assert again.returncode == 0 and "sysctl" not in again.stdout
    finally:
        bed.mode.write_text("normal")
    assert not iperf3_on(bed, "server")


def test_sigkill_then_restore_without_db_from_another_directory(bed, tmp_path, monkeypatch):
    """Item 8: the run used --db elsewhere.db; `testbed restore lab.toml` (no --db, another working
    directory) finds the journal by the testbed and restores every knob."""
    exp = tmp_path / "exp.toml"
    exp.write_text(EXPERIMENT.format(repetitions=30))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    proc = subprocess.Popen([*LINERATE, "run", str(exp), "--testbed", str(bed.inventory()),
                             "--db", str(elsewhere / "elsewhere.db")], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, cwd=elsewhere)
    sigkill_when(proc, lambda: ttl(bed) == "50", "the run applying the DUT sysctl")
    assert ttl(bed) == "50"
    other = tmp_path / "other"
    other.mkdir()
    monkeypatch.delenv("LINERATE_DB")
    restore = subprocess.run([*LINERATE, "testbed", "restore", str(bed.inventory())], capture_output=True,
                             text=True, cwd=other, timeout=120)
    assert restore.returncode == 0, restore.stdout + restore.stderr
    assert f"{TTL} back to 64" in restore.stdout and ttl(bed) == "64"
    assert not (other / "linerate.db").exists()
    deadline = time.monotonic() + 5
    while iperf3_on(bed, "server") and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not iperf3_on(bed, "server")


def test_a_restore_the_dut_refuses_stays_open_blocks_nothing_and_is_tried_again(bed, tmp_path):
    """The DUT's sysctl -w answers with a 30 MB error: the entry is reported with the command to run
    by hand, the iperf3 server is still stopped, the restore exits 1, the next restore tries the
    entry again, later runs are not blocked, and --resolve closes it."""
    exp = tmp_path / "exp.toml"
    exp.write_text(EXPERIMENT.format(repetitions=30))
    db = tmp_path / "k.db"
    proc = subprocess.Popen([*LINERATE, "run", str(exp), "--testbed", str(bed.inventory()), "--db", str(db)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    sigkill_when(proc, lambda: ttl(bed) == "50", "the run applying the DUT sysctl")
    bed.mode.write_text("hugeerr")
    try:
        first = linerate("testbed", "restore", str(bed.inventory()), check=False)
        no_escapes_no_traceback(first)
        assert first.returncode == 1 and "iperf3 server stopped" in first.stdout
        assert f"by hand: sysctl -w {TTL}=64" in first.stderr and "--resolve" in first.stderr
        second = linerate("testbed", "restore", str(bed.inventory()), check=False)
        no_escapes_no_traceback(second)
        assert second.returncode == 1 and "could not be restored" in second.stderr and "tries it again" in second.stderr
    finally:
        bed.mode.write_text("normal")
    sh("sysctl", "-qw", f"{TTL}=64", ns=bed.ns("dut"))  # what the user does by hand
    assert linerate("testbed", "restore", str(bed.inventory()), "--resolve", "all").returncode == 0
    exp.write_text(EXPERIMENT.format(repetitions=1))
    later = linerate("run", str(exp), "--testbed", str(bed.inventory()), "--db", str(db))
    assert "IPv4" in later.stdout and ttl(bed) == "64"
    assert linerate("testbed", "restore", str(bed.inventory())).stdout.count("nothing to restore") == 1


def test_a_counter_of_1e400_is_one_line_not_a_traceback(bed, tmp_path):
    bed.mode.write_text("overflow")
    try:
        check = linerate("testbed", "check", str(bed.inventory()), check=False)
        no_escapes_no_traceback(check)
        assert check.returncode == 1 and "lan0 rx_packets = inf is not a whole number" in check.stdout
        exp = tmp_path / "exp.toml"
        exp.write_text(EXPERIMENT.format(repetitions=1).replace('dut_sysctls = ["net.ipv4.ip_default_ttl=50"]',
                                                                'streams = [1]'))
        run = linerate("run", str(exp), "--testbed", str(bed.inventory()), "--db", str(tmp_path / "o.db"),
                       check=False)
        no_escapes_no_traceback(run)
    finally:
        bed.mode.write_text("normal")


@pytest.mark.parametrize("line, field", [('known_hosts = "/etc/shadow"', "known_hosts"),
                                         ('known_hosts = ""', "known_hosts"),
                                         ("identity", "identity")])
def test_hostile_inventory_files_are_one_line_without_their_content(bed, tmp_path, line, field):
    text = bed.inventory().read_text()
    if line == "identity":
        text = text.replace(f'identity = "{bed.user_key}"', f'identity = "{bed.known_hosts}"')
    else:
        text = "\n".join(line if row.startswith("known_hosts") else row for row in text.splitlines())
    path = tmp_path / "bad.toml"
    path.write_text(text)
    proc = linerate("testbed", "check", str(path), check=False)
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1 and field in proc.stderr
    assert "Traceback" not in proc.stderr
    shadow = Path("/etc/shadow").read_text().splitlines()
    assert not any(row and row in proc.stderr for row in shadow)
    assert Path(bed.known_hosts).read_text().count("\n") == 3  # nothing appended anywhere


# --- outputs, the store, the state directory, records, VM boot ------------------------------------

@pytest.fixture
def stored(tmp_path):
    db = tmp_path / "r.db"
    linerate("import", str(DATA / "iperf3" / "tcp_forward_p1.json"), "--label", "exp", "--db", str(db))
    return db


def test_device_nodes_survive_every_output_option(stored, tmp_path):
    node = tmp_path / "null"
    os.mknod(node, 0o666 | stat.S_IFCHR, os.makedev(1, 3))  # a /dev/null of our own
    for argv in (["report", "exp", "--format", "json", "-o", str(node)],
                 ["report", "exp", "--format", "html", "-o", str(node)],
                 ["report", "exp", "--plot", str(node)],
                 ["compare", "exp", "exp", "-o", str(node)]):
        linerate(*argv, "--db", str(stored))
        info = os.lstat(node)
        assert stat.S_ISCHR(info.st_mode) and info.st_rdev == os.makedev(1, 3), argv
    block = tmp_path / "disk"
    os.mknod(block, 0o600 | stat.S_IFBLK, os.makedev(7, 200))  # a loop device number, never opened
    refused = linerate("report", "exp", "--db", str(stored), "-o", str(block), check=False)
    assert refused.returncode == 2 and "block device" in refused.stderr
    assert stat.S_ISBLK(os.lstat(block).st_mode)


def test_an_immutable_db_is_one_line_and_nothing_is_left_beside_it(stored, tmp_path):
    for extra in ("-wal", "-shm"):
        Path(str(stored) + extra).unlink(missing_ok=True)
    subprocess.run(["chattr", "+i", str(stored)], check=True)
    try:
        proc = linerate("report", "exp", "--db", str(stored), check=False)
    finally:
        subprocess.run(["chattr", "-i", str(stored)], check=True)
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert not Path(str(stored) + "-wal").exists() and not Path(str(stored) + "-shm").exists()


def test_a_shared_state_directory_is_never_chmodded(tmp_path, monkeypatch):
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o1777)
    own = os.environ["LINERATE_STATE_DIR"]
    monkeypatch.setenv("LINERATE_STATE_DIR", str(shared))
    before = netns_names()
    try:
        proc = linerate("lab", "up", "--name", SH1, check=False)
    finally:
        monkeypatch.setenv("LINERATE_STATE_DIR", own)  # the teardown fixture reads the test's own registry
    assert proc.returncode == 2 and "1777" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
    assert stat.S_IMODE(shared.stat().st_mode) == 0o1777 and list(shared.iterdir()) == []
    assert netns_names() == before


def test_lab_clean_removes_every_lab_past_a_planted_vm_link(tmp_path):
    before = netns_names()
    for name in (PA1, PB1, PC1):
        linerate("lab", "up", "--name", name)
    registry = Registry()
    (registry.state_dir / f"{PA1}.vm").symlink_to(tmp_path)
    try:
        proc = linerate("lab", "clean", "--all", check=False)
        assert proc.returncode == 1 and f"left lab {PA1} untouched" in proc.stdout
        assert not any(ns.startswith((f"lr-{PB1}-", f"lr-{PC1}-")) for ns in netns_names())  # the later labs went
        assert any(ns.startswith(f"lr-{PA1}-") for ns in netns_names()) and tmp_path.is_dir()
    finally:
        (registry.state_dir / f"{PA1}.vm").unlink()
        linerate("lab", "clean", "--all")
    assert netns_names() == before


def test_a_namespace_killed_before_its_mount_is_removed_and_a_planted_file_is_not():
    """netns.create makes the mount point first, then mounts: a SIGKILL between the two leaves an
    empty mode-0 file. `lab clean` removes that; any other file under a derived name stays."""
    me = ProcessRef.me()
    half = LabRecord("a0b1c2", owner=ProcessRef(me.pid, me.start_time + 1), kind="probe",
                     namespaces=[probe_namespace("a0b1c2")])
    planted = LabRecord("d3e4f5", owner=ProcessRef(me.pid, me.start_time + 1), kind="probe",
                        namespaces=[probe_namespace("d3e4f5")])
    paths = [NETNS_DIR / probe_namespace("a0b1c2"), NETNS_DIR / probe_namespace("d3e4f5")]
    os.close(os.open(paths[0], os.O_RDONLY | os.O_CREAT | os.O_EXCL, 0))
    paths[1].write_text("not a namespace\n")
    registry = Registry()
    try:
        registry.create(half)
        registry.create(planted)
        proc = linerate("lab", "clean", check=False)
        assert proc.returncode == 1 and "left probe d3e4f5 untouched" in proc.stdout, proc.stdout
        assert not paths[0].exists() and paths[1].read_text() == "not a namespace\n"
        assert not (registry.state_dir / "a0b1c2.json").exists()
    finally:
        for path in paths:
            path.unlink(missing_ok=True)
        for lab_id in ("a0b1c2", "d3e4f5"):
            (registry.state_dir / f"{lab_id}.json").unlink(missing_ok=True)


def test_a_vm_lab_killed_while_booting_is_removed_by_lab_clean():
    before = netns_names()
    proc = subprocess.Popen([*LINERATE, "lab", "up", "--name", VMK1, "--dut", "vm", "--accel", "tcg"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def booting() -> bool:
        record = Registry().load(VMK1) if (Registry().state_dir / f"{VMK1}.json").exists() else None
        return bool(record and record.servers and not record.vm)  # qemu started, the guest not ready

    qemu = []
    try:
        deadline = time.monotonic() + 120
        while not booting():
            assert time.monotonic() < deadline and proc.poll() is None, "never saw the VM booting"
            time.sleep(0.05)
        qemu = [s.pid for s in Registry().load(VMK1).servers]
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    status = json.loads(linerate("lab", "status", "--json").stdout)["labs"]
    assert [row["state"] for row in status if row["name"] == VMK1] == ["orphaned"]
    out = linerate("lab", "clean").stdout  # without --all
    assert f"removed lab {VMK1}" in out
    deadline = time.monotonic() + 10
    while any(pid_alive(pid) for pid in qemu) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(pid_alive(pid) for pid in qemu)
    assert netns_names() == before and not (Registry().state_dir / f"{VMK1}.vm").exists()


@pytest.mark.parametrize("mode", ["flood", "hang"])
def test_one_telemetry_command_that_floods_or_hangs_loses_only_its_own_figures(bed, tmp_path, mode):
    """`ip -j -s link` on the DUT prints forever, or never ends (with a child of its own): the trial is
    stored with the other probes' counters, its telemetry names the one that failed, and nothing of
    it is left running on the DUT."""
    import sqlite3

    exp = tmp_path / "exp.toml"
    exp.write_text(EXPERIMENT.format(repetitions=1).replace('dut_sysctls = ["net.ipv4.ip_default_ttl=50"]',
                                                            'dut_offloads = ["lan0:tso=off"]'))
    db = tmp_path / "t.db"
    bed.mode.write_text(mode)
    try:
        run = linerate("run", str(exp), "--testbed", str(bed.inventory()), "--db", str(db), check=False, timeout=300)
    finally:
        bed.mode.write_text("normal")
    no_escapes_no_traceback(run)
    assert run.returncode == 0, run.stderr[-2000:]
    status, counters, telemetry = sqlite3.connect(db).execute(
        "SELECT status, dut_counters, telemetry FROM trials").fetchone()
    assert status == "ok"
    dut = json.loads(telemetry)["dut"]
    assert dut.get("partial") or dut.get("unavailable"), dut  # what is missing is said ...
    assert "ip -j -s link" in json.dumps(dut), dut  # ... naming the one probe, and only its figures are lost
    assert any(key.startswith(("softnet", "forwarded")) for key in json.loads(counters)), counters
    assert "connection lost" not in run.stdout + run.stderr  # the other commands on the connection went on
    tso = sh("ethtool", "-k", "lan0", ns=bed.ns("dut"))
    assert "tcp-segmentation-offload: on" in tso  # the knob the run changed is back
    deadline = time.monotonic() + 5  # ... and the hung one was killed on the DUT with its child
    while time.monotonic() < deadline and any(
            bed.comm(pid) in ("sleep", "yes") for pid in bed.pids_in("dut")):
        time.sleep(0.2)
    assert not [pid for pid in bed.pids_in("dut") if bed.comm(pid) in ("sleep", "yes")]
