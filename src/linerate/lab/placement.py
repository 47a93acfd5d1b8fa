"""Where and how a process runs, read from one process and given to another: a kept lab's iperf3 server that
starts again (before each command measures, after a trial that asked for a congestion control) takes the
place of the one it replaces, not that of the command that restarted it (another login session's cgroup,
`nice linerate ...`, a shell's `ulimit -n`). What a kept lab's snapshot compares of its processes
(lab/snapshot.py processes) is what this carries over: nice, scheduling policy, CPUs allowed, resource
limits and cgroups (sched(7), getrlimit(2), cgroups(7))."""

from __future__ import annotations

import os
import resource
import subprocess
from dataclasses import dataclass
from pathlib import Path

from linerate.errors import LabError

LIMITS = tuple(getattr(resource, name) for name in sorted(dir(resource)) if name.startswith("RLIMIT_"))
MOUNT_OPTIONS = frozenset({"rw", "ro", "relatime", "noatime", "nosuid", "nodev", "noexec", "seclabel"})


@dataclass(frozen=True)
class Placement:
    nice: int
    policy: int
    priority: int
    cpus: frozenset[int]
    limits: tuple[tuple[int, tuple[int, int]], ...]
    cgroup_procs: tuple[str, ...]  # the cgroup.procs file of each cgroup the process is in
    autogroup_nice: str = ""  # its session's autogroup's (sched(7)); "" without autogroups

    @classmethod
    def of(cls, pid: int) -> "Placement":
        """The process's placement; LabError when it is gone or cannot be read."""
        try:
            return cls(os.getpriority(os.PRIO_PROCESS, pid), os.sched_getscheduler(pid),
                       os.sched_getparam(pid).sched_priority, frozenset(os.sched_getaffinity(pid)),
                       tuple((limit, resource.prlimit(pid, limit)) for limit in LIMITS),
                       tuple(cgroup_procs_files(Path(f"/proc/{pid}/cgroup").read_text(),
                                                Path("/proc/self/mounts").read_text())), _autogroup_nice(pid))
        except OSError as e:
            raise LabError(f"cannot read how the lab's process {pid} is placed: {e.strerror or e}") from e

    def give(self, pid: int) -> None:
        """Place process pid so; LabError naming the step that could not be taken."""
        steps = [*((f"moving it into {procs.removesuffix('/cgroup.procs')}",
                    lambda procs=procs: Path(procs).write_text(f"{pid}\n")) for procs in self.cgroup_procs),
                 *((f"setting its {_limit_name(limit)} to {values}",
                    lambda limit=limit, values=values: resource.prlimit(pid, limit, values))
                   for limit, values in self.limits),
                 (f"setting its CPUs to {sorted(self.cpus)}", lambda: os.sched_setaffinity(pid, self.cpus)),
                 (f"setting its scheduling policy to {self.policy}",
                  lambda: os.sched_setscheduler(pid, self.policy, os.sched_param(self.priority))),
                 (f"setting its nice to {self.nice}", lambda: os.setpriority(os.PRIO_PROCESS, pid, self.nice))]
        if self.autogroup_nice:
            steps.append((f"setting its autogroup's nice to {self.autogroup_nice}",
                          lambda: Path(f"/proc/{pid}/autogroup").write_text(self.autogroup_nice)))
        for what, step in steps:
            try:
                step()
            except (OSError, ValueError) as e:
                raise LabError(f"cannot place the lab's restarted server {pid} as the one it replaced ({what}): "
                               f"{e}") from e


def _limit_name(limit: int) -> str:
    return next((name for name in sorted(dir(resource)) if name.startswith("RLIMIT_")
                 and getattr(resource, name) == limit), str(limit))


def _autogroup_nice(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/autogroup").read_text().rpartition(" nice ")[2].strip()
    except OSError:
        return ""


def givable(places: list[Placement]) -> str | None:
    """None when each placement can be given by this process, else why not: each is given to a throwaway
    `sleep` first (a command run under a lower `ulimit -n` cannot raise a hard limit without CAP_SYS_RESOURCE),
    so that a server is stopped only once the one that replaces it can be placed as it was. The probe starts in
    a session of its own, as a server does (exec/local.py): its autogroup is then its own, never that of this
    command's session, whose nice it would change, and which the kernel refuses to set (EINVAL) when the command
    runs in init's session, whose autogroup is the root task group (kernel/sched/autogroup.c)."""
    for place in places:
        probe = subprocess.Popen(["sleep", "60"], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                 stderr=subprocess.DEVNULL, start_new_session=True)
        try:
            place.give(probe.pid)
        except LabError as e:
            return str(e).replace(f"the lab's restarted server {probe.pid}", "a server")
        finally:
            probe.kill()
            probe.wait()
    return None


def cgroup_procs_files(cgroups: str, mounts: str) -> list[str]:
    """proc(5) /proc/PID/cgroup ("4:memory:/a") and /proc/self/mounts -> the cgroup.procs file of each cgroup the
    process is in (cgroup_hierarchies)."""
    return [f"{mount}{path.rstrip('/')}/cgroup.procs" for _, mount, path in cgroup_hierarchies(cgroups, mounts)]


def cgroup_hierarchies(cgroups: str, mounts: str) -> list[tuple[str, str, str]]:
    """proc(5) /proc/PID/cgroup and /proc/self/mounts -> (controllers, where its hierarchy is mounted, the cgroup's
    path in it) for each hierarchy the process is in: v1, the mount whose options name its controllers (or
    "name=systemd"); v2 ("0::/a"), the cgroup2 mount (/sys/fs/cgroup on a host with v2 alone, .../unified beside
    v1). A hierarchy with no mount here is left out."""
    v1: list[tuple[frozenset[str], str]] = []
    v2 = None
    for line in mounts.splitlines():
        fields = line.split()
        if len(fields) >= 4 and fields[2] == "cgroup":
            v1.append((frozenset(fields[3].split(",")) - MOUNT_OPTIONS, fields[1]))
        elif len(fields) >= 4 and fields[2] == "cgroup2" and v2 is None:
            v2 = fields[1]
    found = []
    for line in cgroups.splitlines():
        _, controllers, path = line.split(":", 2) if line.count(":") >= 2 else ("", "", "")
        if controllers:
            wanted = frozenset(controllers.split(","))
            mount = next((where for options, where in v1 if wanted <= options), None)
        else:
            mount = v2
        if mount is not None and path.startswith("/"):
            found.append((controllers, mount, path))
    return found
