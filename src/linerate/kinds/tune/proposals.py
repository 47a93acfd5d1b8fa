"""What a tune tries when the file names no candidates, and how knobs stack.

propose(): the testbed says which knobs it can change and to what (Testbed.knob_choices(): a VM
DUT its virtio offloads and queues, real hosts their interface offloads; both, the runtime
sysctls the knowledge catalog recommends for a router on the DUT's OS); the levers of the start's
limit verdicts go first. merge(): a knob that holds several settings (dut_sysctls, dut_offloads)
adds an accepted setting to those already accepted instead of replacing them.
"""

from __future__ import annotations

from typing import Any

from linerate.kinds.tune.options import Candidate
from linerate.topology.link import parse_any_sysctls, parse_dut_offloads

MULTI = {"dut_sysctls", "dut_offloads"}


def merge(knob: str, current: Any, value: Any) -> Any:
    """The knob's value with `value` added (settings of the same name replaced)."""
    if knob not in MULTI or current in (None, "default") or value == "default":
        return value
    if knob == "dut_sysctls":
        settings = dict(parse_any_sysctls(str(current))) | dict(parse_any_sysctls(str(value)))
        return ";".join(f"{name}={setting}" for name, setting in settings.items())
    settings = {(ifname, feature): state for ifname, feature, state in parse_dut_offloads(str(current))}
    settings |= {(ifname, feature): state for ifname, feature, state in parse_dut_offloads(str(value))}
    groups: dict[str, list[str]] = {}
    for (ifname, feature), state in sorted(settings.items()):
        groups.setdefault(ifname, []).append(f"{feature}={state}")
    return ";".join(f"{ifname}:{','.join(features)}" for ifname, features in groups.items())


def propose(start: dict[str, Any], choices: dict[str, list[tuple[Any, str]]], levers: set[str]) -> list[Candidate]:
    """choices: knob -> [(value, why)] the testbed offers; the levers of the start's verdicts first."""
    found = [Candidate(knob, value, why) for knob, options in choices.items() for value, why in options
             if merge(knob, start.get(knob), value) != start.get(knob)]
    return sorted(found, key=lambda c: c.knob not in levers)
