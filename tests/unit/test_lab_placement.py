"""Where a kept lab's restarted server goes (lab/placement.py): the cgroup.procs file of each cgroup the server it
replaces was in, found under the mount of that cgroup's hierarchy, on a real machine's /proc/self/cgroup and
/proc/self/mounts (tests/data/lab/cgroup_hybrid_self.json)."""

import json
from pathlib import Path

from linerate.lab.placement import cgroup_procs_files

HYBRID = json.loads((Path(__file__).parent.parent / "data" / "lab" / "cgroup_hybrid_self.json").read_text())


def test_each_hierarchy_is_found_under_its_own_mount():
    files = cgroup_procs_files(HYBRID["cgroup"], HYBRID["mounts"])
    memory = next(line.split(":", 2)[2] for line in HYBRID["cgroup"].splitlines() if line.split(":")[1] == "memory")
    assert f"/sys/fs/cgroup/memory{memory}/cgroup.procs" in files  # a v1 controller under its mount
    assert "/sys/fs/cgroup/systemd/cgroup.procs" in files  # a named hierarchy (name=systemd)
    assert "/sys/fs/cgroup/unified/cgroup.procs" in files  # the v2 hierarchy ("0::/") under the cgroup2 mount
    assert len(files) == len(HYBRID["cgroup"].splitlines())


def test_a_controller_mounted_together_with_another_and_one_not_mounted():
    mounts = "cgroup /sys/fs/cgroup/cpu,cpuacct cgroup rw,nosuid,nodev,noexec,relatime,cpu,cpuacct 0 0\n"
    assert cgroup_procs_files("3:cpu,cpuacct:/a/b/\n5:blkio:/c\n", mounts) == ["/sys/fs/cgroup/cpu,cpuacct/a/b/cgroup.procs"]
