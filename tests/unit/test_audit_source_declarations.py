"""Audit failure classes found on real configuration files, each as a general
mechanism (source declarations, product ranges, per-OS advice), plus linear work per line."""

import subprocess
import sys
from pathlib import Path

import pytest

from linerate.tuning import audit as audit_module
from linerate.tuning import names as names_module
from linerate.tuning.advice import check_advice
from linerate.tuning.audit import Context, audit
from linerate.tuning.catalog import load_catalog
from linerate.tuning.parsers import parse_file
from linerate.tuning.versions import OS_FAMILIES, base_version

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "tests" / "data" / "tuning" / "corpus"
LOUD = ("warning", "error")


def findings(tmp_path: Path, text: str, os_name: str, version: str | None, name: str = "sysctl.conf"):
    path = tmp_path / name
    path.write_text(text)
    family, base = base_version(os_name, version) if version else (OS_FAMILIES[os_name], None)
    return audit(load_catalog(), parse_file(str(path)), Context(os_name, family, base, "router", False, version))


def opnsense_xml(items: list[tuple[str, str]], root: str = "opnsense") -> str:
    body = "".join(f"<item><tunable>{name}</tunable><value>{value}</value></item>\n" for name, value in items)
    return f"<?xml version=\"1.0\"?>\n<{root}>\n<sysctl>\n{body}</sysctl>\n<system/>\n</{root}>\n"


def test_default_is_the_products_marker_not_a_bad_number(tmp_path):
    # opnsense/core src/etc/inc/system.inc system_sysctl_get(): 'default' selects the built-in default
    found = findings(tmp_path, opnsense_xml([("net.inet.tcp.syncookies", "default"), ("kern.ipc.maxsockbuf", "default")]),
                     "opnsense", "24.1", "config.xml")
    assert not [f for f in found if f.code == "LR004"], found


def test_boot_names_are_placed_right_in_opnsense_but_not_in_pfsense(tmp_path):
    items = [("net.link.ifqmaxlen", "2048"), ("net.isr.bindthreads", "1"), ("net.pf.source_nodes_hashsize", "65536")]
    opn = findings(tmp_path, opnsense_xml(items), "opnsense", "24.1", "config.xml")
    assert not [f for f in opn if f.code == "LR003"], opn  # OPNsense writes tunables to loader.conf too
    pf = findings(tmp_path, opnsense_xml(items, "pfsense"), "pfsense", "2.7.2", "config.xml")
    assert sorted(f.key for f in pf if f.code == "LR003") == sorted(name for name, _ in items)
    # CTLFLAG_RWTUN in kern_mbuf.c: writable at runtime on any FreeBSD, so sysctl.conf is fine
    assert not [f for f in findings(tmp_path, "kern.ipc.nmbjumbop=262144\n", "freebsd", "14.0") if f.code == "LR003"]


def test_exists_means_declared_in_the_source(tmp_path):
    found = findings(tmp_path, "kern.maxfiles=200000\nkern.maxproc=10000\n", "freebsd", "14.0", "loader.conf")
    assert not [f for f in found if f.code in ("LR011", "LR002")], found
    result = subprocess.run([sys.executable, "-m", "linerate", "explain", "kern.maxfiles", "--os", "freebsd"],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0 and "declared on freebsd" in result.stdout and "kern/kern_descrip.c" in result.stdout


@pytest.mark.parametrize("os_name,severity,words", [("opnsense", "warning", "every release"),
                                                    ("pfsense", "info", "if your box runs")])
def test_removed_names_are_judged_over_the_products_releases(tmp_path, os_name, severity, words):
    found = [f for f in findings(tmp_path, "net.inet.ip.fastforwarding=1\n", os_name, None) if f.code == "LR001"]
    assert found and found[0].severity == severity and words in found[0].message, found


def test_a_driver_generation_that_ignores_a_name(tmp_path):
    # hw.em.rxd is gone from the iflib em(4) of 12.x; hw.em.rx_process_limit is declared there but read nowhere
    found = findings(tmp_path, 'hw.em.rxd="4096"\nhw.em.txd="4096"\nhw.em.rx_process_limit="-1"\n',
                     "pfsense", "2.5.0", "loader.conf")
    assert [f.code for f in found] == ["LR001"] * 3, found
    assert "nothing reads it" in found[2].message


@pytest.mark.parametrize("name", ["net.inet.tcp.inflight.enable", "net.inet.tcp.fastopen", "net.igc.num_queues"])
def test_unknown_names_under_fully_declared_branches_warn(tmp_path, name):
    found = findings(tmp_path, f"{name}=1\n", "freebsd", "14.0")
    assert [(f.code, f.severity) for f in found] == [("LR002", "warning")], found


@pytest.mark.parametrize("name", ["hw.ix.intr_storm_threshold", "hw.em.msix", "hw.ix.allow_unsupported_sfp"])
def test_a_name_an_in_tree_nic_driver_does_not_declare_warns(tmp_path, name):
    """if_ix.c / if_em.c declare every hw.ix / hw.em tunable (TUNABLE_INT, SYSCTL_*(..., CTLFLAG_RDTUN)):
    another name there does nothing (ixgbe's variable allow_unsupported_sfp is the tunable hw.ix.unsupported_sfp)."""
    found = findings(tmp_path, f'{name}="1"\n', "freebsd", "14.1", "loader.conf")
    assert [(f.code, f.severity) for f in found] == [("LR002", "warning")], found
    assert "in-tree" in found[0].message and "kmod" in found[0].message


def test_open_branches_stay_notes(tmp_path):
    # dev.* is made at attach time, hw.re.* is also set by the realtek-re kmod from ports
    found = findings(tmp_path, "dev.igb.0.iflib.tx_abdicate=1\nhw.re.max_rx_mbuf_sz=4096\n", "freebsd", "14.0")
    assert not [f for f in found if f.severity in LOUD], found


def test_advice_fits_the_os_and_the_kind_of_line(tmp_path):
    assert "sysctl -d" not in check_advice("linux", "sysctl", "net.foo") and "-h" in check_advice("linux", "sysctl", "x")
    assert "sysctl -d" not in check_advice("openbsd", "sysctl", "net.foo")
    # a *_load line loads a module: kldstat shows it; a loader variable (no dot, or hint.*): kenv shows it
    assert "kldstat -n if_igb" in check_advice("freebsd", "loader", "if_igb_load")
    assert "kldstat -n intel-isa-aes" in check_advice("freebsd", "loader", "intel-isa-aes_load")
    for name in ("loader_menu_title", "hint.uart.0.disabled", "cpu_microcode_name"):
        assert "kenv " + name in check_advice("freebsd", "loader", name) and "sysctl" not in check_advice(
            "freebsd", "loader", name).split("(")[0]
    loader = findings(tmp_path, 'if_igb_load="YES"\nhint.uart.0.flags="0x10"\nconsole="comconsole"\n',
                      "freebsd", "14.0", "loader.conf")
    assert not [f for f in loader if "sysctl -d" in f.fix], loader
    linux = findings(tmp_path, "net.made.up_name=1\n", "linux", "6.1")
    assert all("sysctl -d" not in f.fix for f in linux), linux


def test_no_internal_labels_reach_the_user():
    text = " ".join(k.model_dump_json() for k in load_catalog().knobs)
    assert "seed 00" not in text
    for module in ("audit.py", "recommend.py", "catalog.py", "versions.py"):
        assert "seed 00" not in (ROOT / "src" / "linerate" / "tuning" / module).read_text().lower()


def test_value_syntax_does_not_depend_on_the_name(tmp_path):
    found = findings(tmp_path, "kern.ipc.tls.ifnet.permitted=1\nkern.ipc.tls.ifnet.permitted=0 (default 0)\n"
                     "made.up.name=5 # fine\nnet.ipv4.tcp_rmem = 4096 87380 16777216\n", "freebsd", "14.0")
    line2 = [f for f in found if f.line == 2]
    assert [(f.code, f.severity) for f in line2] == [("LR004", "error")], line2  # and no LR007 "the later wins"
    assert not [f for f in found if f.line in (3, 4) and f.code == "LR004"]


def _work(text: str, tmp_path: Path, monkeypatch) -> int:
    """Comparisons of names made by one audit (edit distances and source look-ups)."""
    calls = {"n": 0}
    real_distance, real_presence = names_module.edit_distance, audit_module.source_list

    def distance(*args):
        calls["n"] += 1
        return real_distance(*args)

    def presence(*args):
        calls["n"] += 1
        return real_presence(*args)

    monkeypatch.setattr(names_module, "edit_distance", distance)
    monkeypatch.setattr(audit_module, "edit_distance", distance)
    monkeypatch.setattr(audit_module, "source_list", presence)
    for cache in (audit_module._HINT_CACHE, audit_module._OTHER_CACHE, audit_module._PRESENCE_CACHE):
        cache.clear()
    findings(tmp_path, text, "freebsd", "14.0")
    return calls["n"]


def test_the_audit_is_linear_in_the_file(tmp_path, monkeypatch):
    real = (CORPUS / "freebsd13_desktop_sysctl.conf").read_text() + "net.inet.ip.forwardng=1\nnet.made.up=1\n"
    once = _work(real, tmp_path, monkeypatch)
    ten = _work(real * 10, tmp_path, monkeypatch)
    hundred = _work(real * 100, tmp_path, monkeypatch)
    lines = real.count("\n")
    # a repeated line costs the same small constant, whatever the file's size
    assert (hundred - ten) / (90 * lines) <= 2 and (hundred - ten) <= (ten - once) * 10 + 1, (once, ten, hundred)
