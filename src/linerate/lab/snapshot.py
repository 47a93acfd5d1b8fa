"""A kept lab's namespaces as `lab up` left them, and what differs now: the catch-all beside the plan's own
comparisons (lab/conform.py, lab/links.py, lab/routing.py, lab/sysctls.py). Those say what a value should
be; this one says only that a value changed since the lab was built and kept, so a setting nobody listed is
still found: a link's group, alias, MAC, flags or queue counts (ip-link(8) `-details`), every offload
feature a tool can change (ethtool(8) -k, where a tap's follow what qemu and its guest negotiated: a tap with
`tx off` cut a VM DUT's TCP throughput here from ~1,800 to 377 Mbit/s), channels (ethtool -l), every qdisc with its options on
any link (tc(8), a tap's and a bridge's included), address labels (ip-addrlabel(8)), proxy neighbours and
a bridge's multicast database (bridge(8) mdb), the legacy xtables (iptables-legacy), the tc filters on each
link's qdiscs, the eBPF programs on its links and namespace (lab/bpf_hooks.py: tcx, flow dissector, sk_lookup);
and (processes, host_settings) how the lab's own processes run
(each thread's CPUs, nice, policy and whether it is stopped, the process's resource limits, and the CPU, memory,
freezer and pids limits of its cgroup and the cgroups above it: its iperf3 servers, a VM's qemu) and the host's
net settings every namespace shares but cannot set (TCP's and UDP's memory pressure thresholds, the conntrack
table's size, the socket buffer ceilings, the backlog) with the networking modules' writable parameters, the
eBPF programs of the lab processes' cgroups, on netfilter hooks and in the host's flow dissector (testbed/namespace.py
snapshot, lab/bpf_hooks.py).

What a running lab changes by itself is left out, by name (EXCLUDED): counters, timers, an interface's
operational state, how many sockets asked for promiscuous or all-multicast mode (a capture in a
generator's namespace is allowed: `promiscuity`, not the PROMISC flag an operator sets), and entries the
kernel learns and ages out (a bridge's multicast groups in state "temp")."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from linerate.lab.placement import cgroup_hierarchies
from linerate.lab.sysctls import DYNAMIC, parse_sysctls

Reader = Callable[[str, list[str]], str]  # (namespace, argv) -> the command's stdout ("" when it failed)

LINKS = ["ip", "-d", "-j", "link", "show"]
PER_NAMESPACE = {"qdiscs": ["tc", "-j", "-d", "qdisc", "show"], "address labels": ["ip", "-j", "addrlabel", "list"],
                 "proxy neighbours": ["ip", "-j", "neigh", "show", "proxy"],
                 "multicast database": ["bridge", "-j", "mdb", "show"]}
# the legacy xtables a namespace holds (/proc/net/ip_tables_names: a table exists from its first use, and a namespace
# made just now has none): iptables-legacy rules filter beside nftables, which nft does not list
LEGACY_TABLES = {"legacy iptables tables": ["cat", "/proc/net/ip_tables_names"],
                 "legacy ip6tables tables": ["cat", "/proc/net/ip6_tables_names"],
                 "legacy arptables tables": ["cat", "/proc/net/arp_tables_names"]}
PER_LINK = {"offloads": ["ethtool", "-k"], "channels": ["ethtool", "-l"]}
# the tc filters on each of a link's qdiscs (tc-filter(8)): none of those a lab plans takes one (tbf: "Class doesn't
# support blocks"; pfifo_fast and noqueue: "Qdisc not classful"), but the kernel's default qdisc on a VM lab's tap
# does where it is fq_codel (net.core.default_qdisc) and a filter's drop action there needs no qdisc changed
FILTERS = ["tc", "-j", "filter", "show", "dev"]
# a guest's lab ports are virtio NICs: their ring sizes and interrupt coalescing can be set too (ethtool(8) -G, -C;
# rings of 16 made every trial of a kept VM lab fail)
GUEST_PER_LINK = {**PER_LINK, "rings": ["ethtool", "-g"], "coalescing": ["ethtool", "-c"]}
# what changes while a lab runs with nobody touching it: statistics, timers, the state the kernel reports
# (operstate, carrier counts), and counts of sockets in promiscuous/all-multicast mode (a capture)
EXCLUDED = frozenset({"stats", "stats64", "operstate", "linkmode", "carrier_changes", "carrier_up_count",
                      "carrier_down_count", "promiscuity", "allmulti", "refcnt", "ifindex"})


# a link's flags that report its state rather than a setting (ip-link(8): the kernel's IFF_LOWER_UP, IFF_DORMANT,
# and ip's NO-CARRIER, M-DOWN): a bridge shows NO-CARRIER until its first port's carrier settles
STATE_FLAGS = frozenset({"NO-CARRIER", "LOWER_UP", "DORMANT", "M-DOWN"})


def take(namespaces: list[str], read: Reader, programs: Callable[[str, list[str]], Any] | None = None,
         workspaces: frozenset[str] = frozenset(),
         attributes: Callable[[str], Any] | None = None) -> dict[str, dict[str, Any]]:
    """namespace -> {what: its normalised read}; a read that fails is kept as "" (compared like any other).
    programs(namespace, its links): the eBPF programs on them (lab/bpf_hooks.py in_namespace), when given;
    attributes(namespace): every netlink attribute of its links (lab/link_attributes.py), when given.
    workspaces: the namespaces where an operator may capture (a generator's): elsewhere a link's promiscuity and
    allmulti counts are compared too (a macvlan on a lab link, even one moved to another namespace, makes it
    promiscuous: the only trace it leaves in the lab's)."""
    snapshot: dict[str, dict[str, Any]] = {}
    for ns in namespaces:
        links = _json(read(ns, LINKS))
        held: dict[str, Any] = {"links": {str(link.get("ifname")): _settings(link, counted=ns not in workspaces)
                                          for link in links if isinstance(link, dict)}
                                if isinstance(links, list) else links}
        for what, argv in PER_NAMESPACE.items():
            held[what] = _keyed(_strip(_json(read(ns, argv))))
        for what, argv in LEGACY_TABLES.items():
            held[what] = sorted(read(ns, argv).split())
        names = sorted(held["links"]) if isinstance(held["links"], dict) else []
        qdiscs = held["qdiscs"].values() if isinstance(held["qdiscs"], dict) else []
        for name in names:
            if name != "lo":
                for what, argv in PER_LINK.items():
                    held[f"{what} of {name}"] = _features(read(ns, [*argv, name]))
            handles = sorted({str(q.get("handle")) for q in qdiscs if isinstance(q, dict) and q.get("dev") == name
                              and not q.get("root") and q.get("handle") not in (None, "0:")})
            filters = {"root": _json(read(ns, [*FILTERS, name])),
                       **{handle: _json(read(ns, [*FILTERS, name, "parent", handle])) for handle in handles}}
            # a qdisc with none (or none possible) is left out: one that went is the qdiscs read's to name
            held[f"filters of {name}"] = {parent: found for parent, found in filters.items() if found not in ([], "")}
        if programs is not None:
            held["eBPF programs"] = programs(ns, names)
        if attributes is not None:
            held["netlink attributes of its links"] = attributes(ns)
        snapshot[ns] = held
    return snapshot


def drift(kept: dict[str, dict[str, Any]], now: dict[str, dict[str, Any]]) -> list[str]:
    """One phrase per read (a namespace's links, a link's offloads, ...) that differs between the lab as it was
    kept and as it is now, naming up to three of the values that changed."""
    problems: list[str] = []
    for ns in sorted(set(kept) | set(now)):
        for what in sorted(set(kept.get(ns, {})) | set(now.get(ns, {}))):
            changes = _differences(kept.get(ns, {}).get(what), now.get(ns, {}).get(what), [])
            if changes:
                more = f" and {len(changes) - 3} more" if len(changes) > 3 else ""
                problems.append(f"{ns}'s {what} changed since the lab was kept ({'; '.join(changes[:3])}{more})")
    return problems


def _differences(before: Any, after: Any, path: list[str]) -> list[str]:
    if isinstance(before, dict) and isinstance(after, dict):
        found = []
        for key in sorted(set(before) | set(after), key=str):
            found += _differences(before.get(key), after.get(key), [*path, str(key)])
        return found
    if before == after:
        return []
    where = ".".join(path) or "the whole read"
    return [f"{where} was {_short(before)}, is {_short(after)}"]


def _short(value: Any) -> str:
    text = "absent" if value is None else json.dumps(value, sort_keys=True) if not isinstance(value, str) else value
    return text if len(text) <= 160 else text[:157] + "..."


def _strip(value: Any) -> Any:
    """The read without EXCLUDED keys or timers (a key ending in _timer), at any depth, and without an entry
    the kernel learned and ages out by itself (state "temp": a bridge's multicast group a port joined)."""
    if isinstance(value, dict):
        return {key: _strip(item) for key, item in value.items()
                if key not in EXCLUDED and not str(key).endswith("_timer")}
    if isinstance(value, list):
        return [_strip(item) for item in value if not (isinstance(item, dict) and item.get("state") == "temp")]
    return value


def _settings(link: dict, counted: bool = False) -> dict:
    """A link's settings; counted: with its promiscuity and allmulti counts (EXCLUDED elsewhere)."""
    counts = {key: link[key] for key in ("promiscuity", "allmulti") if counted and key in link}
    link = {**_strip(link), **counts}
    if isinstance(link.get("flags"), list):
        link["flags"] = [flag for flag in link["flags"] if flag not in STATE_FLAGS]
    return link


def _keyed(read: Any) -> Any:
    """A list of records -> {its natural key: the rest}, so a difference names the entry (a qdisc by its
    device and parent, a label by its prefix); a list of other things stays a list."""
    if not isinstance(read, list) or not all(isinstance(item, dict) for item in read):
        return read
    keyed: dict[str, Any] = {}
    for item in read:
        key = " ".join(str(item[name]) for name in ("dev", "parent", "address", "prefixlen", "dst", "port")
                       if name in item) + (" root" if item.get("root") else "")
        keyed[key.strip() or json.dumps(item, sort_keys=True)] = item
    return keyed


def _json(text: str) -> Any:
    try:
        return json.loads(text) if text.strip() else []
    except (ValueError, RecursionError):
        return text.strip()  # kept as text: compared whole


def _features(text: str) -> dict[str, str] | str:
    """ethtool's "name: value" lines -> {name: value} (under "section name" where a "Section:" line heads
    them, as -l's maximums and current settings); a line marked [fixed] left out (nothing can change it); the
    first line says which device."""
    features: dict[str, str] = {}
    section = ""
    for line in text.splitlines()[1:]:
        name, sep, value = line.partition(":")
        if sep and not value.strip():
            section = name.strip() + " "
        elif sep and "[fixed]" not in value:
            features[section + name.strip()] = value.strip()
    return features if features or not text.strip() else text.strip()


# --- the lab's own processes and the host's shared settings ----------------------------------------------------

# the limits a process runs under, per cgroup controller (cgroup v1 files, and v2's under the unified hierarchy;
# Documentation/admin-guide/cgroup-v1/memory.rst and cgroup-v2.rst): a CPU quota or set, or a memory limit (a
# socket buffer limit of 128 KB, memory.kmem.tcp.limit_in_bytes, cut an iperf3 server here from ~450 to ~15
# Mbit/s) moved under the lab's iperf3 server or its qemu changes every trial's figure
CGROUP_LIMITS = {"cpu": ("cpu.cfs_quota_us", "cpu.cfs_period_us", "cpu.shares", "cpu.uclamp.max", "cpu.idle"),
                 "cpuset": ("cpuset.cpus",),
                 "memory": ("memory.limit_in_bytes", "memory.soft_limit_in_bytes", "memory.memsw.limit_in_bytes",
                            "memory.kmem.limit_in_bytes", "memory.kmem.tcp.limit_in_bytes", "memory.swappiness"),
                 "freezer": ("freezer.state",), "pids": ("pids.max",),
                 "": ("cpu.max", "cpu.weight", "cpu.idle", "cpu.uclamp.max", "cpuset.cpus.effective", "memory.max",
                      "memory.high", "memory.swap.max", "cgroup.freeze", "pids.max")}


def processes(named: dict[str, int], read_file: Callable[[str], str],
              list_dir: Callable[[str], list[str]]) -> dict[str, Any]:
    """name -> {"threads": the distinct ways its threads are placed and run (CPUs allowed, nice, scheduling policy,
    stopped or traced: proc(5) status Cpus_allowed_list, stat fields 19, 41 and 3), "cgroup limits": each limit of
    the cgroups its threads are in and above, "limits": its resource limits (proc(5) limits: 6 open files stop an
    iperf3 server's streams)}: a worker thread qemu starts later, placed like its siblings, changes nothing, while
    one thread moved elsewhere does. A process that is gone is "gone"."""
    held: dict[str, Any] = {}
    try:
        mounts = read_file("/proc/self/mounts")
    except OSError:
        mounts = ""
    for name, pid in sorted(named.items()):
        try:
            tasks = sorted(list_dir(f"/proc/{pid}/task"))
        except OSError:
            held[name] = "gone"
            continue
        ways: set[str] = set()
        limits: dict[str, str] = {}
        for task in tasks:
            try:
                stat = read_file(f"/proc/{pid}/task/{task}/stat")
                status = read_file(f"/proc/{pid}/task/{task}/status")
                cgroups = read_file(f"/proc/{pid}/task/{task}/cgroup")
            except OSError:
                continue  # a thread that ended meanwhile
            fields = stat[stat.rfind(")") + 2:].split()
            cpus = next((line.split(":", 1)[1].strip() for line in status.splitlines()
                         if line.startswith("Cpus_allowed_list:")), "?")
            nice, policy = (fields[16], fields[38]) if len(fields) > 38 else ("?", "?")
            stopped = ", stopped" if fields[:1] in (["T"], ["t"]) else ""  # by a signal, or by a tracer
            ways.add(f"cpus {cpus}, nice {nice}, policy {policy}{stopped}")
            limits.update(_cgroup_limits(cgroups, mounts, read_file))
        try:
            rlimits = _resource_limits(read_file(f"/proc/{pid}/limits"))
        except OSError:
            rlimits = {}
        held[name] = {"threads": sorted(ways), "cgroup limits": limits, "limits": rlimits,
                      "autogroup": _autogroup_nice(read_file, pid)}
    return held


def _autogroup_nice(read_file: Callable[[str], str], pid: int) -> str:
    """The nice of the process's autogroup (sched(7): "/autogroup-25 nice 0"; all of its session's processes
    share the CPU by it, whatever each one's own nice), without the group's number; "" where there is none."""
    try:
        return read_file(f"/proc/{pid}/autogroup").split("/", 1)[-1].partition(" ")[2].strip()
    except OSError:
        return ""


def _resource_limits(text: str) -> dict[str, str]:
    """/proc/PID/limits -> {"Max open files": "1024 1048576 files"} (the soft limit, the hard one, the unit)."""
    found = {}
    for line in text.splitlines()[1:]:
        name, _, figures = line.partition("  ")
        if name.strip():
            found[name.strip()] = " ".join(figures.split())
    return found


def _cgroup_limits(cgroups: str, mounts: str, read_file: Callable[[str], str]) -> dict[str, str]:
    """Each limit of the cgroups a thread is in and of every cgroup above them (a limit on a parent holds its
    children), named by where it is set: {"memory.max of /a": "1073741824"}; each hierarchy read where it is
    mounted (lab/placement.py cgroup_hierarchies: /sys/fs/cgroup itself on a host with cgroup v2 alone)."""
    limits = {}
    for controllers, mount, path in cgroup_hierarchies(cgroups, mounts):
        parts = [part for part in path.split("/") if part]
        names = [name for controller in (controllers.split(",") if controllers else [""])
                 for name in CGROUP_LIMITS.get(controller, ())]
        for depth in range(len(parts), -1, -1):
            where = "/" + "/".join(parts[:depth])
            for name in names:
                try:
                    limits[f"{name} of {where}"] = read_file(f"{mount}{where.rstrip('/')}/{name}").strip()
                except OSError:
                    continue
    return limits


def scheduler_settings(read_file: Callable[[str], str], list_dir: Callable[[str], list[str]]) -> dict[str, str]:
    """The host's scheduler settings (sysctl kernel.sched_*, numa_balancing, timer_migration: autogroups off took a
    kept VM lab from ~1,360 to ~1,080 Mbit/s here) and its clocksource, by key; a key this kernel lacks is left out."""
    held = {}
    try:
        held["clocksource"] = read_file(CLOCKSOURCE).strip()
    except OSError:
        pass
    for name in sorted(list_dir("/proc/sys/kernel")):
        if name.startswith("sched_") or name in ("numa_balancing", "timer_migration"):
            try:
                held[f"kernel.{name}"] = " ".join(read_file(f"/proc/sys/kernel/{name}").split())
            except OSError:
                continue  # a directory (sched_domain) or a key that cannot be read
    return held


def host_settings(read_file: Callable[[str], str], list_dir: Callable[[str], list[str]],
                  per_namespace: set[str] | None) -> dict[str, str]:
    """The host's net settings that every namespace shares and none can set (net.ipv4.tcp_mem at "64 96 128" cut
    a lab's TCP here from ~29,800 to 0.3 Mbit/s): each net.* key a namespace made just now may not write
    (`per_namespace`: lab/netns.py per_namespace_net_keys; every key when that is unknown), but for the lists of
    what is loaded (tcp_available_congestion_control grows when a trial loads bbr) and DYNAMIC counts. A
    device's own settings (conf.*, neigh.*) are not shared."""
    held = {}
    pending = ["net"]
    while pending:
        directory = pending.pop()
        for name in sorted(list_dir(f"/proc/sys/{directory}")):
            key = f"{directory}/{name}".replace("/", ".")
            if (name in ("conf", "neigh") and directory.count("/") == 1 or key in DYNAMIC or "available" in name
                    or per_namespace is not None and key in per_namespace):
                continue
            try:
                list_dir(f"/proc/sys/{directory}/{name}")
                pending.append(f"{directory}/{name}")
            except OSError:  # a file
                try:
                    held[key] = " ".join(read_file(f"/proc/sys/{directory}/{name}").split())
                except OSError:
                    continue  # write-only or not readable here
    return held


# the modules of the kernel's networking (net/, drivers/net/): a writable parameter of one is host-wide and none of
# the lab's reads sees it (/sys/module/tcp_cubic/parameters/beta sets every cubic flow's back-off)
NET_MODULES = ("tcp_", "udp", "sch_", "cls_", "act_", "nf_", "nft_", "xt_", "ip_", "ip6", "ipv6", "bridge", "br_",
               "veth", "tun", "tap", "virtio_net", "vhost", "vxlan", "8021q", "macvlan", "ifb", "xfrm", "af_packet")


def module_parameters(read_file: Callable[[str], str], list_dir: Callable[[str], list[str]],
                      writable: Callable[[str], bool]) -> dict[str, str]:
    """Each writable parameter of a networking module (NET_MODULES) that is loaded: "tcp_cubic.beta" -> "717". A
    read-only one is left out (some count as the host runs)."""
    held = {}
    for module in sorted(list_dir("/sys/module")):
        if not module.startswith(NET_MODULES):
            continue
        try:
            names = sorted(list_dir(f"/sys/module/{module}/parameters"))
        except OSError:
            continue  # a module without parameters
        for name in names:
            path = f"/sys/module/{module}/parameters/{name}"
            try:
                if writable(path):
                    held[f"{module}.{name}"] = " ".join(read_file(path).split())
            except OSError:
                continue
    return held


def comparable(kept: dict[str, Any], now: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """kept and now without what may come and go: a process of the lab that is not running now (a server `lab
    stop-server` stopped: its trials fail, saying so), a host setting that one of them lacks (a module loaded
    since, such as nf_conntrack, adds its keys) and a host or namespace read one version of linerate took and
    another does not."""
    kept, now = json.loads(json.dumps(kept)), json.loads(json.dumps(now))
    # a read one version of linerate took and another not (in a namespace or the guest); a link's reads where one
    # side lacks the link (that side's links read says so); a link's counts an older version did not keep
    for ns in set(kept) & set(now) - {"the host"}:
        if isinstance(kept[ns], dict) and isinstance(now[ns], dict):
            for what in (set(kept[ns]) ^ set(now[ns])) - {"links"}:
                kept[ns].pop(what, None)
                now[ns].pop(what, None)
            links_kept, links_now = kept[ns].get("links"), now[ns].get("links")
            if isinstance(links_kept, dict) and isinstance(links_now, dict):
                for name in set(links_kept) & set(links_now):
                    for count in ("promiscuity", "allmulti"):
                        if isinstance(links_kept[name], dict) and isinstance(links_now[name], dict) and \
                                (count in links_kept[name]) != (count in links_now[name]):
                            links_kept[name].pop(count, None)
                            links_now[name].pop(count, None)
    host_kept, host_now = kept.get("the host"), now.get("the host")
    if not isinstance(host_kept, dict) or not isinstance(host_now, dict):
        return kept, now
    for what in set(host_kept) ^ set(host_now):
        host_kept.pop(what, None)
        host_now.pop(what, None)
    for what in host_kept:
        before, after = host_kept[what], host_now[what]
        if isinstance(before, dict) and isinstance(after, dict):
            host_kept[what] = {key: value for key, value in before.items() if key in after}
            if what != "processes":  # a process of the lab the record did not hold then is compared
                host_now[what] = {key: value for key, value in after.items() if key in before}
    return kept, now


# --- a VM DUT's guest --------------------------------------------------------------------------------------------

PS = ["ps", "-o", "pid,ppid,comm,args"]
# the kernel's tracing (Documentation/trace/ftrace.rst): the function tracer cut a VM DUT here from ~1,700 to 317
# Mbit/s. tracefs is mounted for the read in a mount namespace of its own (unshare(1) -m: nothing is left mounted),
# as a tracer set and then unmounted still runs
TRACING = ["unshare", "-m", "sh", "-c", "mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null; "
           "cd /sys/kernel/tracing && for f in current_tracer tracing_on set_event kprobe_events uprobe_events "
           "dynamic_events; do [ -r $f ] && printf '%s: %s\\n' $f \"$(tr '\\n' ' ' < $f)\"; done; exit 0"]


def tracing(text: str) -> dict[str, str] | str:
    """TRACING's stdout ("current_tracer: nop" lines) -> {file: its contents}; "" when it could not be read."""
    found = {}
    for line in text.splitlines():
        name, sep, value = line.partition(": ")
        if sep:
            found[name] = " ".join(value.split())
    return found or text.strip()
GUEST_CPUS = ["cat", "/sys/devices/system/cpu/online"]  # a CPU taken offline in the guest (sysfs-devices-system-cpu)
# the clock the kernel reads time from (acpi_pm instead of tsc took a VM DUT's 64 B NDR from 37,968 to 26,408 fps)
CLOCKSOURCE = "/sys/devices/system/clocksource/clocksource0/current_clocksource"
GUEST_CLOCKSOURCE = ["cat", CLOCKSOURCE]
GUEST_SYSCTLS = ["sysctl", "-a"]  # exits 1 where a key cannot be read, having printed the others: its stdout is kept


def guest_reads(ports: list[str], with_processes: bool) -> list[list[str]]:
    """What `guest` needs read in the guest, asked in one batch (one agent or SSH round trip)."""
    return [PER_NAMESPACE["qdiscs"], GUEST_SYSCTLS, TRACING, GUEST_CPUS, GUEST_CLOCKSOURCE,
            *([PS] if with_processes else []),
            *[[*argv, port] for port in ports for argv in GUEST_PER_LINK.values()]]


def guest(ports: list[str], answers: dict[tuple[str, ...], str], with_processes: bool) -> dict[str, Any]:
    """A guest's settings from the stdout of each of guest_reads: its qdiscs with their options, its net.*
    sysctls (but for a count traffic changes and the TCP Fast Open key: lab/sysctls.py DYNAMIC), its lab ports'
    offload features, channels, rings and coalescing and, for the built-in guest (nothing runs there but its agent), its processes."""
    held: dict[str, Any] = {
        "qdiscs": _keyed(_strip(_json(answers.get(tuple(PER_NAMESPACE["qdiscs"]), "")))),
        "net sysctls": {key: value for key, value in parse_sysctls(answers.get(tuple(GUEST_SYSCTLS), "")).items()
                        if key not in DYNAMIC}}
    held["kernel tracing"] = tracing(answers.get(tuple(TRACING), ""))
    held["online CPUs"] = answers.get(tuple(GUEST_CPUS), "").strip()
    held["clocksource"] = answers.get(tuple(GUEST_CLOCKSOURCE), "").strip()
    for port in ports:
        for what, argv in GUEST_PER_LINK.items():
            held[f"{what} of {port}"] = _features(answers.get((*argv, port), ""))
    if with_processes:
        held["processes"] = user_processes(answers.get(tuple(PS), ""))
    return held


def user_processes(ps_output: str) -> list[str]:
    """`ps -o pid,ppid,comm,args` -> the command lines of the processes that are not the kernel's threads (pid 2
    and its children) nor the read itself (the ps and its ancestors up to, not including, pid 1), sorted."""
    rows: dict[str, tuple[str, str]] = {}
    for line in ps_output.splitlines()[1:]:
        fields = line.split(None, 3)
        if len(fields) >= 3:
            rows[fields[0]] = (fields[1], fields[3] if len(fields) > 3 else fields[2])
    reading = set()
    pid = next((pid for pid, (_, args) in rows.items() if args.split()[:2] == PS[:2] and "pid,ppid" in args), None)
    while pid is not None and pid in rows and pid != "1" and pid not in reading:
        reading.add(pid)
        pid = rows[pid][0]
    return sorted(args for pid, (ppid, args) in rows.items() if "2" not in (pid, ppid) and pid not in reading)
