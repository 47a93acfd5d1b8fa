"""SQL of the DUT journal (the concept and its rules: testbed/journal.py): one SQLite file per
testbed in linerate's own journal directory, found by the testbed's identity key."""

from __future__ import annotations

import contextlib
import os
import re
import sqlite3
import time
from pathlib import Path

from linerate import statedir
from linerate.errors import ConfigError
from linerate.safepath import untrusted_component

JOURNAL_FILE_RE = re.compile(r"^([0-9a-f]{16}\.(db(-wal|-shm|-journal)?|lock)|host-[0-9a-f]{16}\.lock)$")
JOURNAL_DB_RE = re.compile(r"^[0-9a-f]{16}\.db$")
SCHEMA = """CREATE TABLE IF NOT EXISTS entries (
    id INTEGER PRIMARY KEY,
    role TEXT NOT NULL,                -- client | dut | server
    kind TEXT NOT NULL,                -- sysctl | offload | process | nft-table
    name TEXT NOT NULL,                -- sysctl name, IF:feature, a pid file, a table name
    original TEXT NOT NULL,            -- the value to put back ('' for process and table)
    applied TEXT,
    created_at REAL NOT NULL,
    status TEXT NOT NULL DEFAULT 'open',  -- open | done | needs-hand | resolved | moved
    problem TEXT,                      -- why linerate could not restore it
    manual TEXT,                       -- the command to run by hand
    closed_at REAL,
    host TEXT                          -- the machine changed (Inventory.host_keys()); NULL before it was kept
)"""


def journal_dir() -> Path:
    explicit = os.environ.get("LINERATE_JOURNAL_DIR")
    if explicit:
        return Path(explicit)
    if os.geteuid() == 0:
        return Path("/var/lib/linerate/journal")
    base = os.environ.get("XDG_STATE_HOME") or os.path.expanduser("~/.local/state")
    return Path(base) / "linerate" / "journal"


def check_journal_dir() -> None:
    """Before anything is made for a run on real hosts (its results database included): the journal
    directory is ours, or can be made (ConfigError otherwise). Looks only."""
    directory = journal_dir()
    steered = untrusted_component(str(directory))
    if steered is not None:
        raise ConfigError(f"state directory {directory}", f"{steered}; point LINERATE_JOURNAL_DIR at a folder of "
                          "yours")
    statedir.is_ours(directory, "LINERATE_JOURNAL_DIR", JOURNAL_FILE_RE)


class JournalFile:
    """One testbed's journal file. `create=False` opens it only when it exists (read-only use:
    nothing is made); `path` says where it is (or would be)."""

    def __init__(self, key: str, directory: str | os.PathLike[str] | None = None, *, create: bool = True):
        if not re.fullmatch(r"[0-9a-f]{16}", key):
            raise ValueError(f"testbed key {key!r}")
        self.key = key
        self.directory = Path(directory) if directory is not None else journal_dir()
        self.path = self.directory / f"{key}.db"
        self.conn: sqlite3.Connection | None = None
        self._lock_fd: int | None = None
        self._host_lock_fds: list[int] = []
        self.hosts: dict[str, str] = {}  # role -> the key of the machine it is (set by hold)
        self.machine_keys: dict[str, set[str]] = {}  # role -> every key of that machine (set by hold_machines)
        if create:
            statedir.ensure(self.directory, "LINERATE_JOURNAL_DIR", JOURNAL_FILE_RE)
        elif not (statedir.is_ours(self.directory, "LINERATE_JOURNAL_DIR", JOURNAL_FILE_RE) and self.path.is_file()):
            return
        if os.path.islink(self.path):
            raise ConfigError(f"journal {self.path}", "is a symbolic link; linerate keeps its journal in a file of its own")
        try:
            self.conn = sqlite3.connect(self.path, timeout=30, isolation_level=None)
            self.conn.row_factory = sqlite3.Row
            self.conn.execute("PRAGMA journal_mode=WAL")
            self.conn.execute(SCHEMA)
            if "host" not in {row[1] for row in self.conn.execute("PRAGMA table_info(entries)")}:
                self.conn.execute("ALTER TABLE entries ADD COLUMN host TEXT")  # a journal of an older linerate
        except sqlite3.DatabaseError as exc:
            raise ConfigError(f"journal {self.path}", f"cannot be used ({str(exc)[:120]}); move it away to start "
                              "a new one (after putting the testbed's knobs back by hand)") from None
        os.chmod(self.path, 0o600)

    @property
    def exists(self) -> bool:
        return self.conn is not None

    def hold(self, what: str = "testbed", hosts: dict[str, tuple[str, str]] | None = None) -> None:
        """Take this testbed's lock, and one per machine it uses (hosts: role -> (key, name);
        Inventory.host_keys()), for as long as this object lives (until close): a run that changes the
        DUT holds them, so `testbed restore`, a second run on the same testbed, or a run of another
        testbed that shares a machine with it cannot put back a live run's knobs or stop its server.
        ConfigError naming the holder's pid when one is taken; then none is held."""
        statedir.ensure(self.directory, "LINERATE_JOURNAL_DIR", JOURNAL_FILE_RE)
        try:
            self._lock_fd = _flock(self.directory / f"{self.key}.lock", what, "is in use by another linerate")
            taken: set[str] = set()
            for role, (key, name) in (hosts or {}).items():
                if key in taken:
                    continue  # one machine in two roles: its lock is taken once
                taken.add(key)
                self._host_lock_fds.append(_flock(
                    self.directory / f"host-{key}.lock", what,
                    f"shares its {role} {name} with another linerate's testbed, which is using it now"))
        except BaseException:
            self._release_locks()
            raise
        self.hosts = {role: key for role, (key, _) in (hosts or {}).items()}

    def hold_machines(self, what: str, machines: dict[str, tuple[tuple[str, ...], str]]) -> None:
        """Once connected: lock each machine by what names it whatever the route — each of its SSH host
        keys (machines: role -> (keys, name), the first the one its entries are keyed by;
        testbed/ssh_restore.machine_keys) — beside the address locks of hold(). ConfigError when another
        linerate holds one (its testbed reaches the same machine by another name: an alias, a mapped
        address, a jump host, another of its host keys)."""
        held = set(self.hosts.values())
        for role, (keys, name) in machines.items():
            for key in keys:
                if key in held:
                    continue
                held.add(key)
                self._host_lock_fds.append(_flock(self.directory / f"host-{key}.lock", what,
                                                  f"reaches its {role} {name} as another linerate's testbed does, "
                                                  "which is using it now"))
        self.hosts = {role: keys[0] for role, (keys, _) in machines.items()}
        self.machine_keys = {role: set(keys) for role, (keys, _) in machines.items()}

    def _release_locks(self) -> None:
        fds, self._host_lock_fds = self._host_lock_fds, []
        fd, self._lock_fd = self._lock_fd, None
        for each in fds + ([fd] if fd is not None else []):
            os.close(each)  # releases the flock

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()
            self.conn = None
        self._release_locks()

    def take_over_left_changes(self) -> int:
        """Open entries that other testbeds' journals hold for a machine this testbed uses (a killed run
        of another inventory naming the same DUT): moved into this journal, so this testbed's restore
        puts them back before anything is read as "original". Call it holding the machines' locks
        (hold). Copied here before being marked moved there: a kill in between leaves an entry in
        both, and putting a value back twice is harmless; losing one is not. An entry made in another
        role than this testbed gives that machine is refused (ConfigError naming that journal)."""
        if self.conn is None or not self.hosts:
            return 0
        moved = 0
        known = self.machine_keys or {role: {key} for role, key in self.hosts.items()}
        for path, other, rows in _left_on(self.directory, set().union(*known.values()), besides=self.path.name):
            for row in rows:
                if row["host"] not in known.get(row["role"], ()):
                    raise ConfigError("testbed", f"a machine of it was the {row['role']} of another testbed whose "
                                      f"killed run left changes on it ({path}): run `linerate testbed restore` with "
                                      "that testbed's inventory first")
                self.conn.execute(
                    "INSERT INTO entries (role, kind, name, original, applied, created_at, status, problem, manual, "
                    "host) VALUES (?, ?, ?, ?, ?, ?, 'open', ?, ?, ?)",
                    (row["role"], row["kind"], row["name"], row["original"], row["applied"], row["created_at"],
                     row["problem"], row["manual"], self.hosts[row["role"]]))
                try:
                    other.conn.execute("UPDATE entries SET status='moved', problem=?, closed_at=? WHERE id=?",
                                       (f"moved to journal {self.key}.db (a testbed sharing this machine)",
                                        time.time(), row["id"]))
                except sqlite3.DatabaseError:
                    pass  # left open there too: restoring it twice puts the same value back
                moved += 1
        return moved

    # --- writing ----------------------------------------------------------------------------------

    def add(self, role: str, kind: str, name: str, original: str, applied: str | None) -> int:
        """Committed before the change is made (the caller checked the value: testbed/journal.py)."""
        cur = self.conn.execute("INSERT INTO entries (role, kind, name, original, applied, created_at, host) "
                                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                                (role, kind, name, original, applied, time.time(), self.hosts.get(role)))
        return int(cur.lastrowid)

    def add_needs_hand(self, role: str, kind: str, name: str, problem: str, manual: str) -> int:
        """An entry linerate knows of but cannot restore (e.g. from an older results database whose
        value fails the checks): listed for the user, never written back."""
        cur = self.conn.execute(
            "INSERT INTO entries (role, kind, name, original, created_at, status, problem, manual, host) "
            "VALUES (?, ?, ?, '', ?, 'needs-hand', ?, ?, ?)",
            (role, kind, name[:256], time.time(), problem[:300], manual[:400], self.hosts.get(role)))
        return int(cur.lastrowid)

    def done(self, entry_id: int) -> None:
        self.conn.execute("UPDATE entries SET status='done', closed_at=? WHERE id=?", (time.time(), entry_id))

    def needs_hand(self, entry_id: int, problem: str, manual: str) -> None:
        self.conn.execute("UPDATE entries SET status='needs-hand', problem=?, manual=? WHERE id=?",
                          (problem[:300], manual[:400], entry_id))

    def failed(self, entry_id: int, problem: str, manual: str) -> None:
        """A restore the host refused: the entry stays open (the next restore tries it again), with
        why and what to run by hand."""
        self.conn.execute("UPDATE entries SET problem=?, manual=? WHERE id=?", (problem[:300], manual[:400], entry_id))

    def resolve(self, entry_id: int | None = None) -> int:
        """Mark entries waiting for a hand (needs-hand, or open after a failed restore) resolved: one,
        or all; how many were."""
        waiting = "(status='needs-hand' OR (status='open' AND problem IS NOT NULL))"
        if entry_id is None:
            cur = self.conn.execute(f"UPDATE entries SET status='resolved', closed_at=? WHERE {waiting}",
                                    (time.time(),))
        else:
            cur = self.conn.execute(f"UPDATE entries SET status='resolved', closed_at=? WHERE {waiting} AND id=?",
                                    (time.time(), entry_id))
        return cur.rowcount

    # --- reading ----------------------------------------------------------------------------------

    def open_entries(self) -> list[sqlite3.Row]:
        """Entries to restore, newest first (undo in reverse order of change)."""
        if self.conn is None:
            return []
        return list(self.conn.execute("SELECT * FROM entries WHERE status='open' ORDER BY id DESC"))

    def hand_entries(self) -> list[sqlite3.Row]:
        if self.conn is None:
            return []
        return list(self.conn.execute("SELECT * FROM entries WHERE status='needs-hand' ORDER BY id"))



def changes_left_elsewhere(besides: str, directory: Path | None = None) -> int:
    """How many open changes other testbeds' journals (not the one named besides) hold on any machine:
    which machines this testbed's are is known only once connected (their host keys); reads only."""
    return sum(len(rows) for _, _, rows in _left_on(directory or journal_dir(), None, besides=besides))


def _left_on(directory: Path, host_keys: set[str] | None, *, besides: str):
    """(path, journal, its open entries on these machines — on any machine when host_keys is None) for
    each other journal file that has some; each journal is closed once the caller moves on. A damaged
    journal of another testbed says nothing about these machines and is passed over."""
    if host_keys is not None and not host_keys or not statedir.is_ours(directory, "LINERATE_JOURNAL_DIR",
                                                                         JOURNAL_FILE_RE):
        return
    for path in sorted(directory.iterdir()):
        if not JOURNAL_DB_RE.match(path.name) or path.name == besides:
            continue
        try:
            other = JournalFile(path.name[:16], directory, create=False)
        except ConfigError:
            continue
        try:
            where, values = (("host IS NOT NULL", []) if host_keys is None else
                             (f"host IN ({','.join('?' * len(host_keys))})", sorted(host_keys)))
            try:
                rows = list(other.conn.execute(f"SELECT * FROM entries WHERE status='open' AND {where} ORDER BY id",
                                               values)) if other.exists else []
            except sqlite3.DatabaseError:
                continue  # damaged past its header: it says nothing about these machines either
            if rows:
                yield path, other, rows
        finally:
            other.close()


def _flock(path: Path, what: str, taken: str) -> int:
    """An exclusive lock on path, its fd (the holder's pid written in it); ConfigError when taken."""
    fd = statedir.try_lock(path)
    if fd is None:
        holder = ""
        with contextlib.suppress(OSError), open(path, "rb") as handle:
            holder = handle.read(32).decode(errors="replace").strip()
        raise ConfigError(what, f"{taken} (pid {holder or '?'}): wait for it to end; its own end puts the DUT's "
                          "knobs back")
    os.ftruncate(fd, 0)
    os.write(fd, f"{os.getpid()}\n".encode())
    return fd
