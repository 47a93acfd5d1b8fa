"""`linerate run | report | list | compare | import`: experiments, the store, statistics.
Heavy modules (scipy through stats, the lab through run) are imported inside the handlers."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from linerate.errors import ConfigError


def add_db(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--db", default=None, help="SQLite store (default ./linerate.db or $LINERATE_DB)")


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
    run.add_argument("--accept-new-host-keys", action="store_true",
                     help="with --testbed: store host keys seen for the first time (a changed key is refused)")
    add_db(run)
    run.set_defaults(handler=cmd_run)

    report = sub.add_parser("report", help="table of a stored experiment: mean ± 95%% CI per cell",
                            description="Example: linerate report classic --format md")
    report.add_argument("experiment", nargs="?", help="name or id (default: the newest)")
    report.add_argument("--format", choices=(*FORMATS, "html"), default="md",
                        help="html: one self-contained page with charts, trials, knobs, environment, failures")
    report.add_argument("-o", "--output", metavar="FILE", help="write the report to FILE instead of stdout")
    report.add_argument("--plot", metavar="FILE.png", help="also write a bar chart with CI error bars")
    add_db(report)
    report.set_defaults(handler=cmd_report)

    listing = sub.add_parser("list", help="stored experiments", description="Example: linerate list")
    add_db(listing)
    listing.set_defaults(handler=cmd_list)

    cmp = sub.add_parser("compare", help="Welch's t-test, cell by cell, between two selections",
                         description="Example: linerate compare 'classic:firewall=none' 'classic:firewall=stateful' "
                         "--format html -o compare.html")
    cmp.add_argument("a", help="EXPERIMENT or EXPERIMENT:key=value,key=value (trials of matching cells)")
    cmp.add_argument("b", help="same form as A")
    cmp.add_argument("--format", choices=("text", "html"), default="text")
    cmp.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of stdout")
    add_db(cmp)
    cmp.set_defaults(handler=cmd_compare)

    imp = sub.add_parser("import", help="store iperf3 -J files that were run by hand",
                         description="Example: linerate import run1.json run2.json --label apu2-pfsense")
    imp.add_argument("files", nargs="+")
    imp.add_argument("--label", required=True, help="experiment name to store them under")
    add_db(imp)
    imp.set_defaults(handler=cmd_import)


def open_store(args: argparse.Namespace, create: bool = True):
    from linerate.store import Store, default_db_path

    return Store(args.db if args.db is not None else default_db_path(), create=create)


def _dry_run(args: argparse.Namespace, experiment, text: str, seed: int | None, inventory=None) -> int:
    import random

    from linerate import preflight
    from linerate.experiment.axes import required_features
    from linerate.experiment.scheduler import (cell_states, estimate_seconds, first_round, learned_overhead_s,
                                               missing_trials, planned_trials)

    from linerate.store import default_db_path
    from linerate.store.db import check_db

    # --db is checked as the run would check it (a directory, FIFO, device, another program's or a
    # newer database: exit 2); a missing one is fine, the run would create it (not with --resume)
    store = open_store(args, create=False) if check_db(args.db or default_db_path(), not args.resume) else None
    overhead = learned_overhead_s(store.recent_trial_timings()) if store else None
    states = None
    how = "--seed" if args.seed is not None else "the file's seed"
    if args.resume:
        existing = store.resumable(experiment.name, experiment.config_hash(), text)
        if existing is None:
            print(f"experiment '{experiment.name}': no earlier run in {store.path}; --resume would start afresh")
        else:
            seed, how = existing.seed, "the earlier run's seed"
            states = cell_states(experiment, store, existing.id, create=False)
    if seed is None:
        seed = random.SystemRandom().randrange(2**31)
        how = f"chosen now; pass --seed {seed} to run exactly this order"
    trials = planned_trials(experiment) if states is None else missing_trials(experiment, states)
    order = first_round(experiment, seed, states)
    print(f"experiment '{experiment.name}': {experiment.n_cells} cells, {trials} trials"
          f"{' still missing' if states is not None else ''}"
          f"{' (at least; adaptive)' if experiment.precision else ''}, "
          f"ETA {estimate_seconds(experiment, trials, overhead) / 60:.1f} min"
          f" (per-trial overhead {'learned from ' + str(store.path) if overhead is not None else 'assumed'});"
          f" first round order (seed {seed}, {how}):")
    for index, cell in enumerate(order, 1):
        varying = {k: cell[k] for k in experiment.axes}
        print(f"  {index:3}. {json.dumps(varying)}")
    if inventory is None:
        require_local(experiment.cells())
        preflight.require(preflight.run_checks(), extra_required=required_features(experiment.cells()))
        print("preflight: ok")
    else:
        print(f"testbed {inventory.name}: axes ok; `linerate testbed check {args.testbed}` checks the hosts")
    return 0


def require_local(cells: list[dict]) -> None:
    """PreflightError (exit 2) listing what this machine lacks for these lab cells (congestion
    controls, own DUT images)."""
    from linerate.errors import PreflightError
    from linerate.experiment.axes import local_problems

    problems = local_problems(cells)
    if problems:
        raise PreflightError(problems)


def cmd_run(args: argparse.Namespace) -> int:
    from linerate.experiment.config import load_experiment
    from linerate.testbed.knobs import refuse_unsupported

    experiment, text = load_experiment(args.file)
    inventory = None
    if args.testbed:
        from linerate.testbed.inventory import load_inventory

        inventory = load_inventory(args.testbed)
    refuse_unsupported(experiment.cells(), "namespace" if inventory is None else "ssh", inventory)
    seed = args.seed if args.seed is not None else experiment.seed
    if experiment.test == "rfc2544":
        from linerate.cli.search_cmds import run_search_experiment

        return run_search_experiment(args, experiment, text, seed, inventory)
    if args.dry_run:
        return _dry_run(args, experiment, text, seed, inventory)
    from linerate import preflight
    from linerate.cli.progress import ProgressReporter
    from linerate.experiment.axes import required_features
    from linerate.experiment.run import namespace_lab, run_experiment
    from linerate.report.data import build_report
    from linerate.report.exporters import serializer

    if inventory is None:
        require_local(experiment.cells())
    store = open_store(args)
    factory, environment = namespace_lab, None
    if inventory is None:
        preflight.require(preflight.run_checks(), extra_required=required_features(experiment.cells()))
    else:
        from linerate.cli.testbed_cmds import ssh_testbed

        testbed, environment = ssh_testbed(args, inventory, store)
        factory = testbed.view
    with ProgressReporter() as reporter:
        result = run_experiment(experiment, store, file_text=text, resume=args.resume, seed=seed,
                                on_event=reporter, lab_factory=factory, environment=environment,
                                use_calibration=inventory is None)
    print(serializer("md")(build_report(store, result.experiment_id)))
    print(f"{result.trials_run} trials run ({result.failures} failed) into {store.path}, experiment "
          f"{result.experiment_id}{' (resumed)' if result.resumed else ''}, seed {result.seed}")
    return 0


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
    print(f"written to {path} ({size:,} bytes)", file=sys.stderr)


def cmd_report(args: argparse.Namespace) -> int:
    from linerate.report.data import build_report

    check_output(args.output)
    check_output(args.plot, "--plot")
    store = open_store(args, create=False)
    from linerate.search.experiment import is_search_experiment

    if is_search_experiment(store.experiment(args.experiment)):
        return _report_searches(args, store)
    report = build_report(store, args.experiment, detail=args.format == "html")
    if args.format == "html":
        from linerate.report.html import render_report

        emit(render_report(store, report), args.output)
    else:
        from linerate.report.exporters import serializer

        emit(serializer(args.format)(report), args.output)
    if args.plot:
        from linerate.report.plot import write_png

        write_png(report, args.plot)
        print(f"plot written to {args.plot}", file=sys.stderr)
    return 0


def _report_searches(args: argparse.Namespace, store) -> int:
    from linerate.search.summary import SERIALIZERS, summarize_searches

    experiment = store.experiment(args.experiment)
    summaries = summarize_searches(store, experiment.id)
    if args.format == "html":
        from linerate.search.html import render_search_report

        emit(render_search_report(store, experiment), args.output)
    else:
        emit(SERIALIZERS[args.format](experiment, summaries), args.output)
    if args.plot:
        from linerate.search.plot import write_frame_size_png

        write_frame_size_png(experiment, summaries, args.plot)
        print(f"plot written to {args.plot}", file=sys.stderr)
    return 0


def cmd_list(args: argparse.Namespace) -> int:
    from linerate.report.layout import plain

    store = open_store(args, create=False)
    rows = store.experiments()
    if not rows:
        print(f"no experiments in {store.path}")
    for exp in rows:
        started = time.strftime("%Y-%m-%d %H:%M", time.localtime(exp.started_at))
        searches = len(store.searches(exp.id))
        what = f"{searches} searches" if searches else f"{len(store.cell_rows(exp.id))} cells"
        print(f"{exp.id:4}  {plain(exp.name):20} {exp.kind:7} {exp.status:11} {started}  {what}")
    return 0


def cmd_compare(args: argparse.Namespace) -> int:
    from linerate.report.compare import compare_selections

    check_output(args.output)
    store = open_store(args, create=False)
    result = compare_selections(store, args.a, args.b)
    if args.format == "html" and result.a.unit != "Mbit/s":
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
    print(f"imported {outcome.stored_ok} trial(s) into experiment '{args.label}' "
          f"(id {outcome.experiment_id}); {len(outcome.errors)} error(s)")
    return 1 if outcome.errors else 0
