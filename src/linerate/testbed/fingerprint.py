"""What a run records of each host of an SSH testbed: kernel/OS, CPU model and count, NIC drivers
and offloads, iperf3 version (`linerate testbed check` prints it, every run stores it)."""

from __future__ import annotations

from linerate.dut.base import DutDriver
from linerate.errors import LinerateError
from linerate.exec.ssh import SshExecutor
from linerate.numbers import ascii_int
from linerate.preflight import parse_iperf3_version

TIMEOUT_S = 15


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
