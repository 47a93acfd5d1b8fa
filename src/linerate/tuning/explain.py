"""`linerate explain`: what linerate knows about one knob name (its catalog advice, or whether the source
declarations and name lists the audit uses have it, and what those lists cover), and the catalog's size.
Pure: the CLI prints what these return."""

from __future__ import annotations

from typing import Any

from linerate.errors import ConfigError
from linerate.tuning.catalog import Catalog, Knob
from linerate.tuning.names import all_lists, close_names
from linerate.tuning.releases import coverage_line
from linerate.tuning.sources import source_list

FAMILIES = ("freebsd", "linux", "openbsd")


def describe(catalog: Catalog, name: str, family: str | None) -> str:
    """The text explain prints for a name: each catalog entry with its advice and sources, else where the
    name exists without advice; ConfigError (exit 2) when nothing has it."""
    matches = _matches(catalog, name, family)
    if not matches:
        return _listed_text(catalog, name, family)
    lines: list[str] = []
    for knob in matches:
        lines += _knob_lines(knob, name)
    if family is None:  # where else the name exists without advice (kern.maxfiles: FreeBSD too)
        for other in sorted(set(FAMILIES) - {k.os for k in matches}):
            found = listed(name, other)
            if found:
                lines.append(_listed_text(catalog, name, other).rstrip("\n"))
    return "\n".join(lines) + "\n"


def describe_json(catalog: Catalog, name: str, family: str | None) -> tuple[list[dict[str, Any]], bool]:
    """(the catalog entries, or where the name exists without advice; True when they are catalog entries)."""
    matches = _matches(catalog, name, family)
    if matches:
        return [knob.model_dump(mode="json") for knob in matches], True
    found = [item for fam in _families(family) for item in listed(name, fam)]
    if not found:
        raise _unknown(catalog, name, family)
    return found, False


def _matches(catalog: Catalog, name: str, family: str | None) -> list[Knob]:
    return [k for k in catalog.knobs if k.matches(name) and (family is None or k.os == family)]


def _families(family: str | None) -> list[str]:
    return [family] if family else list(FAMILIES)


def _knob_lines(knob: Knob, name: str) -> list[str]:
    lines = [f"{knob.name}  ({knob.os}, {knob.location}, {knob.type})", f"  {knob.description}"]
    if knob.min is not None or knob.max is not None:
        lines.append(f"  range: {knob.min}..{knob.max}")
    defaults = ", ".join(f"{v}: {d}" for v, d in knob.defaults.items()) or knob.default_note or "unknown"
    lines.append(f"  defaults by version: {defaults}")
    lines.append(f"  introduced: {knob.introduced}; removed: {knob.removed}"
                 + (f"; replaced by {knob.replaced_by}" if knob.replaced_by else ""))
    for role, rec in knob.recommend.items():
        lines.append(f"  {role}: {rec.value} — {rec.why}" + (f" (versions {rec.versions})" if rec.versions else ""))
    for role, rule in knob.harmful.items():
        lines.append(f"  harmful for {role} when {'/'.join(rule.values)}: {rule.why}")
    if knob.security:
        lines.append(f"  security: {'/'.join(knob.security.values)} — {knob.security.why}")
    if knob.risks:
        lines.append(f"  risks: {knob.risks}")
    lines.append("  sources:")
    lines += [f"    - {s}" for s in knob.sources]
    coverage = coverage_line(knob.os, name)
    if coverage:
        lines.append(f"  {coverage}")
    return lines


def listed(name: str, family: str) -> list[dict[str, Any]]:
    """Where a name without advice exists on one OS, per the same source declarations and name lists the
    audit uses (so explain and audit agree)."""
    found: list[dict[str, Any]] = []
    source = source_list(family)
    declared = source is not None and source.declared(name)
    if declared:
        seen = sorted({i for row in source.rows[source.resolve(name)] for i in row.seen})
        alive = [source.snapshots[i].label for i in seen if source.alive(name, i)]
        row = source.rows[source.resolve(name)][-1]
        absent = [s.label for s in source.snapshots if s.label not in alive]
        found.append({"name": name, "os": family, "where": row.where, "origin": row.origin,
                      "declared_in": alive, "absent_from": absent, "list": source.label(), "advice": None})
    for names in all_lists():
        hit = names.lookup(name) if names.os == family else None
        if hit and not declared:
            found.append({"name": name, "os": family, "where": hit[0], "origin": hit[1],
                          "declared_in": [], "list": names.label(), "advice": None})
    return found


def _listed_text(catalog: Catalog, name: str, family: str | None) -> str:
    found = [item for fam in _families(family) for item in listed(name, fam)]
    if not found:
        raise _unknown(catalog, name, family)
    lines = [line for fam in dict.fromkeys(item["os"] for item in found) if (line := coverage_line(fam, name))]
    for item in found:
        if item["declared_in"]:
            absent = f"; not in {', '.join(item['absent_from'])}" if item["absent_from"] else ""
            lines.append(f"{name} is declared on {item['os']} ({item['where']}) in {item['origin']} of the "
                         f"{', '.join(item['declared_in'])} source{absent}; linerate has no advice for it")
        else:
            lines.append(f"{name} exists on {item['os']} ({item['list']}: {item['where']}, from {item['origin']}); "
                         "linerate has no advice for it")
    return "\n".join(lines) + "\n"


def _unknown(catalog: Catalog, name: str, family: str | None) -> ConfigError:
    families = _families(family)
    candidates = {k.name for k in catalog.knobs if family is None or k.os == family}
    candidates |= {entry for n in all_lists() if family is None or n.os == family for entry in n.entries}
    for fam in families:
        source = source_list(fam)
        candidates |= {n for n in source.rows if "*" not in n} if source else set()
    hints = sorted({h for os in families for h in close_names(name, candidates, os)})
    read = [source_list(fam).label() for fam in families if source_list(fam)] + \
        [n.label() for n in all_lists() if n.os in families]
    return ConfigError("name", f"'{name}' is neither in the catalog, nor declared in the source, nor in a name "
                       f"list (read: {', '.join(read)})" + (f"; did you mean {', '.join(hints)}?" if hints else ""))


def stats(catalog: Catalog) -> dict[str, Any]:
    counts = catalog.stats()
    sourced = {os: sum(1 for k in catalog.knobs if k.os == os and all(s.strip() for s in k.sources)) for os in counts}
    lists = [{"os": n.os, "release": ".".join(map(str, n.release)), "names": len(n.entries), "sources": n.sources}
             for n in all_lists()]
    source = source_list("freebsd")
    if source:
        lists.append({"os": "freebsd", "release": " .. ".join((source.snapshots[0].label, source.snapshots[-1].label)),
                      "names": len(source.rows), "sources": source.sources +
                      [f"{s.label}: {s.where}" for s in source.snapshots]})
    return {"catalog": counts, "with_source": sourced, "name_lists": lists}


def stats_text(doc: dict[str, Any]) -> str:
    lines = [f"{os:8} {n:4} knobs with advice ({doc['with_source'][os]} with a source)"
             for os, n in sorted(doc["catalog"].items())]
    lines.append(f"{'total':8} {sum(doc['catalog'].values()):4} knobs")
    lines += [f"names that exist on {item['os']} {item['release']}: {item['names']} "
              f"(from {'; '.join(item['sources'])})" for item in doc["name_lists"]]
    return "\n".join(lines) + "\n"
