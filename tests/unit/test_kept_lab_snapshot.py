"""A kept lab's namespaces as `lab up` kept them, against how they read later (lab/snapshot.py), on the reads
of a real kept VM lab's host side (tests/data/lab/kept_vm_lab_snapshot.json): what linerate's own commands and
a capture change is not drift; each operator change is named with the setting it changed."""

import json
from pathlib import Path

import pytest

from linerate.lab import snapshot
from linerate.lab.registry import MAX_RECORD_BYTES, LabRecord, RecordError

WORKSPACES = frozenset({"lr-k6-client", "lr-k6-server"})  # where an operator may capture (testbed/namespace.py)
CAPTURE = json.loads((Path(__file__).parent.parent / "data" / "lab" / "kept_vm_lab_snapshot.json").read_text())

# each change, labelled by hand from ethtool(8), ip-link(8), ip-addrlabel(8), ip-neighbour(8), tc(8): the namespace,
# the read that must show it, and a setting's name the phrase must give
EXPECTED = {
    "ethtool -K tap-lan tx off": ("lr-k6-dut", "offloads of tap-lan", "tx-checksumming was on, is off"),
    "ip link set wan0 group 5": ("lr-k6-dut", "links", "wan0.group was default, is 5"),
    "ip link set eth0 alias mine": ("lr-k6-client", "links", "eth0.ifalias was absent, is mine"),
    "ip link set lan0 promisc on": ("lr-k6-dut", "links", "PROMISC"),
    "ip addrlabel add prefix 2001:2::/48 label 99": ("lr-k6-dut", "address labels", '"label": 99'),
    "ip neigh add proxy 198.19.0.77 dev wan0": ("lr-k6-dut", "proxy neighbours", "198.19.0.77"),
    "ethtool -K wan0 tx-nocache-copy on": ("lr-k6-dut", "offloads of wan0", "tx-nocache-copy was off, is on"),
    "ethtool -L eth0 rx 2 tx 2": ("lr-k6-client", "channels of eth0", "Current hardware settings RX was 1, is 2"),
    "tc qdisc replace dev br-wan root pfifo limit 5": ("lr-k6-dut", "qdiscs", "br-wan root.kind was noqueue, is pfifo"),
    "ip link set br-lan type bridge mcast_snooping 0": ("lr-k6-dut", "links", "mcast_snooping was 1, is 0"),
}


def reads(changed: dict[str, str] | None = None):
    outputs = {**CAPTURE["outputs"], **(changed or {})}
    return lambda ns, argv: outputs.get(f"{ns} {' '.join(argv)}", "")


def test_the_lab_as_kept_has_no_drift_and_every_read_was_captured():
    asked, answer = [], reads()
    kept = snapshot.take(CAPTURE["namespaces"], lambda ns, argv: asked.append(f"{ns} {' '.join(argv)}") or answer(ns, argv))
    assert set(asked) == set(CAPTURE["outputs"]) and {"tap-lan", "br-wan", "lan0"} <= set(kept["lr-k6-dut"]["links"])
    assert snapshot.drift(snapshot.take(CAPTURE["namespaces"], reads()), snapshot.take(CAPTURE["namespaces"], reads())) == []


@pytest.mark.parametrize("use", CAPTURE["uses"], ids=lambda use: use["use"])
def test_what_linerate_and_a_capture_change_is_not_drift(use):
    assert use["outputs"], "the capture recorded no read that changed: nothing is tested"
    kept = snapshot.take(CAPTURE["namespaces"], reads(), workspaces=WORKSPACES)
    assert snapshot.drift(kept, snapshot.take(CAPTURE["namespaces"], reads(use["outputs"]), workspaces=WORKSPACES)) == []


def test_a_capture_is_allowed_in_a_generators_namespace_only():
    """A link's promiscuity count is compared outside the generators' namespaces (a macvlan on a DUT's link, even
    one moved to another namespace, leaves that as its only trace); there a capture is the operator's."""
    [use] = [use for use in CAPTURE["uses"] if "tcpdump" in use["use"]]
    kept = snapshot.take(CAPTURE["namespaces"], reads())
    [problem] = snapshot.drift(kept, snapshot.take(CAPTURE["namespaces"], reads(use["outputs"])))
    assert problem.startswith("lr-k6-client's links changed since the lab was kept (eth0.promiscuity was 0, is 1"), \
        problem


def test_the_changes_linerate_makes_itself_are_counters_and_states_it_leaves_out():
    """The uses' reads differ only in what snapshot.EXCLUDED and STATE_FLAGS leave out: compared whole, they
    would differ (so the test above can fail)."""
    use = CAPTURE["uses"][0]
    key = next(iter(use["outputs"]))
    before, after = json.loads(CAPTURE["outputs"][key]), json.loads(use["outputs"][key])
    assert before != after
    assert [snapshot._settings(link) for link in before] == [snapshot._settings(link) for link in after]


@pytest.mark.parametrize("change", CAPTURE["changes"], ids=lambda change: change["change"].split(" ", 4)[-1])
def test_an_operators_change_is_named_with_the_setting(change):
    command = change["change"].split(" ", 4)[-1]
    ns, what, phrase = EXPECTED[command]
    kept = snapshot.take(CAPTURE["namespaces"], reads())
    problems = snapshot.drift(kept, snapshot.take(CAPTURE["namespaces"], reads(change["outputs"])))
    named = [p for p in problems if p.startswith(f"{ns}'s {what} changed since the lab was kept")]
    assert named and phrase in named[0], problems


def test_every_change_of_the_capture_is_labelled():
    assert {change["change"].split(" ", 4)[-1] for change in CAPTURE["changes"]} == set(EXPECTED)


def test_a_snapshot_is_kept_in_the_record_and_a_malformed_one_refused():
    kept = snapshot.take(CAPTURE["namespaces"], reads())
    record = LabRecord("k6", snapshot=kept)
    text = record.to_json()
    assert LabRecord.from_json(text).snapshot == kept
    assert len(text.encode()) * 6 < MAX_RECORD_BYTES  # a 16-pair lab has ~6x as many namespaces per side
    for bad in ([], {"lr-k6-dut": []}, {"lr-k6-dut": "links"}):
        with pytest.raises(RecordError, match="snapshot"):
            LabRecord.from_json(json.dumps({**json.loads(text), "snapshot": bad}))


def test_a_read_that_is_not_json_or_that_failed_is_compared_whole():
    kept = snapshot.take(["ns"], lambda ns, argv: "garbled" if argv[0] == "tc" else "")
    now = snapshot.take(["ns"], lambda ns, argv: "other" if argv[0] == "tc" else "")
    assert snapshot.drift(kept, now) == ["ns's qdiscs changed since the lab was kept (the whole read was garbled, "
                                         "is other)"]


# --- a kept VM lab's guest and the host's side (tests/data/lab/kept_vm_guest_and_host_snapshot.json) -------------

VM = json.loads((Path(__file__).parent.parent / "data" / "lab" / "kept_vm_guest_and_host_snapshot.json").read_text())
# each change, labelled by hand from ethtool(8), sysctl(8), tc-fq_codel(8), proc(5): the read that must show it and a
# phrase it must give
GUEST_EXPECTED = {
    "ethtool -K lan0 gro off": ("offloads of lan0", "generic-receive-offload was on, is off"),
    "sysctl -w net.core.dev_weight=2": ("net sysctls", "net.core.dev_weight was 64, is 2"),
    "tc qdisc replace dev wan0 root fq_codel limit 4 quantum 300": ("qdiscs", "wan0 root.options.limit was 10240, is 4"),
    "sh -c sh -c 'while :; do :; done' </dev/null >/dev/null 2>&1 & echo $! > /tmp/lrt-loop.pid":
        ("processes", "sh -c while :; do :; done"),
    "ethtool -G wan0 rx 128 tx 128": ("rings of wan0", "Current hardware settings RX was 256, is 128"),
    "sh -c echo 0 > /sys/devices/system/cpu/cpu1/online": ("online CPUs", "was 0-1, is 0"),
    "sh -c cd /sys/devices/system/clocksource/clocksource0 && cat current_clocksource > /tmp/lrt-clock && echo "
    "acpi_pm > current_clocksource": ("clocksource", "was hpet, is acpi_pm"),
    "sh -c mount -t tracefs nodev /sys/kernel/tracing && echo function > /sys/kernel/tracing/current_tracer && umount "
    "/sys/kernel/tracing": ("kernel tracing", "current_tracer was nop, is function"),
}
HOST_EXPECTED = {
    "renice -n 19 -p SERVER": ("processes", "nice 0", "nice 19"),
    "sysctl -q -w net.core.netdev_max_backlog=2": ("net settings", "net.core.netdev_max_backlog was 1000, is 2"),
    "sysctl -q -w net.ipv4.tcp_mem=DOUBLED": ("net settings", "net.ipv4.tcp_mem was"),
    'sh -c echo 1073741824 > "$0" SERVERS_MEMORY_CGROUP': ("processes", "memory.soft_limit_in_bytes of /", "1073741824"),
    "prlimit --pid SERVER --nofile=6:": ("processes", "iperf3 in lr-k7-server.limits.Max open files was", "is 6 "),
    "kill -STOP SERVER": ("processes", "iperf3 in lr-k7-server.threads was", "stopped"),
    "sh -c echo 19 > /proc/SERVER/autogroup": ("processes", "iperf3 in lr-k7-server.autogroup was nice 0, is nice 19"),
    "sh -c echo 700 > /sys/module/tcp_cubic/parameters/beta": ("module parameters", "tcp_cubic.beta was 717, is 700"),
    "sysctl -q -w kernel.sched_autogroup_enabled=0": ("scheduler settings",
                                                      "kernel.sched_autogroup_enabled was 1, is 0"),
}


def guest_of(changed: dict[str, str] | None = None) -> dict:
    captured = {**VM["guest"], **(changed or {})}  # by each read's words joined with spaces
    answers = {tuple(argv): captured[" ".join(argv)] for argv in snapshot.guest_reads(VM["ports"], True)}
    return {"the guest": snapshot.guest(VM["ports"], answers, with_processes=True)}


def host_of(capture: dict) -> dict:
    files, dirs = {**VM["host"]["files"], **capture["files"]}, {**VM["host"]["dirs"], **capture["dirs"]}
    writable = {**VM["host"]["writable"], **capture["writable"]}

    def read_file(path):
        if path not in files:
            raise FileNotFoundError(path)
        return files[path]

    def list_dir(path):
        if path not in dirs:
            raise FileNotFoundError(path)
        return dirs[path]

    return {"the host": {"processes": snapshot.processes(capture["own"], read_file, list_dir),
                         "net settings": snapshot.host_settings(read_file, list_dir, set(VM["host"]["per_namespace"])),
                         "module parameters": snapshot.module_parameters(read_file, list_dir,
                                                                         lambda path: writable[path]),
                         "scheduler settings": snapshot.scheduler_settings(read_file, list_dir)}}


def test_the_built_in_guest_runs_its_agent_alone_and_its_kept_reads_have_no_drift():
    kept = guest_of()
    assert kept["the guest"]["processes"] == ["/etc/linerate/agent /dev/vport2p1"]  # the read's ps, sh, dash left out
    assert len(kept["the guest"]["net sysctls"]) > 500 and "net.netfilter.nf_conntrack_count" not in \
        kept["the guest"]["net sysctls"]
    assert snapshot.drift(kept, guest_of()) == [] and snapshot.drift(host_of(VM["host"]), host_of(VM["host"])) == []


@pytest.mark.parametrize("use", VM["uses"], ids=lambda use: use["use"])
def test_linerates_own_trials_leave_the_guest_and_the_host_as_kept(use):
    """A trial that asks for a congestion control restarts the lab's iperf3 server (a new pid, placed alike)."""
    iperf3 = next(name for name in VM["host"]["own"] if name.startswith("iperf3"))
    assert use["host"]["own"][iperf3] != VM["host"]["own"][iperf3]  # compared by what it is, not by its pid
    assert snapshot.drift(guest_of(), guest_of(use["guest"])) == []
    assert snapshot.drift(host_of(VM["host"]), host_of(use["host"])) == []


@pytest.mark.parametrize("change", VM["guest_changes"], ids=lambda change: change["change"][:40])
def test_an_operators_change_in_the_guest_is_named(change):
    what, phrase = GUEST_EXPECTED[change["change"]]
    problems = snapshot.drift(guest_of(), guest_of(change["guest"]))
    named = [p for p in problems if p.startswith(f"the guest's {what} changed since the lab was kept")]
    assert len(problems) == 1 and named and phrase in named[0], problems


@pytest.mark.parametrize("change", VM["host_changes"], ids=lambda change: change["change"])
def test_an_operators_change_to_the_labs_processes_or_the_hosts_settings_is_named(change):
    what, *phrases = HOST_EXPECTED[change["change"]]
    problems = snapshot.drift(host_of(VM["host"]), host_of(change["host"]))
    assert len(problems) == 1 and problems[0].startswith(f"the host's {what} changed since the lab was kept"), problems
    assert all(phrase in problems[0] for phrase in phrases), problems


def test_every_change_of_the_vm_capture_is_labelled():
    assert {c["change"] for c in VM["guest_changes"]} == set(GUEST_EXPECTED)
    assert {c["change"] for c in VM["host_changes"]} == set(HOST_EXPECTED)


def test_what_may_come_and_go_on_the_host_is_not_compared():
    """A module loaded since (nf_conntrack adds its keys), a server `lab stop-server` stopped and a host read an
    older linerate took are left out; a process of the lab that was not there then, and any setting both hold
    that changed, are still compared."""
    kept = host_of(VM["host"])
    kept["the host"]["net.core settings"] = {"net.core.netdev_max_backlog": "1000"}  # an older version's read
    now = json.loads(json.dumps(host_of(VM["host"])))
    loaded = {key: value for key, value in now["the host"]["net settings"].items() if "conntrack" in key}
    assert loaded, "the capture had nf_conntrack loaded: nothing is tested"
    for key in loaded:
        del kept["the host"]["net settings"][key]
    iperf3 = next(name for name in now["the host"]["processes"] if name.startswith("iperf3"))
    del now["the host"]["processes"][iperf3]
    assert snapshot.drift(*snapshot.comparable(kept, now)) == []
    assert len(snapshot.drift(kept, now)) == 3  # compared whole: each of the three would differ
    now["the host"]["processes"]["iperf3 in lr-k7-client"] = now["the host"]["processes"]["qemu-system-x86 in lr-k7-dut"]
    now["the host"]["net settings"]["net.ipv4.udp_mem"] = "1 2 3"
    problems = snapshot.drift(*snapshot.comparable(kept, now))
    assert len(problems) == 2 and problems[0].startswith(
        "the host's net settings changed since the lab was kept (net.ipv4.udp_mem was ") and problems[1].startswith(
        "the host's processes changed since the lab was kept (iperf3 in lr-k7-client was absent, is "), problems


def test_an_ebpf_program_on_a_link_is_named_with_its_hook_and_a_read_an_older_version_lacked_is_not_compared():
    """The eBPF read (lab/bpf_hooks.py, its JSON as tests/privileged/test_lab_bpf_hooks.py shows it on this
    kernel): a program attached since the lab was kept is named with its hook; a kept snapshot an older linerate
    took, without that read, is compared on the rest."""
    hooks = {"flow dissector": [], "sk_lookup": [], "tcx ingress of wan0": [], "tcx egress of wan0": []}
    asked = []
    kept = snapshot.take(CAPTURE["namespaces"], reads(), lambda ns, links: asked.append((ns, links)) or hooks)
    assert ("lr-k6-dut", sorted(kept["lr-k6-dut"]["links"])) in asked  # each namespace, with all of its links
    attached = {**hooks, "tcx ingress of wan0": ["lrt_pass (sched_cls, tag 3b185187f1855c4c)"]}
    now = snapshot.take(CAPTURE["namespaces"], reads(), lambda ns, links: attached if ns == "lr-k6-dut" else hooks)
    assert snapshot.drift(*snapshot.comparable(kept, now)) == [
        "lr-k6-dut's eBPF programs changed since the lab was kept (tcx ingress of wan0 was [], is "
        '["lrt_pass (sched_cls, tag 3b185187f1855c4c)"])']
    older = json.loads(json.dumps(kept))
    for ns in older:
        del older[ns]["eBPF programs"]
    assert snapshot.drift(*snapshot.comparable(older, now)) == []
    assert snapshot.drift(older, now) != []  # compared whole, the read one side lacks would differ


# `tc -j filter show dev v0` after `tc filter add dev v0 parent 1: protocol ip prio 1 u32 match ip dst 198.19.0.0/16
# flowid 1:10` on an htb root (iproute2 6.1.0, Debian 12, this project's CI-kind machine)
U32_FILTER = ('[{"parent":"1:","protocol":"ip","pref":1,"kind":"u32","chain":0},{"parent":"1:","protocol":"ip","pref":1,'
              '"kind":"u32","chain":0,"options":{"fh":"800:","ht_divisor":1}},{"parent":"1:","protocol":"ip","pref":1,'
              '"kind":"u32","chain":0,"options":{"fh":"800::800","order":2048,"key_ht":"800","bkt":"0","flowid":"1:10",'
              '"not_in_hw":true,"match":{"value":"c6130000","mask":"ffff0000","offmask":"","off":16}}}]')


def test_a_filter_on_a_links_qdisc_is_named_with_the_link():
    asked = []
    kept = snapshot.take(CAPTURE["namespaces"], lambda ns, argv: asked.append((ns, argv)) or reads()(ns, argv))
    assert ("lr-k6-dut", [*snapshot.FILTERS, "tap-lan"]) in asked  # every link's root qdisc's filters are read
    key = f"lr-k6-dut {' '.join([*snapshot.FILTERS, 'tap-lan'])}"
    now = snapshot.take(CAPTURE["namespaces"], reads({key: U32_FILTER}))
    [problem] = snapshot.drift(kept, now)
    assert problem.startswith("lr-k6-dut's filters of tap-lan changed since the lab was kept (root was "), problem


def test_a_lab_kept_by_the_version_before_is_compared_on_what_both_read():
    """A record's snapshot taken before this version read a link's promiscuity, the legacy xtables, the filters
    and a guest's online CPUs: those are compared from the next lab kept, never refused as changed."""
    now = snapshot.take(CAPTURE["namespaces"], reads(), workspaces=WORKSPACES)
    older = json.loads(json.dumps(now))
    for held in older.values():
        for what in [what for what in held if what.startswith(("legacy ", "filters of "))]:
            del held[what]
        for link in held["links"].values():
            link.pop("promiscuity", None)
            link.pop("allmulti", None)
    assert snapshot.drift(older, now) != []  # compared whole, they differ
    assert snapshot.drift(*snapshot.comparable(older, now)) == []
    guest = guest_of()
    older_guest = json.loads(json.dumps(guest))
    del older_guest["the guest"]["online CPUs"]
    assert snapshot.drift(*snapshot.comparable(older_guest, guest)) == []
    promiscuous = json.loads(json.dumps(now))
    was = now["lr-k6-dut"]["links"]["lan0"]["promiscuity"]  # a bridge port's: 1
    promiscuous["lr-k6-dut"]["links"]["lan0"]["promiscuity"] = was + 1  # kept by this version on both sides: compared
    assert snapshot.drift(*snapshot.comparable(now, promiscuous)) == [
        f"lr-k6-dut's links changed since the lab was kept (lan0.promiscuity was {was}, is {was + 1})"]
