"""Option helpers shared by several commands: validated conversion of CLI values."""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable
from typing import TypeVar

from linerate.errors import ConfigError
from linerate.model import FirewallProfile

NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")  # as experiment file names: safe in any report

T = TypeVar("T")


def as_option(build: Callable[[], T]) -> T:
    """Run a validating constructor; re-raise its ConfigError with the field as a --option."""
    try:
        return build()
    except ConfigError as exc:
        raise ConfigError(f"--{exc.field}", exc.problem) from None


def firewall_type(text: str) -> FirewallProfile:
    try:
        return FirewallProfile.parse(text)
    except ConfigError as exc:
        raise argparse.ArgumentTypeError(exc.problem) from None


def add_json_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print machine-readable JSON")


def bitrate_type(text: str) -> int:
    from linerate.calc import parse_rate
    from linerate.model import MAX_BITRATE_BPS, MIN_BITRATE_BPS

    try:
        value = int(parse_rate(text))
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    if not MIN_BITRATE_BPS <= value <= MAX_BITRATE_BPS:
        raise argparse.ArgumentTypeError(f"{text!r} is out of range (1k to 400g)")
    return value


# lab-scoped axis -> the option that sets it (defaults are None so "given" can be told from "default")
LAB_OPTIONS = {"firewall": "--firewall", "mtu": "--mtu", "link_rate": "--link", "delay_ms": "--delay",
               "jitter_ms": "--jitter", "loss_pct": "--loss", "offloads": "--offloads", "dut": "--dut",
               "dut_vcpus": "--vcpus", "dut_memory_mb": "--memory", "dut_accel": "--accel",
               "virtio_queues": "--queues", "vhost": "--vhost", "virtio_offloads": "--virtio-offloads",
               "dut_sysctls": "--dut-sysctls", "dut_image": "--dut-image", "dut_os": "--dut-os",
               "dut_ssh_key": "--dut-key", "dut_host_keys": "--dut-host-keys", "dut_ssh_user": "--dut-user",
               "dut_boot_timeout": "--boot-timeout", "dut_offloads": "--dut-offloads", "pairs": "--pairs",
               "pair_link_rate": "--pair-link"}
VM_OPTIONS = ("dut_vcpus", "dut_memory_mb", "dut_accel", "virtio_queues", "vhost", "virtio_offloads", "dut_image",
              "dut_os", "dut_ssh_key", "dut_host_keys", "dut_ssh_user", "dut_boot_timeout", "dut_offloads")


def add_lab_options(parser: argparse.ArgumentParser) -> None:
    """The lab a command builds for itself (or --lab, an existing one): the same options as `trial`."""
    parser.add_argument("--firewall", type=firewall_type, default=None,
                        help="DUT ruleset: none, stateful, nat, rules:N or rules-stateless:N (default none)")
    parser.add_argument("--mtu", type=int, default=None, help="MTU of the lab links (default 1500)")
    add_link_options(parser)
    add_vm_options(parser)
    parser.add_argument("--dut-sysctls", default=None, help="sysctls set on the DUT, e.g. "
                        "'net.netfilter.nf_conntrack_max=4096;net.core.netdev_budget=600' (the namespace lab: "
                        "per-namespace net.* only; a VM DUT: any)")
    parser.add_argument("--lab", help="use this existing lab (from `linerate lab up`) instead of a new one")


def add_link_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--link", default=None, help="emulated link rate on the DUT ports: 100m, 1g, 10g "
                        "(per-frame Ethernet accounting; default none)")
    parser.add_argument("--delay", type=float, default=None, help="one-way delay in ms (needs sch_netem)")
    parser.add_argument("--jitter", type=float, default=None, help="delay jitter in ms (needs sch_netem)")
    parser.add_argument("--loss", type=float, default=None, help="loss in percent (needs sch_netem)")
    parser.add_argument("--offloads", default=None, help="e.g. 'all:tso=off,gso=off,gro=off' or "
                        "'dut:rx=off;client:tso=off' (client, dut_in, dut_out, dut, server, all; default: as the "
                        "kernel has them)")
    parser.add_argument("--pairs", type=int, default=None, help="client/server pairs sending together through "
                        "the DUT, each with its own addresses (a generator pool; default 1)")
    parser.add_argument("--pair-link", default=None, help="each pair's access link rate, shaped as --link is "
                        "(e.g. 100m; default none); --link stays the DUT's ports")


def add_vm_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--dut", default=None, help="namespace (default: the DUT is this kernel in a namespace) or "
                        "vm (a qemu guest with its own kernel and CPUs)")
    parser.add_argument("--vcpus", type=int, default=None, help="--dut vm: guest vCPUs (default 1)")
    parser.add_argument("--memory", type=int, default=None, help="--dut vm: guest memory in MiB (default 256)")
    parser.add_argument("--accel", default=None, help="--dut vm: auto (default: kvm when a KVM guest boots here), "
                        "kvm or tcg")
    parser.add_argument("--queues", type=int, default=None, help="--dut vm: virtio queue pairs per NIC (default 1)")
    parser.add_argument("--vhost", default=None, help="--dut vm: vhost-net off (default) or on")
    parser.add_argument("--virtio-offloads", default=None, help="--dut vm: on (default), off, or e.g. "
                        "'csum=off,host_tso4=off,host_tso6=off,host_ecn=off,host_ufo=off,gso=off'")
    parser.add_argument("--dut-image", default=None, help="--dut vm: your own firewall's disk image (qcow2 or raw; "
                        "never written: it boots on a throwaway overlay), reached over SSH on its third NIC")
    parser.add_argument("--dut-os", default=None, help="--dut-image: linux (default), openwrt, opnsense, pfsense, "
                        "freebsd or openbsd")
    parser.add_argument("--dut-key", default=None, help="--dut-image: the private key that logs in (default IMG.key)")
    parser.add_argument("--dut-host-keys", default=None, help="--dut-image: the image's sshd host keys (default "
                        "IMG.host_keys; none: the first key seen in the lab)")
    parser.add_argument("--dut-user", default=None, help="--dut-image: the user that logs in (default root)")
    parser.add_argument("--boot-timeout", type=int, default=None, help="--dut-image: seconds the image may take to "
                        "answer SSH (default 300 under TCG, 120 under KVM)")
    parser.add_argument("--dut-offloads", default=None, help="--dut-image: the image's own interface flags, e.g. "
                        "'enp0s3:tso=off,gro=off'")


def lab_params_from_args(args: argparse.Namespace, only_given: bool = False) -> dict:
    """Validate lab options through the same axis validators experiment files use; options not
    given take the axis defaults (or are left out with only_given)."""
    from linerate.axes import AXES

    values = {"firewall": None if args.firewall is None else str(args.firewall), "mtu": args.mtu,
              "link_rate": args.link, "delay_ms": args.delay, "jitter_ms": args.jitter, "loss_pct": args.loss,
              "offloads": args.offloads, "dut": getattr(args, "dut", None),
              "dut_sysctls": vars(args).get("dut_sysctls"), "pairs": vars(args).get("pairs"),
              "pair_link_rate": vars(args).get("pair_link")}
    vm = {name: getattr(args, LAB_OPTIONS[name][2:].replace("-", "_"), None) for name in VM_OPTIONS}
    if values["dut"] != "vm":
        given = [LAB_OPTIONS[name] for name, value in vm.items() if value is not None]
        if given:
            raise ConfigError(given[0], "sets the VM DUT; add --dut vm")
    else:
        values.update(vm)
    out = {}
    for name, value in values.items():
        if value is None:
            if not only_given and name != "dut":
                out[name] = AXES[name].default
            continue
        try:
            out[name] = AXES[name].validate(value)
        except ValueError as exc:
            raise ConfigError(LAB_OPTIONS[name], f"{exc}; allowed: {AXES[name].allowed}") from None
    return out


def check_lab_options(args: argparse.Namespace, lab_name: str, built_with: dict) -> None:
    """`--lab L` runs on L as it was built: a lab option that asks for something else is an error,
    never silently ignored."""
    wanted = lab_params_from_args(args, only_given=True)
    for name, value in wanted.items():
        have = built_with.get(name)
        if have is not None and have != value:
            option = LAB_OPTIONS[name]
            raise ConfigError(option, f"lab {lab_name} was built with {name}={have}; {option} {value} cannot "
                              f"change it: drop {option}, or build a lab with it (linerate lab up {option} ...)")
        if have is None:
            raise ConfigError(LAB_OPTIONS[name], f"lab {lab_name} does not record its {name}; drop "
                              f"{LAB_OPTIONS[name]} or build a new lab")


def open_store(args: argparse.Namespace, create: bool = True):
    from linerate.store import Store, default_db_path

    return Store(args.db if args.db is not None else default_db_path(), create=create)


def add_accept_new(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--accept-new-host-keys", action="store_true",
                        help="store the host key of a host seen for the first time (prints its fingerprint); "
                        "a changed key is always refused")


def add_db(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--db", default=None, help="SQLite store (default ./linerate.db or $LINERATE_DB)")


def testbeds_for(args: argparse.Namespace, store=None):
    """The Testbeds a command runs on: the --testbed inventory's hosts (loaded and checked before any
    is contacted; lab options are refused beside it), the lab --lab names (left up), or new labs
    from the lab options. The one place a command chooses among them."""
    from linerate.lab.registry import Registry
    from linerate.store.journal import check_journal_dir
    from linerate.testbed.base import open_testbeds, use_lab
    from linerate.testbed.inventory import load_inventory

    options = vars(args)
    for name in ("testbed", "lab"):  # an empty value (an unset shell variable) is not "none given"
        if options.get(name) == "":
            raise ConfigError(f"--{name}", "is empty; give " + ("an inventory file" if name == "testbed" else
                                                                 "a lab name (see `linerate lab status`)"))
    inventory = None
    if options.get("testbed"):
        given = lab_params_from_args(args, only_given=True) if "firewall" in options else {}
        if given or options.get("lab"):
            raise ConfigError("--lab" if options.get("lab") else LAB_OPTIONS[next(iter(given))],
                              "builds a namespace lab; with --testbed the hosts are what the inventory names (its "
                              "link = sets the line rate): drop one")
        inventory = load_inventory(args.testbed)
        check_journal_dir()  # before anything is made, the results database included
    lab = as_option(lambda: use_lab(args.lab, Registry())) if options.get("lab") else None
    if lab is not None:
        check_lab_options(args, args.lab, lab.params)
    return open_testbeds(inventory, lab=lab, store=store, accept_new=options.get("accept_new_host_keys", False),
                         on_message=lambda message: print(message, file=sys.stderr))


def run_kind_from_options(args: argparse.Namespace, test_name: str, options: dict, **file_keys) -> int:
    """`linerate cps` / `linerate rfc9693`: an in-memory experiment of that kind from the command's
    options and lab options (--name, --repetitions, --family, --resume, --json), checked on its
    testbeds before the store is made, run by the one runner, its report printed (md, or --json)."""
    from linerate.cli.progress import ProgressReporter
    from linerate.experiment.config import experiment_from_dict
    from linerate.experiment.registry import kind
    from linerate.experiment.run import run_experiment

    if not NAME_RE.fullmatch(args.name or ""):
        raise ConfigError("--name", f"{(args.name or '')[:40]!r} is not a name; use letters, digits, '.', '_' or '-'")
    testbeds = testbeds_for(args)  # checked (inventory, --lab, lab options) before the store is made
    lab_params = {**lab_params_from_args(args), **testbeds.held_params()}
    experiment = experiment_from_dict({
        "name": args.name, "test": test_name, "repetitions": args.repetitions, "calibrate": False, **file_keys,
        "options": options, "fixed": {"family": args.family, **lab_params}}, f"{test_name} options")
    test = kind(test_name)
    testbeds.check(test.cells(experiment), test.required_features(experiment))
    store = open_store(args)
    testbeds = testbeds_for(args, store)
    with ProgressReporter() as reporter:
        run = run_experiment(experiment, store, testbeds, kind_label=test_name, resume=args.resume, on_event=reporter)
    print(test.render(store, store.experiment(run.experiment_id), "json" if args.json else "md"), end="")
    if not args.json:
        print(run.summary(str(store.path)))
    return 0
