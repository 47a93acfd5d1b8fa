"""Which Linux sysctl names each long-term kernel series has, read from that release's own source tree
(tuning/names/linux-releases.tsv, built by tools/extract_linux_releases.py), and what that says about a
name on the kernels judged.

The table holds, per release 4.4 .. 6.12: every name its ctl_table declarations place under a path,
every name its ip-sysctl / nf_conntrack-sysctl / sysctl/net documentation describes (with the release
from which that text calls it a no-op: "Obsolete since linux-6.6", "a legacy option, it has no effect
anymore"), and every leaf name (the last part) any table of the tree declares, placed or not.

A kernel version is judged by the newest release at or below it (4.14.5 stands for 4.14.y). What can be
said, strongest first:
- no-op: the documentation of the releases judged says the knob does nothing (from its version on);
- removed / added: the name is listed in some releases and, on every release judged, neither the name
  nor its last part is declared anywhere in the tree (so a path the reader could not place is no excuse);
- removed (leaf): the name was never placed under a path, but its last part is declared (anywhere in the
  tree) only by releases older than those judged: no table of the releases judged can hold it. The
  ip_conntrack compatibility sysctls are the case in point: 4.4.121 declares ip_conntrack_max,
  ip_conntrack_tcp_timeout_established ... in net/ipv4/netfilter/nf_conntrack_l3proto_ipv4.c and the
  nf_conntrack_proto_*.c compat tables (CONFIG_NF_CONNTRACK_PROC_COMPAT, registered at run time under
  net/ipv4/netfilter); no 4.9 tree declares any of them (the netfilter change "remove ip_conntrack* sysctl
  compat code", merged for 4.9); their replacements are the net.netfilter.nf_conntrack_* names;
- absent: no release 4.4 .. 6.12 declares its last part anywhere in net/, kernel/, mm/, fs/ and the other
  folders read, nor does /proc/sys of Debian 12's kernel list it: the name exists in no mainline kernel
  of those years (a vendor patch or out-of-tree module could still add one; the message says so).

Read-only: a 'read-only' row lists the releases whose declaration of the name is mode 0444 or a *_RO_ENTRY
macro (devinet.c: DEVINET_SYSCTL_RO_ENTRY(MC_FORWARDING, "mc_forwarding"): the kernel sets it while a
multicast routing daemon holds the socket, ip-sysctl.rst mc_forwarding); a write fails with EPERM.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources

from linerate.numbers import is_ascii_int
from linerate.tuning.names import all_lists, canonical
from linerate.tuning.sources import OPEN_TOP, source_list
from linerate.tuning.versions import fmt, parse_version

# Branches every name of which comes from the kernel tree itself (no per-device or out-of-tree names):
# only there does "no release declares it" mean "it does not exist".
CLOSED_BRANCHES = ("net.ipv4.", "net.ipv6.", "net.core.", "net.netfilter.", "net.unix.", "net.bridge.",
                   "net.nf_conntrack_max", "vm.", "kernel.", "fs.")


@dataclass(frozen=True)
class Release:
    version: tuple[int, ...]
    label: str  # 6.6.87
    where: str  # repository@commit or package


@dataclass(frozen=True)
class Evidence:
    """What the release table says about one name over the kernels judged. state: exists | no-op |
    no-op-straddles | removed | removed-leaf (only older releases declare its last part) | added |
    straddles (removed inside the span) | absent | unknown."""
    state: str
    since: str | None = None  # the release it changed in (no-op from, removed in, added in)
    words: str | None = None  # the documentation's own words for a no-op
    last: str | None = None  # the newest release that had it (removed)


@dataclass
class ReleaseTable:
    releases: list[Release]
    names: dict[str, tuple[frozenset[int], tuple[str, str] | None, str]] = field(default_factory=dict)
    leaves: dict[str, frozenset[int]] = field(default_factory=dict)
    read_only: dict[str, frozenset[int]] = field(default_factory=dict)
    # name -> [(releases, handler, min, max)]: a handler that refuses values outside min..max (None: no bound)
    ranges: dict[str, list[tuple[frozenset[int], str, int | None, int | None]]] = field(default_factory=dict)

    def coverage(self) -> str:
        return (f"Linux {fmt(self.releases[0].version)} .. {fmt(self.releases[-1].version)} "
                f"({', '.join(fmt(r.version) for r in self.releases)})")

    def indices(self, low: tuple[int, ...], high: tuple[int, ...]) -> list[int]:
        """The releases that stand for the kernels low..high."""
        below = [i for i, r in enumerate(self.releases) if r.version <= low[:2]]
        first = below[-1] if below else 0
        return [i for i in range(first, len(self.releases)) if i == first or self.releases[i].version <= high[:2]]

    def judge(self, name: str, low: tuple[int, ...], high: tuple[int, ...], also_known: bool = False) -> Evidence:
        """also_known: another list (a real /proc/sys listing) has the name, so it is not absent."""
        span = self.indices(low, high)
        if low[:2] < self.releases[0].version:
            return Evidence("unknown")  # older than the oldest release read
        leaf = name.rsplit(".", 1)[-1]
        leaf_seen = self.leaves.get(leaf, frozenset())
        entry = self.names.get(name)
        if entry is None:
            if also_known or not name.startswith(CLOSED_BRANCHES) or is_ascii_int(leaf):
                return Evidence("unknown")
            if not leaf_seen:
                return Evidence("absent")
            earlier = [i for i in leaf_seen if i < span[0]]
            if earlier and not any(i in leaf_seen for i in span):
                last = max(earlier)
                return Evidence("removed-leaf", fmt(self.releases[last + 1].version), last=self.releases[last].label)
            return Evidence("unknown")
        seen, no_op, _ = entry
        present = [i for i in span if i in seen]
        if no_op and present:
            since = parse_version(no_op[0])
            if since <= low:
                return Evidence("no-op", no_op[0], no_op[1])
            if since <= high:
                return Evidence("no-op-straddles", no_op[0], no_op[1])
        if len(present) == len(span):
            return Evidence("exists")
        if any(i in leaf_seen for i in span if i not in present):
            return Evidence("unknown")  # the leaf is declared there: a path the reader could not place
        if not present:
            earlier = [i for i in seen if i < span[0]]
            if earlier:
                gone = next(i for i in range(max(earlier) + 1, len(self.releases)) if i not in seen)
                return Evidence("removed", fmt(self.releases[gone].version), last=self.releases[max(earlier)].label)
            later = min(seen)
            return Evidence("added", fmt(self.releases[later].version))
        if present[0] == span[0]:
            gone = next(i for i in span if i not in seen)
            return Evidence("straddles", fmt(self.releases[gone].version), last=self.releases[gone - 1].label)
        return Evidence("unknown")


def parse_table(text: str) -> ReleaseTable:
    releases: list[Release] = []
    names: dict[str, tuple[frozenset[int], tuple[str, str] | None, str]] = {}
    leaves: dict[str, frozenset[int]] = {}
    read_only: dict[str, frozenset[int]] = {}
    ranges: dict[str, list[tuple[frozenset[int], str, int | None, int | None]]] = {}
    for line in text.splitlines():
        if line.startswith("# release: "):
            version, label, where = line[len("# release: "):].split("\t")
            releases.append(Release(parse_version(version), label, where))
            continue
        if line.startswith("#") or not line.strip():
            continue
        name, kind, seen, no_op, origin = line.split("\t")
        indices = frozenset(int(i) for i in seen.split(","))
        if kind == "leaf":
            leaves[name] = indices
        elif kind == "read-only":
            read_only[name] = indices
        elif kind == "range":
            handler, _, span = no_op.partition(" ")
            low, _, high = span.partition("..")
            ranges.setdefault(name, []).append((indices, handler, int(low) if low else None,
                                                int(high) if high else None))
        else:
            since, _, words = no_op.partition(":")
            names[name] = (indices, (since, words) if no_op else None, origin)
    return ReleaseTable(releases, names, leaves, read_only, ranges)


@lru_cache(maxsize=1)
def linux_releases() -> ReleaseTable:
    path = resources.files("linerate.tuning").joinpath("names", "linux-releases.tsv")
    return parse_table(path.read_text(encoding="utf-8"))


def coverage_line(family: str, name: str) -> str | None:
    """For `linerate explain`: which releases linerate's lists for the OS cover and what they say of the name."""
    if family == "freebsd":
        return _freebsd_coverage(name)
    if family == "openbsd":
        lists = [n for n in all_lists() if n.os == "openbsd"]
        if not lists:
            return None
        called = [n.named or fmt(n.release) for n in lists]
        named = [c for n, c in zip(lists, called) if n.lookup(name) and n.lookup(name)[0] != "unnamed"]
        numbered = [c for n, c in zip(lists, called) if n.lookup(name) and n.lookup(name)[0] == "unnamed"]

        def which(found: list[str]) -> str:
            return f"all {len(called)}" if found == called else ", ".join(found)
        said = "; ".join(part for part in (f"named in {which(named)}" if named else "",
                                           f"a number without a name (sysctl(8) refuses it) in {which(numbered)}"
                                           if numbered else "") if part) or "in none of them"
        return f"release lists: the sysctl(8) name tables of OpenBSD {', '.join(called)}: {said}"
    if family != "linux":
        return None
    table = linux_releases()
    entry = table.names.get(name)
    if entry is None:
        seen = "not listed in any of them"
    else:
        releases = [fmt(table.releases[i].version) for i in sorted(entry[0])]
        seen = f"listed in {', '.join(releases)}" + (f"; a no-op from {entry[1][0]} ('{entry[1][1]}')"
                                                      if entry[1] else "")
    return f"release lists: {table.coverage()} from each release's source tree: {seen}"


# Old names whose successors the kernel kept under another path: (pattern, successor template, what
# happened). The ip_conntrack_* compatibility sysctls (CONFIG_NF_CONNTRACK_PROC_COMPAT) mirrored the
# nf_conntrack ones: nf_conntrack_l3proto_ipv4.c of 4.4 declares "ip_conntrack_max" with the same .data as
# nf_conntrack_max; no 4.9 tree declares any ip_conntrack_* name.
RENAMED = [(re.compile(r"^net\.ipv4\.(?:netfilter\.)?ip_conntrack_(\w+)$"), "net.netfilter.nf_conntrack_{}",
            "the ip_conntrack* compatibility sysctls (CONFIG_NF_CONNTRACK_PROC_COMPAT) were dropped by the "
            "netfilter change 'remove ip_conntrack* sysctl compat code'")]


def successor(name: str, low: tuple[int, ...], high: tuple[int, ...]) -> tuple[str, str] | None:
    """(new name, why) for an old name whose successor every release judged declares, else None."""
    table = linux_releases()
    span = table.indices(low, high)
    for pattern, template, why in RENAMED:
        match = pattern.match(name)
        new = template.format(match.group(1)) if match else None
        if new and new in table.names and all(i in table.names[new][0] for i in span):
            return new, why
    return None


# how tools/extract_linux_releases.py words a no-op it read in the source rather than the documentation
SOURCE_WORDS = "its ctl_table entry writes "


def linux_lifecycle(name: str, label: str, low: tuple[int, ...], high: tuple[int, ...],
                    hint: str, also_known: bool = False) -> tuple[str, str, str, str] | None:
    """(code, severity, message, fix) when the release table shows the name does nothing on the kernels
    judged (a no-op, removed, not yet added), else None. also_known: a real /proc/sys listing has it."""
    table = linux_releases()
    found = table.judge(name, low, high, also_known)
    lists = f"linerate's Linux lists: {table.coverage()}"
    renamed = successor(name, low, high) if found.state in ("removed", "removed-leaf") else None
    fix = f"delete it; use {renamed[0]} instead" if renamed else "delete the line"
    why = f"; {renamed[1]}: use {renamed[0]}" if renamed else ""
    by_source = bool(found.words and found.words.startswith(SOURCE_WORDS))
    said = f"the kernel's source: {found.words}" if by_source else f"the kernel's own documentation says '{found.words}'"
    if found.state == "no-op":
        since = "" if by_source else f"from linux {found.since}; "
        return ("LR001", "warning", f"{name} does nothing on {label}: {said} ({since}{lists})",
                "delete the line")
    if found.state == "no-op-straddles":
        return ("LR001", "info", f"{name} does nothing from linux {found.since} on ({said}); {label} straddles "
                f"that; {hint}", "delete the line if your kernel is newer")
    if found.state == "removed":
        return ("LR001", "warning", f"{name} was removed in linux {found.since} (declared up to {found.last}): "
                f"sysctl rejects it and the line does nothing on {label}{why} ({lists})", fix)
    if found.state == "removed-leaf":
        leaf = name.rsplit(".", 1)[-1]
        return ("LR001", "warning", f"{name} was removed in linux {found.since}: no ctl_table of linux "
                f"{found.since} or later declares a sysctl named '{leaf}' anywhere ({found.last} was the last "
                f"release read that did), so sysctl reports an unknown key and the line does nothing on "
                f"{label}{why} ({lists})", fix)
    if found.state == "straddles":
        return ("LR001", "info", f"{name} was removed in linux {found.since} (declared up to {found.last}): it "
                f"does nothing if your box runs {found.since} or later ({label} straddles it; {hint})",
                "delete the line if your kernel is newer")
    if found.state == "added" and name in distribution_names():
        return ("LR016", "info", f"{name} comes from a Debian/Ubuntu kernel patch (Debian 12's /proc/sys lists it; "
                f"no upstream tree linerate read declares it, and its {found.since} tree is Debian's own): it exists "
                f"on their kernels, not on an upstream {label}",
                f"check with `sysctl {name}` on the box (unknown key: the line does nothing)")
    if found.state == "added":
        return ("LR008", "warning", f"{name} only exists from linux {found.since} on, not on {label} ({lists})",
                "delete it, or upgrade")
    return None


@lru_cache(maxsize=1)
def distribution_names() -> frozenset[str]:
    """Names a distribution's kernel patches add: in the /proc/sys listing of Debian 12's kernel (linux-6.1.tsv)
    but declared by none of the upstream trees the release table read up to 6.6 (its 6.12 tree is Debian's
    linux-source, patches included): kernel.unprivileged_userns_clone, Debian's patch 'add sysctl to
    disallow unprivileged CLONE_NEWUSER by default'."""
    table = linux_releases()
    debian = next((n for n in all_lists() if n.os == "linux" and n.release == (6, 1)), None)
    if debian is None:
        return frozenset()
    upstream = {i for i, r in enumerate(table.releases) if "Debian" not in r.where}
    return frozenset(name for name in debian.entries
                     if name in table.names and not (table.names[name][0] & upstream))


def linux_absent(name: str, label: str, low: tuple[int, ...], high: tuple[int, ...],
                 also_known: bool) -> tuple[str, str, str, str] | None:
    """(code, severity, message, fix) when no release declares the name's last part at all."""
    table = linux_releases()
    if table.judge(name, low, high, also_known).state != "absent":
        return None
    leaf = name.rsplit(".", 1)[-1]
    return ("LR002", "warning", f"{name} does not exist on {label}: no ctl_table of any mainline release "
            f"{table.coverage()} declares a sysctl named '{leaf}', nor does /proc/sys of Debian 12's kernel "
            "list it (only a vendor patch or out-of-tree module could add it)",
            "remove it; `sysctl -p` reports it as an unknown key")


def linux_read_only(name: str, low: tuple[int, ...], high: tuple[int, ...]) -> str | None:
    """Where the source declares the name read-only on every release judged that has it (mode 0444, or
    devinet.c's DEVINET_SYSCTL_RO_ENTRY for net.ipv4.conf.*.mc_forwarding), else None."""
    table = linux_releases()
    key = canonical("linux", name)
    entry, fixed = table.names.get(key), table.read_only.get(key, frozenset())
    if entry is None or not fixed:
        return None
    declared = [i for i in table.indices(low, high) if i in entry[0]]
    if not declared or not all(i in fixed for i in declared):
        return None
    first, last = table.releases[declared[0]].label, table.releases[declared[-1]].label
    span = first if first == last else f"{first} .. {last}"
    return f"{entry[2]} of linux {span} declares it read-only (mode 0444 or a *_RO_ENTRY macro)"


def linux_range_problem(name: str, value: str, low: tuple[int, ...], high: tuple[int, ...]) -> str | None:
    """Why the kernel refuses this value (EINVAL, the old value stays): on every release judged that declares
    the name, its handler is a *_minmax one and some number of the value falls outside the loosest bounds
    those releases give; None when any release judged leaves it unbounded or the value is not integers."""
    table = linux_releases()
    key = canonical("linux", name)
    entry, rows = table.names.get(key), table.ranges.get(key)
    if entry is None or not rows:
        return None
    declared = [i for i in table.indices(low, high) if i in entry[0]]
    found = [next((row for row in rows if i in row[0]), None) for i in declared]
    numbers = value.split()
    if not declared or None in found or not numbers or not all(re.fullmatch(r"-?[0-9]{1,19}", n) for n in numbers):
        return None
    lows, highs = [row[2] for row in found], [row[3] for row in found]
    least = None if None in lows else min(lows)
    most = None if None in highs else max(highs)
    outside = [n for n in numbers if (least is not None and int(n) < least) or (most is not None and int(n) > most)]
    if not outside:
        return None
    bounds = f"{'' if least is None else least}..{'' if most is None else most}"
    first, last = table.releases[declared[0]].label, table.releases[declared[-1]].label
    span = first if first == last else f"{first} .. {last}"
    return (f"{name} takes {bounds} (its ctl_table handler {found[-1][1]} with .extra1/.extra2, {entry[2]} of linux "
            f"{span}): {', '.join(outside)} is refused with EINVAL, the old value stays, and sysctl -p reports an error")


def _freebsd_coverage(name: str) -> str | None:
    source = source_list("freebsd")
    if source is None:
        return None
    labels = [snap.label for snap in source.snapshots]
    alive = [snap.label for i, snap in enumerate(source.snapshots) if source.alive(name, i)]
    if alive:
        rows = source.rows[source.resolve(name)]
        how = ", ".join(sorted({f"{row.where} in {row.origin}" for row in rows}))
        absent = [label for label in labels if label not in alive]
        seen = f"declared in {', '.join(alive)} ({how})" + (f"; not in {', '.join(absent)}" if absent else "")
        needs = sorted({option for row in rows for option in row.needs})
        if needs:
            seen += (f"; compiled only with `{' and '.join(f'options {o}' for o in needs)}`, which amd64 GENERIC "
                     "lacks (audit: LR018)")
    elif name.startswith(OPEN_TOP) or source.closed_parent(name) is None:
        seen = "declared in none of them, under a branch that drivers outside the tree or devices add names to"
    else:
        seen = "declared in none of them"
    return (f"release lists: {source.label()}, snapshots {', '.join(labels)} (a release between two snapshots is "
            f"judged by both): {seen}")
