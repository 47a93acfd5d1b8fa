"""`linerate rfc2544`: RFC 2544 throughput per frame size (NDR and PDR, MLRsearch + trafgen) through
a lab built from the same options as `trial`, every search trial stored."""

from __future__ import annotations

import argparse
import contextlib
import functools
import json
import re
import sys

from linerate.cli.options import add_json_flag, add_lab_options
from linerate.cli.testbed_cmds import add_accept_new
from linerate.errors import ConfigError
from linerate.search.frame_path import GENERATORS
from linerate.traffic.frames import label as frame_label

NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")  # as experiment file names: safe in any report


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
    cmd.add_argument("--generator", choices=GENERATORS, default="auto",
                     help="packet generator on the client: trafgen (netsniff-ng), iperf3 (UDP with a fixed -l: no "
                     "IMIX, IPv6 frames from 82 B), or auto (default: trafgen where installed, else iperf3)")
    cmd.add_argument("--name", default="rfc2544", help="experiment name in the store (default rfc2544)")
    cmd.add_argument("--resume", action="store_true", help="continue the newest unfinished search of this name")
    cmd.add_argument("--db", default=None, help="SQLite store (default ./linerate.db or $LINERATE_DB)")
    cmd.add_argument("--testbed", metavar="INVENTORY", help="search through real hosts over SSH (inventory TOML; "
                     "client and server run Linux with trafgen and nftables) instead of a namespace lab")
    add_accept_new(cmd)
    add_lab_options(cmd)
    add_json_flag(cmd)
    cmd.set_defaults(handler=cmd_rfc2544)


def cmd_rfc2544(args: argparse.Namespace) -> int:
    from linerate.search.frame_path import check_frame_for
    from linerate.search.rfc2544 import SearchSettings

    for size in args.frame_sizes or []:
        check_frame_for(size, args.family, args.generator)
    settings = SearchSettings(args.trial_duration, args.pdr_loss)
    if not NAME_RE.fullmatch(args.name or ""):
        raise ConfigError("--name", f"{(args.name or '')[:40]!r} is not a name; use letters, digits, '.', '_' or '-' "
                          "(up to 64, starting with a letter or digit)")
    from linerate import __version__
    from linerate.cli.experiment_cmds import open_store
    from linerate.search.rfc2544 import library_version, search_frame_size
    from linerate.search.table import render_table

    inventory = _inventory(args)
    store = open_store(args)
    results = []
    with _path_in_use(args, store, inventory) as (path, lab_params):
        if args.frame_sizes is None:
            args.frame_sizes = path.default_frame_sizes()
        for size in args.frame_sizes:
            path.check(size)  # what this client's sender can make (auto may have fallen back to iperf3)
        config = {"test": "rfc2544", "frame_sizes": args.frame_sizes, "family": args.family,
                  "lab": lab_params, "goals": settings.goals(), "library": library_version()}
        if inventory is not None:
            config["testbed"] = inventory.name
        experiment_id = _experiment(store, args, config, __version__)
        for size in args.frame_sizes:
            params = {"frame_bytes": size, "family": args.family, **lab_params}
            result = search_frame_size(path, store, experiment_id, params, settings, on_trial=_progress)
            results.append(result)
        store.finish_experiment(experiment_id)
    if args.json:
        print(json.dumps({"experiment_id": experiment_id, "config": config,
                          "results": [r.to_dict() for r in results]}, indent=2))
    else:
        print(render_table(results, path.description, settings, library_version(), path.generator))
        print(f"experiment {experiment_id} '{args.name}' in {store.path}; "
              f"{sum(len(r.trials) for r in results)} search trials stored")
    return 0


def _inventory(args: argparse.Namespace):
    """The --testbed inventory (checked before anything is contacted), or None for a namespace lab."""
    if not args.testbed:
        return None
    from linerate.cli.options import LAB_OPTIONS, lab_params_from_args
    from linerate.testbed.inventory import load_inventory

    given = lab_params_from_args(args, only_given=True)
    if given or args.lab:
        raise ConfigError("--lab" if args.lab else LAB_OPTIONS[next(iter(given))], "builds a namespace lab; with "
                          "--testbed the hosts are what the inventory names (its link = sets the line rate): drop one")
    return load_inventory(args.testbed)


@contextlib.contextmanager
def _path_in_use(args: argparse.Namespace, store, inventory):
    """(PacketPath, lab params): through a namespace lab (new, or --lab), or an SSH testbed."""
    if inventory is None:
        from linerate.cli.trial_cmds import lab_in_use
        from linerate.search.lab_path import LabPath

        with lab_in_use(args) as (lab, lab_params), LabPath(lab, args.family, args.generator) as path:
            yield path, lab_params
        return
    from linerate.cli.testbed_cmds import ssh_testbed
    from linerate.search.testbed_path import TestbedPath

    with ssh_testbed(args, inventory, store)[0].view({}) as view, TestbedPath(view, args.family, args.generator) as path:
        yield path, {}


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

    plan = search_plan(experiment)
    searches = len(plan) * experiment.repetitions
    if inventory is None:
        from linerate.cli.experiment_cmds import require_local

        require_local(experiment.cells())
    if args.dry_run:
        from linerate.store import default_db_path
        from linerate.store.db import check_db

        check_db(args.db or default_db_path(), not args.resume)
        print(f"experiment '{experiment.name}' (rfc2544): {len(plan)} searches per repetition x "
              f"{experiment.repetitions} = {searches} searches of {experiment.duration_s} s trials")
        shown = [name for name in experiment.declared_axes() if name != "family"]
        for params, family, size in plan:
            print(f"  IPv{family} {frame_label(size)}" + "".join(f", {name} {params[name]}" for name in shown if name in params))
        if inventory is not None:
            print(f"testbed {inventory.name}: `linerate testbed check {args.testbed}` checks the hosts, trafgen and nft")
        return 0
    from linerate import preflight
    from linerate.cli.experiment_cmds import open_store
    from linerate.experiment.axes import required_features
    from linerate.experiment.run import namespace_lab
    from linerate.search.experiment import run_searches
    from linerate.search.lab_path import LabPath
    from linerate.search.summary import serialize_markdown, summarize_searches

    store = open_store(args)
    if inventory is None:
        preflight.require(preflight.run_checks(),
                          extra_required=required_features(experiment.cells()) | {"binary trafgen"})
        lab_factory, environment = namespace_lab, None
        path_factory = functools.partial(LabPath, generator=experiment.generator)
    else:
        from linerate.cli.testbed_cmds import ssh_testbed
        from linerate.search.testbed_path import TestbedPath

        testbed, environment = ssh_testbed(args, inventory, store)
        lab_factory, path_factory = testbed.view, functools.partial(TestbedPath, generator=experiment.generator)

    def done(repetition: int, total: int, result) -> None:
        from linerate.report.layout import format_fps

        print(f"repetition {repetition}/{total}: IPv{result.family} {frame_label(result.frame_bytes)} NDR "
              f"{format_fps(result.ndr_fps)} fps "
              f"({len(result.trials) - result.replayed} trials measured, {result.replayed} replayed)",
              file=sys.stderr)

    run = run_searches(experiment, store, file_text=text, resume=args.resume, seed=seed, lab_factory=lab_factory,
                       path_factory=path_factory, environment=environment, on_search=done)
    print(serialize_markdown(store.experiment(run.experiment_id), summarize_searches(store, run.experiment_id)))
    print(f"{len(run.results)} searches ({run.trials_measured} trials measured) into {store.path}, experiment "
          f"{run.experiment_id}{' (resumed)' if run.resumed else ''}, seed {run.seed}")
    return 0
