"""`linerate rfc2544`: RFC 2544 throughput per frame size (NDR and PDR, MLRsearch + trafgen) through
a lab built from the same options as `trial`, every search trial stored."""

from __future__ import annotations

import argparse
import math

from linerate.cli.options import (NAME_RE, add_accept_new, add_json_flag, add_lab_options,
                                  lab_params_from_args, open_store, testbeds_for)
from linerate.errors import ConfigError
from linerate.numbers import is_ascii_int
from linerate.schema import dumps
from linerate.traffic.base import GENERATORS



def frame_sizes_type(text: str) -> list[int | str]:
    from linerate.calc.linerate import RFC2544_SIZES
    from linerate.traffic.frames import MIXES

    sizes: list[int | str] = []
    for item in (part.strip().lower() for part in text.split(",")):
        if item == "rfc2544":
            sizes += RFC2544_SIZES
        elif item in MIXES:
            sizes.append(item)
        elif is_ascii_int(item):
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
    cmd.add_argument("--relative-width", type=float, default=0.005,
                     help="a search ends when its bounds are within this ratio of each other (default 0.005 = 0.5%%; "
                     "0.05 takes fewer trials for a coarser figure)")
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
    """The same runner as `linerate run FILE` with test = "rfc2544", on an experiment built from the
    options: one repetition of a search per frame size, on a new lab, --lab, or --testbed."""
    from linerate.cli.progress import ProgressReporter
    from linerate.experiment.config import experiment_from_dict
    from linerate.experiment.registry import kind
    from linerate.experiment.run import run_experiment
    from linerate.kinds.rfc2544.search import SearchSettings, library_version
    from linerate.kinds.rfc2544.table import render_table
    from linerate.search.frame_path import check_frame_for

    for size in args.frame_sizes or []:
        check_frame_for(size, args.family, args.generator)
    settings = SearchSettings(args.trial_duration, args.pdr_loss, args.relative_width)
    if not NAME_RE.fullmatch(args.name or ""):
        raise ConfigError("--name", f"{(args.name or '')[:40]!r} is not a name; use letters, digits, '.', '_' or '-' "
                          "(up to 64, starting with a letter or digit)")
    testbeds = testbeds_for(args)  # checked (inventory, --lab, lab options) before the store is made
    lab_params = {**lab_params_from_args(args), **testbeds.held_params()}
    experiment = experiment_from_dict({
        "name": args.name, "test": "rfc2544", "repetitions": 1, "calibrate": False,
        "duration_s": max(1, math.ceil(args.trial_duration)), "pdr_loss": args.pdr_loss,
        "relative_width": args.relative_width,
        "generator": args.generator, "frame_sizes": args.frame_sizes,
        "fixed": {"family": args.family, **lab_params}}, "rfc2544 options")
    testbeds.check(experiment.cells(), kind("rfc2544").required_features(experiment))
    store = open_store(args)
    testbeds = testbeds_for(args, store)
    with ProgressReporter() as reporter:
        run = run_experiment(experiment, store, testbeds, kind_label="rfc2544", resume=args.resume, on_event=reporter,
                             settings=settings, config_extra={"goals": settings.goals(), "library": library_version()})
    if args.json:
        print(dumps({"experiment_id": run.experiment_id, "config": store.experiment(run.experiment_id).config,
                     "results": [r.to_dict() for r in run.results]}))
    else:
        where = next(iter(run.descriptions.values()), "")
        print(render_table(run.results, where, settings, library_version(), ", ".join(sorted(run.generators))))
        print(f"experiment {run.experiment_id} '{args.name}' in {store.path}; "
              f"{sum(len(r.trials) for r in run.results)} search trials stored")
    return 0
