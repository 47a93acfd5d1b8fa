"""Placing a kept lab's restarted server as the one it replaced (lab/placement.py), on real processes: the probe that
checks a placement can be given must not reach the autogroup of the command's own session (sched(7): one autogroup per
session; a command run in init's session, as a CI job may be, has the root task group there, whose nice the kernel
refuses to set with EINVAL), and a placement that cannot be given names the step that failed."""

import os
import subprocess
from pathlib import Path

import pytest

from linerate.lab.placement import Placement, givable

OWN_AUTOGROUP = Path("/proc/self/autogroup")


def a_server() -> subprocess.Popen:
    """A process started as a lab's server is (exec/local.py: a session of its own)."""
    return subprocess.Popen(["sleep", "60"], start_new_session=True)


def own_autogroup_nice() -> str | None:
    try:
        return OWN_AUTOGROUP.read_text().rpartition(" nice ")[2].strip() or None
    except OSError:
        return None


def test_probing_a_servers_placement_leaves_this_sessions_autogroup_as_it_was():
    if not OWN_AUTOGROUP.exists():
        pytest.skip("this kernel has no autogroups (CONFIG_SCHED_AUTOGROUP)")
    server = a_server()
    original = own_autogroup_nice()
    try:
        place = Placement.of(server.pid)
        assert place.autogroup_nice  # the server's session has an autogroup of its own: the probe sets its nice
        if original is not None:  # a session with an autogroup: give it a nice the server's does not have
            OWN_AUTOGROUP.write_text("3")
        assert givable([place]) is None  # in init's session this was EINVAL: the probe shared its autogroup
        if original is not None:
            assert own_autogroup_nice() == "3"
    finally:
        if original is not None:
            OWN_AUTOGROUP.write_text(original)
        server.kill()
        server.wait()


def test_a_placement_that_cannot_be_given_names_the_step():
    server = a_server()
    try:
        place = Placement.of(server.pid)
    finally:
        server.kill()
        server.wait()
    impossible = Placement(place.nice, place.policy, place.priority, frozenset({os.cpu_count() + 4096}),
                           place.limits, place.cgroup_procs, place.autogroup_nice)
    problem = givable([impossible])
    assert problem is not None and f"setting its CPUs to [{os.cpu_count() + 4096}]" in problem, problem
    assert problem.startswith("cannot place a server as the one it replaced"), problem
