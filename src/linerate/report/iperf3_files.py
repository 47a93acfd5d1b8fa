"""`linerate export EXPERIMENT --iperf3-json DIR`: every trial's iperf3 -J output as iperf3 wrote it
and the store kept it (the trials table's raw column), one file per trial, for users who re-plot
in their own tools.

A file is named after its trial: `trial-<trial id>_cell-<cell id>_rep-<repetition>_attempt-<attempt>
_<ok|failed>.json`; a generator pool's trial gives one file per pair, `..._attempt-<attempt>_pair-<N>_<ok|failed>.json`
(each pair's own iperf3 output: the trial's figure is their sum over the common window, pool/window.py). Trials without stored output (a trial that failed before iperf3 ran) are
counted, not written. DIR is created when missing (its parent must exist). An existing DIR must be this
user's and writable by no one else: the file names are linerate's, so a link another user planted under one
would have root write wherever it points. A name already taken by a link or a non-file is refused before
anything is written; a regular file of that name is replaced (a temp file renamed into place,
report/output.py).
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field

from linerate.errors import ConfigError
from linerate.report import output
from linerate.safepath import absolute, untrusted_component
from linerate.store.db import Store

OPTION = "--iperf3-json"


@dataclass
class Iperf3Export:
    directory: str
    experiment_id: int
    files: list[str] = field(default_factory=list)
    without_output: list[int] = field(default_factory=list)  # trial ids

    def to_dict(self) -> dict:
        return {"experiment_id": self.experiment_id, "directory": self.directory, "files": self.files,
                "trials_without_output": self.without_output}


def trial_file_name(row, pair: int | None = None) -> str:
    """The file of a trial's iperf3 output; pair: one pair's of a generator pool's trial (`_pair-N`)."""
    return (f"trial-{row['id']}_cell-{row['cell_id']}_rep-{row['repetition']}_attempt-{row['attempt']}"
            f"{'' if pair is None else f'_pair-{pair}'}_{'ok' if row['status'] == 'ok' else 'failed'}.json")


def check_directory(directory: str) -> None:
    """Before any work: DIR is a directory, or can be made (its parent is one)."""
    if not directory or "\x00" in directory:
        raise ConfigError(OPTION, "is not a directory path")
    steered = untrusted_component(directory)
    if steered is not None:
        raise ConfigError(OPTION, f"{steered}; give a path through folders only you (or root) can write")
    try:
        mode = os.stat(directory).st_mode
    except FileNotFoundError:
        parent = os.path.dirname(absolute(directory))
        if not os.path.isdir(parent):
            raise ConfigError(OPTION, f"{directory}: its parent {parent} is not a directory; create it first") from None
        return
    if not stat.S_ISDIR(mode):
        raise ConfigError(OPTION, f"{directory} exists and is not a directory; name a directory (it is created "
                          "when missing)")
    info = os.stat(directory)
    if info.st_uid != os.geteuid() or info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        raise ConfigError(OPTION, f"{directory} is another user's or others may write to it (a link planted "
                          "there under a trial's file name would be followed); name a new directory, or one of "
                          "yours that only you can write")


def export_iperf3_json(store: Store, experiment_ref: str | None, directory: str) -> Iperf3Export:
    check_directory(directory)
    experiment = store.experiment(experiment_ref)
    rows = store.trial_rows(experiment.id)
    texts = store.trial_texts(row["id"] for row in rows)
    if not any(texts.values()):
        raise ConfigError("experiment", f"'{experiment.name}' has no stored iperf3 output (packet-rate, cps and "
                          "rfc9693 experiments store search trials, not iperf3 runs); export a throughput experiment")
    steered = untrusted_component(directory, make=0o755)
    if steered is not None:
        raise ConfigError(OPTION, f"{steered}; give a path through folders only you (or root) can write")
    check_directory(directory)  # again: what is there now (made by us, or changed since)
    result = Iperf3Export(directory, experiment.id)
    pairs = store.pair_texts(row["id"] for row in rows)  # a pooled trial: one file per pair, none for the sum
    outputs = {row["id"]: sorted(pairs[row["id"]].items()) if row["id"] in pairs else [(None, texts.get(row["id"]))]
               for row in rows}
    planned = [(text, os.path.join(directory, trial_file_name(row, pair)))
               for row in rows for pair, text in outputs[row["id"]] if text]
    for _, path in planned:  # every name checked before the first file is written
        if os.path.lexists(path) and not stat.S_ISREG(os.lstat(path).st_mode):
            raise ConfigError(OPTION, f"{path} exists and is not a regular file (a link?): linerate writes its "
                              "own files only; remove it or name another directory")
    result.without_output = [row["id"] for row in rows if not any(text for _, text in outputs[row["id"]])]
    for text, path in planned:
        output.write(path, text, OPTION)
        result.files.append(path)
    return result
