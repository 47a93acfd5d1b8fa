"""Process identity that survives pid reuse: a pid plus its start time (field 22 of /proc/PID/stat).

Used wherever linerate decides whether a process it recorded is still the same process — the
owner of a lab, an iperf3 server it started, the holder of a run lock — so that a recycled pid is
never signalled and a dead owner is recognised as dead.
"""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass
from pathlib import Path


def process_start_time(pid: int) -> int | None:
    """Start time in clock ticks since boot, None if the process is gone (a zombie is gone: it
    has exited and only waits to be reaped, perhaps by an init that never reaps)."""
    try:
        stat = Path(f"/proc/{int(pid)}/stat").read_text()
    except (OSError, ValueError):
        return None
    # The command name (field 2) may contain spaces and parentheses; fields follow the last ')'.
    try:
        fields = stat.rsplit(")", 1)[1].split()
        return None if fields[0] in ("Z", "X") else int(fields[19])
    except (IndexError, ValueError):
        return None


def net_namespace_id(pid: int) -> tuple[int, int] | None:
    """(st_dev, st_ino) of the network namespace a process is in, None if gone."""
    try:
        st = os.stat(f"/proc/{int(pid)}/ns/net")
    except (OSError, ValueError):
        return None
    return st.st_dev, st.st_ino


@dataclass(frozen=True)
class ProcessRef:
    pid: int
    start_time: int | None

    @classmethod
    def of(cls, pid: int) -> "ProcessRef":
        return cls(pid, process_start_time(pid))

    @classmethod
    def me(cls) -> "ProcessRef":
        return cls.of(os.getpid())

    def alive(self) -> bool:
        return self.start_time is not None and process_start_time(self.pid) == self.start_time


def this_host() -> str:
    return socket.gethostname()
