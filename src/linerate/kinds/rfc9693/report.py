"""Reports of rfc9693 experiments, pure functions of the stored searches: per configuration (family,
lab axes) the establishment rate and the table capacity — mean and 95% Student-t interval over the
repetitions (linerate.stats) — what limited the capacity with its evidence, the DUT's table limit and
UDP timeout as read, and the Little's-law bound they give (md, json, csv, html)."""

from __future__ import annotations

import csv
import io
import json
from html import escape
from typing import Any

from linerate import schema
from linerate.report.csv_export import safe
from linerate.report.data import by_configuration, kind_searches
from linerate.report.layout import markdown_table, md_cell, md_name
from linerate.stats import summarize
from linerate.store.db import ExperimentRow, Store

BURST_S = 0.5  # a rate trial shorter than this fits in the queues in front of a DUT
CSV_FIGURES = ("establishment_rate", "establishment_rate_achieved", "rate_connections", "generator_ceiling",
               "capacity", "capacity_failed_at", "capacity_rate", "limit", "state_max", "udp_timeout_s",
               "sustained_udp_bound", "trials")
METHOD = ("RFC 9693 (Benchmarking Methodology for Stateful NATxy Gateways, https://www.rfc-editor.org/info/rfc9693) "
          "with a stateless generator: phase 1 opens C connections, one UDP frame each from its own source port, "
          "at a rate; phase 2 sends one reply per connection, which a stateful ruleset passes only while the "
          "connection's state exists. A trial passes when all C frames and all C replies got through. Establishment "
          "rate: MLRsearch's NDR over the rate with C = {connections}. Capacity: one trial per size at gamma x that "
          "rate, doubling while a size holds, then bisection (siitperf's cttc.sh runs a rate search per size). The "
          "DUT's states from the client are removed between trials.")


def searches(store: Store, experiment_id: int) -> list[dict[str, Any]]:
    return kind_searches(store, experiment_id, "rfc9693")


def groups(store: Store, experiment_id: int) -> dict[str, list[dict[str, Any]]]:
    return by_configuration(searches(store, experiment_id))


def values(found: list[dict[str, Any]], key: str) -> list[float]:
    return [s["results"][key] for s in found if s["status"] == "done" and s["results"].get(key) is not None]


def configurations(store: Store, experiment_id: int) -> list[dict[str, Any]]:
    """One entry per configuration: the summaries, the limits and their evidence, the table as read."""
    out = []
    for key, found in groups(store, experiment_id).items():
        done = [s for s in found if s["status"] == "done"]
        last = done[-1]["results"] if done else {}
        rate, capacity = summarize(values(found, "establishment_rate")), summarize(values(found, "capacity"))
        out.append({
            "params": json.loads(key), "searches": len(found), "failed_searches": len(found) - len(done),
            "establishment_rate": rate.to_dict(), "capacity": capacity.to_dict(),
            "limits": sorted({s["results"].get("limit") for s in done if s["results"].get("limit")}),
            "evidence": [s["results"].get("limit_evidence") for s in done if s["results"].get("limit_evidence")],
            "capacity_failed_at": [s["results"].get("capacity_failed_at") for s in done],
            **{k: last.get(k) for k in ("state_max", "udp_timeout_s", "udp_timeout_setting", "sustained_udp_bound",
                                       "sustained_tcp_bound", "tcp_linger_s", "rate_connections", "generator_ceiling",
                                       "capacity_rate", "capacity_bound", "frame_bytes", "generator",
                                       "rate_limit", "rate_trial_s", "capacity_rate_lowered")}})
    return out


LABEL_KEYS = ("dut", "firewall", "dut_sysctls", "dut_vcpus", "link_rate")


def _label(params: dict[str, Any]) -> str:
    """IPv4, dut vm, firewall stateful, dut_sysctls ... (the axes that shape a state test)."""
    extra = ", ".join(f"{k} {params[k]}" for k in LABEL_KEYS if params.get(k) not in (None, "", "default"))
    return f"IPv{params.get('family')}" + (f", {extra}" if extra else "")


def _num(value: float | None, digits: int = 0) -> str:
    return "–" if value is None else f"{value:,.{digits}f}"


def _ci(summary: dict[str, Any]) -> str:
    if summary.get("n", 0) < 2 or summary.get("ci_low") is None:
        return "–"
    return f"{_num(summary['ci_low'])} – {_num(summary['ci_high'])}"


def table_rows(configs: list[dict[str, Any]]) -> list[tuple[str, list[str]]]:
    rows = []
    for c in configs:
        rate, cap = c["establishment_rate"], c["capacity"]
        bound = "≥ " if "search bound" in c["limits"] else ""
        at_least = "≥ " if c.get("rate_limit") == "generator" else ""
        rows.append((_label(c["params"]), [
            (at_least + _num(rate.get("mean"))) if rate.get("mean") is not None else "–", _ci(rate), (bound + _num(cap.get("mean"))) if cap.get("mean") is not None else "–",
            _ci(cap), str(cap.get("n", 0)), ", ".join(c["limits"]) or "–", _num(c.get("state_max")),
            _num(c.get("udp_timeout_s")), _num(c.get("sustained_udp_bound"))]))
    return rows


COLUMNS = ["establishment rate (conn/s)", "95% CI", "capacity (connections)", "95% CI", "n", "capacity limit",
           "table limit", "UDP timeout s", "sustained new UDP conn/s (limit / timeout)"]


def to_markdown(experiment: ExperimentRow, configs: list[dict[str, Any]]) -> str:
    connections = next((c.get("rate_connections") for c in configs if c.get("rate_connections")), "C")
    lines = [f"# Connection tracking: {md_name(experiment.name)} (experiment {experiment.id})", "",
             METHOD.format(connections=f"{connections:,}" if isinstance(connections, int) else connections), "",
             markdown_table("configuration", COLUMNS, table_rows(configs))]
    for c in configs:
        lines += ["", f"## {md_cell(_label(c['params']))}", ""]
        if c.get("generator_ceiling"):
            lines.append(f"- generator: {md_cell(c.get('generator') or 'trafgen')}, "
                         f"{c['frame_bytes']}-byte frames, its own ceiling {_num(c['generator_ceiling'])} frames/s")
        if c.get("rate_limit") == "generator":
            lines.append("- establishment rate: the generator's own ceiling was reached (≥: the DUT may do more)")
        if c.get("rate_trial_s") is not None and c["rate_trial_s"] < BURST_S:
            lines.append(
                f"- establishment rate: a trial at that rate lasted {c['rate_trial_s'] * 1000:.1f} ms; queues in front "
                f"of the DUT (NIC rings, backlogs) can hold a trial this short, so it is the rate for bursts of "
                f"{_num(c.get('rate_connections'))} connections, an upper bound of the sustained rate (more "
                "connections per trial, up to the capacity, make longer trials)")
        for size, lowered in c.get("capacity_rate_lowered") or []:
            lines.append(f"- at {_num(size)} connections phase 1 lost frames with room in the table: the capacity "
                         f"trials went on at {_num(lowered)} conn/s")
        if c.get("capacity_rate"):
            lines.append(f"- capacity trials opened their connections at {_num(c['capacity_rate'])} conn/s; search "
                         f"bound {_num(c.get('capacity_bound'))} connections")
        lines += [f"- capacity limit: {md_cell(text)}" for text in dict.fromkeys(c["evidence"])]
        if c.get("state_max") and c.get("udp_timeout_s"):
            lines.append(
                f"- Little's law: a table of {_num(c['state_max'])} entries whose unanswered UDP states live "
                f"{c['udp_timeout_s']:g} s ({md_cell(c.get('udp_timeout_setting'))}) sustains about "
                f"{_num(c['sustained_udp_bound'])} new such connections/s; TCP connections whose states linger "
                f"{c.get('tcp_linger_s'):g} s after closing, about {_num(c.get('sustained_tcp_bound'))}/s")
        if c["failed_searches"]:
            lines.append(f"- {c['failed_searches']} search(es) did not finish (see `linerate report --format json`)")
    return "\n".join(lines) + "\n"


def to_json(experiment: ExperimentRow, configs: list[dict[str, Any]], found: list[dict[str, Any]]) -> str:
    rows = [{"params": s["params"], "status": s["status"], "error": s["error"], "generator": s["generator"],
             **s["results"]} for s in found]
    return schema.dumps({"experiment": experiment.name, "id": experiment.id, "test": "rfc9693",
                         "configurations": configs, "searches": rows}, default=str) + "\n"


def to_csv(experiment: ExperimentRow, found: list[dict[str, Any]]) -> str:
    names = sorted({k for s in found for k in s["params"]} - {"test"})
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["experiment", *names, "status", *CSV_FIGURES, "limit_evidence"])
    for s in found:
        writer.writerow([safe(v) for v in [experiment.name, *[s["params"].get(n) for n in names], s["status"],
                                           *[s["results"].get(f) for f in CSV_FIGURES],
                                           s["results"].get("limit_evidence")]])
    return out.getvalue()


def to_html(experiment: ExperimentRow, configs: list[dict[str, Any]]) -> str:
    head = "".join(f"<th>{escape(c)}</th>" for c in ["configuration", *COLUMNS])
    body = "".join("<tr>" + "".join(f"<td>{escape(v)}</td>" for v in [label, *cells]) + "</tr>"
                   for label, cells in table_rows(configs))
    notes = "".join(f"<li>{escape(_label(c['params']))}: {escape(text)}</li>"
                    for c in configs for text in dict.fromkeys(c["evidence"]))
    connections = next((c.get("rate_connections") for c in configs if c.get("rate_connections")), "C")
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>rfc9693 {escape(experiment.name)}</title>"
            "<style>body{font-family:sans-serif}td,th{border:1px solid #ccc;padding:4px 8px}"
            "table{border-collapse:collapse}</style></head><body>"
            f"<h1>Connection tracking: {escape(experiment.name)} (experiment {experiment.id})</h1>"
            f"<p>{escape(METHOD.format(connections=connections))}</p><table><tr>{head}</tr>{body}</table>"
            f"<h2>What limited the capacity</h2><ul>{notes or '<li>no search finished</li>'}</ul></body></html>\n")


def render(store: Store, experiment: ExperimentRow, fmt: str) -> str:
    configs = configurations(store, experiment.id)
    if fmt == "json":
        return to_json(experiment, configs, searches(store, experiment.id))
    if fmt == "csv":
        return to_csv(experiment, searches(store, experiment.id))
    if fmt == "html":
        return to_html(experiment, configs)
    return to_markdown(experiment, configs)
