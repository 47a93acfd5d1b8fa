"""The environment a run records with every experiment, what machine, kernel, tools and offload
states produced the numbers: the controller's own (`controller_fingerprint`, the local machine,
where the namespace and VM testbeds run), and each host of an SSH testbed's (`host_fingerprint`:
kernel/OS, CPU model and count, NIC drivers and offloads, iperf3 version; `linerate testbed check`
prints it, every run stores it). Imported by testbed/ only."""

from __future__ import annotations

import os
import platform
from pathlib import Path

from linerate import __version__
from linerate.dut.base import DutDriver
from linerate.errors import LinerateError
from linerate.exec import Executor, LocalExecutor
from linerate.exec.ssh import SshExecutor
from linerate.numbers import ascii_int
from linerate.preflight import parse_iperf3_version

TIMEOUT_S = 15


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def read_text(path: str) -> str | None:
    try:
        return Path(path).read_text().strip()
    except OSError:
        return None


def controller_fingerprint(host: Executor | None = None) -> dict:
    """The machine linerate runs on: its kernel, CPU, iperf3, congestion control, Python."""
    host = host or LocalExecutor()
    version = host.run(["iperf3", "--version"], check=False, timeout_s=10)
    parsed = parse_iperf3_version(version.stdout + version.stderr)
    return {
        "linerate_version": __version__,
        "kernel": platform.release(),
        "machine": platform.machine(),
        "cpu_model": cpu_model(),
        "cpu_count": os.cpu_count(),
        "iperf3_version": ".".join(map(str, parsed)) if parsed else None,
        "tcp_congestion_control": read_text("/proc/sys/net/ipv4/tcp_congestion_control"),
        "python": platform.python_version(),
    }


def host_fingerprint(executor: SshExecutor, driver: DutDriver | None = None,
                     interfaces: list[str] | tuple[str, ...] = ()) -> dict:
    """Kernel/OS, CPU model and count, NIC drivers and offloads, iperf3 version of one host."""
    def out(argv: list[str]) -> str | None:
        result = executor.run(argv, timeout_s=TIMEOUT_S, check=False)
        return result.stdout.strip() or None if result.returncode == 0 else None

    system = out(["uname", "-s"]) or "?"
    info = {"os": system, "kernel": out(["uname", "-r"]), "machine": out(["uname", "-m"])}
    if system == "Linux":
        cpuinfo = out(["cat", "/proc/cpuinfo"]) or ""
        models = [line.split(":", 1)[1].strip() for line in cpuinfo.splitlines() if line.startswith("model name")]
        info.update(cpu_model=models[0] if models else None, cpu_count=ascii_int(out(["nproc"]) or "") or None)
    else:
        count = out(["sysctl", "-n", "hw.ncpu"])
        info.update(cpu_model=out(["sysctl", "-n", "hw.model"]), cpu_count=ascii_int(count or "") or None)
    version = executor.run(["iperf3", "--version"], timeout_s=TIMEOUT_S, check=False)
    parsed = parse_iperf3_version(version.stdout + version.stderr) if version.returncode == 0 else None
    info["iperf3_version"] = ".".join(map(str, parsed)) if parsed else None
    if driver is not None:
        info["offloads"] = {}
        for ifname in interfaces:
            try:
                info["offloads"][ifname] = driver.read_offloads(executor, ifname)
            except LinerateError as exc:
                info["offloads"][ifname] = {"error": str(exc)[:200]}
            if system == "Linux":
                driver_line = next((line for line in (out(["ethtool", "-i", ifname]) or "").splitlines()
                                    if line.startswith("driver:")), None)
                info.setdefault("nic_drivers", {})[ifname] = driver_line.split(":", 1)[1].strip() if driver_line else None
    return info
