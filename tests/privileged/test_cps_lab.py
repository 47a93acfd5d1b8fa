"""`linerate cps` in the namespace lab: h2load -> nginx through the DUT's stateful ruleset on an
emulated 1 Gbit/s link, a short search per repetition, the rate with its interval, then a latency
trial at half that rate with tcpdump on the client (connect/TTFB percentiles), every trial stored,
and nothing (nginx, tcpdump, their files, the lab) left behind."""

import glob

import json
import sqlite3
import subprocess

from tests.privileged.conftest import linerate, netns_names


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
