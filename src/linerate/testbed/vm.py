"""VmTestbed: the namespace lab's client and server, with a qemu guest as the DUT (qemu, guest
build and agent mechanics live in vm/ and exec/agent.py).

Everything it creates is findable from its record, the same way a namespace lab's is: the three
namespaces are recorded before they exist; qemu runs *inside* the lab's dut namespace, which also
holds its taps and the bridges joining them to the client's and server's veths (vm/plan.py), so
removing the namespaces stops qemu and takes taps and bridges with them; its files (agent
socket, console log, a bring-your-own image's overlay) live in one directory derived from the lab
id, `<state dir>/<id>.vm`, removed with the lab — `linerate lab clean` included, after a SIGKILL.
"""

from __future__ import annotations

import os
import shlex
import time
from pathlib import Path

from linerate.errors import ExecError, LabError
from linerate.exec import NetnsExecutor
from linerate.exec.agent import AgentExecutor, with_stdin
from linerate.lab.apply import apply_plan
from linerate.lab.conform import prefetched_drift
from linerate.lab.netns import canonical_ruleset
from linerate.lab.snapshot import GUEST_SYSCTLS, guest_reads
from linerate.lab.snapshot import guest as guest_settings
from linerate.lab.registry import LabRecord, Registry
from linerate.model import Trial, TrialParams
from linerate.process import ProcessRef
from linerate.testbed.namespace import NamespaceTestbed
from linerate.topology.plan import DUT_LAN_IF, DUT_WAN_IF, CreateTap, LabSpec, Plan, server_address
from linerate.trial import measure_read_cost_or_none, run_trial
from linerate.tuning.catalog import runtime_recommendations
from linerate.vm.accel import choose_accel
from linerate.vm.boot import BOOT_TIMEOUT_S, KERNEL_APPEND, wait_for_agent
from linerate.vm.guest_build import current_guest
from linerate.vm.observe import QemuThreads, thread_tids
from linerate.vm.placement import Placement, place
from linerate.vm.plan import GUEST, VmOptions, build_vm_plan, guest_commands, guest_plan
from linerate.vm.qemu import VmSpec, argv_drift, qemu_argv, running_accel
from linerate.vm.state import read_vm_state, verify_vm
from linerate.vm.taps import open_tap

MAX_QUEUES = 16  # the virtio_queues axis's limit (axes.py)


class VmTestbed(NamespaceTestbed):
    """A namespace testbed whose DUT is a qemu guest: the built-in Linux guest (testbed/vm_image.py: an own image)."""

    shared_kernel = False  # the guest forwards on its own vCPU threads

    def __init__(self, spec: LabSpec, vm: VmOptions, registry: Registry | None = None, keep: bool = False,
                 params: dict | None = None, placement: Placement | None = None):
        super().__init__(spec, registry, keep, params)
        self.vm = vm
        self.placement = placement or place(spec.cpu_sides[0] + spec.cpu_sides[1], vm.vcpus)
        self.taps: dict[str, list[int]] = {}  # tap name -> its queues' descriptors, until qemu has them
        self.agent: AgentExecutor | None = None
        self.vm_info: dict = {}
        self.kept_vm: dict = {}  # a kept lab's guest as this command read it (drift_from_record)

    def describe_plan(self) -> str:
        host = self.host_plan().describe()
        guest = "\n".join(f"guest: {shlex.join(argv)}" + (" <<< ruleset" if stdin else "")
                          for argv, stdin in guest_commands(self.spec))
        return f"{host}\nip netns exec {self.spec.netns('dut')} qemu-system-x86_64 ... (accel {self.vm.accel}, " \
               f"{self.vm.vcpus} vCPU, {self.vm.memory_mb} MiB, virtio offloads {self.vm.virtio_text})\n{guest}"

    def drift_from_record(self) -> list[str]:
        """The host side as the namespace lab's, and the running qemu's own argv against the VM options the
        record gives (its vCPUs, memory, accelerator, vhost, queues and virtio offloads); then the record's
        own description of the guest (stored with every result) against the guest as it answers now. What
        this command's results say of the guest is only what was read here (`kept_vm`), never the record's."""
        problems = self.plan_drift()
        pid = next((p.pid for p in (self.record.servers if self.record else [])), None)
        try:
            argv = [a.decode(errors="replace") for a in Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")]
        except (OSError, TypeError):
            argv = []
        if not argv or not argv[0].endswith("qemu-system-x86_64"):
            return problems + [f"its qemu (pid {pid}) is not running"]
        problems += argv_drift(argv, vcpus=self.vm.vcpus, memory_mb=self.vm.memory_mb, accel=self.vm.accel,
                               vhost=self.vm.vhost, queues=self.vm.queues, virtio=self.vm.virtio)
        if problems:
            return problems
        seen = {"accel": running_accel(argv), "vcpus": self.vm.vcpus, "memory_mb": self.vm.memory_mb,
                "queues": self.vm.queues, "virtio_offloads": self.vm.virtio_text}
        guest, problems = self._guest_now()
        problems += self._guest_knob_drift()
        seen.update(guest)
        described = self.record.vm if isinstance(self.record.vm, dict) else {}
        problems += [f"its record says {key} {described.get(key)!r} of the guest, which has {value!r}"
                     for key, value in seen.items()
                     if key in described and (type(described[key]) is not type(value) or described[key] != value)]
        problems = problems or self.changed_since_kept()  # what no plan says: against the lab as it was kept
        self.kept_vm = {} if problems else seen
        return problems

    def _guest_now(self) -> tuple[dict, list[str]]:
        """What the running guest says of itself, under the record's names (its kernel release), and what
        it says otherwise than the record's parameters."""
        return {"kernel": self.executor("dut").run(["uname", "-r"], timeout_s=15).stdout.strip()}, []

    def _guest_knob_drift(self) -> list[str]:
        """What the guest holds otherwise than the record's plan for it (sysctls, MTU, ruleset, offloads, RPS)."""
        rx_queues = min(self.vm.queues, self.vm.vcpus)
        return prefetched_drift(guest_plan(self.spec, rx_queues=rx_queues), GUEST,  # the host's nft is the guest's
                                lambda argvs: self.executor("dut").run_many(argvs, timeout_s=30), canonical_ruleset)

    def guest_snapshot(self, ports: tuple[str, ...] = (DUT_LAN_IF, DUT_WAN_IF), processes: bool = True) -> dict:
        """The guest's qdiscs, net sysctls, its lab ports' offloads and its processes as it is now, read in one
        batch (lab/snapshot.py guest): kept with the lab's snapshot and compared like the host's namespaces."""
        argvs = guest_reads(list(ports), processes)
        results = self.executor("dut").run_many(argvs, timeout_s=30)
        answers = {tuple(argv): result.stdout if result.returncode == 0 or argv == GUEST_SYSCTLS else ""
                   for argv, result in zip(argvs, results)}
        return {"the guest": guest_settings(list(ports), answers, processes)}

    def host_plan(self) -> Plan:
        """The host side (taps, bridges, the client's and server's namespaces); the guest is read back at boot."""
        return build_vm_plan(self.spec, self.vm.queues)

    @property
    def directory(self) -> Path:
        return self.registry.vm_dir(self.spec.lab_id)

    def up(self) -> "VmTestbed":
        owner = None if self.keep else ProcessRef.of(os.getpid())
        record = LabRecord(self.spec.lab_id, str(self.spec.firewall), self.spec.mtu, owner, params=self.params,
                           cpus=sorted(os.sched_getaffinity(0)))
        self.registry.create(record)
        self.record, self.record_is_ours = record, True
        self.make_scratch()
        accel = choose_accel(self.vm.accel)
        guest = current_guest()
        self.directory.mkdir(mode=0o700)

        def remember(ns: str) -> None:
            self.record.namespaces.append(ns)
            self.registry.save(self.record)

        try:
            apply_plan(self.host_plan(), on_namespace=remember, on_tap=self._open_tap)
            self._boot(guest, accel)
        finally:
            for fd in (fd for fds in self.taps.values() for fd in fds):  # qemu holds its own copies now
                os.close(fd)
            self.taps.clear()
        self._configure_guest()
        self.state = read_vm_state(self.spec, self.vm, self.agent, self.vm_info)
        verify_vm(self.spec, self.vm, self.state)
        self.start_server()
        self.read_cost_s = measure_read_cost_or_none(self.driver, self.agent)
        self.state["vm"]["placement"] = self.placement.summary()
        self.state["vm"]["telemetry_read_ms"] = None if self.read_cost_s is None else round(self.read_cost_s * 1000, 1)
        return self

    def _pin_threads(self, pid: int) -> None:
        """vCPU and I/O threads onto their host CPUs when the placement keeps them apart from the
        generator; where it cannot (too few CPUs) they float, and the placement says so."""
        if not self.placement.disjoint:
            return
        tids = thread_tids(pid)
        for role, tid in tids.items():
            cpus = self.placement.io_cpus if role == "io" else self.placement.vcpu_cpus[int(role[4:])]
            try:
                os.sched_setaffinity(tid, cpus)
            except OSError as exc:
                raise LabError(f"VM DUT: placing qemu thread {role} on host CPU {cpus}: {exc}") from None

    def _open_tap(self, step: CreateTap) -> None:
        self.taps[step.ifname] = open_tap(step.netns, step.ifname, step.index, step.queues)

    def _boot(self, guest, accel: str) -> None:
        console, socket_path = self.directory / "console.log", self.directory / "agent.sock"
        spec = VmSpec(f"linerate-{self.spec.lab_id}", vcpus=self.vm.vcpus, memory_mb=self.vm.memory_mb, accel=accel,
                      queues=self.vm.queues, vhost=self.vm.vhost, virtio=self.vm.virtio, kernel=guest.kernel,
                      initrd=guest.initrd, append=KERNEL_APPEND, agent_socket=socket_path, console_log=console,
                      mtu=self.spec.mtu)
        pid, started, argv = self._spawn_qemu(spec)
        self.agent = AgentExecutor(socket_path, host=f"vm:{self.spec.lab_id}")
        wait_for_agent(self.agent, pid, BOOT_TIMEOUT_S[accel], console)
        self._pin_threads(pid)
        uptime = self.agent.run(["cat", "/proc/uptime"], timeout_s=10).stdout.split()[0]
        release = self.agent.run(["uname", "-r"], timeout_s=10).stdout.strip()
        self.vm_info = {"accel": accel, "vcpus": self.vm.vcpus, "memory_mb": self.vm.memory_mb,
                        "boot_to_ready_s": round(time.monotonic() - started, 2), "guest_uptime_s": float(uptime),
                        "kernel": release, "qemu_pid": pid, "argv": argv}
        self.record.vm = {k: self.vm_info[k] for k in ("accel", "vcpus", "memory_mb", "boot_to_ready_s", "kernel")}
        self.record.vm["queues"] = self.vm.queues
        self.record.vm["virtio_offloads"] = self.vm.virtio_text
        self.registry.save(self.record)

    def _spawn_qemu(self, spec: VmSpec) -> tuple[int, float, list[str]]:
        """qemu inside the lab's dut namespace with the taps' descriptors, recorded before anything waits
        on it (`lab clean` stops it after a SIGKILL): (pid, when it started, its argv)."""
        lan, wan = self.taps["tap-lan"], self.taps["tap-wan"]
        argv = qemu_argv(spec, lan, wan)
        started = time.monotonic()
        proc = NetnsExecutor(self.spec.netns("dut")).spawn(argv, pass_fds=lan + wan,
                                                             log=str(self.directory / "qemu.log"))
        self.record.servers.append(ProcessRef.of(proc.pid))
        self.registry.save(self.record)
        return proc.pid, started, argv

    def _configure_guest(self) -> None:
        """Every guest command in one agent request (~0.2 s a round trip under TCG); the first one
        the guest refuses stops the script and is named."""
        lines = []
        for argv, stdin in guest_commands(self.spec):
            first, _, rest = with_stdin(argv, stdin).partition("\n")
            refused = shlex.quote(f"refused: {shlex.join(argv)}")
            lines.append(f"{first} || {{ echo {refused} >&2; exit 1; }}\n{rest}")
        try:
            self.agent.run(["sh", "-c", "".join(lines)], timeout_s=60)
        except ExecError as exc:
            said = exc.stderr.strip().splitlines()[-2:]  # the tool's error, then which command
            raise LabError(f"VM DUT: {'; '.join(said) or exc}") from None

    def down(self) -> list[str]:
        if self.agent is not None:
            self.agent.close()
        return super().down()

    def knob_choices(self) -> dict[str, list[tuple]]:
        """The guest's virtio NIC (all offloads, a queue per vCPU, vhost-net where the host has it) and
        the runtime sysctls the catalog recommends for a Linux router."""
        choices: dict[str, list[tuple]] = {}
        if self.vm.virtio_text != "on":
            choices["virtio_offloads"] = [("on", "qemu's default virtio offloads (checksum, TSO, GSO)")]
        queues = min(self.vm.vcpus, MAX_QUEUES)
        if queues > self.vm.queues:
            choices["virtio_queues"] = [(queues, f"one queue pair per vCPU ({queues})")]
        if not self.vm.vhost and os.path.exists("/dev/vhost-net"):
            choices["vhost"] = [("on", "vhost-net: the host kernel moves the packets, not qemu's I/O thread")]
        choices["dut_sysctls"] = runtime_recommendations("linux")
        return choices

    def environment(self) -> dict:
        """The read-back offloads, and where the VM's threads and the generator ran (and a read's cost). A kept
        lab's guest is what this command read back (drift_from_record), its placement and read cost this
        command's: nothing the record alone says (its boot time included) is stored with results."""
        vm = self.state.get("vm") or self._kept_vm()
        placement = vm.get("placement") or {}
        guest = {key: vm[key] for key in ("accel", "vcpus", "memory_mb", "boot_to_ready_s", "kernel", "image", "os",
                                          "host_key", "guest_interfaces") if key in vm}
        return {**super().environment(), "vm": guest,
                "vm_host": {"placement": placement.get("note"), "detail": placement.get("detail"),
                            "disjoint": placement.get("disjoint"), "telemetry_read_ms": vm.get("telemetry_read_ms")}}

    def _kept_vm(self) -> dict:
        cost = None if self.read_cost_s is None else round(self.read_cost_s * 1000, 1)
        return {**self.kept_vm, "placement": self.placement.summary(), "telemetry_read_ms": cost} if self.kept_vm else {}

    def executor(self, role: str):
        """The client and server namespaces as in the namespace lab; the DUT is the guest's agent."""
        if role != "dut":
            return super().executor(role)
        if self.agent is None:
            self.agent = AgentExecutor(self.directory / "agent.sock", host=f"vm:{self.spec.lab_id}")
        return self.agent

    def run_trial(self, params: TrialParams) -> Trial:
        pid = self.vm_info.get("qemu_pid") or next((p.pid for p in (self.record.servers if self.record else [])), None)
        placement = {"disjoint": self.placement.disjoint, "note": self.placement.note, "detail": self.placement.detail}
        observers = [QemuThreads(pid, placement)] if pid else []
        try:
            return run_trial(self.executor("client"), self.executor("dut"), params, server_address(params.family),
                             driver=self.driver, shared_kernel=False, observers=observers,
                             read_cost_s=self.read_cost_s)
        finally:
            self.forget_congestion(params)

