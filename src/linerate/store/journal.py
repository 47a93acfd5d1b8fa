"""SQL of the DUT journal (the concept and its rules: testbed/journal.py): one SQLite file per
testbed in linerate's own journal directory, found by the testbed's identity key."""

from __future__ import annotations

import os
import re
import sqlite3
import time
from pathlib import Path

from linerate import statedir
from linerate.errors import ConfigError

JOURNAL_FILE_RE = re.compile(r"^[0-9a-f]{16}\.(db(-wal|-shm|-journal)?|lock)$")
SCHEMA = """CREATE TABLE IF NOT EXISTS entries (
    id INTEGER PRIMARY KEY,
    role TEXT NOT NULL,                -- client | dut | server
    kind TEXT NOT NULL,                -- sysctl | offload | process | nft-table
    name TEXT NOT NULL,                -- sysctl name, IF:feature, a pid file, a table name
    original TEXT NOT NULL,            -- the value to put back ('' for process and table)
    applied TEXT,
    created_at REAL NOT NULL,
    status TEXT NOT NULL DEFAULT 'open',  -- open | done | needs-hand | resolved
    problem TEXT,                      -- why linerate could not restore it
    manual TEXT,                       -- the command to run by hand
    closed_at REAL
)"""


def journal_dir() -> Path:
    explicit = os.environ.get("LINERATE_JOURNAL_DIR")
    if explicit:
        return Path(explicit)
    if os.geteuid() == 0:
        return Path("/var/lib/linerate/journal")
    base = os.environ.get("XDG_STATE_HOME") or os.path.expanduser("~/.local/state")
    return Path(base) / "linerate" / "journal"


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
        except sqlite3.DatabaseError as exc:
            raise ConfigError(f"journal {self.path}", f"cannot be used ({str(exc)[:120]}); move it away to start "
                              "a new one (after putting the testbed's knobs back by hand)") from None
        os.chmod(self.path, 0o600)

    @property
    def exists(self) -> bool:
        return self.conn is not None

    def hold(self, what: str = "testbed") -> None:
        """Take this testbed's lock for as long as this object lives (until close): a run that changes
        the DUT holds it, so `testbed restore` or a second run on the same testbed cannot put back a
        live run's knobs or stop its server. ConfigError naming the holder's pid when taken."""
        import fcntl

        lock = self.directory / f"{self.key}.lock"
        statedir.ensure(self.directory, "LINERATE_JOURNAL_DIR", JOURNAL_FILE_RE)
        fd = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.read(fd, 32).decode(errors="replace").strip()
            os.close(fd)
            raise ConfigError(what, f"is in use by another linerate (pid {holder or '?'}): wait for it to end; "
                              "its own end puts the DUT's knobs back") from None
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        self._lock_fd = fd

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()
            self.conn = None
        fd, self._lock_fd = self._lock_fd, None
        if fd is not None:
            os.close(fd)  # releases the flock

    # --- writing ----------------------------------------------------------------------------------

    def add(self, role: str, kind: str, name: str, original: str, applied: str | None) -> int:
        """Committed before the change is made (the caller checked the value: testbed/journal.py)."""
        cur = self.conn.execute("INSERT INTO entries (role, kind, name, original, applied, created_at) "
                                "VALUES (?, ?, ?, ?, ?, ?)", (role, kind, name, original, applied, time.time()))
        return int(cur.lastrowid)

    def add_needs_hand(self, role: str, kind: str, name: str, problem: str, manual: str) -> int:
        """An entry linerate knows of but cannot restore (e.g. from an older results database whose
        value fails the checks): listed for the user, never written back."""
        cur = self.conn.execute(
            "INSERT INTO entries (role, kind, name, original, created_at, status, problem, manual) "
            "VALUES (?, ?, ?, '', ?, 'needs-hand', ?, ?)",
            (role, kind, name[:256], time.time(), problem[:300], manual[:400]))
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

