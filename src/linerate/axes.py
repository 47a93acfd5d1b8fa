"""The axis registry: every parameter an experiment may vary (or fix) is registered here, with its
scope, default and validator. Later features add axes with register(); nothing else changes.

scope "trial": changes only the iperf3 run (family, streams ...);
scope "lab":   needs a differently built lab (firewall, MTU ...): the scheduler keeps one live lab
               per distinct combination of lab-scoped values.

The axes are the words an experiment file and a testbed share: experiment/ validates files and
expands matrices with them, testbed/ opens a lab for a combination of lab-scoped values (lab_spec,
vm_params) and refuses what it cannot honour, kinds/ and cli/ read them. So the registry sits
below all of those, at the package root; it imports only the pure specs it validates through
(model, topology/, vm/'s plan and qemu argv).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from linerate.errors import ConfigError
from linerate.model import DIRECTIONS, MAX_PAIRS, PROTOCOLS, FirewallProfile, TrialParams
from linerate.topology.link import (LinkSpec, parse_any_sysctls, parse_cpu_mask, parse_dut_offloads, parse_link_rate,
                                    parse_offloads, parse_sysctls)
from linerate.topology.plan import MTU_MAX, MTU_MIN, LabSpec
from linerate.vm.plan import DUT_OSES
from linerate.vm.qemu import ACCELS, parse_virtio_offloads


@dataclass(frozen=True)
class Axis:
    name: str
    scope: str
    default: Any
    validate: Callable[[Any], Any]  # canonical value, or ValueError saying what is allowed
    allowed: str


AXES: dict[str, Axis] = {}


def register(axis: Axis) -> Axis:
    if axis.scope not in ("trial", "lab"):
        raise ValueError(f"axis {axis.name}: scope must be trial or lab")
    AXES[axis.name] = axis
    return axis


def _whole(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{value!r} is not a whole number")
    return value


_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def _text(value: Any) -> str:
    """A string exactly as written: leading/trailing spaces or control characters (a newline in
    "nat\n") are refused, never trimmed, so what runs is what the file says."""
    if not isinstance(value, str):
        raise ValueError(f"{value!r} is not a string")
    if _CONTROL.search(value):
        raise ValueError(f"{value[:40]!r} contains a control character (a newline?); write the value alone")
    if value != value.strip():
        raise ValueError(f"{value[:40]!r} has spaces before or after it; write {value.strip()[:40]!r}")
    return value


def _via_model(convert: Callable[[Any], Any], build: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """Validate through the model's own constructor, so files and CLI reject the same values."""
    def validate(value: Any) -> Any:
        converted = convert(value)
        try:
            return build(converted)
        except ConfigError as exc:
            raise ValueError(exc.problem) from None
    return validate


def _whole_between(low: int, high: int) -> Callable[[Any], int]:
    def validate(value: Any) -> int:
        number = _whole(value)
        if not low <= number <= high:
            raise ValueError(f"{number} is out of range")
        return number
    return validate


def _mtu(value: Any) -> int:
    mtu = _whole(value)
    if not MTU_MIN <= mtu <= MTU_MAX:
        raise ValueError(f"{mtu} is out of range")
    return mtu


def _congestion(value: Any) -> str:
    """'' (or 'default') is the kernel's default congestion control."""
    text = _text(value).strip()
    return "" if text in ("", "default") else TrialParams(congestion=text).congestion or ""


register(Axis("family", "trial", 4, _via_model(_whole, lambda v: TrialParams(family=v).family), "4 or 6"))
register(Axis("streams", "trial", 1, _via_model(_whole, lambda v: TrialParams(streams=v).streams), "1 to 128"))
register(Axis("direction", "trial", "forward",
              _via_model(_text, lambda v: TrialParams(direction=v).direction), ", ".join(DIRECTIONS)))
register(Axis("protocol", "trial", "tcp",
              _via_model(_text, lambda v: TrialParams(protocol=v).protocol), ", ".join(PROTOCOLS)))
register(Axis("congestion", "trial", "", _congestion, "default, or a congestion control name such as cubic or bbr"))
register(Axis("udp_bitrate_bps", "trial", 1_000_000_000,
              _via_model(_whole, lambda v: TrialParams(udp_bitrate_bps=v).udp_bitrate_bps), "a bit rate > 0"))
register(Axis("latency", "trial", False, _via_model(lambda v: v, lambda v: TrialParams(latency=v).latency),
              "true (RTT probes idle and under the trial's load) or false"))
register(Axis("firewall", "lab", "none", _via_model(_text, lambda v: str(FirewallProfile.parse(v))),
              "none, stateful, nat, rules:N or rules-stateless:N"))
register(Axis("mtu", "lab", 1500, _mtu, f"{MTU_MIN} to {MTU_MAX}"))


def trial_params(cell: dict[str, Any]) -> TrialParams:
    return TrialParams(family=cell["family"], streams=cell["streams"], direction=cell["direction"],
                       duration_s=cell["duration_s"], omit_s=cell["omit_s"], protocol=cell["protocol"],
                       congestion=cell["congestion"] or None, udp_bitrate_bps=cell["udp_bitrate_bps"],
                       latency=cell.get("latency", False))


def lab_params(cell: dict[str, Any]) -> dict[str, Any]:
    """The lab-scoped axis values of a cell: what a testbed is opened with."""
    return {name: cell[name] for name, axis in AXES.items() if axis.scope == "lab"}


def lab_key(cell: dict[str, Any]) -> tuple:
    return tuple(sorted((name, cell[name]) for name, axis in AXES.items() if axis.scope == "lab"))


# --- link and per-interface knobs (topology.link) ---------------------------------------------

def _link_rate(value: Any) -> str:
    text = str(value).lower() if isinstance(value, (str, int)) and not isinstance(value, bool) else None
    if not text:  # as given: '1g ' or '1g\n' is refused, never trimmed into something else
        raise ValueError(f"{str(value)[:20]!r} is not a link rate")
    parse_link_rate(text)
    return text


def _non_negative(limit: float) -> Callable[[Any], float]:
    def validate(value: Any) -> float:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= limit:
            raise ValueError(f"{value!r} is not a number from 0 to {limit:g}")
        return float(value)
    return validate


def _spec_text(parse: Callable[[str], Any]) -> Callable[[Any], str]:
    def validate(value: Any) -> str:
        text = _text(value).strip()
        if not text:
            raise ValueError("'' is empty; write 'default' for the kernel's defaults")
        parse(text)
        return text
    return validate


def _txqueuelen(value: Any) -> int:
    number = _whole(value)
    if not 0 <= number <= 1_000_000:
        raise ValueError(f"{number} is out of range (0 keeps the kernel default)")
    return number


def _rps(value: Any) -> str:
    return "default" if _text(value).strip() == "default" else parse_cpu_mask(_text(value))


def _register_link_axes() -> None:
    register(Axis("link_rate", "lab", "none", _link_rate,
                  "none, or a rate from 100k to 40g such as 100m, 1g, 2.5g, 10g"))
    register(Axis("delay_ms", "lab", 0.0, _non_negative(60_000), "milliseconds >= 0 (needs sch_netem)"))
    register(Axis("jitter_ms", "lab", 0.0, _non_negative(60_000), "milliseconds >= 0 (needs sch_netem)"))
    register(Axis("loss_pct", "lab", 0.0, _non_negative(100), "percent 0..100 (needs sch_netem)"))
    register(Axis("offloads", "lab", "default", _spec_text(parse_offloads),
                  "default, or WHERE:feature=on|off[,...][;WHERE:...] with WHERE client, dut_in, dut_out, "
                  "dut, server or all and feature rx, tx, tso, gso, gro or lro"))
    register(Axis("dut_sysctls", "lab", "default", _spec_text(parse_any_sysctls),
                  "default, or NAME=VALUE[;NAME=VALUE] (the namespace lab: net.* only; a real DUT: any sysctl)"))
    register(Axis("dut_offloads", "lab", "default", _spec_text(parse_dut_offloads),
                  "default, or IF:feature=on|off[,...][;IF:...] on a real DUT (--testbed), feature rx, tx, tso, "
                  "gso, gro or lro"))
    register(Axis("dut_rps", "lab", "default", _rps, "default, or a hexadecimal CPU mask such as 3"))
    register(Axis("txqueuelen", "lab", 0, _txqueuelen, "a queue length; 0 keeps the kernel default"))
    register(Axis("pairs", "lab", 1, _whole_between(1, MAX_PAIRS), f"1 to {MAX_PAIRS} client/server pairs sending "
                  "together (a generator pool)"))
    register(Axis("pair_link_rate", "lab", "none", _link_rate, "none, or each pair's access link rate, such as "
                  "100m or 1g (link_rate stays the DUT's)"))


_register_link_axes()


def _one_of(*choices: str) -> Callable[[Any], str]:
    def validate(value: Any) -> str:
        text = _text(value).strip()
        if text not in choices:
            raise ValueError(f"{text!r} is not one of {', '.join(choices)}")
        return text
    return validate


def _image(value: Any) -> str:
    text = _text(value).strip()
    if text and not text.endswith((".qcow2", ".img", ".raw")):
        raise ValueError(f"{text!r} is not a disk image (.qcow2, .img or .raw)")
    return text


def _file_text(value: Any) -> str:
    text = _text(value).strip()
    if "\x00" in text or len(text) > 4096:
        raise ValueError("is not a file path")
    return text


def _user_name(value: Any) -> str:
    text = _text(value).strip()
    if not re.fullmatch(r"[a-z_][a-z0-9_.-]{0,31}", text):
        raise ValueError(f"{text[:40]!r} is not a user name (lower-case letters, digits, _ . -)")
    return text


def _register_vm_axes() -> None:
    """The VM DUT (vm/): which DUT, its vCPUs, memory, accelerator and virtio NICs."""
    register(Axis("dut", "lab", "namespace", _one_of("namespace", "vm"),
                  "namespace (the DUT is the host's kernel in a namespace) or vm (a qemu guest)"))
    register(Axis("dut_vcpus", "lab", 1, _whole_between(1, 64), "1 to 64 guest vCPUs (dut = vm)"))
    register(Axis("dut_memory_mb", "lab", 256, _whole_between(128, 65536), "128 to 65536 MiB (dut = vm)"))
    register(Axis("dut_accel", "lab", "auto", _one_of(*ACCELS), "auto (kvm when a KVM guest boots here), kvm or tcg"))
    register(Axis("virtio_queues", "lab", 1, _whole_between(1, 16), "1 to 16 queue pairs per virtio NIC (dut = vm)"))
    register(Axis("vhost", "lab", "off", _one_of("off", "on"), "off or on (vhost-net; dut = vm)"))
    register(Axis("virtio_offloads", "lab", "on", _spec_text(parse_virtio_offloads),
                  "on (qemu's defaults), off (every offload), or PROP=on|off[,...] with PROP csum, guest_csum, gso, "
                  "guest_tso4, guest_tso6, guest_ecn, guest_ufo, host_tso4, host_tso6, host_ecn, host_ufo, mrg_rxbuf"))
    register(Axis("dut_image", "lab", "", _image, "'' (the built-in Linux guest) or your own disk image (qcow2 or "
                  "raw), booted on a throwaway overlay and reached over SSH on its management NIC"))
    register(Axis("dut_os", "lab", "linux", _one_of(*DUT_OSES), ", ".join(DUT_OSES) + " (the OS of dut_image)"))
    register(Axis("dut_ssh_key", "lab", "", _file_text, "the private key that logs in to dut_image "
                  "(default: IMG.key beside the image)"))
    register(Axis("dut_host_keys", "lab", "", _file_text, "the host keys dut_image's sshd holds, .pub or known_hosts "
                  "lines (default: IMG.host_keys beside the image; none: the first key seen in the lab)"))
    register(Axis("dut_ssh_user", "lab", "root", _user_name, "the user that logs in to dut_image (default root)"))
    register(Axis("dut_boot_timeout", "lab", 0, _whole_between(0, 3600), "seconds dut_image may take to answer "
                  "SSH (0: 300 under TCG, 120 under KVM)"))


_register_vm_axes()
VM_AXES = ("dut_vcpus", "dut_memory_mb", "dut_accel", "virtio_queues", "vhost", "virtio_offloads", "dut_image",
           "dut_os", "dut_ssh_key", "dut_host_keys", "dut_ssh_user", "dut_boot_timeout")


def vm_params(lab_params: dict[str, Any]) -> dict[str, Any]:
    """The VM axes of a lab, defaults filled in."""
    return {name: lab_params.get(name, AXES[name].default) for name in VM_AXES}


def lab_spec(lab_id: str, lab_params: dict[str, Any]):
    """LabSpec for one combination of lab-scoped axis values."""
    p = {name: AXES[name].default for name, axis in AXES.items() if axis.scope == "lab"} | dict(lab_params)
    link = LinkSpec(parse_link_rate(p["link_rate"]), p["delay_ms"], p["jitter_ms"], p["loss_pct"])
    return LabSpec(lab_id, FirewallProfile.parse(p["firewall"]), p["mtu"], link=link,
                   offloads=parse_offloads(p["offloads"]), dut_sysctls=parse_sysctls(p["dut_sysctls"]),
                   dut_rps_mask=None if p["dut_rps"] == "default" else p["dut_rps"],
                   txqueuelen=p["txqueuelen"] or None, pairs=p["pairs"],
                   pair_link=LinkSpec(parse_link_rate(p["pair_link_rate"])) if p["pair_link_rate"] != "none" else None)
