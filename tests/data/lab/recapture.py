"""Recapture the two kept-lab fixtures of this folder from real labs (root; run from the repository root:
`.venv/bin/python tests/data/lab/recapture.py`). It makes each lab with the CLI, records every read a kept
lab's read-back makes (lab/conform.py, lab/snapshot.py) with its real answer, writes the fixture and removes the
lab."""

from __future__ import annotations

import datetime
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).parent
from linerate.traffic.trafgen import NOBODY_MAC  # noqa: E402  (the pooled lab's one static entry)
LINERATE = [sys.executable, "-m", "linerate"]
TOOLS = ("Debian 12: iproute2 6.1.0, ethtool 6.1, nftables 1.0.6, procps 4.0.2")


# (namespace role, a change an operator makes, its undo): each must be named by a kept lab's read-back
NAMESPACE_CHANGES = [
    ("dut", ["ip", "route", "add", "198.19.0.2/32", "dev", "wan0", "mtu", "lock", "576"],
     ["ip", "route", "del", "198.19.0.2/32", "dev", "wan0"]),
    ("dut", ["ip", "route", "add", "local", "198.19.0.9", "dev", "wan0", "proto", "kernel", "table", "local"],
     ["ip", "route", "del", "local", "198.19.0.9", "dev", "wan0", "table", "local"]),
    ("client", ["ip", "-6", "route", "change", "default", "via", "2001:2:0:1::1", "mtu", "1280"],
     ["ip", "-6", "route", "change", "default", "via", "2001:2:0:1::1", "proto", "static"]),
    ("server", ["ip", "addr", "add", "198.19.0.3/24", "dev", "eth0"], ["ip", "addr", "del", "198.19.0.3/24", "dev", "eth0"]),
    ("dut", ["ip", "rule", "add", "to", "198.19.0.2", "prohibit"], ["ip", "rule", "del", "to", "198.19.0.2", "prohibit"]),
    ("dut", ["ip", "neigh", "replace", "198.19.0.2", "lladdr", "02:00:00:00:00:01", "nud", "permanent", "dev", "wan0"],
     ["ip", "neigh", "del", "198.19.0.2", "dev", "wan0"]),
    ("client", ["ip", "addr", "add", "198.19.0.2/32", "dev", "lo", "scope", "host"],
     ["ip", "addr", "del", "198.19.0.2/32", "dev", "lo"]),
    ("client", ["tc", "qdisc", "replace", "dev", "eth0", "root", "tbf", "rate", "50mbit", "burst", "32k", "latency", "50ms"],
     ["tc", "qdisc", "del", "dev", "eth0", "root"]),
    ("client", ["ip", "link", "set", "eth0", "gso_max_size", "3000", "gso_max_segs", "2"],
     ["ip", "link", "set", "eth0", "gso_max_size", "65536", "gso_max_segs", "65535"]),
    ("client", ["sysctl", "-q", "-w", "net.ipv6.conf.eth0.mtu=1280"], None),
    ("dut", ["sh", "-c", "echo 20000 > /sys/class/net/lan0/gro_flush_timeout"],
     ["sh", "-c", "echo 0 > /sys/class/net/lan0/gro_flush_timeout"]),
    ("dut", ["ip", "neigh", "replace", "198.19.0.2", "lladdr", "02:00:00:00:00:99", "dev", "wan0", "nud", "noarp"],
     ["ip", "neigh", "del", "198.19.0.2", "dev", "wan0"]),
    ("client", ["sh", "-c", "ip -n lr-k3-dut link set wan0 mtu 1300 && ping -c1 -W1 -M do -s 1472 198.19.0.2; "
                "ip -n lr-k3-dut link set wan0 mtu 1500"],  # a path MTU learnt, the MTU put back
     ["ip", "route", "flush", "cache"]),
    ("dut", ["tc", "qdisc", "change", "dev", "wan0", "parent", "1:1", "handle", "2:", "tbf", "rate", "100000000bit",
             "burst", "50000", "latency", "200ms", "overhead", "0", "mpu", "84"],
     ["tc", "qdisc", "change", "dev", "wan0", "parent", "1:1", "handle", "2:", "tbf", "rate", "100000000bit",
      "burst", "50000", "latency", "200ms", "overhead", "24", "mpu", "84"]),
    ("client", ["ip", "neigh", "replace", "198.18.0.1", "lladdr", "02:00:00:00:00:01", "dev", "eth0", "nud",
                "reachable", "extern_learn"], ["ip", "neigh", "del", "198.18.0.1", "dev", "eth0"]),
    ("dut", ["sh", "-c", "ethtool -L lan0 rx 2 tx 2 && echo 1 > /sys/class/net/lan0/queues/rx-1/rps_cpus"],
     ["ethtool", "-L", "lan0", "rx", "1", "tx", "1"]),
    ("client", ["sysctl", "-q", "-w", "net.ipv4.tcp_congestion_control=reno"], None),  # None: write back the value read
    ("dut", ["sysctl", "-q", "-w", "net.ipv4.conf.wan0.rp_filter=1"], None),
    ("server", ["sysctl", "-q", "-w", "net.ipv4.tcp_rmem=4096 8192 16384"], None),
]
POOL_CHANGES = [
    ("dut", ["ip", "link", "set", "wan0", "gso_max_size", "1500"], ["ip", "link", "set", "wan0", "gso_max_size", "65536"]),
    ("lansw", ["bridge", "link", "set", "dev", "p2", "learning", "off"], ["bridge", "link", "set", "dev", "p2", "learning", "on"]),
    ("wansw", ["ip", "link", "set", "br0", "type", "bridge", "ageing_time", "0"],
     ["ip", "link", "set", "br0", "type", "bridge", "ageing_time", "8640000"]),
    ("lansw", ["bridge", "fdb", "add", "02:00:00:00:00:09", "dev", "p1", "master", "static"],
     ["bridge", "fdb", "del", "02:00:00:00:00:09", "dev", "p1", "master"]),
    ("dut", ["ip", "link", "add", "lrx0", "type", "veth", "peer", "name", "lrx1"], ["ip", "link", "del", "lrx0"]),
    ("lansw", ["bridge", "fdb", "del", NOBODY_MAC, "dev", "uplink", "master"],
     ["bridge", "fdb", "add", NOBODY_MAC, "dev", "uplink", "master", "static"]),
    ("dut", ["ip", "xfrm", "policy", "add", "dir", "fwd", "src", "198.18.0.0/24", "dst", "198.19.0.0/24", "action",
             "block"], ["ip", "xfrm", "policy", "flush"]),
    ("wansw", ["bridge", "fdb", "replace", "02:00:00:00:00:0a", "dev", "p1", "master", "dynamic", "extern_learn"],
     ["bridge", "fdb", "del", "02:00:00:00:00:0a", "dev", "p1", "master"]),
]
GUEST_CHANGES = [
    (["ip", "link", "set", "lan0", "gso_max_size", "3000"], ["ip", "link", "set", "lan0", "gso_max_size", "65536"]),
    (["sh", "-c", "ip route add blackhole 198.0.0.0/8 table 100 && ip rule add from all lookup 100 pref 100"],
     ["sh", "-c", "ip rule del pref 100; ip route del blackhole 198.0.0.0/8 table 100"]),
    (["ip", "addr", "add", "198.19.0.2/32", "dev", "lo", "scope", "host"], ["ip", "addr", "del", "198.19.0.2/32", "dev", "lo"]),
    (["ip", "route", "add", "198.19.0.2/32", "dev", "wan0", "mtu", "lock", "576"], ["ip", "route", "del", "198.19.0.2/32"]),
    (["ip", "addr", "add", "198.18.0.77/24", "dev", "lan0"], ["ip", "addr", "del", "198.18.0.77/24", "dev", "lan0"]),
]


def lab(*argv: str) -> None:
    subprocess.run([*LINERATE, "lab", *argv], check=True, stdout=subprocess.DEVNULL)


def namespace_lab(name: str, made_with: dict, up: list[str], changes: list, fixture: str) -> None:
    """Make lab `name` with `lab up --name NAME *up` (its record: `made_with`), capture its read-back and each of
    `changes` (namespace role, argv, undo or None to write back a sysctl's value) into `fixture`."""
    from linerate.axes import lab_spec
    from linerate.exec.local import NetnsExecutor
    from linerate.lab.conform import plan_drift
    from linerate.lab.netns import (NETNS_DIR, canonical_qdiscs, canonical_ruleset, new_links, new_namespace_sysctls,
                                    new_veth_features)
    from linerate.topology import lab_plan

    lab("up", "--name", name, *up)
    try:
        outputs, sysctls, references, qdisc_references = {}, {}, {}, {}

        def read(ns, argv):
            outputs[f"{ns} {' '.join(argv)}"] = out = NetnsExecutor(ns).run(argv, timeout_s=15, check=False).stdout
            return out

        def sysctl(ns, key):
            sysctls[f"{ns} {key}"] = out = NetnsExecutor(ns).run(["sysctl", "-n", key], timeout_s=15).stdout.strip()
            return out

        def reference(values):
            references[json.dumps(values)] = out = new_namespace_sysctls(values)
            return out

        spec = lab_spec(name, made_with)
        namespaces = sorted(ns for ns in os.listdir(NETNS_DIR) if ns.startswith(f"lr-{name}-"))

        def qdiscs(mtu, argvs):
            qdisc_references[json.dumps([mtu, argvs])] = out = canonical_qdiscs(mtu, argvs)
            return out

        def drift():
            return plan_drift(lab_plan(spec), spec.netns("dut"), lambda ns: True, read, sysctl, lambda: namespaces,
                              new_veth_features, canonical_ruleset, reference, new_links, qdiscs)

        problems = drift()
        assert problems == [], problems
        clean = dict(outputs)
        changed = []
        for role, argv, undo in changes:
            ns = f"lr-{name}-{role}"
            if undo is None:
                key = argv[-1].split("=")[0]
                undo = ["sysctl", "-q", "-w", f"{key}={NetnsExecutor(ns).run(['sysctl', '-n', key]).stdout.strip()}"]
            subprocess.run(["ip", "netns", "exec", ns, *argv], check=True)
            try:
                outputs.clear()
                problems = drift()
                changed.append({"change": f"ip netns exec {ns} {' '.join(argv)}", "problems": problems,
                                "outputs": {key: out for key, out in outputs.items() if clean.get(key) != out}})
            finally:
                subprocess.run(["ip", "netns", "exec", ns, *undo], check=True)
        outputs.clear()
        assert drift() == []
        doc = {"source": f"captured on this project's CI-kind machine ({TOOLS}) from a lab made by `linerate lab up "
                         f"--name {name} {' '.join(up)}`: the stdout of each command "
                         "lab/conform.py runs, keyed by namespace and argv, and each sysctl it reads; new_veth: `ethtool "
                         "-k` of a veth made in a namespace of its own (lab/netns.py new_veth_features); new_sysctls: a "
                         "new namespace's `sysctl -a` with the plan's values set, keyed by those values "
                         "(new_namespace_sysctls); new_links: a new veth's, bridge's and bridge port's settings "
                         "(new_links); qdiscs: the plan's tc commands for a port run on a new veth, keyed by [MTU, argv] (canonical_qdiscs); namespaces: the lab's namespaces as listed; changes: an operator's "
                         "command run on the lab, the reads that then answered otherwise and what plan_drift said "
                         "(undone after each). Recaptured "
                         f"{datetime.date.today()} by tests/data/lab/recapture.py",
               "made_with": made_with, "outputs": outputs, "sysctls": sysctls, "new_veth": new_veth_features(),
               "new_sysctls": references, "new_links": new_links(),
               "qdiscs": qdisc_references, "namespaces": namespaces, "changes": changed}
        (HERE / fixture).write_text(json.dumps(doc, indent=1) + "\n")
    finally:
        lab("down", name)


def vm_lab() -> None:
    from linerate.lab.registry import Registry
    from linerate.testbed.base import lab_from_record
    from linerate.vm.plan import GUEST, guest_plan
    from linerate.lab.conform import prefetched_drift

    lab("up", "--name", "k4", "--dut", "vm", "--accel", "tcg", "--firewall", "stateful", "--offloads", "dut:tso=off")
    try:
        registry = Registry()
        record = registry.load("k4")
        testbed = lab_from_record(record, registry)
        answers = []

        def run_many(argvs):
            results = testbed.executor("dut").run_many(argvs, timeout_s=30)
            answers.extend({"argv": list(argv), "returncode": r.returncode, "stdout": r.stdout}
                           for argv, r in zip(argvs, results))
            return results

        problems = prefetched_drift(guest_plan(testbed.spec, rx_queues=1), GUEST, run_many)
        assert problems == [], problems
        clean = {tuple(a["argv"]): a["stdout"] for a in answers}
        changed = []
        for argv, undo in GUEST_CHANGES:
            testbed.executor("dut").run(argv, timeout_s=30)
            try:
                before = len(answers)
                problems = prefetched_drift(guest_plan(testbed.spec, rx_queues=1), GUEST, run_many)
                changed.append({"change": " ".join(argv), "problems": problems,
                                "outputs": [a for a in answers[before:] if clean.get(tuple(a["argv"])) != a["stdout"]]})
                del answers[before:]
            finally:
                testbed.executor("dut").run(undo, timeout_s=30)
        doc = {"source": "the built-in VM guest (Debian 12 cloud kernel, busybox userland, the host's iproute2/ethtool/"
                         "nftables) of `linerate lab up --dut vm --accel tcg --firewall stateful --offloads dut:tso=off`: "
                         "each read a kept lab's guest read-back makes, run through its agent on "
                         f"{datetime.date.today()} (tests/data/lab/recapture.py); the guest holds every knob of that plan",
               "params": record.params, "outputs": answers, "changes": changed}
        (HERE / "kept_vm_guest_stateful.json").write_text(json.dumps(doc, indent=1) + "\n")
    finally:
        lab("down", "k4")


# (namespace role, an operator's change, its undo) on a kept lab: each must be named by lab/snapshot.py
SNAPSHOT_CHANGES = [
    ("dut", ["ethtool", "-K", "tap-lan", "tx", "off"], ["ethtool", "-K", "tap-lan", "tx", "on"]),
    ("dut", ["ip", "link", "set", "wan0", "group", "5"], ["ip", "link", "set", "wan0", "group", "default"]),
    ("client", ["ip", "link", "set", "eth0", "alias", "mine"], ["ip", "link", "set", "eth0", "alias", ""]),
    ("dut", ["ip", "link", "set", "lan0", "promisc", "on"], ["ip", "link", "set", "lan0", "promisc", "off"]),
    ("dut", ["ip", "addrlabel", "add", "prefix", "2001:2::/48", "label", "99"],
     ["ip", "addrlabel", "del", "prefix", "2001:2::/48", "label", "99"]),
    ("dut", ["ip", "neigh", "add", "proxy", "198.19.0.77", "dev", "wan0"], ["ip", "neigh", "del", "proxy", "198.19.0.77",
                                                                        "dev", "wan0"]),
    ("dut", ["ethtool", "-K", "wan0", "tx-nocache-copy", "on"], ["ethtool", "-K", "wan0", "tx-nocache-copy", "off"]),
    ("client", ["ethtool", "-L", "eth0", "rx", "2", "tx", "2"], ["ethtool", "-L", "eth0", "rx", "1", "tx", "1"]),
    ("dut", ["tc", "qdisc", "replace", "dev", "br-wan", "root", "pfifo", "limit", "5"],
     ["tc", "qdisc", "del", "dev", "br-wan", "root"]),
    ("dut", ["ip", "link", "set", "br-lan", "type", "bridge", "mcast_snooping", "0"],
     ["ip", "link", "set", "br-lan", "type", "bridge", "mcast_snooping", "1"]),
]
# what linerate itself and an allowed operator do on a kept lab: after each, the snapshot must be as kept
SNAPSHOT_USES = [["trial", "--duration", "2"], ["trial", "--duration", "2", "--family", "6"],
                 ["rfc2544", "--frame-sizes", "1518", "--trial-duration", "1"]]


def snapshot_of_vm_lab() -> None:
    """The host side of a kept VM lab (its taps and bridges under a running qemu): every read lab/snapshot.py
    makes, as kept, after each of SNAPSHOT_USES (and with a capture running in the client's namespace), and
    after each of SNAPSHOT_CHANGES (undone after each)."""
    from linerate.exec.local import NetnsExecutor
    from linerate.lab.snapshot import drift, take

    lab("up", "--name", "k6", "--dut", "vm", "--accel", "tcg", "--link", "1g")
    namespaces = [f"lr-k6-{role}" for role in ("client", "dut", "server")]
    try:
        outputs: dict[str, str] = {}

        def read(ns, argv):
            done = NetnsExecutor(ns).run(argv, timeout_s=15, check=False)
            outputs[f"{ns} {' '.join(argv)}"] = out = done.stdout if done.returncode == 0 else ""
            return out

        workspaces = frozenset({"lr-k6-client", "lr-k6-server"})
        kept = take(namespaces, read, workspaces=workspaces)
        clean = dict(outputs)
        uses, changed = [], []
        for argv in SNAPSHOT_USES:
            subprocess.run([*LINERATE, *argv, "--lab", "k6", *(["--db", os.environ["LINERATE_STATE_DIR"] + "/r.db"]
                                                             if argv[0] == "rfc2544" else [])],
                           check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            outputs.clear()
            assert drift(kept, take(namespaces, read, workspaces=workspaces)) == [], argv
            uses.append({"use": f"linerate {' '.join(argv)} --lab k6",
                         "outputs": {key: out for key, out in outputs.items() if clean.get(key) != out}})
        capture = subprocess.Popen(["ip", "netns", "exec", "lr-k6-client", "tcpdump", "-i", "eth0", "-w", "/dev/null"],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            import time
            time.sleep(1)
            outputs.clear()
            assert drift(kept, take(namespaces, read, workspaces=workspaces)) == []
            uses.append({"use": "ip netns exec lr-k6-client tcpdump -i eth0 (running)",
                         "outputs": {key: out for key, out in outputs.items() if clean.get(key) != out}})
        finally:
            capture.terminate()
            capture.wait()
        for role, argv, undo in SNAPSHOT_CHANGES:
            ns = f"lr-k6-{role}"
            subprocess.run(["ip", "netns", "exec", ns, *argv], check=True, stdout=subprocess.DEVNULL)
            try:
                outputs.clear()
                problems = drift(kept, take(namespaces, read, workspaces=workspaces))
                changed.append({"change": f"ip netns exec {ns} {' '.join(argv)}", "problems": problems,
                                "outputs": {key: out for key, out in outputs.items() if clean.get(key) != out}})
            finally:
                subprocess.run(["ip", "netns", "exec", ns, *undo], check=True, stdout=subprocess.DEVNULL)
        outputs.clear()
        assert drift(kept, take(namespaces, read, workspaces=workspaces)) == []
        doc = {"source": f"captured on this project's CI-kind machine ({TOOLS}, qemu 7.2 under TCG) from the host side of "
                         "a lab made by `linerate lab up --name k6 --dut vm --accel tcg --link 1g`: the stdout of each "
                         "read lab/snapshot.py makes, keyed by namespace and argv (\"\" when it failed); uses: what "
                         "linerate's own commands and a capture left different; changes: an operator's command, the "
                         "reads that then answered otherwise and what snapshot.drift said (undone after each). "
                         f"Recaptured {datetime.date.today()} by tests/data/lab/recapture.py",
               "namespaces": namespaces, "outputs": clean, "uses": uses, "changes": changed}
        (HERE / "kept_vm_lab_snapshot.json").write_text(json.dumps(doc, indent=1) + "\n")
    finally:
        lab("down", "k6")


# in the built-in guest (through its agent): (change, undo); each must be named by lab/snapshot.py guest
GUEST_SNAPSHOT_CHANGES = [
    (["ethtool", "-K", "lan0", "gro", "off"], ["ethtool", "-K", "lan0", "gro", "on"]),
    (["sysctl", "-w", "net.core.dev_weight=2"], ["sysctl", "-w", "net.core.dev_weight=64"]),
    (["tc", "qdisc", "replace", "dev", "wan0", "root", "fq_codel", "limit", "4", "quantum", "300"],
     ["tc", "qdisc", "del", "dev", "wan0", "root"]),  # the kernel attaches its default qdisc again
    (["sh", "-c", "sh -c 'while :; do :; done' </dev/null >/dev/null 2>&1 & echo $! > /tmp/lrt-loop.pid"],
     ["sh", "-c", "kill $(cat /tmp/lrt-loop.pid) && rm /tmp/lrt-loop.pid"]),
    (["ethtool", "-G", "wan0", "rx", "128", "tx", "128"], ["ethtool", "-G", "wan0", "rx", "256", "tx", "256"]),
    (["sh", "-c", "echo 0 > /sys/devices/system/cpu/cpu1/online"], ["sh", "-c", "echo 1 > /sys/devices/system/cpu/cpu1/online"]),
    (["sh", "-c", "cd /sys/devices/system/clocksource/clocksource0 && cat current_clocksource > /tmp/lrt-clock && "
      "echo acpi_pm > current_clocksource"],
     ["sh", "-c", "cat /tmp/lrt-clock > /sys/devices/system/clocksource/clocksource0/current_clocksource"]),
    (["sh", "-c", "mount -t tracefs nodev /sys/kernel/tracing && echo function > /sys/kernel/tracing/current_tracer "
      "&& umount /sys/kernel/tracing"],  # set, then unmounted: it still runs
     ["sh", "-c", "mount -t tracefs nodev /sys/kernel/tracing && echo nop > /sys/kernel/tracing/current_tracer "
      "&& umount /sys/kernel/tracing"]),
]


def guest_and_host_of_vm_lab() -> None:
    """A kept VM lab's guest (lab/snapshot.py guest: every read of guest_reads, answered by its agent) and the
    host's side of it (snapshot.processes and host_settings: every /proc file they read), as kept, after
    linerate's own commands, and after each operator change (undone after each)."""
    from linerate.lab import snapshot
    from linerate.lab.netns import per_namespace_net_keys
    from linerate.lab.registry import Registry
    from linerate.testbed.base import lab_from_record

    lab("up", "--name", "k7", "--dut", "vm", "--accel", "tcg", "--link", "1g", "--vcpus", "2")
    try:
        registry = Registry()

        def guest_run_many(many):  # the agent answers one client at a time: closed before a command runs
            testbed = lab_from_record(registry.load("k7"), registry)
            try:
                return testbed.executor("dut").run_many(many, timeout_s=30)
            finally:
                testbed.executor("dut").close()

        ports, argvs = ["lan0", "wan0"], snapshot.guest_reads(["lan0", "wan0"], True)

        def guest_answers() -> dict[str, str]:
            results = guest_run_many(argvs)
            return {" ".join(argv): r.stdout if r.returncode == 0 or argv == snapshot.GUEST_SYSCTLS else ""
                    for argv, r in zip(argvs, results)}

        files: dict[str, str] = {}
        dirs: dict[str, list[str]] = {}

        def read_file(path):
            files[path] = text = Path(path).read_text()
            return text

        def list_dir(path):
            dirs[path] = names = sorted(os.listdir(path))
            return names

        def own_now() -> dict[str, int]:  # as the lab's snapshot names them (a restarted server: a new pid)
            return lab_from_record(registry.load("k7"), registry).own_processes()

        modes: dict[str, bool] = {}

        def writable(path):
            modes[path] = answer = bool(os.stat(path).st_mode & 0o222)
            return answer

        def host() -> dict:
            files.clear()
            dirs.clear()
            modes.clear()
            own = own_now()
            snapshot.processes(own, read_file, list_dir)
            snapshot.host_settings(read_file, list_dir, per_namespace)
            snapshot.module_parameters(read_file, list_dir, writable)
            snapshot.scheduler_settings(read_file, list_dir)
            return {"own": own, "files": dict(files), "dirs": dict(dirs), "writable": dict(modes)}

        per_namespace = per_namespace_net_keys()

        clean_guest, clean_host = guest_answers(), host()
        uses = []
        for argv in (["trial", "--duration", "2", "--congestion", "reno"], ["trial", "--duration", "2", "--direction",
                                                                            "reverse"]):
            subprocess.run([*LINERATE, *argv, "--lab", "k7"], check=True, capture_output=True)
            answers = guest_answers()
            uses.append({"use": f"linerate {' '.join(argv)} --lab k7",
                         "guest": {k: v for k, v in answers.items() if clean_guest.get(k) != v}, "host": host()})
        guest_changes = []
        for argv, undo in GUEST_SNAPSHOT_CHANGES:
            guest_run_many([argv])
            try:
                answers = guest_answers()
                guest_changes.append({"change": " ".join(argv),
                                      "guest": {k: v for k, v in answers.items() if clean_guest.get(k) != v}})
            finally:
                guest_run_many([undo])
        host_changes = []
        server = next(pid for name, pid in own_now().items() if name.startswith("iperf3"))
        backlog = Path("/proc/sys/net/core/netdev_max_backlog").read_text().strip()
        tcp_mem = Path("/proc/sys/net/ipv4/tcp_mem").read_text().split()
        memory = next(line.split(":", 2)[2] for line in Path(f"/proc/{server}/cgroup").read_text().splitlines()
                      if line.split(":")[1] == "memory")
        soft = Path(f"/sys/fs/cgroup/memory{memory.rstrip('/')}/memory.soft_limit_in_bytes")
        soft_was = soft.read_text().strip()
        nofile = next(line.split()[3] for line in Path(f"/proc/{server}/limits").read_text().splitlines()
                      if line.startswith("Max open files"))
        beta = Path("/sys/module/tcp_cubic/parameters/beta").read_text().strip()
        for change, undo in ((["renice", "-n", "19", "-p", str(server)], ["renice", "-n", "0", "-p", str(server)]),
                             (["sysctl", "-q", "-w", "net.core.netdev_max_backlog=2"],
                              ["sysctl", "-q", "-w", f"net.core.netdev_max_backlog={backlog}"]),
                             (["sysctl", "-q", "-w", f"net.ipv4.tcp_mem={' '.join(str(2 * int(v)) for v in tcp_mem)}"],
                              ["sysctl", "-q", "-w", f"net.ipv4.tcp_mem={' '.join(tcp_mem)}"]),
                             (["sh", "-c", 'echo 1073741824 > "$0"', str(soft)], ["sh", "-c", 'echo "$1" > "$0"', str(soft), soft_was]),
                             (["prlimit", "--pid", str(server), "--nofile=6:"], ["prlimit", "--pid", str(server), f"--nofile={nofile}:"]),
                             (["kill", "-STOP", str(server)], ["kill", "-CONT", str(server)]),
                             (["sh", "-c", f"echo 19 > /proc/{server}/autogroup"], ["sh", "-c", f"echo 0 > /proc/{server}/autogroup"]),
                             (["sysctl", "-q", "-w", "kernel.sched_autogroup_enabled=0"],
                              ["sysctl", "-q", "-w", "kernel.sched_autogroup_enabled=1"]),
                             (["sh", "-c", "echo 700 > /sys/module/tcp_cubic/parameters/beta"],
                              ["sh", "-c", f"echo {beta} > /sys/module/tcp_cubic/parameters/beta"])):
            subprocess.run(change, check=True, capture_output=True)
            try:
                host_changes.append({"change": " ".join(change).replace(str(server), "SERVER").replace(str(soft), "SERVERS_MEMORY_CGROUP")
                                                   .replace(" ".join(str(2 * int(v)) for v in tcp_mem), "DOUBLED"),
                                     "host": host()})
            finally:
                subprocess.run(undo, check=True, capture_output=True)
        doc = {"source": "captured on this project's CI-kind machine (Debian 12 host, cgroup v1; the built-in guest: "
                         "Debian 12 cloud kernel, busybox userland, the host's iproute2/ethtool) from a lab made by "
                         "`linerate lab up --name k7 --dut vm --accel tcg --link 1g --vcpus 2`: guest: the stdout of each read "
                         "of lab/snapshot.py guest_reads through the guest's agent; host: each /proc file and "
                         "directory snapshot.processes, host_settings, module_parameters and scheduler_settings read (own: the lab's processes they were "
                         "given; per_namespace: the net keys a namespace made just now may write); uses: what linerate's own trials left different; changes: an operator's command "
                         "and what then read otherwise (undone after each). Recaptured "
                         f"{datetime.date.today()} by tests/data/lab/recapture.py",
               "ports": ports, "guest": clean_guest, "host": {**clean_host, "per_namespace": sorted(per_namespace or [])}, "uses": uses, "guest_changes": guest_changes, "host_changes": host_changes}
        (HERE / "kept_vm_guest_and_host_snapshot.json").write_text(json.dumps(doc, indent=1) + "\n")
    finally:
        lab("down", "k7")


if __name__ == "__main__":
    scratch = tempfile.mkdtemp(prefix="linerate-recapture-")
    os.environ.setdefault("LINERATE_STATE_DIR", scratch + "/state")
    which = sys.argv[1:] or ["namespace", "pool", "vm", "snapshot"]
    try:
        if "namespace" in which:
            namespace_lab("k3", {"firewall": "stateful", "link_rate": "100m", "mtu": 1500, "offloads": "dut:tso=off"},
                          ["--firewall", "stateful", "--link", "100m", "--offloads", "dut:tso=off"], NAMESPACE_CHANGES,
                          "kept_lab_stateful_100m.json")
        if "pool" in which:
            namespace_lab("k5", {"firewall": "none", "pairs": 2}, ["--pairs", "2"], POOL_CHANGES, "kept_lab_pool2.json")
        if "vm" in which:
            vm_lab()
        if "snapshot" in which:
            snapshot_of_vm_lab()
        if "snapshot" in which or "guest-and-host" in which:
            guest_and_host_of_vm_lab()
    finally:
        shutil.rmtree(scratch)
