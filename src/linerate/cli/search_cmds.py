"""`linerate rfc2544`: RFC 2544 throughput per frame size (NDR and PDR, MLRsearch + trafgen) through
a lab built from the same options as `trial`, every search trial stored."""

from __future__ import annotations

import argparse
import json
import sys

from linerate.cli.options import add_json_flag, add_lab_options
from linerate.errors import ConfigError
from linerate.traffic.frames import label as frame_label


def frame_sizes_type(text: str) -> list[int | str]:
    from linerate.calc.linerate import RFC2544_SIZES
    from linerate.traffic.frames import MIXES

    sizes: list[int | str] = []
    for item in (part.strip().lower() for part in text.split(",")):
        if item == "rfc2544":
            sizes += RFC2544_SIZES
        elif item in MIXES:
            sizes.append(item)
        elif item.isdigit():
            sizes.append(int(item))
        else:
            raise argparse.ArgumentTypeError(f"{item[:20]!r} is not a frame size; use e.g. 64,512,1518, imix, "
                                             "or rfc2544 (64 ... 1518)")
    if len(set(sizes)) != len(sizes):
        raise argparse.ArgumentTypeError("a frame size is listed twice")
    return sizes


def register(sub: argparse._SubParsersAction) -> None:
    from linerate.calc.linerate import RFC2544_SIZES

    cmd = sub.add_parser("rfc2544", help="RFC 2544 throughput per frame size: NDR and PDR (MLRsearch, trafgen)",
                         description="Example: linerate rfc2544 --link 1g --frame-sizes 64,1518 --firewall rules:1000")
    cmd.add_argument("--frame-sizes", type=frame_sizes_type, default=None,
                     help="comma-separated frame sizes in bytes, MAC header to FCS, and/or imix (CSIT's 7:4:1 "
                     f"mix of 64/570/1518 B; IPv6 78/570/1518) (default rfc2544: {','.join(map(str, RFC2544_SIZES))}; "
                     "with --family 6 the smallest is 66, the least that carries IPv6 and UDP headers)")
    cmd.add_argument("--family", type=int, default=4, choices=(4, 6), help="IP family of the frames (default 4)")
    cmd.add_argument("--trial-duration", type=float, default=1.0,
                     help="seconds per search trial (default 1; RFC 2544 asks for 60 in final figures)")
    cmd.add_argument("--pdr-loss", type=float, default=0.005, help="loss ratio PDR allows (default 0.005 = 0.5%%)")
    cmd.add_argument("--name", default="rfc2544", help="experiment name in the store (default rfc2544)")
    cmd.add_argument("--resume", action="store_true", help="continue the newest unfinished search of this name")
    cmd.add_argument("--db", default=None, help="SQLite store (default ./linerate.db or $LINERATE_DB)")
    add_lab_options(cmd)
    add_json_flag(cmd)
    cmd.set_defaults(handler=cmd_rfc2544)


def cmd_rfc2544(args: argparse.Namespace) -> int:
    from linerate.search.rfc2544 import SearchSettings
    from linerate.traffic.trafgen import check_frame_size

    if args.frame_sizes is None:
        from linerate.traffic.trafgen import default_frame_sizes

        args.frame_sizes = default_frame_sizes(args.family)
    for size in args.frame_sizes:
        check_frame_size(size, args.family)
    settings = SearchSettings(args.trial_duration, args.pdr_loss)
    if not args.name or len(args.name) > 64 or not args.name.isprintable():
        raise ConfigError("--name", "use 1 to 64 printable characters")
    from linerate import __version__
    from linerate.cli.experiment_cmds import open_store
    from linerate.cli.trial_cmds import lab_in_use
    from linerate.experiment.ceiling import link_bps
    from linerate.search.lab_path import LabPath
    from linerate.search.rfc2544 import library_version, search_frame_size
    from linerate.search.table import render_table

    store = open_store(args)
    results = []
    with lab_in_use(args) as (lab, lab_params):
        config = {"test": "rfc2544", "frame_sizes": args.frame_sizes, "family": args.family,
                  "lab": lab_params, "goals": settings.goals(), "library": library_version()}
        experiment_id = _experiment(store, args, config, __version__)
        rate = link_bps(lab_params)
        with LabPath(lab, args.family) as path:
            for size in args.frame_sizes:
                params = {"frame_bytes": size, "family": args.family, **lab_params}
                result = search_frame_size(path, store, experiment_id, params, rate, settings,
                                           on_trial=_progress, shared_kernel=lab_params.get("dut") != "vm")
                results.append(result)
        store.finish_experiment(experiment_id)
    if args.json:
        print(json.dumps({"experiment_id": experiment_id, "config": config,
                          "results": [r.to_dict() for r in results]}, indent=2))
    else:
        print(render_table(results, lab_params, settings, library_version(), path.generator))
        print(f"experiment {experiment_id} '{args.name}' in {store.path}; "
              f"{sum(len(r.trials) for r in results)} search trials stored")
    return 0


def _experiment(store, args, config: dict, version: str) -> int:
    if args.resume:
        rows = [e for e in store.experiments() if e.name == args.name and e.kind == "rfc2544"]
        if rows and rows[-1].status != "done":
            if rows[-1].config != config:
                raise ConfigError("--resume", f"the unfinished search '{args.name}' (id {rows[-1].id}) used other "
                                  "options; run without --resume to start afresh")
            return rows[-1].id
    return store.create_experiment(args.name, "rfc2544", config, environment={"linerate_version": version})


def _progress(result, trial, replayed: bool) -> None:
    load = "unpaced" if trial.intended_load_fps is None else f"{trial.intended_load_fps:,.0f} fps"
    what = "replayed" if replayed else "measured"
    print(f"  {frame_label(result.frame_bytes)}: {what} {load}: sent {trial.sent:,}, forwarded {trial.forwarded:,}, "
          f"DUT loss {trial.dut_loss:,}, unsent {trial.unsent:,}", file=sys.stderr)


def run_search_experiment(args: argparse.Namespace, experiment, text: str, seed: int | None, inventory) -> int:
    """`linerate run FILE` for a file with test = "rfc2544"."""
    from linerate.search.experiment import search_plan

    if inventory is not None:
        raise ConfigError("--testbed", 'test = "rfc2544" runs on the namespace lab or a VM DUT (dut = "vm"); '
                          "SSH testbeds have no packet generator seam yet — drop --testbed")
    plan = search_plan(experiment)
    searches = len(plan) * experiment.repetitions
    if args.dry_run:
        print(f"experiment '{experiment.name}' (rfc2544): {len(plan)} searches per repetition x "
              f"{experiment.repetitions} = {searches} searches of {experiment.duration_s} s trials")
        shown = [name for name in experiment.declared_axes() if name != "family"]
        for params, family, size in plan:
            print(f"  IPv{family} {frame_label(size)}" + "".join(f", {name} {params[name]}" for name in shown if name in params))
        return 0
    from linerate import preflight
    from linerate.cli.experiment_cmds import open_store
    from linerate.experiment.axes import required_features
    from linerate.experiment.run import namespace_lab
    from linerate.search.experiment import run_searches
    from linerate.search.lab_path import LabPath
    from linerate.search.summary import serialize_markdown, summarize_searches

    preflight.require(preflight.run_checks(), extra_required=required_features(experiment.cells()) | {"binary trafgen"})
    store = open_store(args)

    def done(repetition: int, total: int, result) -> None:
        ndr = "–" if result.ndr_fps is None else f"{result.ndr_fps:,.0f}"
        print(f"repetition {repetition}/{total}: IPv{result.family} {frame_label(result.frame_bytes)} NDR {ndr} fps "
              f"({len(result.trials) - result.replayed} trials measured, {result.replayed} replayed)",
              file=sys.stderr)

    run = run_searches(experiment, store, file_text=text, resume=args.resume, seed=seed, lab_factory=namespace_lab,
                       path_factory=LabPath, on_search=done)
    print(serialize_markdown(store.experiment(run.experiment_id), summarize_searches(store, run.experiment_id)))
    print(f"{len(run.results)} searches ({run.trials_measured} trials measured) into {store.path}, experiment "
          f"{run.experiment_id}{' (resumed)' if run.resumed else ''}, seed {run.seed}")
    return 0
