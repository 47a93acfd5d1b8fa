"""Privileged tests build real labs. Each test has its own registry (see tests/conftest.py); the
fixture below removes whatever that registry still lists afterwards — exactly what the test
created, never anything found by name pattern — and then fails the test if anything was left."""

import json
import os
import re
import secrets
import subprocess
import sys
from pathlib import Path

import pytest

from linerate.lab.apply import remove_namespaces
from linerate.lab.registry import Registry
from linerate.vm.accel import cache_path, write_cache
from tests.conftest import netns_names

pytestmark = pytest.mark.privileged


def pytest_collection_modifyitems(items):
    for item in items:
        if "privileged" in str(item.fspath):
            item.add_marker(pytest.mark.privileged)
            if os.geteuid() != 0:
                item.add_marker(pytest.mark.skip(reason="needs root (CI runs these as root)"))


_KVM_PROBE: dict[str, str] = {}  # the first real probe's answer this session (vm/accel.py)


@pytest.fixture(autouse=True)
def kvm_probed_once_per_session():
    """Whether a KVM guest boots here is a fact of the machine's boot, which linerate keeps in its state
    directory (vm/accel.py). Each test has its own state directory, so each VM test would boot the ~14 s KVM
    probe again: the first test that needs it runs it for real, the later ones start with its answer, as the
    commands of one user on one machine do."""
    cache = cache_path()
    if "text" in _KVM_PROBE:
        write_cache(cache, _KVM_PROBE["text"])
    yield
    if "text" not in _KVM_PROBE and cache.is_file():
        _KVM_PROBE["text"] = cache.read_text()


@pytest.fixture(autouse=True)
def leaves_nothing_behind():
    before = netns_names()
    yield
    leftovers = []
    for record in Registry().all():
        leftovers += remove_namespaces(record.namespaces)
        Registry().remove(record.lab_id)
    assert not leftovers, f"test left namespaces behind: {leftovers}"
    assert netns_names() <= before, f"new namespaces remain: {netns_names() - before}"


def pid_alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


LINERATE = [sys.executable, "-m", "linerate"]


def linerate(*argv, check=True, timeout=300):
    """Run the CLI as a user would; with check, a non-zero exit fails the test showing its output."""
    proc = subprocess.run([*LINERATE, *argv], capture_output=True, text=True, timeout=timeout)
    if check:
        assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc


def missed_a_window_read(dut: dict) -> bool:
    """A trial's DUT telemetry that says which window read it lost (trial.py: its generator ended before it, or
    the read ran past the traffic's end, or came too close to the first) and gives no CPU figures for it."""
    return bool(re.search(r"window read \d|window reads were", str(dut.get("partial", "")))) and not dut.get("cpu")


def put_back(state: Path, true: str) -> None:
    """A kept lab's state file as it was before a test forged it, but for the servers it runs now: its iperf3
    servers start again before each command that measures (testbed/namespace.py fresh_servers)."""
    now = json.loads(state.read_text())
    state.write_text(json.dumps({**json.loads(true), "servers": now["servers"]}))


def unique_lab_name(prefix: str) -> str:
    """A lab name no other run chose: `prefix` and random hex, 8 characters (a lab name's most). A fixed name
    meets what a killed run on the same machine left: CI on a reused host found lr-vm1-client already there."""
    return (prefix + secrets.token_hex(4))[:8]
