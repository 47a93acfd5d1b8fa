"""Real testbeds over SSH: real OpenSSH servers in namespaces act as client, DUT and server hosts
(tests/privileged/sshbed.py); linerate reaches the DUT only over SSH."""

import contextlib
import json
import os
import re
import signal
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest

from tests.privileged.conftest import LINERATE, linerate, missed_a_window_read
from tests.privileged.sshbed import SshBed, sh

EXPERIMENT = """name = "sshbed"
duration_s = 1
omit_s = 0
repetitions = 2
seed = 7
[axes]
dut_sysctls = ["default", "net.ipv4.ip_default_ttl=50"]
dut_offloads = ["lan0:gro=on"]
"""


@pytest.fixture(scope="module")
def bed(tmp_path_factory):
    testbed = SshBed(tmp_path_factory.mktemp("sshbed"))
    try:
        testbed.build()
        testbed.trust_all()
        yield testbed
    finally:
        testbed.teardown()


@pytest.fixture(autouse=True)
def nothing_left_running(bed):
    """After each test no iperf3 or nginx of a run may be left on the hosts. One that is fails the
    test that left it, and is removed (testbed restore, then kill) so the next test starts clean
    instead of failing on a port still taken."""
    yield
    def running() -> dict[str, list[int]]:
        return {role: [pid for pid in bed.pids_in(role) if bed.comm(pid) in ("iperf3", "nginx")]
                for role in ("client", "dut", "server")}
    deadline = time.monotonic() + 5  # a server being stopped as the test ended gets time to exit
    while any((left := running()).values()) and time.monotonic() < deadline:
        time.sleep(0.2)
    if any(left.values()):
        seen = {pid: describe(pid) for pids in left.values() for pid in pids}  # what it was, for the failure
        restored = linerate("testbed", "restore", str(bed.inventory()), check=False).stdout.strip()
        for pid in (pid for pids in left.values() for pid in pids):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        pytest.fail(f"left running after the test: {left} {seen}; testbed restore then said: {restored!r}")


def describe(pid: int) -> str:
    """A leftover process as `ps -o pid,ppid,sid,etime,args` would show it (from /proc/PID/stat and cmdline)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
        args = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return "gone"
    return f"ppid {stat[1]} sid {stat[3]} started at tick {stat[19]}: {args}"


def sigkill_when(proc: subprocess.Popen, ready, what: str, timeout_s: float = 120) -> None:
    """SIGKILL the run the moment ready() holds; fail if it never does (or the run ends first)."""
    try:
        deadline = time.monotonic() + timeout_s
        while not ready():
            if time.monotonic() > deadline or proc.poll() is not None:
                pytest.fail(f"never saw {what}")
            time.sleep(0.1)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def dut_state(bed) -> tuple[str, str]:
    ttl = sh("sysctl", "-n", "net.ipv4.ip_default_ttl", ns=bed.ns("dut")).strip()
    gro = [line for line in sh("ethtool", "-k", "lan0", ns=bed.ns("dut")).splitlines()
           if line.startswith("generic-receive-offload")][0].split(":")[1].split()[0]
    return ttl, gro


def iperf3_on(bed, role: str) -> list[int]:
    return [pid for pid in bed.pids_in(role) if bed.comm(pid) == "iperf3"]


def test_check_all_ok_and_bypass_fails(bed):
    result = linerate("testbed", "check", str(bed.inventory()), "--json")
    doc = json.loads(result.stdout)
    assert doc["ok"] and {c["name"] for c in doc["checks"]} >= {"client ssh", "dut os", "path IPv4", "server iperf3"}
    path = next(c for c in doc["checks"] if c["name"] == "path IPv4")
    assert "DUT forwarded" in path["detail"]
    assert doc["environment"]["dut"]["os"] == "Linux" and doc["environment"]["dut"]["offloads"]["lan0"]
    bypass = linerate("testbed", "check", str(bed.inventory(bypass=True)), check=False)
    assert bypass.returncode == 1
    assert "does not cross the DUT" in bypass.stdout
    assert not iperf3_on(bed, "server")


def scratch_dirs() -> set[str]:
    return {p.name for p in Path("/tmp").glob("linerate-*") if p.is_dir()}  # the hosts share this machine's /tmp


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL])
def test_a_check_stopped_during_its_burst_leaves_no_server_or_directory(bed, sig):
    """`testbed check` stopped while its burst runs: SIGTERM ends it through its clean-up (143); after a
    SIGKILL, `testbed restore` finds the server and directory it journaled before making them. Either way
    nothing is left, and the next check passes (its port is free again)."""
    before = scratch_dirs()
    proc = subprocess.Popen([*LINERATE, "testbed", "check", str(bed.inventory())], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not bed.daemons("server", "iperf3") and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert proc.poll() is None, "the check ended before its burst's server came up"
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=60)
    if sig == signal.SIGTERM:
        assert proc.returncode == 143 and "SIGTERM" in err, err[-400:]
        assert "nothing to restore" in linerate("testbed", "restore", str(bed.inventory())).stdout
    else:
        restored = linerate("testbed", "restore", str(bed.inventory())).stdout
        assert "iperf3 server stopped" in restored and "removed" in restored, restored
    assert not iperf3_on(bed, "server") and scratch_dirs() == before
    assert linerate("testbed", "check", str(bed.inventory())).returncode == 0


def test_changed_and_unknown_host_keys_are_refused(bed, tmp_path):
    wrong = tmp_path / "known_hosts"
    other = bed.host_key_line("server").split()[1:]  # the server's key, filed under the DUT's address
    wrong.write_text(bed.host_key_line("client") + f"{bed.host_key_line('dut').split()[0]} {' '.join(other)}\n")
    changed = linerate("testbed", "check", str(bed.inventory(known_hosts=wrong)), check=False)
    assert changed.returncode == 2, changed.stderr
    assert "changed" in changed.stderr and changed.stderr.count("SHA256:") >= 2
    empty = tmp_path / "empty_known_hosts"
    unknown = linerate("testbed", "check", str(bed.inventory(known_hosts=empty)), check=False)
    assert unknown.returncode == 2 and "--accept-new-host-keys" in unknown.stderr
    assert not empty.exists()  # refused before anything was written


@pytest.mark.parametrize("key, value", [
    ("ssh", "root@198.19.250.2; touch /tmp/lrt-pwned"),
    ("test_address", "198.18.1.10 -J"),
    ("bogus", "1"),
    ("identity", "/nonexistent/$(reboot)"),
])
def test_bad_inventory_exits_2_and_touches_nothing(bed, tmp_path, key, value):
    text = bed.inventory().read_text()
    client = text[text.index("[client]"):text.index("[server]")]
    lines = [line for line in client.splitlines() if not line.startswith(f"{key} =")]
    lines.insert(1, f'{key} = "{value}"')
    path = tmp_path / "bad.toml"
    path.write_text(text.replace(client, "\n".join(lines) + "\n"))
    before = bed.known_hosts.read_text()
    result = linerate("testbed", "check", str(path), check=False)
    assert result.returncode == 2, result.stdout + result.stderr
    assert str(path) in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert not Path("/tmp/lrt-pwned").exists() and bed.known_hosts.read_text() == before


def test_experiment_over_ssh_stores_dut_telemetry(bed, tmp_path):
    exp = tmp_path / "exp.toml"
    exp.write_text(EXPERIMENT)
    db = tmp_path / "r.db"
    before = dut_state(bed)
    result = linerate("run", str(exp), "--testbed", str(bed.inventory()), "--db", str(db))
    assert "IPv4" in result.stdout
    assert dut_state(bed) == before  # every knob put back at the end
    conn = sqlite3.connect(db)
    rows = conn.execute("SELECT status, dut_counters, telemetry FROM trials").fetchall()
    assert len(rows) == 4 and all(status == "ok" for status, _, _ in rows)
    for _, counters, telemetry in rows:
        assert json.loads(counters)["forwarded_packets"] > 1000
        cpus = json.loads(telemetry)["dut"]["cpu"]
        assert cpus and all(0 <= c["busy_pct"] <= 100 for c in cpus)
    env = json.loads(conn.execute("SELECT environment FROM experiments").fetchone()[0])
    assert env["kind"] == "ssh" and set(env["hosts"]) == {"client", "dut", "server"}
    assert env["hosts"]["server"]["iperf3_version"] and env["hosts"]["dut"]["cpu_count"]
    assert conn.execute("SELECT COUNT(*) FROM dut_journal WHERE restored_at IS NULL").fetchone()[0] == 0
    report = linerate("report", "sshbed", "--db", str(db))
    table = [line for line in report.stdout.splitlines() if line.startswith("|")]
    assert "ip_default_ttl=50" in table[0]  # one column per configuration, as for the namespace lab
    assert any(line.startswith("| IPv4 1 stream") for line in table)
    assert not iperf3_on(bed, "server")


def test_sigkill_then_restore_puts_every_knob_back(bed, tmp_path):
    exp = tmp_path / "exp.toml"
    exp.write_text(EXPERIMENT.replace("repetitions = 2", "repetitions = 30"))
    db = tmp_path / "k.db"
    original = dut_state(bed)
    proc = subprocess.Popen([*LINERATE, "run", str(exp), "--testbed", str(bed.inventory()), "--db", str(db)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    sigkill_when(proc, lambda: db.exists() and dut_state(bed)[0] == "50", "the run applying the DUT sysctl")
    assert dut_state(bed) != original  # the kill left knobs changed ...
    restore = linerate("testbed", "restore", str(bed.inventory()), "--db", str(db))
    assert "net.ipv4.ip_default_ttl back to 64" in restore.stdout and "iperf3 server stopped" in restore.stdout
    assert dut_state(bed) == original  # ... and restore put every one back, read from the DUT itself
    deadline = time.monotonic() + 5
    while iperf3_on(bed, "server") and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not iperf3_on(bed, "server") and not iperf3_on(bed, "client")
    again = linerate("testbed", "restore", str(bed.inventory()), "--db", str(db))
    assert "nothing to restore" in again.stdout


@pytest.mark.parametrize("delay_s", [0.0, 0.15, 0.3])
def test_a_signal_as_the_last_trial_ends_waits_for_the_restore(bed, tmp_path, delay_s):
    """SIGTERM right after the last trial, while the run puts the DUT back: the restore finishes first
    (every knob read back, the iperf3 server stopped), then the run ends with 143 — nothing is left for
    `testbed restore`."""
    exp = tmp_path / "exp.toml"
    exp.write_text(EXPERIMENT.replace("repetitions = 2", "repetitions = 1").replace('"default", ', ""))
    original = dut_state(bed)
    proc = subprocess.Popen([*LINERATE, "run", str(exp), "--testbed", str(bed.inventory()), "--db",
                             str(tmp_path / "s.db")], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    sent = False
    for line in proc.stdout:
        if not sent and "[1/1]" in line:
            time.sleep(delay_s)
            proc.send_signal(signal.SIGTERM)
            sent = True
    proc.wait(timeout=60)
    assert sent, "the run never reported its trial"
    assert proc.returncode in (0, 143)  # 0: it had finished before the signal came
    assert dut_state(bed) == original and not iperf3_on(bed, "server")
    assert "nothing to restore" in linerate("testbed", "restore", str(bed.inventory())).stdout


def server_tables(bed) -> str:
    return sh("nft", "list", "tables", ns=bed.ns("server"))


def test_rfc2544_over_ssh_counts_frames_that_crossed_the_dut(bed, tmp_path):
    """An rfc2544 experiment file on the testbed: the cell's DUT knob applied before its search and
    put back after, every search trial's frames seen forwarded by the DUT's own counters, the
    server's counting table gone and its journal entry closed."""
    exp = tmp_path / "pkt.toml"
    exp.write_text('name = "sshpkt"\ntest = "rfc2544"\nrepetitions = 1\nduration_s = 1\nframe_sizes = ["imix"]\n'
                   'relative_width = 0.1\n'
                   '[axes]\ndut_sysctls = ["default", "net.ipv4.ip_default_ttl=50"]\n')
    db = tmp_path / "p.db"
    before = dut_state(bed)
    result = linerate("run", str(exp), "--testbed", str(bed.inventory()), "--db", str(db), timeout=600)
    # the bed's DUT ports are veths, whose 10000 Mbit/s is the driver's constant: no line rate, so no "(max ...)"
    assert "| IMIX | NDR " in result.stdout and "2 searches" in result.stdout, result.stdout
    assert dut_state(bed) == before and "linerate_rfc2544" not in server_tables(bed)
    conn = sqlite3.connect(db)
    assert conn.execute("SELECT COUNT(*) FROM searches WHERE status = 'done'").fetchone()[0] == 2
    trials = conn.execute("SELECT purpose, forwarded, dut_loss, dut_counters FROM search_trials").fetchall()
    crossed = [(fwd, json.loads(counters)) for purpose, fwd, loss, counters in trials if purpose == "search" and fwd]
    assert crossed and all(counters["ipv4_forwarded"] >= fwd for fwd, counters in crossed)  # nstat on the DUT
    assert conn.execute("SELECT COUNT(*) FROM dut_journal WHERE restored_at IS NULL").fetchone()[0] == 0
    assert not iperf3_on(bed, "server")


def test_rfc2544_killed_mid_search_leaves_a_table_restore_removes(bed, tmp_path):
    db = tmp_path / "k.db"
    proc = subprocess.Popen([*LINERATE, "rfc2544", "--testbed", str(bed.inventory()), "--frame-sizes", "64",
                             "--trial-duration", "5", "--db", str(db)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    sigkill_when(proc, lambda: "linerate_rfc2544" in server_tables(bed), "the search creating its counting table")
    assert "linerate_rfc2544" in server_tables(bed)  # the kill left it ...
    restore = linerate("testbed", "restore", str(bed.inventory()), "--db", str(db))
    assert "nftables table inet linerate_rfc2544 removed" in restore.stdout
    assert "linerate_rfc2544" not in server_tables(bed)  # ... and restore removed it
    deadline = time.monotonic() + 10
    while [pid for pid in bed.pids_in("client") if bed.comm(pid) == "trafgen"] and time.monotonic() < deadline:
        time.sleep(0.2)  # the killed run's last trafgen finishes its 5 s of frames
    assert not [pid for pid in bed.pids_in("client") if bed.comm(pid) == "trafgen"]


ONE_SECOND = """name = "sshfast"
duration_s = 1
omit_s = 0
repetitions = 6
seed = 3
"""


def test_one_second_trials_lose_nothing_to_telemetry(bed, tmp_path):
    """Issue #25: with 1 s trials about half failed 'iperf3 ended before the measured window was read'.
    The window is placed by the measured read cost: every trial keeps its figure and both window reads."""
    exp, db = tmp_path / "fast.toml", tmp_path / "f.db"
    exp.write_text(ONE_SECOND)
    linerate("run", str(exp), "--testbed", str(bed.inventory()), "--db", str(db))
    rows = sqlite3.connect(db).execute("SELECT status, final, telemetry FROM trials").fetchall()
    assert len(rows) == 6 and all(status == "ok" and final for status, final, _ in rows), rows
    both = 0
    for _, _, telemetry in rows:
        dut = json.loads(telemetry)["dut"]
        if dut["window_reads"] == 2:  # the DUT's CPU over the window between its two reads
            assert "partial" not in dut and dut["cpu"], dut
            both += 1
        else:  # a read the host's load made slower than the cost measured idle: the trial keeps its figure and
            # says which read it missed (as a kept image lab's trial does)
            assert missed_a_window_read(dut), dut
        assert set(json.loads(telemetry)) >= {"client", "server"}  # the generator hosts' CPUs too
    assert both >= 1, rows  # the window placed by the measured read cost holds both reads


TUNE = """name = "sshtune"
test = "tune"
duration_s = 1
omit_s = 0
budget_trials = 24
[candidates]
dut_sysctls = ["net.ipv4.ip_default_ttl=50"]
dut_offloads = ["lan0:gro=off"]
"""


def test_tune_over_ssh_decides_and_puts_every_knob_back(bed, tmp_path):
    """A short tune of real DUT knobs: every decision made within the budget, the final
    configuration printed for Linux, and the DUT holding its original knobs afterwards."""
    exp = tmp_path / "tune.toml"
    exp.write_text(TUNE)
    db = tmp_path / "t.db"
    original = dut_state(bed)
    result = linerate("tune", str(exp), "--testbed", str(bed.inventory()), "--db", str(db), timeout=600)
    assert "| dut_sysctls | net.ipv4.ip_default_ttl=50 |" in result.stdout, result.stdout
    assert dut_state(bed) == original
    doc = json.loads(linerate("report", "sshtune", "--db", str(db), "--format", "json").stdout)
    assert len(doc["decisions"]) == 2 and doc["trials"] <= 24
    assert {d["decision"] for d in doc["decisions"]} <= {"accepted", "rejected", "inconclusive"}
    trials = sqlite3.connect(db).execute("SELECT COUNT(*) FROM trials WHERE final = 1").fetchone()[0]
    assert trials == doc["trials"]


def test_tune_sigkill_then_restore_puts_every_knob_back(bed, tmp_path):
    exp = tmp_path / "tune.toml"
    exp.write_text(TUNE)
    db = tmp_path / "k.db"
    original = dut_state(bed)
    proc = subprocess.Popen([*LINERATE, "tune", str(exp), "--testbed", str(bed.inventory()), "--db", str(db)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    sigkill_when(proc, lambda: db.exists() and dut_state(bed)[0] == "50", "the tune applying the candidate sysctl")
    assert dut_state(bed) != original
    restore = linerate("testbed", "restore", str(bed.inventory()))
    assert "net.ipv4.ip_default_ttl back to 64" in restore.stdout
    assert dut_state(bed) == original
    resumed = linerate("tune", str(exp), "--testbed", str(bed.inventory()), "--db", str(db), "--resume",
                       timeout=900)
    assert "(resumed)" in resumed.stdout and dut_state(bed) == original


def nginx_on(bed) -> list[int]:
    return [pid for pid in bed.pids_in("server") if bed.comm(pid) == "nginx"]


def test_cps_over_ssh_journals_nginx_and_restore_stops_a_killed_runs_server(bed, tmp_path):
    db = tmp_path / "c.db"
    result = linerate("cps", "--testbed", str(bed.inventory()), "--object-sizes", "1k", "--trial-duration", "1",
                      "--max-rate", "400", "--repetitions", "1", "--db", str(db), "--json", timeout=600)
    [config] = json.loads(result.stdout)["configurations"]
    assert config["cps"]["n"] == 1 and config["cps"]["mean"] > 0
    # the latency trial's capture ran on the remote client (tcpdump over SSH) and was read back
    assert config["timed_connections"] > 0 and config["ttfb_p50_s"] > 0, config
    assert not nginx_on(bed)
    proc = subprocess.Popen([*LINERATE, "cps", "--testbed", str(bed.inventory()), "--object-sizes", "1k",
                             "--trial-duration", "1", "--max-rate", "100000", "--db", str(db), "--name", "killed"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    sigkill_when(proc, lambda: bool(bed.daemons("server", "nginx")), "nginx running as a daemon on the server")
    assert nginx_on(bed)  # the kill left the server running ...
    restore = linerate("testbed", "restore", str(bed.inventory()))
    assert "nginx stopped pid" in restore.stdout, restore.stdout
    deadline = time.monotonic() + 10
    while nginx_on(bed) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not nginx_on(bed)  # ... and restore stopped it by its pid file


def test_files_on_the_hosts_never_follow_a_path_planted_in_tmp(bed, tmp_path):
    """A local user plants links and a directory where linerate used to write as root (a cps run's
    nginx directory and the iperf3 pid file had fixed names in /tmp): the victims are unchanged, the
    run uses directories of its own, and leaves none behind."""
    from linerate.testbed.inventory import load_inventory

    key = load_inventory(bed.inventory()).identity_key()
    victim = tmp_path / "victim"
    victim.write_text("root's own file\n")
    victim.chmod(0o600)
    planted = [Path(f"/tmp/linerate-{key}-nginx"), Path(f"/tmp/linerate-{key}-5201.pid")]
    for path in planted:
        path.symlink_to(victim)
    before = set(Path("/tmp").glob(f"linerate-{key}-*"))
    try:
        result = linerate("cps", "--testbed", str(bed.inventory()), "--object-sizes", "1k", "--trial-duration",
                          "1", "--max-rate", "200", "--repetitions", "1", "--latency-load", "0",
                          "--db", str(tmp_path / "p.db"), "--json", timeout=600)
        assert json.loads(result.stdout)["configurations"][0]["cps"]["mean"] > 0
        assert victim.read_text() == "root's own file\n" and victim.stat().st_mode & 0o777 == 0o600
        assert all(path.is_symlink() for path in planted)
        assert set(Path("/tmp").glob(f"linerate-{key}-*")) == before  # its own directories went with it
    finally:
        for path in planted:
            path.unlink()


def test_a_refused_second_run_leaves_the_first_and_its_server_alone(bed, tmp_path):
    exp = tmp_path / "exp.toml"
    # the first run outlives the four refused ones however slow the host (~2.5 s a trial here: 100 trials), and is
    # stopped below, once they are checked
    exp.write_text(EXPERIMENT.replace("repetitions = 2", "repetitions = 50"))
    first_db, second_db = tmp_path / "first.db", tmp_path / "second.db"
    proc = subprocess.Popen([*LINERATE, "run", str(exp), "--testbed", str(bed.inventory()), "--db", str(first_db)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        while not bed.daemons("server", "iperf3") and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.2)
        server = bed.daemons("server", "iperf3")
        assert server, "the first run never started its server"
        second = linerate("run", str(exp), "--testbed", str(bed.inventory()), "--db", str(second_db), check=False)
        assert second.returncode == 2 and "in use by another linerate" in second.stderr
        # another inventory naming the same DUT (only its server differs) is refused too, touching nothing
        other = tmp_path / "other.toml"
        text = bed.inventory().read_text()
        server_ssh = text.split("[server]\nssh = ")[1].split("\n")[0]
        client_ssh = text.split("[client]\nssh = ")[1].split("\n")[0]
        other.write_text(text.replace(f"[server]\nssh = {server_ssh}", f"[server]\nssh = {client_ssh}"))
        third = linerate("run", str(exp), "--testbed", str(other), "--db", str(second_db), check=False)
        assert third.returncode == 2 and "with another linerate's testbed" in third.stderr, third.stderr
        # every host by another name (IPv4-mapped IPv6): no address lock is shared; once connected, the host
        # keys name the same machines and the run is refused before it changes anything
        mapped = tmp_path / "mapped.toml"
        mapped.write_text(re.sub(r'ssh = "root@([0-9.]+)"', r'ssh = "root@[::ffff:\1]"', text))
        fourth = linerate("run", str(exp), "--testbed", str(mapped), "--db", str(tmp_path / "fourth.db"),
                          "--accept-new-host-keys", check=False)
        assert fourth.returncode == 2 and "as another linerate's testbed does" in fourth.stderr, fourth.stderr
        # the same, with a known_hosts that holds each machine's *other* host key (ecdsa, not ed25519):
        # the machines are named by all their keys, not by the one an inventory's known_hosts verifies
        ecdsa_hosts = tmp_path / "known_hosts_ecdsa"
        ecdsa_hosts.write_text("".join(bed.host_key_line(role, "_ecdsa", f"::ffff:{bed.mgmt[role][1]}")
                                       for role in ("client", "dut", "server")))
        other_keys = tmp_path / "other_keys.toml"
        other_keys.write_text(mapped.read_text().replace(str(bed.known_hosts), str(ecdsa_hosts)))
        fifth = linerate("run", str(exp), "--testbed", str(other_keys), "--db", str(tmp_path / "fifth.db"),
                         check=False)
        assert fifth.returncode == 2 and "as another linerate's testbed does" in fifth.stderr, fifth.stderr
        assert bed.daemons("server", "iperf3") == server  # the holder's server was not stopped
        assert proc.poll() is None, "the first run ended before the refused runs were checked beside it"
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 143, err[-2000:]  # stopped by the test, not failed
    with sqlite3.connect(first_db) as conn:
        statuses = [row[0] for row in conn.execute("SELECT status FROM trials")]
    assert statuses and set(statuses) == {"ok"}  # no trial of the first run failed
    if second_db.exists():
        with sqlite3.connect(second_db) as conn:
            assert conn.execute("SELECT COUNT(*) FROM experiments").fetchone()[0] == 0


def test_a_remote_command_past_its_deadline_is_killed_on_the_host(bed):
    from linerate.errors import ExecError
    from linerate.testbed.inventory import load_inventory
    from linerate.testbed.ssh import connect_host

    dut = connect_host(load_inventory(bed.inventory()), "dut")
    try:
        with pytest.raises(ExecError, match="no answer within 1 s"):
            dut.run(["sleep", "41.5"], timeout_s=1)
        hung, loadavg = dut.run_many([["sleep", "42.5"], ["cat", "/proc/loadavg"]], timeout_s=2)
        assert hung.returncode != 0 and loadavg.returncode == 0 and loadavg.stdout  # only the hung one lost
        with pytest.raises(ExecError, match="no answer within 1 s"):  # a child of it is killed with it
            dut.run(["sh", "-c", "sleep 43.5 & sleep 44.5"], timeout_s=1)
        def hung() -> list[int]:
            found = []
            for pid in bed.pids_in("dut"):
                try:
                    if Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[:2] in (
                            [b"sleep", b"41.5"], [b"sleep", b"42.5"], [b"sleep", b"43.5"], [b"sleep", b"44.5"]):
                        found.append(pid)
                except OSError:
                    continue
            return found

        deadline = time.monotonic() + 10
        while hung() and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not hung()
    finally:
        dut.session.close()


def test_a_machine_is_named_by_all_its_host_keys_and_never_by_fewer(bed, tmp_path, monkeypatch):
    """Whichever host key an inventory's known_hosts holds, the machine gets one name: the smallest of
    all its keys — from the list OpenSSH sends after login, or, from a server that sends none, one key
    exchange per key type. A probe a firewall refuses stops with SshError: a name from fewer keys
    would not be shared with an inventory that holds another key (two runs on one DUT)."""
    from linerate.exec import ssh
    from linerate.exec.ssh import SshError, SshSession, SshTarget

    ecdsa_hosts = tmp_path / "known_hosts_ecdsa"
    ecdsa_hosts.write_text(bed.host_key_line("dut", "_ecdsa"))
    target = SshTarget("root", bed.mgmt["dut"][1], identity=str(bed.user_key))
    by_kind = {kind: subprocess.run(["ssh-keygen", "-lf", str(bed.root / f"host_dut{kind}.pub")], capture_output=True,
                                    text=True, check=True).stdout.split()[1] for kind in ("", "_ecdsa")}
    fingerprints = set(by_kind.values())

    def name(known_hosts):
        session = SshSession(target, known_hosts)
        try:
            return session.machine_fingerprints()[0]
        finally:
            session.close()

    ns = bed.ns("dut")

    @contextlib.contextmanager
    def connections_limited():
        """The DUT's firewall lets 2 new SSH connections in (one login's: its key check and its session),
        then resets the rest, as a firewall that rate-limits SSH does."""
        sh("nft", "add", "table", "inet", "lrtlimit", ns=ns)
        try:
            sh("nft", "add", "chain", "inet", "lrtlimit", "in", "{ type filter hook input priority 0; policy accept; }",
               ns=ns)
            sh("nft", "add", "rule", "inet", "lrtlimit", "in", "tcp", "dport", "22", "ct", "state", "new", "limit",
               "rate", "over", "1/hour", "burst", "2", "packets", "reject", "with", "tcp", "reset", ns=ns)
            yield
        finally:
            sh("nft", "delete", "table", "inet", "lrtlimit", ns=ns)

    revoked = tmp_path / "known_hosts_revoked"  # the key that names the machine marked @revoked: still its key
    first = min(by_kind, key=by_kind.get)
    revoked.write_text("@revoked " + bed.host_key_line("dut", first) +
                       bed.host_key_line("dut", "_ecdsa" if first == "" else ""))
    assert name(revoked) == min(fingerprints)
    for known_hosts in (bed.known_hosts, ecdsa_hosts):  # OpenSSH's list after login: no connection more
        with connections_limited():
            assert name(known_hosts) == min(fingerprints)
    monkeypatch.setattr(SshSession, "_on_host_keys", lambda self, *lists: None)  # a server that lists none
    monkeypatch.setattr(ssh, "HOST_KEYS_WAIT_S", 0.2)
    assert name(bed.known_hosts) == name(ecdsa_hosts) == min(fingerprints)
    with connections_limited(), pytest.raises(SshError, match="could not read all its host keys"):
        name(bed.known_hosts)


@pytest.mark.parametrize("between, after_s", [([], 1.5), (["timeout", "100"], 1.5), (["timeout", "100"], 0.0)],
                         ids=["direct", "a-process-waiting-between", "gone-within-its-first-second"])
def test_a_remote_command_whose_session_is_gone_is_killed_on_the_host(bed, between, after_s):
    """A controller stopped by a signal closes its connections; what it started on a host (a trafgen sending
    at line rate) must not run on until its deadline — also with a process that forks and waits between the
    session and the command (as sudo or doas does: `timeout` stands in for them here)."""
    from linerate.errors import ExecError
    from linerate.testbed.inventory import load_inventory
    from linerate.testbed.ssh import connect_host

    client = connect_host(load_inventory(bed.inventory()), "client")
    client.become = list(between)
    import threading
    waiter = threading.Thread(target=lambda: pytest.raises(ExecError, client.run, ["sleep", "45.5"], timeout_s=60),
                              daemon=True)
    waiter.start()

    def sleeping() -> list[int]:
        found = []
        for pid in bed.pids_in("client"):
            try:
                if Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[:2] == [b"sleep", b"45.5"]:
                    found.append(pid)
            except OSError:
                continue
        return found

    deadline = time.monotonic() + 10
    while not sleeping() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert sleeping()
    time.sleep(after_s)  # the watchdog looks for its session once the command has run a second
    client.session.close()  # as a controller's exit does
    deadline = time.monotonic() + 5
    while sleeping() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not sleeping()  # gone within seconds, not at its 60 s deadline
