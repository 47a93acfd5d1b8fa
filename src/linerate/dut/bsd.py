"""FreeBSD (pfSense, OPNsense) and OpenBSD DUT drivers.

Neither has been run against a live BSD host here: their parsers are tested on recorded real
outputs (tests/data/bsd), and these drivers through the FakeExecutor.

FreeBSD: `netstat -i -n -b -d` (packets, bytes, errors, drops), `sysctl -n kern.cp_times` (per CPU),
`vmstat -i` (interrupts per NIC queue), `netstat -Q` (netisr queue drops), `pfctl -s info`
(states). Interface offloads are ifconfig flags: rxcsum/txcsum (and their IPv6 twins), tso, lro.
OpenBSD: `netstat -i -n`, `sysctl -n kern.cp_time` (all CPUs together: sysctl(8) does not print the
per-CPU KERN_CPTIME2), `vmstat -i`, `pfctl -s info`; its drivers expose no offload toggles that
map onto ours, so offload knobs are refused there.

Boot-time tunables (loader.conf) are never written live: the tuning catalog knows which names
are loader-only, and FreeBSD's own refusal ("read only tunable") is reported the same way.
"""

from __future__ import annotations

from linerate.dut import parsers, state_parsers
from linerate.dut.base import Probe, Snapshot, adds_counters, read_parsed, take_snapshot
from linerate.errors import ConfigError, ExecError, LinerateError
from linerate.exec import Executor

TIMEOUT_S = 10
FREEBSD_CAPS = {"rx": (("rxcsum", "rxcsum6"), "RXCSUM"), "tx": (("txcsum", "txcsum6"), "TXCSUM"),
                "tso": (("tso",), "TSO4"), "lro": (("lro",), "LRO")}
# Pasted snapshots only: top's second display (1 s apart; the first averages since boot) names
# the busiest threads (an 'intr{irq272: igb2:que}' at 100%), ifconfig the interfaces (vtnet: virtio).
# pf's state table: entries and counters (memory: state allocations refused at the limit), the hard
# limit, and the timeouts (tcp.closed: what a normally closed connection's state lingers for)
STATE_READS = {("pfctl", "-si"): state_parsers.parse_pfctl_state_info, ("pfctl", "-sm"): state_parsers.parse_pfctl_memory}
STATE_TIMEOUT_READS = {("pfctl", "-st"): state_parsers.parse_pfctl_timeouts}
TOP_ARGV = ("top", "-b", "-H", "-S", "-P", "-z", "-s", "1", "-d", "2", "40")


def _interrupts(text: str, shot: Snapshot) -> None:
    shot.interrupts = parsers.parse_vmstat_i(text)


def _top(text: str, shot: Snapshot) -> None:
    shot.top_cpu, shot.threads = parsers.parse_top(text)


def _ifconfig(text: str, shot: Snapshot) -> None:
    shot.interfaces = parsers.ifconfig_names(text)
    if not shot.interfaces:
        raise ValueError("no interfaces")


PF_PROBE = Probe(("pfctl", "-s", "info"), adds_counters(parsers.parse_pfctl_info),
                 "pf state count (pfctl -s info: pf disabled, no /dev/pf access, or not captured)", required=False)
VMSTAT_PROBE = Probe(("vmstat", "-i"), _interrupts, "interrupts per queue (vmstat -i)")
IFCONFIG_PROBE = Probe(("ifconfig", "-a"), _ifconfig, "interface names (ifconfig -a)", required=False)


class _BsdDriver:
    family = "bsd"
    configures_guest = False  # an image's rc.conf / pf.conf (or its product's config.xml) owns it: checked only
    interface_argv: tuple[str, ...] = ()
    cpu_argv: tuple[str, ...] = ()
    os_name = "freebsd"

    def _cpu(self, text: str) -> list[dict[str, int]]:
        raise NotImplementedError

    def _set_cpu(self, text: str, shot: Snapshot) -> None:
        shot.cpu = self._cpu(text)

    def _cpu_probe(self) -> Probe:
        return Probe(self.cpu_argv, self._set_cpu, f"per-CPU time ({' '.join(self.cpu_argv[2:])})")

    def _interface_probe(self) -> Probe:
        return Probe(self.interface_argv, adds_counters(parsers.parse_netstat_i),
                     f"interface counters ({' '.join(self.interface_argv)})")

    def probes(self) -> list[Probe]:
        return [self._interface_probe(), self._cpu_probe(), VMSTAT_PROBE, PF_PROBE]

    def offline_probes(self) -> list[Probe]:
        return [IFCONFIG_PROBE, *self.probes()]

    def snapshot(self, host: Executor) -> Snapshot:
        return take_snapshot(host, self.probes(), self.family, TIMEOUT_S)

    def window_snapshot(self, host: Executor) -> Snapshot:
        """Read inside the measured window: per-CPU time and interrupts (counters come before and after)."""
        return take_snapshot(host, [self._cpu_probe(), VMSTAT_PROBE], self.family, TIMEOUT_S)

    def cpu_snapshot(self, host: Executor) -> Snapshot:
        return take_snapshot(host, [self._cpu_probe()], self.family, TIMEOUT_S)

    def path_counters(self, host: Executor) -> dict[str, int]:
        return take_snapshot(host, [self._interface_probe()], self.family, TIMEOUT_S).counters

    def state_counters(self, host: Executor) -> dict[str, int]:
        """pf: state_count, state_max, searches, inserts, removals, memory_failures ...; {} without pf."""
        return read_parsed(host, STATE_READS, TIMEOUT_S)

    def state_timeouts(self, host: Executor) -> dict[str, int]:
        return read_parsed(host, STATE_TIMEOUT_READS, TIMEOUT_S)

    def clear_states(self, host: Executor, family: int, src: str, dst: str) -> int | None:
        """pfctl -k SRC -k DST: every state from src to dst (pfctl(8)); None without pf."""
        result = host.run(["pfctl", "-k", src, "-k", dst], timeout_s=120, check=False)
        return state_parsers.parse_deleted_states(result.stdout + "\n" + result.stderr)

    def link_speed_mbps(self, host: Executor, ifname: str) -> int | None:
        """The media `ifconfig IF` reports; None for a driver whose media is a constant (FIXED_MEDIA_DRIVERS)."""
        if parsers.fixed_media_driver(ifname):
            return None
        result = host.run(["ifconfig", ifname], timeout_s=TIMEOUT_S, check=False)
        return parsers.parse_ifconfig_media(result.stdout).get(ifname) if result.returncode == 0 else None

    def read_sysctl(self, host: Executor, name: str) -> str:
        return " ".join(host.run(["sysctl", "-n", name], timeout_s=TIMEOUT_S).stdout.split())

    def boot_time_only(self, host: Executor, name: str) -> bool:
        from linerate.tuning.catalog import load_catalog  # pydantic: kept off the start-up path

        knob = load_catalog().find(name, self.os_name)
        return knob is not None and knob.location == "loader"

    def set_sysctl(self, host: Executor, name: str, value: str) -> None:
        try:
            host.run(["sysctl", f"{name}={value}"], timeout_s=TIMEOUT_S)
        except ExecError as exc:
            if "tunable" in exc.stderr.lower() or "read only" in exc.stderr.lower():
                raise ConfigError("dut_sysctls", f"{name} is a boot-time tunable (loader.conf) and needs a "
                                  "reboot; see `linerate recommend`") from None
            raise LinerateError(f"sysctl {name}={value} was refused on the DUT: {exc.stderr.strip()}") from None


class FreeBsdDriver(_BsdDriver):
    family = "freebsd"
    virtio_nics = ("vtnet0", "vtnet1")  # vtnet(4), numbered in PCI order
    os_name = "freebsd"
    interface_argv = ("netstat", "-i", "-n", "-b", "-d")
    cpu_argv = ("sysctl", "-n", "kern.cp_times")

    def _cpu(self, text: str) -> list[dict[str, int]]:
        return parsers.parse_freebsd_cp_times(text)

    def probes(self) -> list[Probe]:
        return super().probes() + [Probe(("netstat", "-Q"), adds_counters(parsers.parse_netstat_q),
                                         "netisr queues (netstat -Q)", required=False)]

    def offline_probes(self) -> list[Probe]:
        return super().offline_probes() + [Probe(TOP_ARGV, _top, "busiest threads (top -HSP)", required=False)]

    def read_offloads(self, host: Executor, ifname: str) -> dict[str, str]:
        caps = parsers.parse_ifconfig_options(host.run(["ifconfig", ifname], timeout_s=TIMEOUT_S).stdout)
        return {feature: "on" if flag in caps else "off" for feature, (_, flag) in FREEBSD_CAPS.items()}

    def set_offload(self, host: Executor, ifname: str, feature: str, state: str) -> None:
        if feature not in FREEBSD_CAPS:
            raise ConfigError("dut_offloads", f"{feature} is not an ifconfig capability on FreeBSD; use "
                              f"{', '.join(FREEBSD_CAPS)}")
        flags = [name if state == "on" else f"-{name}" for name in FREEBSD_CAPS[feature][0]]
        host.run(["ifconfig", ifname, *flags], timeout_s=TIMEOUT_S)


class OpenBsdDriver(_BsdDriver):
    family = "openbsd"
    virtio_nics = ("vio0", "vio1")  # vio(4), numbered in PCI order
    os_name = "openbsd"
    interface_argv = ("netstat", "-i", "-n")
    cpu_argv = ("sysctl", "-n", "kern.cp_time")

    def _cpu(self, text: str) -> list[dict[str, int]]:
        return parsers.parse_openbsd_cp_time(text)

    def read_offloads(self, host: Executor, ifname: str) -> dict[str, str]:
        return {}

    def set_offload(self, host: Executor, ifname: str, feature: str, state: str) -> None:
        raise ConfigError("dut_offloads", "OpenBSD has no ifconfig toggles for rx/tx checksum, TSO or LRO that "
                          "linerate could set; leave dut_offloads at 'default' on an OpenBSD DUT")
