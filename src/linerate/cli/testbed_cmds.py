"""`linerate testbed check | restore`: real hosts over SSH (testbed/)."""

from __future__ import annotations

import argparse
import sys

from linerate.cli.options import add_accept_new, add_json_flag, open_store
from linerate.numbers import is_ascii_int
from linerate.schema import dumps


def register(sub: argparse._SubParsersAction) -> None:

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
                              "(after a crash or a lost connection), from the testbed's journal in linerate's "
                              "state directory (found by the inventory's hosts, from any directory)",
                              description="Example: linerate testbed restore lab.toml")
    restore.add_argument("inventory", help="inventory file (TOML)")
    add_accept_new(restore)
    restore.add_argument("--db", default=None, help="also take over the journal an older linerate kept in this "
                         "results database")
    restore.add_argument("--resolve", metavar="ID|all", help="mark a change that needed restoring by hand as done "
                         "(after you ran the command it names)")
    add_json_flag(restore)
    restore.set_defaults(handler=cmd_restore)


def cmd_check(args: argparse.Namespace) -> int:
    from linerate.testbed.check import passed, run_checks
    from linerate.testbed.inventory import load_inventory

    from linerate.lab.signals import terminations_raise

    inventory = load_inventory(args.inventory)
    with terminations_raise():  # SIGTERM/SIGHUP end the check through its clean-up, as Ctrl-C does
        checks, environment = run_checks(inventory, accept_new=args.accept_new_host_keys,
                                         on_message=lambda m: print(m, file=sys.stderr))
    if args.json:
        print(dumps({"testbed": inventory.name, "ok": passed(checks),
                     "checks": [c.__dict__ for c in checks], "environment": environment}))
    else:
        from linerate.report.layout import plain

        for check in checks:
            print(f"{'ok  ' if check.ok else 'warn' if check.optional else 'FAIL'}  {check.name}: {plain(check.detail)}")
        print(f"testbed {inventory.name}: {'all checks ok' if passed(checks) else 'problems found'}")
    return 0 if passed(checks) else 1


def cmd_restore(args: argparse.Namespace) -> int:
    from linerate.errors import ConfigError
    from linerate.testbed.inventory import load_inventory
    from linerate.testbed.journal import Journal
    from linerate.testbed.ssh import close_hosts, connect_hosts, detect_driver
    from linerate.lab.signals import terminations_deferred
    from linerate.store.journal import changes_left_elsewhere
    from linerate.testbed.ssh_restore import claim_machines, held_journal, restore_journal

    inventory = load_inventory(args.inventory)
    key = inventory.identity_key()
    journal = Journal(key, create=False)  # looks only: makes nothing when there is no journal
    looked = [str(journal.path)]
    if args.db is not None:  # an older linerate's journal, in a results database
        store = open_store(args, create=False)
        looked.append(f"{store.path} (older journal)")
        if store.journal_open(key):
            journal = Journal(key)
            journal.adopt(store, inventory.dut.os if inventory.dut else None)
    if args.resolve is not None:
        if args.resolve != "all" and not (is_ascii_int(args.resolve) and len(args.resolve) <= 18):
            raise ConfigError("--resolve", f"{args.resolve[:20]!r} is not an entry id; give the id restore printed, or all")
        count = journal.resolve(None if args.resolve == "all" else int(args.resolve)) if journal.exists else 0
        if not count:
            raise ConfigError("--resolve", f"no change {args.resolve} waits for a hand restore in {journal.path}")
        print(dumps({"testbed": inventory.name, "resolved": count}) if args.json
              else f"testbed {inventory.name}: {count} change(s) marked restored by hand")
        return 0
    left_elsewhere = changes_left_elsewhere(besides=journal.path.name)  # perhaps on these machines: seen once connected
    if not journal.open_entries() and not journal.hand_entries() and not left_elsewhere:
        print(dumps({"testbed": inventory.name, "restored": [], "not_restored": [], "needs_restoring_by_hand": [],
                     "still_open": 0, "looked_in": looked}) if args.json
              else f"testbed {inventory.name}: nothing to restore (looked in {' and '.join(looked)})")
        return 0
    problems: list[str] = []
    restored: list[str] = []
    if journal.open_entries() or left_elsewhere:  # never while a run on this testbed, or on one of its machines, is live
        journal.close()
        journal = held_journal(inventory)
        executors = connect_hosts(inventory, accept_new=args.accept_new_host_keys,
                                  on_message=lambda m: print(m, file=sys.stderr))
        try:
            claim_machines(journal, inventory, executors)  # by host key: what other testbeds left on these machines
            driver = detect_driver(executors["dut"], inventory.dut.os) if "dut" in executors else None
            with terminations_deferred():  # a signal waits until the restore has finished
                for line in restore_journal(inventory, journal, executors, driver, problems=problems):
                    restored.append(line)
                    if not args.json:
                        print(f"restored {line}")
        finally:
            close_hosts(executors)
    for line in problems:
        print(f"not restored: {line}", file=sys.stderr)
    hand = journal.hand_entries()
    for entry in hand:
        if not any(f"--resolve {entry['id']}`" in line for line in problems):  # reported just now already
            print(f"needs restoring by hand: {entry['role']}: {entry['kind']} {entry['name']} ({entry['problem']}); "
                  f"run: {entry['manual']}; then: linerate testbed restore {args.inventory} --resolve {entry['id']}",
                  file=sys.stderr)
    left = journal.open_entries()
    if left:
        print(f"{len(left)} change(s) are still open in {journal.path} (a host unreachable, or not in this "
              "inventory); run restore again", file=sys.stderr)
    if not (restored or problems or hand or left or args.json):  # other testbeds' entries were on other machines
        print(f"testbed {inventory.name}: nothing to restore on its machines (looked in {' and '.join(looked)} and "
              "the journals of testbeds sharing them)")
    if args.json:
        print(dumps({"testbed": inventory.name, "restored": restored, "not_restored": problems,
                     "needs_restoring_by_hand": [{key: entry[key] for key in ("id", "role", "kind", "name", "problem",
                                                                          "manual")} for entry in hand],
                     "still_open": len(left), "journal": str(journal.path)}))
    return 1 if left or hand else 0
