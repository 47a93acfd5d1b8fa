"""Reports of rfc2544 experiments: the repetitions of each search (same lab, family and frame size)
summarised as NDR and PDR mean ± 95% CI in frames/s and % of the theoretical frame rate, in a
table per family with one row per frame size and one column per lab configuration — the articles'
layout, with frame sizes where they have traffic cases."""

from __future__ import annotations

import csv
import io
import json
from collections import Counter
from dataclasses import dataclass
from typing import Any

from linerate import schema
from linerate.kinds.rfc2544.search import RELATIVE_WIDTH
from linerate.report.csv_export import safe
from linerate.report.layout import markdown_table, md_name, plain
from linerate.stats import Summary, summarize
from linerate.store.db import ExperimentRow, Store
from linerate.traffic import frames
from linerate.traffic.frames import FrameSize

GROUP_DROP = ("repetition",)


@dataclass(frozen=True)
class SizeSummary:
    params: dict[str, Any]  # the search's parameters without its repetition
    configuration: str  # the varying lab parameters, "firewall rules:1000" ("" when nothing varies)
    theoretical_fps: float | None
    ndr: Summary
    pdr: Summary
    generator_max_fps: float | None  # mean of the repetitions' ceiling probes
    limits: dict[str, int]  # what set the NDR, per repetition
    failed: int

    @property
    def family(self) -> int:
        return int(self.params["family"])

    @property
    def frame_bytes(self) -> FrameSize:
        return self.params["frame_bytes"]

    @property
    def mean_frame_bytes(self) -> float:
        return frames.mean_bytes(self.frame_bytes, self.family)

    def share(self, fps: float | None) -> float | None:
        return None if fps is None or not self.theoretical_fps else fps / self.theoretical_fps

    def to_dict(self) -> dict[str, Any]:
        return {"params": self.params, "configuration": self.configuration, "theoretical_fps": self.theoretical_fps,
                "ndr": self.ndr.to_dict(), "pdr": self.pdr.to_dict(), "ndr_share": self.share(self.ndr.mean),
                "pdr_share": self.share(self.pdr.mean), "generator_max_fps": self.generator_max_fps,
                "limits": self.limits, "failed": self.failed}


def group_key(params: dict[str, Any]) -> str:
    return json.dumps({k: v for k, v in params.items() if k not in GROUP_DROP}, sort_keys=True)


def search_groups(store: Store, experiment_id: int) -> dict[str, list[dict[str, Any]]]:
    """group key -> its searches ({"params", "status", "results", "theoretical_fps", ...}) in run order."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for row in store.searches(experiment_id):
        params = json.loads(row["params"])
        groups.setdefault(group_key(params), []).append(
            {"params": params, "status": row["status"], "results": json.loads(row["results"] or "{}"),
             "theoretical_fps": row["theoretical_fps"], "generator_max_fps": row["generator_max_fps"]})
    return groups


def ndr_values(searches: list[dict[str, Any]], goal: str = "ndr") -> list[float]:
    return [s["results"][f"{goal}_fps"] for s in searches
            if s["status"] == "done" and s["results"].get(f"{goal}_fps") is not None]


def varying(groups: dict[str, list[dict[str, Any]]]) -> list[str]:
    params = [json.loads(key) for key in groups]
    names = sorted({k for p in params for k in p} - {"family", "frame_bytes"})
    return [n for n in names if len({json.dumps(p.get(n)) for p in params}) > 1]


def summarize_searches(store: Store, experiment_id: int) -> list[SizeSummary]:
    groups = search_groups(store, experiment_id)
    columns = varying(groups)
    out = []
    for key, searches in groups.items():
        params = json.loads(key)
        done = [s for s in searches if s["status"] == "done"]
        ceilings = [s["generator_max_fps"] for s in done if s["generator_max_fps"]]
        out.append(SizeSummary(
            params, ", ".join(f"{name} {params.get(name)}" for name in columns),
            next((s["theoretical_fps"] for s in searches if s["theoretical_fps"]), None),
            summarize(ndr_values(searches)), summarize(ndr_values(searches, "pdr")),
            sum(ceilings) / len(ceilings) if ceilings else None,
            dict(Counter(s["results"].get("limit", "?") for s in done)), len(searches) - len(done)))
    return sorted(out, key=lambda s: (s.family, frames.sort_key(s.frame_bytes, s.family), s.configuration))


def trial_settings(config: dict[str, Any]) -> tuple[float | None, float]:
    """(search-trial seconds or None, PDR loss ratio) of a stored rfc2544 experiment: `linerate
    rfc2544` stores its goals, experiment files their keys."""
    goals = config.get("goals") or [{}, {}]
    duration = config.get("duration_s") or goals[0].get("final_trial_duration")
    return duration, float(config.get("pdr_loss") or goals[-1].get("loss_ratio", 0.005))


def search_width(config: dict[str, Any]) -> float:
    """The relative width that ended each search (RELATIVE_WIDTH before it could be chosen)."""
    goals = config.get("goals") or [{}]
    return float(config.get("relative_width") or goals[0].get("relative_width") or RELATIVE_WIDTH)


def _figure(summary: Summary, share: float | None) -> str:
    if summary.n == 0 or summary.mean is None:
        return "–"
    text = f"{summary.mean:,.0f}"
    if summary.half_width is not None:
        text += f" ± {summary.half_width:,.0f}"
    return text + (f" ({share * 100:.1f}%)" if share is not None else "")


def cell_text(s: SizeSummary) -> str:
    if s.ndr.n == 0:
        return f"failed ({s.failed})" if s.failed else "–"
    parts = [f"NDR {_figure(s.ndr, s.share(s.ndr.mean))}", f"PDR {_figure(s.pdr, s.share(s.pdr.mean))}",
             f"n={s.ndr.n}" + (" (under 3): CI unreliable" if s.ndr.n < 3 else "")]
    if s.failed:
        parts.append(f"{s.failed} failed")
    limit = max(s.limits, key=s.limits.get) if s.limits else "?"
    if s.generator_max_fps:
        parts.append(f"generator max {s.generator_max_fps:,.0f}")
    return " · ".join(parts) + f" [limit: {limit}]"


def serialize_markdown(experiment: ExperimentRow, summaries: list[SizeSummary]) -> str:
    config = experiment.config if isinstance(experiment.config, dict) else {}
    parts = []
    for family in sorted({s.family for s in summaries}):
        mine = [s for s in summaries if s.family == family]
        columns = list(dict.fromkeys(s.configuration or "throughput" for s in mine))
        rows = []
        for size in dict.fromkeys(s.frame_bytes for s in mine):  # summaries come sorted by size
            by_column = {(s.configuration or "throughput"): s for s in mine if s.frame_bytes == size}
            theoretical = next((s.theoretical_fps for s in by_column.values() if s.theoretical_fps), None)
            label = frames.label(size) + (f" (max {theoretical:,.0f})" if theoretical else "")
            rows.append((label, [cell_text(by_column[c]) if c in by_column else "–" for c in columns]))
        title = (f"{experiment.name} IPv{family} RFC 2544 throughput (frames/s, mean ± 95% CI over repeated "
                 f"searches, % of the theoretical frame rate)")
        parts.append(markdown_table(title, columns, rows))
        parts += [plain(frames.describe(size, family)) + "; its frame rate counts the mean frame"
                  for size in dict.fromkeys(s.frame_bytes for s in mine) if frames.is_mix(size)]
    duration, pdr_loss = trial_settings(config)
    seconds = f"{duration:g}" if isinstance(duration, (int, float)) else "?"
    footer = md_name(f"Experiment {experiment.id} '{experiment.name}', {experiment.status}, seed {experiment.seed}; "
                   f"{seconds} s search trials, NDR loss 0, PDR loss {pdr_loss * 100:g}%, bounds within "
                   f"{search_width(config) * 100:g}%; "
                   "the frame rate counts MAC header to FCS, the theoretical maximum adds preamble, SFD and gap.")
    if not summaries:
        return md_name(f"Experiment {experiment.id} '{experiment.name}': no searches stored yet.") + "\n"
    return "\n\n".join(parts) + "\n\n" + footer + "\n"


def serialize_json(experiment: ExperimentRow, summaries: list[SizeSummary]) -> str:
    doc = {"experiment": {"id": experiment.id, "name": experiment.name, "kind": experiment.kind,
                          "status": experiment.status, "seed": experiment.seed, "config": experiment.config,
                          "environment": experiment.environment},
           "frame_sizes": [s.to_dict() for s in summaries]}
    return schema.dumps(doc) + "\n"


def serialize_csv(experiment: ExperimentRow, summaries: list[SizeSummary]) -> str:
    params = sorted({k for s in summaries for k in s.params})
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    stats = ("n", "mean", "ci_low", "ci_high", "stdev")
    writer.writerow(["experiment", *params, "theoretical_fps", *[f"ndr_fps_{s}" for s in stats],
                     *[f"pdr_fps_{s}" for s in stats], "generator_max_fps", "limits", "failed"])
    for s in summaries:
        ndr, pdr = s.ndr.to_dict(), s.pdr.to_dict()
        writer.writerow([safe(v) for v in [experiment.name, *[s.params.get(p) for p in params], s.theoretical_fps,
                         *[ndr[k] for k in stats], *[pdr[k] for k in stats], s.generator_max_fps,
                         " ".join(f"{k}={v}" for k, v in sorted(s.limits.items())), s.failed]])
    return out.getvalue()


SERIALIZERS = {"md": serialize_markdown, "json": serialize_json, "csv": serialize_csv}
