"""`linerate diagnose`: verdicts per cell of a stored experiment, or from two snapshots pasted from a
firewall's shell (--before/--after), and the one-line script that takes such a snapshot."""

from __future__ import annotations

import argparse
from linerate.cli.options import add_db, open_store
from linerate.cli.options import add_json_flag
from linerate.errors import ConfigError
from linerate.schema import dumps

MAX_SNAPSHOT_BYTES = 4 * 1024 * 1024


def register(sub: argparse._SubParsersAction) -> None:
    from linerate.dut.base import OS_FAMILY

    parser = sub.add_parser(
        "diagnose", help="why a cell is (not) at line rate: verdicts with evidence and what to do",
        description="With EXPERIMENT: the verdicts of every cell of a stored experiment. With --after "
        "(and --before): verdicts from snapshots of a firewall you cannot reach over SSH; "
        "--snapshot-script --os OS prints the command that takes one.",
        epilog="Example: linerate diagnose --before before.txt --after after.txt --os pfsense; "
        "a raw paste works too: linerate diagnose --after interrupts.txt --os openwrt")
    parser.add_argument("experiment", nargs="?", help="experiment name or id (default: the latest)")
    parser.add_argument("--before", metavar="FILE", help="snapshot taken once the test traffic runs")
    parser.add_argument("--after", metavar="FILE", help="snapshot taken just before the test ends, or raw "
                        "outputs pasted from the box (cat /proc/interrupts, top -P, vmstat -i ...)")
    parser.add_argument("--os", choices=sorted(OS_FAMILY), help="the firewall's OS (with --after or "
                        "--snapshot-script)")
    parser.add_argument("--snapshot-script", action="store_true",
                        help="print a one-line shell command that captures a snapshot (paste it into the "
                        "firewall's shell, e.g. pfSense Diagnostics > Command Prompt)")
    add_db(parser)
    add_json_flag(parser)
    parser.set_defaults(handler=cmd_diagnose)


def cmd_diagnose(args: argparse.Namespace) -> int:
    if args.snapshot_script:
        from linerate.diagnose.offline import snapshot_script

        if args.os is None:
            raise ConfigError("--os", "--snapshot-script needs the firewall's OS, e.g. --os pfsense")
        print(snapshot_script(args.os))
        return 0
    if args.after or args.before:
        return _offline(args)
    return _experiment(args)


def _offline(args: argparse.Namespace) -> int:
    from linerate.diagnose.offline import read_snapshot, snapshot_facts
    from linerate.diagnose.rules import diagnose
    from linerate.inputs import read_text

    if args.after is None:
        raise ConfigError("--after", "is needed: the snapshot taken while the test still runs (--before is optional)")
    if args.os is None:
        raise ConfigError("--os", "is needed with --after: the firewall's OS, e.g. --os pfsense")
    if args.experiment is not None:
        raise ConfigError("experiment", "give either an experiment or --before/--after snapshots, not both")
    after = read_snapshot(read_text(args.after, MAX_SNAPSHOT_BYTES, "snapshot file"), args.os, args.after)
    before = None
    if args.before is not None:
        before = read_snapshot(read_text(args.before, MAX_SNAPSHOT_BYTES, "snapshot file"), args.os, args.before)
    facts = snapshot_facts(before, after, args.os)
    verdicts = [v for v in diagnose(facts) if v.code != "line-rate-unknown"]
    if args.json:
        print(dumps({"verdicts": [v.to_dict() for v in verdicts], "cpu_source": facts.cpu_source,
                     "since_boot": facts.since_boot, "interrupts_since_boot": facts.irq_since_boot,
                     "unavailable": after.problems, "read": after.reading.read,
                     "not_understood": after.not_understood}))
        return 0
    for verdict in verdicts:
        _print_verdict(verdict)
    if not any(v.kind == "limit" for v in verdicts):
        noted = " (the notes above say what was seen)" if verdicts else ""
        print(f"no limit: nothing in the snapshots points at what holds the box back{noted}")
    if after.reading.read:
        print("read: " + "; ".join(_counted(after.reading.read)))
    for line in after.not_understood:
        print(f"section present but not understood: {line}")
    if after.problems:
        print("not in the after snapshot: " + "; ".join(after.problems))
    return 0


def _experiment(args: argparse.Namespace) -> int:
    from linerate.report.data import ROW_AXES, build_report
    from linerate.report.layout import format_mbps, plain
    from linerate.report.data import column_of, row_of

    report = build_report(open_store(args, create=False), args.experiment)
    column_axes = [n for n in report.varying() if n not in ROW_AXES]
    if args.json:
        print(dumps({"experiment": report.experiment.name, "cells": [
            {"cell_id": c.cell_id, "params": c.params, "mean_bps": c.summary.mean, "ceiling_bps": c.ceiling_bps,
             "line_rate_fraction": c.line_rate_fraction, "verdicts": [v.to_dict() for v in c.verdicts]}
            for c in report.cells]}))
        return 0
    for cell in report.cells:
        fraction = cell.line_rate_fraction
        share = f"{fraction * 100:.1f}% of line rate" if fraction is not None else "line rate unknown"
        print(plain(f"{row_of(cell)}, {column_of(cell, column_axes)}: {format_mbps(cell.summary.mean)} Mbit/s, {share}"))
        for verdict in cell.verdicts:
            _print_verdict(verdict, indent="  ")
    return 0


def _print_verdict(verdict, indent: str = "") -> None:
    from linerate.report.layout import plain

    print(plain(f"{indent}[{verdict.code}] {verdict.title}: {verdict.evidence}"))
    print(plain(f"{indent}    what to do: {verdict.advice}"))


def _counted(lines: list[str]) -> list[str]:
    """The outputs read, a repeated one once with how many times (a polling loop's ten readings)."""
    out: list[str] = []
    for line in dict.fromkeys(lines):
        count = lines.count(line)
        out.append(f"{line} x{count}" if count > 1 else line)
    return out
