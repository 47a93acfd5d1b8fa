"""NamespaceTestbed: a live client -> DUT -> server lab of network namespaces on this host, built
from a LabSpec (the kernel mechanics live in lab/), torn down on every way out.

Use as a context manager. Teardown runs on normal exit, exceptions, SIGINT, SIGTERM and SIGHUP;
for SIGKILL the registry record lets `linerate lab clean` finish the job. The DUT is this host's
own kernel in a namespace, so it shares the generator's CPUs (`shared_kernel`), and its knobs are
baked in when it is built: one testbed per combination of lab-scoped axes.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import time
from pathlib import Path

from linerate.dut.linux import LinuxDriver
from linerate.errors import ConfigError, LabError
from linerate.exec import LocalExecutor, NetnsExecutor
from linerate.exec.scratch import is_scratch_path, new_scratch_path
from linerate.lab.bpf_hooks import in_namespace as ebpf_programs
from linerate.lab.bpf_hooks import host_flow_dissector, netfilter_programs
from linerate.lab.bpf_hooks import of_processes as cgroup_programs
from linerate.lab.conform import plan_drift
from linerate.lab.snapshot import drift as snapshot_drift
from linerate.lab.snapshot import comparable as comparable_snapshots
from linerate.lab.snapshot import TRACING, host_settings, module_parameters, scheduler_settings, tracing
from linerate.lab.snapshot import processes as snapshot_processes
from linerate.lab.snapshot import take as take_snapshot
from linerate.lab.apply import NETNS_DIR, apply_plan, pids_in_netns, programs_in_netns, read_sysctl, remove_namespaces
from linerate.lab.link_attributes import read_links
from linerate.lab.netns import (canonical_qdiscs, canonical_ruleset, etc_dir, new_links, new_namespace_sysctls,
                                new_veth_features, per_namespace_net_keys, read_in)
from linerate.lab.placement import Placement, givable
from linerate.lab.registry import LabRecord, Registry, vet
from linerate.lab.signals import terminations_deferred, terminations_raise
from linerate.lab.state import read_lab_state, verify
from linerate.model import LAB_ROLES, Trial, TrialParams, lab_namespace
from linerate.process import ProcessRef
from linerate.testbed.kept_sweep import (SOCKETS, iperf3_port, is_generator_namespace, is_leftover, is_swept,
                                         pacing_left, remove_pacing, restore_port, senders)
from linerate.testbed.lab_path import LabPath, LabStatePath, PoolPath, lab_description
from linerate.topology.link import link_bps, link_description, qdisc_argvs
from linerate.topology import lab_plan
from linerate.topology.plan import CLIENT_IF, LabSpec, Plan, server_address
from linerate.traffic import iperf3
from linerate.traffic.nginx_server import NginxServer, ServerSpec, http_server
from linerate.topology.pool import pair_address
from linerate.trial import PoolPair, measure_read_cost_or_none, run_trial

SERVER_READY_TIMEOUT_S = 5.0


class NamespaceTestbed:
    shared_kernel = True  # the DUT forwards on the generator's own CPUs

    def __init__(self, spec: LabSpec, registry: Registry | None = None, keep: bool = False,
                 params: dict | None = None):
        self.spec = spec
        self.params = dict(params or {"firewall": str(spec.firewall), "mtu": spec.mtu})
        self.registry = registry or Registry()
        self.keep = keep
        self.record: LabRecord | None = None
        self.record_is_ours = False
        self.state: dict = {}
        self.read_cost_s: float | None = None  # one DUT window read, measured once the lab is up
        self.driver = LinuxDriver()
        self._signals = contextlib.ExitStack()

    # --- lifecycle ------------------------------------------------------------------------------

    def up(self) -> "NamespaceTestbed":
        owner = None if self.keep else ProcessRef.of(os.getpid())
        record = LabRecord(self.spec.lab_id, str(self.spec.firewall), self.spec.mtu, owner, params=self.params,
                           cpus=sorted(os.sched_getaffinity(0)))
        self.registry.create(record)  # refuses a taken name; the other lab's record stays as it is
        self.record, self.record_is_ours = record, True
        self.make_scratch()

        def remember(ns: str) -> None:
            self.record.namespaces.append(ns)
            self.registry.save(self.record)

        apply_plan(lab_plan(self.spec), on_namespace=remember)
        self.state = read_lab_state(self.spec, self.executor, read_sysctl)
        verify(self.spec, self.state)
        self.start_server()
        self.read_cost_s = measure_read_cost_or_none(self.driver, self.executor("dut"))
        return self

    def make_scratch(self) -> None:
        """The lab's scratch directory (exec/scratch.py): recorded first, then made fresh (mkdir
        fails on anything already there), so `down` and `lab clean` remove exactly it."""
        path = new_scratch_path(self.spec.lab_id)
        self.record.scratch = path
        self.registry.save(self.record)
        try:
            os.mkdir(path, 0o700)
        except FileExistsError:
            raise LabError(f"{path} exists already (not made by this lab); left alone") from None
        os.chmod(path, 0o711)  # a fresh directory of ours: nginx's workers (user nobody) pass through it

    @property
    def scratch_dir(self) -> str | None:
        return self.record.scratch or None if self.record is not None else None

    def down(self) -> list[str]:
        """Remove what this lab's record lists — nothing when it never got a record of its own.
        A record read back from the state directory is vetted first; one this process wrote and
        kept in memory is not (it lists only what this process created)."""
        if self.record is None:
            return []
        problems = [] if self.record_is_ours else vet(self.record)
        if problems:
            raise LabError(f"lab {self.spec.lab_id} left untouched: " + "; ".join(problems))
        removed = remove_record(self.record, self.registry)
        self.record = None
        return removed

    def __enter__(self) -> "NamespaceTestbed":
        self._signals.enter_context(terminations_raise())  # SIGTERM/SIGHUP end the block, so down() runs
        try:
            return self.up()
        except BaseException:
            self._teardown()
            raise

    def __exit__(self, *exc_info) -> None:
        self._teardown()

    def _teardown(self) -> None:
        # A signal while removing waits until the lab is gone (a second Ctrl-C or TERM cannot leave it
        # half removed), then ends the run as it would have; the caller's handlers come back after.
        try:
            with terminations_deferred():
                self.down()
        finally:
            self._signals.close()

    def describe_plan(self) -> str:
        return self.host_plan().describe()

    def host_plan(self) -> Plan:
        """What this lab's namespaces are made of, from its spec: built from it, and read back against it."""
        return lab_plan(self.spec)

    def drift_from_record(self) -> list[str]:
        """What of its own record this lab, already up, does not hold (lab/conform.py), then what changed since
        it was kept (lab/snapshot.py): [] when it holds all."""
        return self.plan_drift() or self.changed_since_kept()

    def plan_drift(self) -> list[str]:
        """What of the plan its record gives this lab does not hold, or holds beyond it (lab/conform.py), and
        a process in it the lab did not start."""
        ours = {lab_namespace(self.spec.lab_id, role) for role in LAB_ROLES}  # planned or not (lab "a" vs "a-b")
        return plan_drift(self.host_plan(), self.spec.netns("dut"), lambda ns: (NETNS_DIR / ns).exists(),
                          lambda ns, argv: NetnsExecutor(ns).run(argv, timeout_s=15, check=False).stdout,
                          _sysctl_or_none, lambda: sorted(ours & set(os.listdir(NETNS_DIR))),
                          new_veth_features, canonical_ruleset, new_namespace_sysctls, new_links,
                          canonical_qdiscs) + self._server_drift()

    def changed_since_kept(self) -> list[str]:
        """What differs from the lab as `lab up` kept it (lab/snapshot.py); [] for a lab kept before snapshots."""
        if not self.record or not self.record.snapshot:
            return []
        return snapshot_drift(*comparable_snapshots(self.record.snapshot, self.snapshot()))

    def snapshot(self) -> dict:
        """Its namespaces as they are now, every setting a read shows (lab/snapshot.py): what `lab up` keeps in
        the record and what each later command on the lab compares with it."""
        if self.record is None:
            return {}
        own = self.own_processes()
        workspaces = frozenset(self.spec.netns(role) for pair in self.spec.pair_roles() for role in pair)
        return {**take_snapshot(sorted(self.record.namespaces), _read_in,
                                lambda ns, links: read_in(ns, lambda: ebpf_programs(links)), workspaces,
                                lambda ns: read_in(ns, read_links)),
                "the host": {"processes": snapshot_processes(own, _read_file, os.listdir),
                             "net settings": host_settings(_read_file, os.listdir, per_namespace_net_keys()),
                             "scheduler settings": scheduler_settings(_read_file, os.listdir),
                             "module parameters": module_parameters(_read_file, os.listdir, _writable),
                             "eBPF programs of its cgroups": cgroup_programs(list(own.values())),
                             "eBPF programs on netfilter hooks": netfilter_programs(),
                             "eBPF flow dissector": host_flow_dissector(),  # it rules every namespace while set
                             "kernel tracing": tracing(LocalExecutor().run(TRACING, timeout_s=15, check=False).stdout)},
                **self.guest_snapshot()}

    def own_processes(self) -> dict[str, int]:
        """The lab's own processes that run (its record's servers: iperf3, a VM's qemu), each named by its
        program and namespace ("iperf3 in lr-x-server"): a restarted server keeps its name."""
        live = self.record.live_server_pids() if self.record else set()
        return {f"{program} in {ns}": pid for ns in (self.record.namespaces if self.record else [])
                for pid, program in programs_in_netns(ns) if pid in live}

    def guest_snapshot(self) -> dict:
        """A VM DUT's guest as it is now, under "the guest" (testbed/vm.py); a namespace lab has none."""
        return {}

    def _server_drift(self) -> list[str]:
        """A process the lab did not start (its record's servers): in the DUT's namespace or a switch's, any (the
        device under test and the wires are the plan's alone: a packet socket there takes CPU from the
        forwarding); in a client's or server's, an iperf3 server on the lab's port (it would answer this lab's
        trials). A generator's namespace is otherwise the operator's workspace (their capture, their server on
        another port), and a killed command's generators there are stopped before this one measures
        (stop_leftover_programs)."""
        own = self.record.live_server_pids() if self.record else set()
        scratch = self.record.scratch if self.record else ""
        problems = []
        for ns in self.spec.namespaces:
            if not (NETNS_DIR / ns).exists():
                continue
            if etc_dir(ns).exists():  # its files would stand in for /etc in every command run there
                problems.append(f"{etc_dir(ns)} exists: `ip netns exec` puts its files over /etc for every "
                                f"command linerate runs in {ns} (remove it)")
            for pid, program in programs_in_netns(ns):
                if pid in own:
                    continue
                if not is_generator_namespace(ns):
                    problems.append(f"a process the lab did not start runs in {ns}: pid {pid} ({program[:20]!r})")
                elif program == "iperf3" and not is_leftover(pid, program, scratch) \
                        and iperf3_port(pid) == self.spec.iperf_port:
                    problems.append(f"an iperf3 server (pid {pid}) on the lab's port {self.spec.iperf_port} in {ns} "
                                    "is not the lab's own")
            if is_generator_namespace(ns):  # a sender the sweep does not stop (another program, or another's)
                for pid, program, peer in senders(NetnsExecutor(ns).run(SOCKETS, timeout_s=15, check=False).stdout):
                    if pid not in own and not is_swept(pid, program, scratch):
                        problems.append(f"a process the lab did not start sends through the lab from {ns}: pid {pid} "
                                        f"({program[:20]!r}) to {peer[:60]}")
        return problems

    # --- the Testbed protocol (testbed/base.py) -------------------------------------------------------

    @property
    def mtu(self) -> int:
        return self.spec.mtu

    @property
    def line_rate(self) -> dict | None:
        bps = link_bps(self.params)
        return None if bps is None else {"bps": bps, "source": link_description(self.params)}

    @property
    def description(self) -> str:
        return lab_description(self.params)

    def executor(self, role: str) -> NetnsExecutor:
        return NetnsExecutor(self.spec.netns(role), self.spec.cpus(role), scratch_dir=self.scratch_dir)

    def dut_ifname(self, port: str) -> str:
        """The DUT's own name of its port lan0 or wan0 (an own image names its NICs itself)."""
        return port

    def generator_hosts(self) -> dict:
        return {}  # the generators run on the DUT's own kernel: its CPU reads are theirs

    def environment(self) -> dict:
        """What an experiment records of the first live lab: the read-back offload states."""
        return {"offloads": self.state.get("offloads")}

    def apply_knobs(self) -> dict:
        return {}  # built in when the lab came up (its spec): nothing to switch per trial

    def knob_choices(self) -> dict[str, list[tuple]]:
        return {}  # the DUT is this host's own kernel: tuning it would tune the generator too

    def dut_counters(self) -> dict[str, int]:
        return self.driver.path_counters(self.executor("dut"))

    def packet_path(self, family: int, generator: str = "auto") -> LabPath | PoolPath:
        if self.spec.pairs > 1:  # every pair sends its share; the search sees the sums
            return PoolPath([LabPath(self, family, generator, pair=index) for index in range(self.spec.pairs)])
        return LabPath(self, family, generator)

    def state_path(self, family: int) -> LabStatePath:
        return LabStatePath(self, family)

    def http_server(self, spec: ServerSpec) -> NginxServer:
        """nginx in the server namespace. A lab this command built takes its processes with it whatever
        happens; a kept lab (--lab) outlives the command, so the command holds the lab's HTTP lock while it
        serves (one at a time: they would share the port), and an nginx found there then was left by a
        killed one (nothing else runs nginx in linerate's lab) and is stopped first."""
        if self.keep:
            self.registry.hold_http(self.spec.lab_id)
            stop_stale_nginx(self.spec.netns("server"))
        addresses = {family: server_address(family) for family in (4, 6)}
        # derived from the lab id, so `lab down` and `lab clean` (after a SIGKILL) remove it with the lab;
        return http_server(self.executor("server"), addresses, spec)  # a new directory in the lab's scratch

    def stop_killed_cps_server(self) -> list[int]:
        return stop_killed_cps_server(self.registry, self.spec.lab_id) if self.keep else []

    def run_trial(self, params: TrialParams) -> Trial:
        try:
            return run_trial(self.executor("client"), self.executor("dut"), params,
                             server_address(params.family), shared_kernel=True, read_cost_s=self.read_cost_s,
                             pool=self.pool_pairs(params.family))
        finally:
            self.forget_congestion(params)

    def forget_congestion(self, params: TrialParams) -> None:
        """After a trial that asked for a congestion control, every iperf3 server of the lab starts again:
        iperf3 before 3.18 keeps the one a client asked for and gives it to every later client that asks for
        none (esnet/iperf pull request #1812, "Reset the congestion protocol on the server between tests";
        Debian 12 ships 3.12), so a later trial of the kernel's default would measure the server's sending
        with it (--direction reverse or bidir)."""
        if params.congestion:
            self.fresh_servers()

    def fresh_servers(self) -> None:
        """Each iperf3 server of a kept lab that runs starts again, placed as the one it replaces (lab/placement.py),
        before a command measures (KeptLab.open) and after a trial that asked for a congestion control: what a
        server holds that no read shows (a socket option set on its listening socket from outside, as
        pidfd_getfd(2) allows: SO_RCVBUF 4096 cut a trial from 28.9 to 1.3 Gbit/s) goes with it. A server that
        does not run (`lab stop-server`) is left so."""
        if self.record is None:
            return
        with terminations_deferred():  # a signal meanwhile waits until the servers listen again
            running = {pid: name.removeprefix("iperf3 in ") for name, pid in self.own_processes().items()
                       if name.startswith("iperf3 in ")}
            replaced = [ref for ref in self.record.servers if ref.pid in running]
            places = {running[ref.pid]: Placement.of(ref.pid) for ref in replaced}
            problem = givable(list(places.values()))
            if problem:
                raise ConfigError("--lab", f"this command cannot start lab {self.spec.lab_id}'s iperf3 servers again "
                                           f"as they run ({problem}): run it as `lab up` was run; nothing was changed")
            for ref in replaced:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(ref.pid, 9)
                deadline = time.monotonic() + 5
                while ref.alive() and time.monotonic() < deadline:
                    time.sleep(0.01)
                self.record.servers.remove(ref)
            self.registry.save(self.record)
            if places:
                self.start_server(places)

    def pair_link_argvs(self) -> list[list[str]]:
        """tc argv that shape a client's port as its pair link (a pool's; [] without one)."""
        return [] if self.spec.pair_link is None else qdisc_argvs(self.spec.pair_link, CLIENT_IF, self.spec.mtu)

    def restore_client_ports(self) -> None:
        """Give every client's port its pair link again, or, in a lab without one, remove a pacing bucket
        (trafgen.PACING_HANDLE) from it: an rfc2544 send paces there and puts the port back after, so only a
        killed one leaves its bucket (KeptLab.open calls this before a command measures and once it ended)."""
        if self.pair_link_argvs():
            for client, _ in self.spec.pair_roles():
                restore_port(NetnsExecutor(self.spec.netns(client)), self.pair_link_argvs())
        elif self.record is not None:
            for ns in pacing_left(self.record):
                remove_pacing(NetnsExecutor(ns))

    def pool_pairs(self, family: int) -> list[PoolPair] | None:
        """A pooled lab's pairs, each client with the address of its own server (None: one pair, no pool)."""
        if not self.spec.pooled:
            return None
        return [PoolPair(client, server, self.executor(client), pair_address("server", family, index)[0])
                for index, (client, server) in enumerate(self.spec.pair_roles())]

    # --- the iperf3 servers -------------------------------------------------------------------------

    def start_server(self, places: dict[str, Placement] | None = None) -> None:
        """An iperf3 server in every server namespace (a pool's report the receiver's intervals); with places,
        only in those namespaces, each placed so (a server that starts again in the place of another)."""
        servers = [server for _, server in self.spec.pair_roles() if places is None or self.spec.netns(server) in places]
        for server in servers:
            proc = self.executor(server).spawn(iperf3.server_argv(self.spec.iperf_port, pool=self.spec.pooled))
            if self.record is not None:
                self.record.servers.append(ProcessRef.of(proc.pid))
                self.registry.save(self.record)
            if places is not None:
                places[self.spec.netns(server)].give(proc.pid)
        for server in servers:
            self._wait_listening(self.spec.netns(server))

    def _wait_listening(self, ns: str) -> None:
        deadline = time.monotonic() + SERVER_READY_TIMEOUT_S
        while time.monotonic() < deadline:
            if _listening(ns, self.spec.iperf_port):
                return
            time.sleep(0.01)
        raise LabError(f"iperf3 server in {ns} did not listen on port {self.spec.iperf_port} within "
                       f"{SERVER_READY_TIMEOUT_S:.0f} s")

    def server_pids(self) -> dict[int, str]:
        """pid -> namespace of the lab's own iperf3 servers that run (its record's: start time checked), in its
        server namespaces; another process there (an operator's capture) is none of them."""
        own = self.record.live_server_pids() if self.record else set()
        return {pid: ns for ns in (self.spec.netns(server) for _, server in self.spec.pair_roles())
                for pid in pids_in_netns(ns) if pid in own}


def _read_file(path: str) -> str:
    return Path(path).read_text()


def _writable(path: str) -> bool:
    return bool(os.stat(path).st_mode & 0o222)


def _read_in(ns: str, argv: list[str]) -> str:
    """A read in one of the lab's namespaces: its stdout, "" when the command failed."""
    done = NetnsExecutor(ns).run(argv, timeout_s=15, check=False)
    return done.stdout if done.returncode == 0 else ""


def _sysctl_or_none(ns: str, key: str) -> str:
    try:
        return read_sysctl(ns, key)
    except OSError:
        return "(none)"  # no such key in that namespace: not the file's value


def remove_owned_dir(path: str) -> None:
    """A lab's scratch directory: only a real directory of ours at exactly that path (a link or
    someone else's directory there is left alone)."""
    if not is_scratch_path(path):
        return
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return
    if stat.S_ISDIR(info.st_mode) and info.st_uid == os.geteuid():
        shutil.rmtree(path, ignore_errors=True)


def nginx_pids(ns: str) -> list[int]:
    """The nginx processes in a lab namespace (ns is one linerate derived from a lab's id). Looks only."""
    return [pid for pid, program in programs_in_netns(ns) if program == "nginx"]


def stop_killed_cps_server(registry: Registry, lab_id: str) -> list[int]:
    """A kept lab's nginx when no cps serves there now (its HTTP lock is free): a killed cps's, stopped (by the
    next command on the lab, or `lab clean`). Its pids."""
    server = lab_namespace(lab_id, "server")
    if not nginx_pids(server):
        return []
    with registry.serving_free(lab_id) as free:
        return stop_stale_nginx(server) if free else []


def stop_stale_nginx(ns: str) -> list[int]:
    """SIGKILL the nginx processes in a kept lab's server namespace: called holding the lab's HTTP lock,
    so they are a killed cps's. Their pids."""
    stopped = nginx_pids(ns)
    for pid in stopped:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, 9)
    return stopped


def remove_record(record: LabRecord, registry: Registry) -> list[str]:
    """Remove a lab's namespaces (a VM DUT's qemu and a cps test's nginx run inside them and go
    with them), its VM and scratch directories and its record: what `down` and `linerate lab clean` do."""
    removed = remove_namespaces(list(record.namespaces))
    registry.remove_vm_dir(record.lab_id)
    if record.scratch:
        remove_owned_dir(record.scratch)
    registry.remove(record.lab_id)
    return removed


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

