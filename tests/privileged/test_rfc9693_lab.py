"""`linerate rfc9693` through the VM DUT's stateful ruleset with a small conntrack table: the capacity
found within 3% of nf_conntrack_max, an establishment rate with its trials stored, the table's
telemetry in the report, and nothing (VM, namespaces, counting tables, pcap files) left behind."""

import glob
import json
import sqlite3
from pathlib import Path

from tests.privileged.conftest import linerate, netns_names


def qemu_pids() -> set[str]:
    """Live (not zombie) qemu processes of linerate VMs (their -name is linerate-<lab id>)."""
    found = set()
    for entry in Path("/proc").iterdir():
        try:
            argv = (entry / "cmdline").read_bytes()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if entry.name.isdigit() and state != "Z" and b"qemu-system" in argv and b"linerate-" in argv:
            found.add(entry.name)
    return found


def test_rfc9693_finds_the_vm_table_and_leaves_nothing(tmp_path):
    before_ns, before_qemu = set(netns_names()), qemu_pids()
    before_pcaps = set(glob.glob("/tmp/linerate-rfc9693-*.pcap"))
    db = tmp_path / "r.db"
    result = linerate("rfc9693", "--dut", "vm", "--firewall", "stateful", "--dut-sysctls",
                      "net.netfilter.nf_conntrack_max=512", "--connections", "200", "--start-connections", "200",
                      "--max-connections", "4000", "--db", str(db), "--json", timeout=900)
    [search] = json.loads(result.stdout)["searches"]
    assert search["status"] == "done", search
    assert 0.97 * 512 <= search["capacity"] <= 512, search
    assert search["limit"] == "state table" and "512" in search["limit_evidence"], search
    assert search["establishment_rate"] > 0 and search["state_max"] == 512, search
    stored = sqlite3.connect(db).execute("SELECT COUNT(*), SUM(purpose = 'rate'), SUM(purpose = 'capacity') "
                                         "FROM search_trials").fetchone()
    assert stored[0] == search["trials"] and stored[1] >= 1 and stored[2] >= 2, stored
    assert set(netns_names()) == before_ns and qemu_pids() <= before_qemu
    assert set(glob.glob("/tmp/linerate-rfc9693-*.pcap")) == before_pcaps
    md = linerate("report", "rfc9693", "--db", str(db)).stdout
    assert "Connection tracking" in md and "Little's law" in md
