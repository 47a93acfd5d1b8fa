"""`linerate testbed check | restore`: real hosts over SSH (testbed/)."""

from __future__ import annotations

import argparse
import json
import sys


def add_accept_new(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--accept-new-host-keys", action="store_true",
                        help="store the host key of a host seen for the first time (prints its fingerprint); "
                        "a changed key is always refused")


def ssh_testbed(args: argparse.Namespace, inventory, store):
    """(SshTestbed for a run with --testbed, the environment its experiment row records)."""
    from linerate import __version__
    from linerate.testbed.ssh import SshTestbed

    testbed = SshTestbed(inventory, store, accept_new=args.accept_new_host_keys,
                         on_message=lambda m: print(m, file=sys.stderr))
    return testbed, {"linerate_version": __version__, "testbed": inventory.name, "kind": "ssh"}


def register(sub: argparse._SubParsersAction) -> None:
    from linerate.cli.experiment_cmds import add_db

    testbed = sub.add_parser("testbed", help="real client/DUT/server hosts over SSH: check, restore",
                             description="Example: linerate testbed check lab.toml")
    tsub = testbed.add_subparsers(dest="testbed_command", required=True)
    check = tsub.add_parser("check", help="reachability, auth, iperf3, DUT OS and telemetry, clocks, and that "
                            "test traffic crosses the DUT", description="Example: linerate testbed check lab.toml --json")
    check.add_argument("inventory", help="inventory file (TOML)")
    add_accept_new(check)
    check.add_argument("--json", action="store_true", help="print machine-readable JSON")
    check.set_defaults(handler=cmd_check)
    restore = tsub.add_parser("restore", help="put back every DUT knob a run changed and stop its servers "
                              "(after a crash or a lost connection)",
                              description="Example: linerate testbed restore lab.toml --db results.db")
    restore.add_argument("inventory", help="inventory file (TOML)")
    add_accept_new(restore)
    add_db(restore)
    restore.set_defaults(handler=cmd_restore)


def cmd_check(args: argparse.Namespace) -> int:
    from linerate.testbed.check import passed, run_checks
    from linerate.testbed.inventory import load_inventory

    inventory = load_inventory(args.inventory)
    checks, environment = run_checks(inventory, accept_new=args.accept_new_host_keys,
                                     on_message=lambda m: print(m, file=sys.stderr))
    if args.json:
        print(json.dumps({"testbed": inventory.name, "ok": passed(checks),
                          "checks": [c.__dict__ for c in checks], "environment": environment}, indent=2))
    else:
        from linerate.report.layout import plain

        for check in checks:
            print(f"{'ok  ' if check.ok else 'warn' if check.optional else 'FAIL'}  {check.name}: {plain(check.detail)}")
        print(f"testbed {inventory.name}: {'all checks ok' if passed(checks) else 'problems found'}")
    return 0 if passed(checks) else 1


def cmd_restore(args: argparse.Namespace) -> int:
    from linerate.cli.experiment_cmds import open_store
    from linerate.testbed.inventory import load_inventory
    from linerate.testbed.ssh import close_hosts, connect_hosts, detect_driver, restore_journal

    inventory = load_inventory(args.inventory)
    store = open_store(args, create=False)
    open_entries = store.journal_open(inventory.identity_key())
    if not open_entries:
        print(f"testbed {inventory.name}: nothing to restore in {store.path}")
        return 0
    executors = connect_hosts(inventory, accept_new=args.accept_new_host_keys,
                              on_message=lambda m: print(m, file=sys.stderr))
    try:
        driver = detect_driver(executors["dut"], inventory.dut.os) if "dut" in executors else None
        for line in restore_journal(inventory, store, executors, driver):
            print(f"restored {line}")
    finally:
        close_hosts(executors)
    left = store.journal_open(inventory.identity_key())
    if left:
        print(f"{len(left)} change(s) could not be restored (their host is not in this inventory)", file=sys.stderr)
        return 1
    return 0
