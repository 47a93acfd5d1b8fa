"""A tune's report: the decision table (knob, value, best and candidate means, effect with its 95%
interval, p, trials, decision, what proposed it), the before/after of the final confirmation and
the final configuration as the DUT's OS keeps it. md, json (`decisions`, `final`) and html."""

from __future__ import annotations

from html import escape
from typing import Any

from linerate import schema
from linerate.dut.base import dut_os_family
from linerate.kinds.tune.decide import ALPHA, CORRECTION
from linerate.kinds.tune.engine import Step, TuneOutcome
from linerate.kinds.tune.snippet import changed, snippet
from linerate.report.layout import markdown_table, md_name, plain
from linerate.topology.link import parse_any_sysctls, parse_dut_offloads
from linerate.store.db import ExperimentRow

COLUMNS = ["knob", "value", "best Mbit/s", "candidate Mbit/s", "effect % (95% CI)", "p", "trials", "decision",
           "proposed by"]


def _pct(value: float | None) -> float | None:
    return None if value is None else round(value * 100, 2)


def decision_row(step: Step) -> dict[str, Any]:
    j = step.judgement
    return {"knob": step.candidate.knob, "value": step.candidate.value,
            "best_mean_mbps": None if j.mean_best is None else round(j.mean_best / 1e6, 1),
            "candidate_mean_mbps": None if j.mean_candidate is None else round(j.mean_candidate / 1e6, 1),
            "effect_pct": _pct(j.effect), "ci_low_pct": _pct(j.ci[0]) if j.ci else None,
            "ci_high_pct": _pct(j.ci[1]) if j.ci else None,
            "p": None if j.p_better is None else float(f"{j.p_better:.3g}"), "pairs": j.pairs, "trials": step.trials,
            "decision": j.decision, "why": j.why, "proposed_by": step.candidate.proposed_by}


def dut_os(experiment: ExperimentRow) -> str:
    """The DUT's OS family from the experiment's host fingerprints (a lab or VM DUT: Linux)."""
    return dut_os_family(experiment.environment) or "linux"


def document(experiment: ExperimentRow, outcome: TuneOutcome) -> dict[str, Any]:
    confirmation = decision_row(outcome.confirmation) if outcome.confirmation else None
    return {
        "experiment": experiment.name, "experiment_id": experiment.id, "objective": "throughput",
        "complete": outcome.complete, "budget_trials": outcome.budget, "trials": outcome.trials,
        "family_wise_alpha": ALPHA, "correction": CORRECTION,
        "start": {k: outcome.start[k] for k in sorted(outcome.start)},
        "baseline_mbps": [round(v / 1e6, 1) for v in outcome.baseline],
        "decisions": [decision_row(step) for step in outcome.steps],
        "final": {"changed": changed(outcome.start, outcome.final), "confirmation": confirmation,
                  "confirmed": confirmation is not None and confirmation["decision"] == "accepted",
                  "snippet": [{"where": where, "lines": lines}
                              for where, lines in snippet(outcome.start, outcome.final, dut_os(experiment))]},
    }


def _effect(row: dict) -> str:
    if row["effect_pct"] is None:
        return "–"
    return f"{row['effect_pct']:+.1f} ({row['ci_low_pct']:+.1f} to {row['ci_high_pct']:+.1f})"


def _cells(row: dict) -> list[str]:
    fmt = lambda v: "–" if v is None else f"{v:,.1f}"  # noqa: E731
    return [plain(str(row["knob"])), plain(str(row["value"])), fmt(row["best_mean_mbps"]), fmt(row["candidate_mean_mbps"]),
            _effect(row), "–" if row["p"] is None else f"{row['p']:.3g}", str(row["trials"]),
            f"{row['decision']}: {plain(row['why'])}", plain(row["proposed_by"])]


def markdown(doc: dict[str, Any]) -> str:
    start = ", ".join(f"{k} {v}" for k, v in doc["start"].items() if k in doc["final"]["changed"]
                      or k in {r["knob"] for r in doc["decisions"]})
    lines = [f"# Tune '{md_name(doc['experiment'])}' (experiment {doc['experiment_id']})", "",
             f"Objective: mean throughput of the start cell ({md_name(start) or 'as the file sets it'}). "
             f"{doc['trials']} of {doc['budget_trials']} trials used."
             + ("" if doc["complete"] else " INCOMPLETE: the run was interrupted; `--resume` continues it."),
             f"Decisions hold the family-wise error at {doc['family_wise_alpha']:.0%} ({doc['correction']}); "
             "effect = exp(mean ln(candidate / best)) - 1 over interleaved pairs.", ""]
    if doc["baseline_mbps"]:
        lines += [f"Baseline of the start (for the proposals): {', '.join(f'{v:,.1f}' for v in doc['baseline_mbps'])} "
                  "Mbit/s", ""]
    table = markdown_table(COLUMNS[0], COLUMNS[1:], [(cells[0], cells[1:]) for cells in map(_cells, doc["decisions"])])
    lines += table.splitlines() if doc["decisions"] else ["No candidates: nothing to decide."]
    confirmation = doc["final"]["confirmation"]
    lines.append("")
    if confirmation:
        lines.append(f"Before/after (start vs the accepted knobs together, interleaved): {_cells(confirmation)[2]} -> "
                     f"{_cells(confirmation)[3]} Mbit/s, effect {_effect(confirmation)} %, p {confirmation['p']}, "
                     f"{confirmation['trials']} trials: {confirmation['decision']} ({md_name(confirmation['why'])})")
    else:
        lines.append("No knob was accepted: the start configuration stays; nothing to change on the DUT.")
    if doc["final"]["snippet"]:
        lines += ["", "## Final configuration" + ("" if doc["final"]["confirmed"] else
                  " (NOT confirmed: the accepted knobs together did not beat the start; do not apply it as is)"), ""]
        for part in doc["final"]["snippet"]:  # a fenced block: its lines are shown, never rendered
            body = [f"# {plain(part['where'])}"] + [plain(line) for line in part["lines"]]
            fence = "~~~~" if any("```" in line for line in body) else "```"
            lines += [fence, *body, fence, ""]
    return "\n".join(lines).rstrip() + "\n"


def html(doc: dict[str, Any]) -> str:
    head = "".join(f"<th>{escape(c)}</th>" for c in COLUMNS)
    rows = "".join("<tr>" + "".join(f"<td>{escape(cell)}</td>" for cell in _cells(row)) + "</tr>"
                   for row in doc["decisions"])
    snippets = "".join(f"<h3>{escape(part['where'])}</h3><pre>{escape(chr(10).join(part['lines']))}</pre>"
                       for part in doc["final"]["snippet"])
    summary = escape(markdown(doc).split("\n\n")[1])
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>Tune {escape(doc['experiment'])}</title>"
            "<style>body{font-family:sans-serif;max-width:70em;margin:2em auto}td,th{border:1px solid #ccc;"
            "padding:.2em .5em}table{border-collapse:collapse}</style></head><body>"
            f"<h1>Tune {escape(doc['experiment'])}</h1><p>{summary}</p><table><tr>{head}</tr>{rows}</table>"
            f"<h2>Final configuration</h2>{snippets or '<p>No knob was accepted.</p>'}</body></html>\n")


def render(experiment: ExperimentRow, outcome: TuneOutcome, fmt: str) -> str:
    doc = document(experiment, outcome)
    if fmt == "json":
        return schema.dumps(doc) + "\n"
    return html(doc) if fmt == "html" else markdown(doc)


def settings_of(knob: str, value: Any) -> list[tuple[str, str]]:
    """(name, value) settings a decided knob stands for: sysctls by name, offloads as `IF:feature`."""
    if knob == "dut_sysctls":
        return list(parse_any_sysctls(str(value)))
    if knob == "dut_offloads":
        return [(f"{ifname}:{feature}", state) for ifname, feature, state in parse_dut_offloads(str(value))]
    return [(knob, str(value))]


def confirmations(lines: list[tuple[str, str]], doc: dict[str, Any]) -> list[tuple[str, str]]:
    """For advice lines (file, line): what the tune `doc` (document()) found on this box for the same
    setting — confirmed (accepted), refuted (rejected), not settled (inconclusive) or not tried."""
    decided = {}
    for row in doc["decisions"]:
        for name, value in settings_of(row["knob"], row["value"]):
            decided[name.split(":")[-1] if row["knob"] == "dut_offloads" else name] = (value, row)
    out = []
    for file, line in lines:
        text = line.replace(" = ", "=").strip()
        name, value = (text.split("=", 1) + [""])[:2] if "=" in text else (text.split()[0] if text else "", "")
        if file.startswith("ethtool -K"):
            name, value = (text.split() + ["", ""])[:2]
        found = decided.get(name)
        if found is None:
            out.append((line, "not tried by the tune"))
            continue
        tried, row = found
        effect = "" if row["effect_pct"] is None else f" ({row['effect_pct']:+.1f}%, 95% CI {row['ci_low_pct']:+.1f} to {row['ci_high_pct']:+.1f}, {row['trials']} trials)"
        if row["decision"] == "accepted":
            what = "confirmed on this box" if doc["final"]["confirmed"] else "accepted alone, not confirmed together"
        elif row["decision"] == "rejected" and row["why"].startswith(("worse", "no gain")):
            what = "refuted on this box"
        else:
            what = f"not settled on this box ({row['why']})"
        same = tried.strip('"') == value.strip('"') or not value
        out.append((line, f"{what}{effect}" + ("" if same else f" (the tune tried {name}={tried})")))
    return out
