"""Apply a Plan with netlink (pyroute2) and tear it down again.

Netlink instead of forking `ip` for every step: one socket per namespace does all link, address
and route work; namespaces are created and sysctls written in-process (lab/netns.py), and the
ruleset goes through libnftables (lab/nftables.py). bench/lab_setup.py measures the difference.
"""

from __future__ import annotations

import os
import signal
import socket
import time
from collections.abc import Callable
from pathlib import Path

from pyroute2 import IPRoute
from pyroute2 import netns as pyroute2_netns
from pyroute2.netlink.exceptions import NetlinkError

from linerate.errors import ExecError, LabError
from linerate.exec import NetnsExecutor
from linerate.lab import netns
from linerate.lab.nftables import load_ruleset
from linerate.topology.plan import (
    AddAddress,
    AddDefaultRoute,
    CreateNamespace,
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


class _Sockets:
    """One open netlink socket per namespace, closed together.

    Each socket is opened on *this* thread after setns(2) into the namespace (pushns/popns): a
    socket stays bound to the namespace it was created in. Two pyroute2 0.9 traps avoided here:
    its NetNS class hung intermittently in link_lookup (about one lab in three), and it keeps
    sockets thread-local, so one made on a worker thread silently reopens in the caller's
    namespace when used from another thread.
    Interface indexes are cached: a lab's interfaces never change index while it is built."""

    def __init__(self) -> None:
        self._open: dict[str, IPRoute] = {}
        self._index: dict[tuple[str, str], int] = {}

    def __getitem__(self, ns: str) -> IPRoute:
        if ns not in self._open:
            pyroute2_netns.pushns(ns)
            try:
                self._open[ns] = IPRoute()
            finally:
                pyroute2_netns.popns()
        return self._open[ns]

    def index(self, ns: str, ifname: str) -> int:
        if (ns, ifname) not in self._index:
            found = self[ns].link_lookup(ifname=ifname)
            if not found:
                raise LabError(f"interface {ifname} not found in namespace {ns}")
            self._index[(ns, ifname)] = found[0]
        return self._index[(ns, ifname)]

    def close(self) -> None:
        for sock in self._open.values():
            sock.close()
        self._open.clear()


def apply_plan(plan: Plan, on_namespace: Callable[[str], None]) -> None:
    """Build the lab. on_namespace(name) is called *before* each namespace is created, so the
    caller can record it; a crash at any point leaves a record of everything that exists."""
    sockets = _Sockets()
    try:
        for step in plan.steps:
            try:
                _apply_step(step, sockets, on_namespace)
            except NetlinkError as exc:
                raise LabError(f"{step.describe()}: {os.strerror(exc.code)}") from None
    finally:
        sockets.close()


def _apply_step(step, sockets: _Sockets, on_namespace: Callable[[str], None]) -> None:
    match step:
        case CreateNamespace(netns=ns):
            if (NETNS_DIR / ns).exists():
                raise LabError(f"namespace {ns} already exists; pick another lab name")
            on_namespace(ns)
            netns.create(ns)
        case CreateVeth(netns=ns, ifname=ifname, peer_netns=peer_ns, peer_ifname=peer_if):
            sockets[ns].link("add", ifname=ifname, kind="veth",
                             peer={"ifname": peer_if, "net_ns_fd": peer_ns})
        case SetLink(netns=ns, ifname=ifname, mtu=mtu, txqlen=txqlen):
            extra = {"mtu": mtu} if mtu else {}
            if txqlen:
                extra["txqlen"] = txqlen
            sockets[ns].link("set", index=sockets.index(ns, ifname), state="up", **extra)
        case AddAddress(netns=ns, ifname=ifname, address=address, prefixlen=prefixlen):
            sockets[ns].addr("add", index=sockets.index(ns, ifname), address=address, prefixlen=prefixlen)
        case AddDefaultRoute(netns=ns, gateway=gateway, family=family):
            if family == 4:
                sockets[ns].route("add", dst="0.0.0.0/0", gateway=gateway)
            else:
                sockets[ns].route("add", dst="::/0", gateway=gateway, family=socket.AF_INET6)
        case SetSysctls(netns=ns, values=values):
            try:
                netns.run_in(ns, lambda: netns.write_sysctls(list(values)))
            except OSError as exc:
                raise LabError(f"sysctl in {ns}: {exc.strerror} ({exc.filename}); "
                               "the name does not exist in a network namespace on this kernel, "
                               "or the value was refused") from None
        case RunTool(netns=ns, argv=argv):
            try:
                NetnsExecutor(ns).run(list(argv), timeout_s=30)
            except ExecError as exc:
                raise LabError(f"{step.describe()} was refused: {exc.stderr.strip() or exc}") from None
        case WriteSysfs(netns=ns, path=path, value=value):
            NetnsExecutor(ns).run(["tee", path], stdin=value + "\n", timeout_s=10)
        case LoadRuleset(netns=ns, ruleset=ruleset):
            load_ruleset(ns, ruleset)
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
        if not entry.name.isdigit():
            continue
        try:
            st = os.stat(entry / "ns" / "net")
        except OSError:
            continue
        if (st.st_dev, st.st_ino) in targets:
            pids.append(int(entry.name))
    return pids


def _kill_all(pids: list[int], wait_s: float = 2.0) -> None:
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
            return


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
