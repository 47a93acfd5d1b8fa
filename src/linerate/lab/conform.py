"""Whether a lab that is already up is still what its state file says. A kept lab's record (its
firewall, MTU, link rates, pairs) is what every command's results are stored under, and a state file is
input like any other: before a command measures on a kept lab, the lab's host side is read back and
compared with the plan its record gives (topology/plan.py, vm/plan.py) — the namespaces, every MTU set,
every tbf rate, and the shape of linerate's nftables table on the DUT (its chains and rules). Anything
that differs refuses the command before it changes anything.

Not compared: a generator port's own qdisc (a killed rfc2544's pacing bucket may stand in for it, and
the command puts the pair link back: the same pair link is compared at the switch end of that link),
and what a VM DUT holds inside its guest (read back when the lab came up)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable

from linerate.topology.firewall import TABLE
from linerate.topology.plan import CLIENT_IF, CreateNamespace, LoadRuleset, Plan, RunTool, SetLink

RATE_TOLERANCE = 1e-3  # tc keeps a rate in bytes/s: a rate in bit/s comes back rounded to 8 bit/s

Reader = Callable[[str, list[str]], str]  # (namespace, argv) -> the command's stdout


def planned_rates(plan: Plan) -> dict[tuple[str, str], dict[str, int]]:
    """(namespace, device) -> {parent ("root", "1:1"): tbf rate in bit/s} of every tbf the plan adds."""
    rates: dict[tuple[str, str], dict[str, int]] = {}
    for step in plan.steps:
        argv = list(step.argv) if isinstance(step, RunTool) else []
        if argv[:2] != ["tc", "qdisc"] or "tbf" not in argv:
            continue
        parent = "root" if "root" in argv else argv[argv.index("parent") + 1]
        rate = argv[argv.index("rate") + 1]
        rates.setdefault((step.netns, argv[argv.index("dev") + 1]), {})[parent] = int(rate.removesuffix("bit"))
    return rates


def held_tbf_rates(tc_json: str) -> dict[str, int]:
    """`tc -j qdisc show dev IF` -> {parent: the tbf's rate in bit/s} (iproute2 prints bytes/s)."""
    try:
        return {("root" if q.get("root") else str(q.get("parent"))): round(float(q["options"]["rate"]) * 8)
                for q in json.loads(tc_json or "[]") if q.get("kind") == "tbf"}
    except (ValueError, TypeError, KeyError, AttributeError):
        return {}


def _same_rates(planned: dict[str, int], held: dict[str, int]) -> bool:
    return planned.keys() == held.keys() and all(
        abs(held[parent] - rate) <= RATE_TOLERANCE * rate for parent, rate in planned.items())


def _rates_text(rates: dict[str, int]) -> str:
    """The link a port's tbfs make: their lowest rate (the shaper; the root segments at a multiple of it)."""
    return f"shaped at {min(rates.values()) / 1e6:g} Mbit/s" if rates else "not shaped"


def ruleset_shape(text: str) -> dict[str, tuple[int, int]]:
    """nftables text of linerate's table (as rendered, or as `nft list table` prints it back) -> {chain: (its
    rules, how many of them match on ct state)}: what tells its firewall profiles apart (stateful, nat,
    rules:N, rules-stateless:N); the rules' own text is not compared (nft prints it back normalized)."""
    shape: dict[str, tuple[int, int]] = {}
    chain = None
    for line in (line.strip() for line in text.splitlines()):
        if line.startswith("chain ") and line.endswith("{"):
            chain = line.split()[1]
            shape[chain] = (0, 0)
        elif line == "}":
            chain = None
        elif chain and line and not line.startswith(("type ", "policy ", "#")):
            rules, stateful = shape[chain]
            shape[chain] = (rules + 1, stateful + ("ct state" in line))
    return shape


def _shape_text(shape: dict[str, tuple[int, int]]) -> str:
    return ", ".join(f"{rules} rule{'s' * (rules != 1)} in chain {chain} ({stateful} on ct state)"
                     for chain, (rules, stateful) in sorted(shape.items())) or "no table of linerate's"


def plan_drift(plan: Plan, dut_netns: str, exists: Callable[[str], bool], read: Reader) -> list[str]:
    """What of the plan the lab does not hold, one phrase each ([]: it holds all of it)."""
    namespaces = [step.netns for step in plan.steps if isinstance(step, CreateNamespace)]
    missing = [ns for ns in namespaces if not exists(ns)]
    if missing:
        return [f"namespace {ns} is missing" for ns in missing]
    problems = []
    for step in plan.steps:
        if isinstance(step, SetLink) and step.mtu is not None:
            try:
                mtu = json.loads(read(step.netns, ["ip", "-j", "link", "show", "dev", step.ifname]) or "[]")[0]["mtu"]
            except (ValueError, IndexError, KeyError, TypeError):
                mtu = None  # no such link (or no answer): named below as not the file's
            if mtu != step.mtu:
                problems.append(f"{step.ifname} in {step.netns} has MTU {mtu}, the file says {step.mtu}")
    planned = planned_rates(plan)
    ports = {(step.netns, step.ifname) for step in plan.steps if isinstance(step, SetLink)} | planned.keys()
    for ns, dev in sorted(ports):
        if dev == CLIENT_IF and re.search(r"-client[0-9]*$", ns):
            continue  # a generator's port: the command puts its pair link back (see above)
        held = held_tbf_rates(read(ns, ["tc", "-j", "qdisc", "show", "dev", dev]))
        if not _same_rates(planned.get((ns, dev), {}), held):
            problems.append(f"{dev} in {ns} is {_rates_text(held)}, the file says "
                            f"{_rates_text(planned.get((ns, dev), {}))}")
    planned_rules = ruleset_shape("".join(step.ruleset for step in plan.steps if isinstance(step, LoadRuleset)))
    held_rules = ruleset_shape(read(dut_netns, ["nft", "list", "table", "inet", TABLE]))
    if planned_rules != held_rules:
        problems.append(f"the DUT {dut_netns} filters with {_shape_text(held_rules)}, the file says "
                        f"{_shape_text(planned_rules)}")
    return problems
