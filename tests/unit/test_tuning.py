import json
import subprocess
import sys

import pytest

from linerate.tuning.audit import Context, audit, exit_code
from linerate.tuning.catalog import Knob, load_catalog
from linerate.tuning.parsers import parse_file
from linerate.tuning.recommend import recommend
from linerate.tuning.versions import base_version

LINERATE = [sys.executable, "-m", "linerate"]


def run(*argv):
    return subprocess.run([*LINERATE, *argv], capture_output=True, text=True, timeout=60)


def findings_for(paths, os_name="freebsd", version="14.0", role="nat-firewall", virtual=False):
    family, base = base_version(os_name, version)
    settings = [s for p in paths for s in parse_file(str(p))]
    return audit(load_catalog(), settings, Context(os_name, family, base, role, virtual, version))


def test_catalog_validates_and_every_entry_has_a_source():
    catalog = load_catalog()
    stats = catalog.stats()
    assert stats["freebsd"] > 100 and stats["linux"] >= 20 and stats["openbsd"] >= 5
    for knob in catalog.knobs:
        assert knob.sources and all(s.strip() for s in knob.sources), knob.name
    names = [(k.os, k.name) for k in catalog.knobs]
    assert len(names) == len(set(names)), "duplicate catalog entries"


def test_knobs_the_articles_name_are_in_the_catalog():
    catalog = load_catalog()
    for name in ("hw.igb.rx_process_limit", "hw.igb.tx_process_limit", "legal.intel_igb.license_ack",
                 "net.inet.ip.redirect", "net.inet6.ip6.redirect", "net.isr.dispatch", "net.inet.ip.intr_queue_maxlen",
                 "net.inet.ip.fastforwarding", "net.inet.ip.rtexpire", "dev.igb.0.fc", "dev.igb.1.iflib.rx_budget",
                 "net.inet.tcp.tso", "hw.vtnet.csum_disable", "vfs.zfs.txg.timeout", "kern.random.harvest.mask"):
        assert catalog.find(name, "freebsd"), name
    assert catalog.find("hw.setperf", "openbsd") and catalog.find("set skip on", "openbsd")
    for name in ("net.ipv4.ip_forward", "rps_cpus", "xps_cpus", "net.core.netdev_max_backlog", "net.core.netdev_budget",
                 "net.netfilter.nf_conntrack_max", "net.ipv4.tcp_rmem", "net.core.busy_poll", "gro", "lro"):
        assert catalog.find(name, "linux"), name


def test_schema_rejects_bad_entries():
    with pytest.raises(ValueError):
        Knob.model_validate({"name": "x", "os": "freebsd", "location": "sysctl", "type": "int",
                             "description": "d", "sources": []})
    with pytest.raises(ValueError):
        Knob.model_validate({"name": "x", "os": "freebsd", "location": "sysctl", "type": "int", "description": "d",
                             "sources": ["s"], "removed": "soon"})


def test_calomel_guide_blocks_give_codes_and_lines(data_dir):
    found = findings_for([data_dir / "tuning" / "calomel_loader.conf", data_dir / "tuning" / "calomel_sysctl.conf"])
    assert found and all(f.code.startswith("LR") and f.line > 0 for f in found)
    codes = {f.code for f in found}
    assert "LR006" in codes  # net.inet.tcp.syncookies=0
    assert "LR014" in codes  # the scraped line that lost its '#'


def test_reenabled_obsolete_knobs_are_flagged(tmp_path, data_dir):
    loader = (data_dir / "tuning" / "calomel_loader.conf").read_text().replace(
        '#hw.igb.rx_process_limit="-1"', 'hw.igb.rx_process_limit="-1"')
    sysctl = (data_dir / "tuning" / "calomel_sysctl.conf").read_text().replace(
        "#net.inet.ip.fastforwarding=1", "net.inet.ip.fastforwarding=1").replace(
        "#net.inet.ip.rtexpire=10", "net.inet.ip.rtexpire=10")
    (tmp_path / "loader.conf").write_text(loader)
    (tmp_path / "sysctl.conf").write_text(sysctl)
    found = {f.key: f for f in findings_for([tmp_path / "loader.conf", tmp_path / "sysctl.conf"]) if f.code == "LR001"}
    # check_interface (replaced by net.inet.ip.rfc1122_strong_es) and rfc6675_pipe (always on) are declared in
    # 12.1 and in neither main of 2022-07 nor 14.2: gone on 14.0, and Calomel's file sets both
    assert set(found) == {"hw.igb.rx_process_limit", "net.inet.ip.fastforwarding", "net.inet.ip.rtexpire",
                          "net.inet.ip.check_interface", "net.inet.tcp.rfc6675_pipe"}
    assert "12.0" in found["hw.igb.rx_process_limit"].message
    assert "dev.igb.N.iflib.rx_budget" in found["hw.igb.rx_process_limit"].fix
    assert "11.0" in found["net.inet.ip.rtexpire"].message
    # the same lines are fine on the versions they were written for
    assert not [f for f in findings_for([tmp_path / "loader.conf"], "pfsense", "2.4.5") if f.code == "LR001"]


def test_misspelling_wrong_place_duplicates_and_foreign_knobs(tmp_path):
    conf = tmp_path / "sysctl.conf"
    conf.write_text("net.inet.tcp.sendbuf_mx=4194304\nhw.igb.num_queues=2\nnet.inet.tcp.sendbuf_max=abc\n"
                    "net.inet.ip.redirect=0\nnet.inet.ip.redirect=1\nnet.ipv4.ip_forward=1\ndev.igb.0.fc=9\n")
    found = findings_for([conf], "pfsense", "2.6.0")
    by_code = {}
    for f in found:
        by_code.setdefault(f.code, []).append(f)
    assert "did you mean net.inet.tcp.sendbuf_max" in by_code["LR002"][0].message
    assert by_code["LR001"][0].key == "hw.igb.num_queues" and "LR003" not in by_code  # obsolete beats misplaced
    assert {f.key for f in by_code["LR004"]} == {"net.inet.tcp.sendbuf_max", "dev.igb.0.fc"}
    assert by_code["LR007"][0].line == 4  # the overridden line: the later one wins
    assert by_code["LR011"][0].key == "net.ipv4.ip_forward"
    assert exit_code(found) == 1


def test_runtime_sysctl_in_loader_conf(tmp_path):
    loader = tmp_path / "loader.conf"
    loader.write_text('net.inet.tcp.syncookies="1"\n')
    codes = [f.code for f in findings_for([loader])]
    assert codes == ["LR003"]  # "move it" outranks "the default anyway, the line can go"


def test_pfsense_config_xml(data_dir):
    found = findings_for([data_dir / "tuning" / "pfsense_config.xml"], "pfsense", "2.6.0", virtual=True)
    codes = {(f.code, f.key) for f in found}
    assert ("LR001", "hw.igb.rx_process_limit") in codes
    assert ("LR003", "hw.igb.rx_process_limit") not in codes  # obsolete beats misplaced: one finding per line
    assert ("LR006", "net.inet.tcp.syncookies") in codes
    assert ("LR002", "net.inet.ip.fastforwading") in codes
    assert ("LR005", "disablechecksumoffloading") in codes  # virtio guest with checksum offload on
    assert all(f.line > 0 for f in found)


def test_virtio_rc_conf_needs_checksum_offload_off(tmp_path):
    rc = tmp_path / "rc.conf"
    rc.write_text('ifconfig_vtnet0="inet 198.18.0.1/24"\nifconfig_vtnet1="inet 198.19.0.1/24 -rxcsum -txcsum"\n')
    found = findings_for([rc], role="router", virtual=True)
    assert [(f.code, f.line) for f in found] == [("LR005", 1)]


def test_clean_file_exits_zero(tmp_path):
    conf = tmp_path / "sysctl.conf"
    conf.write_text("# nothing but good advice\nnet.inet.ip.redirect=0\n")
    assert exit_code(findings_for([conf], role="router")) == 0


@pytest.mark.parametrize("content,needle", [
    (b"\x7fELF\x02\x01\x01\x00\x00binary", "binary"),
    (b"net.inet.ip.redirect=" + b"0" * 10_000_000, "too large"),
    (b"x=" + b"1" * 100_000, "line of"),
])
def test_garbage_input_exit_2_no_traceback(tmp_path, content, needle):
    bad = tmp_path / "sysctl.conf"
    bad.write_bytes(content)
    proc = run("audit", str(bad), "--os", "freebsd")
    assert proc.returncode == 2 and needle in proc.stderr and "Traceback" not in proc.stderr


def test_invalid_xml_exit_2(tmp_path):
    bad = tmp_path / "config.xml"
    bad.write_text("<pfsense><sysctl><item>")
    proc = run("audit", str(bad), "--os", "pfsense", "--os-version", "2.6.0")
    assert proc.returncode == 2 and "invalid XML" in proc.stderr and "Traceback" not in proc.stderr


def test_audit_cli_json_and_exit_codes(data_dir, tmp_path):
    proc = run("audit", str(data_dir / "tuning" / "pfsense_config.xml"), "--os", "pfsense", "--os-version", "2.6.0",
               "--role", "nat-firewall", "--json")
    assert proc.returncode == 1
    doc = json.loads(proc.stdout)
    assert doc["schema_version"] == 1
    assert {"code", "severity", "file", "line", "evidence", "message", "fix"} <= set(doc["findings"][0])


def test_explain_and_stats():
    out = run("explain", "hw.igb.rx_process_limit").stdout
    assert "removed: 12.0" in out and "calomel.org/freebsd_network_tuning.html" in out and "seed 00" not in out and "nat-firewall" in out
    fuzzy = run("explain", "net.inet.tcp.sendbuf_mx")
    assert fuzzy.returncode == 2 and "did you mean net.inet.tcp.sendbuf_max" in fuzzy.stderr
    stats = run("explain", "--stats").stdout
    assert "freebsd" in stats and "linux" in stats and "openbsd" in stats


def test_recommend_follows_the_articles():
    new = recommend("pfsense", "2.6.0", "nat-firewall", nic="igb", cores=4)
    assert not new.files and "no loader tweaks are needed" in " ".join(new.notes)
    old = recommend("pfsense", "2.4.5", "nat-firewall", nic="igb", cores=4)
    lines = [line for line, _ in old.files["/boot/loader.conf.local"]]
    assert lines == ['legal.intel_igb.license_ack="1"', 'hw.igb.rx_process_limit="-1"', 'hw.igb.tx_process_limit="-1"']
    pppoe = recommend("pfsense", "2.6.0", "nat-firewall", nic="igb", pppoe=True)
    assert "one core" in " ".join(pppoe.notes) and "RSS" in " ".join(pppoe.notes)
    vm = recommend("opnsense", "24.7", "nat-firewall", nic="vtnet", virtual=True)
    assert any("checksum" in line for lines in vm.files.values() for line, _ in lines)
    obsd = recommend("openbsd", "7.4", "router")
    assert any("hw.perfpolicy" in line for line, _ in obsd.files["/etc/sysctl.conf"])


def test_bad_os_version_is_a_clean_error():
    proc = run("recommend", "--os", "pfsense", "--os-version", "banana", "--role", "router")
    assert proc.returncode == 2 and "--os-version" in proc.stderr


def test_a_byte_order_mark_is_named_as_such(tmp_path):
    conf = tmp_path / "bom.conf"
    conf.write_bytes(b"\xef\xbb\xbfnet.ipv4.ip_forward=1\nnet.core.somaxconn=4096\n")
    proc = subprocess.run([sys.executable, "-m", "linerate", "audit", str(conf), "--os", "linux"],
                          capture_output=True, text=True)
    assert "byte order mark" in proc.stdout and proc.stdout.count("LR014") == 1
