"""`linerate run | report | list | compare | import`: experiments, the store, statistics."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from linerate import preflight
from linerate.cli.progress import ProgressReporter
from linerate.errors import ConfigError
from linerate.experiment.axes import required_features
from linerate.experiment.config import load_experiment
from linerate.experiment.run import run_experiment
from linerate.experiment.scheduler import estimate_seconds, iter_plan, planned_trials
from linerate.report.data import build_report
from linerate.report.exporters import EXPORTERS
from linerate.stats import compare
from linerate.store import Store, default_db_path


def add_db(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--db", default=None, help="SQLite store (default ./linerate.db or $LINERATE_DB)")


def register(sub: argparse._SubParsersAction) -> None:
    run = sub.add_parser("run", help="run a declared experiment (TOML) and store every trial",
                         description="Example: linerate run examples/classic.toml --resume")
    run.add_argument("file", help="experiment file (TOML)")
    run.add_argument("--resume", action="store_true", help="continue the unfinished run of this experiment")
    run.add_argument("--seed", type=int, help="shuffle seed (default: the file's, else random; always recorded)")
    run.add_argument("--dry-run", action="store_true", help="print the cells, run order and ETA; run nothing")
    add_db(run)
    run.set_defaults(handler=cmd_run)

    report = sub.add_parser("report", help="table of a stored experiment: mean ± 95%% CI per cell",
                            description="Example: linerate report classic --format md")
    report.add_argument("experiment", nargs="?", help="name or id (default: the newest)")
    report.add_argument("--format", choices=sorted(EXPORTERS), default="md")
    report.add_argument("--plot", metavar="FILE.png", help="also write a bar chart with CI error bars")
    add_db(report)
    report.set_defaults(handler=cmd_report)

    listing = sub.add_parser("list", help="stored experiments", description="Example: linerate list")
    add_db(listing)
    listing.set_defaults(handler=cmd_list)

    cmp = sub.add_parser("compare", help="Welch's t-test between two cells or two experiments",
                         description="Example: linerate compare 'classic:firewall=none' 'classic:firewall=stateful'")
    cmp.add_argument("a", help="EXPERIMENT or EXPERIMENT:key=value,key=value (trials of matching cells)")
    cmp.add_argument("b", help="same form as A")
    add_db(cmp)
    cmp.set_defaults(handler=cmd_compare)

    imp = sub.add_parser("import", help="store iperf3 -J files that were run by hand",
                         description="Example: linerate import run1.json run2.json --label apu2-pfsense")
    imp.add_argument("files", nargs="+")
    imp.add_argument("--label", required=True, help="experiment name to store them under")
    add_db(imp)
    imp.set_defaults(handler=cmd_import)


def open_store(args: argparse.Namespace) -> Store:
    return Store(args.db or default_db_path())


def cmd_run(args: argparse.Namespace) -> int:
    experiment, text = load_experiment(args.file)
    seed = args.seed if args.seed is not None else experiment.seed
    if args.dry_run:
        shown_seed = seed if seed is not None else 0
        print(f"experiment '{experiment.name}': {experiment.n_cells} cells, {planned_trials(experiment)} trials"
              f"{' (at least; adaptive)' if experiment.precision else ''}, "
              f"ETA {estimate_seconds(experiment) / 60:.1f} min; first round order (seed {shown_seed}):")
        for index, cell in enumerate(iter_plan(experiment, shown_seed), 1):
            varying = {k: cell[k] for k in experiment.axes}
            print(f"  {index:3}. {json.dumps(varying)}")
        return 0
    store = open_store(args)
    preflight.require(preflight.run_checks(), extra_required=required_features(experiment.cells()))
    with ProgressReporter() as reporter:
        result = run_experiment(experiment, store, file_text=text, resume=args.resume, seed=seed,
                                on_event=reporter)
    print(EXPORTERS["md"](build_report(store, result.experiment_id)))
    print(f"{result.trials_run} trials run ({result.failures} failed) into {store.path}, experiment "
          f"{result.experiment_id}{' (resumed)' if result.resumed else ''}, seed {result.seed}")
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    report = build_report(open_store(args), args.experiment)
    sys.stdout.write(EXPORTERS[args.format](report))
    if args.plot:
        from linerate.report.plot import write_png

        write_png(report, args.plot)
        print(f"plot written to {args.plot}", file=sys.stderr)
    return 0


def cmd_list(args: argparse.Namespace) -> int:
    store = open_store(args)
    rows = store.experiments()
    if not rows:
        print(f"no experiments in {store.path}")
    for exp in rows:
        started = time.strftime("%Y-%m-%d %H:%M", time.localtime(exp.started_at))
        cells = len(store.cell_rows(exp.id))
        print(f"{exp.id:4}  {exp.name:20} {exp.kind:7} {exp.status:11} {started}  {cells} cells")
    return 0


def select_trials(store: Store, selector: str) -> tuple[str, list[float]]:
    ref, _, conditions = selector.partition(":")
    wanted = {}
    for item in filter(None, conditions.split(",")):
        key, sep, value = item.partition("=")
        if not sep:
            raise ConfigError("compare", f"'{item}' is not key=value")
        wanted[key.strip()] = value.strip()
    exp = store.experiment(ref)
    cells = [r["id"] for r in store.cell_rows(exp.id)
             if all(str(json.loads(r["params"]).get(k)) == v for k, v in wanted.items())]
    values = [v for cell in cells for v in store.ok_throughputs(cell)]
    if not values:
        raise ConfigError("compare", f"'{selector}' matches no successful trials")
    return selector, values


def cmd_compare(args: argparse.Namespace) -> int:
    store = open_store(args)
    (label_a, a), (label_b, b) = select_trials(store, args.a), select_trials(store, args.b)
    result = compare(a, b, label_a, label_b)
    print(f"A {label_a}: n={len(a)} mean {result.mean_a / 1e6:,.1f} Mbit/s")
    print(f"B {label_b}: n={len(b)} mean {result.mean_b / 1e6:,.1f} Mbit/s")
    print(f"difference B-A: {result.difference / 1e6:+,.1f} Mbit/s ({result.relative * 100:+.1f}%), "
          f"Welch p={'n/a' if result.p_value is None else f'{result.p_value:.3g}'}")
    print(result.verdict())
    return 0


def cmd_import(args: argparse.Namespace) -> int:
    from linerate.experiment.importer import import_files

    store = open_store(args)
    outcome = import_files(store, [Path(f) for f in args.files], args.label)
    for path, message in outcome.errors:
        print(f"{path}: error: {message}", file=sys.stderr)
    print(f"imported {outcome.stored_ok} trial(s) into experiment '{args.label}' "
          f"(id {outcome.experiment_id}); {len(outcome.errors)} error(s)")
    return 1 if outcome.errors else 0
