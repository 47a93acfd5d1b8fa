"""`linerate audit | explain | recommend`: the tuning knowledge base."""

from __future__ import annotations

import argparse
import sys

from linerate.errors import ConfigError
from linerate.schema import dumps
from linerate.tuning.parsers import KINDS
from linerate.tuning.versions import OS_FAMILIES, ROLES, resolve_release

# The catalog (pydantic models over ~1,500 entries) loads only in the handlers that use it.


def register(sub: argparse._SubParsersAction) -> None:
    aud = sub.add_parser("audit", help="audit sysctl.conf, loader.conf, rc.conf or a pfSense/OPNsense config.xml",
                         description="Example: linerate audit /boot/loader.conf /etc/sysctl.conf --os freebsd "
                                     "--os-version 14.0 --role nat-firewall")
    aud.add_argument("files", nargs="+")
    aud.add_argument("--os", required=True, choices=sorted(OS_FAMILIES))
    aud.add_argument("--os-version", help="e.g. 14.0, 2.6.0 (pfSense), 24.7 (OPNsense), 6.1 (Linux)")
    aud.add_argument("--role", choices=ROLES)
    aud.add_argument("--virtual", action="store_true", help="a VM guest with virtio NICs")
    aud.add_argument("--kind", choices=KINDS, help="file kind (default: from the file name)")
    aud.add_argument("--json", action="store_true")
    aud.set_defaults(handler=cmd_audit)

    exp = sub.add_parser("explain", help="what a knob does, defaults by version, advice per role, sources",
                         description="Example: linerate explain hw.igb.rx_process_limit")
    exp.add_argument("name", nargs="?")
    exp.add_argument("--os", choices=sorted(OS_FAMILIES))
    exp.add_argument("--stats", action="store_true", help="count catalog entries per OS")
    exp.add_argument("--json", action="store_true")
    exp.set_defaults(handler=cmd_explain)

    rec = sub.add_parser("recommend", help="a config snippet for one system, with a reason per line",
                         description="Example: linerate recommend --os pfsense --os-version 2.6.0 "
                                     "--role nat-firewall --nic igb --cores 4")
    rec.add_argument("--os", required=True, choices=sorted(OS_FAMILIES))
    rec.add_argument("--os-version", required=True)
    rec.add_argument("--role", required=True, choices=ROLES)
    rec.add_argument("--nic", help="igb, em, ix, ixl, re, vtnet, ...")
    rec.add_argument("--cores", type=int)
    rec.add_argument("--pppoe", action="store_true")
    rec.add_argument("--virtual", action="store_true")
    rec.add_argument("--json", action="store_true")
    rec.add_argument("--tune", metavar="EXPERIMENT", help="a stored tune (`linerate tune`): say which of this "
                     "advice it confirmed or refuted on this box")
    rec.add_argument("--db", default=None, help="SQLite store with the tune (default ./linerate.db or $LINERATE_DB)")
    rec.set_defaults(handler=cmd_recommend)


def cmd_audit(args: argparse.Namespace) -> int:
    from linerate.tuning.audit import Context, audit, exit_code
    from linerate.tuning.catalog import load_catalog
    from linerate.tuning.parsers import parse_file

    release = resolve_release(args.os, args.os_version) if args.os_version else None
    family, version = (release.family, release.version) if release else (OS_FAMILIES[args.os], None)
    settings = [s for path in args.files for s in parse_file(path, args.kind)]  # every file read before any output
    ctx = Context(args.os, family, version, args.role, args.virtual, args.os_version, release and release.high)
    if release and release.note:
        print(f"linerate: note: {release.note}", file=sys.stderr)
    findings = audit(load_catalog(), settings, ctx)
    if args.json:
        print(dumps({"findings": [f.to_dict() for f in findings]}))
    else:
        for f in findings:
            print(f"{f.file}:{f.line}: {f.code} {f.severity}: {f.message}\n    {f.evidence}\n    fix: {f.fix}")
        counts = {sev: sum(f.severity == sev for f in findings) for sev in ("error", "warning", "info")}
        print(f"{len(settings)} settings checked against {ctx.label()}"
              f"{' as ' + args.role if args.role else ''}: {counts['error']} error(s), "
              f"{counts['warning']} warning(s), {counts['info']} note(s)")
    return exit_code(findings)


def cmd_explain(args: argparse.Namespace) -> int:
    from linerate.tuning.catalog import load_catalog
    from linerate.tuning.releases import coverage_line

    catalog = load_catalog()
    if args.stats:
        return _explain_stats(catalog, args.json)
    if not args.name:
        raise ConfigError("name", "give a knob name, or --stats")
    family = OS_FAMILIES[args.os] if args.os else None
    matches = [k for k in catalog.knobs if k.matches(args.name) and (family is None or k.os == family)]
    if not matches:
        return _explain_listed(catalog, args.name, family, args.json)
    for knob in matches:
        if args.json:
            print(dumps(knob.model_dump(mode="json")))
            continue
        print(f"{knob.name}  ({knob.os}, {knob.location}, {knob.type})\n  {knob.description}")
        if knob.min is not None or knob.max is not None:
            print(f"  range: {knob.min}..{knob.max}")
        defaults = ", ".join(f"{v}: {d}" for v, d in knob.defaults.items()) or knob.default_note or "unknown"
        print(f"  defaults by version: {defaults}")
        print(f"  introduced: {knob.introduced}; removed: {knob.removed}"
              + (f"; replaced by {knob.replaced_by}" if knob.replaced_by else ""))
        for role, rec in knob.recommend.items():
            print(f"  {role}: {rec.value} — {rec.why}" + (f" (versions {rec.versions})" if rec.versions else ""))
        for role, rule in knob.harmful.items():
            print(f"  harmful for {role} when {'/'.join(rule.values)}: {rule.why}")
        if knob.security:
            print(f"  security: {'/'.join(knob.security.values)} — {knob.security.why}")
        if knob.risks:
            print(f"  risks: {knob.risks}")
        print("  sources:\n" + "\n".join(f"    - {s}" for s in knob.sources))
        coverage = coverage_line(knob.os, args.name)
        if coverage:
            print(f"  {coverage}")
    if not args.json and family is None:  # where else the name exists without advice (kern.maxfiles: FreeBSD too)
        for other in sorted({"freebsd", "linux", "openbsd"} - {k.os for k in matches}):
            _explain_listed(catalog, args.name, other, False, quiet=True)
    return 0


def _explain_stats(catalog, as_json: bool) -> int:
    from linerate.tuning.names import all_lists

    stats = catalog.stats()
    sourced = {os: sum(1 for k in catalog.knobs if k.os == os and all(s.strip() for s in k.sources)) for os in stats}
    from linerate.tuning.sources import source_list

    lists = [{"os": n.os, "release": ".".join(map(str, n.release)), "names": len(n.entries), "sources": n.sources}
             for n in all_lists()]
    source = source_list("freebsd")
    if source:
        lists.append({"os": "freebsd", "release": " .. ".join((source.snapshots[0].label, source.snapshots[-1].label)),
                      "names": len(source.rows), "sources": source.sources +
                      [f"{s.label}: {s.where}" for s in source.snapshots]})
    if as_json:
        print(dumps({"catalog": stats, "with_source": sourced, "name_lists": lists}, indent=None))
        return 0
    for os, n in sorted(stats.items()):
        print(f"{os:8} {n:4} knobs with advice ({sourced[os]} with a source)")
    print(f"{'total':8} {sum(stats.values()):4} knobs")
    for item in lists:
        print(f"names that exist on {item['os']} {item['release']}: {item['names']} "
              f"(from {'; '.join(item['sources'])})")
    return 0


def _explain_listed(catalog, name: str, family: str | None, as_json: bool, quiet: bool = False) -> int:
    """A name the catalog has no advice for: say whether it exists, per the same source declarations and
    name lists the audit uses (so explain and audit agree)."""
    from linerate.tuning.names import all_lists, close_names
    from linerate.tuning.releases import coverage_line
    from linerate.tuning.sources import source_list

    families = [family] if family else ["freebsd", "linux", "openbsd"]
    found = []
    for fam in families:
        source = source_list(fam)
        declared = source is not None and source.declared(name)
        if declared:
            seen = sorted({i for row in source.rows[source.resolve(name)] for i in row.seen})
            alive = [source.snapshots[i].label for i in seen if source.alive(name, i)]
            row = source.rows[source.resolve(name)][-1]
            absent = [s.label for i, s in enumerate(source.snapshots) if s.label not in alive]
            found.append({"name": name, "os": fam, "where": row.where, "origin": row.origin,
                          "declared_in": alive, "absent_from": absent, "list": source.label(), "advice": None})
        for names in all_lists():
            hit = names.lookup(name) if names.os == fam else None
            if hit and not declared:
                found.append({"name": name, "os": fam, "where": hit[0], "origin": hit[1],
                              "declared_in": [], "list": names.label(), "advice": None})
    if not found and quiet:
        return 0
    if not found:
        candidates = {k.name for k in catalog.knobs if family is None or k.os == family}
        candidates |= {entry for n in all_lists() if family is None or n.os == family for entry in n.entries}
        for fam in families:
            source = source_list(fam)
            candidates |= {n for n in source.rows if "*" not in n} if source else set()
        hints = sorted({h for os in families for h in close_names(name, candidates, os)})
        read = [source_list(fam).label() for fam in families if source_list(fam)] + \
            [n.label() for n in all_lists() if n.os in families]
        raise ConfigError("name", f"'{name}' is neither in the catalog, nor declared in the source, nor in a name "
                          f"list (read: {', '.join(read)})" + (f"; did you mean {', '.join(hints)}?" if hints else ""))
    for fam in {item["os"] for item in found} if not as_json else ():
        coverage = coverage_line(fam, name)
        if coverage:
            print(coverage)
    for item in found:
        if as_json:
            print(dumps(item, indent=None))
        elif item["declared_in"]:
            absent = f"; not in {', '.join(item['absent_from'])}" if item["absent_from"] else ""
            print(f"{name} is declared on {item['os']} ({item['where']}) in {item['origin']} of the "
                  f"{', '.join(item['declared_in'])} source{absent}; linerate has no advice for it")
        else:
            print(f"{name} exists on {item['os']} ({item['list']}: {item['where']}, from {item['origin']}); "
                  "linerate has no advice for it")
    return 0


def cmd_recommend(args: argparse.Namespace) -> int:
    from linerate.tuning.recommend import recommend

    advice = recommend(args.os, args.os_version, args.role, args.nic, args.cores, args.pppoe, args.virtual)
    found = _tune_confirmations(args, advice) if args.tune else None
    if args.json:
        doc = advice.to_dict()
        if found is not None:
            doc["tune"] = [{"line": line, "on_this_box": status} for line, status in found]
        print(dumps(doc))
        return 0
    print(advice.render(), end="")
    if found is not None:
        print(f"\n# --- what tune '{args.tune}' measured on this box ---")
        for line, status in found:
            print(f"{line:<44} # {status}")
    return 0


def _tune_confirmations(args: argparse.Namespace, advice) -> list[tuple[str, str]]:
    from linerate.cli.options import open_store
    from linerate.experiment.registry import kind, kind_name_of
    from linerate.kinds.tune.report import confirmations, document

    store = open_store(args, create=False)
    experiment = store.experiment(args.tune)
    if kind_name_of(experiment) != "tune":
        raise ConfigError("--tune", f"experiment {experiment.name!r} is not a tune (`linerate tune FILE`)")
    doc = document(experiment, kind("tune").outcome(store, experiment))
    return confirmations([(file, line) for file, lines in advice.files.items() for line, _ in lines], doc)
