"""`linerate cps`: connections per second through the DUT (h2load -> nginx, one request per
connection), per object size, through a lab built from the same options as `trial`, the lab --lab
names, or real hosts (--testbed); every trial stored (kinds/cps)."""

from __future__ import annotations

import argparse

from linerate.cli.options import add_accept_new, add_db, add_json_flag, add_lab_options, run_kind_from_options


def register(sub: argparse._SubParsersAction) -> None:
    cmd = sub.add_parser("cps", help="connections per second through the DUT: h2load -> nginx, one request each "
                         "(RFC 9411 7.2 style), searched per object size",
                         description="Example: linerate cps --link 1g --object-sizes 1k --firewall stateful --json")
    cmd.add_argument("--object-sizes", default="1k,16k,64k",
                     help="comma-separated object sizes, e.g. 1k,16k,64k (RFC 9411's, the default) or 1500b")
    cmd.add_argument("--family", type=int, default=4, choices=(4, 6), help="IP family (default 4)")
    cmd.add_argument("--trial-duration", type=int, default=3, help="seconds per trial (default 3)")
    cmd.add_argument("--repetitions", type=int, default=3, help="independent searches per object size, for a "
                     "mean and 95%% CI (default 3; 1: one search, no interval)")
    cmd.add_argument("--start-rate", type=float, default=None, help="first offered rate, connections/s (default 100)")
    cmd.add_argument("--max-rate", type=float, default=None, help="highest rate tried (default 100000)")
    cmd.add_argument("--loss-target", type=float, default=None,
                     help="failed connections a passing trial may have, as a ratio (default 0.00001 = 0.001%%)")
    cmd.add_argument("--latency-load", type=float, default=None, help="after each search, one trial at this share "
                     "of the rate found with tcpdump on the client, for connect and first-byte percentiles "
                     "(default 0.5, RFC 9411 7.4; 0: none)")
    cmd.add_argument("--name", default="cps", help="experiment name in the store (default cps)")
    cmd.add_argument("--resume", action="store_true", help="continue the newest unfinished cps run of this name")
    cmd.add_argument("--testbed", metavar="INVENTORY", help="real hosts over SSH (inventory TOML; h2load on the "
                     "client, nginx on the server) instead of a namespace lab")
    add_db(cmd)
    add_accept_new(cmd)
    add_lab_options(cmd)
    add_json_flag(cmd)
    cmd.set_defaults(handler=cmd_cps)


def cmd_cps(args: argparse.Namespace) -> int:
    options = {"object_sizes": [size.strip() for size in args.object_sizes.split(",")]}
    for key in ("start_rate", "max_rate", "loss_target", "latency_load"):
        if getattr(args, key) is not None:
            options[key] = getattr(args, key)
    return run_kind_from_options(args, "cps", options, duration_s=args.trial_duration)
