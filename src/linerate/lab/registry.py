"""State files for labs: what each lab created, so that teardown removes exactly that.

A record is written *before* each namespace or process is created, so a lab whose process was
killed (even with SIGKILL) can be found and removed by `linerate lab clean` — and only such labs:
a record whose owner process is still alive, or that was made by `lab up` to be kept, is left alone.
Processes are identified by pid *and* start time, so a recycled pid is never signalled.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

DEFAULT_STATE_DIR = "/run/linerate/labs"


def process_start_time(pid: int) -> int | None:
    """Start time in clock ticks since boot (field 22 of /proc/PID/stat), None if gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # The command name (field 2) may contain spaces and parentheses; fields follow the last ')'.
    return int(stat.rsplit(")", 1)[1].split()[19])


@dataclass(frozen=True)
class ProcessRef:
    pid: int
    start_time: int | None

    @classmethod
    def of(cls, pid: int) -> "ProcessRef":
        return cls(pid, process_start_time(pid))

    def alive(self) -> bool:
        return self.start_time is not None and process_start_time(self.pid) == self.start_time


@dataclass
class LabRecord:
    lab_id: str
    firewall: str
    mtu: int
    owner: ProcessRef | None  # None: kept on purpose (`lab up`), removed only by `lab down`
    created: float = field(default_factory=time.time)
    namespaces: list[str] = field(default_factory=list)
    servers: list[ProcessRef] = field(default_factory=list)

    def orphaned(self) -> bool:
        return self.owner is not None and not self.owner.alive()

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=2)

    @classmethod
    def from_json(cls, text: str) -> "LabRecord":
        doc = json.loads(text)
        owner = ProcessRef(**doc["owner"]) if doc.get("owner") else None
        servers = [ProcessRef(**s) for s in doc.get("servers", [])]
        return cls(
            lab_id=doc["lab_id"], firewall=doc["firewall"], mtu=doc["mtu"], owner=owner,
            created=doc.get("created", 0.0), namespaces=list(doc.get("namespaces", [])), servers=servers,
        )


class Registry:
    def __init__(self, state_dir: str | os.PathLike[str] | None = None):
        self.state_dir = Path(state_dir or os.environ.get("LINERATE_STATE_DIR") or DEFAULT_STATE_DIR)

    def path(self, lab_id: str) -> Path:
        return self.state_dir / f"{lab_id}.json"

    def save(self, record: LabRecord) -> None:
        self.state_dir.mkdir(parents=True, exist_ok=True)
        tmp = self.path(record.lab_id).with_suffix(".tmp")
        tmp.write_text(record.to_json())
        os.replace(tmp, self.path(record.lab_id))  # atomic: a kill never leaves half a record

    def load(self, lab_id: str) -> LabRecord | None:
        try:
            return LabRecord.from_json(self.path(lab_id).read_text())
        except FileNotFoundError:
            return None

    def remove(self, lab_id: str) -> None:
        self.path(lab_id).unlink(missing_ok=True)

    def all(self) -> list[LabRecord]:
        if not self.state_dir.is_dir():
            return []
        records = []
        for path in sorted(self.state_dir.glob("*.json")):
            try:
                records.append(LabRecord.from_json(path.read_text()))
            except (OSError, ValueError, KeyError):
                continue
        return records
