"""Names declared in snapshots of an OS's source tree (tuning/names/<os>-src.tsv), and what they say about
one release or a range of releases.

A release between two snapshots is judged by both: declared (and read) in both -> it exists; in neither
-> it does not (removed after the last snapshot that had it, or never declared); in one only -> linerate
cannot tell. A range (a product such as OPNsense without --os-version: every release linerate knows)
is judged over the snapshots that cover it, so a name removed inside the range "does nothing from X on".
A snapshot marked inert for a name declares it but reads it nowhere (a driver generation that kept
the sysctl and dropped its use): that counts as gone.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources

from linerate.tuning.versions import fmt, parse_version

# Branches whose children also come from drivers outside the tree (vendor kmods from ports: realtek-re,
# the Intel ix/ixl/ice packages) or from devices at attach time: silence of the source about a name
# there means nothing.
OPEN_TOP = ("dev.", "hw.", "hint.", "compat.", "debug.", "machdep.", "user.", "security.mac.")


# Driver branches that a widely used driver from ports fills with names of its own: FreeBSD ports
# net/realtek-re-kmod (Realtek's r8168 driver, OPNsense's os-realtek-re plugin) declares hw.re.* tunables
# the in-tree re(4) lacks (hw.re.max_rx_mbuf_sz ...): absence from the in-tree source says nothing there.
VENDOR_KMOD_BRANCHES = {"hw.re": "net/realtek-re-kmod"}


@dataclass(frozen=True)
class Snapshot:
    version: tuple[int, ...]
    label: str  # 14.2-BETA1
    where: str  # repository@commit


@dataclass(frozen=True)
class Row:
    where: str
    seen: frozenset[int]
    origin: str
    inert: frozenset[int] = frozenset()
    needs: frozenset[str] = frozenset()  # kernel options amd64 GENERIC lacks, without which it is not compiled


@dataclass(frozen=True)
class Presence:
    """What the snapshots say about a name over [low, high]. state: exists | removed (every release of the
    range is past its removal) | straddles (removed inside the range) | added (not yet there) | absent
    (never declared) | unsure."""
    state: str
    where: str | None = None
    origin: str | None = None
    last: str | None = None  # the newest snapshot that declared it and read it
    gone: str | None = None  # the first snapshot after `last` without it (or with it inert)
    inert: bool = False  # gone because it is declared but read nowhere
    needs: frozenset[str] = frozenset()  # exists only in kernels built with these options (not GENERIC's)


@dataclass
class SourceList:
    os: str
    snapshots: list[Snapshot]
    sources: list[str]
    rows: dict[str, list[Row]] = field(default_factory=dict)
    nodes: dict[str, bool] = field(default_factory=dict)  # branch -> open (children added at run time)

    def label(self) -> str:
        first, last = self.snapshots[0], self.snapshots[-1]
        return f"{self.os} source ({first.label} .. {last.label})"

    def resolve(self, name: str) -> str:
        """The row key of a name: itself, or with one part replaced by '*' where a branch of that name is
        computed at run time (the TCP stacks' net.inet.tcp.<stack>)."""
        if name in self.rows or name in self.nodes:
            return name
        parts = name.split(".")
        for index in range(1, len(parts)):
            if ".".join(parts[:index]) + ".*" in self.nodes:
                wild = ".".join(parts[:index] + ["*"] + parts[index + 1:])
                if wild in self.rows or wild in self.nodes:
                    return wild
        return name

    def alive(self, name: str, index: int) -> Row | None:
        name = self.resolve(name)
        for row in self.rows.get(name, ()):
            if index in row.seen and index not in row.inert:
                return row
        return None

    def declared(self, name: str) -> bool:
        return self.resolve(name) in self.rows

    def _bounds(self, low: tuple[int, ...], high: tuple[int, ...]) -> tuple[int | None, int | None]:
        below = [i for i, s in enumerate(self.snapshots) if s.version <= low]
        above = [i for i, s in enumerate(self.snapshots) if s.version >= high]
        return (below[-1] if below else None), (above[0] if above else None)

    def presence(self, name: str, low: tuple[int, ...], high: tuple[int, ...]) -> Presence:
        lower, upper = self._bounds(low, high)
        first = 0 if lower is None else lower
        last = len(self.snapshots) - 1 if upper is None else upper
        span = range(first, last + 1)
        alive = [i for i in span if self.alive(name, i)]
        if alive and len(alive) == len(span):
            row = self.alive(name, alive[-1])
            return Presence("exists", row.where, row.origin, needs=row.needs)
        if alive:  # declared at one end of the span only
            row = self.alive(name, alive[-1])
            if alive[0] == first and low != high and lower is not None:
                return Presence("straddles", row.where, row.origin, *self._gone_after(name, alive[-1]))
            return Presence("unsure", row.where, row.origin, *self._gone_after(name, alive[-1]))
        earlier = [i for i in range(0, first) if self.alive(name, i)]
        later = [i for i in range(last + 1, len(self.snapshots)) if self.alive(name, i)]
        if earlier:
            row = self.alive(name, earlier[-1])
            return Presence("removed", row.where, row.origin, *self._gone_after(name, earlier[-1]))
        if later:
            row = self.alive(name, later[0])
            return Presence("added", row.where, row.origin, gone=self.snapshots[later[0]].label)
        if upper is None and not self.declared(name):
            return Presence("unsure")  # newer than the newest snapshot: it may be new
        return Presence("absent")

    def kinds_over(self, name: str, low: tuple[int, ...], high: tuple[int, ...]) -> tuple[set[str], str | None]:
        """(how the snapshots judging [low, high] declare the name: runtime, boot, read-only ...; the origin
        of one such declaration) — empty when one of those snapshots does not declare it."""
        lower, upper = self._bounds(low, high)
        span = range(0 if lower is None else lower, (len(self.snapshots) - 1 if upper is None else upper) + 1)
        rows = [row for row in self.rows.get(self.resolve(name), ()) if row.seen & set(span)]
        if not all(self.alive(name, i) for i in span):
            return set(), None
        return {row.where for row in rows}, (rows[0].origin if rows else None)

    def driver_tunables(self, name: str, low: tuple[int, ...], high: tuple[int, ...]) -> tuple[str, list[str]] | None:
        """(branch, the names the source declares under it) for hw.<driver>.<name> when an in-tree network
        interface driver (its if_*.c) declares its hw.<driver> tunables statically in every snapshot judging
        [low, high] and none of them declares this name; else None. (Drivers from ports, a vendor's kmod, may
        add names of their own; subsystems whose names many files declare, hw.usb, hw.uart, are left alone.)"""
        parts = name.split(".")
        if len(parts) != 3 or parts[0] != "hw" or self.declared(name):
            return None
        branch = f"hw.{parts[1]}"
        if self.nodes.get(branch) or branch in VENDOR_KMOD_BRANCHES:  # filled at run time, or by a ports kmod
            return None
        lower, upper = self._bounds(low, high)
        span = range(0 if lower is None else lower, (len(self.snapshots) - 1 if upper is None else upper) + 1)
        kids = [n for n in self.rows if n.startswith(branch + ".") and n.count(".") == 2 and "*" not in n]
        origins = {row.origin.rsplit("/", 1)[-1] for n in kids for row in self.rows[n]}
        if not any(origin.startswith("if_") for origin in origins):
            return None  # a network interface driver's own file (if_em.c, if_re.c); not hw.usb, hw.uart ...
        per_snapshot = [[n for n in kids if self.alive(n, i)] for i in span]
        if not kids or not all(per_snapshot):
            return None
        return branch, sorted(per_snapshot[-1])

    def _gone_after(self, name: str, index: int) -> tuple[str | None, str | None, bool]:
        if index + 1 >= len(self.snapshots):
            return self.snapshots[index].label, None, False
        declared = any(index + 1 in row.seen for row in self.rows.get(self.resolve(name), ()))
        return self.snapshots[index].label, self.snapshots[index + 1].label, declared

    def needs(self, name: str) -> frozenset[str]:
        """The kernel options a declared name is compiled only with (FreeBSD `#ifdef OPTION`); for a
        branch, the options every name declared under it needs (none when one needs none)."""
        rows = self.rows.get(self.resolve(name), ())
        if rows:
            return frozenset().union(*(row.needs for row in rows))
        kids = [self.needs(kid) for kid in self.children(name) if kid in self.rows]
        return frozenset.intersection(*kids) if kids else frozenset()

    def closed_parent(self, name: str) -> str | None:
        """The deepest declared branch above `name` when the source declares every child of it statically
        (not an open branch, not under a top level that drivers outside the tree extend), else None."""
        if name.startswith(OPEN_TOP):
            return None
        parts = name.split(".")
        for cut in range(len(parts) - 1, 0, -1):
            parent = ".".join(parts[:cut])
            if parent + ".*" in self.nodes and cut < len(parts) - 1:
                wild = ".".join(parts[:cut] + ["*"])
                if self.nodes[wild]:
                    return None
            if parent in self.nodes:
                if self.nodes[parent] or any(self.nodes.get(".".join(parts[:c])) for c in range(1, cut)):
                    return None
                return parent
        return None

    def moved_branch(self, name: str) -> str | None:
        """For a name under TOP.X (three parts or more) when no snapshot declares anything under TOP.X but
        another top level declares the branch X (hw.netmap.ring_size: netmap's knobs are dev.netmap.*): that
        branch. dev.X is never the wrong one (the bus makes dev.<driver> at run time), nor is a branch a
        driver from ports adds."""
        parts = name.split(".")
        if len(parts) < 3 or parts[0] == "dev":
            return None
        branch = ".".join(parts[:2])
        if branch in VENDOR_KMOD_BRANCHES or self._holds(branch):
            return None
        others = sorted(f"{top}.{parts[1]}" for top in {n.split(".")[0] for n in self.nodes}
                        if top != parts[0] and f"{top}.{parts[1]}" in self.nodes)
        return others[0] if len(others) == 1 else None

    def _holds(self, branch: str) -> bool:
        prefix = branch + "."
        return branch in self.nodes or branch in self.rows or any(n.startswith(prefix) for n in self.rows) \
            or any(n.startswith(prefix) for n in self.nodes)

    def children(self, parent: str) -> list[str]:
        prefix = parent + "."
        return [n for n in self.rows if n.startswith(prefix) and "." not in n[len(prefix):]]


def parse_source_list(text: str) -> SourceList:
    snapshots, sources, os_name = [], [], ""
    rows: dict[str, list[Row]] = {}
    nodes: dict[str, bool] = {}
    for line in text.splitlines():
        if line.startswith("#"):
            key, _, value = line[1:].strip().partition(": ")
            if key == "os":
                os_name = value
            elif key == "snapshot":
                version, label, where = value.split("\t")
                snapshots.append(Snapshot(parse_version(version), label, where))
            elif key == "source":
                sources.append(value)
            continue
        if not line.strip():
            continue
        name, where, spans, origin, *extra = line.split("\t")
        if where in ("node", "open-node"):
            nodes[name] = nodes.get(name, False) or where == "open-node"
            continue
        inert = next((_indices(e[6:]) for e in extra if e.startswith("inert:")), frozenset())
        needs = next((frozenset(e[6:].split("+")) for e in extra if e.startswith("needs:")), frozenset())
        rows.setdefault(name, []).append(Row(where, _indices(spans), origin, inert, needs))
    return SourceList(os_name, snapshots, sources, rows, nodes)


def _indices(spans: str) -> frozenset[int]:
    out: set[int] = set()
    for part in spans.split(","):
        start, _, end = part.partition("-")
        out.update(range(int(start), int(end or start) + 1))
    return frozenset(out)


@lru_cache(maxsize=4)
def source_list(family: str) -> SourceList | None:
    path = resources.files("linerate.tuning").joinpath("names", f"{family}-src.tsv")
    if not path.is_file():
        return None
    return parse_source_list(path.read_text(encoding="utf-8"))


@lru_cache(maxsize=1)
def freebsd_modules() -> SourceList:
    """The kernel modules each FreeBSD snapshot builds (names/freebsd-modules.tsv: KMOD= of sys/modules,
    tools/extract_freebsd_modules.py), as a source list: presence() says whether a release has one."""
    path = resources.files("linerate.tuning").joinpath("names", "freebsd-modules.tsv")
    return parse_source_list(path.read_text(encoding="utf-8"))


def describe(presence: Presence) -> str:
    """'declared in 10.4-RELEASE .. 11.0-RELEASE-p1 source, gone from 12.1-RELEASE' for messages."""
    if presence.gone and presence.inert:
        return f"the {presence.gone} source declares it but nothing reads it (read up to {presence.last})"
    if presence.gone:
        return f"declared up to the {presence.last} source, gone from {presence.gone}"
    if presence.last:  # declared in the newest snapshot: nothing is known of later releases
        return f"declared in the {presence.last} source tree, the newest linerate has; newer releases not checked"
    return "never declared"


def span_text(low: tuple[int, ...], high: tuple[int, ...]) -> str:
    return fmt(low) if low == high else f"{fmt(low)}..{fmt(high)}"
