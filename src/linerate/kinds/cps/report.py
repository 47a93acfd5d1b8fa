"""Reports of cps experiments, pure functions of the stored searches: per configuration (object
size, family, lab axes) the repetitions' connection rates as mean ± 95% Student-t interval
(linerate.stats), what limited them — and, in a section of its own, every limit that was not the
DUT's (the client's ports or pace, the server), quoted with its evidence and what to change, so a
client's ceiling is never read as the DUT's. At the rate found: connect and first-byte times
(h2load's mean and max; its median/p95/p99 too from h2load 1.69 on) and request-time percentiles
from h2load's per-request log."""

from __future__ import annotations

import csv
import io
import json
from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import Any

from linerate.diagnose.state_rules import state_verdicts
from linerate.report.csv_export import safe
from linerate.report.layout import markdown_table, md_cell, md_name
from linerate.stats import Summary, summarize
from linerate.report.data import by_configuration, dut_os_family, kind_searches
from linerate.store.db import ExperimentRow, Store
from linerate.traffic.nginx import object_name

NOT_DUT = ("client", "server")


def cps_searches(store: Store, experiment_id: int) -> list[dict[str, Any]]:
    """Every cps search of the experiment, with its trials' figures (the state verdicts read them)."""
    return kind_searches(store, experiment_id, "cps", trial_figures=True)


def groups(store: Store, experiment_id: int) -> dict[str, list[dict[str, Any]]]:
    return by_configuration(cps_searches(store, experiment_id))


def cps_values(searches: list[dict[str, Any]]) -> list[float]:
    return [s["results"]["cps"] for s in searches if s["status"] == "done" and s["results"].get("cps") is not None]


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def _at(search: dict[str, Any], *path: str) -> float | None:
    value: Any = search["results"].get("at_cps")
    for step in path:
        value = value.get(step) if isinstance(value, dict) else None
    return value if isinstance(value, (int, float)) else None


@dataclass(frozen=True)
class CpsSummary:
    params: dict[str, Any]  # without repetition
    configuration: str
    cps: Summary
    limits: dict[str, int]  # limit -> searches
    not_dut: list[dict[str, Any]] = field(default_factory=list)  # evidence of client/server limits
    warnings: list[str] = field(default_factory=list)
    connect_mean_s: float | None = None
    connect_max_s: float | None = None
    ttfb_mean_s: float | None = None
    ttfb_max_s: float | None = None
    request_p50_s: float | None = None
    request_p99_s: float | None = None
    failed_at_cps: int = 0
    connections_at_cps: int | None = None  # the smallest trial that set a result
    failed_searches: int = 0
    state: list[dict[str, str]] = field(default_factory=list)  # state-table verdicts of its failing trials

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "cps": self.cps.to_dict()}


def _configuration(params: dict[str, Any], varying: list[str]) -> str:
    return ", ".join(f"{name} {params[name]}" for name in varying if name in params)


def state_findings(searches: list[dict[str, Any]], os_name: str) -> list[dict[str, str]]:
    """The state-table verdicts (diagnose/state_rules.py) of the trials that lost connections, read
    around each trial from the DUT: one per code, the first trial's evidence."""
    found: dict[str, dict[str, str]] = {}
    for search in searches:
        for figures in (search["results"].get("trial_figures") or {}).values():
            if not figures.get("failed") or not figures.get("state_after"):
                continue
            for verdict in state_verdicts(figures.get("state_before") or None, figures["state_after"], os_name,
                                          figures.get("state_timeouts") or None):
                found.setdefault(verdict.code, verdict.to_dict())
    return list(found.values())


def dut_os(experiment: ExperimentRow) -> str:
    """The DUT's OS family from the experiment's host fingerprints (a lab or VM DUT: Linux)."""
    return dut_os_family(experiment.environment) or "linux"


def summarize_cps(store: Store, experiment_id: int) -> list[CpsSummary]:
    os_name = dut_os(store.experiment(experiment_id))
    found = groups(store, experiment_id)
    all_params = [json.loads(key) for key in found]
    lab_names = sorted({k for p in all_params for k in p} - {"object_bytes", "family"})
    varying = [name for name in lab_names if len({json.dumps(p.get(name)) for p in all_params}) > 1]
    out = []
    for key, searches in found.items():
        params = json.loads(key)
        done = [s for s in searches if s["status"] == "done"]
        limits = Counter(s["results"].get("limit", "unknown") for s in done)
        not_dut = [{"repetition": s["params"].get("repetition"), "limit": s["results"].get("limit"), **evidence}
                   for s in done for evidence in s["results"].get("limit_evidence", [])
                   if s["results"].get("upper_verdict") in NOT_DUT]
        at = [s for s in done if s["results"].get("at_cps")]
        connections = [c for c in (_at(s, "connections") for s in at) if c is not None]
        out.append(CpsSummary(
            params=params, configuration=_configuration(params, varying), cps=summarize(cps_values(searches)),
            limits=dict(limits), not_dut=not_dut,
            warnings=sorted({w for s in done for w in s["results"].get("warnings", [])}),
            connect_mean_s=_mean([v for s in at if (v := _at(s, "timings", "connect", "mean")) is not None]),
            connect_max_s=max([v for s in at if (v := _at(s, "timings", "connect", "max")) is not None], default=None),
            ttfb_mean_s=_mean([v for s in at if (v := _at(s, "timings", "ttfb", "mean")) is not None]),
            ttfb_max_s=max([v for s in at if (v := _at(s, "timings", "ttfb", "max")) is not None], default=None),
            request_p50_s=_mean([v for s in at if (v := _at(s, "request_percentiles", "p50")) is not None]),
            request_p99_s=_mean([v for s in at if (v := _at(s, "request_percentiles", "p99")) is not None]),
            failed_at_cps=int(sum(_at(s, "failed") or 0 for s in at)),
            connections_at_cps=int(min(connections)) if connections else None,
            failed_searches=len(searches) - len(done), state=state_findings(searches, os_name)))
    return sorted(out, key=lambda s: (s.params.get("family", 4), s.configuration, s.params.get("object_bytes", 0)))


def _ms(seconds: float | None) -> str:
    if seconds is None:
        return "–"
    ms = seconds * 1000
    return f"{ms:.3f}" if ms < 1 else f"{ms:.1f}"


def _rate(value: float | None) -> str:
    return "–" if value is None else f"{value:,.0f}"


def _label(summary: CpsSummary) -> str:
    label = f"IPv{summary.params.get('family', 4)} {object_name(summary.params['object_bytes'])}"
    return f"{label}, {summary.configuration}" if summary.configuration else label


LOWER_BOUND = ("client", "server", "max_rate")  # limits that leave the DUT's rate above the figure


def percent(ratio: float) -> str:
    return f"{ratio * 100:g}%"


def to_markdown(experiment: ExperimentRow, summaries: list[CpsSummary], tools: str, loss_target: float) -> str:
    rows = []
    for s in summaries:
        ci = "–" if s.cps.ci_low is None else f"{_rate(s.cps.ci_low)} – {_rate(s.cps.ci_high)}"
        limit = ", ".join(f"{name} ×{n}" if n > 1 else name for name, n in sorted(s.limits.items())) or "–"
        at_least = "≥ " if s.cps.mean is not None and set(s.limits) & set(LOWER_BOUND) else ""
        rows.append((_label(s), [at_least + _rate(s.cps.mean), ci, str(s.cps.n), limit,
                                 f"{_ms(s.connect_mean_s)} / {_ms(s.connect_max_s)}",
                                 f"{_ms(s.ttfb_mean_s)} / {_ms(s.ttfb_max_s)}",
                                 f"{_ms(s.request_p50_s)} / {_ms(s.request_p99_s)}", str(s.failed_at_cps)]))
    lines = [f"# Connections per second: {md_name(experiment.name)} (experiment {experiment.id})", "",
             f"RFC 9411 section 7.2 shape: one HTTP/1.1 GET per connection ({md_name(tools)}), the client closes "
             f"first unless the file says otherwise; a trial passes below {percent(loss_target)} failed connections. "
             "Each search doubles the rate from start_rate, then bisects; CPS is the highest rate that passed, mean "
             "and 95% CI over repetitions (≥: the search stopped at the client, the server or max_rate, not the "
             "DUT).",
             "", markdown_table("object", ["CPS (conn/s)", "95% CI", "n", "limit", "connect ms mean / max",
                                           "TTFB ms mean / max", "request ms p50 / p99", "failed at CPS"], rows)]
    small = [s for s in summaries if s.connections_at_cps and s.connections_at_cps * loss_target < 1]
    if small:
        lines += ["", f"Trials at the rates found had {min(s.connections_at_cps for s in small):,} connections or "
                  f"more but fewer than {1 / loss_target:,.0f}: one failed connection is already above the target, "
                  "so these rates are zero-failure rates; longer trials (duration_s) test the "
                  f"{percent(loss_target)} criterion itself."]
    bounded = [s for s in summaries if s.not_dut]
    if bounded:
        lines += ["", "## Limits that were not the DUT's", "",
                  "These rates are lower bounds of the DUT's: the search stopped because of the client or the server."]
        for s in bounded:
            lines.append("")
            lines += [f"- {md_cell(_label(s))}, repetition {item.get('repetition')}: {md_cell(item['evidence'])}"
                      for item in s.not_dut]
            advice = dict.fromkeys(item["advice"] for item in s.not_dut)
            lines += [f"  - what to change: {md_cell(text)}" for text in advice]
    states = [(s, v) for s in summaries for v in s.state]
    if states:
        lines += ["", "## The DUT's state table", ""]
        for s, v in states:
            lines += [f"- {md_cell(_label(s))}: **{md_cell(v['code'])}** — {md_cell(v['title'])}",
                      f"  - evidence: {md_cell(v['evidence'])}", f"  - what to do: {md_cell(v['advice'])}"]
    if any(s.warnings for s in summaries):
        lines += ["", "## Warnings (in trials that passed)", ""]
        lines += [f"- {md_cell(_label(s))}: {md_cell(w)}" for s in summaries for w in s.warnings]
    failed = [s for s in summaries if s.failed_searches]
    if failed:
        lines += ["", "Searches that did not finish: " + ", ".join(f"{md_cell(_label(s))} ({s.failed_searches})"
                                                                    for s in failed)]
    return "\n".join(lines) + "\n"


def to_json(experiment: ExperimentRow, summaries: list[CpsSummary], searches: list[dict[str, Any]]) -> str:
    rows = [{"params": s["params"], "status": s["status"], "error": s["error"],
             **{k: v for k, v in s["results"].items() if k != "trial_figures"}} for s in searches]
    return json.dumps({"experiment": experiment.name, "id": experiment.id, "test": "cps",
                       "configurations": [s.to_dict() for s in summaries], "searches": rows},
                      indent=2, default=str) + "\n"


CSV_FIGURES = ("cps", "upper", "upper_verdict", "limit", "trials")


def to_csv(experiment: ExperimentRow, searches: list[dict[str, Any]]) -> str:
    names = sorted({k for s in searches for k in s["params"]} - {"test"})
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["experiment", *names, "status", *CSV_FIGURES, "connect_mean_s", "ttfb_mean_s", "request_p50_s",
                     "request_p99_s", "failed_at_cps", "connections_at_cps"])
    for s in searches:
        writer.writerow([safe(v) for v in [
            experiment.name, *[s["params"].get(n) for n in names], s["status"],
            *[s["results"].get(f) for f in CSV_FIGURES], _at(s, "timings", "connect", "mean"),
            _at(s, "timings", "ttfb", "mean"), _at(s, "request_percentiles", "p50"),
            _at(s, "request_percentiles", "p99"), _at(s, "failed"), _at(s, "connections")]])
    return out.getvalue()


def render(store: Store, experiment: ExperimentRow, fmt: str, loss_target: float) -> str:
    searches = cps_searches(store, experiment.id)
    summaries = summarize_cps(store, experiment.id)
    if fmt == "json":
        return to_json(experiment, summaries, searches)
    if fmt == "csv":
        return to_csv(experiment, searches)
    clients = sorted({s["generator"] or "h2load" for s in searches}) or ["h2load"]
    servers = sorted({s["results"].get("server") or "nginx" for s in searches}) or ["nginx"]
    tools = f"client {', '.join(clients)}, server {', '.join(servers)}"
    return to_markdown(experiment, summaries, tools, loss_target)
