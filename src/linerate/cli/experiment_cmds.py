"""`linerate run | report | list | compare | import | export`: experiments, the store, statistics.
Heavy modules (scipy through stats, the lab through run) are imported inside the handlers."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from linerate.cli.options import add_accept_new, add_db, add_json_flag, open_store, testbeds_for
from linerate.cli.printing import shown
from linerate.errors import ConfigError
from linerate.schema import dumps


def seed_type(text: str) -> int:
    from linerate.experiment.config import MAX_SEED

    try:
        value = int(text, 10)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid seed {text[:30]!r}: use a whole number") from None
    if not 0 <= value <= MAX_SEED:
        raise argparse.ArgumentTypeError(f"seed {text[:30]} is out of range; use 0 to {MAX_SEED}")
    return value


def register(sub: argparse._SubParsersAction) -> None:
    from linerate.report.exporters import FORMATS

    run = sub.add_parser("run", help="run a declared experiment (TOML) and store every trial",
                         description="Example: linerate run examples/classic.toml --resume")
    run.add_argument("file", help="experiment file (TOML)")
    run.add_argument("--resume", action="store_true", help="continue the unfinished run of this experiment")
    run.add_argument("--seed", type=seed_type, help="shuffle seed (default: the file's, else random; always recorded)")
    run.add_argument("--dry-run", action="store_true",
                     help="print the cells, run order and ETA, and run the preflight checks; run nothing")
    run.add_argument("--testbed", metavar="INVENTORY", help="run on real hosts over SSH (inventory TOML; see "
                     "`linerate testbed check`) instead of the namespace lab")
    add_accept_new(run)
    add_db(run)
    add_json_flag(run)
    run.set_defaults(handler=cmd_run)

    tune = sub.add_parser("tune", help="find the DUT knobs that really help, with proof (a tune file: test = \"tune\")",
                          description="Example: linerate tune examples/tune-vm.toml --db tune.db")
    tune.add_argument("file", help="tune file (TOML, test = \"tune\")")
    tune.add_argument("--resume", action="store_true", help="continue a killed tune: stored trials are replayed, "
                      "not measured again")
    tune.add_argument("--dry-run", action="store_true", help="print the start, the candidates and the budget; "
                      "run the preflight checks; run nothing")
    tune.add_argument("--testbed", metavar="INVENTORY", help="tune real hosts over SSH (inventory TOML)")
    add_accept_new(tune)
    add_db(tune)
    add_json_flag(tune)
    tune.set_defaults(handler=cmd_tune, seed=None)

    report = sub.add_parser("report", help="table of a stored experiment: mean ± 95%% CI per cell",
                            description="Example: linerate report classic --format md")
    report.add_argument("experiment", nargs="?", help="name or id (default: the newest)")
    report.add_argument("--format", choices=(*FORMATS, "html"), default="md",
                        help="html: one self-contained page with charts, trials, knobs, environment, failures")
    report.add_argument("-o", "--output", metavar="FILE", help="write the report to FILE instead of stdout")
    report.add_argument("--plot", metavar="FILE.png", help="also write a bar chart with CI error bars")
    add_db(report)
    report.set_defaults(handler=cmd_report)

    listing = sub.add_parser("list", help="stored experiments", description="Example: linerate list --json")
    add_db(listing)
    add_json_flag(listing)
    listing.set_defaults(handler=cmd_list)

    cmp = sub.add_parser("compare", help="Welch's t-test, cell by cell, between two selections",
                         description="Example: linerate compare 'classic:firewall=none' 'classic:firewall=stateful' "
                         "--format html -o compare.html")
    cmp.add_argument("a", help="EXPERIMENT or EXPERIMENT:key=value,key=value (trials of matching cells)")
    cmp.add_argument("b", help="same form as A")
    cmp.add_argument("--format", choices=("text", "html"), default="text")
    cmp.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of stdout")
    add_db(cmp)
    add_json_flag(cmp)
    cmp.set_defaults(handler=cmd_compare)

    imp = sub.add_parser("import", help="store iperf3 -J files that were run by hand",
                         description="Example: linerate import run1.json run2.json --label apu2-pfsense")
    imp.add_argument("files", nargs="+")
    imp.add_argument("--label", required=True, help="experiment name to store them under")
    add_db(imp)
    add_json_flag(imp)
    imp.set_defaults(handler=cmd_import)

    exp = sub.add_parser("export", help="write each trial's stored iperf3 -J output to a directory, one file per "
                         "trial", description="Example: linerate export classic --iperf3-json classic-iperf3/")
    exp.add_argument("experiment", nargs="?", help="name or id (default: the newest)")
    exp.add_argument("--iperf3-json", metavar="DIR", required=True, help="directory for the files (created when "
                     "missing): the iperf3 -J output of every trial, as iperf3 wrote it")
    add_db(exp)
    add_json_flag(exp)
    exp.set_defaults(handler=cmd_export)


def _dry_run(args: argparse.Namespace, experiment, text: str, seed: int | None, testbeds) -> int:
    from linerate.experiment.registry import kind
    from linerate.store import default_db_path
    from linerate.store.db import check_db

    # --db is checked as the run would check it (a directory, FIFO, device, another program's or a
    # newer database: exit 2); a missing one is fine, the run would create it (not with --resume)
    store = open_store(args, create=False) if check_db(args.db or default_db_path(), not args.resume) else None
    test = kind(experiment.test)
    for line in test.describe_plan(experiment, text, seed, store, resume=args.resume,
                                   seed_given=args.seed is not None):
        print(line)
    print(testbeds.check(test.cells(experiment), test.required_features(experiment)))
    return 0


def cmd_run(args: argparse.Namespace) -> int:
    from linerate.cli.progress import ProgressReporter
    from linerate.experiment.config import load_experiment
    from linerate.experiment.registry import kind
    from linerate.experiment.run import run_experiment
    from linerate.report.exporters import export

    experiment, text = load_experiment(args.file)
    test = kind(experiment.test)
    testbeds = testbeds_for(args)
    testbeds.refuse_unsupported(test.cells(experiment))
    seed = args.seed if args.seed is not None else experiment.seed
    if args.dry_run:
        return _dry_run(args, experiment, text, seed, testbeds)
    testbeds.check(test.cells(experiment), test.required_features(experiment))
    store = open_store(args)
    testbeds = testbeds_for(args, store)
    with ProgressReporter() as reporter:
        result = run_experiment(experiment, store, testbeds, file_text=text, resume=args.resume, seed=seed,
                                on_event=reporter)
    print(export(store, result.experiment_id, "json" if args.json else "md"), end="" if args.json else "\n")
    if not args.json:
        print(result.summary(str(store.path)))
    return 0


def cmd_tune(args: argparse.Namespace) -> int:
    """`linerate run` for a file with test = "tune" (any other test is refused: use `run`)."""
    from linerate.experiment.config import load_experiment

    experiment, _ = load_experiment(args.file)
    if experiment.test != "tune":
        raise ConfigError(args.file, f"is a test = \"{experiment.test}\" file; `linerate tune` runs test = \"tune\" "
                          "files (use `linerate run` for this one)")
    return cmd_run(args)


def check_output(path: str | None, option: str = "--output") -> None:
    """Before any work: the same rule report/output.py writes by (devices and FIFOs are written
    into, never replaced; directories, disks, sockets and links to nothing are refused)."""
    if path is None:
        return
    from linerate.report import output

    output.check(path, option)


def emit(text: str, path: str | None) -> None:
    if path is None:
        sys.stdout.write(text)
        return
    from linerate.report import output

    size = output.write(path, text, "--output")
    print(f"written to {shown(path)} ({size:,} bytes)", file=sys.stderr)


def cmd_report(args: argparse.Namespace) -> int:
    from linerate.report.exporters import export, plot

    check_output(args.output)
    check_output(args.plot, "--plot")
    store = open_store(args, create=False)
    emit(export(store, args.experiment, args.format), args.output)
    if args.plot:
        plot(store, args.experiment, args.plot)
        print(f"plot written to {shown(args.plot)}", file=sys.stderr)
    return 0


def cmd_list(args: argparse.Namespace) -> int:
    from linerate.report.layout import plain

    store = open_store(args, create=False)
    rows = store.experiments()
    found = [{"id": exp.id, "name": exp.name, "kind": exp.kind, "status": exp.status, "started_at": exp.started_at,
              "searches": len(store.searches(exp.id)), "cells": len(store.cell_rows(exp.id))} for exp in rows]
    if args.json:
        print(dumps({"database": str(store.path), "experiments": found}))
        return 0
    if not rows:
        print(f"no experiments in {store.path}")
    for item in found:
        started = time.strftime("%Y-%m-%d %H:%M", time.localtime(item["started_at"]))
        what = f"{item['searches']} searches" if item["searches"] else f"{item['cells']} cells"
        print(f"{item['id']:4}  {plain(item['name']):20} {item['kind']:7} {item['status']:11} {started}  {what}")
    return 0


def cmd_compare(args: argparse.Namespace) -> int:
    from linerate.report.compare import compare_selections

    check_output(args.output)
    if args.json and args.format == "html":
        raise ConfigError("--json", "prints the comparison as JSON; drop --format html (or --json)")
    store = open_store(args, create=False)
    result = compare_selections(store, args.a, args.b)
    if args.json:
        emit(dumps(result.to_dict()) + "\n", args.output)
        return 0
    if args.format == "html" and not result.a.bit_rates:
        raise ConfigError("--format", "html compares throughput experiments; compare rfc2544 experiments as text")
    if args.format == "html":
        from linerate.report.html import render_compare

        emit(render_compare(result, store), args.output)
    else:
        emit(result.render() + "\n", args.output)
    return 0


def cmd_import(args: argparse.Namespace) -> int:
    from linerate.experiment.importer import check_label, parse_files, store_parsed

    label = check_label(args.label)
    parsed = parse_files([Path(f) for f in args.files])  # every file checked before the store is opened
    outcome = store_parsed(open_store(args), parsed, label)
    for path, message in outcome.errors:
        print(f"{path}: error: {message}", file=sys.stderr)
    if args.json:
        print(dumps({"experiment": args.label, "experiment_id": outcome.experiment_id, "imported": outcome.stored_ok,
                     "errors": [{"file": str(path), "error": message} for path, message in outcome.errors]}))
    else:
        print(f"imported {outcome.stored_ok} trial(s) into experiment '{args.label}' "
              f"(id {outcome.experiment_id}); {len(outcome.errors)} error(s)")
    return 1 if outcome.errors else 0


def cmd_export(args: argparse.Namespace) -> int:
    from linerate.report.iperf3_files import check_directory, export_iperf3_json

    check_directory(args.iperf3_json)
    result = export_iperf3_json(open_store(args, create=False), args.experiment, args.iperf3_json)
    if args.json:
        print(dumps(result.to_dict()))
        return 0
    skipped = f"; {len(result.without_output)} trial(s) without iperf3 output skipped" if result.without_output else ""
    print(f"wrote {len(result.files)} iperf3 -J file(s) of experiment {result.experiment_id} to "
          f"{shown(result.directory)}{skipped}")
    return 0
