"""`linerate import`: iperf3 -J files run by hand become an experiment of kind "import".
Each file becomes a trial of the cell its own parameters describe; files whose JSON carries an
"error" are stored as failed trials and reported, never as zeros."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from linerate.errors import LinerateError
from linerate.experiment.axes import AXES
from linerate.store.db import Store, cell_key
from linerate.traffic import iperf3

MAX_IMPORT_BYTES = 50_000_000


def imported_environment(paths: list[Path]) -> dict:
    for path in paths:
        try:
            start = json.loads(path.read_text(encoding="utf-8")).get("start", {})
        except (OSError, ValueError, AttributeError, UnicodeDecodeError):
            continue
        return {"source": "import", "iperf3_version": start.get("version"),
                "system_info": start.get("system_info")}
    return {"source": "import"}


@dataclass
class ImportOutcome:
    experiment_id: int
    stored_ok: int = 0
    errors: list[tuple[str, str]] = field(default_factory=list)


def _cell_for(params) -> dict:
    cell = {name: axis.default for name, axis in AXES.items()}
    cell.update(family=params.family, streams=params.streams, direction=params.direction,
                protocol=params.protocol, duration_s=params.duration_s, omit_s=params.omit_s,
                firewall="unknown", mtu=0)
    if params.protocol == "udp":
        cell["udp_bitrate_bps"] = params.udp_bitrate_bps
    return cell


def import_files(store: Store, paths: list[Path], label: str) -> ImportOutcome:
    experiment_id = store.create_experiment(label, "import", {"files": [str(p) for p in paths]},
                                            environment=imported_environment(paths))
    outcome = ImportOutcome(experiment_id)
    repetitions: dict[str, int] = {}
    for path in paths:
        try:
            if path.stat().st_size > MAX_IMPORT_BYTES:
                raise LinerateError(f"larger than {MAX_IMPORT_BYTES} bytes")
            text = path.read_text(encoding="utf-8")
            params = iperf3.params_from_json(text)
            trial = iperf3.parse(text, params, ["iperf3", "(imported)", str(path)])
        except (OSError, UnicodeDecodeError, ValueError, LinerateError, AttributeError, TypeError) as exc:
            outcome.errors.append((str(path), str(exc) or type(exc).__name__))
            continue
        cell = _cell_for(params)
        key = cell_key(cell)
        cell_id = store.ensure_cells(experiment_id, [cell])[key]
        repetitions[key] = repetitions.get(key, 0) + 1
        store.add_trial(cell_id, repetitions[key], 1, trial, final=True)
        if trial.ok:
            outcome.stored_ok += 1
        else:
            outcome.errors.append((str(path), f"iperf3 reported: {trial.error}"))
    store.finish_experiment(experiment_id, "done")
    return outcome
