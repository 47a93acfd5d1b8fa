"""The axis registry: every parameter an experiment may vary (or fix) is registered here, with its
scope, default and validator. Later features add axes with register(); nothing else changes.

scope "trial": changes only the iperf3 run (family, streams ...);
scope "lab":   needs a differently built lab (firewall, MTU ...): the scheduler keeps one live lab
               per distinct combination of lab-scoped values.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from linerate.errors import ConfigError
from linerate.model import DIRECTIONS, PROTOCOLS, FirewallProfile, TrialParams
from linerate.topology.plan import MTU_MAX, MTU_MIN


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


def _text(value: Any) -> str:
    if not isinstance(value, str):
        raise ValueError(f"{value!r} is not a string")
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


def _mtu(value: Any) -> int:
    mtu = _whole(value)
    if not MTU_MIN <= mtu <= MTU_MAX:
        raise ValueError(f"{mtu} is out of range")
    return mtu


def _congestion(value: Any) -> str:
    return TrialParams(congestion=_text(value)).congestion or ""


register(Axis("family", "trial", 4, _via_model(_whole, lambda v: TrialParams(family=v).family), "4 or 6"))
register(Axis("streams", "trial", 1, _via_model(_whole, lambda v: TrialParams(streams=v).streams), "1 to 128"))
register(Axis("direction", "trial", "forward",
              _via_model(_text, lambda v: TrialParams(direction=v).direction), ", ".join(DIRECTIONS)))
register(Axis("protocol", "trial", "tcp",
              _via_model(_text, lambda v: TrialParams(protocol=v).protocol), ", ".join(PROTOCOLS)))
register(Axis("congestion", "trial", "", _congestion, "a congestion control name such as cubic or bbr"))
register(Axis("udp_bitrate_bps", "trial", 1_000_000_000,
              _via_model(_whole, lambda v: TrialParams(udp_bitrate_bps=v).udp_bitrate_bps), "a bit rate > 0"))
register(Axis("firewall", "lab", "none", _via_model(_text, lambda v: str(FirewallProfile.parse(v))),
              "none, stateful, nat or rules:N"))
register(Axis("mtu", "lab", 1500, _mtu, f"{MTU_MIN} to {MTU_MAX}"))


def trial_params(cell: dict[str, Any]) -> TrialParams:
    return TrialParams(family=cell["family"], streams=cell["streams"], direction=cell["direction"],
                       duration_s=cell["duration_s"], omit_s=cell["omit_s"], protocol=cell["protocol"],
                       congestion=cell["congestion"] or None, udp_bitrate_bps=cell["udp_bitrate_bps"])


def lab_key(cell: dict[str, Any]) -> tuple:
    return tuple(sorted((name, cell[name]) for name, axis in AXES.items() if axis.scope == "lab"))
