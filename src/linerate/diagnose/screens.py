"""Per-CPU load from the Linux screens users paste: procps `top` (with `1`: a %CpuN line per CPU),
BusyBox `top` (OpenWrt; per-CPU `CPUn:` lines when built with SMP support) and sysstat
`mpstat -P ALL` / `sar -P ALL`. Pure: text in, the shape dut.parsers.parse_top gives out —
([{"cpu", "busy_pct", "user_pct", "system_pct", "interrupt_pct", "softirq_pct", "idle_pct"}],
[{"name", "cpu", "pct"}]).

procps prints the eight states in a fixed order (us sy ni id wa hi si st: procps top/top.c
sum_tics) and translates only their labels (French top prints "ut" for us) and the decimal mark
("19,1"), so the figures are read by position, not by label. Its bar mode prints
'%Cpu0  :  27.3/9.1   36[|||  ]': user/system then the busy total. BusyBox prints
'CPU0:  0.0% usr  0.0% sys  0.0% nic 11.3% idle  0.0% io  0.0% irq 88.6% sirq'
(procps/top.c of BusyBox), read by label. mpstat/sar columns are found by their header names.
"""

from __future__ import annotations

import re

from linerate.dut.parsers import top_rows
from linerate.errors import ParseError
from linerate.numbers import ascii_int, is_ascii_int

_NUMBER = r"[0-9]+(?:[.,][0-9]+)?"
_PROCPS_CPU = re.compile(r"^%?Cpu(\d+|\(s\))\s*:\s*(.*)$")
_BAR = re.compile(rf"^({_NUMBER})/({_NUMBER})\s+({_NUMBER})\s*\[")
_BUSYBOX_CPU = re.compile(r"^CPU(\d*):\s+(.*%\s*(?:usr|idle).*)$")
_BUSYBOX_STATE = re.compile(rf"({_NUMBER})%\s*(usr|sys|nic|idle|io|irq|sirq)")
_PER_CPU_THREAD = re.compile(r"^\[?(?:ksoftirqd|migration|kworker|cpuhp|rcuc|irq_work)/(\d+)")


def _num(text: str) -> float:
    return float(text.replace(",", "."))


def _row(cpu: int, user: float, system: float, idle: float, interrupt: float = 0.0, softirq: float = 0.0,
         busy: float | None = None) -> dict[str, float]:
    return {"cpu": cpu, "user_pct": user, "system_pct": system, "interrupt_pct": interrupt,
            "softirq_pct": softirq, "idle_pct": idle,
            "busy_pct": round(busy if busy is not None else max(0.0, 100.0 - idle), 1)}


def parse_procps_cpu_line(line: str) -> dict[str, float] | None:
    """'%Cpu3  :  0,0 us,  2,0 sy,  0,0 ni,  0,0 id,  0,0 wa,  0,0 hi, 98,0 si,  0,0 st' -> a CPU row;
    the aggregate %Cpu(s) line -> a row with cpu -1."""
    match = _PROCPS_CPU.match(line.strip())
    if not match:
        return None
    cpu = -1 if match.group(1) == "(s)" else int(match.group(1))
    body = match.group(2).strip()
    bar = _BAR.match(body)
    if bar:
        return _row(cpu, _num(bar.group(1)), _num(bar.group(2)), 100.0 - _num(bar.group(3)),
                    busy=_num(bar.group(3)))
    values = [_num(v) for v in re.findall(rf"({_NUMBER})\s*[A-Za-z]+", body)]
    if len(values) < 4:
        return None
    us, sy, ni, idle = values[:4]
    wa, hi, si, st = (values[4:8] + [0.0] * 4)[:4]
    work = us + ni + sy + st + hi + si
    # procps prints each field as a share of the same ticks, so they add to 100; a line that adds to far
    # more was edited by hand ('95.6 id ... 100.0 si' in a blog): its work fields are what its reader sees
    busy = min(100.0, work) if idle + wa + work > 105.0 and work > 100.0 - idle - wa else None
    return _row(cpu, us + ni, sy + st, idle + wa, hi, si, busy=busy)


def parse_busybox_cpu_line(line: str) -> dict[str, float] | None:
    match = _BUSYBOX_CPU.match(line.strip())
    if not match:
        return None
    states = {name: _num(value) for value, name in _BUSYBOX_STATE.findall(match.group(2))}
    if "idle" not in states:
        return None
    cpu = int(match.group(1)) if match.group(1) else -1
    return _row(cpu, states.get("usr", 0) + states.get("nic", 0), states.get("sys", 0),
                states["idle"] + states.get("io", 0), states.get("irq", 0), states.get("sirq", 0))


def _thread_table(lines: list[str]) -> list[dict]:
    """Rows under a 'PID ... COMMAND' header: the %CPU (or CPU%) column and the command; the CPU
    column when the screen has one (BusyBox SMP 'CPU', procps 'P'), else the CPU a per-CPU kernel
    thread is bound to (ksoftirqd/3 runs on CPU 3). BusyBox's header ('PID PPID USER STAT VSZ %VSZ
    [CPU] %CPU COMMAND') marks its rows of_all_cpus: its procps/top.c computes "CPU% =
    s->pcpu/sum(s->pcpu) * busy_cpu_ticks/total_cpu_ticks" over /proc/stat's all-CPUs line, so 25%
    on a 4-CPU box is one whole CPU (procps' %CPU is a share of one CPU)."""
    threads: list[dict] = []
    for record, pct in top_rows(lines, lambda words: words[:1] == ["PID"] and words[-1:] == ["COMMAND"],
                                ("%CPU", "CPU%")):
        name = record["COMMAND"].strip()
        cpu_text = record.get("P") or (record.get("CPU") if "%CPU" in record else None)
        bound = _PER_CPU_THREAD.match(name)
        cpu = ascii_int(cpu_text) if cpu_text and is_ascii_int(cpu_text) else int(bound.group(1)) if bound else None
        row = {"name": name.strip("[]"), "pct": pct, "cpu": cpu}
        if {"PPID", "STAT", "VSZ"} <= record.keys():  # BusyBox: %CPU is a share of every CPU together
            row["of_all_cpus"] = True
        threads.append(row)
    return sorted(threads, key=lambda t: -t["pct"])


def parse_linux_top(text: str) -> tuple[list[dict[str, float]], list[dict]]:
    """procps or BusyBox top, batch or captured screen -> (per-CPU rows, threads). Only the last
    display counts: top's first display averages since boot."""
    displays = re.split(r"(?m)^(?=top - |Mem: .* used,)", text)
    display = next((d for d in reversed(displays) if d.strip()), "")
    cpus, total = [], None
    for line in display.splitlines():
        # procps' two-column mode prints two CPUs on one line: '%Cpu0  : ... %Cpu1  : ...'
        for part in re.split(r"(?=%Cpu)", line) if line.count("%Cpu") > 1 else [line]:
            row = parse_procps_cpu_line(part) or parse_busybox_cpu_line(part)
            if row is None:
                continue
            if row["cpu"] < 0:
                total = row
            else:
                cpus.append(row)
    threads = _thread_table(display.splitlines())
    if not cpus and not threads and total is None:
        raise ParseError("top output has neither CPU lines nor thread rows")
    return cpus, threads


def aggregate_cpu(text: str) -> dict[str, float] | None:
    """The all-CPUs line of a Linux top screen (%Cpu(s) / BusyBox 'CPU:'), if any."""
    for line in reversed(text.splitlines()):
        row = parse_procps_cpu_line(line) or parse_busybox_cpu_line(line)
        if row is not None and row["cpu"] < 0:
            return row
    return None


_STAT_COLUMNS = {"%usr": "user", "%user": "user", "%nice": "user", "%sys": "system", "%system": "system",
                 "%steal": "system", "%irq": "interrupt", "%soft": "softirq", "%idle": "idle", "%iowait": "idle"}


def parse_mpstat(text: str) -> list[dict[str, float]]:
    """sysstat `mpstat -P ALL [interval]` or `sar -P ALL` -> per-CPU rows: the 'Average:' rows when
    the output has them, else the last interval. The 'all' row is left out."""
    header: list[str] | None = None
    intervals: list[dict[int, dict[str, float]]] = []
    averages: dict[int, dict[str, float]] = {}
    for line in text.splitlines():
        words = line.split()
        if "CPU" in words and "%idle" in words:
            header = words[words.index("CPU"):]
            if not words[0].startswith("Average"):
                intervals.append({})
            continue
        if header is None or "CPU" not in header:
            continue
        tail = words[-len(header):] if len(words) >= len(header) else []
        if not tail or not is_ascii_int(tail[0]):
            continue
        record = dict(zip(header, tail))
        split = {"user": 0.0, "system": 0.0, "interrupt": 0.0, "softirq": 0.0, "idle": 0.0}
        for column, state in _STAT_COLUMNS.items():
            if column in record:
                split[state] += _num(record[column])
        row = _row(int(tail[0]), split["user"], split["system"], split["idle"], split["interrupt"], split["softirq"])
        (averages if words[0].startswith("Average") else intervals[-1] if intervals else averages)[row["cpu"]] = row
    chosen = averages or (intervals[-1] if intervals else {})
    if not chosen:
        raise ParseError("mpstat/sar output has no per-CPU rows under a 'CPU ... %idle' header")
    return [chosen[cpu] for cpu in sorted(chosen)]

