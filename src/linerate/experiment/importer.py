"""`linerate import`: iperf3 -J files run by hand become an experiment of kind "import".
Each file becomes a trial of the cell its own parameters describe; files whose JSON carries an
"error" are stored as failed trials and reported, never as zeros. A file that is not iperf3 -J
output at all refuses the import (exit 2), before anything is stored."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from linerate.axes import AXES
from linerate.errors import ConfigError, ParseError
from linerate.inputs import read_text
from linerate.store.db import Store, cell_key
from linerate.traffic import iperf3

MAX_IMPORT_BYTES = 50_000_000
LABEL_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$")


def imported_environment(texts: list[str]) -> dict:
    for text in texts:
        start = json.loads(text).get("start")
        if isinstance(start, dict):
            version, info = start.get("version"), start.get("system_info")
            return {"source": "import", "iperf3_version": version if isinstance(version, str) else None,
                    "system_info": info[:500] if isinstance(info, str) else None}
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


def parse_files(paths: list[Path]) -> list[tuple[Path, str, object]]:
    """Read and parse every file before anything is stored: one malformed file (not iperf3 -J
    output, or a figure that is not a finite, non-negative number) refuses the whole import with a
    ConfigError naming the file and the field — nothing half-imported."""
    parsed = []
    for path in paths:
        text = read_text(path, MAX_IMPORT_BYTES, "iperf3 -J output file")
        try:
            params = iperf3.params_from_json(text, str(path))
            trial = iperf3.parse(text, params, ["iperf3", "(imported)", str(path)], str(path))
        except (ParseError, ConfigError) as exc:
            raise ConfigError(str(path), f"{exc}; fix the file or leave it out of the import") from None
        parsed.append((path, text, trial))
    return parsed


def check_label(label: str) -> str:
    if not LABEL_RE.fullmatch(label):
        raise ConfigError("--label", f"{label[:40]!r} is not a name; use letters, digits, '.', '_' or '-' "
                          "(up to 100, starting with a letter or digit)")
    return label


def store_parsed(store: Store, parsed: list[tuple[Path, str, object]], label: str) -> ImportOutcome:
    paths = [path for path, _, _ in parsed]
    experiment_id = store.create_experiment(label, "import", {"files": [str(p) for p in paths]},
                                            environment=imported_environment([text for _, text, _ in parsed]))
    outcome = ImportOutcome(experiment_id)
    repetitions: dict[str, int] = {}
    for path, _text, trial in parsed:
        cell = _cell_for(trial.params)
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
