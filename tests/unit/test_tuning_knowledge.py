"""Issue #10: name lists per OS release, one finding per line, strict version maps, a precision corpus
of real configuration files labelled by hand (tests/data/tuning/corpus, each naming its source)."""

import importlib.util
import re
import subprocess
import sys
from itertools import combinations
from pathlib import Path

import pytest

from linerate.errors import ConfigError
from linerate.tuning.audit import CONTRADICTS, Context, audit
from linerate.tuning.catalog import load_catalog
from linerate.tuning.names import all_lists, close_names, edit_distance, name_list
from linerate.tuning.parsers import kernel_config_options, parse_file
from linerate.tuning.sources import source_list
from linerate.tuning.versions import OS_FAMILIES, base_version

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "tests" / "data" / "tuning" / "corpus"
WARNING_OR_ERROR = ("warning", "error")


def run(*argv):
    return subprocess.run([sys.executable, "-m", "linerate", *argv], capture_output=True, text=True, timeout=60)


def audit_file(path: Path, os_name: str, version: str, kind: str | None = None):
    family, base = base_version(os_name, version)
    settings = parse_file(str(path), kind)
    return settings, audit(load_catalog(), settings, Context(os_name, family, base, "router", False, version))


LABEL = re.compile(r"^(?:#@|<!--@) (expect|missed) (LR\d{3})(?: ([^\s-]\S*))?(?: -->)?$")
# '#@ missed CODE': a line truly wrong (the label's source says so) that linerate does not flag yet; the
# recall test counts it as a miss, the per-file test only checks nothing else is said loudly about it
MISSED = "missed"


def audit_line(path: Path) -> tuple[str, str | None]:
    """The system a corpus file is audited as: its line 2, '# Audit: OS [VERSION] [as ROLE]' (or the XML comment)."""
    match = re.search(r"Audit: (\S+)(?: (?!as )(\S+))?", path.read_text().splitlines()[1])
    return match.group(1), (None if match.group(2) in (None, "-->") else match.group(2))


def audit_role(path: Path) -> str:
    """The role the file's box plays, from ' as ROLE' on its audit line (a server's sysctl.conf is not a
    router's); router when the line names none."""
    match = re.search(r" as ([a-z-]+)", path.read_text().splitlines()[1])
    return match.group(1) if match else "router"


def labelled(path: Path) -> dict[int, tuple[str, str | None]]:
    """line number of a setting -> (expected code, expected hint) from the label line above it:
    '#@ expect CODE [HINT]' in key=value files, '<!--@ expect CODE [HINT] -->' above an <item> or
    <tunable> line of a config.xml (XML takes no '#' lines)."""
    out, pending = {}, None
    setting = re.compile(r"^\s*<tunable>" if path.suffix == ".xml" else r"^[A-Za-z]")
    for number, line in enumerate(path.read_text().splitlines(), 1):
        match = LABEL.match(line.strip())
        if match:
            pending = (match.group(2), MISSED if match.group(1) == MISSED else match.group(3))
        elif pending and setting.match(line):
            out[number], pending = pending, None
    return out


def corpus_files():
    return sorted(p for p in CORPUS.iterdir() if p.is_file())


def audit_kernel(path: Path):
    """' with kernel NAME' on the audit line: the box runs the custom kernel of tests/data/tuning/kernel/NAME."""
    match = re.search(r" with kernel (\S+)", path.read_text().splitlines()[1])
    return kernel_config_options(str(CORPUS.parent / "kernel" / match.group(1))) if match else None


def corpus_audit(path: Path):
    os_name, version = audit_line(path)
    family, base = base_version(os_name, version) if version else (OS_FAMILIES[os_name], None)
    settings = parse_file(str(path))
    return settings, audit(load_catalog(), settings, Context(os_name, family, base, audit_role(path), False, version,
                                                             kernel=audit_kernel(path)))


def _source_line(path: Path) -> bool:
    first = path.read_text().splitlines()[0]
    return first.startswith("# Source: ") or first.startswith("<!-- Source: ")


@pytest.mark.parametrize("path", corpus_files(), ids=lambda p: p.name)
def test_precision_corpus_matches_the_hand_labels(path):
    assert _source_line(path), "every corpus file names its source on line 1"
    settings, findings = corpus_audit(path)
    expected = labelled(path)
    assert settings and all(line in {s.line for s in settings} for line in expected), "labels sit above settings"
    for s in settings:
        on_line = [f for f in findings if f.line == s.line and f.key == s.key]
        loud = {f.code for f in on_line if f.severity in WARNING_OR_ERROR}
        if s.line not in expected:
            assert not loud, f"false positive on a real knob: {path.name}:{s.line} {s.raw} -> {on_line}"
            continue
        code, hint = expected[s.line]
        if hint == MISSED:
            assert loud <= {code}, f"{path.name}:{s.line}: {on_line}"
            continue
        assert code in {f.code for f in on_line}, f"{path.name}:{s.line} wanted {code}, got {on_line}"
        assert loud <= {code}, f"{path.name}:{s.line}: {on_line}"
        if hint:
            finding = next(f for f in on_line if f.code == code)
            assert f"did you mean {hint}" in finding.message and finding.fix == f"replace with {hint}"


def test_corpus_precision_over_all_files(capsys):
    """Issue #27: >= 30 real files of each kind; 0 false errors; precision of warnings+errors >= 90%,
    measured over the whole corpus (a warning or error is correct when a hand label names its code)."""
    files = corpus_files()
    kinds = {"xml": sum(p.suffix == ".xml" for p in files),
             "openbsd": sum(audit_line(p)[0] == "openbsd" for p in files),
             "linux": sum(audit_line(p)[0] in ("linux", "openwrt") for p in files)}
    assert len(files) >= 30 and kinds["xml"] >= 5 and kinds["openbsd"] >= 5 and kinds["linux"] >= 8, kinds
    correct = total = false_errors = 0
    for path in files:
        expected = labelled(path)
        _, findings = corpus_audit(path)
        for f in findings:
            if f.severity not in WARNING_OR_ERROR:
                continue
            total += 1
            right = expected.get(f.line, (None,))[0] == f.code
            correct += right
            false_errors += f.severity == "error" and not right
    with capsys.disabled():
        print(f"\naudit precision on the corpus ({len(files)} files): {correct}/{total} warnings+errors correct, "
              f"{false_errors} false error(s)")
    assert false_errors == 0 and total and correct / total >= 0.9


def test_no_line_gets_contradicting_fixes():
    files = [p for p in corpus_files() if p.suffix != ".xml"] + sorted((ROOT / "tests" / "data" / "tuning").glob("calomel_*"))
    for path in files:
        for os_name, version in [("freebsd", "12.1"), ("pfsense", "2.7.2"), ("openbsd", "7.5"), ("linux", "6.1")]:
            _, findings = audit_file(path, os_name, version)
            for line in {f.line for f in findings}:
                codes = {f.code for f in findings if f.line == line}
                for pair in combinations(sorted(codes), 2):
                    assert frozenset(pair) not in CONTRADICTS, (path.name, os_name, line, codes)


def _line(text: str, tmp_path: Path, os_name: str, version: str, name: str = "sysctl.conf"):
    path = tmp_path / name
    path.write_text(text + "\n")
    return audit_file(path, os_name, version)[1]


@pytest.mark.parametrize("os_name,version,text", [
    ("openbsd", "7.5", "hw.smt=1"), ("openbsd", "7.5", "net.inet.tcp.rfc1323=1"),
    ("openbsd", "7.5", "net.inet.ip.redirect=0"),
    ("linux", "6.1", "net.core.somaxconn=4096"), ("linux", "6.1", "net.ipv4.conf.all.accept_redirects=0"),
    ("linux", "6.1", "net.ipv4.conf.eth0.rp_filter=2"), ("openwrt", "23.05", "net.netfilter.nf_conntrack_max=65536"),
])
def test_the_issue_examples_get_no_false_advice(tmp_path, os_name, version, text):
    findings = _line(text, tmp_path, os_name, version)
    assert not [f for f in findings if f.severity in WARNING_OR_ERROR or f.fix.startswith("replace with")], findings


def test_an_openbsd_number_without_a_name_is_refused_by_sysctl(tmp_path):
    """tcp_var.h keeps TCPCTL_RECVSPACE (7) but its TCPCTL_NAMES slot is empty; sysctl(8)'s findname() skips
    empty slots ("third level name recvspace in net.inet.tcp.recvspace is invalid"): the line does nothing."""
    findings = _line("net.inet.tcp.recvspace=262144", tmp_path, "openbsd", "7.5")
    assert [(f.code, f.severity) for f in findings] == [("LR002", "warning")] and "empty" in findings[0].message
    assert not findings[0].fix.startswith("replace with")


def test_pfsense_loader_knobs_the_issue_names(tmp_path):
    loader = _line('net.pf.states_hashsize="1048576"\nhw.ibrs_disable="0"\nkern.ipc.nmbclusters="1000000"',
                   tmp_path, "pfsense", "2.7.2", "loader.conf")
    assert not [f for f in loader if f.code in ("LR002", "LR003", "LR011")], loader
    sysctl = _line("kern.ipc.nmbclusters=1000000\nhw.igb.num_queues=2", tmp_path, "pfsense", "2.7.2")
    assert [f.code for f in sysctl] == ["LR001"], "obsolete beats misplaced; nmbclusters is writable at runtime"


def test_misspelling_gets_did_you_mean_only_among_close_names(tmp_path):
    findings = _line("net.ipv4.tcp_congestion_contro=bbr\nhw.ix.rx_process_limit=-1", tmp_path, "linux", "6.1")
    first = [f for f in findings if f.line == 1]
    assert [f.code for f in first] == ["LR002"] and "net.ipv4.tcp_congestion_control" in first[0].message
    assert edit_distance("ix", "igb", 2) == 2
    assert close_names("hw.ix.rx_process_limit", {"hw.igb.rx_process_limit"}, "freebsd") == []
    assert close_names("net.inet.ip.forwardng", {"net.inet.ip.forwarding", "net.inet.ip.ttl"}, "openbsd") == [
        "net.inet.ip.forwarding"]


def test_name_lists_have_sources_and_the_nearest_release_is_used():
    lists = {n.os: n for n in all_lists()}
    assert set(lists) == {"freebsd", "linux", "openbsd"}
    for names in lists.values():
        assert names.sources and len(names.entries) > 200
    assert name_list("openbsd", (7, 3)).lookup("hw.smt")[0] == "runtime"  # 7.3 also reads sysctl(2)
    assert lists["openbsd"].lookup("net.inet.tcp.recvspace")[0] == "unnamed"
    assert name_list("openbsd", (6, 6)).label() == "openbsd 6.6 name list"
    assert name_list("openbsd", (7, 0)).label() == "openbsd 6.8-current of 2020-06 name list"
    assert lists["linux"].lookup("net.ipv4.conf.eth7.rp_filter") is not None
    assert lists["freebsd"].lookup("hw.vtnet.3.csum_disable")[0] == "boot"
    assert lists["freebsd"].lookup("net.pf.states_hashsize")[0] in ("boot", "both")
    assert name_list("linux", (5, 15)).release == (6, 1)  # OpenWrt 23.05's 5.15: the oldest list above it


def _tools_module():
    spec = importlib.util.spec_from_file_location("extract_knob_names", ROOT / "tools" / "extract_knob_names.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_extractors_on_real_source_text():
    tools = _tools_module()
    # FreeBSD 12.2 vtnet(4), LOADER TUNABLES (Debian freebsd-manpages 12.2-1), verbatim lines
    vtnet = (".Sh LOADER TUNABLES\n.Bl -tag -width \"xxxxxx\"\n.It Va hw.vtnet.csum_disable\n"
             ".It Va hw.vtnet. Ns Ar X Ns Va .csum_disable\nThis tunable disables receive and send checksum offload.\n")
    assert sorted(tools.freebsd_manpage(vtnet, "vtnet.4")) == [("hw.vtnet.N.csum_disable", "boot", "vtnet.4"),
                                                               ("hw.vtnet.csum_disable", "boot", "vtnet.4")]
    # FreeBSD 12.2 tcp(4), MIB Variables, verbatim lines
    tcp = (".Ss MIB Variables\nThe\n.Tn TCP\nprotocol implements a number of variables in the\n.Va net.inet.tcp\n"
           "branch of the\n.It Dv TCPCTL_SENDSPACE\n.Pq Va sendspace\n")
    assert list(tools.freebsd_manpage(tcp, "tcp.4")) == [("net.inet.tcp.sendspace", "runtime", "tcp.4")]
    # Linux 6.1 ip-sysctl.rst, verbatim headings and variable lines
    rst = ("/proc/sys/net/ipv4/* Variables\n==============================\n\nip_forward - BOOLEAN\n"
           "neigh/default/gc_thresh3 - INTEGER\n``conf/interface/*``\n\trp_filter - INTEGER\nrp_filter - INTEGER\n")
    assert sorted(n for n, _, _ in tools.linux_rst(rst, "net.ipv4", "ip-sysctl.rst")) == [
        "net.ipv4.conf.IF.rp_filter", "net.ipv4.ip_forward", "net.ipv4.neigh.IF.gc_thresh3"]
    assert list(tools.linux_proc_listing("644 /proc/sys/net/ipv4/conf/eth0/rp_filter\n444 /proc/sys/fs/inode-nr\n",
                                         "x")) == [("net.ipv4.conf.IF.rp_filter", "runtime", "x"),
                                                   ("fs.inode-nr", "read-only", "x")]
    openbsd = (ROOT / "tools" / "sources" / "openbsd" / "sysctl.2.lines").read_text()
    rows = {n: w for n, w, _ in tools.openbsd_sysctl2(openbsd, "sysctl.2")}
    assert rows["hw.smt"] == "runtime" and rows["hw.ncpu"] == "read-only" and rows["net.inet6.ip6.forwarding"] == "runtime"
    headers = (ROOT / "tools" / "sources" / "openbsd" / "headers.h").read_text()
    table = {n: w for n, w, _ in tools.openbsd_name_tables(headers, "h")}
    assert table["net.inet.tcp.sack"] == "runtime" and table["net.inet.tcp.recvspace"] == "unnamed"
    assert table["net.inet6.ip6.ifq.maxlen"] == "runtime"


def test_the_committed_linux_list_is_what_the_extractor_makes_of_the_committed_listing():
    tools = _tools_module()
    listing = ROOT / "tools" / "sources" / "linux" / "proc-sys-6.1.0-56-cloud-amd64.txt"
    committed = name_list("linux", (6, 1))
    for name, where, _ in tools.linux_proc_listing(listing.read_text(), listing.name):
        assert committed.entries[name][0] in (where, "runtime"), name


@pytest.mark.parametrize("os_name,version,base", [("openwrt", "23.05", "linux 5.15"), ("openwrt", "23.05.3", "linux 5.15"),
                                                  ("pfsense", "2.7.2", "freebsd 14.0"), ("opnsense", "24.7.4", "freebsd 14.1")])
def test_version_maps(os_name, version, base):
    family, parsed = base_version(os_name, version)
    assert f"{family} {'.'.join(map(str, parsed))}" == base


def test_unknown_versions_are_refused_with_the_known_ones():
    with pytest.raises(ConfigError, match="known: .*2.7.2"):
        base_version("pfsense", "9.9")
    result = run("recommend", "--os", "openwrt", "--os-version", "23.7", "--role", "router")
    assert result.returncode == 2 and "23.05" in result.stderr and "24.10" in result.stderr
    result = run("recommend", "--os", "openwrt", "--os-version", "23.05", "--role", "router")
    assert result.returncode == 0 and "(linux 5.15)" in result.stdout


def test_explain_stats_and_names_without_advice():
    catalog = load_catalog()
    stats = catalog.stats()
    assert stats["linux"] >= 80 and stats["openbsd"] >= 30
    assert all(k.sources and all(s.strip() for s in k.sources) for k in catalog.knobs)
    result = run("explain", "--stats")
    assert result.returncode == 0 and re.search(r"linux\s+\d+ knobs with advice \(\d+ with a source\)", result.stdout)
    result = run("explain", "net.ipv4.conf.eth0.arp_ignore")
    assert result.returncode == 0 and "exists on linux" in result.stdout and "no advice" in result.stdout
    result = run("explain", "net.ipv4.tcp_congestion_contro")
    assert result.returncode == 2 and "did you mean net.ipv4.tcp_congestion_control" in result.stderr


def test_a_name_declared_inside_an_ifdef_of_a_kernel_option_needs_that_option():
    tools = _tools_module()
    # FreeBSD 14.2-BETA1 sys/netinet/ip_input.c lines 180-194 (kaizenwa/freebsd-14.2@b66633d79ade), verbatim
    ip_input = ('#ifdef INET\nSYSCTL_INT(_net_inet_ip, IPCTL_DEFMTU, mtu, CTLFLAG_RW,\n    &ip_mtu, 0, "Default MTU");\n'
                '#endif\n\n#ifdef IPSTEALTH\nVNET_DEFINE(int, ipstealth);\n'
                'SYSCTL_INT(_net_inet_ip, OID_AUTO, stealth, CTLFLAG_VNET | CTLFLAG_RW,\n'
                '    &VNET_NAME(ipstealth), 0,\n    "IP stealth mode, no TTL decrementation on forwarding");\n#endif\n')
    guards = {d[2]: g for d, g in tools.freebsd_declarations(ip_input, "netinet/ip_input.c") if d[0] == "leaf"}
    assert guards == {"mtu": frozenset({"INET"}), "stealth": frozenset({"IPSTEALTH"})}
    assert tools._required("defined(RSS) && !defined(NO_X)") == {"RSS"}
    assert tools._required("defined(INET) || defined(INET6)") == frozenset()
    source = source_list("freebsd")
    assert source.rows["net.inet.ip.stealth"][0].needs == {"IPSTEALTH"}
    assert source.rows["net.inet.rss.bits"][0].needs == {"RSS"}  # net/rss_config.c: `optional inet rss | inet6 rss`
    assert not source.rows["net.inet.ip.forwarding"][0].needs and not source.rows["vfs.zfs.arc_max"][0].needs
    from linerate.tuning.releases import coverage_line
    assert "compiled only with `options IPSTEALTH`" in coverage_line("freebsd", "net.inet.ip.stealth")  # explain


def test_an_option_gated_name_is_flagged_on_generic_and_not_on_the_kernel_that_has_the_option():
    """The real desktop sysctl.conf sets net.inet.ip.stealth; its repository's kernel config NORSK has
    `options IPSTEALTH` (GENERIC does not: sys/amd64/conf/GENERIC)."""
    path = CORPUS / "freebsd13_desktop_sysctl.conf"
    settings = parse_file(str(path))

    def on_stealth(os_name, version, kernel=None):
        family, base = base_version(os_name, version)
        found = audit(load_catalog(), settings, Context(os_name, family, base, "server", False, version, kernel=kernel))
        return [(f.code, f.severity) for f in found if f.key == "net.inet.ip.stealth"]

    assert on_stealth("freebsd", "13.0") == [("LR018", "warning")]
    assert on_stealth("freebsd", "13.0", kernel_config_options(str(CORPUS.parent / "kernel" / "NORSK"))) == []
    assert on_stealth("pfsense", "2.7.2") == [("LR018", "info")]  # a product's own kernel may have it


def test_a_vendor_kernels_own_names_and_options_are_not_called_absent():
    """OPNsense builds `options RSS` and adds net.inet.rss.enabled (opnsense/src sys/net/rss_config.c
    declares it; FreeBSD has no such leaf): on OPNsense it exists, on FreeBSD and pfSense it does not.
    A name moved to another branch is pointed at what that branch declares, never at a name that does
    not exist there either (hw.igc has no num_queues or ring sizes: sys/dev/igc/if_igc.c)."""
    path = ROOT / "tests" / "data" / "tuning" / "opnsense_nightcomdev_rss_igc_sysctl.conf"
    findings = {f.key: f for f in audit_file(path, "opnsense", "25.1", "sysctl")[1]}
    assert (findings["net.inet.rss.enabled"].code, findings["net.inet.rss.enabled"].severity) == ("LR015", "info")
    assert "opnsense's own kernel declares it" in findings["net.inet.rss.enabled"].message
    assert findings["net.inet.rss.bits"].code != "LR018"  # its option is built: only its placement is judged
    for os_name, version in (("freebsd", "14.2"), ("pfsense", "2.7.2")):
        stock = {f.key: f for f in audit_file(path, os_name, version, "sysctl")[1]}
        assert (stock["net.inet.rss.enabled"].code, stock["net.inet.rss.enabled"].severity) == ("LR002", "warning")
    for name in ("net.igc.num_queues", "net.igc.tx_ring_size", "net.igc.rx_ring_size"):
        finding = findings[name]
        assert finding.severity == "warning" and "under hw.igc" in finding.message
        there = "hw.igc." + name.rsplit(".", 1)[1]
        assert f"no {there} is declared either" in finding.fix and f"use {there}" not in finding.fix
