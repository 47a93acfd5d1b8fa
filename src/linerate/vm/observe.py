"""What the host sees of a VM DUT: qemu's threads, read from /proc with no guest involvement.

qemu started with `-name ...,debug-threads=on` names each vCPU thread "CPU <n>/TCG" (or "/KVM");
the main thread (the process's own pid) runs the I/O loop that moves packets between the taps and
the virtio queues when vhost is off. For each thread, proc(5):
- /proc/PID/task/TID/schedstat: time spent on a CPU, time spent *runnable but waiting* for one
  (ns), and timeslices. The wait is host contention: the guest cannot see it (TCG has no steal
  time), so a guest CPU at 60% may be a vCPU thread that waited for the host 40% of the window.
- /proc/PID/task/TID/stat: field 39, the host CPU the thread last ran on.
Sampled with each window read of a trial (pure file reads on the host, ~1 ms), stored as
telemetry["vm_host"]; the `host-contended` verdict reads the vCPU threads' wait.
"""

from __future__ import annotations

import os
import re
import time
from dataclasses import dataclass
from pathlib import Path

from linerate.numbers import is_ascii_int

VCPU_THREAD = re.compile(r"^CPU (\d+)/(TCG|KVM)$")


def parse_schedstat(text: str) -> tuple[int, int]:
    """'run_ns wait_ns timeslices' -> (run_ns, wait_ns)."""
    fields = text.split()
    if len(fields) < 2 or not is_ascii_int(fields[0]) or not is_ascii_int(fields[1]):
        raise ValueError(f"schedstat {text[:40]!r} is not 'run_ns wait_ns timeslices'")
    return int(fields[0]), int(fields[1])


def parse_last_cpu(stat: str) -> int | None:
    """Field 39 (processor) of /proc/PID/task/TID/stat; the name in field 2 may hold spaces and ')'."""
    fields = stat.rpartition(")")[2].split()
    return int(fields[36]) if len(fields) > 36 and is_ascii_int(fields[36]) else None


def thread_role(name: str, tid: int, pid: int) -> str | None:
    match = VCPU_THREAD.match(name)
    if match:
        return f"vcpu{match.group(1)}"
    if tid == pid:
        return "io"
    return None


@dataclass(frozen=True)
class ThreadSample:
    role: str
    name: str
    run_ns: int
    wait_ns: int
    host_cpu: int | None


def read_threads(pid: int, proc: Path = Path("/proc")) -> list[ThreadSample]:
    """qemu's vCPU threads and its main (I/O) thread now; [] when the process is gone."""
    out = []
    try:
        tids = sorted(int(t) for t in os.listdir(proc / str(pid) / "task") if is_ascii_int(t))
    except OSError:
        return []
    for tid in tids:
        base = proc / str(pid) / "task" / str(tid)
        try:
            name = (base / "comm").read_text().strip()
            role = thread_role(name, tid, pid)
            if role is None:
                continue
            run_ns, wait_ns = parse_schedstat((base / "schedstat").read_text())
            out.append(ThreadSample(role, name, run_ns, wait_ns, parse_last_cpu((base / "stat").read_text())))
        except (OSError, ValueError):
            continue  # a thread that ended between listdir and read
    return out


def thread_tids(pid: int, proc: Path = Path("/proc")) -> dict[str, int]:
    """role -> thread id (vcpu0, vcpu1 ..., io), for placing them on host CPUs."""
    out = {}
    try:
        tids = sorted(int(t) for t in os.listdir(proc / str(pid) / "task") if is_ascii_int(t))
    except OSError:
        return {}
    for tid in tids:
        try:
            name = (proc / str(pid) / "task" / str(tid) / "comm").read_text().strip()
        except OSError:
            continue
        role = thread_role(name, tid, pid)
        if role is not None:
            out[role] = tid
    return out


def threads_delta(before: list[ThreadSample], after: list[ThreadSample], window_s: float) -> dict:
    """Per thread: busy % (on a host CPU) and wait % (runnable, waiting for a host CPU) of the window."""
    if window_s <= 0:
        return {}
    old = {t.role: t for t in before}
    threads = []
    for new in after:
        prior = old.get(new.role)
        if prior is None:
            continue
        busy = 100.0 * max(0, new.run_ns - prior.run_ns) / (window_s * 1e9)
        wait = 100.0 * max(0, new.wait_ns - prior.wait_ns) / (window_s * 1e9)
        threads.append({"thread": new.role, "name": new.name, "busy_pct": round(min(100.0, busy), 1),
                        "wait_pct": round(min(100.0, wait), 1), "host_cpu": new.host_cpu})
    vcpus = [t for t in threads if t["thread"].startswith("vcpu")]
    out: dict = {"threads": threads}
    if vcpus:
        out["vcpu_wait_pct_max"] = max(t["wait_pct"] for t in vcpus)
        out["vcpu_busy_pct_max"] = max(t["busy_pct"] for t in vcpus)
    return out


class QemuThreads:
    """A HostObserver (trial.py) of one qemu process."""

    name = "vm_host"

    def __init__(self, pid: int, placement: dict | None = None):
        self.pid = pid
        self.placement = placement or {}

    def sample(self) -> tuple[float, list[ThreadSample]]:
        return time.monotonic(), read_threads(self.pid)

    def delta(self, before, after, window_s: float) -> dict:
        (t0, first), (t1, second) = before, after
        out = threads_delta(first, second, t1 - t0)
        if self.placement:
            out["placement"] = self.placement
        return out
