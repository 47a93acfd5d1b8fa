"""`linerate trial` (one measured trial) and `linerate demo` (the built-in experiment)."""

from __future__ import annotations

import argparse
import json

from linerate import preflight
from linerate.cli.options import add_json_flag, add_link_options, as_option, firewall_type, lab_params_from_args
from linerate.experiment.axes import lab_spec, required_features
from linerate.lab.lab import Lab, find_lab, new_lab_id
from linerate.lab.registry import Registry
from linerate.model import DIRECTIONS, PROTOCOLS, FirewallProfile, Trial, TrialParams
from linerate.report.layout import format_mbps, row_label


def add_trial_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--family", type=int, default=4, help="IP family: 4 or 6 (default 4)")
    parser.add_argument("--streams", type=int, default=1, help="parallel streams, iperf3 -P (default 1)")
    parser.add_argument("--direction", default="forward", choices=DIRECTIONS,
                        help="forward (client->server), reverse (-R) or bidir (default forward)")
    parser.add_argument("--duration", type=int, default=5, help="seconds measured, iperf3 -t (default 5)")
    parser.add_argument("--omit", type=int, default=1, help="warm-up seconds not counted, iperf3 -O (default 1)")
    parser.add_argument("--protocol", default="tcp", choices=PROTOCOLS, help="tcp or udp (default tcp)")
    parser.add_argument("--congestion", help="TCP congestion control, e.g. cubic or bbr (default: kernel's)")


def params_from_args(args: argparse.Namespace) -> TrialParams:
    return as_option(lambda: TrialParams(
        family=args.family, streams=args.streams, direction=args.direction,
        duration_s=args.duration, omit_s=args.omit, protocol=args.protocol, congestion=args.congestion,
    ))


def register(sub: argparse._SubParsersAction) -> None:
    trial = sub.add_parser(
        "trial", help="bring a lab up, run one iperf3 trial through the DUT, tear it down",
        description="Example: linerate trial --family 6 --streams 4 --firewall stateful --json")
    add_trial_options(trial)
    trial.add_argument("--firewall", type=firewall_type, default=FirewallProfile("none"),
                       help="DUT ruleset: none, stateful, nat or rules:N (default none)")
    trial.add_argument("--mtu", type=int, default=1500, help="MTU of the lab links (default 1500)")
    add_link_options(trial)
    trial.add_argument("--lab", help="use this existing lab (from `linerate lab up`) instead of a new one")
    add_json_flag(trial)
    trial.set_defaults(handler=cmd_trial)

    demo = sub.add_parser(
        "demo", help="built-in experiment: IPv4/IPv6 x 1/4 streams x firewall none/stateful",
        description="Example: linerate demo --repetitions 3 --duration 2")
    demo.add_argument("--repetitions", type=int, default=3, help="trials per cell (default 3)")
    demo.add_argument("--duration", type=int, default=2, help="seconds per trial (default 2)")
    demo.add_argument("--omit", type=int, default=1, help="warm-up seconds per trial (default 1)")
    demo.add_argument("--db", default=None, help="SQLite store (default ./linerate.db or $LINERATE_DB)")
    demo.set_defaults(handler=cmd_demo)


def describe_trial(trial: Trial) -> str:
    p = trial.params
    label = f"{row_label(p.family, p.streams, p.direction)} ({p.protocol})"
    if not trial.ok:
        return f"{label}: FAILED — {trial.error}"
    parts = [f"{label}: {format_mbps(trial.throughput_bps)} Mbit/s"]
    if trial.retransmits is not None:
        parts.append(f"({trial.retransmits} retr)")
    if trial.reverse_throughput_bps is not None:
        parts.append(f"reverse {format_mbps(trial.reverse_throughput_bps)} Mbit/s")
    if trial.cpu_local_pct is not None:
        parts.append(f"CPU client {trial.cpu_local_pct:.0f}% server {trial.cpu_remote_pct or 0:.0f}%")
    if trial.dut_counters:
        parts.append(f"DUT forwarded {trial.dut_counters.get('forwarded_packets', 0)} pkts, "
                     f"dropped {trial.dut_counters.get('dropped_packets', 0)}")
    if trial.congestion:
        parts.append(f"cc={trial.congestion}")
    return " ".join(parts)


def cmd_trial(args: argparse.Namespace) -> int:
    params = params_from_args(args)
    lab_params = lab_params_from_args(args)
    spec = as_option(lambda: lab_spec(new_lab_id(), lab_params))
    if args.lab:
        trial = find_lab(args.lab, Registry()).run_trial(params)
    else:
        preflight.require(preflight.run_checks(), extra_required=required_features([lab_params]))
        with Lab(spec) as lab:
            trial = lab.run_trial(params)
    print(json.dumps(trial.to_dict(), indent=2) if args.json else describe_trial(trial))
    return 0 if trial.ok else 1


def cmd_demo(args: argparse.Namespace) -> int:
    from linerate.cli.experiment_cmds import open_store
    from linerate.cli.progress import ProgressReporter
    from linerate.errors import ConfigError
    from linerate.experiment.builtin import demo_experiment
    from linerate.experiment.run import run_experiment
    from linerate.report.data import build_report
    from linerate.report.markdown import serialize

    for option, value, low in (("--repetitions", args.repetitions, 1), ("--duration", args.duration, 1),
                               ("--omit", args.omit, 0)):
        if value < low:
            raise ConfigError(option, f"{value} is out of range; use {low} or more")
    experiment = demo_experiment(args.repetitions, args.duration, args.omit)
    store = open_store(args)
    preflight.require(preflight.run_checks())
    with ProgressReporter() as reporter:
        result = run_experiment(experiment, store, kind="demo", on_event=reporter)
    print(serialize(build_report(store, result.experiment_id)))
    print(f"stored in {store.path} as experiment {result.experiment_id}; "
          f"see `linerate report {result.experiment_id} --format json`")
    return 0
