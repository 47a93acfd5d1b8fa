"""sysstat's `sar -n DEV` and `sar -n EDEV`: per-interface packet rates and error/drop rates, one row
per interface per interval, as pasted from a box.

The header row names the columns (sysstat sar.c / pr_stats.c print `IFACE rxpck/s txpck/s rxkB/s
txkB/s rxcmp/s txcmp/s rxmcst/s [%ifutil]` and `IFACE rxerr/s txerr/s coll/s rxdrop/s txdrop/s
txcarr/s rxfram/s rxfifo/s txfifo/s`), after a time whose form depends on the locale ("15:03:47",
"12:10:01 AM", "15 时 31 分 30 秒") or "Average:" in its language. So a row is read from its end:
the values are its last words, one per column after IFACE, the interface is the word before them,
and whatever comes first is the time. The rows of the Average line are used only when no interval
row was pasted (they are the same figures again). Values are rates per second: each row is taken
as one second's counts, which keeps the drop share (drops / packets) of the window.
"""

from __future__ import annotations

import re

from linerate.errors import ParseError

HEADER = re.compile(r"^(?P<time>.*?)\s*\bIFACE\s+(?P<columns>(?:rx|tx|coll|%if)\S*(?:\s+\S+)*)\s*$")
_KEYS = {"rxpck/s": "rx_packets", "txpck/s": "tx_packets", "rxerr/s": "rx_errors", "txerr/s": "tx_errors",
         "rxdrop/s": "rx_dropped", "txdrop/s": "tx_dropped"}
_NUMBER = re.compile(r"^[0-9]+(?:[.,][0-9]+)?$")


def is_header(line: str) -> bool:
    """A `sar -n DEV` or `sar -n EDEV` header row (any locale's time before IFACE)."""
    match = HEADER.match(line.rstrip())
    return bool(match) and ("rxpck/s" in match.group("columns").split() or "rxdrop/s" in match.group("columns").split())


def parse_sar_net(text: str) -> dict[str, list[dict[str, float]]]:
    """interface -> one dict per interval row: rx_packets, tx_packets (DEV) and/or rx_errors,
    tx_errors, rx_dropped, tx_dropped (EDEV), per second. The loopback is left out."""
    columns: list[str] | None = None
    rows: dict[str, list[dict[str, float]]] = {}
    averages: dict[str, list[dict[str, float]]] = {}
    for line in text.splitlines():
        header = HEADER.match(line.rstrip())
        if header and is_header(line):
            columns = header.group("columns").split()
            continue
        words = line.split()
        if columns is None or len(words) < len(columns) + 1:
            continue
        values, interface = words[-len(columns):], words[-len(columns) - 1]
        if not all(_NUMBER.match(v) for v in values) or interface == "IFACE":
            continue
        if interface == "lo":
            continue
        row = {_KEYS[c]: float(v.replace(",", ".")) for c, v in zip(columns, values) if c in _KEYS}
        target = averages if _is_average(words[:-len(columns) - 1]) else rows
        target.setdefault(interface, []).append(row)
    found = rows or averages
    if not found:
        raise ParseError("sar -n DEV/EDEV output has no interface rows under its IFACE header")
    return found


def _is_average(time_words: list[str]) -> bool:
    """The Average line's label, in any language sar prints it ('Average:', '平均时间:', 'Moyenne :'):
    a word ending in ':' that is not a clock time."""
    return bool(time_words) and any(w.endswith(":") and not re.search(r"[0-9]", w) for w in time_words)
