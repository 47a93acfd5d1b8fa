"""The articles' table layout: one row per traffic case ("IPv4 1 stream"), one column per
configuration, cells such as "941 (12 retr)" or "941 ± 3 Mbps (12 retr)"."""

from __future__ import annotations

from collections.abc import Sequence


def row_label(family: int, streams: int, direction: str = "forward") -> str:
    label = f"IPv{family} {streams} stream{'s' if streams != 1 else ''}"
    return label if direction == "forward" else f"{label} {direction}"


def format_mbps(bps: float | None) -> str:
    if bps is None:
        return "–"
    mbps = bps / 1e6
    return f"{mbps:,.0f}" if mbps >= 100 else f"{mbps:,.1f}"


def markdown_table(title: str, columns: Sequence[str], rows: Sequence[tuple[str, Sequence[str]]]) -> str:
    head = f"| {title} | " + " | ".join(columns) + " |"
    rule = "|" + "---|" * (len(columns) + 1)
    body = [f"| {label} | " + " | ".join(cells) + " |" for label, cells in rows]
    return "\n".join([head, rule, *body])
