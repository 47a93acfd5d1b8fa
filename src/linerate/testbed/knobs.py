"""Which axes a testbed kind can honour, and the knob specs of real DUTs.

The namespace lab emulates links, firewalls and MTUs; a real testbed cannot — its hosts'
configuration decides them — so such axes are refused there with the reason, before anything
runs. DUT knobs of a real testbed: `dut_sysctls` (any sysctl name of the DUT's OS) and
`dut_offloads` ('IF:feature=on|off,...;IF:...', interface flags set by the DutDriver).
"""

from __future__ import annotations

import re
from typing import Any

from linerate.errors import ConfigError

SYSCTL_NAME_RE = re.compile(r"^[a-z][a-z0-9_]*(\.[A-Za-z0-9_%-]+)+$")
SYSCTL_VALUE_RE = re.compile(r"^[0-9A-Za-z_ .:-]{1,64}$")
IFNAME_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_.-]{0,14}$")
OFFLOAD_FEATURES = ("rx", "tx", "tso", "gso", "gro", "lro")
NAMESPACE_ONLY = {"link_rate": "an emulated link rate", "delay_ms": "netem delay", "jitter_ms": "netem jitter",
                  "loss_pct": "netem loss", "txqueuelen": "the lab's queue lengths", "dut_rps": "the lab's RPS masks",
                  "offloads": "the lab's veth offloads (use dut_offloads)", "firewall": "the lab's ruleset",
                  "mtu": "the lab's MTU", "dut": "a DUT built by linerate"}  # + every VM axis (VM_AXES)


def parse_any_sysctls(text: str) -> tuple[tuple[str, str], ...]:
    """'default' or 'NAME=VALUE;NAME=VALUE' with NAME any sysctl (net.inet.ip.forwarding, kern.ipc.maxsockbuf)."""
    from linerate.topology.link import parse_sysctl_pairs

    return parse_sysctl_pairs(text, SYSCTL_NAME_RE, SYSCTL_VALUE_RE,
                              "NAME=VALUE with a sysctl name such as net.inet.ip.redirect")


def parse_dut_offloads(text: str) -> tuple[tuple[str, str, str], ...]:
    """'default' or 'igb0:tso=off,lro=off;igb1:rx=off' -> ((ifname, feature, on|off), ...)."""
    text = text.strip()
    if text == "default":
        return ()
    settings: dict[tuple[str, str], str] = {}
    for group in filter(None, (g.strip() for g in text.split(";"))):
        ifname, sep, features = group.partition(":")
        if not sep or not IFNAME_RE.match(ifname):
            raise ValueError(f"'{group}' needs IF:feature=on|off with IF a DUT interface name such as igb0")
        for item in filter(None, (f.strip() for f in features.split(","))):
            name, eq, state = item.partition("=")
            if not eq or name not in OFFLOAD_FEATURES or state not in ("on", "off"):
                raise ValueError(f"'{item}' needs feature=on|off with feature one of {', '.join(OFFLOAD_FEATURES)}")
            settings[(ifname, name)] = state
    if not settings:
        raise ValueError("'' is empty; write 'default' to leave the DUT's offloads as they are")
    return tuple((ifname, name, state) for (ifname, name), state in sorted(settings.items()))


def refuse_unsupported(cells: list[dict[str, Any]], kind: str, inventory=None) -> None:
    """ConfigError (exit 2, nothing touched) for the first axis value this testbed kind cannot honour."""
    from linerate.experiment.axes import AXES
    from linerate.topology.link import parse_sysctls

    from linerate.experiment.axes import VM_AXES

    for cell in cells:
        if kind == "namespace":
            vm = cell.get("dut") == "vm"
            for name in VM_AXES:
                if not vm and name in cell and cell[name] != AXES[name].default:
                    raise ConfigError(name, f"{cell[name]!r} sets the VM DUT; add dut = \"vm\" (or remove the axis)")
            if cell.get("dut_offloads", "default") != "default":
                raise ConfigError("dut_offloads", "sets interface flags of a real DUT (--testbed); the namespace "
                                  "lab's offloads are the 'offloads' axis")
            try:
                if not vm:  # a VM guest is a whole kernel: any sysctl name it has
                    parse_sysctls(cell.get("dut_sysctls", "default"))
            except ValueError as exc:
                raise ConfigError("dut_sysctls", f"{exc}; other names need a VM DUT (dut = \"vm\") or a real "
                                  "DUT (--testbed)") from None
            continue
        for name, what in {**NAMESPACE_ONLY, **{n: 'a VM DUT (dut = "vm")' for n in VM_AXES}}.items():
            if name in cell and cell[name] != AXES[name].default:
                raise ConfigError(name, f"{cell[name]!r} needs {what}, which only the namespace lab emulates; on a "
                                  "real testbed the hosts' own configuration decides it (remove the axis)")
        knobs = cell.get("dut_sysctls", "default") != "default" or cell.get("dut_offloads", "default") != "default"
        if knobs and (inventory is None or inventory.dut is None):
            raise ConfigError("dut_sysctls", "DUT knobs need a [dut] host in the inventory")
        if inventory is not None and inventory.dut is not None and inventory.dut.interfaces:
            for ifname, _, _ in parse_dut_offloads(cell.get("dut_offloads", "default")):
                if ifname not in inventory.dut.interfaces:
                    raise ConfigError("dut_offloads", f"interface {ifname} is not in the inventory's dut.interfaces "
                                      f"({', '.join(inventory.dut.interfaces)})")
