"""JSON: the experiment, its environment, and every cell with parameters and statistics."""

from __future__ import annotations

from linerate.report.data import Report
from linerate.schema import dumps


def serialize(report: Report) -> str:
    exp = report.experiment
    doc = {
        "experiment": {"id": exp.id, "name": exp.name, "kind": exp.kind, "status": exp.status, "seed": exp.seed,
                       "started_at": exp.started_at, "ended_at": exp.ended_at, "config": exp.config,
                       "environment": exp.environment},
        "cells": [{"cell_id": c.cell_id, "params": c.params, "stats": c.summary.to_dict(), "flags": list(c.flags),
                   "few_trials": c.few_trials, "precision_reached": c.precision_reached,
                   "ceiling_bps": c.ceiling_bps, "line_rate_fraction": c.line_rate_fraction,
                   "line_rate_source": c.line_rate_source or "line rate unknown",
                   "verdicts": [v.to_dict() for v in c.verdicts], **({"pairs": list(c.pairs)} if c.pairs else {})}
                  for c in report.cells],
    }
    return dumps(doc) + "\n"
