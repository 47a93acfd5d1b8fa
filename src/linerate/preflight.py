"""Preflight: check everything before anything runs, and report *all* problems at once.

Binaries are looked up on PATH; kernel features are probed for real in a scratch namespace
(create a veth pair, load an nftables table with conntrack and NAT, attach each qdisc to lo) —
reading /proc/config.gz alone would miss modules and lie on kernels without it.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from linerate.errors import ExecError, PreflightError
from linerate.exec import Executor, LocalExecutor, NetnsExecutor
from linerate.lab.scratch import scratch_namespace
from linerate.vm.accel import cached_kvm_status

MIN_IPERF3 = (3, 7)  # --bidir appeared in iperf3 3.7

# feature -> (needed for, what is missing when it fails)
QDISCS = {
    "tbf": "link rate emulation (sch_tbf)",
    "htb": "link rate emulation (sch_htb)",
    "netem": "delay/jitter/loss emulation (sch_netem)",
    "cake": "cake shaping experiments (sch_cake)",
    "fq": "fq pacing experiments (sch_fq)",
}


@dataclass(frozen=True)
class Check:
    name: str
    ok: bool
    detail: str
    required: bool = True
    fix: str = ""


def parse_iperf3_version(text: str) -> tuple[int, ...] | None:
    match = re.search(r"iperf (\d+)\.(\d+)(?:\.(\d+))?", text)
    return tuple(int(g) for g in match.groups() if g is not None) if match else None


def check_binaries(which: Callable[[str], str | None] = shutil.which,
                   host: Executor | None = None) -> list[Check]:
    checks = []
    for name, required, package in (("ip", True, "iproute2"), ("nft", True, "nftables"),
                                    ("nstat", True, "iproute2"), ("tc", True, "iproute2"),
                                    ("ethtool", True, "ethtool"), ("taskset", True, "util-linux"),
                                    ("trafgen", False, "netsniff-ng"), ("fping", False, "fping"),
                                    ("h2load", False, "nghttp2-client"), ("nginx", False, "nginx-light")):
        path = which(name)
        checks.append(Check(f"binary {name}", path is not None, path or "not found", required,
                            "" if path else f"apt-get install {package}"))
    path = which("iperf3")
    if path is None:
        checks.append(Check("binary iperf3", False, "not found", True, "apt-get install iperf3"))
    else:
        out = (host or LocalExecutor()).run(["iperf3", "--version"], check=False, timeout_s=10)
        version = parse_iperf3_version(out.stdout + out.stderr)
        ok = version is not None and version >= MIN_IPERF3
        shown = ".".join(map(str, version)) if version else "unknown version"
        checks.append(Check("binary iperf3", ok, f"{path} ({shown})", True,
                            "" if ok else "iperf3 3.7 or newer is needed (for --bidir)"))
    return checks


def check_root() -> Check:
    ok = os.geteuid() == 0
    return Check("root", ok, "running as root" if ok else f"running as uid {os.geteuid()}", True,
                 "" if ok else "run as root (namespaces, veth and nftables need CAP_NET_ADMIN)")


def probe_kernel() -> list[Check]:
    """Probe kernel features in a scratch namespace; removes it again, whatever happens."""
    if not os.path.exists("/proc/self/ns/net"):
        return [Check("netns", False, "/proc/self/ns/net missing", True, "kernel needs CONFIG_NET_NS")]
    with scratch_namespace() as (name, _):
        return _probe_inside(NetnsExecutor(name))


def _try(host: Executor, argv: list[str], stdin: str | None = None) -> str | None:
    """None when argv succeeded, else its last error line."""
    try:
        host.run(argv, stdin=stdin, timeout_s=20)
        return None
    except ExecError as exc:
        lines = exc.stderr.strip().splitlines()
        errors = [line for line in lines if "Error" in line or "error" in line]
        return (errors or lines or [str(exc)])[0].strip()


def _probe_inside(host: Executor) -> list[Check]:
    checks = [Check("netns", True, "network namespaces work")]
    err = _try(host, ["ip", "link", "add", "p0", "type", "veth", "peer", "name", "p1"])
    checks.append(Check("veth", err is None, err or "veth pairs work", True,
                        "" if err is None else "kernel needs CONFIG_VETH"))
    nft_tests = {
        "nftables": "table inet t {\n chain c {\n type filter hook forward priority 0;\n }\n}\n",
        "conntrack": "table inet t {\n chain c {\n ct state established accept\n }\n}\n",
        "nat": "table inet n {\n chain p {\n type nat hook postrouting priority 100;\n masquerade\n }\n}\n",
    }
    for feature, script in nft_tests.items():
        err = _try(host, ["nft", "-f", "-"], stdin=script)
        checks.append(Check(feature, err is None, err or "works", True,
                            "" if err is None else f"kernel lacks {feature} support for nftables"))
    _try(host, ["ip", "link", "set", "lo", "up"])
    for qdisc, purpose in QDISCS.items():
        args = {"tbf": ["rate", "1gbit", "burst", "64kb", "latency", "10ms"],
                "htb": [], "netem": ["delay", "1ms"], "cake": [], "fq": []}[qdisc]
        err = _try(host, ["tc", "qdisc", "replace", "dev", "lo", "root", qdisc, *args])
        detail = "available" if err is None else f"unavailable: sch_{qdisc} is not in this kernel ({err})"
        checks.append(Check(f"qdisc {qdisc}", err is None, detail, False,
                            "" if err is None else f"{purpose} will be refused on this machine"))
    return checks


def vm_checks() -> list[Check]:
    """What a VM DUT (dut = "vm") needs; optional unless an experiment asks for a VM."""
    qemu = shutil.which("qemu-system-x86_64")
    tun = os.path.exists("/dev/net/tun")
    checks = [Check("vm qemu", bool(qemu and tun),
                    f"{qemu}, /dev/net/tun" if qemu and tun else ("/dev/net/tun missing" if qemu else "not installed"),
                    False, "" if qemu and tun else "install qemu-system-x86 (make install) for dut = \"vm\""),
              Check("vm vhost-net", os.path.exists("/dev/vhost-net"),
                    "/dev/vhost-net" if os.path.exists("/dev/vhost-net") else "unavailable: no /dev/vhost-net "
                    "(kernel without vhost_net)", False, "vhost = \"on\" will be refused on this machine")]
    usable, why = cached_kvm_status()
    checks.append(Check("vm kvm", bool(usable), why, False,
                        "" if usable else "VM DUTs boot under TCG (software CPU); own images need KVM"))
    return checks


def run_checks(probe: bool = True) -> list[Check]:
    checks = [check_root(), *check_binaries(), *vm_checks()]
    if probe and checks[0].ok and shutil.which("ip") and shutil.which("nft"):
        checks += probe_kernel()
    return checks


def require(checks: Iterable[Check], extra_required: Iterable[str] = ()) -> None:
    """Raise PreflightError listing every failed required check (plus named optional ones)."""
    needed = set(extra_required)
    problems = [f"{c.name}: {c.detail}" + (f" — {c.fix}" if c.fix else "")
                for c in checks if not c.ok and (c.required or c.name in needed)]
    if problems:
        raise PreflightError(problems)
