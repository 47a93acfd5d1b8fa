"""VM DUT timings: boot-to-ready of the built-in guest (qemu start until its agent answers),
lab up and down with a VM DUT, and what DUT telemetry reads cost through the agent compared with
the same reads in a namespace DUT, side by side in one run: the window read (per-CPU time,
interrupts, backlog: files the agent reads itself, no fork) that happens twice inside every
trial's measured window, and the full read (interface, forwarding and qdisc counters: commands)
before and after each run. Goals: ready in under 10 s under TCG on the 2-core development
machine (issue 13); one window read <= 50 ms (issue 25).
Run as root: .venv/bin/python bench/vm_boot.py [ROUNDS]
"""

from __future__ import annotations

import statistics
import sys
import time

from linerate.dut.linux import LinuxDriver
from linerate.testbed.base import lab_testbed, new_lab_id


def main(rounds: int) -> None:
    ups, downs, boots, vm_reads, ns_reads, vm_full, ns_full = [], [], [], [], [], [], []
    driver = LinuxDriver()
    for _ in range(rounds):
        started = time.monotonic()
        lab = lab_testbed(new_lab_id(), {"dut": "vm", "dut_accel": "tcg"})
        with lab:
            ups.append(time.monotonic() - started)
            boots.append(lab.state["vm"]["boot_to_ready_s"])
            for _ in range(5):
                began = time.monotonic()
                driver.window_snapshot(lab.executor("dut"))
                vm_reads.append(time.monotonic() - began)
                began = time.monotonic()
                driver.snapshot(lab.executor("dut"))
                vm_full.append(time.monotonic() - began)
            began = time.monotonic()
        downs.append(time.monotonic() - began)
        with lab_testbed(new_lab_id(), {}) as namespace_lab:
            for _ in range(5):
                began = time.monotonic()
                driver.window_snapshot(namespace_lab.executor("dut"))
                ns_reads.append(time.monotonic() - began)
                began = time.monotonic()
                driver.snapshot(namespace_lab.executor("dut"))
                ns_full.append(time.monotonic() - began)
    med = statistics.median
    print(f"built-in guest, TCG, 1 vCPU, {rounds} rounds (median, min-max):")
    print(f"  boot to ready  {med(boots):6.2f} s  ({min(boots):.2f}-{max(boots):.2f})   goal < 10 s")
    print(f"  lab up         {med(ups):6.2f} s  ({min(ups):.2f}-{max(ups):.2f})")
    print(f"  lab down       {med(downs):6.2f} s  ({min(downs):.2f}-{max(downs):.2f})")
    print(f"  window read    {med(vm_reads) * 1000:6.1f} ms through the agent (max {max(vm_reads) * 1000:.1f}) vs "
          f"{med(ns_reads) * 1000:.1f} ms in a namespace DUT: ratio {med(vm_reads) / med(ns_reads):.2f}   goal <= 50 ms")
    print(f"  full read      {med(vm_full) * 1000:6.1f} ms through the agent vs {med(ns_full) * 1000:.1f} ms in a "
          f"namespace DUT (outside the measured window: before and after each run)")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 3)
