"""`linerate cps` in the namespace lab: h2load -> nginx through the DUT's stateful ruleset on an
emulated 1 Gbit/s link, a short search per repetition, the rate with its interval and the connect
and first-byte times, every trial stored, and nothing (nginx, the lab) left behind."""

import json
import sqlite3
import subprocess

from tests.privileged.conftest import linerate, netns_names


def nginx_pids() -> list[str]:
    out = subprocess.run(["pgrep", "-x", "nginx"], capture_output=True, text=True).stdout
    return out.split()


def test_cps_finds_a_rate_with_its_interval_and_leaves_nothing(tmp_path):
    before_ns, before_nginx = set(netns_names()), set(nginx_pids())
    db = tmp_path / "c.db"
    result = linerate("cps", "--link", "1g", "--firewall", "stateful", "--object-sizes", "1k", "--trial-duration", "1",
                      "--max-rate", "1600", "--repetitions", "2", "--db", str(db), "--json", timeout=900)
    doc = json.loads(result.stdout)
    [config] = doc["configurations"]
    assert config["cps"]["n"] == 2 and config["cps"]["mean"] > 0, config
    assert config["cps"]["ci_low"] is not None and config["connect_mean_s"] is not None
    assert config["ttfb_mean_s"] is not None and config["request_p99_s"] is not None
    stored = sqlite3.connect(db).execute("SELECT COUNT(*) FROM search_trials").fetchone()[0]
    assert stored == sum(s["trials"] for s in doc["searches"]) > 0
    assert set(netns_names()) == before_ns and set(nginx_pids()) <= before_nginx
    md = linerate("report", "cps", "--db", str(db)).stdout
    assert "Connections per second" in md and "1k" in md.lower()
