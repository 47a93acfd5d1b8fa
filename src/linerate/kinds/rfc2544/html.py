"""`linerate report RFC2544-EXPERIMENT --format html`: one self-contained page, like the throughput
report (report/html.py: the same base template, autoescaped, no script, charts as inline SVG) —
the NDR/PDR table per family (mean ± 95% CI, % of the theoretical frame rate, generator ceiling,
what set the limit), the throughput-vs-frame-size chart, every search with every one of its
trials (so a reader can see which loads failed and why: DUT loss or unsent frames), the
environment and the experiment file."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from linerate.kinds.rfc2544.report import search_groups, summarize_searches, trial_settings, varying
from linerate.report.evidence import environment_sections
from linerate.report.html import templates
from linerate.store.db import ExperimentRow, Store
from linerate.traffic import frames


@dataclass
class SearchView:
    label: str  # "IPv4 64 B · firewall none · repetition 2"
    status: str
    ndr_fps: float | None
    pdr_fps: float | None
    limit: str
    generator: str
    library: str
    error: str | None
    trials: list[dict[str, Any]] = field(default_factory=list)


def search_views(store: Store, experiment_id: int, columns: list[str]) -> list[SearchView]:
    views = []
    for row in store.searches(experiment_id):
        params, results = json.loads(row["params"]), json.loads(row["results"] or "{}")
        parts = [f"IPv{params.get('family', 4)} {frames.label(params['frame_bytes'])}"]
        parts += [f"{name} {params[name]}" for name in columns if name in params]
        if "repetition" in params:
            parts.append(f"repetition {params['repetition']}")
        trials = [dict(trial) for trial in store.search_trials(row["id"])]
        views.append(SearchView(" · ".join(parts), row["status"], results.get("ndr_fps"), results.get("pdr_fps"),
                                results.get("limit", "–"), row["generator"] or "–", row["library"], row["error"],
                                trials))
    return views


def render_search_report(store: Store, experiment: ExperimentRow) -> str:
    from linerate.kinds.rfc2544.plot import frame_size_figure  # matplotlib
    from linerate.report.plot import svg_text  # matplotlib: only when a page is rendered
    summaries = summarize_searches(store, experiment.id)
    families = []
    for family in sorted({s.family for s in summaries}):
        mine = [s for s in summaries if s.family == family]
        columns = list(dict.fromkeys(s.configuration or "throughput" for s in mine))
        rows = [(size, {(s.configuration or "throughput"): s for s in mine if s.frame_bytes == size})
                for size in dict.fromkeys(s.frame_bytes for s in mine)]
        mixes = [frames.describe(size, family) for size, _ in rows if frames.is_mix(size)]
        families.append({"family": family, "columns": columns, "rows": rows, "mixes": mixes})
    chart = None
    if any(s.ndr.n for s in summaries):
        chart = svg_text(frame_size_figure(experiment, summaries), "NDR per frame size, mean with 95% confidence "
                         "interval, against the theoretical frame rate and the generator's ceiling")
    config = experiment.config if isinstance(experiment.config, dict) else {}
    environment = experiment.environment if isinstance(experiment.environment, dict) else {}
    duration, pdr_loss = trial_settings(config)
    return templates().get_template("rfc2544.html.j2").render(
        exp=experiment, families=families, chart=chart, config=config, label=frames.label, duration=duration,
        pdr_loss=pdr_loss,
        searches=search_views(store, experiment.id, varying(search_groups(store, experiment.id))),
        environment=environment_sections(environment), stored_version=environment.get("linerate_version"))
