"""The environment fingerprint stored with every experiment: what machine, kernel, tools and
offload states produced the numbers."""

from __future__ import annotations

import os
import platform
from pathlib import Path

from linerate import __version__
from linerate.exec import Executor, LocalExecutor
from linerate.preflight import parse_iperf3_version


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


def fingerprint(host: Executor | None = None) -> dict:
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
