"""Which knob names exist, per OS family and release, separately from what the catalog advises.

The lists in tuning/names/*.tsv are built by tools/extract_knob_names.py; each file's header names its
sources. Linux and OpenBSD: one list per release from the OS's documentation and real /proc/sys
listings; a release without its own list is checked against the nearest one. FreeBSD: one table over
snapshots of the source tree (freebsd-src.tsv: every SYSCTL_*/TUNABLE_* declaration, with the
snapshots that declare it), so a release between two snapshots is judged by both (SourceList.presence);
the 12.2 man pages (freebsd-12.2.tsv) stay for what is documented where.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources

from linerate.numbers import is_ascii_int
from linerate.tuning.versions import fmt, parse_version


def canonical(family: str, name: str) -> str:
    """The form the lists use: interface parts of Linux names -> IF, unit numbers -> N."""
    parts = name.split(".")
    if family == "linux":
        if len(parts) >= 5 and parts[0] == "net" and parts[1] in ("ipv4", "ipv6") and parts[2] in ("conf", "neigh"):
            parts[3] = "IF"
        return ".".join(parts)
    return ".".join("N" if is_ascii_int(part) else part for part in parts)


@dataclass
class NameList:
    os: str
    release: tuple[int, ...]
    sources: list[str]
    entries: dict[str, tuple[str, str]] = field(default_factory=dict)  # name -> (where, origin)
    named: str | None = None  # how the release is called when its version is only a place ("6.8-current of 2020-06")

    def label(self) -> str:
        return f"{self.os} {self.named or fmt(self.release)} name list"

    def lookup(self, name: str) -> tuple[str, str] | None:
        return self.entries.get(canonical(self.os, name))

    def covers_parent(self, name: str) -> bool:
        """True when the list holds other names of the same parent node (so its silence means something)."""
        parent = canonical(self.os, name).rsplit(".", 1)[0] + "."
        return any(other.startswith(parent) for other in self.entries)


def parse_list(text: str) -> NameList:
    header: dict[str, list[str]] = {}
    entries: dict[str, tuple[str, str]] = {}
    for line in text.splitlines():
        if line.startswith("#"):
            key, _, value = line[1:].strip().partition(": ")
            header.setdefault(key, []).append(value)
        elif line.strip():
            name, where, origin = line.split("\t")
            entries[name] = (where, origin)
    release = parse_version(header["release"][0])
    named = header.get("label", [None])[0]
    return NameList(header["os"][0], release, header.get("source", []), entries,
                    named if named and named != fmt(release) else None)


@lru_cache(maxsize=1)
def all_lists() -> tuple[NameList, ...]:
    folder = resources.files("linerate.tuning").joinpath("names")
    lists = [parse_list(p.read_text(encoding="utf-8")) for p in folder.iterdir()
             if p.name.endswith(".tsv") and not p.name.endswith(("-src.tsv", "-releases.tsv", "-modules.tsv"))]
    return tuple(sorted(lists, key=lambda n: (n.os, n.release)))


@lru_cache(maxsize=32)
def name_list(family: str, version: tuple[int, ...] | None) -> NameList | None:
    """The list for this release: the newest at or below it, else the oldest above it."""
    lists = [n for n in all_lists() if n.os == family]
    if not lists:
        return None
    if version is None:
        return lists[-1]
    below = [n for n in lists if n.release <= version]
    return below[-1] if below else lists[0]


def bracketing_lists(family: str, low: tuple[int, ...], high: tuple[int, ...]) -> list[NameList]:
    """The lists that judge releases low..high: every list inside the range and the nearest on each side
    (a release between two lists is judged by both, as the FreeBSD snapshots are). Empty when no list is at
    or below low (the range starts before the lists do)."""
    lists = [n for n in all_lists() if n.os == family]
    below = [n for n in lists if n.release <= low]
    if not below:
        return []
    above = [n for n in lists if n.release >= high]
    inside = [n for n in lists if low < n.release < high]
    return [below[-1], *inside, *above[:1]] if above[:1] != [below[-1]] else [below[-1], *inside]


def edit_distance(a: str, b: str, limit: int) -> int:
    """Levenshtein distance with adjacent transpositions, or limit + 1 once it is sure to exceed limit."""
    if abs(len(a) - len(b)) > limit:
        return limit + 1
    previous2: list[int] = []
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        row = [i] + [0] * len(b)
        for j, cb in enumerate(b, 1):
            row[j] = min(previous[j] + 1, row[j - 1] + 1, previous[j - 1] + (ca != cb))
            if i > 1 and j > 1 and ca == b[j - 2] and a[i - 2] == cb:
                row[j] = min(row[j], previous2[j - 2] + 1)
        if min(row) > limit:
            return limit + 1
        previous2, previous = previous, row
    return previous[-1]


def close_names(name: str, candidates: set[str], family: str) -> list[str]:
    """Likely misspellings: candidates that differ from the name in one dot-separated part only, by at
    most 1 edit (2 in parts of 12+ characters), where that part has 5+ characters — so hw.ix.X is not
    "corrected" to hw.igb.X (another driver, not a typo)."""
    wanted = canonical(family, name).split(".")
    out = []
    for candidate in candidates:
        parts = candidate.split(".")
        if len(parts) != len(wanted):
            continue
        differing = [i for i, (a, b) in enumerate(zip(wanted, parts)) if a != b]
        if len(differing) != 1:
            continue
        mine, theirs = wanted[differing[0]], parts[differing[0]]
        if min(len(mine), len(theirs)) < 5:
            continue
        limit = 2 if len(theirs) >= 12 else 1
        distance = edit_distance(mine, theirs, limit)
        if distance <= limit:
            out.append((distance, candidate))
    return [c for _, c in sorted(out)][:2]


def missing_node(name: str, names) -> tuple[str, str] | None:
    """(listed parent, missing node) when the second part of the name is not in the list at all, under a
    top-level node whose names the list holds (kern.dmesg.restrict: kern is listed, kern.dmesg is not).
    Deeper levels are left alone: under net.inet the second part is a protocol, looked up by sysctl(8) in
    in.h's CTL_IPPROTO_NAMES, which linerate's list does not hold in full."""
    parts = name.split(".")
    if parts[0] == "net":
        return None
    for depth in range(1, min(2, len(parts) - 1)):
        parent, node = ".".join(parts[:depth]), ".".join(parts[:depth + 1])
        if node in names.entries or any(entry.startswith(node + ".") for entry in names.entries):
            continue
        if any(entry.startswith(parent + ".") for entry in names.entries):
            return parent, node
        return None
    return None
