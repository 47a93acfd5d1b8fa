"""Linux DUT driver (also OpenWrt): iproute2 JSON counters, nstat, tc, /proc/stat, /proc/interrupts,
conntrack count; sysctl and ethtool for knobs. The namespace lab's DUT uses it through a
NetnsExecutor, an SSH testbed through an SshExecutor — the same argv either way."""

from __future__ import annotations

from linerate import counters
from linerate.dut import parsers
from linerate.dut.base import Snapshot, run_all
from linerate.errors import ExecError, LinerateError
from linerate.exec import Executor

LINK_STATS_ARGV = ["ip", "-j", "-s", "link", "show"]
NSTAT_ARGV = ["nstat", "-a", "-z", "-s", "-j"]  # -s: leave nstat's history file alone
QDISC_STATS_ARGV = ["tc", "-s", "-j", "qdisc", "show"]
PROC_STAT_ARGV = ["cat", "/proc/stat"]
INTERRUPTS_ARGV = ["cat", "/proc/interrupts"]
CONNTRACK_ARGV = ["cat", "/proc/sys/net/netfilter/nf_conntrack_count"]
TIMEOUT_S = 10


class LinuxDriver:
    family = "linux"

    def telemetry_commands(self) -> list[list[str]]:
        return [LINK_STATS_ARGV, NSTAT_ARGV, QDISC_STATS_ARGV, PROC_STAT_ARGV, INTERRUPTS_ARGV]

    def snapshot(self, host: Executor) -> Snapshot:
        links, snmp, qdiscs, stat, irqs, conntrack = run_all(
            host, [LINK_STATS_ARGV, NSTAT_ARGV, QDISC_STATS_ARGV, PROC_STAT_ARGV, INTERRUPTS_ARGV, CONNTRACK_ARGV],
            TIMEOUT_S, optional=1)
        shot = Snapshot()
        shot.counters.update(counters.parse_link_stats(links.stdout))
        shot.counters.update(counters.parse_nstat(snmp.stdout))
        shot.counters.update(counters.parse_qdisc_stats(qdiscs.stdout))
        shot.cpu = parsers.parse_proc_stat(stat.stdout)
        shot.interrupts = parsers.parse_proc_interrupts(irqs.stdout)
        if conntrack.returncode == 0:
            shot.counters["conntrack_entries"] = parsers.parse_single_int(conntrack.stdout, "nf_conntrack_count")
        else:
            shot.problems.append("conntrack count (nf_conntrack not loaded)")
        return shot

    def read_sysctl(self, host: Executor, name: str) -> str:
        return " ".join(host.run(["sysctl", "-n", name], timeout_s=TIMEOUT_S).stdout.split())

    def set_sysctl(self, host: Executor, name: str, value: str) -> None:
        host.run(["sysctl", "-w", f"{name}={value}"], timeout_s=TIMEOUT_S)

    def boot_time_only(self, host: Executor, name: str) -> bool:
        return False  # every /proc/sys entry is a runtime knob; kernel cmdline options are not sysctls

    def read_offloads(self, host: Executor, ifname: str) -> dict[str, str]:
        from linerate.topology.link import OFFLOAD_FEATURES, parse_ethtool_features

        features = parse_ethtool_features(host.run(["ethtool", "-k", ifname], timeout_s=TIMEOUT_S).stdout)
        by_long = {long: short for short, (_, long) in OFFLOAD_FEATURES.items()}
        return {by_long[k]: v.split()[0] for k, v in features.items() if k in by_long}

    def set_offload(self, host: Executor, ifname: str, feature: str, state: str) -> None:
        from linerate.topology.link import OFFLOAD_FEATURES

        try:
            host.run(["ethtool", "-K", ifname, OFFLOAD_FEATURES[feature][0], state], timeout_s=TIMEOUT_S)
        except ExecError as exc:
            raise LinerateError(f"ethtool refused {feature}={state} on {ifname}: {exc.stderr.strip()}") from None
