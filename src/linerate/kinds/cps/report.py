"""Reports of cps experiments, pure functions of the stored searches: per configuration (object
size, family, lab axes) the repetitions' connection rates as mean ± 95% Student-t interval
(linerate.stats), what limited them — and, in a section of its own, every limit that was not the
DUT's (the client's ports or pace, the server), quoted with its evidence and what to change, so a
client's ceiling is never read as the DUT's. At the rate found: connect and first-byte time
percentiles from the client's packet capture (traffic/tcp_timings.py; h2load's own mean and max
without one) and request-time percentiles from h2load's per-request log."""

from __future__ import annotations

import csv
import dataclasses
import io
import json
from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import Any

from linerate import schema
from linerate.diagnose.state_rules import state_verdicts
from linerate.dut.base import dut_os_family
from linerate.report.csv_export import safe
from linerate.report.data import by_configuration, kind_searches, line_rate
from linerate.kinds.cps.trial import FIGURES
from linerate.report.layout import markdown_table, md_cell, md_name
from linerate.stats import Summary, summarize
from linerate.store.db import ExperimentRow, Store
from linerate.traffic.nginx import object_name

NOT_DUT = ("client", "server")


def cps_searches(store: Store, experiment_id: int) -> list[dict[str, Any]]:
    """Every cps search of the experiment, with its trials' figures (the state verdicts read them)."""
    return kind_searches(store, experiment_id, "cps", figures=FIGURES)


def groups(store: Store, experiment_id: int) -> dict[str, list[dict[str, Any]]]:
    return by_configuration(cps_searches(store, experiment_id))


def cps_values(searches: list[dict[str, Any]]) -> list[float]:
    return [s["results"]["cps"] for s in searches if s["status"] == "done" and s["results"].get("cps") is not None]


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def _figure(search: dict[str, Any], section: str, *path: str) -> float | None:
    """A number in a search's results: results[section][path...]; None where there is none."""
    value: Any = search["results"].get(section)
    for step in path:
        value = value.get(step) if isinstance(value, dict) else None
    return value if isinstance(value, (int, float)) else None


def _at(search: dict[str, Any], *path: str) -> float | None:
    """At the rate found (the trial that set the result)."""
    return _figure(search, "at_cps", *path)


def _latency(search: dict[str, Any], *path: str) -> float | None:
    """In the latency trial after the search."""
    return _figure(search, "latency", *path)


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
    latency_rate: float | None = None  # the latency trials' rate (latency_load x CPS), mean over repetitions
    latency_failed: int = 0
    connect_p50_s: float | None = None  # from the latency trials' capture, mean over the repetitions
    connect_p99_s: float | None = None
    ttfb_p50_s: float | None = None
    ttfb_p90_s: float | None = None
    ttfb_p99_s: float | None = None
    response_p50_s: float | None = None  # the client's request to the server's first byte, on the wire
    response_p99_s: float | None = None
    client_delay_p50_s: float | None = None  # the SYN-ACK to the client's request: the client's own share
    timed_connections: int = 0  # the connections those percentiles are over, all repetitions
    syn_retransmits: int = 0  # connections whose SYN was sent again, in the latency trials
    failed_at_cps: int = 0
    connections_at_cps: int | None = None  # the smallest trial that set a result
    failed_searches: int = 0
    state: list[dict[str, str]] = field(default_factory=list)  # state-table verdicts of its failing trials
    late: list[str] = field(default_factory=list)  # why the upper bounds failed with every connection done
    payload_bps: float | None = None  # CPS x object size: the objects alone, bit/s
    ceiling_bps: float | None = None  # the link's TCP goodput ceiling (report/data.line_rate)
    ceiling_source: str | None = None

    @property
    def at_line_rate(self) -> bool:
        return bool(self.payload_bps and self.ceiling_bps and self.payload_bps >= LINE_SHARE * self.ceiling_bps)

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "cps": self.cps.to_dict(), "at_line_rate": self.at_line_rate}


def _configuration(params: dict[str, Any], varying: list[str]) -> str:
    return ", ".join(f"{name} {params[name]}" for name in varying if name in params)


def state_findings(searches: list[dict[str, Any]], os_name: str) -> list[dict[str, str]]:
    """The state-table verdicts (diagnose/state_rules.py) of the trials that lost connections, read
    around each trial from the DUT: one per code, the first trial's evidence."""
    found: dict[str, dict[str, str]] = {}
    for search in searches:
        for figures in search.get("trial_figures", {}).values():
            if not figures.get("failed") or not figures.get("state_after"):
                continue
            for verdict in state_verdicts(figures.get("state_before") or None, figures["state_after"], os_name,
                                          figures.get("state_timeouts") or None):
                found.setdefault(verdict.code, verdict.to_dict())
    return list(found.values())


def dut_os(experiment: ExperimentRow) -> str:
    """The DUT's OS family from the experiment's host fingerprints (a lab or VM DUT: Linux)."""
    return dut_os_family(experiment.environment) or "linux"


def at_least_the_bracket(rates: Summary, done: list[dict]) -> Summary:
    """The repetitions' interval, never narrower than what each search resolved: a search ends with the rate
    between its highest pass and its lowest failure, and later repetitions start at the bracket the one before
    found (search.py), so on a steady box they repeat it exactly and their own spread says ±0."""
    widths = [s["results"]["upper"] - s["results"]["cps"] for s in done
              if s["results"].get("upper") is not None and s["results"].get("cps") is not None]
    if rates.mean is None or rates.ci_low is None or not widths:
        return rates
    half = sum(widths) / len(widths) / 2
    return dataclasses.replace(rates, ci_low=min(rates.ci_low, rates.mean - half),
                               ci_high=max(rates.ci_high, rates.mean + half))


def summarize_cps(store: Store, experiment_id: int) -> list[CpsSummary]:
    experiment = store.experiment(experiment_id)
    os_name = dut_os(experiment)
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
        rates = at_least_the_bracket(summarize(cps_values(searches)), done)
        ceiling, source = line_rate(params, experiment.environment)
        out.append(CpsSummary(
            params=params, configuration=_configuration(params, varying), cps=rates,
            payload_bps=None if rates.mean is None else rates.mean * params.get("object_bytes", 0) * 8,
            ceiling_bps=ceiling, ceiling_source=source,
            limits=dict(limits), not_dut=not_dut,
            warnings=sorted({w for s in done for w in s["results"].get("warnings", [])}),
            connect_mean_s=_mean([v for s in at if (v := _at(s, "timings", "connect", "mean")) is not None]),
            connect_max_s=max([v for s in at if (v := _at(s, "timings", "connect", "max")) is not None], default=None),
            ttfb_mean_s=_mean([v for s in at if (v := _at(s, "timings", "ttfb", "mean")) is not None]),
            ttfb_max_s=max([v for s in at if (v := _at(s, "timings", "ttfb", "max")) is not None], default=None),
            request_p50_s=_mean([v for s in at if (v := _at(s, "request_percentiles", "p50")) is not None]),
            request_p99_s=_mean([v for s in at if (v := _at(s, "request_percentiles", "p99")) is not None]),
            **_captured(done),
            failed_at_cps=int(sum(_at(s, "failed") or 0 for s in at)),
            connections_at_cps=int(min(connections)) if connections else None,
            failed_searches=len(searches) - len(done), state=state_findings(searches, os_name),
            late=list(dict.fromkeys(e for s in done if (e := s["results"].get("late_evidence"))))[:1]))
    return sorted(out, key=lambda s: (s.params.get("family", 4), s.configuration, s.params.get("object_bytes", 0)))


def _captured(done: list[dict[str, Any]]) -> dict[str, Any]:
    """The capture's figures of the searches' latency trials: each percentile the mean over the
    repetitions."""
    def mean_of(*path: str) -> float | None:
        return _mean([v for s in done if (v := _latency(s, "capture", *path)) is not None])

    return {"latency_rate": _mean([v for s in done if (v := _latency(s, "rate")) is not None]),
            "latency_failed": int(sum(_latency(s, "failed") or 0 for s in done)),
            "connect_p50_s": mean_of("connect", "p50"), "connect_p99_s": mean_of("connect", "p99"),
            "ttfb_p50_s": mean_of("ttfb", "p50"), "ttfb_p90_s": mean_of("ttfb", "p90"),
            "ttfb_p99_s": mean_of("ttfb", "p99"), "response_p50_s": mean_of("response", "p50"),
            "response_p99_s": mean_of("response", "p99"), "client_delay_p50_s": mean_of("client_delay", "p50"),
            "timed_connections": int(sum(_latency(s, "capture", "connections") or 0 for s in done)),
            "syn_retransmits": int(sum(_latency(s, "capture", "connections_with_syn_retransmits") or 0
                                       for s in done))}


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


TIME_HEADERS = {True: ["connect ms p50 / p99", "TTFB ms p50 / p99", "response ms p50 / p99"],
                False: ["connect ms mean / max", "TTFB ms mean / max", "request ms p50 / p99"]}
CLIENT_DELAY_S = 0.001  # a median client delay above this (and above the connect time) is said


def _time_cells(s: CpsSummary, captured: bool) -> list[str]:
    """Percentiles from the capture; h2load's mean and max where the run had no capture."""
    if captured:
        return [f"{_ms(s.connect_p50_s)} / {_ms(s.connect_p99_s)}", f"{_ms(s.ttfb_p50_s)} / {_ms(s.ttfb_p99_s)}",
                f"{_ms(s.response_p50_s)} / {_ms(s.response_p99_s)}"]
    return [f"{_ms(s.connect_mean_s)} / {_ms(s.connect_max_s)}", f"{_ms(s.ttfb_mean_s)} / {_ms(s.ttfb_max_s)}",
            f"{_ms(s.request_p50_s)} / {_ms(s.request_p99_s)}"]


LOWER_BOUND = ("client", "server", "served late", "max_rate")  # limits that leave the DUT's rate above the figure
LINE_SHARE = 0.9  # objects carried at this share of the link's TCP ceiling or more: the link is the limit
WIDE = 0.25  # a 95% interval's half-width above this share of the mean is said


def percent(ratio: float) -> str:
    return f"{ratio * 100:g}%"


def to_markdown(experiment: ExperimentRow, summaries: list[CpsSummary], tools: str, loss_target: float) -> str:
    rows = []
    captured = any(s.ttfb_p50_s is not None for s in summaries)
    for s in summaries:
        ci = "–" if s.cps.ci_low is None else f"{_rate(s.cps.ci_low)} – {_rate(s.cps.ci_high)}"
        ci += " (n under 3: CI unreliable)" if s.cps.n == 2 else ""
        limit = ", ".join(f"{name} ×{n}" if n > 1 else name for name, n in sorted(s.limits.items())) or "–"
        bounds = set(s.limits) & set(LOWER_BOUND) - ({"served late"} if s.at_line_rate else set())
        limit += " (line rate)" if s.at_line_rate else ""
        at_least = "≥ " if s.cps.mean is not None and bounds else ""
        rows.append((_label(s), [at_least + _rate(s.cps.mean), ci, str(s.cps.n), limit,
                                 *_time_cells(s, captured), str(s.failed_at_cps)]))
    lines = [f"# Connections per second: {md_name(experiment.name)} (experiment {experiment.id})", "",
             f"RFC 9411 section 7.2 shape: one HTTP/1.1 GET per connection ({md_name(tools)}), the client closes "
             f"first unless the file says otherwise; a trial passes below {percent(loss_target)} failed connections. "
             "Each search doubles the rate from start_rate, then bisects; CPS is the highest rate that passed, mean "
             "and 95% CI over repetitions (≥: the search stopped at the client, the server, responses served late "
             "or max_rate, not provably the DUT).",
             "", markdown_table("object", ["CPS (conn/s)", "95% CI", "n", "limit", *TIME_HEADERS[captured],
                                           "failed at CPS"], rows)]
    if captured:
        lines += ["", "Times per connection, in a latency trial after each search at " + ", ".join(
            f"{_rate(s.latency_rate)} conn/s" for s in summaries if s.latency_rate is not None) + " (a share of the "
            "rate found: RFC 9411 section 7.4), from a packet capture on the client (tcpdump): connect is the first "
            "SYN to the SYN-ACK, TTFB the first SYN to the server's first data, response the client's request to "
            "the server's first data (the DUT's and the server's share of TTFB); percentiles over "
            f"{sum(s.timed_connections for s in summaries):,} connections, each the mean over the repetitions."]
        failing = [s for s in summaries if s.latency_failed]
        if failing:
            lines += ["", "Latency trials lost connections (" + ", ".join(
                f"{md_cell(_label(s))}: {s.latency_failed:,}" for s in failing) + "): their times are over the "
                "connections that completed."]
    slow_client = [s for s in summaries if s.client_delay_p50_s is not None and s.client_delay_p50_s > CLIENT_DELAY_S
                   and s.client_delay_p50_s > (s.connect_p50_s or 0)]
    if slow_client:
        lines += ["", "The client was slow to send its requests (" + ", ".join(
            f"{md_cell(_label(s))}: {_ms(s.client_delay_p50_s)} ms median from the SYN-ACK" for s in slow_client)
            + "): that part of TTFB is the client's own (a busy h2load notices a connection late); the response "
            "column leaves it out."]
    retransmitted = [s for s in summaries if s.syn_retransmits]
    if retransmitted:
        lines += ["", "SYNs were sent again in the latency trials (" + ", ".join(
            f"{md_cell(_label(s))}: {s.syn_retransmits:,} connections" for s in retransmitted) + "): the DUT or the "
            "server dropped them, and those connections' times include the kernel's 1 s retransmission timeout "
            "(RFC 6298) — the tail percentiles show it."]
    wide = [s for s in summaries if s.cps.n >= 3 and (s.cps.relative_half_width or 0) > WIDE]
    if wide:
        lines += ["", "The repetitions disagree (" + ", ".join(
            f"{md_cell(_label(s))}: ±{s.cps.relative_half_width * 100:.0f}% of the mean" for s in wide) + "): the "
            "rate found moves from search to search more than the DUT would — on a shared machine, the client's and "
            "the server's CPU; more repetitions or longer trials (duration_s) narrow it."]
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
    line = [s for s in summaries if s.at_line_rate]
    if line:
        lines += ["", "At the line rate: " + "; ".join(
            f"{md_cell(_label(s))}: {_rate(s.cps.mean)} conn/s × {object_name(s.params['object_bytes'])} is "
            f"{s.payload_bps / 1e6:,.0f} Mbit/s of objects alone, {s.payload_bps / s.ceiling_bps:.0%} of the "
            f"{s.ceiling_bps / 1e6:,.0f} Mbit/s TCP ceiling ({md_cell(s.ceiling_source)})" for s in line)
            + ". The link carries no more: these rates are the link's, and responses served late there are the "
            "link's queue (headers and handshakes add to the objects, and the trial's queues let it pass a few "
            "percent above)."]
    late = [s for s in summaries if s.late and not s.at_line_rate]
    if late:
        lines += ["", "## Served late", "",
                  "Trials that completed every connection yet failed: the responses fell behind the offered rate "
                  "(RFC 9411 asks for constant concurrent connections; a longer trial would have lost them). The "
                  "trial cannot tell whether the DUT, the server or the client fell behind, so the rate is a lower "
                  "bound of the DUT's (≥); the latency trial's response and client-delay times show which side is "
                  "slow at half that rate."]
        lines += [f"- {md_cell(_label(s))}: {md_cell(text)}" for s in late for text in s.late]
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
             **s["results"]} for s in searches]
    return schema.dumps({"experiment": experiment.name, "id": experiment.id, "test": "cps",
                         "configurations": [s.to_dict() for s in summaries], "searches": rows},
                        default=str) + "\n"


CSV_FIGURES = ("cps", "upper", "upper_verdict", "limit", "trials")
CAPTURE_COLUMNS = (("connect", "p50"), ("connect", "p99"), ("ttfb", "p50"), ("ttfb", "p90"), ("ttfb", "p99"))


def to_csv(experiment: ExperimentRow, searches: list[dict[str, Any]]) -> str:
    names = sorted({k for s in searches for k in s["params"]} - {"test"})
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["experiment", *names, "status", *CSV_FIGURES, "connect_mean_s", "ttfb_mean_s", "request_p50_s",
                     "request_p99_s", "connect_p50_s", "connect_p99_s", "ttfb_p50_s", "ttfb_p90_s", "ttfb_p99_s",
                     "failed_at_cps", "connections_at_cps"])
    for s in searches:
        writer.writerow([safe(v) for v in [
            experiment.name, *[s["params"].get(n) for n in names], s["status"],
            *[s["results"].get(f) for f in CSV_FIGURES], _at(s, "timings", "connect", "mean"),
            _at(s, "timings", "ttfb", "mean"), _at(s, "request_percentiles", "p50"),
            _at(s, "request_percentiles", "p99"), *(_at(s, "capture", *path) for path in CAPTURE_COLUMNS),
            _at(s, "failed"), _at(s, "connections")]])
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
