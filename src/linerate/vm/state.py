"""Read back what a VM DUT lab really has: the host side and the guest's interfaces like the
namespace lab (lab/state.py, the guest reached through its agent), plus the virtio features each
guest NIC negotiated — the applied device properties, stored with every trial — and how the
guest was booted (accelerator, vCPUs, memory, boot-to-ready time)."""

from __future__ import annotations

from collections.abc import Callable

from linerate.errors import LabError
from linerate.exec import Executor
from linerate.lab.state import read_lab_state, verify
from linerate.topology.plan import DUT_LAN_IF, DUT_WAN_IF, LabSpec
from linerate.vm.plan import VmOptions, host_rps_masks
from linerate.vm.qemu import UNVERIFIABLE_ON, negotiated_features


def read_vm_state(spec: LabSpec, vm: VmOptions, executor: Callable[[str], Executor], info: dict) -> dict:
    from linerate.lab.apply import read_sysctl

    guest = executor("dut")

    def sysctl(ns: str, key: str) -> str:
        if ns == spec.netns("dut"):
            return " ".join(guest.run(["sysctl", "-n", key], timeout_s=10).stdout.split())
        return read_sysctl(ns, key)

    state = read_lab_state(spec, executor, sysctl, rps_masks=host_rps_masks(spec))
    features = {ifname: negotiated_features(guest.run(["cat", f"/sys/class/net/{ifname}/device/features"],
                                                      timeout_s=10).stdout)
                for ifname in (DUT_LAN_IF, DUT_WAN_IF)}
    queues = {ifname: len(guest.run(["ls", f"/sys/class/net/{ifname}/queues"], timeout_s=10).stdout.split()) // 2
              for ifname in (DUT_LAN_IF, DUT_WAN_IF)}
    state["vm"] = {**{k: v for k, v in info.items() if k not in ("argv", "qemu_pid")},
                   "virtio_offloads": vm.virtio_text, "virtio_features": features, "queues": queues,
                   "vhost": vm.vhost}
    return state


def verify_vm(spec: LabSpec, vm: VmOptions, state: dict) -> None:
    """LabError naming each requested knob the guest does not have."""
    verify(spec, state, rps_masks=host_rps_masks(spec))
    problems = []
    for ifname, negotiated in state["vm"]["virtio_features"].items():
        for name, wanted in vm.virtio.items():
            if negotiated[name] != wanted and not (wanted == "on" and name in UNVERIFIABLE_ON):
                problems.append(f"virtio {name}={wanted} on {ifname}: the guest negotiated {negotiated[name]}")
        expected = min(vm.queues, vm.vcpus)  # virtio-net uses one queue pair per vCPU at most
        if state["vm"]["queues"][ifname] != expected:
            problems.append(f"virtio_queues={vm.queues} with {vm.vcpus} vCPU(s) on {ifname}: the guest uses "
                            f"{state['vm']['queues'][ifname]} queue pair(s), not {expected}")
    if problems:
        raise LabError("a VM knob did not take effect: " + "; ".join(problems))
