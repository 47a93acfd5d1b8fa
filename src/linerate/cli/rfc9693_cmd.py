"""`linerate rfc9693`: RFC 9693's connection establishment rate and connection-tracking-table
capacity through the DUT's stateful firewall, with trafgen frames of unique 4-tuples and a
validation phase, through a lab built from the same options as `trial` or the lab --lab names;
every trial stored (kinds/rfc9693)."""

from __future__ import annotations

import argparse

from linerate.cli.options import add_db, add_json_flag, add_lab_options, run_kind_from_options


def register(sub: argparse._SubParsersAction) -> None:
    cmd = sub.add_parser("rfc9693", help="connection establishment rate and state-table capacity (RFC 9693) with "
                         "unique-tuple frames and a validation phase",
                         description="Example: linerate rfc9693 --dut vm --firewall stateful "
                         "--dut-sysctls net.netfilter.nf_conntrack_max=4096 --json")
    cmd.add_argument("--family", type=int, default=4, choices=(4, 6), help="IP family (default 4)")
    cmd.add_argument("--connections", type=int, default=None,
                     help="connections per trial of the establishment-rate search (default 1000)")
    cmd.add_argument("--start-connections", type=int, default=None,
                     help="the capacity search's first size, doubled while it holds (default 1000)")
    cmd.add_argument("--max-connections", type=int, default=None,
                     help="the capacity search's bound (default and most: 64512, the generator's 4-tuples)")
    cmd.add_argument("--max-rate", type=float, default=None, help="connections/s the rate search never exceeds")
    cmd.add_argument("--repetitions", type=int, default=1, help="independent runs, for a mean and 95%% CI (default 1)")
    cmd.add_argument("--name", default="rfc9693", help="experiment name in the store (default rfc9693)")
    cmd.add_argument("--resume", action="store_true", help="continue the newest unfinished run of this name")
    add_db(cmd)
    add_lab_options(cmd)
    add_json_flag(cmd)
    cmd.set_defaults(handler=cmd_rfc9693)


def cmd_rfc9693(args: argparse.Namespace) -> int:
    options = {key: getattr(args, key) for key in ("connections", "start_connections", "max_connections", "max_rate")
               if getattr(args, key) is not None}
    if "max_connections" in options and "start_connections" not in options:
        options["start_connections"] = min(1000, options["max_connections"])
    return run_kind_from_options(args, "rfc9693", options)
