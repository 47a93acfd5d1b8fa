"""`linerate audit | explain | recommend`: the tuning knowledge base."""

from __future__ import annotations

import argparse
import re
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
    aud.add_argument("--kernel-config", metavar="FILE", help="FreeBSD: the box runs a custom kernel built from this "
                     "config(5) file; names its options compile in are not flagged (default: GENERIC)")
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
    from linerate.tuning.parsers import kernel_config_options, parse_file

    release = resolve_release(args.os, args.os_version) if args.os_version else None
    family, version = (release.family, release.version) if release else (OS_FAMILIES[args.os], None)
    settings = [s for path in args.files for s in parse_file(path, args.kind)]  # every file read before any output
    if args.kernel_config and family != "freebsd":
        raise ConfigError("--kernel-config", f"a FreeBSD kernel configuration; {args.os} has none: leave it out")
    kernel = kernel_config_options(args.kernel_config) if args.kernel_config else None
    ctx = Context(args.os, family, version, args.role, args.virtual, args.os_version, release and release.high, kernel)
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
    from linerate.tuning import explain
    from linerate.tuning.catalog import load_catalog

    catalog = load_catalog()
    if args.stats:
        doc = explain.stats(catalog)
        print(dumps(doc, indent=None) if args.json else explain.stats_text(doc), end="" if not args.json else "\n")
        return 0
    if not args.name:
        raise ConfigError("name", "give a knob name, or --stats")
    family = OS_FAMILIES[args.os] if args.os else None
    if args.json:
        items, advice = explain.describe_json(catalog, args.name, family)
        for item in items:  # a catalog entry as a document, a bare listing one line each
            print(dumps(item) if advice else dumps(item, indent=None))
        return 0
    print(explain.describe(catalog, args.name, family), end="")
    return 0


def cmd_recommend(args: argparse.Namespace) -> int:
    from linerate.tuning.recommend import recommend

    if args.cores is not None and not 1 <= args.cores <= 4096:
        raise ConfigError("--cores", f"{args.cores} is not a CPU count; give 1 to 4096")
    if args.nic is not None and not re.fullmatch(r"[a-z][a-z0-9_]{0,15}", args.nic):
        raise ConfigError("--nic", f"{args.nic[:20]!r} is not a driver name such as igb, ix or vtnet")
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
