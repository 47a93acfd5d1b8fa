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

from linerate.dut import parsers
from linerate.dut.base import Snapshot, run_all
from linerate.errors import ConfigError, ExecError, LinerateError
from linerate.exec import Executor

TIMEOUT_S = 10
FREEBSD_CAPS = {"rx": (("rxcsum", "rxcsum6"), "RXCSUM"), "tx": (("txcsum", "txcsum6"), "TXCSUM"),
                "tso": (("tso",), "TSO4"), "lro": (("lro",), "LRO")}


class _BsdDriver:
    family = "bsd"
    interface_argv: list[str] = []
    cpu_argv: list[str] = []
    os_name = "freebsd"

    def _cpu(self, text: str) -> list[dict[str, int]]:
        raise NotImplementedError

    def telemetry_commands(self) -> list[list[str]]:
        return [self.interface_argv, self.cpu_argv, ["vmstat", "-i"]]

    def snapshot(self, host: Executor) -> Snapshot:
        extra = self._extra_argvs()
        results = run_all(host, [self.interface_argv, self.cpu_argv, ["vmstat", "-i"], ["pfctl", "-s", "info"], *extra],
                          TIMEOUT_S, optional=1 + len(extra))
        interfaces, cpu, irqs, pf = results[:4]
        shot = Snapshot()
        shot.counters.update(parsers.parse_netstat_i(interfaces.stdout))
        shot.cpu = self._cpu(cpu.stdout)
        shot.interrupts = parsers.parse_vmstat_i(irqs.stdout)
        if pf.returncode == 0:
            shot.counters.update(parsers.parse_pfctl_info(pf.stdout))
        else:
            shot.problems.append("pf state count (pfctl -s info refused; pf disabled or no /dev/pf access)")
        self._extra(results[4:], shot)
        return shot

    def _extra_argvs(self) -> list[list[str]]:
        return []

    def _extra(self, results: list, shot: Snapshot) -> None:
        pass

    def read_sysctl(self, host: Executor, name: str) -> str:
        return " ".join(host.run(["sysctl", "-n", name], timeout_s=TIMEOUT_S).stdout.split())

    def boot_time_only(self, host: Executor, name: str) -> bool:
        from linerate.tuning.catalog import load_catalog

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
    os_name = "freebsd"
    interface_argv = ["netstat", "-i", "-n", "-b", "-d"]
    cpu_argv = ["sysctl", "-n", "kern.cp_times"]

    def _cpu(self, text: str) -> list[dict[str, int]]:
        return parsers.parse_freebsd_cp_times(text)

    def telemetry_commands(self) -> list[list[str]]:
        return super().telemetry_commands() + [["netstat", "-Q"]]

    def _extra_argvs(self) -> list[list[str]]:
        return [["netstat", "-Q"]]

    def _extra(self, results: list, shot: Snapshot) -> None:
        (netisr,) = results
        if netisr.returncode == 0:
            shot.counters.update(parsers.parse_netstat_q(netisr.stdout))
        else:
            shot.problems.append("netisr queues (netstat -Q failed)")

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
    os_name = "openbsd"
    interface_argv = ["netstat", "-i", "-n"]
    cpu_argv = ["sysctl", "-n", "kern.cp_time"]

    def _cpu(self, text: str) -> list[dict[str, int]]:
        return parsers.parse_openbsd_cp_time(text)

    def read_offloads(self, host: Executor, ifname: str) -> dict[str, str]:
        return {}

    def set_offload(self, host: Executor, ifname: str, feature: str, state: str) -> None:
        raise ConfigError("dut_offloads", "OpenBSD has no ifconfig toggles for rx/tx checksum, TSO or LRO that "
                          "linerate could set; leave dut_offloads at 'default' on an OpenBSD DUT")
