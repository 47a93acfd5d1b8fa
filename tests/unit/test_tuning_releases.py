"""The Linux release lists (tuning/names/linux-releases.tsv, from each LTS release's source tree) and the
value checks of tuning/values.py, as the audit uses them."""

import pytest

from linerate.tuning.audit import Context, audit
from linerate.tuning.catalog import load_catalog
from linerate.tuning.parsers import parse_file
from linerate.tuning.releases import coverage_line, linux_releases
from linerate.tuning.values import lowers_capacity


def audit_text(tmp_path, text, os_name="linux", version=None, role=None, name="sysctl.conf"):
    path = tmp_path / name
    path.write_text(text)
    family = {"linux": "linux", "freebsd": "freebsd"}[os_name]
    ctx = Context(os_name, family, version, role, False, None if version is None else ".".join(map(str, version)))
    return audit(load_catalog(), parse_file(str(path), None), ctx)


def test_the_lists_cover_every_lts_release_from_4_4():
    versions = [".".join(map(str, r.version)) for r in linux_releases().releases]
    assert versions == ["4.4", "4.9", "4.14", "4.19", "5.4", "5.10", "5.15", "6.1", "6.6", "6.12"]


@pytest.mark.parametrize("name,version,state", [
    ("net.ipv4.netfilter.ip_conntrack_max", (4, 4), "exists"),  # compat sysctl of nf_conntrack_l3proto_ipv4.c
    ("net.ipv4.netfilter.ip_conntrack_max", (4, 9), "removed"),
    ("net.ipv4.tcp_adv_win_scale", (6, 1), "exists"),
    ("net.ipv4.tcp_adv_win_scale", (6, 6), "no-op"),  # ip-sysctl.rst: "Obsolete since linux-6.6"
    ("net.netfilter.nf_conntrack_helper", (6, 1), "removed"),
    ("net.ipv4.tcp_madeup_knob", (5, 10), "absent"),
    ("net.core.somaxconn", (5, 15), "exists"),
    # declared in every release, written to a variable the file never reads (route.c, ip_fragment.c)
    ("net.ipv4.route.gc_interval", (5, 4), "no-op"),
    ("net.ipv4.route.gc_elasticity", (4, 4), "no-op"),
    ("net.ipv4.ipfrag_secret_interval", (6, 12), "no-op"),
    ("net.ipv4.route.gc_timeout", (5, 4), "exists"),  # read by the PMTU exception expiry
    ("net.ipv4.route.gc_thresh", (5, 4), "no-op"),  # ipv4_dst_ops has no .gc: dst_alloc() never compares it
    ("kernel.random.urandom_min_reseed_secs", (6, 6), "no-op"),  # kept for compatibility in 6.x random.c
])
def test_judged_per_release(name, version, state):
    assert linux_releases().judge(name, version, version).state == state


def test_removed_and_absent_names_warn_and_say_what_the_lists_cover(tmp_path):
    found = audit_text(tmp_path, "net.ipv4.netfilter.ip_conntrack_max = 65536\nnet.ipv4.tcp_madeup_knob = 1\n",
                       version=(6, 1))
    assert [(f.code, f.severity) for f in found] == [("LR001", "warning"), ("LR002", "warning")]
    assert "4.4 .. 6.12" in found[0].message and "mainline" in found[1].message


def test_a_knob_obsolete_since_6_6_warns_on_6_6_only(tmp_path):
    text = "net.ipv4.tcp_adv_win_scale = 2\n"
    assert {f.code for f in audit_text(tmp_path, text, version=(6, 6)) if f.severity == "warning"} == {"LR001"}
    assert not [f for f in audit_text(tmp_path, text, version=(6, 1)) if f.code == "LR001"]


def test_pages_written_as_bytes_and_read_only_names_warn(tmp_path):
    found = audit_text(tmp_path, "net.ipv4.tcp_mem = 16777216 16777216 16777216\n"
                                 "net.ipv4.udp_mem = 65536 131072 262144\n"
                                 "net.netfilter.nf_conntrack_count = 10\n", version=(6, 1))
    assert [(f.line, f.code) for f in found if f.severity == "warning"] == [(1, "LR017"), (3, "LR017")]
    assert "64 GiB" in found[0].message


def test_natd_on_a_nat_gateway_warns_and_a_raised_table_is_not_halved(tmp_path):
    found = audit_text(tmp_path, 'natd_enable="YES"\n', "freebsd", (14, 2), "nat-firewall", "rc.conf")
    assert [f.code for f in found] == ["LR005"] and "divert" in found[0].message
    assert lowers_capacity("net.netfilter.nf_conntrack_max", "262144", "524288")
    assert not lowers_capacity("net.netfilter.nf_conntrack_max", "262144", "65536")
    raised = audit_text(tmp_path, "net.netfilter.nf_conntrack_max = 524288\n", version=(6, 1), role="nat-firewall")
    assert not [f for f in raised if f.code == "LR013"]


def test_explain_names_the_releases_covered():
    line = coverage_line("linux", "net.ipv4.tcp_tw_recycle")
    assert "4.4 .. 6.12" in line and "listed in 4.4, 4.9" in line and "4.14" not in line.split("listed in")[1]
    bsd = coverage_line("freebsd", "kern.smp.cpus")
    assert "snapshots 10.4-RELEASE" in bsd and "14.2-BETA1" in bsd and "read-only in kern/subr_smp.c" in bsd
    assert "declared in none of them" in coverage_line("freebsd", "net.inet.tcp.no_such_knob")
    line = coverage_line("openbsd", "net.inet.tcp.recvspace")
    assert "6.0, 6.1" in line and "7.6" in line and "a number without a name" in line


def test_a_fraction_where_the_kernel_reads_whole_numbers_warns(tmp_path):
    found = audit_text(tmp_path, "net.ipv4.tcp_probe_interval = 0.1\nnet.ipv4.tcp_congestion_control = bbr\n",
                       version=(6, 1))
    assert [(f.line, f.code, f.severity) for f in found if f.severity != "info"] == [(1, "LR017", "warning")]
    assert "whole numbers" in found[0].message


def test_the_overridden_line_of_a_duplicate_is_the_one_that_does_nothing(tmp_path):
    found = audit_text(tmp_path, "net.core.somaxconn = 1024\nnet.core.somaxconn = 4096\nnet.core.somaxconn = 4096\n",
                       version=(6, 1))
    assert [(f.line, f.code) for f in found if f.code in ("LR007", "LR012")] == [(1, "LR007"), (3, "LR012")]
    assert "sysctl.conf:3" in next(f for f in found if f.code == "LR007").message  # names the line that wins


def test_a_name_the_source_declares_but_never_reads_warns_with_what_the_source_shows(tmp_path):
    found = audit_text(tmp_path, "net.ipv4.route.gc_interval = 60\nnet.ipv4.route.gc_timeout = 300\n",
                       version=(5, 4), role="router")
    by_line = {f.line: f for f in found}
    assert (by_line[1].code, by_line[1].severity) == ("LR001", "warning")
    assert "ip_rt_gc_interval" in by_line[1].message and "never reads" in by_line[1].message
    assert "documentation" not in by_line[1].message  # the evidence is the source, said as such
    assert 2 not in by_line or by_line[2].severity == "info"


def test_freebsd_read_only_names_warn_only_where_every_snapshot_agrees(tmp_path):
    text = "kern.smp.cpus=4\nhw.ncpu=4\nkern.ipc.somaxconn=4096\n"
    found = {f.line: f for f in audit_text(tmp_path, text, "freebsd", (13, 2), "router")}
    assert (found[1].code, found[1].severity) == ("LR017", "warning") and "is read only" in found[1].message
    assert found.get(2) is None or found[2].code != "LR017"  # a loader tunable on arm in 12.x: not certain
    assert found.get(3) is None or found[3].code != "LR017"


@pytest.mark.parametrize("os_name,version,line", [("linux", (6, 1), "net.ipv4.ip_forward = 0"),
                                                  ("freebsd", (14, 1), "net.inet.ip.forwarding=0")])
def test_forwarding_off_warns_on_a_router_not_on_a_server(tmp_path, os_name, version, line):
    router = audit_text(tmp_path, line + "\n", os_name, version, "router")
    assert [(f.code, f.severity) for f in router] == [("LR005", "warning")]
    server = audit_text(tmp_path, line + "\n", os_name, version, "server")
    assert all(f.severity == "info" for f in server)


def test_a_netisr_queue_longer_than_maxqlimit_is_refused(tmp_path):
    """seedbox-tune-freebsd15.sh's sysctl.conf (public, first line names it) sets intr_queue_maxlen=100000;
    netisr_setqlimit() refuses any length above net.isr.maxqlimit (10240 unless loader.conf raises it)."""
    from pathlib import Path

    real = Path(__file__).resolve().parents[1] / "data" / "tuning" / "heldout2" / "freebsd150_seedbox_sysctl.conf"
    settings = parse_file(str(real), None)
    ctx = Context("freebsd", "freebsd", (15, 0), "server", False, "15.0")
    found = [f for f in audit(load_catalog(), settings, ctx) if f.code == "LR017" and "netisr" in f.message]
    line = next(n for n, text in enumerate(real.read_text().splitlines(), 1)
                if text.startswith("net.inet.ip.intr_queue_maxlen="))
    assert [f.line for f in found] == [line]
    assert "10,240" in found[0].message and "EINVAL" in found[0].message
    loader = tmp_path / "loader.conf"
    loader.write_text('net.isr.maxqlimit="200000"\n')
    raised = audit(load_catalog(), parse_file(str(loader), None) + settings, ctx)
    assert not [f for f in raised if "netisr_setqlimit" in f.message]


def test_releases_older_than_every_list_get_no_warning_from_a_newer_list(tmp_path):
    """OpenBSD 4.2's tcp_var.h still named sendspace/recvspace (their slots emptied later): the 6.0 list, the
    oldest linerate holds, must not judge 4.2; OpenWrt 15.05 (Linux 3.18) is a release linerate knows."""
    from linerate.tuning.versions import resolve_release

    ctx = Context("openbsd", "openbsd", (4, 2), "server", False, "4.2")
    path = tmp_path / "ob.conf"
    path.write_text("net.inet.tcp.sendspace=65536\nnet.inet.tcp.recvspace=65536\n")
    found = audit(load_catalog(), parse_file(str(path), None), ctx)
    assert not [f for f in found if f.severity == "warning"], found
    assert resolve_release("openwrt", "15.05").version == (3, 18)


def test_a_distribution_patchs_name_is_not_called_new_in_the_release_whose_tree_carries_the_patch():
    """kernel.unprivileged_userns_clone: Debian's patch 'add sysctl to disallow unprivileged CLONE_NEWUSER by
    default'; Debian 12's /proc/sys lists it, no upstream tree declares it, and the 6.12 tree read is Debian's
    linux-source (held-out check: a Debian 12 sysctl.conf got 'only exists from linux 6.12 on')."""
    from linerate.tuning.releases import distribution_names, linux_lifecycle

    assert "kernel.unprivileged_userns_clone" in distribution_names()
    assert "net.ipv4.tcp_rto_min_us" not in distribution_names()  # new upstream in 6.12: still LR008
    code, severity, message, _ = linux_lifecycle("kernel.unprivileged_userns_clone", "linux 6.1", (6, 1), (6, 1), "")
    assert (code, severity) == ("LR016", "info") and "Debian/Ubuntu kernel patch" in message
    assert linux_lifecycle("net.ipv4.tcp_rto_min_us", "linux 6.1", (6, 1), (6, 1), "")[:2] == ("LR008", "warning")


def test_a_value_outside_a_minmax_handlers_bounds_is_refused_by_the_kernel():
    """kernel/sysctl.c of 6.1.20 (c1336658570/linux-6.1.20@fad5889c), the modules_disabled entry verbatim:
    proc_dointvec_minmax with extra1 = extra2 = SYSCTL_ONE, so a write of 0 is EINVAL; an entry whose
    bounds sit under #ifdef (bpf_jit_enable) or point at a variable the file sets at run time says nothing."""
    import importlib.util
    from pathlib import Path

    from linerate.tuning.releases import linux_range_problem

    spec = importlib.util.spec_from_file_location("extract_linux_releases", Path(__file__).resolve().parents[2] /
                                                  "tools" / "extract_linux_releases.py")
    tools = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tools)
    entry = ('\t\t.procname\t= "modules_disabled",\n\t\t.data\t\t= &modules_disabled,\n\t\t.maxlen\t\t= sizeof(int),\n'
             '\t\t.mode\t\t= 0644,\n\t\t/* only handle a transition from default "0" to "1" */\n'
             '\t\t.proc_handler\t= proc_dointvec_minmax,\n\t\t.extra1\t\t= SYSCTL_ONE,\n\t\t.extra2\t\t= SYSCTL_ONE,\n')
    assert tools.entry_bounds(entry, {}) == ("proc_dointvec_minmax", 1, 1)
    assert tools.entry_bounds(entry.replace("SYSCTL_ONE,\n\t\t.extra2", "&one,\n\t\t.extra2"), {"one": 1})[1] == 1
    assert tools.entry_bounds("#ifdef CONFIG_BPF_JIT_ALWAYS_ON\n" + entry, {}) is None
    assert tools.entry_bounds(entry.replace("SYSCTL_ONE,\n", "&max_threads,\n", 1), {})[1] is None

    refused = linux_range_problem("kernel.modules_disabled", "0", (6, 1), (6, 1))
    assert refused and "takes 1..1" in refused and "EINVAL" in refused
    assert linux_range_problem("kernel.modules_disabled", "1", (6, 1), (6, 1)) is None
    assert "300" in linux_range_problem("net.ipv4.ip_default_ttl", "300", (4, 4), (6, 12))
    assert linux_range_problem("net.ipv4.tcp_rmem", "4096 87380 6291456", (6, 1), (6, 1)) is None  # each one checked
    assert linux_range_problem("net.core.somaxconn", "65535", (6, 1), (6, 1)) is None  # no upper bound declared
