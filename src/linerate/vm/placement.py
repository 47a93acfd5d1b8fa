"""Where a VM DUT's threads and the generator run on the host's CPUs (pure).

A VM DUT measured on the host that also runs the generator is only the DUT's figure when neither
takes the other's CPU time. Each vCPU thread wants a host CPU of its own, qemu's I/O thread (the
main loop moving packets between taps and virtio queues, vhost off) another, and the generator
its two sides (client, server: topology/plan.split_cpus). With enough host CPUs the VM's threads
are pinned to the last CPUs and the generator keeps the others — disjoint. Without (the 2-CPU
machines this project is developed and tested on), nothing is pinned: the guest's threads float
and the placement says which CPUs the generator and the DUT share, so reports and verdicts can
say it, and the `host-contended` verdict measures the vCPU threads' run-queue wait (vm/observe.py).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from linerate.topology.plan import split_cpus


@dataclass(frozen=True)
class Placement:
    vcpu_cpus: tuple[tuple[int, ...], ...]  # per vCPU thread, the host CPUs it may run on
    io_cpus: tuple[int, ...]
    client_cpus: tuple[int, ...]
    server_cpus: tuple[int, ...]
    disjoint: bool
    note: str  # one line for reports: "generator and DUT share host CPU 0-1"
    detail: str  # why, and what it means for the figures

    def summary(self) -> dict:
        return asdict(self)


def cpu_list(cpus: tuple[int, ...] | list[int]) -> str:
    """(0, 1, 2, 5) -> '0-2,5' (the kernel's cpulist format)."""
    ordered, parts = sorted(set(cpus)), []
    for cpu in ordered:
        if parts and parts[-1][1] == cpu - 1:
            parts[-1][1] = cpu
        else:
            parts.append([cpu, cpu])
    return ",".join(str(a) if a == b else f"{a}-{b}" for a, b in parts)


def place(host_cpus: tuple[int, ...] | list[int], vcpus: int) -> Placement:
    cpus = tuple(sorted(host_cpus))
    wanted = vcpus + 1 + 2
    if len(cpus) >= wanted:
        vm, generator = cpus[len(cpus) - vcpus - 1:], cpus[:len(cpus) - vcpus - 1]
        client, server = split_cpus(generator)
        return Placement(tuple((cpu,) for cpu in vm[:vcpus]), (vm[-1],), client, server, True,
                         f"generator and DUT on separate host CPUs (DUT vCPUs on {cpu_list(vm[:vcpus])}, qemu I/O on "
                         f"{vm[-1]}, generator client on {cpu_list(client)}, server on {cpu_list(server)})",
                         "each vCPU thread and qemu's I/O thread is pinned to a host CPU of its own")
    client, server = split_cpus(cpus)
    return Placement(tuple(cpus for _ in range(vcpus)), cpus, client, server, False,
                     f"generator and DUT share host CPU {cpu_list(cpus)}",
                     f"{len(cpus)} host CPU(s) for {vcpus} vCPU(s), qemu's I/O thread and the generator's two sides "
                     f"({wanted} wanted to keep them apart); the guest cannot see the time its vCPUs wait for the "
                     "host (TCG has no steal time): the vm_host telemetry measures it")
