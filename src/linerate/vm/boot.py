"""Booting the built-in guest: the kernel command line and waiting for its agent to answer (used by
the VM testbed, testbed/vm.py, and by the KVM probe, vm/accel.py)."""

from __future__ import annotations

import time
from pathlib import Path

from linerate.errors import ExecError, LabError
from linerate.exec.agent import AgentExecutor
from linerate.process import process_start_time

BOOT_TIMEOUT_S = {"kvm": 30.0, "tcg": 90.0}
KERNEL_APPEND = "console=ttyS0 quiet panic=-1 mitigations=off"


def wait_for_agent(agent: AgentExecutor, qemu_pid: int, timeout_s: float, console: Path) -> float:
    """Seconds until the guest agent answers; LabError (with the console's last lines) when qemu
    exits or the time runs out."""
    started = time.monotonic()
    while True:
        try:
            agent.run(["true"], timeout_s=2)
            return time.monotonic() - started
        except ExecError:
            agent.close()
        gone = process_start_time(qemu_pid) is None
        if gone or time.monotonic() - started > timeout_s:
            tail = console.read_text(errors="replace").strip().splitlines()[-3:] if console.exists() else []
            what = "qemu exited" if gone else f"the guest did not answer within {timeout_s:.0f} s"
            raise LabError(f"VM DUT: {what}" + (f"; console: {' | '.join(tail)}" if tail else ""))
        time.sleep(0.1)
