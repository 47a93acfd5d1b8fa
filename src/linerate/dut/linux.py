"""Linux DUT driver (also OpenWrt): iproute2 JSON counters, nstat, tc, /proc/stat, /proc/interrupts,
conntrack count; sysctl and ethtool for knobs. The namespace lab's DUT uses it through a
NetnsExecutor, an SSH testbed through an SshExecutor — the same argv either way."""

from __future__ import annotations

from linerate import counters
from linerate.dut import parsers, state_parsers
from linerate.dut.base import Probe, Snapshot, adds_counters, read_parsed, take_snapshot
from linerate.errors import ExecError, LinerateError
from linerate.exec import Executor
from linerate.numbers import is_ascii_int
from linerate.topology.link import OFFLOAD_FEATURES, parse_ethtool_features

LINK_STATS_ARGV = ["ip", "-j", "-s", "link", "show"]
NSTAT_ARGV = ["nstat", "-a", "-z", "-s", "-j"]  # -s: leave nstat's history file alone
QDISC_STATS_ARGV = ["tc", "-s", "-j", "qdisc", "show"]
PROC_STAT_ARGV = ["cat", "/proc/stat"]
INTERRUPTS_ARGV = ["cat", "/proc/interrupts"]
SOFTNET_ARGV = ["cat", "/proc/net/softnet_stat"]
CONNTRACK_ARGV = ["cat", "/proc/sys/net/netfilter/nf_conntrack_count"]
# the state table (diagnose/state_rules.py): its size, limit and per-CPU event counters, and the
# timeout a normally closed TCP connection's entry lingers for (Little's law, kernel docs
# 'Netfilter Conntrack Sysfs variables', Documentation/networking/nf_conntrack-sysctl.rst)
STATE_READS = {  # the count last: read on its own, it is this instant's (the stat table's entries column too)
    ("cat", "/proc/net/stat/nf_conntrack"): state_parsers.parse_proc_nf_conntrack,
    ("cat", "/proc/sys/net/netfilter/nf_conntrack_max"): state_parsers.parse_conntrack_max,
    ("cat", "/proc/sys/net/netfilter/nf_conntrack_count"): state_parsers.parse_conntrack_count,
}
STATE_TIMEOUT_READS = {
    ("cat", "/proc/sys/net/netfilter/nf_conntrack_tcp_timeout_time_wait"):
        lambda text: {"tcp_timeout_time_wait": state_parsers.parse_conntrack_count(text)["state_count"]},
    ("cat", "/proc/sys/net/netfilter/nf_conntrack_udp_timeout"):  # an unreplied UDP flow's (rfc9693)
        lambda text: {"udp_timeout": state_parsers.parse_conntrack_count(text)["state_count"]},
}
TIMEOUT_S = 10


def _set_cpu(text: str, shot: Snapshot) -> None:
    shot.cpu = parsers.parse_proc_stat(text)


def _set_interrupts(text: str, shot: Snapshot) -> None:
    shot.interrupts = parsers.parse_proc_interrupts(text)


def _conntrack(text: str, shot: Snapshot) -> None:
    shot.counters["conntrack_entries"] = parsers.parse_single_int(text, "nf_conntrack_count")


CPU_PROBE = Probe(tuple(PROC_STAT_ARGV), _set_cpu, "per-CPU time (/proc/stat)")
INTERRUPTS_PROBE = Probe(tuple(INTERRUPTS_ARGV), _set_interrupts, "interrupts per queue (/proc/interrupts)")
SOFTNET_PROBE = Probe(tuple(SOFTNET_ARGV), adds_counters(parsers.parse_softnet_stat),
                      "backlog drops (/proc/net/softnet_stat)", required=False)
# Read twice inside the measured window: files only, so that an executor that can read files
# without a process (the VM agent) does, and no command competes with forwarding.
WINDOW_PROBES = [CPU_PROBE, INTERRUPTS_PROBE, SOFTNET_PROBE]
LINK_PROBE = Probe(tuple(LINK_STATS_ARGV), adds_counters(counters.parse_link_stats), "interface counters (ip -j -s link)")
NSTAT_PROBE = Probe(tuple(NSTAT_ARGV), adds_counters(counters.parse_nstat), "IP forwarding counters (nstat)")
PROBES = [
    LINK_PROBE,
    NSTAT_PROBE,
    Probe(tuple(QDISC_STATS_ARGV), adds_counters(counters.parse_qdisc_stats), "qdisc counters (tc -s qdisc)"),
    CPU_PROBE,
    INTERRUPTS_PROBE,
    SOFTNET_PROBE,
    Probe(tuple(CONNTRACK_ARGV), _conntrack, "conntrack count (nf_conntrack not loaded)", required=False),
]


class LinuxDriver:
    family = "linux"
    virtio_nics = None  # enp0s3 under systemd, eth0 under OpenWrt: found by MAC
    configures_guest = True  # iproute2, nftables, ethtool, sysctl

    def probes(self) -> list[Probe]:
        return list(PROBES)

    def offline_probes(self) -> list[Probe]:
        return list(PROBES)

    def snapshot(self, host: Executor) -> Snapshot:
        return take_snapshot(host, PROBES, self.family, TIMEOUT_S)

    def window_snapshot(self, host: Executor) -> Snapshot:
        return take_snapshot(host, WINDOW_PROBES, self.family, TIMEOUT_S)

    def cpu_snapshot(self, host: Executor) -> Snapshot:
        return take_snapshot(host, [CPU_PROBE], self.family, TIMEOUT_S)

    def path_counters(self, host: Executor) -> dict[str, int]:
        """Every interface's packet, byte, drop and error counters and the IP forwarding counters
        (an rfc2544 search trial's before/after)."""
        return take_snapshot(host, [LINK_PROBE, NSTAT_PROBE], self.family, TIMEOUT_S).counters

    def state_counters(self, host: Executor) -> dict[str, int]:
        """conntrack: state_count, state_max and the per-CPU event counters summed (insert_failed,
        drop, early_drop ...); {} where nf_conntrack is not loaded."""
        return read_parsed(host, STATE_READS, TIMEOUT_S)

    def state_timeouts(self, host: Executor) -> dict[str, int]:
        return read_parsed(host, STATE_TIMEOUT_READS, TIMEOUT_S)

    def clear_states(self, host: Executor, family: int, src: str, dst: str) -> int | None:
        """conntrack -D: every UDP entry from src to dst (rfc9693's own connections, nothing else);
        how many it deleted, None without the conntrack tool. conntrack prints each entry it deletes
        on stdout (tens of MB for a large table), its count on stderr: stdout is discarded on the
        host (a fixed sh script; the values go in as arguments)."""
        argv = ["sh", "-c", 'exec "$@" >/dev/null', "conntrack", "conntrack", "-D", "-f", "ipv4" if family == 4
                else "ipv6", "-p", "udp", "-s", src, "-d", dst]
        result = host.run(argv, timeout_s=120, check=False)
        return state_parsers.parse_deleted_states(result.stdout + "\n" + result.stderr)

    def read_sysctl(self, host: Executor, name: str) -> str:
        return " ".join(host.run(["sysctl", "-n", name], timeout_s=TIMEOUT_S).stdout.split())

    def set_sysctl(self, host: Executor, name: str, value: str) -> None:
        host.run(["sysctl", "-w", f"{name}={value}"], timeout_s=TIMEOUT_S)

    def boot_time_only(self, host: Executor, name: str) -> bool:
        return False  # every /proc/sys entry is a runtime knob; kernel cmdline options are not sysctls

    def link_speed_mbps(self, host: Executor, ifname: str) -> int | None:
        """/sys/class/net/IF/speed: the negotiated Mbit/s; -1 or an error where there is none (a link down,
        virtio_net without a speed set). None too for a software driver that reports a constant (`ethtool -i`:
        FIXED_SPEED_DRIVERS), which says nothing of what the path carries."""
        result = host.run(["cat", f"/sys/class/net/{ifname}/speed"], timeout_s=TIMEOUT_S, check=False)
        text = result.stdout.strip()
        if result.returncode != 0 or not is_ascii_int(text) or int(text) <= 0:
            return None
        info = host.run(["ethtool", "-i", ifname], timeout_s=TIMEOUT_S, check=False)
        return None if parsers.ethtool_driver(info.stdout) in parsers.FIXED_SPEED_DRIVERS else int(text)

    def read_offloads(self, host: Executor, ifname: str) -> dict[str, str]:
        features = parse_ethtool_features(host.run(["ethtool", "-k", ifname], timeout_s=TIMEOUT_S).stdout)
        by_long = {long: short for short, (_, long) in OFFLOAD_FEATURES.items()}
        return {by_long[k]: v.split()[0] for k, v in features.items() if k in by_long}

    def set_offload(self, host: Executor, ifname: str, feature: str, state: str) -> None:
        try:
            host.run(["ethtool", "-K", ifname, OFFLOAD_FEATURES[feature][0], state], timeout_s=TIMEOUT_S)
        except ExecError as exc:
            raise LinerateError(f"ethtool refused {feature}={state} on {ifname}: {exc.stderr.strip()}") from None
