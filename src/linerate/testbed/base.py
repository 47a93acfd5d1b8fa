"""The Testbed seam: what every client -> DUT -> server testbed offers, declared once.

Three implementations sit beside this file: the namespace lab (namespace.py: the DUT is this host's
kernel in a namespace), the VM DUT (vm.py: a qemu guest between the same client and server
namespaces) and real hosts over SSH (ssh.py). A run gets its testbeds from a `Testbeds` — one
`Testbed` per combination of lab-scoped axis values, entered as a context manager — made by
`open_testbeds()`. Code outside testbed/ holds a Testbed or Testbeds and never asks which type it is:
what differs (whether the DUT shares the generator's CPUs, where counters come from, how knobs are
switched, what the environment records) is a member of the protocol.

The implementations do not import this module (the protocols are structural), so it may import
them all.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import secrets
import shutil
from collections.abc import Callable, Iterator
from typing import Any, ContextManager, Protocol

from linerate import preflight
from linerate.axes import AXES, lab_spec, vm_params
from linerate.dut.base import DutDriver
from linerate.errors import ConfigError, LabError, PreflightError
from linerate.exec import Executor
from linerate.lab.registry import LabRecord, Registry
from linerate.lab.signals import terminations_deferred, terminations_raise
from linerate.model import FirewallProfile, Trial, TrialParams, validate_lab_name
from linerate.store.db import Store
from linerate.testbed.fingerprint import controller_fingerprint
from linerate.testbed.inventory import Inventory
from linerate.testbed.knobs import refuse_unsupported
from linerate.testbed.kept_sweep import own_scratch, stop_leftover_programs
from linerate.testbed.namespace import NamespaceTestbed
from linerate.testbed.requirements import local_problems, required_features
from linerate.testbed.ssh import SshTestbeds
from linerate.testbed.vm import VmTestbed
from linerate.testbed.vm_image import ImageVmTestbed
from linerate.trial import measure_read_cost_or_none
from linerate.topology.plan import LabSpec, split_cpus
from linerate.vm.placement import place
from linerate.vm.plan import vm_options


class Testbed(Protocol):
    """One live combination of lab-scoped axis values: roles -> executors, the DUT's driver, the
    path's line rate, whether the DUT shares the generator's CPUs, the environment a run records,
    the DUT's knobs applied (journaled where they are switched live) and read back, its counters
    through the driver, a packet path per IP family, and trials."""

    params: dict[str, Any]  # the lab-scoped axis values it holds
    shared_kernel: bool  # the DUT forwards on the generator's own CPUs (the namespace lab)
    state: dict  # what each trial row records of the testbed (read-back offloads, DUT knobs, VM)

    @property
    def driver(self) -> DutDriver | None: ...  # None: a testbed without a DUT host

    @property
    def line_rate(self) -> dict | None: ...  # {"bps", "source"}, None when unknown

    @property
    def read_cost_s(self) -> float | None: ...  # one DUT window read, measured when it came up

    @property
    def description(self) -> str: ...  # one line for report headings

    def executor(self, role: str) -> Executor: ...

    def generator_hosts(self) -> dict[str, tuple[Executor, DutDriver]]: ...  # hosts whose CPUs are read too

    def environment(self) -> dict: ...  # what an experiment records of its first live testbed

    def apply_knobs(self) -> dict: ...  # make the DUT hold this testbed's knobs; their read-back

    def knob_choices(self) -> dict[str, list[tuple[Any, str]]]: ...  # lab axis -> [(value worth trying, why)]

    def dut_counters(self) -> dict[str, int]: ...  # cumulative interface counters, through the driver

    def packet_path(self, family: int, generator: str = "auto") -> ContextManager[Any]: ...  # search/measurer.py

    def state_path(self, family: int) -> ContextManager[Any]: ...  # rfc9693's two phases (search/state_path.py)

    def http_server(self, spec: Any) -> ContextManager[Any]: ...  # nginx on the server (traffic/nginx_server.py)

    def run_trial(self, params: TrialParams) -> Trial: ...


class Testbeds(Protocol):
    """Where a run's testbeds come from: a new lab per combination (namespace or VM DUT), or views
    of one set of real hosts."""

    calibrates: bool  # measures the rig's own ceiling first (kinds/throughput/calibration.py)

    def open(self, lab_params: dict[str, Any]) -> ContextManager[Testbed]: ...

    def reserve(self) -> ContextManager[None]: ...  # exclusive use for a whole run, taken before it records anything

    def record(self) -> dict: ...  # the environment an experiment row starts with

    def check(self, cells: list[dict[str, Any]], extra_required: set[str] = ...) -> str: ...  # before anything runs

    def refuse_unsupported(self, cells: list[dict[str, Any]]) -> None: ...  # axes this kind cannot honour

    def held_params(self) -> dict[str, Any]: ...  # lab-axis values every testbed of it holds (a kept lab's)


def new_lab_id() -> str:
    return secrets.token_hex(3)


def lab_testbed(lab_id: str, lab_params: dict, *, keep: bool = False, registry: Registry | None = None,
                on_message: Callable[[str], None] = lambda m: None, cpus: tuple[int, ...] = ()) -> NamespaceTestbed:
    """The testbed for one combination of lab-scoped axis values: a namespace DUT, or a VM DUT
    (dut = "vm") between the same client and server namespaces. Not up yet: enter it. `on_message`:
    progress a user waits for (an own image booting under TCG). `cpus`: the CPUs a kept lab was laid out
    over (its record's), not those this command may run on (`taskset -c 1 linerate trial --lab ...`)."""
    refuse_unsupported([lab_params], "namespace")  # (checked before by the commands; nothing is built for these)
    spec = lab_spec(lab_id, lab_params)
    if cpus:
        spec = dataclasses.replace(spec, cpu_sides=split_cpus(cpus))
    if lab_params.get("dut") != "vm":
        return NamespaceTestbed(spec, registry, keep=keep, params=lab_params)
    options = vm_options(vm_params(lab_params))
    placement = place(cpus or tuple(os.sched_getaffinity(0)), options.vcpus)
    spec = dataclasses.replace(spec, cpu_sides=(placement.client_cpus, placement.server_cpus))
    if options.image:
        return ImageVmTestbed(spec, options, registry, keep=keep, params=lab_params, placement=placement,
                              on_message=on_message)
    return VmTestbed(spec, options, registry, keep=keep, params=lab_params, placement=placement)


def lab_from_record(record: LabRecord, registry: Registry) -> NamespaceTestbed:
    try:
        params = recorded_params(record.params) if record.params else {}
        if params:  # with its pool's pairs, a VM DUT's placement
            lab = lab_testbed(record.lab_id, params, keep=record.owner is None, registry=registry,
                              cpus=tuple(record.cpus))
        else:
            spec = LabSpec(record.lab_id, FirewallProfile.parse(record.firewall), record.mtu)  # the record's own
            if record.cpus:
                spec = dataclasses.replace(spec, cpu_sides=split_cpus(tuple(record.cpus)))
            lab = NamespaceTestbed(spec, registry, keep=record.owner is None)
        said = (str(FirewallProfile.parse(record.firewall)), record.mtu)
        if (str(lab.spec.firewall), lab.spec.mtu) != said:  # what `lab status` shows; results are stored under it
            raise ValueError(f"its params say firewall {lab.spec.firewall} and MTU {lab.spec.mtu}, the record "
                             f"{said[0]} and {said[1]}")
    except (ConfigError, KeyError, TypeError, ValueError) as exc:
        raise LabError(f"state file of lab {record.lab_id} is malformed ({exc}); left untouched") from None
    lab.record = record
    return lab


def recorded_params(params: Any) -> dict[str, Any]:
    """A lab record's axis values, each through its axis's validator (a state file is input like any
    other): ValueError or TypeError for one that is not valid, or that is no lab axis (a kept lab's values
    are merged over a command's options: a trial option there would override the command line)."""
    if not isinstance(params, dict):
        raise TypeError("params is not an object")
    foreign = sorted(str(name)[:40] for name in params if name not in AXES or AXES[name].scope != "lab")
    if foreign:
        raise ValueError(f"params holds {', '.join(foreign[:3])}, which {'is' if len(foreign) == 1 else 'are'} "
                         "no lab axis")
    return {name: AXES[name].validate(value) for name, value in params.items()}


def find_lab(name: str, registry: Registry) -> NamespaceTestbed:
    record = registry.load(validate_lab_name(name, "lab"))
    if record is None or record.kind != "lab":
        known = ", ".join(r.lab_id for r in registry.all()) or "none"
        raise ConfigError("lab", f"no lab named '{name}' (labs: {known}); see `linerate lab status`")
    return lab_from_record(record, registry)


def use_lab(name: str, registry: Registry) -> NamespaceTestbed:
    """An existing lab for this process to run on (`--lab`): held in use until the process ends
    (Registry.hold_use), so `lab down`/`lab clean` leave it alone meanwhile, and measured on by this
    process alone (Registry.hold_measure); read again once held (it may have been removed in between),
    its scratch directory checked to be still the lab's own (or made again when a cleaner removed it).
    Before anything is made or changed (the results database included), the lab is read back against its
    record (drift_from_record): a lab that is not what its state file says is refused (exit 2). A second
    call in one process gives the lab it checked, while its state file says the same."""
    key = (str(registry.state_dir), name)
    try:
        find_lab(name, registry)
        registry.hold_use(name)
        registry.hold_measure(name)
        lab = find_lab(name, registry)
    except LabError as exc:  # a malformed state file is bad input to this command
        raise ConfigError("lab", str(exc)) from None
    held = _IN_USE.get(key)
    if held is not None and held.record.to_json() == lab.record.to_json():
        return held
    problems = lab.drift_from_record()
    if problems:  # its results would be stored under values the lab does not have
        more = f"; and {len(problems) - 3} more" if len(problems) > 3 else ""
        raise ConfigError("lab", f"lab {name} is not what its state file says ({'; '.join(problems[:3])}{more}); "
                                 f"nothing was changed: `linerate lab down {name}`, then `linerate lab up` again")
    problem = own_scratch(lab.scratch_dir, make=True)
    if problem is not None:
        raise ConfigError("lab", f"'{name}': {problem}; remove the lab (`linerate lab down {name}`) and build "
                          "another")
    _IN_USE[key] = lab
    return lab


_IN_USE: dict[tuple[str, str], NamespaceTestbed] = {}  # (state dir, lab) -> the lab use_lab checked in this process


class LabTestbeds:
    """A new namespace or VM lab per combination of lab-scoped axes, removed when the run is done."""

    calibrates = True

    def __init__(self, on_message: Callable[[str], None] = lambda m: None):
        self.on_message = on_message

    @contextlib.contextmanager
    def open(self, lab_params: dict[str, Any]) -> Iterator[NamespaceTestbed]:
        with lab_testbed(new_lab_id(), lab_params, on_message=self.on_message) as lab:
            yield lab

    def reserve(self) -> ContextManager[None]:
        return contextlib.nullcontext()  # every combination gets a lab of its own

    def record(self) -> dict:
        return controller_fingerprint()

    def held_params(self) -> dict[str, Any]:
        return {}  # each combination gets a lab built for it

    def refuse_unsupported(self, cells: list[dict[str, Any]]) -> None:
        refuse_unsupported(cells, "namespace")

    def check(self, cells: list[dict[str, Any]], extra_required: set[str] = frozenset()) -> str:
        """ConfigError for an axis value these labs cannot honour, then PreflightError (exit 2) listing
        everything this machine lacks for the cells."""
        self.refuse_unsupported(cells)
        problems = local_problems(cells)
        if problems:
            raise PreflightError(problems)
        preflight.require(preflight.run_checks(), extra_required=required_features(cells) | set(extra_required))
        return "preflight: ok"


class KeptLab:
    """Testbeds of one lab that is already up (`--lab`, from `linerate lab up`): every combination
    runs on it, and it is left up afterwards."""

    calibrates = False  # a kept lab is what it is: no baseline lab is built beside it

    def __init__(self, lab: NamespaceTestbed):
        self.lab = lab

    @contextlib.contextmanager
    def open(self, lab_params: dict[str, Any]) -> Iterator[NamespaceTestbed]:
        """The lab, with SIGTERM/SIGHUP raised as for a lab of its own; whatever this command started in
        it (an iperf3 client on a worker thread, trafgen) is stopped when it ends, a signal included: it
        holds the lab's measure lock, so nothing else runs there (stop_leftover_programs)."""
        with terminations_raise():  # the lab was read back against its record when taken (use_lab)
            try:
                if self.lab.record is not None:  # every input is checked by now: this command will measure
                    stop_leftover_programs(self.lab.record)  # a killed command's generator would disturb it
                    self.lab.stop_killed_cps_server()  # and a killed cps's nginx would hold the port and memory
                    self.lab.restore_client_ports()  # and a killed rfc2544's pacing would stand in for a pair link
                    self.lab.fresh_servers()  # and what a server holds that no read shows goes with it
                # the reads' cost places a trial's second DUT read (trial.window_offsets): measured on the lab as it is
                self.lab.read_cost_s = measure_read_cost_or_none(self.lab.driver, self.lab.executor("dut"))
                yield self.lab
            finally:
                with terminations_deferred():
                    if self.lab.record is not None:
                        stop_leftover_programs(self.lab.record)
                        self.lab.restore_client_ports()  # a pool's rfc2544 send cut short: its pacing, not the link

    def reserve(self) -> ContextManager[None]:
        return contextlib.nullcontext()  # a kept lab has no journal: its knobs are baked in when built

    def record(self) -> dict:
        return controller_fingerprint()

    def held_params(self) -> dict[str, Any]:
        return dict(self.lab.params)

    def refuse_unsupported(self, cells: list[dict[str, Any]]) -> None:
        refuse_unsupported(cells, "namespace")

    def check(self, cells: list[dict[str, Any]], extra_required: set[str] = frozenset()) -> str:
        self.refuse_unsupported(cells)  # the lab's own values are merged into the cells (options.check_lab_options)
        return f"lab {self.lab.spec.lab_id}: up"


def open_testbeds(inventory: Inventory | None = None, *, lab: NamespaceTestbed | None = None,
                  store: Store | None = None, accept_new: bool = False,
                  on_message: Callable[[str], None] = lambda m: None) -> Testbeds:
    """The real hosts an inventory names, or one lab that is up already (--lab), or new labs on
    this machine (namespace or VM DUT, by each combination's `dut` axis)."""
    if inventory is not None:
        return SshTestbeds(inventory, store, accept_new=accept_new, on_message=on_message)
    return KeptLab(lab) if lab is not None else LabTestbeds(on_message)


def vm_demo_unavailable() -> str | None:
    """Why the VM demo cannot run here (None: it can)."""
    if shutil.which("qemu-system-x86_64") is None:
        return "qemu-system-x86_64 is not installed (make install adds it)"
    if not os.path.exists("/dev/net/tun"):
        return "/dev/net/tun is missing"
    return None


def demo_dut(requested: str, own_image: bool = False) -> tuple[str, str | None]:
    """(the DUT the demo uses, why not the VM when auto fell back); ConfigError when a VM demo was
    asked for (an own image asks for one) and cannot run here."""
    if own_image:
        if requested == "namespace":
            raise ConfigError("--dut-image", "boots a VM DUT; leave out --dut namespace")
        requested = "vm"
    why = vm_demo_unavailable() if requested != "namespace" else None
    if why and requested == "vm":
        raise ConfigError("--dut", f"vm: {why}")
    return ("namespace" if why or requested == "namespace" else "vm"), why
