"""Which accelerator a VM DUT boots with. /dev/kvm can open and KVM_CREATE_VM succeed where a KVM
guest still never runs (no nested virtualisation: the guest hangs burning a core), so KVM is
probed by *booting* the built-in guest with a timeout. The answer is kept for the machine's boot
(keyed by /proc/sys/kernel/random/boot_id) in the state directory's .kvm-probe.

The probe's qemu runs inside a registered probe namespace, like preflight's, so a SIGKILL during
the probe leaves something `linerate lab clean` finds and stops.
"""

from __future__ import annotations

import json
import os
import secrets
from pathlib import Path

from linerate import statedir
from linerate.errors import ConfigError, LabError
from linerate.exec import NetnsExecutor
from linerate.exec.agent import AgentExecutor
from linerate.lab.registry import Registry
from linerate.lab.scratch import scratch_namespace
from linerate.vm.boot import KERNEL_APPEND, wait_for_agent
from linerate.vm.guest_build import current_guest
from linerate.vm.qemu import VmSpec, qemu_argv

KVM_PROBE_TIMEOUT_S = 12.0


def _boot_id() -> str:
    return Path("/proc/sys/kernel/random/boot_id").read_text().strip()


def cache_path() -> Path:
    """In the labs' state directory (linerate's own, 0700; never its parent, which may be a shared
    /tmp), under a name no lab record can have."""
    return Registry().state_dir / ".kvm-probe"


def write_cache(path: Path, text: str) -> None:
    """Into our own directory only (statedir.ensure refuses one that is not), through a new file that
    no link can redirect, renamed into place."""
    statedir.ensure(path.parent)
    temp = path.with_name(f".kvm-probe.{os.getpid()}.{secrets.token_hex(4)}")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    with os.fdopen(fd, "w") as handle:
        handle.write(text)
    os.replace(temp, path)


def cached_kvm_status() -> tuple[bool | None, str]:
    """What is known without booting: (None, why) when KVM has not been probed since boot."""
    try:
        fd = os.open("/dev/kvm", os.O_RDWR | os.O_CLOEXEC)
        os.close(fd)
    except OSError as exc:
        return False, f"/dev/kvm: {exc.strerror}"
    try:
        fd = os.open(cache_path(), os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        with os.fdopen(fd) as handle:
            doc = json.loads(handle.read(4096))
        if doc.get("boot_id") == _boot_id():
            return bool(doc["usable"]), str(doc["why"])
    except (OSError, ValueError, KeyError):
        pass
    return None, "/dev/kvm opens; not probed yet (the first VM lab with dut_accel auto or kvm boots a KVM guest to see)"


def kvm_status(use_cache: bool = True) -> tuple[bool, str]:
    """(usable, why) for KVM on this machine, booting a KVM guest when it was not probed since boot."""
    usable, why = cached_kvm_status() if use_cache else (None, "")
    if usable is not None:
        return usable, why
    if not os.path.exists("/dev/kvm"):
        return False, "/dev/kvm missing"
    usable, why = _probe_by_booting()
    write_cache(cache_path(), json.dumps({"boot_id": _boot_id(), "usable": usable, "why": why}))
    return usable, why


def _probe_by_booting() -> tuple[bool, str]:
    guest = current_guest()
    with scratch_namespace() as (name, probe_id):
        directory = Registry().vm_dir(probe_id)
        directory.mkdir(mode=0o700)
        spec = VmSpec(f"linerate-kvm-probe-{probe_id}", accel="kvm", kernel=guest.kernel, initrd=guest.initrd,
                      append=KERNEL_APPEND, agent_socket=directory / "agent.sock", console_log=directory / "console.log")
        log = directory / "qemu.log"
        proc = NetnsExecutor(name).spawn(qemu_argv(spec, [], []), log=str(log))
        try:
            seconds = wait_for_agent(AgentExecutor(spec.agent_socket), proc.pid, KVM_PROBE_TIMEOUT_S, spec.console_log)
            return True, f"a KVM guest booted in {seconds:.1f} s"
        except LabError as exc:
            said = log.read_text(errors="replace").strip().splitlines()[-1:] if log.exists() else []
            return False, f"a KVM guest did not boot ({exc}{'; qemu: ' + said[0] if said else ''})"


def choose_accel(requested: str) -> str:
    """auto -> kvm when a KVM guest boots here, else tcg; kvm when unusable -> ConfigError."""
    if requested == "tcg":
        return "tcg"
    usable, why = kvm_status()
    if usable:
        return "kvm"
    if requested == "kvm":
        raise ConfigError("dut_accel", f"kvm is not usable on this machine ({why}); use auto or tcg")
    return "tcg"
