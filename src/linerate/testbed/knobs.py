"""Which axes a testbed kind can honour, and the knob specs of real DUTs.

The namespace lab emulates links, firewalls and MTUs; a real testbed cannot — its hosts'
configuration decides them — so such axes are refused there with the reason, before anything
runs. DUT knobs of a real testbed: `dut_sysctls` (any sysctl name of the DUT's OS) and
`dut_offloads` ('IF:feature=on|off,...;IF:...', interface flags set by the DutDriver).
"""

from __future__ import annotations

from typing import Any

from linerate.axes import AXES, VM_AXES
from linerate.dut.drivers import driver_for_os
from linerate.errors import ConfigError
# The spec parsers live in topology/link.py (pure; axes.py imports them from there); these
# names stay importable from here.
from linerate.topology.link import ANY_SYSCTL_NAME_RE as SYSCTL_NAME_RE
from linerate.topology.link import ANY_SYSCTL_VALUE_RE as SYSCTL_VALUE_RE
from linerate.topology.link import IFNAME_RE
from linerate.topology.link import OFFLOAD_FEATURES as _OFFLOAD_FEATURES
from linerate.topology.link import parse_any_sysctls, parse_dut_offloads, parse_sysctls

__all__ = ["IFNAME_RE", "NAMESPACE_ONLY", "OFFLOAD_FEATURES", "SYSCTL_NAME_RE", "SYSCTL_VALUE_RE",
           "parse_any_sysctls", "parse_dut_offloads", "refuse_unsupported"]

OFFLOAD_FEATURES = tuple(_OFFLOAD_FEATURES)  # short names: rx, tx, tso, gso, gro, lro
NAMESPACE_ONLY = {"link_rate": "an emulated link rate", "delay_ms": "netem delay", "jitter_ms": "netem jitter",
                  "loss_pct": "netem loss", "txqueuelen": "the lab's queue lengths", "dut_rps": "the lab's RPS masks",
                  "offloads": "the lab's veth offloads (use dut_offloads)", "firewall": "the lab's ruleset",
                  "mtu": "the lab's MTU", "dut": "a DUT built by linerate"}  # + every VM axis (VM_AXES)


POOL_AXES = ("pairs", "pair_link_rate")  # a generator pool: the namespace lab's (topology/pool.py)
GUEST_SIDE = ("firewall", "dut_rps")  # what linerate sets inside a Linux VM DUT only (its ruleset, RPS masks)


def refuse_unset_on_image(cell: dict[str, Any]) -> None:
    """ConfigError for a DUT-side axis an own image of this OS would not get: linerate writes rulesets and
    RPS masks into Linux images only; a BSD image's (or OPNsense's, pfSense's) own configuration decides them."""
    dut_os = cell.get("dut_os", AXES["dut_os"].default)
    if driver_for_os(dut_os).configures_guest:
        return
    # its runtime knobs (dut_sysctls, dut_offloads, offloads on its side) go through the OS's driver
    # (testbed/vm_image.py apply_driver_knobs); a ruleset and RPS masks are linerate's Linux commands
    named = [name for name in GUEST_SIDE if name in cell and cell[name] != AXES[name].default]
    if named:
        raise ConfigError(named[0], f"{cell[named[0]]!r} is set inside the DUT, and linerate writes it only into "
                          f"Linux images; the {dut_os} image's own configuration decides it (set it there)")


IMAGE_ONLY_AXES = ("dut_os", "dut_ssh_key", "dut_host_keys", "dut_ssh_user", "dut_boot_timeout")


def refuse_unsupported(cells: list[dict[str, Any]], kind: str, inventory=None) -> None:
    """ConfigError (exit 2, nothing touched) for the first axis value this testbed kind cannot honour."""
    for cell in cells:
        if kind == "namespace":
            vm = cell.get("dut") == "vm"
            for name in VM_AXES:
                if not vm and name in cell and cell[name] != AXES[name].default:
                    raise ConfigError(name, f"{cell[name]!r} sets the VM DUT; add dut = \"vm\" (or remove the axis)")
            if cell.get("dut_offloads", "default") != "default" and not (vm and cell.get("dut_image")):
                raise ConfigError("dut_offloads", "sets interface flags of a real DUT (--testbed) or an own image "
                                  "(dut_image); the namespace lab's offloads are the 'offloads' axis")
            pooled = [n for n in POOL_AXES if cell.get(n, AXES[n].default) != AXES[n].default]
            if pooled and cell.get("direction") == "bidir":  # a pair link alone makes the lab a pool of one
                raise ConfigError("direction", f"bidir with {pooled[0]}: a pool sums one direction's receivers; "
                                  "measure forward and reverse apart")
            if vm and pooled:
                raise ConfigError(pooled[0], f"{cell[pooled[0]]!r}: a generator pool runs in the namespace lab; a VM "
                                  "DUT has one client and one server (remove it, or leave out dut = \"vm\")")
            if vm and cell.get("dut_image"):
                refuse_unset_on_image(cell)
            for name in IMAGE_ONLY_AXES if vm and not cell.get("dut_image") else ():
                if cell.get(name, AXES[name].default) != AXES[name].default:
                    raise ConfigError(name, f"{cell[name]!r} describes an own image's system or login; the built-in "
                                      "guest has neither: give dut_image too (or remove it)")
            try:
                if not vm:  # a VM guest is a whole kernel: any sysctl name it has
                    parse_sysctls(cell.get("dut_sysctls", "default"))
            except ValueError as exc:
                raise ConfigError("dut_sysctls", f"{exc}; other names need a VM DUT (dut = \"vm\") or a real "
                                  "DUT (--testbed)") from None
            continue
        pooled = [n for n in POOL_AXES if cell.get(n, AXES[n].default) != AXES[n].default]
        if pooled:
            raise ConfigError(pooled[0], f"{cell[pooled[0]]!r} builds a pool in the namespace lab; on real hosts the "
                              "pool is the inventory's [[client]] and [[server]] tables (remove the axis)")
        for name, what in {**NAMESPACE_ONLY, **{n: 'a VM DUT (dut = "vm")' for n in VM_AXES}}.items():
            if name in cell and cell[name] != AXES[name].default:
                raise ConfigError(name, f"{cell[name]!r} needs {what}, which only the namespace lab emulates; on a "
                                  "real testbed the hosts' own configuration decides it (remove the axis)")
        if inventory is not None and inventory.pooled and cell.get("direction") == "bidir":
            raise ConfigError("direction", "bidir on a generator pool (the inventory's [[client]]/[[server]] tables): "
                              "a pool sums one direction's receivers; measure forward and reverse apart")
        knobs = cell.get("dut_sysctls", "default") != "default" or cell.get("dut_offloads", "default") != "default"
        if knobs and (inventory is None or inventory.dut is None):
            raise ConfigError("dut_sysctls", "DUT knobs need a [dut] host in the inventory")
        if inventory is not None and inventory.dut is not None and inventory.dut.interfaces:
            for ifname, _, _ in parse_dut_offloads(cell.get("dut_offloads", "default")):
                if ifname not in inventory.dut.interfaces:
                    raise ConfigError("dut_offloads", f"interface {ifname} is not in the inventory's dut.interfaces "
                                      f"({', '.join(inventory.dut.interfaces)})")
