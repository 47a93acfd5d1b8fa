"""The eBPF programs lab/bpf_hooks.py lists, on this kernel: a program attached to a link's tcx hook (in a namespace
of the test's own) or to a cgroup (a cgroup v2 directory of the test's own, and the child that inherits it) is
listed by name, type and tag, and one on a netfilter hook (through a BPF link) with its family, hook and priority;
none is listed where none is attached; detached, it is gone from the list."""

import secrets
import subprocess
import sys
from pathlib import Path

import pytest

from linerate.lab.bpf_hooks import host_flow_dissector, in_namespace, netfilter_programs, of_cgroups, of_processes
from linerate.lab.netns import read_in
from linerate.lab.placement import cgroup_hierarchies
from tests.privileged import bpf_programs

HELPER = str(Path(__file__).parent / "bpf_programs.py")


def in_ns(ns: str, *argv: str) -> str:
    return subprocess.run(["ip", "netns", "exec", ns, *argv], check=True, capture_output=True, text=True).stdout


@pytest.fixture
def namespace():
    ns = f"lrt-bpf-{secrets.token_hex(3)}"
    subprocess.run(["ip", "netns", "add", ns], check=True)
    try:
        subprocess.run(["ip", "-n", ns, "link", "add", "name", "v0", "type", "veth", "peer", "name", "v1"], check=True)
        yield ns
    finally:
        subprocess.run(["ip", "netns", "delete", ns], check=True)


def listed(ns: str) -> dict:
    return read_in(ns, lambda: in_namespace(["v0", "v1"]))


def test_a_program_on_a_links_tcx_hook_is_listed_until_it_is_detached(namespace):
    assert listed(namespace) == {"flow dissector": [], "sk_lookup": [], "tcx egress of v0": [],
                                 "tcx egress of v1": [], "tcx ingress of v0": [], "tcx ingress of v1": []}
    program = in_ns(namespace, sys.executable, HELPER, "attach-tcx", "v0", "ingress").strip()
    attached = listed(namespace)
    [described] = attached.pop("tcx ingress of v0")
    assert described.startswith("lrt_pass (sched_cls, tag ") and described.endswith(")"), described
    assert all(programs == [] for programs in attached.values()), attached  # the other hooks hold none
    in_ns(namespace, sys.executable, HELPER, "detach-tcx", "v0", "ingress", program)
    assert listed(namespace)["tcx ingress of v0"] == []
    assert read_in("lrt-bpf-none", lambda: in_namespace(["v0"])).startswith("unreadable: ")  # no such namespace


def test_a_namespaces_flow_dissector_is_listed_for_it_and_not_for_the_host(namespace):
    host = host_flow_dissector()
    program = in_ns(namespace, sys.executable, HELPER, "attach-flow-dissector").strip()
    try:
        [described] = listed(namespace)["flow dissector"]
        assert described.startswith("lrt_dissect (flow_dissector, tag "), described
        assert host_flow_dissector() == host  # the host's namespace holds its own (none here)
    finally:
        in_ns(namespace, sys.executable, HELPER, "detach-flow-dissector", program)
    assert listed(namespace)["flow dissector"] == []


def test_a_program_on_a_cgroup_is_listed_for_it_and_for_the_cgroups_below_it():
    mounts = Path("/proc/self/mounts").read_text()
    [(_, mount, path)] = [found for found in cgroup_hierarchies(Path("/proc/self/cgroup").read_text(), mounts)
                          if not found[0]]
    parent = Path(f"{mount}{path.rstrip('/')}") / f"lrt-bpf-{secrets.token_hex(3)}"
    child = parent / "below"
    child.mkdir(parents=True)
    try:
        assert of_cgroups([str(child)])[f"inet egress of {child}"] == []
        bpf_programs.attach_to_cgroup(str(parent), "inet egress", "lrt_allow")
        found = of_cgroups([str(child), str(parent)])
        for where in (child, parent):
            [described] = found.pop(f"inet egress of {where}")
            assert described.startswith("lrt_allow (cgroup_skb, tag "), described
        assert all(programs in ([], "no such hook here") for programs in found.values()), found
        sleeper = subprocess.Popen(["sleep", "30"])
        try:
            (child / "cgroup.procs").write_text(f"{sleeper.pid}\n")
            assert of_processes([sleeper.pid])[f"inet egress of {child}"] == [described]
        finally:
            sleeper.kill()
            sleeper.wait()
    finally:
        child.rmdir()  # a cgroup's programs go with it
        parent.rmdir()


def test_a_program_on_a_netfilter_hook_is_listed_while_its_link_lasts(namespace):
    before = netfilter_programs()
    holder = subprocess.Popen(["ip", "netns", "exec", namespace, sys.executable, HELPER, "hold-netfilter", "-57"],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "ready"
        [added] = set(netfilter_programs()) - set(before)
        assert added.startswith("ipv4 forward priority -57: lrt_nf_accept (netfilter, tag "), added
    finally:
        holder.kill()
        holder.wait()
    assert netfilter_programs() == before  # the link went with the process that held it
