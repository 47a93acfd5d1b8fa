"""Putting a real testbed back: the journal's entries undone on the hosts, newest first, and the
helpers a run uses to start and stop the iperf3 server it journals (testbed/ssh.py holds the run's
side). Each entry kind is undone by what made it: a sysctl or offload written back and read back, an
iperf3 server or nginx stopped by its pid file (never by name), an rfc2544 counting table deleted, a
run's scratch directory removed when it is a real directory of the login user's (exec/scratch.py).
A restore the host refuses stays open for the next `linerate testbed restore`; a value linerate never
writes back waits for a hand (testbed/journal.py says why)."""

from __future__ import annotations

import hashlib
import time

from linerate.dut.base import DutDriver
from linerate.errors import ExecError, LinerateError
from linerate.exec import scratch
from linerate.exec.ssh import OutputLimitError, SshExecutor
from linerate.numbers import is_ascii_int
from linerate.testbed.inventory import Inventory
from linerate.testbed.journal import HostValueError, Journal, manual_command, value_problem
from linerate.testbed.ssh_path import JOURNAL_KIND
from linerate.traffic.iperf3 import IPERF3
from linerate.traffic.nginx_server import NginxServer, ServerSpec

NGINX_KIND = "nginx"  # a journal entry: a cps test's nginx directory on the server
SCRATCH_KIND = "scratch"  # a journal entry: a run's scratch directory on a host (exec/scratch.py)
TIMEOUT_S = 15


def held_journal(inventory: Inventory) -> Journal:
    """The testbed's journal with its lock and its hosts' address locks taken (ConfigError naming the
    holder when another linerate has one); nothing is read or changed on a host before the locks are
    ours. Once connected, claim_machines() locks the machines themselves."""
    journal = Journal(inventory.identity_key())
    try:
        journal.hold(f"testbed {inventory.name}", inventory.host_keys())
    except BaseException:
        journal.close()
        raise
    return journal


def machine_keys(executors: dict[str, SshExecutor]) -> dict[str, tuple[tuple[str, ...], str]]:
    """role -> (keys, name) of the machine each connection reached: one key per host key it has (all of
    them, not only the one this inventory's known_hosts verified: SshSession.machine_fingerprints), the
    smallest first: the same machine whatever name, address form, key type or jump host an inventory
    reaches it by (two machines cloned with one host key count as one: refused together, never changed
    at once)."""
    keys = {}
    for role, executor in executors.items():
        fingerprints = executor.session.machine_fingerprints()
        keys[role] = (tuple(hashlib.sha256(f.encode()).hexdigest()[:16] for f in fingerprints),
                      f"{executor.host} ({fingerprints[0]})")
    return keys


def claim_machines(journal: Journal, inventory: Inventory, executors: dict[str, SshExecutor]) -> None:
    """Connected, before anything is read or changed: lock the machines by their host keys and take over
    what killed runs of other testbeds left open on them (restored first, as this testbed's own)."""
    journal.hold_machines(f"testbed {inventory.name}", machine_keys(executors))
    journal.take_over_left_changes()


def stop_server(server: SshExecutor, pidfile: str, *, clock=time.monotonic, sleep=time.sleep) -> str:
    """Stop the iperf3 server named by its pid file, never by name: TERM, then KILL if it is still there 5 s
    later. Returns what happened; LinerateError if it outlives both (its journal entry stays open)."""
    read = server.run(["cat", pidfile], timeout_s=TIMEOUT_S, check=False)
    pid = read.stdout.strip()
    if read.returncode != 0 or not is_ascii_int(pid):
        return "not running (no pid file)"
    comm = _comm(server, pid)
    if comm != "iperf3":
        server.run(["rm", "-f", pidfile], timeout_s=TIMEOUT_S, check=False)
        return f"not running (pid {pid} is {comm or 'gone'})"
    said = f"stopped pid {pid}"
    for signal, wait_s in (("TERM", 5.0), ("KILL", 2.0)):  # gone before anything starts on its port again
        server.run(["kill", "-s", signal, pid], timeout_s=TIMEOUT_S, check=False)
        if _gone_within(server, pid, wait_s, clock, sleep):
            break
        said = f"stopped pid {pid} (KILL after {wait_s:.0f} s of TERM)"
    else:
        raise LinerateError(f"iperf3 server pid {pid} on {server.host} is still running after TERM and KILL")
    server.run(["rm", "-f", pidfile], timeout_s=TIMEOUT_S, check=False)
    return said


def _comm(server: SshExecutor, pid: str) -> str:
    """The program pid runs (ps(1) comm, without a path); "" when there is none."""
    [shown] = server.run_many([["ps", "-p", pid, "-o", "comm="]], timeout_s=TIMEOUT_S)  # polled: the session's shell
    return shown.stdout.strip().rsplit("/", 1)[-1]


def _gone_within(server: SshExecutor, pid: str, wait_s: float, clock, sleep) -> bool:
    """Whether iperf3 pid ends within wait_s; a pid now another program's (reused) is gone, never signalled."""
    deadline = clock() + wait_s
    while _comm(server, pid) == "iperf3":
        if clock() >= deadline:
            return False
        sleep(0.1)
    return True


def start_server(server: SshExecutor, pidfile: str, port: int, idle_timeout_s: int, *, pool: bool = False) -> None:
    """Start iperf3 as a daemon and wait for its pid file (written just before it listens); pool: it
    reports the receiver's intervals (a generator pool's pair)."""
    server.run(IPERF3.server_daemon_argv(port, pidfile, idle_timeout_s, pool), timeout_s=TIMEOUT_S)
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        if is_ascii_int(server.run_many([["cat", pidfile]], timeout_s=TIMEOUT_S)[0].stdout.strip()):
            time.sleep(0.2)
            return
        time.sleep(0.1)
    raise LinerateError(f"iperf3 server on {server.host} did not start (no {pidfile} within 5 s)")


def restore_journal(inventory: Inventory, journal: Journal, executors: dict[str, SshExecutor],
                    driver: DutDriver | None, *, problems: list[str] | None = None) -> list[str]:
    """Put back every open journal entry of this testbed, newest first; each is marked done only
    after its original value was read back (or its server stopped). One entry that fails never
    stops the others: it is marked needs-hand with the command to run by hand, and reported
    (once: into `problems`); one whose host is unreachable now stays open for the next try."""
    done = []
    problems = [] if problems is None else problems
    family = driver.family if driver is not None else None
    for entry in journal.open_entries():
        host = executors.get(entry["role"])
        if host is None:
            continue
        what = f"{entry['role']}: {entry['kind']} {entry['name']}"
        try:
            done.append(_restore_one(entry, host, driver))
        except ExecError as exc:
            if exc.returncode is None and not isinstance(exc, OutputLimitError):  # lost, or no answer: retry later
                problems.append(f"{what}: could not reach {host.host} ({exc}); kept for the next restore")
                continue
            _not_restored(journal, entry, family, str(exc), problems, retry=True)
            continue
        except (HostValueError, ValueError) as exc:  # a value (or path) linerate never writes back: by hand only
            _not_restored(journal, entry, family, str(exc), problems, retry=False)
            continue
        except LinerateError as exc:
            _not_restored(journal, entry, family, str(exc), problems, retry=True)
            continue
        journal.done(entry["id"])
    return done


def _not_restored(journal: Journal, entry, family: str | None, why: str, problems: list[str], *,
                  retry: bool) -> None:
    """A change the host refused to take back (retry: it stays open, and every `testbed restore`
    tries it again) or that linerate never writes back (needs-hand); either way the command to run
    by hand is kept and said."""
    valid = value_problem(entry["kind"], entry["original"]) is None
    manual = manual_command(family, entry["kind"], entry["name"], entry["original"] if valid else None)
    if retry:
        journal.failed(entry["id"], why[:300], manual)
        again = "kept open: `linerate testbed restore INVENTORY` tries it again; or r"
    else:
        journal.needs_hand(entry["id"], why[:300], manual)
        again = "r"
    problems.append(f"{entry['role']}: {entry['kind']} {entry['name']} could not be restored ({why[:200]}); "
                    f"{again}un on the {entry['role']} by hand: {manual} — then `linerate testbed restore "
                    f"INVENTORY --resolve {entry['id']}`")


def _restore_one(entry, host: SshExecutor, driver: DutDriver | None) -> str:
    problem = value_problem(entry["kind"], entry["original"])
    if problem is not None:  # never written back: what the host once printed is not a value
        raise HostValueError(f"the recorded original value is not one linerate writes back ({problem})")
    if entry["kind"] == SCRATCH_KIND:  # the run's own directory on that host, with what a killed run left
        result = host.run(scratch.remove_argv(entry["name"]), timeout_s=TIMEOUT_S, check=False)
        if result.returncode != 0:
            raise LinerateError(f"{entry['name']} on {host.host} is not a directory of linerate's (a link, or "
                                "another owner's): left alone" if result.returncode == 4 else
                                f"removing {entry['name']} on {host.host} failed: {result.stderr.strip()[:160]}")
        return f"{entry['role']}: {entry['name']} removed"
    if entry["kind"] in ("process", NGINX_KIND) and not _inside_scratch(entry["name"]):
        raise HostValueError(f"{entry['name'][:80]!r} is not inside a directory linerate made: left alone")
    if entry["kind"] == "process":
        return f"{entry['role']}: iperf3 server {stop_server(host, entry['name'])}"
    if entry["kind"] == NGINX_KIND:  # a cps test's nginx and its directory
        said = NginxServer(host, {}, ServerSpec(()), workdir=entry["name"]).stop()
        return f"{entry['role']}: nginx {said}, {entry['name']} removed"
    if entry["kind"] == JOURNAL_KIND:  # an rfc2544 search's counting table on the server
        deleted = host.run(["nft", "delete", "table", "inet", entry["name"]], timeout_s=TIMEOUT_S, check=False)
        if host.run(["nft", "list", "table", "inet", entry["name"]], timeout_s=TIMEOUT_S, check=False).returncode == 0:
            raise LinerateError(f"could not remove the counting table inet {entry['name']} on {host.host}: "
                                f"{(deleted.stderr.strip() or 'nft failed')[:160]}")
        return (f"{entry['role']}: nftables table inet {entry['name']} "
                f"{'removed' if deleted.returncode == 0 else 'already gone'}")
    if driver is None:
        raise LinerateError("the DUT's OS is unknown (no driver)")
    if entry["kind"] == "sysctl":
        driver.set_sysctl(host, entry["name"], entry["original"])
        got = driver.read_sysctl(host, entry["name"])
        if got != entry["original"]:
            raise LinerateError(f"restoring {entry['name']}={entry['original']} on the DUT read back "
                                f"{got[:60]!r}{'...' if len(got) > 60 else ''}")
        return f"dut: sysctl {entry['name']} back to {entry['original']}"
    if entry["kind"] == "offload":
        ifname, feature = entry["name"].split(":", 1)
        driver.set_offload(host, ifname, feature, entry["original"])
        return f"dut: {ifname} {feature} back to {entry['original']}"
    raise LinerateError(f"unknown journal entry kind {entry['kind'][:20]!r}")


def _inside_scratch(path: str) -> bool:
    """A pid file or nginx directory of a run: one level inside its scratch directory (exec/scratch.py)."""
    parent, _, leaf = path.rstrip("/").rpartition("/")
    return scratch.is_scratch_path(parent) and bool(leaf) and leaf not in (".", "..")
