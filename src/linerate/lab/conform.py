"""Whether a lab that is already up is still what its state file says. A kept lab's record (its
firewall, MTU, link and pair-link rates, pairs, knobs) is what every command's results are stored under,
and a state file is input like any other: before a command measures on a kept lab, the lab is read back
and compared with every step of the plan its record gives (topology/plan.py, vm/plan.py) that leaves a
trace to read: the namespaces; each link's MTU and queue length; each namespace's links as a whole
(lab/links.py), addresses, routes, policy rules and permanent neighbours (lab/routing.py); each port's qdiscs (their kinds, and
every tbf's rate); each offload set with ethtool; each sysctl; each sysfs value (RPS masks); and the
shape of linerate's nftables table on the DUT (its chains and rules); a port's qdiscs with every option
(a tbf's burst, latency, overhead, mpu) against the same tc commands run on a new veth (lab/netns.py
canonical_qdiscs). Anything that differs refuses the
command before it changes anything.

A VM DUT's guest is compared the same way, through its own executor (a guest's plan: vm/plan.py guest_plan),
its reads asked first and answered in one round trip (prefetched_drift).

Not compared: a pool's generator port's own qdisc where the pool has a pair link (a killed rfc2544's
pacing bucket may stand in for it, and the command puts the pair link back: the same pair link is compared
at the switch end of that link; a one-pair lab's client port is compared like any other); a
netem's own delay and loss figures (this kernel has no netem to read them back from: its presence is
compared); the other known gaps are listed in docs/files-and-state.md."""

from __future__ import annotations

import json
import re
from collections.abc import Callable

from linerate.topology.firewall import TABLE
from linerate.topology.link import OFFLOAD_FEATURES, parse_ethtool_features
from linerate.lab.links import guest_port_drift, link_drift, link_mtus, planned_links, sysfs_drift, xfrm_drift
from linerate.lab.routing import link_owners, routing_drift
from linerate.lab.sysctls import sysctl_drift
from linerate.topology.plan import (ADDR, CLIENT_IF, AddAddress, AddDefaultRoute, CreateNamespace, CreateVeth, LoadRuleset, Plan, RunTool, SetLink,
                                    SetSysctls, WriteSysfs)

RATE_TOLERANCE = 1e-3  # tc keeps a rate in bytes/s: a rate in bit/s comes back rounded to 8 bit/s

Reader = Callable[[str, list[str]], str]  # (namespace, argv) -> the command's stdout
SysctlReader = Callable[[str, str], str]  # (namespace, key) -> its value


def planned_rates(plan: Plan) -> dict[tuple[str, str], dict[str, int]]:
    """(namespace, device) -> {parent ("root", "1:1"): tbf rate in bit/s} of every tbf the plan adds."""
    return {port: {parent: rate for parent, (kind, rate) in qdiscs.items() if kind == "tbf"}
            for port, qdiscs in planned_qdiscs(plan).items()}


def planned_tc(plan: Plan) -> dict[tuple[str, str], tuple[tuple[str, ...], ...]]:
    """(namespace, device) -> the plan's `tc qdisc` argv for that port, in order."""
    argvs: dict[tuple[str, str], tuple[tuple[str, ...], ...]] = {}
    for step in plan.steps:
        if isinstance(step, RunTool) and step.argv[:2] == ("tc", "qdisc"):
            port = (step.netns, step.argv[step.argv.index("dev") + 1])
            argvs[port] = (*argvs.get(port, ()), tuple(step.argv))
    return argvs


def planned_qdiscs(plan: Plan) -> dict[tuple[str, str], dict[str, tuple[str, int | None]]]:
    """(namespace, device) -> {parent: (qdisc kind, its rate in bit/s or None)} of every qdisc the plan adds."""
    qdiscs: dict[tuple[str, str], dict[str, tuple[str, int | None]]] = {}
    for port, argvs in planned_tc(plan).items():
        for argv in argvs:
            parent = "root" if "root" in argv else argv[argv.index("parent") + 1]
            kind = next((word for word in ("tbf", "netem") if word in argv), None)
            if kind is not None:
                rate = int(argv[argv.index("rate") + 1].removesuffix("bit")) if kind == "tbf" else None
                qdiscs.setdefault(port, {})[parent] = (kind, rate)
    return qdiscs


DEFAULT_QDISCS = ("noqueue", "pfifo_fast", "fq_codel", "mq")  # what the kernel attaches by itself (default_qdisc)


def held_qdisc_kinds(tc_json: str) -> dict[str, str]:
    """`tc -j qdisc show dev IF` -> {parent: kind} of every qdisc the kernel does not attach by itself (an htb,
    a pfifo or an ingress someone added counts like a tbf or netem)."""
    try:
        return {("root" if q.get("root") else str(q.get("parent"))): str(q["kind"])
                for q in json.loads(tc_json or "[]") if q.get("kind") not in DEFAULT_QDISCS}
    except (ValueError, TypeError, KeyError, AttributeError):
        return {}


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
    rules, how many of them match on ct state)}, and for a base chain "<chain> hook" -> (1, 1 if its policy is
    drop): what tells its firewall profiles apart (stateful, nat, rules:N, rules-stateless:N). The rules' own
    text is compared apart (plan_drift, against how this host's nft prints the planned ruleset back)."""
    return next(iter(ruleset_tables(text).values()), {})


def ruleset_tables(text: str) -> dict[str, dict[str, tuple[int, int]]]:
    """`nft list ruleset` -> {"family name" of each table: its ruleset_shape}; each base chain (one with a
    hook) also gives "<chain> hook" -> (1, 1 if its policy is drop else 0)."""
    tables: dict[str, dict[str, tuple[int, int]]] = {}
    table, chain, depth = None, None, 0
    for line in (line.strip() for line in text.splitlines()):
        if line.startswith("table ") and line.endswith("{"):
            table, depth = " ".join(line.split()[1:3]), 1
            tables[table] = {}
        elif table is None or not line or line.startswith("#"):
            continue
        elif line.endswith("{"):
            depth += 1
            if depth == 2 and line.startswith("chain "):
                chain = line.split()[1]
                tables[table][chain] = (0, 0)
        elif line.startswith("}"):
            depth -= 1
            chain = None if depth < 2 else chain
            table = None if depth == 0 else table
        elif chain is not None and depth == 2:
            if line.startswith("type ") and " hook " in line:
                tables[table][f"{chain} hook"] = (1, int("policy drop" in line))
            elif not line.startswith(("type ", "policy ")):
                rules, stateful = tables[table][chain]
                tables[table][chain] = (rules + 1, stateful + ("ct state" in line))
    return tables


def _shape_text(shape: dict[str, tuple[int, int]]) -> str:
    chains = ", ".join(f"{rules} rule{'s' * (rules != 1)} in chain {chain} ({stateful} on ct state)"
                       for chain, (rules, stateful) in sorted(shape.items()) if not chain.endswith(" hook"))
    drops = [chain.removesuffix(" hook") for chain, (_, drop) in sorted(shape.items()) if chain.endswith(" hook") and drop]
    return (chains + (f"; policy drop in {', '.join(drops)}" if drops else "")) or "no table of linerate's"


def foreign_filters(tables: dict[str, dict[str, tuple[int, int]]], own: bool = True) -> list[str]:
    """The tables other than linerate's that can act on packets: a base chain (a hook) holding a rule or
    a drop policy (an empty accepting chain, as Debian's default /etc/nftables.conf makes, does not). `own`:
    the DUT's, where linerate's firewall table is the lab's; elsewhere a counting table of linerate's (a killed
    rfc2544's or rfc9693's, which `lab clean` removes) is not another's either."""
    found = []
    for name, shape in sorted(tables.items()):
        if name == f"inet {TABLE}" if own else name.split(" ")[-1].startswith(TABLE):
            continue
        active = [chain for chain, (_, drop) in shape.items() if chain.endswith(" hook") and
                  (drop or shape.get(chain.removesuffix(" hook"), (0, 0))[0])]
        if active:
            found.append(f"table {name} ({', '.join(sorted(c.removesuffix(' hook') for c in active))})")
    return found


def plan_drift(plan: Plan, dut_netns: str, exists: Callable[[str], bool], read: Reader,
               sysctl: SysctlReader, present: Callable[[], list[str]] = list,
               veth_defaults: Callable[[], dict[str, str]] = dict,
               canonical: Callable[[str], str | None] = lambda ruleset: None,
               new_sysctls: Callable[[tuple[tuple[str, str], ...]], str | None] = lambda values: None,
               new_links: Callable[[], dict[str, dict]] = dict,
               qdiscs: Callable[[int, tuple[tuple[str, ...], ...]], str | None] = lambda mtu, argvs: None) -> list[str]:
    """What of the plan the lab does not hold, one phrase each ([]: it holds all of it), and what it holds
    beyond the plan: `present()` gives the lab's namespaces as they are (one the plan has not is named);
    every veth end the plan makes has each offload feature linerate sets (OFFLOAD_FEATURES) as a plan step
    sets it or, where none does, as a new veth has it (`veth_defaults()`: ethtool -k's long name -> state);
    a table of another's that acts on packets, in any of the lab's namespaces, is named; linerate's own table on
    the DUT is compared by its shape and, where `canonical(ruleset)` gives how this nft prints the planned
    ruleset back (lab/netns.py canonical_ruleset), by its whole text; every net.* sysctl of each namespace
    against `new_sysctls(values)`, a new namespace's `sysctl -a` with the plan's values for it set
    (lab/sysctls.py); its addresses, routes, rules and permanent neighbours (lab/routing.py); its links, their
    GSO/GRO sizes and bridge settings against `new_links()`'s, XDP, a switch's static entries and IPsec
    (lab/links.py)."""
    read = _once(read)
    namespaces = [step.netns for step in plan.steps if isinstance(step, CreateNamespace)]
    missing = [ns for ns in namespaces if not exists(ns)]
    if missing:
        return [f"namespace {ns} is missing" for ns in missing]
    problems = [f"namespace {ns} is there, and the file's lab has none such" for ns in present() if ns not in namespaces]
    veth_ends = {(step.netns, step.ifname) for step in plan.steps if isinstance(step, CreateVeth)}
    veth_ends |= {(step.peer_netns, step.peer_ifname) for step in plan.steps if isinstance(step, CreateVeth)}
    if veth_ends:
        problems += _veth_offload_drift(plan, veth_ends, read, veth_defaults())
    for step in plan.steps:
        if isinstance(step, SetLink) and (step.mtu is not None or step.txqlen is not None):
            problems += _link_drift(step, read)
        elif isinstance(step, RunTool) and step.argv[:2] == ("ethtool", "-K") and (step.netns, step.argv[2]) \
                not in veth_ends:
            problems += _offload_drift(step, read)
        elif isinstance(step, SetSysctls):
            for key, wanted in step.values:
                got = " ".join(sysctl(step.netns, key).split())
                if got != " ".join(wanted.split()):
                    problems.append(f"{key} in {step.netns} is '{got}', the file says '{wanted}'")
        elif isinstance(step, WriteSysfs):
            got = read(step.netns, ["cat", step.path]).strip()
            if _mask(got) != _mask(step.value):
                problems.append(f"{step.path} in {step.netns} is '{got}', the file says '{step.value}'")
    planned, argvs = planned_qdiscs(plan), planned_tc(plan)
    ports = {(step.netns, step.ifname) for step in plan.steps if isinstance(step, SetLink)} | planned.keys()
    for ns, dev in sorted(ports):
        if plan.spec.pair_link is not None and dev == CLIENT_IF and re.search(r"-client[0-9]*$", ns):
            continue  # a pool's generator port: the command puts its pair link back (see above)
        shown = read(ns, ["tc", "-j", "-d", "qdisc", "show", "dev", dev])
        wanted = planned.get((ns, dev), {})
        rates = {parent: rate for parent, (kind, rate) in wanted.items() if kind == "tbf"}
        held = held_tbf_rates(shown)
        if not _same_rates(rates, held):
            problems.append(f"{dev} in {ns} is {_rates_text(held)}, the file says {_rates_text(rates)}")
        elif held_qdisc_kinds(shown) != {parent: kind for parent, (kind, _) in wanted.items()}:
            problems.append(f"{dev} in {ns} has {_kinds_text(held_qdisc_kinds(shown))}, the file says "
                            f"{_kinds_text({parent: kind for parent, (kind, _) in wanted.items()})}")
        elif argvs.get((ns, dev)) and all(kind != "netem" for kind, _ in wanted.values()) and \
                (reference := qdiscs(plan.spec.mtu, argvs[(ns, dev)])) is not None and \
                _qdisc_options(shown) != _qdisc_options(reference):
            problems.append(f"{dev} in {ns} has its qdiscs with other options than the file's "
                            f"({_options_text(shown, reference)})")
    planned = "".join(step.ruleset for step in plan.steps if isinstance(step, LoadRuleset))
    planned_rules = ruleset_shape(planned)
    listed = read(dut_netns, ["nft", "list", "ruleset"])
    tables = ruleset_tables(listed)
    held_rules = tables.get(f"inet {TABLE}", {})
    if planned_rules != held_rules:
        problems.append(f"the DUT {dut_netns} filters with {_shape_text(held_rules)}, the file says "
                        f"{_shape_text(planned_rules)}")
    elif planned and (reference := canonical(planned)) is not None and \
            _table_text(reference, f"inet {TABLE}") != _table_text(listed, f"inet {TABLE}"):
        problems.append(f"the DUT {dut_netns} filters with other rules in linerate's table than the file's "
                        f"{plan.spec.firewall} (same shape, other matches)")
    problems += [f"the DUT {dut_netns} also filters with {table}, which the file's lab has not"
                 for table in foreign_filters(tables)]
    for ns in namespaces:
        if ns != dut_netns:
            problems += [f"{ns} filters with {table}, which the file's lab has not"
                         for table in foreign_filters(ruleset_tables(read(ns, ["nft", "list", "ruleset"])), own=False)]
    addresses = [step for step in plan.steps if isinstance(step, AddAddress)]
    defaults = [step for step in plan.steps if isinstance(step, AddDefaultRoute)]
    peers = [step.address for step in addresses] if namespaces else \
        [ADDR[(role, family)][0] for role in ("client", "server") for family in (4, 6)]  # a guest's plan: its own
    owners = link_owners(namespaces, read)
    for ns in namespaces or [dut_netns]:  # a guest's plan makes no namespace: only its lab ports are compared
        problems += routing_drift(ns, addresses, defaults, read, whole=bool(namespaces), peers=peers, owners=owners)
    links, fresh = planned_links(plan), new_links()
    written = {step.path for step in plan.steps if isinstance(step, WriteSysfs)}
    for ns in namespaces:
        problems += link_drift(ns, links.get(ns, {}), read, fresh) + xfrm_drift(ns, read)
        problems += sysfs_drift(ns, None, written, read)
    if not namespaces:
        ports = {step.ifname for step in addresses}
        problems += guest_port_drift(dut_netns, ports, read) + sysfs_drift(dut_netns, ports, written, read)
    for ns in namespaces:
        values = tuple(pair for step in plan.steps if isinstance(step, SetSysctls) and step.netns == ns
                       for pair in step.values)
        reference = new_sysctls(values)
        if reference is not None:
            problems += sysctl_drift(ns, read(ns, ["sysctl", "-a", "-r", "^net[.]"]), reference,
                                     {key for key, _ in values}, link_mtus(ns, read))
    return problems


def _qdisc_options(tc_json: str | None) -> list[tuple[str, str, str, str]] | None:
    """`tc -j -d qdisc show dev IF` -> (parent, handle, kind, options as JSON) of each qdisc the kernel does not
    attach by itself, sorted; None if it is not tc's JSON."""
    try:
        return sorted(("root" if q.get("root") else str(q.get("parent")), str(q.get("handle")), str(q.get("kind")),
                       json.dumps(q.get("options"), sort_keys=True))
                      for q in json.loads(tc_json or "[]") if q.get("kind") not in DEFAULT_QDISCS)
    except (ValueError, TypeError, AttributeError):
        return None


def _options_text(shown: str, reference: str) -> str:
    held, wanted = _qdisc_options(shown) or [], _qdisc_options(reference) or []
    differ = [f"{kind} {handle} {options}" for (parent, handle, kind, options) in held if
              (parent, handle, kind, options) not in wanted]
    return "; ".join(differ)[:200] or "another set"


def _once(read: Reader) -> Reader:
    """`read`, each (namespace, argv) asked of it once (several comparisons read the same `ip -d -j link show`)."""
    answers: dict[tuple[str, tuple[str, ...]], str] = {}

    def cached(ns: str, argv: list[str]) -> str:
        key = (ns, tuple(argv))
        if key not in answers:
            answers[key] = read(ns, argv)
        return answers[key]
    return cached


def _table_text(listed: str, name: str) -> list[str]:
    """One table's lines as `nft list ruleset` prints them, stripped (its rules' own text)."""
    lines, depth = [], 0
    for line in (line.strip() for line in listed.splitlines()):
        if depth == 0 and line != f"table {name} {{":
            continue
        lines.append(line)
        depth += line.endswith("{") - line.startswith("}")
        if depth == 0:
            break
    return lines


def prefetched_drift(plan: Plan, host: str, run_many: Callable[[list[list[str]]], list],
                     canonical: Callable[[str], str | None] = lambda ruleset: None) -> list[str]:
    """plan_drift of steps that all run on one host reached by one executor (a VM's guest, named `host` in
    the steps): every read plan_drift makes is asked first, then all are answered by one `run_many` (one
    agent or SSH round trip, ~0.2-1 s under TCG, instead of one per read; the sysctls by one command)."""
    asked: list[list[str]] = []

    def ask(_: str, argv: list[str]) -> str:
        if list(argv) not in asked:
            asked.append(list(argv))
        return ""

    plan_drift(plan, host, lambda ns: True, ask, lambda ns, key: ask(ns, ["sysctl", "-n", key]))
    answers = _answered(asked, run_many)
    return plan_drift(plan, host, lambda ns: True, lambda ns, argv: answers.get(tuple(argv), ""),
                      lambda ns, key: answers.get(("sysctl", "-n", key), ""), canonical=canonical)


def _answered(asked: list[list[str]], run_many: Callable[[list[list[str]]], list]) -> dict[tuple[str, ...], str]:
    """argv -> stdout ("" where it failed) of every read asked, in one run_many. The sysctls are read by one
    `sysctl -n KEY...` (each value on its own line, in order: sysctl(8); busybox's usage: [KEY[=VALUE]]...):
    a command costs ~0.2-0.3 s in a TCG guest, and a guest plan reads several keys (6 on the reference image).
    Where that one fails (a key the kernel lacks) or its lines are not one a key, the keys are read one by one,
    in a second round trip."""
    def stdouts(argvs: list[list[str]], results: list) -> dict[tuple[str, ...], str]:
        return {tuple(argv): result.stdout if result.returncode == 0 else "" for argv, result in zip(argvs, results)}

    def one_sysctl(argv: list[str]) -> bool:
        return len(argv) == 3 and argv[:2] == ["sysctl", "-n"]

    keys = [argv[2] for argv in asked if one_sysctl(argv)]
    others = [argv for argv in asked if not one_sysctl(argv)]
    results = run_many(others + ([["sysctl", "-n", *keys]] if keys else []))
    answers = stdouts(others, results)
    if keys:
        joined = results[-1]
        lines = joined.stdout.split("\n")
        one_by_one = [["sysctl", "-n", key] for key in keys]
        if len(keys) == 1 or joined.returncode != 0 or len(lines) != len(keys) + 1 or lines[-1] != "":
            answers.update(stdouts(one_by_one, [joined] if len(keys) == 1 else run_many(one_by_one)))
        else:
            answers.update({tuple(argv): f"{line}\n" for argv, line in zip(one_by_one, lines)})
    return answers


def _link_drift(step: SetLink, read: Reader) -> list[str]:
    try:
        link = json.loads(read(step.netns, ["ip", "-j", "link", "show", "dev", step.ifname]) or "[]")[0]
    except (ValueError, IndexError, KeyError, TypeError):
        link = {}  # no such link (or no answer): named below as not the file's
    link = link if isinstance(link, dict) else {}
    return [f"{step.ifname} in {step.netns} has {name} {link.get(key)}, the file says {wanted}"
            for key, name, wanted in (("mtu", "MTU", step.mtu), ("txqlen", "queue length", step.txqlen))
            if wanted is not None and link.get(key) != wanted]


def _veth_offload_drift(plan: Plan, ends: set[tuple[str, str]], read: Reader,
                        defaults: dict[str, str]) -> list[str]:
    """Each veth end's offload features (OFFLOAD_FEATURES) against the plan's ethtool steps for it, or else
    a new veth's (a file saying `offloads = "default"` for a lab built with them off is not the lab's)."""
    long_names = {short: long for short, long in OFFLOAD_FEATURES.values()}
    planned: dict[tuple[str, str], dict[str, str]] = {}
    for step in plan.steps:
        if isinstance(step, RunTool) and step.argv[:2] == ("ethtool", "-K"):
            args = step.argv[3:]
            planned.setdefault((step.netns, step.argv[2]), {}).update(
                {long_names.get(name, name): state for name, state in zip(args[::2], args[1::2])})
    problems = []
    for ns, ifname in sorted(ends):
        features = parse_ethtool_features(read(ns, ["ethtool", "-k", ifname]))
        for short, (_, long) in OFFLOAD_FEATURES.items():
            wanted = planned.get((ns, ifname), {}).get(long) or (defaults.get(long) or "").split(" ")[0]
            got = features.get(long, "unknown").split(" ")[0]
            if wanted and got != wanted:
                said = "" if long in planned.get((ns, ifname), {}) else " (a new veth's)"
                problems.append(f"{short} on {ifname} in {ns} is {got}, the file says {wanted}{said}")
    return problems


def _offload_drift(step: RunTool, read: Reader) -> list[str]:
    """`ethtool -K IF name on|off ...` against `ethtool -k IF` (which names each feature in full)."""
    ifname, args = step.argv[2], step.argv[3:]
    features = parse_ethtool_features(read(step.netns, ["ethtool", "-k", ifname]))
    long_names = {short: long for short, long in OFFLOAD_FEATURES.values()}
    problems = []
    for name, wanted in zip(args[::2], args[1::2]):
        got = features.get(long_names.get(name, name), "unknown")
        if got.split()[0] != wanted:
            problems.append(f"{name} on {ifname} in {step.netns} is {got}, the file says {wanted}")
    return problems


def _mask(text: str) -> int | None:
    try:
        return int(text.replace(",", "") or "0", 16)
    except ValueError:
        return None


def _kinds_text(kinds: dict[str, str]) -> str:
    return " and ".join(f"{kind} ({parent})" for parent, kind in sorted(kinds.items()))[:200] or "no qdisc of its own"
