"""Markdown in the articles' layout: rows "IPv4 1 stream", one column per configuration,
cells "941 ± 3 (12 retr, n=20)" in Mbit/s (mean ± 95% CI half-width)."""

from __future__ import annotations

from linerate.pool.window import pair_breakdown
from linerate.report.data import ROW_AXES, CellReport, Report, column_of, grid, row_of, unique_verdicts
from linerate.report.layout import format_mbps, format_ms, markdown_table, md_name


def cell_text(cell: CellReport) -> str:
    s = cell.summary
    if s.n == 0:
        return f"failed ({s.failures})" if s.failures else "–"
    text = format_mbps(s.mean)
    if s.half_width is not None:
        text += f" ± {format_mbps(s.half_width)}"
    fraction = cell.line_rate_fraction
    text += f" = {fraction * 100:.1f}% of line rate" if fraction is not None else " (line rate unknown)"
    extras = []
    if s.retransmits_mean is not None:
        extras.append(f"{s.retransmits_mean:.0f} retr")
    if s.lost_percent_mean is not None:
        extras.append(f"loss {s.lost_percent_mean:.2f}%")
    if s.jitter_ms_mean is not None:
        extras.append(f"jitter {s.jitter_ms_mean:.3f} ms")
    if s.rtt_loaded_p50_ms_mean is not None:
        extras.append(f"RTT p50 {format_ms(s.rtt_idle_p50_ms_mean)} idle, {format_ms(s.rtt_loaded_p50_ms_mean)} "
                      f"loaded (p99 {format_ms(s.rtt_loaded_p99_ms_mean)})")
    extras.append(f"n={s.n}" + (" (under 3): CI unreliable" if cell.few_trials else ""))
    if cell.precision_reached is False:
        extras.append("precision target not reached")
    if s.failures:
        extras.append(f"{s.failures} failed")
    text += f" ({', '.join(extras)})"
    if cell.flags:
        text += " " + " ".join(f"[{flag}]" for flag in cell.flags)
    codes = [code for code in cell.verdict_codes if code not in cell.flags and code != "line-rate-unknown"]
    if codes:
        text += " " + " ".join(f"[{code}]" for code in codes)
    return text


def verdict_lines(report: Report) -> list[str]:
    """Each verdict once, with its evidence from the first cell that has it and what to do."""
    return [md_name(f"- [{code}] {verdict.title} — e.g. {where}: {verdict.evidence}. What to do: {verdict.advice}.")
            for code, (where, verdict) in unique_verdicts(report).items()]


def serialize(report: Report) -> str:
    columns, rows = grid(report)
    exp = report.experiment
    title = f"{exp.name} (Mbit/s, mean ± 95% CI, % of line rate)"
    table = markdown_table(title, columns, [(label, [cell_text(cells[c]) if c in cells else "–" for c in columns])
                                           for label, cells in rows.items()])
    env = exp.environment if isinstance(exp.environment, dict) else {}
    footer = "\n" + md_name(f"Experiment {exp.id} '{exp.name}', {exp.status}, seed {exp.seed}; "
                   f"kernel {env.get('kernel', '?')}, iperf3 {env.get('iperf3_version', '?')}, "
                   f"CPU {env.get('cpu_model', '?')}.")
    vm_host = env.get("vm_host") or {}
    if vm_host.get("placement"):
        read = vm_host.get("telemetry_read_ms")
        footer += "\n" + md_name(f"Host: {vm_host['placement']}" + (f" ({vm_host['detail']})" if vm_host.get("detail") else "")
                               + (f"; one DUT window read {read:g} ms" if read else "") + ".")
    ceilings = {c.line_rate_source for c in report.cells if c.line_rate_source}
    if ceilings:
        footer += "\nLine rate: goodput ceiling of " + "; ".join(sorted(md_name(c) for c in ceilings)) + "."
    else:
        footer += "\nLine rate unknown: no emulated link, no inventory `link`, no negotiated NIC speed."
    pools = [f"- {row_of(c)}, {column_of(c, [n for n in report.varying() if n not in ROW_AXES])}: "
             f"{pair_breakdown(list(c.pairs))}" for c in report.cells if len(c.pairs) > 1]
    if pools:
        footer += "\n\nPairs (each pair's mean over the window all pairs sent; the cell is their sum):\n" + \
            "\n".join(md_name(line) for line in pools)
    verdicts = verdict_lines(report)
    if verdicts:
        footer += "\n\nVerdicts:\n" + "\n".join(verdicts)
    precision = exp.config.get("precision") if isinstance(exp.config, dict) else None
    if precision:
        missed = sum(1 for c in report.cells if c.precision_reached is False)
        footer += (f"\nAdaptive: precision target ±{precision * 100:g}% of the mean reached in "
                   f"{len(report.cells) - missed} of {len(report.cells)} cells.")
    return table + "\n" + footer + "\n"
