"""Issue 41, held-out classes: ip_conntrack compat names removed in 4.9, documented no-ops ("deprecated ...
no longer used"), read-only per-interface declarations, tcp(4) millisecond timers written in seconds,
minmss above RFC 1122's 536, OpenBSD hw.* / non-node names and kern.stackgap_random, and a one-number
sysctl given two numbers (the kernel takes the first)."""

import pytest

from linerate.tuning.audit import Context, audit
from linerate.tuning.catalog import load_catalog
from linerate.tuning.parsers import parse_file
from tests.unit.test_tuning_knowledge import _line


@pytest.mark.parametrize("os_name,version,text,code,words", [
    ("linux", "5.15", "net.ipv4.netfilter.ip_conntrack_udp_timeout=60", "LR001", "net.netfilter.nf_conntrack_udp_timeout"),
    ("linux", "5.15", "net.ipv4.ip_conntrack_max=1000", "LR001", "removed in linux 4.9"),
    ("linux", "5.15", "net.ipv4.route.max_size=8048576", "LR001", "route cache is no longer used"),
    ("linux", "6.1", "net.ipv4.conf.eth0.mc_forwarding=0", "LR017", "devinet.c"),
    ("linux", "6.1", "net.core.somaxconn = 16384 12", "LR017", "reads 16384"),
    ("linux", "6.1", "net.ipv4.tcp_rmem = 4096 131072 $rmem_max", "LR017", "would instead fail at '$rmem_max'"),
    ("linux", "6.1", "kernel.modules_disabled = 0", "LR017", "takes 1..1"),
    ("linux", "5.15", "net.ipv4.tcp_mem = 300 200 400", "LR017", "out of order"),
    ("freebsd", "12.2", "net.inet.tcp.keepidle=3600", "LR017", "milliseconds"),
    ("freebsd", "13.2", "net.inet.tcp.minmss=1460", "LR005", "RFC 1122"),
    ("openbsd", "7.4", "hw.nx=1", "LR002", "hw"),
    ("openbsd", "7.4", "kern.dmesg.restrict=1", "LR002", "kern.dmesg is not a node"),
    ("openbsd", "7.4", "kern.stackgap_random=1", "LR017", "EINVAL"),
    # documented harm (ip-sysctl.rst, RFCs, kernel limits)
    ("linux", "4.15", "net.ipv4.tcp_window_scaling = 0", "LR005", "RFC 7323"),
    ("linux", "6.8", "net.ipv4.tcp_retries2 = 1", "LR005", "at least 8"),
    ("linux", "4.15", "net.ipv4.tcp_wmem = 30000000 30000000 30000000", "LR005", "due to fact of its birth"),
    ("linux", "6.1", "net.ipv4.tcp_rmem = 2097152 4194304 16777216", "LR005", "guaranteed to each TCP socket"),
    ("linux", "3.10", "net.ipv4.tcp_tw_recycle = 1", "LR005", "4396e46187ca"),
    ("linux", "6.8", "kernel.pid_max = 67108864", "LR017", "PID_MAX_LIMIT"),
    ("linux", "5.15", "net.ipv4.ip_local_port_range = 65000 1024", "LR017", "range[1] < range[0]"),
    ("linux", "5.15", "net.ipv4.tcp_syn_retries = 200", "LR017", "MAX_TCP_SYNCNT"),
    ("freebsd", "14.1", "kern.ipc.nmbclusters=0", "LR017", "EINVAL"),
])
def test_class_is_a_warning_with_its_source(tmp_path, os_name, version, text, code, words):
    findings = _line(text, tmp_path, os_name, version)
    assert [(f.code, f.severity) for f in findings] == [(code, "warning")], findings
    assert words in findings[0].message


@pytest.mark.parametrize("os_name,version,text", [
    ("freebsd", "13.2", "net.inet.tcp.keepidle=60000"), ("freebsd", "13.2", "net.inet.tcp.msl=5000"),
    ("freebsd", "13.2", "net.inet.tcp.minmss=536"), ("openbsd", "7.4", "kern.stackgap_random=262144"),
    ("openbsd", "7.4", "hw.sensors.cpu0.temp0=1"), ("openbsd", "7.4", "hw.ucomnames=x"),
    ("linux", "6.1", "net.ipv4.tcp_rmem = 4096 87380 6291456"), ("linux", "6.1", "net.ipv4.neigh.default.unres_qlen=3"),
    ("linux", "6.1", "net.ipv4.tcp_window_scaling = 1"), ("linux", "6.1", "net.ipv4.tcp_retries2 = 8"),
    ("linux", "6.1", "net.ipv4.tcp_wmem = 16384 524288 268435456"), ("linux", "6.1", "kernel.pid_max = 4194304"),
    ("linux", "6.1", "net.ipv4.ip_local_port_range = 1024 65535"), ("linux", "6.1", "net.ipv4.tcp_sack = 0"),
    ("linux", "6.1", "net.ipv4.tcp_timestamps = 0"), ("linux", "3.10", "net.ipv4.tcp_tw_recycle = 0"),
])
def test_no_warning_where_the_sources_do_not_settle_it(tmp_path, os_name, version, text):
    findings = _line(text, tmp_path, os_name, version)
    assert not [f for f in findings if f.severity in ("warning", "error")], findings


def test_conntrack_compat_name_warns_without_a_version_when_every_release_judged_is_past_4_9(tmp_path):
    """Without --os-version Linux is judged over 4.14 .. 6.6 (versions.py): all past the 4.9 removal."""
    path = tmp_path / "sysctl.conf"
    path.write_text("net.ipv4.netfilter.ip_conntrack_udp_timeout=60\n")
    findings = audit(load_catalog(), parse_file(str(path)), Context("linux", "linux", None, "router"))
    assert [(f.code, f.severity) for f in findings] == [("LR001", "warning")]
