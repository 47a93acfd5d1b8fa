"""Issue 41, second held-out check: documented harm of values whose names exist (ip-sysctl.rst, RFC 1122 /
7323, commit 4396e46187ca), hard limits of the kernel's handlers (pid_max, ip_local_port_range,
tcp_syn_retries), kernels older than the release lists, FreeBSD's autosized 0, and IPv6 forwarding enabled
on the wrong scope (tuning/harm.py)."""


from linerate.tuning.harm import retries_timeout_s
from tests.unit.test_tuning_knowledge import _line


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
