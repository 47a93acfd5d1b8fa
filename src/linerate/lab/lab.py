"""Lab: a live client -> DUT -> server lab built from a LabSpec, torn down on every way out.

Use as a context manager. Teardown runs on normal exit, exceptions, SIGINT, SIGTERM and SIGHUP;
for SIGKILL the registry record lets `linerate lab clean` finish the job.
"""

from __future__ import annotations

import os
import secrets
import signal
import time
from pathlib import Path

from linerate.errors import LabError
from linerate.exec import NetnsExecutor
from linerate.lab.apply import apply_plan, pids_in_netns, read_sysctl, remove_namespaces
from linerate.lab.registry import LabRecord, Registry, vet
from linerate.lab.signals import TERMINATIONS, raise_interrupted
from linerate.lab.state import read_lab_state, verify
from linerate.process import ProcessRef
from linerate.model import Trial, TrialParams
from linerate.topology.plan import LabSpec, build_plan, server_address
from linerate.traffic import iperf3
from linerate.dut.linux import LinuxDriver
from linerate.trial import measure_read_cost_or_none, run_trial

SERVER_READY_TIMEOUT_S = 5.0
TEARDOWN_SIGNALS = TERMINATIONS


def new_lab_id() -> str:
    return secrets.token_hex(3)


class Lab:
    def __init__(self, spec: LabSpec, registry: Registry | None = None, keep: bool = False,
                 params: dict | None = None):
        self.spec = spec
        self.params = dict(params or {})
        self.registry = registry or Registry()
        self.keep = keep
        self.record: LabRecord | None = None
        self.record_is_ours = False
        self.state: dict = {}
        self.read_cost_s: float | None = None  # one DUT window read, measured once the lab is up
        self._saved_handlers: dict[int, object] = {}

    # --- lifecycle ------------------------------------------------------------------------------

    def up(self) -> "Lab":
        owner = None if self.keep else ProcessRef.of(os.getpid())
        record = LabRecord(self.spec.lab_id, str(self.spec.firewall), self.spec.mtu, owner, params=self.params)
        self.registry.create(record)  # refuses a taken name; the other lab's record stays as it is
        self.record, self.record_is_ours = record, True

        def remember(ns: str) -> None:
            self.record.namespaces.append(ns)
            self.registry.save(self.record)

        apply_plan(build_plan(self.spec), on_namespace=remember)
        self.state = read_lab_state(self.spec, self.executor, read_sysctl)
        verify(self.spec, self.state)
        self.start_server()
        self.read_cost_s = measure_read_cost_or_none(LinuxDriver(), self.executor("dut"))
        return self

    def down(self) -> list[str]:
        """Remove what this lab's record lists — nothing when it never got a record of its own.
        A record read back from the state directory is vetted first; one this process wrote and
        kept in memory is not (it lists only what this process created)."""
        if self.record is None:
            return []
        problems = [] if self.record_is_ours else vet(self.record)
        if problems:
            raise LabError(f"lab {self.spec.lab_id} left untouched: " + "; ".join(problems))
        removed = remove_namespaces(list(self.record.namespaces))
        self.registry.remove(self.spec.lab_id)
        self.record = None
        return removed

    def __enter__(self) -> "Lab":
        for sig in TEARDOWN_SIGNALS:
            self._saved_handlers[sig] = signal.signal(sig, raise_interrupted)
        try:
            return self.up()
        except BaseException:
            self._teardown()
            raise

    def __exit__(self, *exc_info) -> None:
        self._teardown()

    def _teardown(self) -> None:
        # Ignore further termination signals while removing, so a second Ctrl-C or TERM cannot
        # leave the lab half removed; restore the caller's handlers afterwards.
        for sig in (*TEARDOWN_SIGNALS, signal.SIGINT):
            previous = signal.signal(sig, signal.SIG_IGN)
            self._saved_handlers.setdefault(sig, previous)
        try:
            self.down()
        finally:
            for sig, handler in self._saved_handlers.items():
                signal.signal(sig, handler)
            self._saved_handlers.clear()

    def describe_plan(self) -> str:
        return build_plan(self.spec).describe()

    # --- use ------------------------------------------------------------------------------------

    def executor(self, role: str) -> NetnsExecutor:
        return NetnsExecutor(self.spec.netns(role), self.spec.cpus(role))

    def start_server(self) -> None:
        proc = self.executor("server").spawn(iperf3.server_argv(self.spec.iperf_port))
        if self.record is not None:
            self.record.servers.append(ProcessRef.of(proc.pid))
            self.registry.save(self.record)
        self._wait_listening()

    def _wait_listening(self) -> None:
        deadline = time.monotonic() + SERVER_READY_TIMEOUT_S
        while time.monotonic() < deadline:
            if _listening(self.spec.netns("server"), self.spec.iperf_port):
                return
            time.sleep(0.01)
        raise LabError(f"iperf3 server in {self.spec.netns('server')} did not listen on port "
                       f"{self.spec.iperf_port} within {SERVER_READY_TIMEOUT_S:.0f} s")

    def server_pids(self) -> list[int]:
        return pids_in_netns(self.spec.netns("server"))

    def run_trial(self, params: TrialParams) -> Trial:
        return run_trial(self.executor("client"), self.executor("dut"), params,
                         server_address(params.family), shared_kernel=True, read_cost_s=self.read_cost_s)


def _listening(ns: str, port: int) -> bool:
    """Is a TCP socket listening on `port` inside namespace ns? Reads /proc/<pid>/net/tcp6 of a
    process inside the namespace, which shows that namespace's sockets."""
    for pid in pids_in_netns(ns):
        for table in ("tcp6", "tcp"):
            try:
                lines = Path(f"/proc/{pid}/net/{table}").read_text().splitlines()[1:]
            except OSError:
                continue
            for line in lines:
                fields = line.split()
                if fields[3] == "0A" and int(fields[1].rsplit(":", 1)[1], 16) == port:
                    return True
    return False


def make_lab(lab_id: str, lab_params: dict, *, keep: bool = False, registry: Registry | None = None) -> Lab:
    """The lab for one combination of lab-scoped axis values: a namespace DUT, or a VM DUT
    (dut = "vm", vm/lab.py) between the same client and server namespaces."""
    from linerate.experiment.axes import lab_spec

    spec = lab_spec(lab_id, lab_params)
    if lab_params.get("dut") != "vm":
        return Lab(spec, registry, keep=keep, params=lab_params)
    import dataclasses

    from linerate.experiment.axes import vm_params
    from linerate.vm.lab import VmLab
    from linerate.vm.placement import place
    from linerate.vm.plan import vm_options

    options = vm_options(vm_params(lab_params))
    placement = place(tuple(os.sched_getaffinity(0)), options.vcpus)
    spec = dataclasses.replace(spec, cpu_sides=(placement.client_cpus, placement.server_cpus))
    return VmLab(spec, options, registry, keep=keep, params=lab_params, placement=placement)


def lab_from_record(record: LabRecord, registry: Registry) -> Lab:
    from linerate.errors import ConfigError
    from linerate.model import FirewallProfile

    try:
        if record.params.get("dut") == "vm":
            lab = make_lab(record.lab_id, record.params, keep=record.owner is None, registry=registry)
        else:
            spec = LabSpec(record.lab_id, FirewallProfile.parse(record.firewall), record.mtu)
            lab = Lab(spec, registry, keep=record.owner is None, params=record.params)
    except (ConfigError, KeyError, TypeError, ValueError) as exc:
        raise LabError(f"state file of lab {record.lab_id} is malformed ({exc}); left untouched") from None
    lab.record = record
    return lab


def find_lab(name: str, registry: Registry) -> Lab:
    from linerate.model import validate_lab_name

    record = registry.load(validate_lab_name(name, "lab"))
    if record is None or record.kind != "lab":
        known = ", ".join(r.lab_id for r in registry.all()) or "none"
        raise LabError(f"no lab named '{name}' (labs: {known}); see `linerate lab status`")
    return lab_from_record(record, registry)
