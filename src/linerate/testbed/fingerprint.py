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


# what host_fingerprint reads, in one batch through the session's shell: an SSH exec costs a channel and a remote
# shell start (~0.2 s on the test bed's hosts, more on a far one), so a host's ~8 reads take one round trip, not 8
HOST_PROBES = {"os": ["uname", "-s"], "kernel": ["uname", "-r"], "machine": ["uname", "-m"],
               "cpuinfo": ["cat", "/proc/cpuinfo"], "nproc": ["nproc"],  # Linux
               "ncpu": ["sysctl", "-n", "hw.ncpu"], "model": ["sysctl", "-n", "hw.model"],  # the BSDs
               "iperf3": ["iperf3", "--version"]}


def host_fingerprint(executor: SshExecutor, driver: DutDriver | None = None,
                     interfaces: list[str] | tuple[str, ...] = ()) -> dict:
    """Kernel/OS, CPU model and count, NIC drivers and offloads, iperf3 version of one host."""
    argvs = [*HOST_PROBES.values(), *(["ethtool", "-i", ifname] for ifname in interfaces if driver is not None)]
    results = executor.run_many(argvs, timeout_s=TIMEOUT_S)
    said = {name: (result.stdout.strip() or None if result.returncode == 0 else None)
            for name, result in zip([*HOST_PROBES, *(f"ethtool {ifname}" for ifname in interfaces)], results)}
    system = said["os"] or "?"
    info = {"os": system, "kernel": said["kernel"], "machine": said["machine"]}
    if system == "Linux":
        models = [line.split(":", 1)[1].strip() for line in (said["cpuinfo"] or "").splitlines()
                  if line.startswith("model name")]
        info.update(cpu_model=models[0] if models else None, cpu_count=ascii_int(said["nproc"] or "") or None)
    else:
        info.update(cpu_model=said["model"], cpu_count=ascii_int(said["ncpu"] or "") or None)
    parsed = parse_iperf3_version(said["iperf3"] or "")
    info["iperf3_version"] = ".".join(map(str, parsed)) if parsed else None
    if driver is not None:
        info["offloads"] = {}
        for ifname in interfaces:
            try:
                info["offloads"][ifname] = driver.read_offloads(executor, ifname)
            except LinerateError as exc:
                info["offloads"][ifname] = {"error": str(exc)[:200]}
            if system == "Linux":
                driver_line = next((line for line in (said[f"ethtool {ifname}"] or "").splitlines()
                                    if line.startswith("driver:")), None)
                info.setdefault("nic_drivers", {})[ifname] = driver_line.split(":", 1)[1].strip() if driver_line else None
    return info
