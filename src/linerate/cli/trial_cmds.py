"""`linerate trial` (one measured trial) and `linerate demo` (the built-in experiment)."""

from __future__ import annotations

import argparse
import sys


from linerate.cli.options import (add_accept_new, add_json_flag, add_lab_options, as_option, bitrate_type,
                                  lab_params_from_args, open_store, testbeds_for)
from linerate.errors import ConfigError
from linerate.schema import dumps
from linerate.model import DIRECTIONS, PROTOCOLS, Trial, TrialParams
from linerate.pool.window import pair_summary
from linerate.report.data import trial_diagnosis
from linerate.report.layout import format_mbps, format_ms, row_label


def add_trial_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--family", type=int, default=4, help="IP family: 4 or 6 (default 4)")
    parser.add_argument("--streams", type=int, default=1, help="parallel streams, iperf3 -P (default 1)")
    parser.add_argument("--direction", default="forward", choices=DIRECTIONS,
                        help="forward (client->server), reverse (-R) or bidir (default forward)")
    parser.add_argument("--duration", type=int, default=5, help="seconds measured, iperf3 -t (default 5)")
    parser.add_argument("--omit", type=int, default=1, help="warm-up seconds not counted, iperf3 -O (default 1)")
    parser.add_argument("--protocol", default="tcp", choices=PROTOCOLS, help="tcp or udp (default tcp)")
    parser.add_argument("--congestion", help="TCP congestion control, e.g. cubic or bbr (default: kernel's)")
    parser.add_argument("--latency", action="store_true",
                        help="probe RTT with fping (100/s) for 1 s idle and through the measured window; "
                        "prints median, p90, p99 and max of each and the increase under load")
    parser.add_argument("--bitrate", type=bitrate_type, help="UDP: offered rate, e.g. 100m, 1g (default 1g); "
                        "TCP trials are not paced")


def params_from_args(args: argparse.Namespace) -> TrialParams:
    if args.bitrate is not None and args.protocol != "udp":
        raise ConfigError("--bitrate", "applies to UDP trials; add --protocol udp")
    return as_option(lambda: TrialParams(
        family=args.family, streams=args.streams, direction=args.direction,
        duration_s=args.duration, omit_s=args.omit, protocol=args.protocol, congestion=args.congestion,
        latency=args.latency,
        **({"udp_bitrate_bps": args.bitrate} if args.bitrate is not None else {}),
    ))


def register(sub: argparse._SubParsersAction) -> None:
    trial = sub.add_parser(
        "trial", help="bring a lab up, run one iperf3 trial through the DUT, tear it down (or --lab, --testbed)",
        description="Example: linerate trial --family 6 --streams 4 --firewall stateful --json")
    add_trial_options(trial)
    trial.add_argument("--testbed", metavar="INVENTORY", help="one trial through real hosts over SSH (inventory "
                       "TOML; a [[client]]/[[server]] pool sends from every pair) instead of a namespace lab")
    add_accept_new(trial)
    add_lab_options(trial)
    add_json_flag(trial)
    trial.set_defaults(handler=cmd_trial)

    demo = sub.add_parser(
        "demo", help="built-in experiment: VM DUT (2 vCPUs, 2 queues, 1 Gbit/s link), virtio offloads on/off "
        "x 1/8 streams; where qemu is missing, IPv4/IPv6 x 1/4 streams x firewall none/stateful in the namespace "
        "lab (experiment/builtin.py)",
        description="Example: linerate demo --repetitions 3 --duration 2")
    demo.add_argument("--dut", choices=("auto", "vm", "namespace"), default="auto",
                      help="auto (default: vm when qemu is installed), vm or namespace")
    demo.add_argument("--repetitions", type=int, default=3, help="trials per cell (default 3); with a VM DUT the "
                      "least per cell, more until the 95%% CI is within 10%% of the mean (at most 10)")
    demo.add_argument("--duration", type=int, default=None, help="seconds per trial (default 3 with a VM DUT, "
                      "2 in the namespace lab)")
    demo.add_argument("--omit", type=int, default=1, help="warm-up seconds per trial (default 1)")
    demo.add_argument("--db", default=None, help="SQLite store (default ./linerate.db or $LINERATE_DB)")
    demo.add_argument("--dut-image", default=None, help="the VM demo on your own image (see trial --dut-image)")
    demo.add_argument("--dut-os", default=None, help="--dut-image: linux (default), openwrt, opnsense, pfsense, "
                      "freebsd or openbsd")
    demo.add_argument("--dut-key", default=None, help="--dut-image: the private key that logs in (default IMG.key)")
    demo.add_argument("--dut-host-keys", default=None, help="--dut-image: the image's sshd host keys")
    add_json_flag(demo)
    demo.set_defaults(handler=cmd_demo)


def describe_trial(trial: Trial) -> str:
    p = trial.params
    pairs = (trial.telemetry.get("pool") or {}).get("pairs", 1)
    label = f"{row_label(p.family, p.streams, p.direction)}{f' per pair, {pairs} pairs' if pairs > 1 else ''} ({p.protocol})"
    if not trial.ok:
        return f"{label}: FAILED — {trial.error}"
    parts = [f"{label}: {format_mbps(trial.throughput_bps)} Mbit/s"]
    if trial.retransmits is not None:
        parts.append(f"({trial.retransmits} retr)")
    if trial.lost_percent is not None:
        parts.append(f"loss {trial.lost_percent:.2f}% ({trial.packets_lost} of {trial.packets_sent} datagrams)")
    if trial.jitter_ms is not None:
        parts.append(f"jitter {trial.jitter_ms:.3f} ms")
    if trial.reverse_throughput_bps is not None:
        parts.append(f"reverse {format_mbps(trial.reverse_throughput_bps)} Mbit/s")
    if trial.cpu_local_pct is not None:
        parts.append(f"CPU client {trial.cpu_local_pct:.0f}% server {trial.cpu_remote_pct or 0:.0f}%")
    counters = trial.dut_counters
    if counters:
        wire = f", wire frames {counters['wire_frames']}" if "wire_frames" in counters else ""
        parts.append(f"DUT forwarded {counters.get('forwarded_packets', 0)} pkts (GSO/GRO batches count once)"
                     f"{wire}, dropped {counters.get('dropped_packets', 0)} "
                     f"(shaper {counters.get('shaper_dropped', 0)})")
    if trial.congestion:
        parts.append(f"cc={trial.congestion}")
    return " ".join(parts) + "".join("\n  " + line for line in rtt_lines(trial)) + "".join(
        "\n" + line for line in pair_summary(trial))


def rtt_lines(trial: Trial) -> list[str]:
    """'RTT idle   p50 ... max ... (lost n of m)' and 'RTT loaded ...' and the increase, or []."""
    if trial.rtt_idle_sent is None:
        return []
    lines = []
    for phase in ("idle", "loaded"):
        sent, lost = getattr(trial, f"rtt_{phase}_sent"), getattr(trial, f"rtt_{phase}_lost")
        figures = "  ".join(f"{name} {format_ms(getattr(trial, f'rtt_{phase}_{name}_ms'))}"
                            for name in ("p50", "p90", "p99", "max"))
        lines.append(f"RTT {phase:<6} {figures}  (no reply: {lost} of {sent})")
    if trial.rtt_idle_p50_ms is not None and trial.rtt_loaded_p50_ms is not None:
        rise = trial.rtt_loaded_p50_ms - trial.rtt_idle_p50_ms
        lines.append(f"RTT under load: p50 {'+' if rise >= 0 else '-'}{format_ms(abs(rise))}")
    return lines


def flags_of(trial: Trial, lab_params: dict) -> list[str]:
    from linerate.experiment.ceiling import ceiling_flags

    return ceiling_flags({**lab_params, "family": trial.params.family, "protocol": trial.params.protocol,
                          "duration_s": trial.params.duration_s}, trial)


def cmd_trial(args: argparse.Namespace) -> int:
    params = params_from_args(args)
    testbeds = testbeds_for(args)
    lab_params = {**lab_params_from_args(args), **testbeds.held_params()}
    testbeds.refuse_unsupported([{**lab_params, "direction": params.direction}])
    testbeds.check([lab_params])
    with testbeds.open(lab_params) as testbed:
        trial = testbed.run_trial(params)
        environment = testbed.environment()  # what the DUT was: read-back knobs, a VM's boot and placement
    flags = flags_of(trial, lab_params)
    ceiling, source, verdicts = trial_diagnosis(trial, lab_params, environment, flags)
    fraction = trial.throughput_bps / ceiling if ceiling and trial.ok and trial.throughput_bps is not None else None
    if args.json:
        print(dumps({**trial.to_dict(), "flags": flags, "testbed": environment,
                     "line_rate": {"ceiling_bps": ceiling, "fraction": fraction, "source": source},
                     "verdicts": [verdict.to_dict() for verdict in verdicts]}))
    else:
        print(describe_trial(trial) + "".join(f" [{flag}]" for flag in flags) + "".join(
            "\n" + line for line in diagnosis_lines(ceiling, source, verdicts, fraction)))
    return 0 if trial.ok else 1


def diagnosis_lines(ceiling: float | None, source: str | None, verdicts: list, fraction: float | None) -> list[str]:
    """'= 92.4% of line rate (...)' (or that it is unknown, and how to give it) and each verdict with its evidence
    and what to do, as a report says them."""
    unknown = next((v for v in verdicts if v.code == "line-rate-unknown"), None)
    if fraction is not None:
        lines = [f"= {fraction * 100:.1f}% of line rate ({format_mbps(ceiling)} Mbit/s: {source})"]
    else:
        lines = [f"line rate unknown: {unknown.advice}"] if unknown else []
    return lines + [f"[{v.code}] {v.title}: {v.evidence}. What to do: {v.advice}." for v in verdicts if v is not unknown]


def cmd_demo(args: argparse.Namespace) -> int:
    from linerate.cli.progress import ProgressReporter
    from linerate.experiment.builtin import demo_experiment
    from linerate.experiment.run import run_experiment
    from linerate.report.exporters import export
    from linerate.testbed.base import LabTestbeds, demo_dut

    for option, value, low, high in (("--repetitions", args.repetitions, 1, 1000),
                                     ("--duration", 2 if args.duration is None else args.duration, 1, 3600),
                                     ("--omit", args.omit, 0, 600)):
        if not low <= value <= high:
            raise ConfigError(option, f"{value} is out of range; use {low} to {high}")
    image = {"dut_image": args.dut_image, "dut_os": args.dut_os, "dut_ssh_key": args.dut_key,
             "dut_host_keys": args.dut_host_keys}
    if not args.dut_image and any(image.values()):
        raise ConfigError(next(f"--{k.replace('dut_ssh_key', 'dut_key').replace('_', '-')}" for k, v in image.items()
                               if v), "sets the own image's login; add --dut-image")
    dut, why = demo_dut(args.dut, own_image=bool(args.dut_image))
    if why:
        print(f"demo: namespace lab, not a VM DUT: {why}", file=sys.stderr if args.json else sys.stdout)
    experiment = demo_experiment(args.repetitions, args.duration, args.omit, dut, image if args.dut_image else None)
    testbeds = LabTestbeds()
    testbeds.check(experiment.cells())
    store = open_store(args)
    with ProgressReporter() as reporter:
        result = run_experiment(experiment, store, testbeds, kind_label="demo", on_event=reporter)
    if args.json:
        print(export(store, result.experiment_id, "json"), end="")
        return 0
    print(export(store, result.experiment_id, "md"))
    print(f"stored in {store.path} as experiment {result.experiment_id}; "
          f"see `linerate report {result.experiment_id} --format json`")
    return 0
