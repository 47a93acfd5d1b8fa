"""State files for labs (and preflight probes): what each created, so teardown removes exactly that.

A record is written *before* each namespace or process is created, so a lab whose process was
killed (even with SIGKILL) can be found and removed by `linerate lab clean` — and only such labs:
a record whose owner process is still alive, or that was made by `lab up` to be kept, is left alone.

State files are input too: anything can be written into the state directory. So a record is read
only from the state directory (by a validated name, never following a link, a regular file of
bounded size, every field type-checked), written through a fresh O_EXCL|O_NOFOLLOW temp file and an
atomic rename (files 0600), and *acted on* only when vet() finds nothing wrong:
every namespace must be one linerate derives from the record's id and must be a real namespace
mount, and every recorded process still alive must be inside one of those namespaces. Anything
else is reported and left untouched. A name that is taken is refused, never overwritten.

The directory itself is linerate's own (statedir.py): made 0700 with a marker, an existing
directory that is not ours refused, never chmodded. Reading (`lab status`) deletes nothing; a
write sweeps stale temp files of dead writers — only names of linerate's own pattern
(`.linerate-<id>.<pid>.<hex>.tmp`) in that directory.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import re
import secrets
import stat
import time
from collections.abc import Iterator
from typing import ContextManager
from dataclasses import asdict, dataclass, field
from pathlib import Path

from linerate import statedir
from linerate.errors import ConfigError, LabError
from linerate.exec.scratch import SCRATCH_PARENT, is_scratch_path
from linerate.model import LAB_NAME_RE, LAB_ROLES, lab_namespace, probe_namespace, validate_lab_name
from linerate.process import ProcessRef, net_namespace_id, process_start_time

NETNS_DIR = Path("/run/netns")
MAX_RECORD_BYTES = 1024 * 1024  # a 16-pair lab's snapshot (lab/snapshot.py) is ~0.4 MB
RECORD_KINDS = ("lab", "probe")
TEMP_RE = re.compile(r"^\.linerate-([a-z0-9]{1,8})\.(\d{1,10})\.[0-9a-f]{8}\.tmp$")

__all__ = ["LabRecord", "Registry", "RecordError", "vet"]
_USES: list[int] = []  # this process's use locks on kept labs (Registry.hold_use): held until it exits
_MEASURING: set[tuple[str, str]] = set()  # (state directory, lab) this process measures on (hold_measure)


class RecordError(ValueError):
    """A state file that is not a well-formed linerate record."""


def _pid(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 2**22:
        raise RecordError(f"pid {value!r} is not a process id")
    return value


def _process(doc: object) -> ProcessRef:
    if not isinstance(doc, dict) or set(doc) != {"pid", "start_time"}:
        raise RecordError("a process must be {pid, start_time}")
    start = doc["start_time"]
    if start is not None and (isinstance(start, bool) or not isinstance(start, int) or start < 0):
        raise RecordError(f"start_time {start!r} is not a clock-tick count")
    return ProcessRef(_pid(doc["pid"]), start)


MAX_CPUS = 8192  # the kernel's largest NR_CPUS (arch/x86/Kconfig, MAXSMP)


@dataclass
class LabRecord:
    lab_id: str
    firewall: str = ""
    mtu: int = 0
    owner: ProcessRef | None = None  # None: kept on purpose (`lab up`, once it finished), removed by `lab down`
    created: float | None = field(default_factory=time.time)  # None: the record did not say
    namespaces: list[str] = field(default_factory=list)
    servers: list[ProcessRef] = field(default_factory=list)
    kind: str = "lab"  # lab | probe (preflight's scratch namespace)
    params: dict = field(default_factory=dict)  # the lab-scoped axis values it was built with
    vm: dict = field(default_factory=dict)  # a VM DUT: accel, vCPUs, memory, boot-to-ready time, kernel
    scratch: str = ""  # the lab's scratch directory (exec/scratch.py), recorded before it is made
    snapshot: dict = field(default_factory=dict)  # its namespaces as `lab up` kept them (lab/snapshot.py)
    cpus: list[int] = field(default_factory=list)  # the CPUs `lab up` laid it out over ([]: a record before these)

    def live_server_pids(self) -> set[int]:
        """The pids of the servers the lab started that still run (not a reused pid: start time checked)."""
        return {ref.pid for ref in self.servers if ref.alive()}

    def orphaned(self) -> bool:
        return self.owner is not None and not self.owner.alive()

    def expected_namespaces(self) -> set[str]:
        if self.kind == "probe":
            return {probe_namespace(self.lab_id)}
        return {lab_namespace(self.lab_id, role) for role in LAB_ROLES}

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=2)

    @classmethod
    def from_json(cls, text: str) -> "LabRecord":
        try:
            doc = json.loads(text)
        except (ValueError, RecursionError) as exc:
            raise RecordError(f"not JSON ({type(exc).__name__})") from None
        if not isinstance(doc, dict):
            raise RecordError("not a JSON object")
        unknown = set(doc) - {f for f in cls.__dataclass_fields__}
        if unknown:
            raise RecordError(f"unknown field(s) {', '.join(sorted(map(str, unknown)))[:80]}")
        lab_id, kind = doc.get("lab_id"), doc.get("kind", "lab")
        if not isinstance(lab_id, str) or not LAB_NAME_RE.fullmatch(lab_id):
            raise RecordError(f"lab_id {str(lab_id)[:40]!r} is not a lab name")
        if kind not in RECORD_KINDS:
            raise RecordError(f"kind {str(kind)[:20]!r} is not one of {', '.join(RECORD_KINDS)}")
        firewall, mtu, created = doc.get("firewall", ""), doc.get("mtu", 0), doc.get("created")
        namespaces, servers = doc.get("namespaces", []), doc.get("servers", [])
        if not isinstance(firewall, str) or len(firewall) > 40:
            raise RecordError("firewall is not a profile name")
        if isinstance(mtu, bool) or not isinstance(mtu, int) or not 0 <= mtu <= 65535:
            raise RecordError("mtu is not a whole number")
        if created is not None and (isinstance(created, bool) or not isinstance(created, (int, float))
                                    or not 0 <= created < 2**40):
            raise RecordError("created is not a time")
        if not isinstance(namespaces, list) or not all(isinstance(n, str) and len(n) < 64 for n in namespaces):
            raise RecordError("namespaces is not a list of names")
        if not isinstance(servers, list) or len(servers) > 64:
            raise RecordError("servers is not a list of processes")
        params = doc.get("params", {})
        if not isinstance(params, dict) or len(params) > 64 or not all(
                isinstance(k, str) and isinstance(v, (str, int, float)) for k, v in params.items()):
            raise RecordError("params is not a table of lab options")
        vm = doc.get("vm", {})
        if not isinstance(vm, dict) or len(vm) > 32 or not all(
                isinstance(k, str) and isinstance(v, (str, int, float)) for k, v in vm.items()):
            raise RecordError("vm is not a table of VM facts")
        scratch = doc.get("scratch", "")
        if scratch != "" and not (is_scratch_path(scratch) and scratch.startswith(f"{SCRATCH_PARENT}/linerate-{lab_id}-")):
            raise RecordError("scratch is not a scratch directory of this lab")
        snapshot = doc.get("snapshot", {})
        if not isinstance(snapshot, dict) or not all(isinstance(k, str) and isinstance(v, dict)
                                                     for k, v in snapshot.items()):
            raise RecordError("snapshot is not a table of namespaces")
        cpus = doc.get("cpus", [])
        if not isinstance(cpus, list) or len(cpus) > MAX_CPUS or not all(
                isinstance(c, int) and not isinstance(c, bool) and 0 <= c < MAX_CPUS for c in cpus):
            raise RecordError("cpus is not a list of CPU numbers")
        owner = _process(doc["owner"]) if doc.get("owner") is not None else None
        return cls(lab_id=lab_id, firewall=firewall, mtu=mtu, owner=owner,
                   created=None if created is None else float(created),
                   namespaces=list(namespaces), servers=[_process(s) for s in servers], kind=kind,
                   params=dict(params), vm=dict(vm), scratch=scratch, snapshot=dict(snapshot), cpus=list(cpus))


def _nsfs_device() -> int:
    return os.stat("/proc/self/ns/net").st_dev


def half_made_namespace(info: os.stat_result) -> bool:
    """What netns.create leaves when it is killed between creating the mount point (an empty
    regular file, mode 0, root's, in root's /run/netns) and bind-mounting the namespace on it."""
    return stat.S_ISREG(info.st_mode) and info.st_size == 0 and stat.S_IMODE(info.st_mode) == 0 \
        and info.st_uid == os.geteuid() and info.st_nlink == 1


def vet(record: LabRecord, state_dir: str | os.PathLike[str] | None = None) -> list[str]:
    """Why a record must not be acted on (empty: it is safe to tear down what it lists). With
    state_dir, its VM directory `<id>.vm` must be a real directory of ours, if there is one."""
    problems = []
    expected = record.expected_namespaces()
    ns_ids = set()
    for name in record.namespaces:
        if name not in expected:
            problems.append(f"namespace {name!r} is not one linerate derives from {record.kind} id "
                            f"'{record.lab_id}' ({', '.join(sorted(expected))})")
            continue
        try:
            info = os.lstat(NETNS_DIR / name)
        except FileNotFoundError:
            continue  # already gone: nothing to do for it
        except OSError as exc:
            problems.append(f"{NETNS_DIR / name}: {exc.strerror}")
            continue
        if info.st_dev != _nsfs_device():
            if not half_made_namespace(info):
                problems.append(f"{NETNS_DIR / name} is not a network namespace mount")
            continue  # a half-made one holds nothing: removing it only unlinks the empty file
        ns_ids.add((info.st_dev, info.st_ino))
    for proc in record.servers:
        if not proc.alive():
            continue
        if net_namespace_id(proc.pid) not in ns_ids:
            problems.append(f"pid {proc.pid} is alive but not inside this lab's namespaces")
    if state_dir is not None:
        vm_dir = Path(state_dir) / f"{record.lab_id}.vm"
        try:
            info = os.lstat(vm_dir)
        except FileNotFoundError:
            info = None
        except OSError as exc:
            problems.append(f"{vm_dir}: {exc.strerror}")
            info = None
        if info is not None and (not stat.S_ISDIR(info.st_mode) or info.st_uid != os.geteuid()):
            problems.append(f"{vm_dir} is not a directory of ours (a link?)")
    return problems


class Registry:
    def __init__(self, state_dir: str | os.PathLike[str] | None = None):
        self.state_dir = Path(state_dir) if state_dir else statedir.lab_state_dir()
        self.unreadable: list[tuple[str, str]] = []  # (file name, why), filled by all()

    def path(self, lab_id: str) -> Path:
        return self.state_dir / f"{validate_lab_name(lab_id)}.json"

    def _ensure_dir(self) -> None:
        """Our directory (made now if missing; refused if it is not ours), swept of stale temp files."""
        statedir.ensure(self.state_dir)
        self.sweep_temps()

    def sweep_temps(self) -> list[str]:
        """Remove temp files of writers that died mid-write: only linerate's own name pattern, only
        regular files, only in our own directory (the caller made sure of that)."""
        removed = []
        for entry in os.scandir(self.state_dir):
            temp = TEMP_RE.fullmatch(entry.name)
            if temp and entry.is_file(follow_symlinks=False) and process_start_time(int(temp.group(2))) is None:
                try:
                    os.unlink(entry.path)
                    removed.append(entry.name)
                except FileNotFoundError:
                    pass
        return removed

    def _write_temp(self, record: LabRecord) -> Path:
        tmp = self.state_dir / f".linerate-{record.lab_id}.{os.getpid()}.{secrets.token_hex(4)}.tmp"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        with os.fdopen(fd, "w") as handle:
            handle.write(record.to_json())
        return tmp

    def create(self, record: LabRecord) -> None:
        """Register a new lab; LabError if the name is taken (the existing record is untouched)."""
        self._ensure_dir()
        tmp = self._write_temp(record)
        try:
            os.link(tmp, self.path(record.lab_id))  # atomic, whole, and fails if the name exists
        except FileExistsError:
            raise ConfigError("--name", f"a lab named '{record.lab_id}' already exists; see `linerate lab status`, "
                              "or pick another name") from None
        finally:
            tmp.unlink(missing_ok=True)

    def save(self, record: LabRecord) -> None:
        """Update a record this process created (atomic rename: a kill never leaves half a record)."""
        statedir.ensure(self.state_dir)
        tmp = self._write_temp(record)
        os.replace(tmp, self.path(record.lab_id))

    def keep(self, record: LabRecord, snapshot: dict | None = None) -> None:
        """Mark a lab that `lab up` finished building as kept, with its namespaces as they are now
        (lab/snapshot.py: what later commands compare with). Until this call it is owned by the `lab up`
        process, so a lab up killed halfway is an orphan that `lab clean` removes."""
        record.owner = None
        record.snapshot = snapshot or {}
        self.save(record)

    def _read(self, path: Path) -> LabRecord:
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise RecordError("is a symbolic link") from None
            raise
        with os.fdopen(fd, "rb") as handle:
            info = os.fstat(handle.fileno())
            if not stat.S_ISREG(info.st_mode):
                raise RecordError("is not a regular file")
            data = handle.read(MAX_RECORD_BYTES + 1)
        if len(data) > MAX_RECORD_BYTES:
            raise RecordError(f"is larger than {MAX_RECORD_BYTES} bytes")
        try:
            record = LabRecord.from_json(data.decode("utf-8"))
        except UnicodeDecodeError:
            raise RecordError("is not UTF-8") from None
        if f"{record.lab_id}.json" != path.name:
            raise RecordError(f"names lab '{record.lab_id}' but is stored as {path.name}")
        return record

    def load(self, lab_id: str) -> LabRecord | None:
        try:
            return self._read(self.path(lab_id))
        except FileNotFoundError:
            return None
        except RecordError as exc:
            raise LabError(f"state file {self.path(lab_id)} {exc}; left untouched") from None

    def remove(self, lab_id: str) -> None:
        self.path(lab_id).unlink(missing_ok=True)

    # --- a kept lab in use by a run (--lab) ---------------------------------------------------------

    def use_lock_path(self, lab_id: str) -> Path:
        return self.state_dir / f"{validate_lab_name(lab_id)}.use"

    def hold_use(self, lab_id: str) -> None:
        """Say, for as long as this process lives, that it uses the lab (`--lab`): a shared lock on
        `<id>.use` (several commands may use one kept lab), released by the kernel when the process
        ends, a SIGKILL included. `lab down` and `lab clean` leave a lab in use alone (removing)."""
        _USES.append(self._lock(lab_id, True, "is being removed or cleaned (`linerate lab down` or `lab clean`); "
                                "see `linerate lab status`, or build another with `linerate lab up`"))

    def hold_measure(self, lab_id: str) -> None:
        """This process measures on the kept lab until it ends: an exclusive lock on `<id>.measure`
        (released by the kernel even on SIGKILL); ConfigError while another command measures there —
        two at once would disturb each other's trials and both report them."""
        key = (str(self.state_dir), lab_id)
        if key in _MEASURING:
            return  # this process holds it already (a command looks at its testbed before it runs on it)
        _USES.append(self._lock(lab_id, False, "is measuring for another linerate command; wait for it to end (two "
                                "at once would disturb each other's trials)", suffix=".measure"))
        _MEASURING.add(key)

    def hold_http(self, lab_id: str) -> None:
        """This process serves HTTP in the kept lab until it ends (cps --lab): an exclusive lock on
        `<id>.http`, released by the kernel even on SIGKILL; ConfigError while another command holds it."""
        _USES.append(self._lock(lab_id, False, "has a cps running on it already (its nginx holds the "
                                "HTTP port); wait for it to end", suffix=".http"))

    def serving_free(self, lab_id: str) -> ContextManager[bool]:
        """Hold the kept lab's HTTP lock for the block if no command serves there now: True then (an nginx
        in the lab is a killed cps's), False while a cps runs on it."""
        return self._held_if_free(lab_id, ".http")

    def unused(self, lab_id: str) -> ContextManager[bool]:
        """Hold the kept lab against new users for the block if no command uses it now: True then (what a
        `--lab` command left in it is a killed one's), False while one does."""
        return self._held_if_free(lab_id, ".use")

    @contextlib.contextmanager
    def _held_if_free(self, lab_id: str, suffix: str) -> Iterator[bool]:
        try:
            fd = self._lock(lab_id, False, "is in use", suffix=suffix)
        except ConfigError:
            yield False
            return
        try:
            yield True
        finally:
            os.close(fd)

    @contextlib.contextmanager
    def removing(self, lab_id: str) -> Iterator[None]:
        """Hold the lab against new users while it is removed; LabError, nothing touched, while a
        command uses it (hold_use). Its use-lock file goes with it."""
        fd = self._lock(lab_id, False, "is in use by a linerate command running on it (--lab); wait for "
                        "it to end, then remove the lab")
        try:
            yield
            if not os.path.lexists(self.path(lab_id)):
                self.use_lock_path(lab_id).unlink(missing_ok=True)
                for suffix in (".http", ".measure"):
                    (self.state_dir / f"{validate_lab_name(lab_id)}{suffix}").unlink(missing_ok=True)
        finally:
            os.close(fd)

    def in_use(self, lab_id: str) -> bool:
        """Does a command hold this lab in use now (hold_use)? Looks only: makes no lock file."""
        try:
            fd = os.open(self.use_lock_path(lab_id), os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        except FileNotFoundError:
            return False
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        finally:
            os.close(fd)
        return False

    def _lock(self, lab_id: str, shared: bool, taken: str, suffix: str = ".use") -> int:
        statedir.ensure(self.state_dir)
        fd = statedir.try_lock(self.state_dir / f"{validate_lab_name(lab_id)}{suffix}", shared=shared)
        if fd is None:
            raise ConfigError("lab", f"'{lab_id}' {taken}")
        return fd

    def vm_dir(self, lab_id: str) -> Path:
        """A VM DUT's files (agent socket, console log, an own image's overlay): derived from the id."""
        return self.state_dir / f"{validate_lab_name(lab_id)}.vm"

    def remove_vm_dir(self, lab_id: str) -> bool:
        """Remove a lab's VM directory — only a real directory of ours at the derived path."""
        import shutil

        path = self.vm_dir(lab_id)
        try:
            info = os.lstat(path)
        except FileNotFoundError:
            return False
        if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.geteuid():
            raise LabError(f"{path} is not a directory of ours (a link?); left untouched")
        shutil.rmtree(path)
        return True

    def all(self) -> list[LabRecord]:
        """Every well-formed record; malformed files go to self.unreadable. Only reads: nothing is
        created or deleted (ConfigError when the directory there is not ours)."""
        self.unreadable = []
        if not statedir.is_ours(self.state_dir):
            return []
        records = []
        for entry in sorted(os.scandir(self.state_dir), key=lambda e: e.name):
            if not entry.name.endswith(".json"):
                continue
            if not LAB_NAME_RE.fullmatch(entry.name[:-5]):
                self.unreadable.append((entry.name, "is not named after a lab id"))
                continue
            try:
                records.append(self._read(Path(entry.path)))
            except (RecordError, OSError) as exc:
                self.unreadable.append((entry.name, str(exc)))
        return records
