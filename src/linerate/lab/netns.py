"""Named network namespaces without forking, the way iproute2's `ip netns add` does it
(ip/ipnetns.c): make /run/netns a shared mount, unshare(CLONE_NEWNET), and bind-mount the new
namespace onto /run/netns/NAME.

Namespaces are per *thread* on Linux, so the work happens on a short-lived worker thread: the
thread unshares (or setns-es) into the namespace, does what must be done inside (write sysctls,
open a netlink socket that stays bound to that namespace, talk to libnftables), and ends; the
rest of the process never changes namespace. pyroute2's netns.create forks a helper process per
namespace instead, which cost ~10 ms each here.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import shlex
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from linerate.exec import LocalExecutor
from linerate.lab.links import fresh_links
from linerate.topology.link import parse_ethtool_features

CLONE_NEWNET, CLONE_NEWNS = 0x40000000, 0x00020000
MS_BIND, MS_REC, MS_PRIVATE, MS_SHARED = 4096, 16384, 1 << 18, 1 << 20
MNT_DETACH = 2
NETNS_DIR = Path("/run/netns")


def etc_dir(ns: str) -> Path:
    """The directory whose files `ip netns exec NS` bind-mounts over /etc (ip-netns(8)); a lab's has none."""
    return Path("/etc/netns") / ns


T = TypeVar("T")
_libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
_rundir_ready = False


def _check(result: int, what: str) -> None:
    if result != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def _prepare_rundir() -> None:
    """/run/netns must be a shared mount so the bind mounts show in every mount namespace."""
    global _rundir_ready
    if _rundir_ready:
        return
    NETNS_DIR.mkdir(parents=True, exist_ok=True)
    target = str(NETNS_DIR).encode()
    if _libc.mount(b"none", target, b"none", MS_SHARED | MS_REC, None) != 0:
        _check(_libc.mount(target, target, b"none", MS_BIND | MS_REC, None), "bind /run/netns")
        _check(_libc.mount(b"none", target, b"none", MS_SHARED | MS_REC, None), "share /run/netns")
    _rundir_ready = True


def _on_thread(fn: Callable[[], T]) -> T:
    box: dict[str, object] = {}

    def body() -> None:
        try:
            box["result"] = fn()
        except BaseException as exc:  # handed back to the caller's thread
            box["error"] = exc

    worker = threading.Thread(target=body, name="linerate-netns")
    worker.start()
    worker.join()
    if "error" in box:
        raise box["error"]  # type: ignore[misc]
    return box["result"]  # type: ignore[return-value]


def create(name: str, inside: Callable[[], T] | None = None) -> T | None:
    """Create namespace `name`; then run `inside()` in it (on the same worker thread)."""
    _prepare_rundir()
    path = NETNS_DIR / name
    fd = os.open(path, os.O_RDONLY | os.O_CREAT | os.O_EXCL, 0)
    os.close(fd)

    def work():
        _check(_libc.unshare(CLONE_NEWNET), "unshare(CLONE_NEWNET)")
        _check(_libc.mount(b"/proc/thread-self/ns/net", str(path).encode(), b"none", MS_BIND, None),
               f"bind mount {path}")
        return inside() if inside else None

    try:
        return _on_thread(work)
    except BaseException:
        remove(name)
        raise


def run_in(name: str, fn: Callable[[], T]) -> T:
    """Run fn() on a worker thread that has entered namespace `name`."""
    def work():
        fd = os.open(NETNS_DIR / name, os.O_RDONLY | os.O_CLOEXEC)
        try:
            _check(_libc.setns(fd, CLONE_NEWNET), f"setns({name})")
        finally:
            os.close(fd)
        return fn()

    return _on_thread(work)


def read_in(name: str, fn: Callable[[], T]) -> T | str:
    """run_in for a read: what fn() gives in namespace `name`, or why not, as text ("unreadable: ..."), which a
    kept lab's snapshot compares like any other value."""
    try:
        return run_in(name, fn)
    except (OSError, ValueError) as exc:
        return f"unreadable: {getattr(exc, 'strerror', None) or exc}"


def remove(name: str) -> bool:
    """Unmount and delete /run/netns/NAME. False when it did not exist."""
    path = NETNS_DIR / name
    if not path.exists():
        return False
    _libc.umount2(str(path).encode(), MNT_DETACH)
    path.unlink(missing_ok=True)
    return True


def write_sysctls(pairs: list[tuple[str, str]]) -> None:
    """Write sysctls in the calling thread's namespace (call via create/run_in)."""
    for key, value in pairs:
        with open("/proc/sys/" + key.replace(".", "/"), "w") as handle:
            handle.write(value)


def write_sysfs(pairs: list[tuple[str, str]]) -> None:
    """Write /sys files of the calling thread's network namespace (call via run_in).

    /sys shows the devices of the namespace it was mounted in, so, like `ip netns exec`, the
    worker thread takes a private mount namespace of its own (unshare(CLONE_NEWNS) is allowed per
    thread; it ends with the thread) and mounts a fresh sysfs over /sys there, without a fork."""
    _check(_libc.unshare(CLONE_NEWNS), "unshare(CLONE_NEWNS)")
    _check(_libc.mount(b"none", b"/", None, MS_REC | MS_PRIVATE, None), "make / private")
    _libc.umount2(b"/sys", MNT_DETACH)
    _check(_libc.mount(b"sysfs", b"/sys", b"sysfs", 0, None), "mount sysfs")
    for path, value in pairs:
        with open(path, "w") as handle:
            handle.write(value + "\n")


def _in_throwaway_netns(script: str, stdin: str | None = None) -> str | None:
    """The stdout of a shell script run in a network namespace of its own that ends with it (`unshare --net`):
    nothing it makes outlives it. None when it fails."""
    made = LocalExecutor().run(["unshare", "--net", "sh", "-c", script], stdin=stdin, timeout_s=15, check=False)
    return made.stdout if made.returncode == 0 else None


_PER_NAMESPACE_KEYS: set[str] = set()


def per_namespace_net_keys() -> set[str] | None:
    """The net.* sysctl keys (dotted) a namespace made just now may write: each namespace holds its own. A key
    it lacks or may only read (net.ipv4.tcp_mem, net.core.rmem_max, nf_conntrack_max) is the host's, shared by
    every namespace (lab/snapshot.py host_settings). Asked once per process; None when it cannot be made."""
    if not _PER_NAMESPACE_KEYS:
        listed = _in_throwaway_netns("find /proc/sys/net -type f -perm -u+w")
        if listed is None:
            return None
        _PER_NAMESPACE_KEYS.update(line.removeprefix("/proc/sys/").replace("/", ".") for line in listed.split())
    return set(_PER_NAMESPACE_KEYS)


_VETH_DEFAULTS: dict[str, str] = {}


def new_veth_features() -> dict[str, str]:
    """`ethtool -k` of a veth made just now (ethtool's long name -> state): what this kernel gives a new veth,
    against which a kept lab's ports that no step changed are compared (lab/conform.py). Asked once per process."""
    if not _VETH_DEFAULTS:
        listed = _in_throwaway_netns("ip link add lrprobe0 type veth peer name lrprobe1 && ethtool -k lrprobe0")
        _VETH_DEFAULTS.update(parse_ethtool_features(listed or ""))
    return dict(_VETH_DEFAULTS)


_CANONICAL: dict[str, str | None] = {}


def canonical_ruleset(ruleset: str) -> str | None:
    """How this host's nft prints a ruleset back once loaded (`nft list ruleset`) in a throwaway namespace: a
    kept lab's table is compared with it line by line (lab/conform.py). None when it cannot be loaded there."""
    if ruleset not in _CANONICAL:
        _CANONICAL[ruleset] = _in_throwaway_netns("nft -f - && nft list ruleset", stdin=ruleset)
    return _CANONICAL[ruleset]


_NEW_SYSCTLS: dict[tuple[tuple[str, str], ...], str | None] = {}


def new_namespace_sysctls(values: tuple[tuple[str, str], ...]) -> str | None:
    """`sysctl -a` of the net.* keys of a namespace made just now with `values` set in it (as a lab plan's
    SetSysctls step sets them): what a kept lab's namespace holds where no step of its plan changed a key
    (lab/sysctls.py). None when it cannot be made. Asked once per process for each set of values."""
    if values not in _NEW_SYSCTLS:
        writes = "".join(f" {shlex.quote(f'{key}={value}')}" for key, value in values)
        script = (f"sysctl -q -w{writes} >/dev/null && " if values else "") + "sysctl -a -r '^net[.]' 2>/dev/null"
        _NEW_SYSCTLS[values] = _in_throwaway_netns(script)
    return _NEW_SYSCTLS[values]


_NEW_LINKS: dict[str, dict] = {}


def new_links() -> dict[str, dict]:
    """A new veth's GSO/GRO sizes, a new bridge's settings and a new bridge port's ({"veth", "bridge",
    "bridge_slave"}: lab/links.py fresh_links), made in a namespace of their own: what a kept lab's links are
    compared with where its plan sets nothing. Asked once per process; {} when they cannot be made."""
    if not _NEW_LINKS:
        _NEW_LINKS.update(fresh_links(_in_throwaway_netns(
            "ip link add lrprobe0 type veth peer name lrprobe1 && ip link add lrprobe2 type bridge && "
            "ip link set lrprobe1 master lrprobe2 && ip -d -j link show")))
    return dict(_NEW_LINKS)


_QDISCS: dict[tuple[int, tuple[tuple[str, ...], ...]], str | None] = {}


def canonical_qdiscs(mtu: int, argvs: tuple[tuple[str, ...], ...]) -> str | None:
    """`tc -j -d qdisc show` of a new veth (MTU `mtu`) after the plan's `tc qdisc` argv for one port, each run
    on it (its `dev` given as the probe's): how this kernel holds those qdiscs, every option included (a
    tbf's burst, latency, overhead and mpu), against which a kept lab's port is compared (lab/conform.py).
    None when they cannot be made here."""
    key = (mtu, argvs)
    if key not in _QDISCS:
        steps = [" ".join(shlex.quote("lrprobe0" if i > 0 and argv[i - 1] == "dev" else word)
                          for i, word in enumerate(argv)) for argv in argvs]
        _QDISCS[key] = _in_throwaway_netns(" && ".join([
            f"ip link add lrprobe0 mtu {int(mtu)} type veth peer name lrprobe1", *steps,
            "tc -j -d qdisc show dev lrprobe0"]))
    return _QDISCS[key]
