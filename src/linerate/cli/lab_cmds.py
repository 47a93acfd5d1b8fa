"""`linerate lab up|status|down|clean` and `linerate doctor`."""

from __future__ import annotations

import argparse
import re
import sys
import time

from linerate.errors import ConfigError, LabError

from linerate.cli.options import (add_json_flag, add_link_options, add_vm_options, as_option, firewall_type,
                                  lab_params_from_args)
from linerate.model import validate_lab_name
from linerate.schema import dumps

# Heavy modules (netlink, the lab) are imported inside the handlers: `linerate --version` and the
# pure commands must not pay for them (bench/cli_startup.py).


def register(sub: argparse._SubParsersAction) -> None:
    lab = sub.add_parser("lab", help="build, inspect and remove namespace labs",
                         description="Example: linerate lab up --name demo --firewall stateful")
    lab_sub = lab.add_subparsers(dest="lab_command", required=True, parser_class=type(lab))

    up = lab_sub.add_parser("up", help="build a lab and keep it (client -> DUT -> server)",
                            description="Example: linerate lab up --name fw1 --firewall rules:100")
    up.add_argument("--name", help="lab id, 1-8 lower-case letters/digits (default: random)")
    up.add_argument("--firewall", type=firewall_type, default=None,
                    help="DUT ruleset: none, stateful, nat, rules:N or rules-stateless:N (default: none)")
    up.add_argument("--mtu", type=int, default=None, help="MTU of every lab link (1280-9216, default 1500; IPv6 needs 1280)")
    add_link_options(up)
    add_vm_options(up)
    up.add_argument("--dry-run", action="store_true", help="print the plan, change nothing")
    add_json_flag(up)
    up.set_defaults(handler=cmd_lab_up)

    status = lab_sub.add_parser("status", help="list labs and whether their owner is alive",
                                description="Example: linerate lab status --json")
    add_json_flag(status)
    status.set_defaults(handler=cmd_lab_status)

    down = lab_sub.add_parser("down", help="remove one lab", description="Example: linerate lab down fw1")
    down.add_argument("name")
    add_json_flag(down)
    down.set_defaults(handler=cmd_lab_down)

    clean = lab_sub.add_parser("clean", help="remove labs left behind by killed linerate processes",
                               description="Example: linerate lab clean")
    clean.add_argument("--all", action="store_true", help="also remove labs kept by `lab up`")
    add_json_flag(clean)
    clean.set_defaults(handler=cmd_lab_clean)

    stop = lab_sub.add_parser("stop-server", help="stop a lab's iperf3 server (to test failure paths)",
                              description="Example: linerate lab stop-server fw1")
    stop.add_argument("name")
    add_json_flag(stop)
    stop.set_defaults(handler=cmd_lab_stop_server)

    guest = lab_sub.add_parser("guest", help="build (or check) the VM DUT's built-in guest from Debian packages",
                               description="Example: linerate lab guest --json")
    guest.add_argument("--rebuild", action="store_true", help="build even when the cached guest is current")
    add_json_flag(guest)
    guest.set_defaults(handler=cmd_lab_guest)

    doctor = sub.add_parser("doctor", help="preflight: binaries, privileges and kernel features",
                            description="Example: linerate doctor")
    add_json_flag(doctor)
    doctor.set_defaults(handler=cmd_doctor)


def cmd_lab_up(args: argparse.Namespace) -> int:
    from linerate.testbed.base import LabTestbeds, lab_testbed, new_lab_id

    name = as_option(lambda: validate_lab_name(args.name)) if args.name is not None else new_lab_id()
    params = lab_params_from_args(args)
    # Owned by this process until it is complete: a `lab up` killed halfway (a VM still booting)
    # leaves an orphan that `lab clean` removes, never a lab recorded as kept.
    lab = as_option(lambda: lab_testbed(name, params, keep=False,
                                        on_message=lambda message: print(message, file=sys.stderr, flush=True)))
    if args.dry_run:
        print(dumps({"lab": name, "dry_run": True, "plan": lab.describe_plan()}) if args.json else lab.describe_plan())
        return 0
    LabTestbeds().check([params])
    up_and_kept(lab)
    spec = lab.spec
    if args.json:
        print(dumps({"lab": name, "firewall": str(spec.firewall), "mtu": spec.mtu, "namespaces": list(spec.namespaces),
                     "vm": lab.record.vm or None, "remove_with": f"linerate lab down {name}"}))
        return 0
    vm = f"; VM DUT: {vm_summary(lab.record.vm)}" if lab.record.vm else ""
    print(f"lab {name} is up (firewall {spec.firewall}, MTU {spec.mtu}{vm}); "
          f"namespaces: {', '.join(spec.namespaces)}; remove with: linerate lab down {name}")
    return 0


def vm_summary(vm: dict) -> str:
    return (f"{vm.get('vcpus')} vCPU, {vm.get('memory_mb')} MiB, {vm.get('accel')}, {vm.get('queues', 1)} queue(s), "
            f"virtio offloads {vm.get('virtio_offloads', 'on')}, ready in {vm.get('boot_to_ready_s')} s, "
            f"kernel {vm.get('kernel')}")


def up_and_kept(lab) -> None:
    """Build the lab and record it as kept; a SIGTERM/SIGHUP/SIGINT before that is done removes what was
    built (the removal itself is not cut short by another signal) and ends with 143/129/130."""
    from linerate.lab.signals import terminations_deferred, terminations_raise

    with terminations_raise():
        try:
            lab.up()
            lab.registry.keep(lab.record, lab.snapshot())
        except BaseException:
            with terminations_deferred():
                lab.down()
            raise


def cmd_lab_status(args: argparse.Namespace) -> int:
    from linerate.lab.apply import programs_in_netns
    from linerate.lab.registry import Registry, vet

    registry = Registry()
    rows = []
    programs: dict[int, str] = {}  # pid -> program, for the table
    for record in registry.all():
        problems = vet(record, registry.state_dir)
        state = ("orphaned" if record.orphaned() else "in use" if record.owner is not None or registry.in_use(record.lab_id)
                 else "kept")
        server_ns = [ns for ns in record.namespaces if re.search(r"-server[0-9]*$", ns)] if not problems else []
        running = programs_in_netns(*server_ns)
        programs.update(running)
        own = record.live_server_pids()
        rows.append({
            "name": record.lab_id, "kind": record.kind, "firewall": record.firewall, "mtu": record.mtu,
            "state": state, "namespaces": record.namespaces,
            "server_pids": [pid for pid, _ in running if pid in own],  # the ones it started
            "other_pids": [pid for pid, _ in running if pid not in own],  # a command's, or an operator's
            "age_s": None if record.created is None else round(time.time() - record.created, 1),
            "problems": problems, "params": record.params,
            "vm": record.vm,
        })
    unreadable = [{"file": name, "problem": why} for name, why in registry.unreadable]
    if args.json:
        print(dumps({"labs": rows, "unreadable": unreadable}))
        return 0
    if not rows and not unreadable:
        print("no labs")
    for row in rows:
        servers = ",".join(f"{pid} {programs.get(pid, '?')}" for pid in row["server_pids"]) or "none"
        if row["other_pids"]:
            others = ",".join(f"{pid} {programs.get(pid, '?')}" for pid in row["other_pids"])
            servers += f" (also running there, not the lab's: {others})"
        what = "probe" if row["kind"] == "probe" else f"firewall={row['firewall']:10}  mtu={row['mtu']}"
        age = "unknown (the record has no creation time)" if row["age_s"] is None else f"{row['age_s']}s"
        print(f"{row['name']:8}  {row['state']:8}  {what}  server processes: {servers}  age={age}")
        if row["vm"]:
            print(f"          VM DUT: {vm_summary(row['vm'])}")
        for problem in row["problems"]:
            print(f"          not acted on: {problem}")
    for item in unreadable:
        print(f"state file {item['file']}: {item['problem']}; left untouched")
    return 0


def cmd_lab_down(args: argparse.Namespace) -> int:
    from linerate.lab.registry import Registry
    from linerate.lab.signals import terminations_deferred
    from linerate.testbed.base import find_lab

    registry = Registry()
    lab = as_option(lambda: find_lab(args.name, registry))
    owner = lab.record.owner if lab.record is not None else None
    if owner is not None and owner.alive():  # registry.py: a record whose owner is alive is left alone
        raise ConfigError("lab", f"'{args.name}' is in use by pid {owner.pid} (a run, trial or `lab up` on it); "
                          "stop that first or wait for it to end, then `linerate lab down` it")
    with registry.removing(args.name), terminations_deferred():  # a signal waits until the lab is removed
        removed = lab.down()  # whole, then ends the command
    if args.json:
        print(dumps({"lab": args.name, "removed_namespaces": list(removed)}))
        return 0
    print(f"lab {args.name} removed ({len(removed)} namespaces)")
    return 0


def cmd_lab_clean(args: argparse.Namespace) -> int:
    """Remove labs and probes whose owner died (a `lab up` killed before it finished included) and,
    with --all, kept labs — only those whose records pass vet(); the rest are reported and left as
    they are. One bad record never stops the others: it is reported and the exit code is 1."""
    from linerate.errors import LinerateError
    from linerate.lab.registry import Registry, vet
    from linerate.lab.signals import terminations_deferred
    from linerate.testbed.kept_sweep import sweep_kept_lab
    from linerate.testbed.namespace import remove_record, stop_killed_cps_server

    registry = Registry()
    removed: list[dict] = []
    left: list[dict] = []  # records (or state files) not acted on, with why
    say = (lambda text: None) if args.json else print
    for record in registry.all():
        if not (record.orphaned() or (args.all and record.owner is None)):
            continue
        problems = vet(record, registry.state_dir)
        if registry.in_use(record.lab_id):
            problems.append("in use by a linerate command running on it (--lab); clean again once it ended")
        if problems:
            left.append({"kind": record.kind, "lab": record.lab_id, "problem": "; ".join(problems)})
            say(f"left {record.kind} {record.lab_id} untouched: {'; '.join(problems)}")
            continue
        try:
            with registry.removing(record.lab_id), terminations_deferred():  # a signal waits until it is removed whole
                remove_record(record, registry)  # as a lab's own down(): namespaces (and a VM's qemu), files, record
        except (LinerateError, OSError) as exc:
            left.append({"kind": record.kind, "lab": record.lab_id, "problem": f"could not finish removing: {exc}"})
            say(f"could not finish removing {record.kind} {record.lab_id}: {exc}; its record is kept")
            continue
        removed.append({"kind": record.kind, "lab": record.lab_id, "namespaces": list(record.namespaces)})
        say(f"removed {record.kind} {record.lab_id} ({', '.join(record.namespaces) or 'no namespaces'})")
    for record in registry.all():  # kept labs stay; what killed `--lab` commands left in one goes
        if record.kind != "lab" or record.owner is not None or vet(record, registry.state_dir) \
                or registry.in_use(record.lab_id):
            continue  # nothing is touched
        stopped = stop_killed_cps_server(registry, record.lab_id)
        if stopped:
            removed.append({"kind": "nginx", "lab": record.lab_id, "pids": stopped})
            say(f"stopped the nginx a killed cps left in lab {record.lab_id} (pid {', '.join(map(str, stopped))})")
        if not sweep_kept_lab(record, remove=False):
            continue  # looked only: nothing written, not even a lock file
        with registry.unused(record.lab_id) as free:
            swept = sweep_kept_lab(record) if free else []
        for what in swept:
            removed.append({"kind": "leftover", "lab": record.lab_id, "what": what})
            say(f"removed what a killed command left in lab {record.lab_id}: {what}")
    for name, why in registry.unreadable:
        left.append({"state_file": name, "problem": why})
        say(f"left state file {name} untouched: {why}")
    if args.json:
        print(dumps({"removed": removed, "left_untouched": left}))
    elif not removed and not left:
        print("nothing to clean")
    return 1 if left else 0


def cmd_lab_stop_server(args: argparse.Namespace) -> int:
    import os
    import signal

    from linerate.lab.registry import Registry, vet
    from linerate.testbed.base import find_lab

    lab = as_option(lambda: find_lab(args.name, Registry()))
    problems = vet(lab.record)
    if problems:
        raise LabError(f"lab {args.name} left untouched: {'; '.join(problems)}")
    servers = lab.server_pids()
    for pid in servers:
        os.kill(pid, signal.SIGTERM)
    namespaces = sorted(set(servers.values()))
    if args.json:
        print(dumps({"lab": args.name, "stopped_pids": list(servers), "namespaces": namespaces}))
        return 0
    print(f"stopped {len(servers)} iperf3 server(s) of lab {args.name}" + (f" in {', '.join(namespaces)}"
                                                                          if namespaces else ""))
    return 0


def cmd_lab_guest(args: argparse.Namespace) -> int:
    from linerate.vm.guest_build import GUEST_DIR, ensure_guest

    guest, built = ensure_guest(rebuild=args.rebuild)
    info = {"directory": str(GUEST_DIR), "built_now": built, "kernel": guest.kernel_release,
            "kernel_package": guest.manifest["inputs"]["kernel_package"],
            "busybox": guest.manifest["inputs"]["busybox_version"], "modules": len(guest.manifest["modules"]),
            "initrd_bytes": guest.initrd.stat().st_size, "build_s": guest.manifest["build_s"]}
    if args.json:
        print(dumps(info))
    else:
        state = f"built in {info['build_s']} s" if built else "up to date"
        print(f"guest {state}: kernel {info['kernel']} ({info['kernel_package']}), busybox {info['busybox']}, "
              f"{info['modules']} modules, initrd {info['initrd_bytes'] / 1e6:.1f} MB in {info['directory']}")
    return 0


def cmd_doctor(args: argparse.Namespace) -> int:
    from linerate import preflight

    checks = preflight.run_checks()
    if args.json:
        print(dumps({"checks": [c.__dict__ for c in checks]}))
    else:
        for check in checks:
            mark = "ok  " if check.ok else ("FAIL" if check.required else "n/a ")
            fix = f"  -> {check.fix}" if check.fix else ""
            print(f"[{mark}] {check.name:16} {check.detail}{fix}")
    return 0 if all(c.ok for c in checks if c.required) else 1
