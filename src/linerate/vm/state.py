"""Read back what a VM DUT lab really has: the host side and the guest's interfaces like the
namespace lab (lab/state.py, the guest reached through its agent), plus the virtio features each
guest NIC negotiated — the applied device properties, stored with every trial — and how the
guest was booted (accelerator, vCPUs, memory, boot-to-ready time)."""

from __future__ import annotations

from linerate.errors import LabError
from linerate.exec import Executor, NetnsExecutor
from linerate.lab.apply import read_sysctl
from linerate.lab.state import read_lab_state, read_offloads, verify
from linerate.topology.plan import LabSpec
from linerate.vm.plan import TAPS, VmOptions, host_rps_masks
from linerate.vm.qemu import UNVERIFIABLE_ON, negotiated_features


def read_vm_state(spec: LabSpec, vm: VmOptions, guest: Executor, info: dict,
                  guest_names: dict[str, str] | None = None) -> dict:
    """The namespace lab's read-back with the DUT's interfaces and sysctls read in the guest; the
    dut namespace's veth ends and taps (the wire) under "wire". `guest_names`: the guest's own names
    of its LAN and WAN NICs (an own image's, found by MAC), stored under the role names lan0/wan0."""
    names = guest_names or {port: port for port in TAPS}
    def sysctl(ns: str, key: str) -> str:
        if ns == spec.netns("dut"):
            return " ".join(guest.run(["sysctl", "-n", key], timeout_s=10).stdout.split())
        return read_sysctl(ns, key)

    state = read_lab_state(spec, lambda role: NetnsExecutor(spec.netns(role)), sysctl, rps_masks=host_rps_masks(spec))
    wire = NetnsExecutor(spec.netns("dut"))
    state["wire"] = {"offloads": {port: state["offloads"].pop(f"dut:{port}") for port in TAPS}}
    for port, (tap, _, _) in TAPS.items():
        state["wire"]["offloads"][tap] = read_offloads(wire, tap)
        state["offloads"][f"dut:{port}"] = read_offloads(guest, names[port])
    # one agent round trip (~0.2 s under TCG each) for the guest-only facts
    reads = guest.run_many([argv for port in TAPS for argv in (["cat", f"/sys/class/net/{names[port]}/device/features"],
                                                               ["ls", f"/sys/class/net/{names[port]}/queues"])],
                           timeout_s=10)
    features = {ifname: negotiated_features(reads[2 * i].stdout) for i, ifname in enumerate(TAPS)}
    queues = {ifname: len(reads[2 * i + 1].stdout.split()) // 2 for i, ifname in enumerate(TAPS)}
    state["vm"] = {**{k: v for k, v in info.items() if k not in ("argv", "qemu_pid")},
                   "virtio_offloads": vm.virtio_text, "virtio_features": features, "queues": queues,
                   "vhost": vm.vhost, **({"guest_interfaces": names} if guest_names else {})}
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
