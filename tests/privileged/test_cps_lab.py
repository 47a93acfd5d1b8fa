"""`linerate cps` in the namespace lab: h2load -> nginx through the DUT's stateful ruleset on an
emulated 1 Gbit/s link, a short search per repetition, the rate with its interval, then a latency
trial at half that rate with tcpdump on the client (connect/TTFB percentiles), every trial stored,
and nothing (nginx, tcpdump, their files, the lab) left behind."""

import glob

import json
import os
import shutil
import sqlite3
import subprocess
from pathlib import Path

from tests.privileged.conftest import linerate, netns_names, unique_lab_name

# lab names no other run chose (a fixed one meets what a killed run on this machine left)
CPK1 = unique_lab_name("cpk1")
CPK3 = unique_lab_name("cpk3")


def pids(name: str) -> list[str]:
    out = subprocess.run(["pgrep", "-x", name], capture_output=True, text=True).stdout
    return out.split()


def test_cps_finds_a_rate_with_its_interval_and_leaves_nothing(tmp_path):
    before_ns, before_nginx, before_tcpdump = set(netns_names()), set(pids("nginx")), set(pids("tcpdump"))
    before_files = set(glob.glob("/tmp/linerate-capture.*"))
    db = tmp_path / "c.db"
    result = linerate("cps", "--link", "1g", "--firewall", "stateful", "--object-sizes", "1k", "--trial-duration", "1",
                      "--max-rate", "1600", "--repetitions", "2", "--db", str(db), "--json", timeout=900)
    doc = json.loads(result.stdout)
    [config] = doc["configurations"]
    assert config["cps"]["n"] == 2 and config["cps"]["mean"] > 0, config
    assert config["cps"]["ci_low"] is not None and config["connect_mean_s"] is not None
    assert config["ttfb_mean_s"] is not None and config["request_p99_s"] is not None
    # the latency trials: every connection seen on the wire, times in order, at half the rate found
    for search in doc["searches"]:
        latency = search["latency"]
        assert latency["rate"] <= search["cps"] / 2 * 1.05 and latency["failed"] == 0, latency
        capture = latency["capture"]
        assert capture["connections"] == latency["connections"] and capture["without_first_byte"] == 0, capture
        assert 0 < capture["connect"]["p50"] <= capture["ttfb"]["p50"] <= capture["ttfb"]["p99"] < 5
    assert config["ttfb_p50_s"] is not None and config["timed_connections"] > 0
    stored = sqlite3.connect(db).execute("SELECT COUNT(*) FROM search_trials").fetchone()[0]
    assert stored == sum(s["trials"] + 1 for s in doc["searches"]) > 0
    assert set(netns_names()) == before_ns and set(pids("nginx")) <= before_nginx
    assert set(pids("tcpdump")) <= before_tcpdump and set(glob.glob("/tmp/linerate-capture.*")) <= before_files
    md = linerate("report", "cps", "--db", str(db)).stdout
    assert "Connections per second" in md and "1k" in md.lower() and "TTFB ms p50 / p99" in md


def test_sigterm_stops_cps_at_once_and_leaves_nothing(tmp_path):
    """SIGTERM reached best-effort reads (the DUT's counters, the state table) that swallowed it, and a
    full cps run went on to its end: now it stops within seconds, exit 143, its lab and nginx gone."""
    import signal
    import time

    from tests.privileged.conftest import LINERATE

    before_ns, before_nginx = set(netns_names()), set(pids("nginx"))
    proc = subprocess.Popen([*LINERATE, "cps", "--link", "1g", "--object-sizes", "1k", "--trial-duration", "2",
                             "--db", str(tmp_path / "t.db")], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not (set(pids("nginx")) - before_nginx) and proc.poll() is None:
            time.sleep(0.1)
        time.sleep(3)  # into the search: trials with their DUT and state-table reads
        proc.send_signal(signal.SIGTERM)
        sent = time.monotonic()
        _, err = proc.communicate(timeout=60)
        stopped_s = time.monotonic() - sent
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 143 and "SIGTERM" in err, err[-1000:]
    # the search had ~40 trials of 2 s left (3 repetitions): ended within one trial's time and the teardown, it
    # stopped at the signal (~1-2 s here idle); running on, it took minutes
    assert stopped_s < 15, f"{stopped_s:.1f} s after SIGTERM"
    assert set(netns_names()) == before_ns and set(pids("nginx")) == before_nginx
    assert not glob.glob("/tmp/linerate-h2load.*")


def in_namespace(ns: str, name: str) -> list[int]:
    out = subprocess.run(["ip", "netns", "pids", ns], capture_output=True, text=True).stdout
    found = []
    for pid in out.split():
        try:
            if open(f"/proc/{pid}/comm").read().strip() == name:
                found.append(int(pid))
        except OSError:
            continue
    return found


def daemons_in_namespace(ns: str, name: str) -> list[int]:
    """The processes named `name` in `ns` that have become daemons (session leaders: nginx's ngx_daemon()
    calls setsid() in the child it forks). Before that, the launching process may go with a killed run."""
    found = []
    for pid in in_namespace(ns, name):
        try:
            if int(Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[3]) == pid:
                found.append(pid)
        except (OSError, ValueError, IndexError):
            continue
    return found


def tables(ns: str) -> str:
    return subprocess.run(["ip", "netns", "exec", ns, "nft", "list", "tables"], capture_output=True, text=True).stdout


def test_a_stopped_or_killed_cps_on_a_kept_lab_leaves_it_usable(tmp_path):
    """A kept lab outlives the command: a SIGTERMed `cps --lab` left tcpdump running (GNU timeout's own
    process group), a SIGKILLed one its nginx, and the next cps on the lab failed on the taken port."""
    import signal
    import time

    from tests.privileged.conftest import LINERATE

    linerate("lab", "up", "--name", CPK1, "--firewall", "stateful")
    try:
        argv = [*LINERATE, "cps", "--lab", CPK1, "--object-sizes", "1k", "--trial-duration", "1",
                "--max-rate", "400", "--repetitions", "1"]
        for sig, ready in ((signal.SIGTERM, lambda: in_namespace(f"lr-{CPK1}-client", "tcpdump")),
                           (signal.SIGKILL, lambda: set(daemons_in_namespace(f"lr-{CPK1}-server", "nginx")) - earlier)):
            earlier = set(in_namespace(f"lr-{CPK1}-server", "nginx"))  # the run before may still be stopping its own
            proc = subprocess.Popen([*argv, "--db", str(tmp_path / f"{sig.name}.db")], stdout=subprocess.DEVNULL,
                                    stderr=subprocess.DEVNULL)
            deadline = time.monotonic() + 120
            while not ready() and proc.poll() is None and time.monotonic() < deadline:
                time.sleep(0.05)
            assert proc.poll() is None, f"the cps ended before {sig.name} could land"
            proc.send_signal(sig)
            proc.wait(timeout=60)
            time.sleep(1)
            if sig == signal.SIGTERM:
                assert proc.returncode == 143 and not in_namespace(f"lr-{CPK1}-client", "tcpdump")
        assert in_namespace(f"lr-{CPK1}-server", "nginx")  # the SIGKILLed one's: the next command stops it
        linerate("trial", "--lab", CPK1, "--duration", "1")
        time.sleep(0.5)
        assert not in_namespace(f"lr-{CPK1}-server", "nginx") and f"lr-{CPK1}-dut" in netns_names()
        # and `lab clean` does too, with no command on the lab (a stand-in: a program named nginx)
        stand_in = tmp_path / "nginx"
        stand_in.write_bytes(Path("/bin/sleep").read_bytes())
        stand_in.chmod(0o700)
        held = subprocess.Popen(["ip", "netns", "exec", f"lr-{CPK1}-server", str(stand_in), "60"])
        try:
            deadline = time.monotonic() + 10
            while not in_namespace(f"lr-{CPK1}-server", "nginx") and time.monotonic() < deadline:
                time.sleep(0.05)
            cleaned = linerate("lab", "clean").stdout
            assert f"stopped the nginx a killed cps left in lab {CPK1}" in cleaned, cleaned
            assert held.wait(timeout=10) == -signal.SIGKILL
        finally:
            held.kill()
            held.wait()
        assert f"lr-{CPK1}-dut" in netns_names()
        # a SIGKILLed rfc9693 on the kept lab left its counting tables (the server's drops UDP 5201) and pcaps
        proc = subprocess.Popen([*LINERATE, "rfc9693", "--lab", CPK1, "--connections", "500", "--start-connections",
                                 "500", "--db", str(tmp_path / "r.db")], stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 120
        while "linerate_rfc9693" not in tables(f"lr-{CPK1}-server") and proc.poll() is None \
                and time.monotonic() < deadline:
            time.sleep(0.05)
        second = linerate("trial", "--lab", CPK1, "--duration", "1", check=False)  # one measuring command at a time
        assert second.returncode == 2 and "is measuring for another linerate command" in second.stderr, second.stderr
        proc.kill()
        proc.wait(timeout=60)
        assert "linerate_rfc9693" in tables(f"lr-{CPK1}-server")
        cleaned = linerate("lab", "clean").stdout
        assert f"nftables table inet linerate_rfc9693 in lr-{CPK1}-server" in cleaned, cleaned
        assert not any("linerate_rfc9693" in tables(f"lr-{CPK1}-{role}") for role in ("client", "dut", "server"))
        assert not in_namespace(f"lr-{CPK1}-client", "trafgen")  # no generator of the killed run left sending
        # a /tmp cleaner removed the idle lab's scratch directory and something else took its name: refused
        scratch = json.loads((Path(os.environ["LINERATE_STATE_DIR"]) / f"{CPK1}.json").read_text())["scratch"]
        shutil.rmtree(scratch)
        os.symlink(str(tmp_path), scratch)
        try:
            taken = linerate("trial", "--lab", CPK1, "--duration", "1", check=False)
            assert taken.returncode == 2 and "is not the lab's own any more" in taken.stderr, taken.stderr
        finally:
            os.unlink(scratch)
        # an iperf3 client runs on a worker thread: SIGTERM stops it with the command; a SIGKILLed one's
        # client is stopped by the next command on the lab before it measures
        for sig in (signal.SIGTERM, signal.SIGKILL):
            proc = subprocess.Popen([*LINERATE, "trial", "--lab", CPK1, "--duration", "30"],
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            deadline = time.monotonic() + 60
            while not in_namespace(f"lr-{CPK1}-client", "iperf3") and proc.poll() is None \
                    and time.monotonic() < deadline:
                time.sleep(0.05)
            proc.send_signal(sig)
            proc.wait(timeout=60)
            if sig == signal.SIGTERM:
                time.sleep(0.5)
                assert proc.returncode == 143 and not in_namespace(f"lr-{CPK1}-client", "iperf3")
        assert in_namespace(f"lr-{CPK1}-client", "iperf3")  # the SIGKILLed trial's client, still sending
        again = linerate(*argv[3:], "--db", str(tmp_path / "again.db"), "--json", timeout=600)
        assert not in_namespace(f"lr-{CPK1}-client", "iperf3")
        assert json.loads(again.stdout)["configurations"][0]["cps"]["n"] == 1
        assert not in_namespace(f"lr-{CPK1}-server", "nginx")
    finally:
        linerate("lab", "down", CPK1)


def test_a_refused_command_on_a_kept_lab_stops_nothing_and_an_operators_capture_is_left_alone(tmp_path):
    """Leftover generators are stopped only once a command is about to measure (every input checked), and
    only what a linerate command runs there: an operator's tcpdump writing elsewhere and an iperf3 server of
    their own survive both a refused command and a measuring one."""
    import time

    linerate("lab", "up", "--name", CPK3)
    capture = subprocess.Popen(["ip", "netns", "exec", f"lr-{CPK3}-server", "tcpdump", "-i", "any", "-w",
                                str(tmp_path / "mine.pcap")], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    own_server = subprocess.Popen(["ip", "netns", "exec", f"lr-{CPK3}-server", "iperf3", "-s", "-p", "5299"],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        time.sleep(0.5)
        refused = linerate("cps", "--lab", CPK3, "--object-sizes", "1k", "--max-rate", "-5", "--db",
                           str(tmp_path / "c.db"), check=False)
        assert refused.returncode == 2, refused.stderr
        assert capture.poll() is None and own_server.poll() is None
        linerate("trial", "--lab", CPK3, "--duration", "1")
        assert capture.poll() is None and own_server.poll() is None, "an operator's process was stopped"
    finally:
        for proc in (capture, own_server):
            proc.terminate()
            proc.wait(timeout=10)
        linerate("lab", "down", CPK3)
