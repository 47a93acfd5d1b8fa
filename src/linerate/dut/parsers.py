"""Pure parsers of DUT command outputs: text in, numbers out. Each is unit-tested on real captured
outputs in tests/data/{linux,bsd} whose first line names the source.

Counters are cumulative; callers take before/after deltas (dut.base.delta). Column tables
(`netstat -i`, `netstat -Q`, `vmstat -i`) are read by their header names, not by position, so a
release that adds a column (`netstat -ibn` adds Ibytes/Obytes) still parses. Anything that is not
the expected shape raises ParseError naming the command — never a silent zero.

CPU states: Linux /proc/stat has user nice system idle iowait irq softirq steal ...; FreeBSD
kern.cp_times has 5 per CPU (user nice sys intr idle, sys/resource.h CPUSTATES); OpenBSD
kern.cp_time has 6 (user nice sys spin intr idle, sys/sched.h, since 6.4 added CP_SPIN). They are
mapped onto one shape: user, system, interrupt, softirq, idle (ticks).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator

from linerate.errors import ParseError
from linerate.numbers import is_ascii_int

CPU_FIELDS = ("user", "system", "interrupt", "softirq", "idle")


def _int(text: str, what: str) -> int:
    if not re.fullmatch(r"[0-9]{1,20}", text):
        raise ParseError(f"{what}: {text[:30]!r} is not a counter")
    return int(text)


# --- CPU time ---------------------------------------------------------------------------------------

def parse_proc_stat(text: str) -> list[dict[str, int]]:
    """Linux /proc/stat -> per-CPU ticks (cpu0, cpu1 ... in order)."""
    cpus = []
    for line in text.splitlines():
        fields = line.split()
        if not fields or not re.fullmatch(r"cpu[0-9]+", fields[0]):
            continue
        values = [_int(v, "/proc/stat") for v in fields[1:]]
        if len(values) < 7:
            raise ParseError(f"/proc/stat: {fields[0]} has {len(values)} fields, expected at least 7")
        user, nice, system, idle, iowait, irq, softirq = values[:7]
        steal = values[7] if len(values) > 7 else 0
        cpus.append({"user": user + nice, "system": system + steal, "interrupt": irq, "softirq": softirq,
                     "idle": idle + iowait})
    if not cpus:
        raise ParseError("/proc/stat has no per-CPU lines")
    return cpus


def _sysctl_value(text: str, name: str) -> str:
    """`sysctl NAME` prints 'NAME: v' (FreeBSD) or 'NAME=v' (OpenBSD); -n prints just v."""
    line = text.strip().splitlines()[0] if text.strip() else ""
    for sep in (": ", "="):
        if line.startswith(name + sep):
            return line[len(name) + len(sep):]
    return line


def parse_freebsd_cp_times(text: str) -> list[dict[str, int]]:
    """FreeBSD `sysctl kern.cp_times`: 5 ticks per CPU (user nice sys intr idle)."""
    values = [_int(v, "kern.cp_times") for v in _sysctl_value(text, "kern.cp_times").split()]
    if not values or len(values) % 5:
        raise ParseError(f"kern.cp_times has {len(values)} values, not a multiple of 5 (user nice sys intr idle)")
    return [{"user": u + n, "system": s, "interrupt": i, "softirq": 0, "idle": idle}
            for u, n, s, i, idle in (values[k:k + 5] for k in range(0, len(values), 5))]


def parse_openbsd_cp_time(text: str) -> list[dict[str, int]]:
    """OpenBSD `sysctl kern.cp_time`: one comma-separated line for all CPUs together (6 states since
    OpenBSD 6.4, 5 before). Per-CPU counters (KERN_CPTIME2) exist only through sysctl(2), which
    sysctl(8) does not print, so OpenBSD telemetry carries one aggregate 'CPU'."""
    values = [_int(v.strip(), "kern.cp_time") for v in _sysctl_value(text, "kern.cp_time").split(",")]
    if len(values) == 6:
        user, nice, system, spin, intr, idle = values
    elif len(values) == 5:
        (user, nice, system, intr, idle), spin = values, 0
    else:
        raise ParseError(f"kern.cp_time has {len(values)} values; expected 5 or 6")
    return [{"user": user + nice, "system": system + spin, "interrupt": intr, "softirq": 0, "idle": idle}]


# --- interrupts --------------------------------------------------------------------------------------

_IRQ_ROW = re.compile(r"^\s*([0-9]+|[A-Za-z][A-Za-z0-9_]*):(\s.*)?$")
_CPU_HEADER = re.compile(r"^\s*CPU[0-9]+(\s+CPU[0-9]+)*\s*$")
_TRIGGER = re.compile(r"(?:[0-9]+-|[A-Za-z0-9-]+-)?(?:edge|fasteoi|level)|Level|Edge", re.IGNORECASE)


def _irq_name(rest: list[str], line_tail: str) -> str:
    """The action name(s) after the counts, chip name, hwirq and trigger. The kernel separates the
    names from the trigger by at least two spaces ('GICv2  56 Level     eth0', 'PCI-MSI
    5767168-edge      ens192-rxtx-0'); a name may hold a space ('enp5s0f4d1 (queue 11)'). A paste
    that squeezed the spaces keeps only the last word."""
    chunks = [c for c in re.split(r"\s{2,}", line_tail.strip()) if c]
    if len(chunks) >= 2:
        return chunks[-1]
    # Squeezed to single spaces (a wiki export): the names follow the trigger word, hwirq-trigger
    # since Linux 4.2 ('IR-PCI-MSI 1048576-edge net0'), chip-trigger before ('PCI-MSI-edge eth0'),
    # or 'Level'/'Edge' on GIC chips; a shared line keeps all its names ('mmc0, idma64.0, ttyS0').
    for i, word in enumerate(rest[:-1]):
        if _TRIGGER.fullmatch(word):
            return " ".join(rest[i + 1:])
    return rest[-1] if rest else ""


def parse_interrupt_displays(text: str) -> list[tuple[int, bool, list[tuple[str, str, list[int]]]]]:
    """Linux /proc/interrupts, whole or filtered (`grep eth /proc/interrupts` drops the CPU header
    row), possibly pasted twice (before/after) -> [(CPU count, header seen, [(irq, name,
    per-CPU counts)])], one entry per display. Without the header the CPU count is the number of
    count columns most rows carry. A display ends where an IRQ number repeats or a header starts."""
    displays: list[tuple[bool, list[tuple[str, str, list[int]]], int | None]] = []
    rows: list[tuple[str, str, list[int]]] = []
    header: int | None = None
    seen: set[str] = set()

    def close() -> None:
        if rows:
            displays.append((header is not None, list(rows), header))

    for line in text.splitlines():
        if _CPU_HEADER.match(line):
            close()
            rows, seen, header = [], set(), len(line.split())
            continue
        match = _IRQ_ROW.match(line)
        if not match:
            continue
        label, tail = match.group(1), match.group(2) or ""
        if label in seen:
            close()
            rows, seen = [], set()
        seen.add(label)
        fields = tail.split()
        counts = []
        for value in fields:
            if not re.fullmatch(r"[0-9]{1,20}", value):
                break
            counts.append(int(value))
        if header is not None:
            counts = counts[:header]
        rest = fields[len(counts):]
        after = tail.split(None, len(counts))[-1] if len(fields) > len(counts) else ""
        name = _irq_name(rest, after) if is_ascii_int(label) and rest else label
        rows.append((label, name, counts))
    close()
    if not displays:
        raise ParseError("/proc/interrupts has no IRQ rows ('NN:  count count ...  name')")
    out = []
    for header_seen, display_rows, header_cpus in displays:
        widths = [len(c) for label, _, c in display_rows if is_ascii_int(label) and c]
        ncpu = header_cpus or (max(set(widths), key=lambda w: (widths.count(w), w)) if widths else 1)
        out.append((ncpu, header_seen, [(label, name, (counts + [0] * ncpu)[:ncpu])
                                        for label, name, counts in display_rows]))
    return out


def interrupts_per_cpu(rows: list[tuple[str, str, list[int]]]) -> dict[str, list[int]]:
    """Numbered IRQ rows -> {name: per-CPU counts}, rows of one name (two mwlwifi lines) added up."""
    out: dict[str, list[int]] = {}
    for label, name, counts in rows:
        if not is_ascii_int(label):
            continue
        if name in out:
            out[name] = [a + b for a, b in zip(out[name], counts)]
        else:
            out[name] = list(counts)
    return out


def parse_proc_interrupts(text: str) -> dict[str, int]:
    """Linux /proc/interrupts -> {device queue name: total over CPUs} for numbered IRQs (the last
    display when the text holds several)."""
    _, _, rows = parse_interrupt_displays(text)[-1]
    return {name: sum(counts) for name, counts in interrupts_per_cpu(rows).items()}


def parse_freebsd_intr_bindings(text: str) -> dict[str, tuple[int, int]]:
    """FreeBSD `sysctl hw.intrs` lines 'irq268: ixl1:rxq0:79 @cpu0(domain0): 817' -> {source:
    (bound CPU, interrupts since boot)}: the one FreeBSD output that says which CPU takes a queue."""
    out: dict[str, tuple[int, int]] = {}
    for line in text.splitlines():
        match = re.match(r"^\s*(?:hw\.intrs:\s*)?irq[0-9]+:\s*(.+?)\s+@cpu([0-9]+)(?:\(domain[0-9]+\))?:"
                         r"\s*([0-9]+)\s*$", line)
        if match:
            out[match.group(1)] = (int(match.group(2)), int(match.group(3)))
    if not out:
        raise ParseError("hw.intrs output has no 'irqN: name @cpuN(domainN): count' lines")
    return out


def parse_vmstat_i(text: str) -> dict[str, int]:
    """BSD `vmstat -i` -> {source: total}. FreeBSD names lines 'irq134: igb0:rxq0' (source
    'igb0:rxq0'); the Total line is left out. `vmstat -i | grep igb` keeps no header: rows that
    start 'irqN:' are read all the same."""
    lines = [line for line in text.splitlines() if line.strip()]
    if not lines:
        raise ParseError("vmstat -i output is empty")
    headed = lines[0].split()[:1] == ["interrupt"]
    if not headed and not any(re.match(r"^irq[0-9]+:", line) for line in lines):
        raise ParseError("vmstat -i output has no 'interrupt total rate' header and no 'irqN:' rows")
    out: dict[str, int] = {}
    for line in lines[1:] if headed else lines:
        fields = line.split()
        if len(fields) < 3 or fields[0].lower() == "total" or not re.fullmatch(r"[0-9]+", fields[-2]):
            continue
        total, name = fields[-2], " ".join(fields[:-2])
        name = re.sub(r"^irq[0-9]+:?\s*", "", name) or name
        out[name] = out.get(name, 0) + _int(total, "vmstat -i")
    if not out:
        raise ParseError("vmstat -i output has no interrupt rows")
    return out


# --- tables with a header -----------------------------------------------------------------------------

def _table(lines: list[str], header_start: str, command: str) -> tuple[list[str], list[list[str]]]:
    for index, line in enumerate(lines):
        if line.split()[:1] == [header_start]:
            return line.split(), [row.split() for row in lines[index + 1:] if row.strip()]
    raise ParseError(f"{command} output has no header starting with {header_start!r}")


def parse_netstat_i(text: str) -> dict[str, int]:
    """BSD `netstat -i -n [-b] [-d]` -> {"<if>_rx_packets": n, "<if>_rx_errors", "_rx_dropped",
    "_tx_packets", "_tx_errors", "_tx_dropped", "_rx_bytes", "_tx_bytes"} from the <Link#N> rows
    (the per-address rows repeat or dash them). FreeBSD calls input errors Ierrs, OpenBSD Ifail."""
    header, rows = _table(text.splitlines(), "Name", "netstat -i")
    names = {"Ipkts": "rx_packets", "Ierrs": "rx_errors", "Ifail": "rx_errors", "Idrop": "rx_dropped",
             "Ibytes": "rx_bytes", "Opkts": "tx_packets", "Oerrs": "tx_errors", "Ofail": "tx_errors",
             "Drop": "tx_dropped", "Obytes": "tx_bytes"}
    # Address may be empty on a <Link#N> row of an interface without a MAC, so count from the right.
    tail = header[header.index("Address") + 1:] if "Address" in header else header[4:]
    out: dict[str, int] = {}
    for row in rows:
        if len(row) < len(tail) + 2 or not any(field.startswith("<Link#") for field in row):
            continue
        ifname = row[0].rstrip("*")
        for column, value in zip(tail, row[-len(tail):]):
            if column in names and value != "-":
                out[f"{ifname}_{names[column]}"] = _int(value, "netstat -i")
    if not out:
        raise ParseError("netstat -i output has no <Link#N> interface rows")
    return out


# `netstat -w N [-I IF] [-b] [-d] [-h]` (FreeBSD usr.bin/netstat/if.c sidewaysintpr): a banner
# '   input   (Total|IF)   output', a header 'packets errs idrops bytes packets errs bytes colls [drops]'
# (-d adds the output 'drops'; older releases have no 'idrops'), then one row per interval. Every row
# is a difference over the interval: the first reading prints nothing. -h humanizes through
# humanize_number(3) (HN_AUTOSCALE, base 1024): '607K', '1.6G'.
NETSTAT_W_BANNER = re.compile(r"^\s*input\s+(\S+)\s+output\s*$")
_NETSTAT_W_VALUE = re.compile(r"([0-9]{1,20}(?:\.[0-9]{1,3})?)([KMGTPE]?)")
_NETSTAT_W_COLUMNS = {"packets": ("rx_packets", "tx_packets"), "errs": ("rx_errors", "tx_errors"),
                      "idrops": ("rx_dropped", None), "bytes": ("rx_bytes", "tx_bytes"),
                      "colls": (None, "collisions"), "drops": (None, "tx_dropped")}


def is_netstat_w_header(line: str) -> bool:
    words = line.split()
    return words[:2] == ["packets", "errs"] and words.count("packets") == 2 and "colls" in words


def _humanized(text: str) -> int | None:
    match = _NETSTAT_W_VALUE.fullmatch(text)
    if not match:
        return None
    return int(float(match.group(1)) * 1024 ** " KMGTPE".index(match.group(2) or " "))


def parse_netstat_w(text: str) -> tuple[str, list[dict[str, int]]]:
    """FreeBSD `netstat -w N [-I IF] -bdh` -> (interface or "(Total)", one dict per interval row with
    rx_packets, rx_errors, rx_dropped, rx_bytes, tx_packets, tx_errors, tx_bytes, collisions[, tx_dropped])."""
    interface, keys, rows = "(Total)", None, []
    for line in text.splitlines():
        banner = NETSTAT_W_BANNER.match(line)
        if banner:
            interface = banner.group(1)
            continue
        if is_netstat_w_header(line):
            keys, packets_seen = [], 0
            for word in line.split():
                packets_seen += word == "packets"
                keys.append(_NETSTAT_W_COLUMNS.get(word, (None, None))[1 if packets_seen >= 2 else 0])
            continue
        values = [_humanized(word) for word in line.split()]
        if keys is None or len(values) != len(keys) or None in values:
            continue
        rows.append({key: value for key, value in zip(keys, values) if key is not None})
    if not rows:
        raise ParseError("netstat -w output has no interval rows under a 'packets errs ... colls' header")
    return interface, rows


def parse_netstat_q(text: str) -> dict[str, int]:
    """FreeBSD `netstat -Q` Workstreams table -> {"netisr_<proto>_qdrops": n, "_handled", "_queued"}
    summed over workstreams (usr.bin/netstat/netisr.c prints WSID CPU Name Len WMark Disp'd HDisp'd
    QDrops Queued Handled)."""
    header, rows = _table(text.splitlines(), "WSID", "netstat -Q")
    wanted = {"QDrops": "qdrops", "Queued": "queued", "Handled": "handled", "Disp'd": "dispatched"}
    out: dict[str, int] = {}
    for row in rows:
        if len(row) != len(header) or not is_ascii_int(row[0]):
            continue
        record = dict(zip(header, row))
        for column, name in wanted.items():
            key = f"netisr_{record['Name']}_{name}"
            out[key] = out.get(key, 0) + _int(record[column], "netstat -Q")
    if not out:
        raise ParseError("netstat -Q output has no workstream rows")
    return out


def parse_pfctl_info(text: str) -> dict[str, int]:
    """`pfctl -s info` -> {"pf_states": current entries, "pf_state_searches", "pf_state_inserts",
    "pf_state_removals", "pf_<counter>" ...}. The State Table section is found by its title, so
    the optional 'Interface Stats for IF' block before it (FreeBSD with a loginterface) is skipped."""
    section = None
    out: dict[str, int] = {}
    for line in text.splitlines():
        if not line.strip():
            continue
        if not line.startswith(" "):
            section = line.split("  ")[0].strip()
            continue
        match = re.match(r"^\s+([A-Za-z][A-Za-z -]*?)\s{2,}(\S+)", line)
        if not match or section not in ("State Table", "Counters"):
            continue
        name, value = match.group(1).strip(), match.group(2)
        if section == "State Table":
            key = "pf_states" if name == "current entries" else f"pf_state_{name.replace(' ', '_')}"
        else:
            key = "pf_" + name.replace("-", "_").replace(" ", "_")
        out[key] = _int(value, f"pfctl -s info {name}")
    if "pf_states" not in out:
        raise ParseError("pfctl -s info output has no 'current entries' in its State Table")
    return out


def parse_ifconfig_options(text: str) -> set[str]:
    """FreeBSD `ifconfig IF` -> the enabled capability names of its options=<...> line (RXCSUM,
    TXCSUM, TSO4, LRO ...). nd6 options are not interface capabilities and are left out."""
    for line in text.splitlines():
        match = re.match(r"^\s+options=[0-9a-f]+<([A-Z0-9_,]*)>", line)
        if match:
            return set(filter(None, match.group(1).split(",")))
    if not re.match(r"^[A-Za-z0-9_.]+: flags=", text):
        raise ParseError("ifconfig output does not start with 'IF: flags='")
    return set()


def parse_single_int(text: str, what: str) -> int:
    """A one-number output such as /proc/sys/net/netfilter/nf_conntrack_count."""
    return _int(text.strip(), what)


# --- stack queues, top, media ---------------------------------------------------------------------------

def parse_softnet_rows(text: str) -> list[dict[str, int]]:
    """Linux /proc/net/softnet_stat: one line per online CPU of hex columns (net/core/net-procfs.c):
    processed, dropped (input backlog full: net.core.netdev_max_backlog), time_squeeze (budget or
    time ran out: netdev_budget / netdev_budget_usecs) ... and, since Linux 5.10, the CPU number in
    the 13th column (offline CPUs have no line, so the row index is only a fallback)."""
    rows = [line.split() for line in text.splitlines() if line.strip()]
    if not rows:
        raise ParseError("/proc/net/softnet_stat is empty")
    out = []
    for index, fields in enumerate(rows):
        if len(fields) < 3 or not all(re.fullmatch(r"[0-9a-f]{1,16}", f) for f in fields):
            raise ParseError(f"/proc/net/softnet_stat: {' '.join(fields)[:40]!r} is not a row of hex counters")
        out.append({"cpu": int(fields[12], 16) if len(fields) >= 13 else index, "processed": int(fields[0], 16),
                    "dropped": int(fields[1], 16), "time_squeeze": int(fields[2], 16)})
    return out


def parse_softnet_stat(text: str) -> dict[str, int]:
    """/proc/net/softnet_stat summed over CPUs: softnet_processed, _dropped, _time_squeeze."""
    rows = parse_softnet_rows(text)
    return {f"softnet_{key}": sum(row[key] for row in rows) for key in ("processed", "dropped", "time_squeeze")}


_TOP_CPU = re.compile(r"^CPU\s*(\d+):\s+(.*)$")
_TOP_TOTAL = re.compile(r"^CPU(?: states)?:\s+(.*)$")  # all CPUs together; 'CPU states:' before FreeBSD 7
_TOP_STATE = re.compile(r"([0-9.]+)% (user|nice|system|interrupt|idle)")


def top_rows(lines: Iterable[str], is_header: Callable[[list[str]], bool],
             pct_columns: tuple[str, ...]) -> Iterator[tuple[dict[str, str], float]]:
    """(columns by header name, CPU %) of every process/thread row under a `top` header line: the
    last column (COMMAND) may hold spaces; a row whose CPU % column is not a number is skipped.
    Shared by FreeBSD's top and Linux's procps/BusyBox top (diagnose/screens.py)."""
    header: list[str] | None = None
    for line in lines:
        words = line.split()
        if is_header(words):
            header = words
            continue
        if header is None or not words or not is_ascii_int(words[0]):
            continue
        fields = line.split(None, len(header) - 1)
        if len(fields) < len(header):
            continue
        record = dict(zip(header, fields))
        pct = next((record[k] for k in pct_columns if record.get(k)), "").rstrip("%").replace(",", ".")
        if re.fullmatch(r"[0-9]+(\.[0-9]+)?", pct):
            yield record, float(pct)


def parse_top(text: str) -> tuple[list[dict[str, float]], list[dict]]:
    """FreeBSD `top` (batch or captured screen, -S -H and optionally -P) -> (per-CPU percentages,
    threads). Only the last display counts: top's first display averages since boot. Per-CPU lines
    'CPU 2:  0.0% user,  0.0% nice,  0.0% system, 100% interrupt,  0.0% idle'; thread rows are read
    by the header's columns (C = the CPU the thread last ran on, WCPU or CPU = its share of one CPU,
    COMMAND last and possibly with spaces: 'intr{irq272: igb2:que}')."""
    displays = re.split(r"(?m)^(?=last pid:)", text)
    display = next((d for d in reversed(displays) if d.strip()), "")
    cpus: list[dict[str, float]] = []
    threads: list[dict] = []
    for line in display.splitlines():
        match = _TOP_CPU.match(line.strip())
        if match:
            states = {name: float(value) for value, name in _TOP_STATE.findall(match.group(2))}
            if not states:
                raise ParseError(f"top: CPU line without any state figure: {line.strip()[:60]!r}")
            busy = sum(v for k, v in states.items() if k != "idle")
            # A line cut by the terminal width loses its idle figure: the states shown still add up.
            idle = states.get("idle", max(0.0, 100.0 - busy))
            cpus.append({"cpu": int(match.group(1)), "user_pct": states.get("user", 0) + states.get("nice", 0),
                         "system_pct": states.get("system", 0), "interrupt_pct": states.get("interrupt", 0),
                         "softirq_pct": 0.0, "idle_pct": idle,
                         "busy_pct": round(100.0 - idle, 1) if "idle" in states else round(min(100.0, busy), 1)})
    for record, pct in top_rows(display.splitlines(), lambda words: words[:1] == ["PID"] and "COMMAND" in words,
                                ("WCPU", "CPU")):
        cpu = record.get("C")
        threads.append({"name": record["COMMAND"].strip().strip("[]"), "pct": pct,
                        "cpu": int(cpu) if cpu and is_ascii_int(cpu) else None})
    if not cpus and not threads and freebsd_top_total(text) is None:
        raise ParseError("top output has neither per-CPU lines, an all-CPUs line nor thread rows")
    return cpus, threads


def freebsd_top_total(text: str) -> dict[str, float] | None:
    """FreeBSD top's all-CPUs line of the last display ('CPU:  9.6% user, 0.0% nice, 58.5% system, 31.9%
    interrupt, 0.0% idle'; 'CPU states:' in older tops), as a row with cpu -1, or None."""
    displays = re.split(r"(?m)^(?=last pid:)", text)
    display = next((d for d in reversed(displays) if d.strip()), "")
    for line in display.splitlines():
        match = _TOP_TOTAL.match(line.strip())
        if not match:
            continue
        states = {name: float(value) for value, name in _TOP_STATE.findall(match.group(1))}
        if "idle" not in states:
            return None
        return {"cpu": -1, "user_pct": states.get("user", 0) + states.get("nice", 0),
                "system_pct": states.get("system", 0), "interrupt_pct": states.get("interrupt", 0),
                "softirq_pct": 0.0, "idle_pct": states["idle"], "busy_pct": round(100.0 - states["idle"], 1)}
    return None


_MEDIA = re.compile(r"media: .*?\((\d+)(G|)base[^ )]*")


def parse_ifconfig_media(text: str) -> dict[str, int]:
    """FreeBSD/OpenBSD `ifconfig [-a]` -> {interface: negotiated speed in Mbit/s} from lines such as
    'media: Ethernet autoselect (1000baseT <full-duplex>)' or '(10Gbase-SR <full-duplex>)'."""
    out: dict[str, int] = {}
    name = None
    for line in text.splitlines():
        head = re.match(r"^([A-Za-z0-9_.]+): flags=", line)
        if head:
            name = head.group(1)
            continue
        match = _MEDIA.search(line)
        if name and match:
            out[name] = int(match.group(1)) * (1000 if match.group(2) else 1)
    return out


# BSD drivers whose media is a constant, not a negotiated speed (a BSD interface is named after its driver): vtnet(4)
# reports 10Gbase-T ("Fake the media type. The host does not provide us with any real media information.",
# sys/dev/virtio/network/if_vtnet.c), epair(4) 10Gbase-T (epair_media_status, sys/net/if_epair.c)
FIXED_MEDIA_DRIVERS = ("vtnet", "epair")


def fixed_media_driver(ifname: str) -> bool:
    """Whether a BSD interface's name is one of FIXED_MEDIA_DRIVERS' (vtnet0, epair3a)."""
    return re.fullmatch(rf"(?:{'|'.join(FIXED_MEDIA_DRIVERS)})[0-9]+[ab]?", ifname) is not None


def ifconfig_names(text: str) -> list[str]:
    return re.findall(r"(?m)^([A-Za-z0-9_.]+): flags=", text)


# --- ethtool -S: per-queue packet counters --------------------------------------------------------

# Per-queue packet counter names in `ethtool -S IF`, by driver. Each is the format string of the
# driver's ethtool strings and a real output that shows it; a counter of bytes, drops or XDP
# (rx_queue_0_xdp_packets) is not a packet count of the queue and is left out.
QUEUE_PACKET_COUNTERS: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"^(?P<dir>rx|tx)_queue_(?P<q>\d+)_packets$"),
     'igb/igc/ixgbe "rx_queue_%u_packets" (drivers/net/ethernet/intel/igb/igb_ethtool.c), virtio_net '
     '(drivers/net/virtio_net.c): rx_queue_0_packets in pcengines/apu2-documentation#190'),
    (re.compile(r"^(?P<dir>rx|tx)-(?P<q>\d+)\.packets$"),
     'i40e/iavf "rx-%u.packets" (drivers/net/ethernet/intel/i40e/i40e_ethtool.c): rx-0.packets in the '
     'i40e netdev-qstats patch mail (Joe Damato, "Comparing to ethtool to verify")'),
    (re.compile(r"^(?P<dir>rx|tx)(?P<q>\d+)_packets$"),
     'mlx5 "rx%d_packets" (drivers/net/ethernet/mellanox/mlx5/core/en_stats.c): rx0_packets in the mlx5 '
     'netdev-qstats patch mail'),
    (re.compile(r"^queue_(?P<q>\d+)_(?P<dir>rx|tx)_cnt$"),
     'ena "queue_%u_rx_cnt" (drivers/net/ethernet/amazon/ena/ena_ethtool.c): queue_5_rx_cnt in an AWS '
     'ENA issue thread'),
]
_ETHTOOL_COUNTER = re.compile(r"^\s*(?P<name>[A-Za-z0-9_.\-]+):\s+(?P<value>[0-9]+)\s*$")


# Software NIC drivers whose speed is a constant of the driver, not a negotiated rate: veth sets SPEED_10000 in
# veth_get_link_ksettings (drivers/net/veth.c), tun/tap SPEED_10000 (SPEED_10 in older kernels) in
# tun_default_link_ksettings (drivers/net/tun.c); both read 10000 on this project's host
# (tests/data/linux/veth_speed_and_ethtool_i.txt)
FIXED_SPEED_DRIVERS = frozenset({"veth", "tun"})


def ethtool_driver(text: str) -> str | None:
    """`ethtool -i IF` -> its `driver:` line's value (None when there is none: no ethtool, another output)."""
    for line in text.splitlines():
        key, colon, value = line.partition(":")
        if colon and key.strip() == "driver" and value.strip():
            return value.strip()
    return None


def ethtool_queue_counter(name: str) -> tuple[str, int] | None:
    """'rx_queue_1_packets' -> ('rx', 1); None for any other counter."""
    for pattern, _ in QUEUE_PACKET_COUNTERS:
        match = pattern.match(name)
        if match:
            return match.group("dir"), int(match.group("q"))
    return None


def is_ethtool_counter_line(line: str) -> bool:
    return _ETHTOOL_COUNTER.match(line) is not None


# NIC-wide drop counters in `ethtool -S IF`, as real drivers name them (a non-zero one is a packet the
# NIC or its driver dropped). The rtnl_link_stats64 names (include/uapi/linux/if_link.h) that e1000e,
# igb and others export as they are: rx_missed_errors, rx_no_buffer_count, rx_over_errors,
# rx_fifo_errors, tx_dropped in netdata/netdata#988 (e1000e); rx_missed_errors in ntop/PF_RING#235.
# mlx5 "rx_out_of_buffer" (commit 593cf33829ad "net/mlx5e: Allocate set of queue counters per netdev":
# "RX packet drops due to lack of receive buffers") and "rx_discards_phy" (dropped at the port).
# Solarflare "rx_nodesc_drop_cnt" (Solarflare Server Adapter User Guide, Table 26 'Ethtool -S Output'),
# AMD/Xilinx X3522 "rx_drops"/"tx_drops" (UG1523, 'Linux ethtool Statistics'); Realtek r8169 "rx_missed"
# (rtl8169_gstrings, drivers/net/ethernet/realtek/r8169_main.c; netdata/netdata#4536).
ETHTOOL_DROP_COUNTERS = frozenset({
    "rx_missed_errors", "rx_no_buffer_count", "rx_dropped", "tx_dropped", "rx_fifo_errors", "rx_over_errors",
    "tx_fifo_errors", "rx_out_of_buffer", "rx_discards_phy", "tx_discards_phy", "rx_nodesc_drop_cnt",
    "rx_drops", "tx_drops", "rx_missed"})
ETHTOOL_PACKET_COUNTERS = frozenset({"rx_packets", "tx_packets"})


def is_ethtool_nic_counter(name: str) -> bool:
    return name in ETHTOOL_DROP_COUNTERS or name in ETHTOOL_PACKET_COUNTERS


def parse_ethtool_nic_counters(text: str) -> dict[str, int]:
    """`ethtool -S IF` -> its NIC-wide drop and packet counters ({} when it shows none)."""
    out: dict[str, int] = {}
    for line in text.splitlines():
        match = _ETHTOOL_COUNTER.match(line)
        if match and is_ethtool_nic_counter(match.group("name")):
            out[match.group("name")] = _int(match.group("value"), "ethtool -S")
    return out


def parse_ethtool_queue_packets(text: str) -> dict[tuple[str, int], int]:
    """`ethtool -S IF` (or a grep of it) -> {(direction, queue): packets since the driver loaded}."""
    out: dict[tuple[str, int], int] = {}
    for line in text.splitlines():
        match = _ETHTOOL_COUNTER.match(line)
        if not match:
            continue
        queue = ethtool_queue_counter(match.group("name"))
        if queue is not None:
            out[queue] = _int(match.group("value"), "ethtool -S")
    if not out:
        raise ParseError("ethtool -S: no per-queue packet counter")
    return out


# --- interface statistics: net-tools ifconfig, /sys/class/net/IF/statistics, ethtool -g / -i ---------------
# net-tools lib/interface.c ife_print_long prints, old style (1.60): "RX packets:%llu errors:%lu dropped:%lu
# overruns:%lu frame:%lu", new style (2.x): "RX packets %llu  bytes %llu (...)" then "RX errors %lu  dropped %lu
# overruns %lu  frame %lu". It reads /proc/net/dev, whose drop column is rx_dropped + rx_missed_errors and whose
# fifo column (ifconfig's "overruns") is rx_fifo_errors (net/core/net-procfs.c dev_seq_printf_stats).
