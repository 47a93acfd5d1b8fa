"""Issue 41, second held-out check: documented harm of values whose names exist (ip-sysctl.rst, RFC 1122 /
7323, commit 4396e46187ca), hard limits of the kernel's handlers (pid_max, ip_local_port_range,
tcp_syn_retries), kernels older than the release lists, FreeBSD's autosized 0, and IPv6 forwarding enabled
on the wrong scope (tuning/harm.py)."""

import pytest

from linerate.tuning.harm import retries_timeout_s
from tests.unit.test_tuning_knowledge import _line


@pytest.mark.parametrize("os_name,version,text,code,words", [
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
def test_documented_harm_warns_with_its_source(tmp_path, os_name, version, text, code, words):
    findings = _line(text, tmp_path, os_name, version)
    assert [(f.code, f.severity) for f in findings] == [(code, "warning")], findings
    assert words in findings[0].message


@pytest.mark.parametrize("os_name,version,text", [
    ("linux", "6.1", "net.ipv4.tcp_window_scaling = 1"), ("linux", "6.1", "net.ipv4.tcp_retries2 = 8"),
    ("linux", "6.1", "net.ipv4.tcp_wmem = 16384 524288 268435456"), ("linux", "6.1", "kernel.pid_max = 4194304"),
    ("linux", "6.1", "net.ipv4.ip_local_port_range = 1024 65535"), ("linux", "6.1", "net.ipv4.tcp_sack = 0"),
    ("linux", "6.1", "net.ipv4.tcp_timestamps = 0"), ("linux", "3.10", "net.ipv4.tcp_tw_recycle = 0"),
])
def test_no_harm_where_the_sources_do_not_say_so(tmp_path, os_name, version, text):
    findings = _line(text, tmp_path, os_name, version)
    assert not [f for f in findings if f.severity != "info"], findings


def test_a_kernel_below_the_lists_says_where_they_start(tmp_path):
    findings = _line("net.ipv4.tcp_tw_recycle = 1\nnet.ipv4.tcp_tw_reuse = 1", tmp_path, "linux", "3.10")
    assert all("start at 4.4" in f.message for f in findings), findings


def test_removed_name_on_a_newer_kernel_stays_a_removal(tmp_path):
    findings = _line("net.ipv4.tcp_tw_recycle = 1", tmp_path, "linux", "4.15")
    assert [f.code for f in findings] == ["LR001"]


def test_zero_nmbclusters_at_boot_is_the_autosized_default(tmp_path):
    findings = _line('kern.ipc.nmbclusters="0"', tmp_path, "pfsense", "2.7.2", name="loader.conf")
    assert [(f.code, f.severity) for f in findings] == [("LR010", "info")]
    assert "tunable_mbinit" in findings[0].message and findings[0].fix == "the line can go"


def test_ipv6_forwarding_on_the_default_scope_only(tmp_path):
    findings = _line("net.ipv4.ip_forward=1\nnet.ipv6.conf.default.forwarding=1", tmp_path, "linux", "5.15")
    on_line = [f for f in findings if f.line == 2]
    assert [(f.code, f.severity) for f in on_line] == [("LR005", "warning")]
    assert "conf/all/forwarding" in on_line[0].message
    both = "net.ipv6.conf.all.forwarding=1\nnet.ipv6.conf.default.forwarding=1"
    assert not [f for f in _line(both, tmp_path, "linux", "5.15") if f.severity != "info"]


def test_retries2_timeout_matches_the_documented_figure():
    assert round(retries_timeout_s(15), 1) == 924.6
