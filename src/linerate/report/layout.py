"""The articles' table layout: one row per traffic case ("IPv4 1 stream"), one column per
configuration, cells such as "941 (12 retr)" or "941 ± 3 Mbps (12 retr)"."""

from __future__ import annotations

import re
from collections.abc import Sequence

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def plain(text: object) -> str:
    """One printable line: control characters (newlines, escapes) shown as \\xNN, never obeyed."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", str(text))


_CONTROL_BUT_LINES = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def inert(value: object) -> object:
    """A string for a document that keeps its lines: control characters but newline and tab (a terminal
    escape a DUT printed) shown as \\xNN, never written raw; anything else as it is."""
    if not isinstance(value, str) or hasattr(value, "__html__"):  # markup linerate built (an SVG) stays markup
        return value
    return _CONTROL_BUT_LINES.sub(lambda m: f"\\x{ord(m.group()):02x}", value)


def md_name(text: object) -> str:
    """A stored name in Markdown: inert as HTML too (Markdown renderers pass raw HTML through), so
    an older database's `<img src=x onerror=...>` shows as text."""
    return plain(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def md_cell(text: object) -> str:
    """A Markdown table cell: one line, inert as HTML (md_name), pipes escaped so a value cannot add
    columns."""
    return md_name(text).replace("\\", "\\\\").replace("|", "\\|")


def row_label(family: int, streams: int, direction: str = "forward") -> str:
    label = f"IPv{family} {streams} stream{'s' if streams != 1 else ''}"
    return label if direction == "forward" else f"{label} {direction}"


def format_mbps(bps: float | None) -> str:
    if bps is None:
        return "–"
    mbps = bps / 1e6
    return f"{mbps:,.0f}" if mbps >= 100 else f"{mbps:,.1f}"


def markdown_table(title: str, columns: Sequence[str], rows: Sequence[tuple[str, Sequence[str]]]) -> str:
    head = f"| {md_cell(title)} | " + " | ".join(md_cell(c) for c in columns) + " |"
    rule = "|" + "---|" * (len(columns) + 1)
    body = [f"| {md_cell(label)} | " + " | ".join(md_cell(c) for c in cells) + " |" for label, cells in rows]
    return "\n".join([head, rule, *body])


def format_fps(value: float | None) -> str:
    """Frames per second, as RFC 2544 tables give them: whole frames, thousands separated."""
    return "–" if value is None else f"{value:,.0f}"


def format_ms(value: float | None) -> str:
    """An RTT: sub-millisecond values to the microsecond, others to 0.1 ms."""
    if value is None:
        return "-"
    return f"{value:.3f} ms" if abs(value) < 1 else f"{value:.1f} ms"
