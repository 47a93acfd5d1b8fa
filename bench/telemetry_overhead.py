"""What DUT telemetry costs the measurement: the same trials with and without it, alternating in
one lab and one run (goal: throughput ratio with/without >= 0.99 in the namespace lab, issue #12;
>= 0.97 on the VM DUT, issue #25). "With" is the full telemetry of a trial (trial.py: counters
before and after the run, two window reads inside it, and for a VM the host's view of qemu's
threads); "without" runs the identical iperf3 with no DUT read at all.

--dut namespace (default): three labs — unshaped (generator-bound; veth TCP there varies by tens of
percent between trials, so its ratio needs many pairs), a DUT walking 1,000 stateless rules per
packet (CPU-bound on the shared cores: any CPU the reads take shows), and a 1 Gbit/s link.
--dut vm: the VM demo's DUT (2 vCPUs, 2 queues, 1 Gbit/s link) with virtio offloads off — the
guest's CPU is the limit there, so a read that took guest CPU would show.
Run as root: .venv/bin/python bench/telemetry_overhead.py [--dut namespace|vm] [PAIRS] [DURATION_S]"""

from __future__ import annotations

import argparse
import statistics

from linerate.dut.linux import LinuxDriver
from linerate.testbed.base import lab_testbed, new_lab_id
from linerate.testbed.namespace import NamespaceTestbed
from linerate.model import FirewallProfile, TrialParams
from linerate.topology.link import LinkSpec
from linerate.topology.plan import LabSpec, server_address
from linerate.trial import run_trial


def measure(lab, pairs: int, params: TrialParams, shared_kernel: bool, observers=None) -> tuple[list[float], list[float]]:
    with_t, without = [], []
    client, dut = lab.executor("client"), lab.executor("dut")
    for index in range(pairs):  # alternate, and swap the order every pair: drift hits both alike
        order = (True, False) if index % 2 == 0 else (False, True)
        for telemetry in order:
            trial = run_trial(client, dut if telemetry else None, params, server_address(4), driver=LinuxDriver(),
                              shared_kernel=shared_kernel, read_cost_s=lab.read_cost_s,
                              observers=(observers or []) if telemetry else [])
            if not trial.ok:
                raise SystemExit(f"trial failed: {trial.error}")
            if telemetry and trial.telemetry["dut"].get("partial"):
                print(f"    note: partial telemetry: {trial.telemetry['dut']['partial']}")
            (with_t if telemetry else without).append(trial.throughput_bps)
    return with_t, without


def report(label: str, with_t: list[float], without: list[float], goal: float) -> None:
    a, b = statistics.mean(with_t), statistics.mean(without)
    print(f"  {label:32s} with telemetry {a / 1e6:9,.1f} Mbit/s, without {b / 1e6:9,.1f} Mbit/s, "
          f"ratio {a / b:.4f} (goal >= {goal}: {'met' if a / b >= goal else 'NOT met'}); "
          f"stdev {statistics.stdev(with_t) / 1e6:,.1f} / {statistics.stdev(without) / 1e6:,.1f}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--dut", choices=("namespace", "vm"), default="namespace")
    parser.add_argument("pairs", nargs="?", type=int, default=8)
    parser.add_argument("duration_s", nargs="?", type=int, default=3)
    args = parser.parse_args()
    params = TrialParams(duration_s=args.duration_s, omit_s=1)
    print(f"{args.pairs} alternating pairs of {args.duration_s}-s trials (omit 1 s) per lab, IPv4 1 stream:")
    if args.dut == "vm":
        from linerate.vm.observe import QemuThreads

        lab_params = {"dut": "vm", "dut_vcpus": 2, "virtio_queues": 2, "link_rate": "1g", "virtio_offloads": "off"}
        with lab_testbed(new_lab_id(), lab_params) as lab:
            print(f"  one window read through the agent: {lab.read_cost_s * 1000:.1f} ms (idle)")
            with_t, without = measure(lab, args.pairs, params, False, [QemuThreads(lab.vm_info["qemu_pid"])])
        report("VM DUT, offloads off (guest-bound)", with_t, without, 0.97)
        return
    for label, spec in (("unshaped veth (generator-bound)", LabSpec(new_lab_id())),
                        ("rules-stateless:1000 (CPU-bound)",
                         LabSpec(new_lab_id(), firewall=FirewallProfile.parse("rules-stateless:1000"))),
                        ("emulated 1 Gbit/s link", LabSpec(new_lab_id(), link=LinkSpec(rate_bps=1e9)))):
        with NamespaceTestbed(spec) as lab:
            with_t, without = measure(lab, args.pairs, params, True)
        report(label, with_t, without, 0.99)


if __name__ == "__main__":
    main()
