"""The built-in demos, run through the same experiment engine, store and report as any declared
experiment:
- vm: seed 004's question on a VM DUT — virtio offloads on/off x 1/4 streams through a 2-vCPU
  guest on an emulated 1 Gbit/s link, where the guest's CPUs, not the generator, are the limit;
- namespace: IPv4/IPv6 x 1/4 streams x firewall none/stateful in the namespace lab (the DUT is
  this machine's own kernel, so its cells are generator-bound)."""

from __future__ import annotations

from linerate.experiment.config import Experiment

TABLES = {
    "namespace": """
        [axes]
        family = [4, 6]
        streams = [1, 4]
        firewall = ["none", "stateful"]
        """,
    "vm": """
        [axes]
        streams = [1, 4]
        virtio_offloads = ["on", "off"]
        [fixed]
        dut = "vm"
        dut_vcpus = 2
        virtio_queues = 2
        link_rate = "1g"
        """,
}
DESCRIPTIONS = {
    "namespace": "built-in demo: IPv4/IPv6 x 1/4 streams x firewall none/stateful",
    "vm": "built-in demo: VM DUT (2 vCPUs, 2 queues, 1 Gbit/s link), virtio offloads on/off x 1/4 streams",
}


def demo_experiment(repetitions: int, duration_s: int, omit_s: int, dut: str = "namespace") -> Experiment:
    from linerate.experiment.config import parse_experiment

    return parse_experiment(
        f"""
        name = "{'demo' if dut == 'namespace' else 'demo-vm'}"
        description = "{DESCRIPTIONS[dut]}"
        repetitions = {int(repetitions)}
        duration_s = {int(duration_s)}
        omit_s = {int(omit_s)}
        {TABLES[dut]}
        """,
        source="demo options",
    )


def vm_demo_unavailable() -> str | None:
    """Why the VM demo cannot run here (None: it can)."""
    import os
    import shutil

    if shutil.which("qemu-system-x86_64") is None:
        return "qemu-system-x86_64 is not installed (make install adds it)"
    if not os.path.exists("/dev/net/tun"):
        return "/dev/net/tun is missing"
    return None
