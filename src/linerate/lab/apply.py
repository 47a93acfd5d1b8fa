"""Apply a Plan in-process and tear it down again.

Instead of forking `ip` for every step: netlink messages encoded with pyroute2's message classes
and sent in one batch per namespace (lab/rtnl_batch.py); namespaces created and sysctls written
on a thread inside the namespace (lab/netns.py); the ruleset loaded through libnftables
(lab/nftables.py). Only tc, ethtool and sysfs knobs fork. bench/lab_setup.py measures it.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable
from pathlib import Path

from linerate.errors import ExecError, LabError
from linerate.exec import NetnsExecutor
from linerate.lab import netns, rtnl_batch
from linerate.lab.nftables import load_ruleset
from linerate.numbers import is_ascii_int
from linerate.topology.plan import (
    AddAddress,
    AddDefaultRoute,
    CreateNamespace,
    CreateTap,
    IFINDEX,
    CreateVeth,
    LoadRuleset,
    Plan,
    RunTool,
    SetLink,
    WriteSysfs,
    SetSysctls,
)

NETNS_DIR = netns.NETNS_DIR


def read_sysctl(ns: str, key: str) -> str:
    def read() -> str:
        with open("/proc/sys/" + key.replace(".", "/")) as handle:
            return handle.read().strip()

    return netns.run_in(ns, read)


def apply_plan(plan: Plan, on_namespace: Callable[[str], None],
               on_tap: Callable[[CreateTap], None] | None = None) -> None:
    """Build the lab. on_namespace(name) is called *before* each namespace is created, so the
    caller can record it; a crash at any point leaves a record of everything that exists.
    on_tap(step) creates a CreateTap step's device and keeps its file descriptors (testbed/vm.py).

    Netlink steps (veths, addresses, links, routes) are queued per namespace and sent as one batch
    each (lab/rtnl_batch.py) before the next step of another kind. Interface indexes are fixed by
    the plan, so nothing is looked up. No pyroute2 IPRoute/NetNS objects are used: in pyroute2 0.9
    NetNS hung intermittently in link_lookup (about one lab in three here), and IPRoute keeps its
    socket thread-local, so one opened on a namespace thread silently reopens in the caller's."""
    batches = _Batches(plan)
    try:
        for step in plan.steps:
            if isinstance(step, BATCHABLE):
                batches.add(step)
                continue
            batches.flush()
            if isinstance(step, CreateTap):
                if on_tap is None:
                    raise LabError(f"plan bug: {step.describe()} needs a lab that keeps tap descriptors")
                on_tap(step)
                continue
            _apply_step(step, on_namespace)
        batches.flush()
    finally:
        batches.close()


BATCHABLE = (CreateVeth, AddAddress, SetLink, AddDefaultRoute)


class _Batches:
    def __init__(self, plan: Plan) -> None:
        self.queued: dict[str, list[tuple[bytes, str]]] = {}
        self.sockets: dict[str, object] = {}
        self.peer_fds: list[int] = []
        self.seq = 1000
        self.index = {}
        for step in plan.steps:
            if isinstance(step, CreateVeth):
                self.index[(step.netns, step.ifname)] = step.index
                self.index[(step.peer_netns, step.peer_ifname)] = step.peer_index
            elif isinstance(step, CreateTap):
                self.index[(step.netns, step.ifname)] = step.index

    def _index(self, ns: str, ifname: str) -> int:
        if ifname == "lo":
            return IFINDEX["lo"]
        try:
            return self.index[(ns, ifname)]
        except KeyError:
            raise LabError(f"plan bug: no index for {ifname} in {ns}") from None

    def add(self, step) -> None:
        self.seq += 1
        match step:
            case CreateVeth(ifname=ifname, peer_netns=peer_ns, peer_ifname=peer_if, index=index, peer_index=peer_index):
                fd = os.open(NETNS_DIR / peer_ns, os.O_RDONLY | os.O_CLOEXEC)
                self.peer_fds.append(fd)  # must stay open until the batch is sent
                data = rtnl_batch.new_veth(self.seq, ifname, index, peer_if, peer_index, fd)
            case AddAddress(netns=ns, ifname=ifname, address=address, prefixlen=prefixlen):
                data = rtnl_batch.new_address(self.seq, self._index(ns, ifname), address, prefixlen)
            case SetLink(netns=ns, ifname=ifname, mtu=mtu, txqlen=txqlen):
                data = rtnl_batch.set_link(self.seq, self._index(ns, ifname), mtu, txqlen)
            case AddDefaultRoute(gateway=gateway):
                data = rtnl_batch.default_route(self.seq, gateway)
        self.queued.setdefault(step.netns, []).append((data, step.describe()))

    def flush(self) -> None:
        for ns, messages in self.queued.items():  # in order of first appearance: veths first
            if ns not in self.sockets:
                self.sockets[ns] = rtnl_batch.open_socket(ns)
            rtnl_batch.send_batch(self.sockets[ns], messages)
        self.queued.clear()
        for fd in self.peer_fds:
            os.close(fd)
        self.peer_fds.clear()

    def close(self) -> None:
        for fd in self.peer_fds:
            os.close(fd)
        for sock in self.sockets.values():
            sock.close()


def _apply_step(step, on_namespace: Callable[[str], None]) -> None:
    match step:
        case CreateNamespace(netns=ns):
            if (NETNS_DIR / ns).exists():
                raise LabError(f"namespace {ns} already exists; pick another lab name")
            if netns.etc_dir(ns).exists():
                raise LabError(f"{netns.etc_dir(ns)} exists: `ip netns exec` would put its files over /etc for every "
                               f"command linerate runs in {ns}; remove it or pick another lab name")
            on_namespace(ns)
            netns.create(ns)
        case SetSysctls(netns=ns, values=values):
            try:
                netns.run_in(ns, lambda: netns.write_sysctls(list(values)))
            except OSError as exc:
                raise LabError(f"sysctl in {ns}: {exc.strerror} ({exc.filename}); "
                               "the name does not exist in a network namespace on this kernel, "
                               "or the value was refused") from None
        case LoadRuleset(netns=ns, ruleset=ruleset):
            load_ruleset(ns, ruleset)
        case RunTool(netns=ns, argv=argv):
            try:
                NetnsExecutor(ns).run(list(argv), timeout_s=30)
            except ExecError as exc:
                raise LabError(f"{step.describe()} was refused: {exc.stderr.strip() or exc}") from None
        case WriteSysfs(netns=ns, path=path, value=value):
            try:
                netns.run_in(ns, lambda: netns.write_sysfs([(path, value)]))
            except OSError as exc:
                raise LabError(f"{step.describe()} was refused: {exc.strerror}") from None
        case _:
            raise TypeError(f"unknown plan step {step!r}")


def pids_in_netns(*names: str) -> list[int]:
    """Processes whose network namespace is one of `names` (what `ip netns pids` does): they can
    only be ours, because the namespaces are ours — no name patterns, no pkill. One /proc scan."""
    targets = set()
    for ns in names:
        try:
            st = os.stat(NETNS_DIR / ns)
        except FileNotFoundError:
            continue
        targets.add((st.st_dev, st.st_ino))
    if not targets:
        return []
    pids = []
    for entry in Path("/proc").iterdir():
        if not is_ascii_int(entry.name):
            continue
        try:
            st = os.stat(entry / "ns" / "net")
        except OSError:
            continue
        if (st.st_dev, st.st_ino) in targets:
            pids.append(int(entry.name))
    return pids


def programs_in_netns(*names: str) -> list[tuple[int, str]]:
    """(pid, program name) of the processes pids_in_netns finds, those still there when looked at."""
    found = []
    for pid in pids_in_netns(*names):
        try:
            found.append((pid, Path(f"/proc/{pid}/comm").read_text(errors="replace").strip()))
        except OSError:
            continue  # gone meanwhile
    return found


def _kill_all(pids: list[int], wait_s: float = 2.0, gone_s: float = 10.0) -> None:
    """TERM, then KILL what is left; then wait until every process is gone from /proc (a killed qemu
    frees its guest's memory for a second or two, and a zombie stays listed until its parent reaps
    it: `lab clean` returns once nothing of the lab is left for a script to find)."""
    left = list(pids)
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pid in pids:
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + wait_s
        while pids and time.monotonic() < deadline:
            pids = [pid for pid in pids if Path(f"/proc/{pid}").exists() and not _is_zombie(pid)]
            if pids:
                time.sleep(0.01)
        if not pids:
            break
    deadline = time.monotonic() + gone_s
    while left and time.monotonic() < deadline:
        for pid in left:
            _is_zombie(pid)  # reaps our own children
        left = [pid for pid in left if Path(f"/proc/{pid}").exists()]
        if left:
            time.sleep(0.02)


def _is_zombie(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return True
    if state == "Z":
        try:
            os.waitpid(pid, os.WNOHANG)  # our own child: reap it
        except ChildProcessError:
            pass
        return True
    return False


def remove_namespaces(namespaces: list[str]) -> list[str]:
    """Stop every process inside, then delete each namespace (its veths go with it).
    Returns the namespaces actually removed; missing ones are skipped silently."""
    _kill_all(pids_in_netns(*namespaces))
    return [ns for ns in namespaces if netns.remove(ns)]
