"""Recognise DUT outputs pasted raw — no `### linerate:` headers — by their content.

Users paste what a forum thread asked for: `cat /proc/interrupts` (or a `grep eth` of it, which
drops the CPU header row), `/proc/net/softnet_stat`, `/proc/softirqs`, Linux `top`/BusyBox `top`,
`mpstat -P ALL`, FreeBSD `top -P`/`top -aSH`, `vmstat -i` (or `vmstat -i | grep igb`),
`sysctl hw.intrs`, `netstat -Q`, `netstat -i`, `netstat -w 1 [-I IF] -bdh` (per-interval drops), sysstat's `sar -n DEV`
/ `sar -n EDEV` (per-interface packet and drop rates), Linux `ethtool -S IF` (per-queue packet counters,
often grepped: `ethtool -S eth0 | grep rx_queue`, and NIC-wide drop counters such as
rx_missed_errors under its `NIC statistics:` header), interface statistics — net-tools `ifconfig` (either
style, or a `grep RX` of it), `/sys/class/net/IF/statistics/*` (a number under its `cat`, or `grep .` lines),
`ethtool -g IF` ring sizes, `ethtool -i IF` — and the connection-state table's outputs — pf's
`pfctl -si` (or `| grep memory`) and `pfctl -sm`, `conntrack -S`, the conntrack sysctls, a bare number under
`cat .../nf_conntrack_count` / `nf_conntrack_max` / `conntrack -C`, kernel log 'nf_conntrack: table full'
lines — read by dut/state_parsers.py, the same parsers as snapshot sections; often several concatenated, with or without the
shell prompt lines that ran them, sometimes the same command twice (before and after). A line that
is only a command (`top -aSH` echoed above its screen, no prompt) names the block below it, like
a prompt line. The text is
cut into blocks by the lines that can only start one kind of output (a CPU header row, a hex
softnet row, 'last pid:', '%Cpu0 :', 'interrupt  total  rate', 'WSID CPU' ...) and by prompt
lines; each block goes to the parser of its kind. A block no recogniser claims is reported as
"section present but not understood: <its first line>", never dropped, with a hint when the screen
is one linerate can name (htop). A `> ` quote prefix (markdown, e-mail), a markdown list marker and
`**emphasis**` are stripped from every line; a `# remark` between a command and its output is skipped.

When one kind of counter table appears twice, the first is read as the before and the last as
the after, so the figures are a window; a single table is a total since boot and says so.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from linerate.diagnose import screens
from linerate.dut import nic_statistics, parsers, sar, state_parsers
from linerate.errors import ParseError
from linerate.numbers import ascii_int, is_ascii_int

FAMILY = {"interrupts": "linux", "softirqs": "linux", "softnet": "linux", "linux-top": "linux",
          "mpstat": "linux", "proc-stat": "linux", "freebsd-top": "freebsd", "vmstat": "bsd",
          "intrs": "freebsd", "netstat-Q": "freebsd", "netstat-i": "bsd", "netstat-w": "bsd", "ethtool-S": "linux",
          "pf-info": "bsd", "pf-memory": "bsd", "conntrack-S": "linux", "conntrack-sysctl": "linux",
          "conntrack-log": "linux",
          "ifconfig": "linux", "sysfs-stat": "linux", "ethtool-g": "linux", "ethtool-i": "linux", "sar-net": "linux"}
STRICT = {"cpu-table", "softnet", "vmstat", "intrs", "proc-stat", "ethtool-S", "pf-memory", "conntrack-S",
          "conntrack-sysctl", "sysfs-stat", "ethtool-g", "ethtool-i"}  # end at the first line not of their grammar

_COMMANDS = (r"(?:sudo\s+)?(?:cat|grep|egrep|top|htop|vmstat|netstat|mpstat|sar|sysctl|ethtool|head|tail|watch|ps|"
             r"ifconfig|ip|for|while|sh|busybox|awk|sed|sleep|pfctl|conntrack)\b")
PROMPT = re.compile(rf"^(?:\[[^\]]*\])*\S*?\s?[#$%>]\s*(?P<command>{_COMMANDS}.*)$"
                    r"|^(?:\([^)]*\)\s*)?[\w.-]+@[\w.-]+:[^\s#$]*\s?[#$]\s*(?P<script>\S.*)$")  # user@host:~# ./any
# a command echoed without a prompt: the command word, then options/paths/pipes only (no counters, no
# '=' or ':' of output lines): 'top -aSH', 'cat /proc/interrupts', 'ethtool -S eth0 | grep rx_queue'
ECHOED = re.compile(rf"^{_COMMANDS}(?:\s+[-\w./|*'\"\[\]^$]+)*(?:\s+\([^()]*\))?\s*$")  # '(ix0 the same)': a remark
# a user's caption above a paste ('current traffic:', 'all traffic:'): a few words and a colon, not output
CAPTION = re.compile(r"^\s*[A-Za-z][A-Za-z ]{0,30}:\s*$")
# a prompt with no command after it ('root@fw:~#', '(venv) host:~ #'), and sysstat's banner above sar/mpstat/iostat
# output ('Linux 5.14.21-... (host)  06/12/25  _x86_64_  (16 CPU)'): neither says anything linerate reads
BARE_PROMPT = re.compile(r"^(?:\([^)]*\)\s*)?(?:\[[^\]]*\]\s*)?[\w.@:~/-]*\s?[#$%>]\s*$")
SYSSTAT_BANNER = re.compile(r"^\S+ \S+ \([^)]*\)\s+.*\(\d+ CPU\)\s*$")
_SOFTNET = re.compile(r"^\s*[0-9a-f]{8}(\s+[0-9a-f]{8}){2,}\s*$")
_IRQ_ROW = re.compile(r"^\s*([0-9]+|[A-Z][A-Z0-9_]*):\s+[0-9]+(\s|$)")
_VMSTAT_ROW = re.compile(r"^(irq[0-9]+:|cpu[0-9]+:|swi[0-9]+:|stray |[Tt]otal\s).*\s[0-9]+\s+[0-9]+\s*$")
_INTRS_ROW = re.compile(r"^\s*(hw\.intrs:\s*)?irq[0-9]+:.*@cpu[0-9]+.*:\s*[0-9]+\s*$")
_PROC_STAT = re.compile(r"^cpu[0-9]*\s+[0-9]+\s+[0-9]+\s+[0-9]+")
# pfctl -si (its header lines, or counter lines of a `pfctl -si | grep memory`), pfctl -sm, conntrack -S (per-CPU
# 'cpu=0 found=0 ...', the older 'entries  90' table, a /proc/net/stat/nf_conntrack header), the conntrack sysctls
_PF_INFO = re.compile(r"^(Status: (Enabled|Disabled)\b|State Table\s+Total\s+Rate|\s*current entries\s+[0-9]+\s*$|"
                      r"\s*(memory|state-limit|state-insert|src-limit)\s+[0-9]+\s+[0-9.]+/s\s*$)")
_PF_MEMORY = re.compile(r"^\s*[a-z][a-z-]*\s+hard limit\s+[0-9]+\b")
_CT_STATS = re.compile(r"^(cpu=[0-9]+\s+[a-z_]+=[0-9]+|entries\s+[0-9]+\s*$|entries\s+[a-z_]+\s+[a-z_]+\s)")
_CT_SYSCTL = re.compile(r"^\s*(?:/proc/sys/)?net[./](?:netfilter[./]|ipv4[./]netfilter[./])?(?:nf|ip)_conntrack_\w+\s*[=:]\s*[0-9]+\s*$")
_CT_LOG = re.compile(r".*\b(?:nf|ip)_conntrack: table full, dropping packet")


def _start(line: str) -> str | None:
    """The kind of output a line can only begin (or belong to), if any."""
    text = line.rstrip()
    words = text.split()
    if re.match(r"^\s*CPU0(\s+CPU[0-9]+)*\s*$", text) or _IRQ_ROW.match(text):
        return "cpu-table"
    if _SOFTNET.match(text):
        return "softnet"
    if _INTRS_ROW.match(text):
        return "intrs"
    if re.match(r"^interrupt\s+total\s+rate", text) or _VMSTAT_ROW.match(text):
        return "vmstat"
    if _PROC_STAT.match(text):
        return "proc-stat"
    if re.match(r"^last pid:", text) or re.match(r"^CPU(?: states)?\s*[0-9]*:\s+[0-9.]+% user", text):
        return "freebsd-top"
    if re.match(r"^(top - |%Cpu|Cpu\(s\)|Tasks:|Threads:|Load average:)", text) or \
            re.match(r"^Mem: .* used,", text) or screens.parse_busybox_cpu_line(text) or \
            screens.parse_procps_cpu_line(text):  # an indented paste of top's CPU lines (ntop/PF_RING#24)
        return "linux-top"
    if "CPU" in words and "%idle" in words:
        return "mpstat"
    if re.match(r"^(Configuration:|Protocols:|Workstreams:|WSID\s+CPU|Setting\s+Current\s+Limit|Thread count\s|"
                r"Default queue limit\s|Dispatch policy\s|Threads bound to CPUs\s|Name\s+Proto\s+QLimit)", text):
        return "netstat-Q"
    if re.match(r"^Name\s+Mtu\s+Network", text):
        return "netstat-i"
    if parsers.NETSTAT_W_BANNER.match(text) or parsers.is_netstat_w_header(text):
        return "netstat-w"
    if sar.is_header(text):
        return "sar-net"
    if re.match(r"^\s*NIC statistics:\s*$", text) or _ethtool_queue_line(text):
        return "ethtool-S"
    if nic_statistics.IFCONFIG_HEADER.match(text) or nic_statistics.IFCONFIG_STATS.match(text):
        return "ifconfig"
    if nic_statistics.SYSFS_STAT_LINE.match(text):
        return "sysfs-stat"
    if nic_statistics.ETHTOOL_RING_HEADER.match(text.strip()):
        return "ethtool-g"
    if re.match(r"^driver: [\w.-]+\s*$", text):
        return "ethtool-i"
    if words[:1] == ["PID"] and words[-1:] == ["COMMAND"]:
        return "freebsd-top" if ("WCPU" in words or "PRI" in words) else "linux-top"
    for kind, pattern in (("pf-info", _PF_INFO), ("pf-memory", _PF_MEMORY), ("conntrack-S", _CT_STATS),
                          ("conntrack-sysctl", _CT_SYSCTL), ("conntrack-log", _CT_LOG)):
        if pattern.match(text):
            return kind
    return None


def _ethtool_queue_line(text: str) -> bool:
    match = re.match(r"^\s*([A-Za-z0-9_.\-]+):\s+[0-9]+\s*$", text)
    return bool(match) and (parsers.ethtool_queue_counter(match.group(1)) is not None
                            or parsers.is_ethtool_nic_counter(match.group(1)))


# A quote prefix on pasted lines (markdown/e-mail '> ', nested '> > '), a markdown list marker ('- ', '* ')
# and emphasis around a counter ('**tx_dropped: 0**', netdata/netdata#3579): stripped before recognition.
_QUOTE = re.compile(r"^ {0,3}(?:> ?)+")
# a runner's stream label in front of each output line (scylladb/scylladb#2611: '[stdout]  683: 6374 0 ...')
_STREAM_LABEL = re.compile(r"^\[(?:stdout|stderr)\] ?")
_LIST_MARKER = re.compile(r"^ {0,3}[-*+] (?=\S)")
_EMPHASIS = re.compile(r"(\*\*|__)(?=\S)(.+?)(?<=\S)\1")
# Screens linerate does not read but can name, with the paste that would do instead. htop's CPU meters
# ("  0[||||||   41.8%]", openwrt/openwrt#15820) show a bar, not the user/system/irq/softirq split.
CPU_HINT = "paste `top -b -n 2 -d 1` with per-CPU lines (press 1) or `mpstat -P ALL 1 1`"
SCREEN_HINTS = [(re.compile(r"^\s*[0-9]+\s*\[[|#*!\s]*[0-9.]+%\]"), f"htop's CPU meters are not read: {CPU_HINT}")]
# USB network adapter drivers: a USB NIC's interrupts are its USB host controller's (xhci-hcd:usbN), so
# those count as network only when the paste itself names one of these (ethtool -i, lsusb -t, dmesg).
USB_NIC_DRIVER = re.compile(r"(?<![\w-])(r8152|r8153\w*|ax88179_178a|ax88179|cdc_ether|cdc_ncm|smsc95xx|lan78xx|asix)"
                            r"(?![\w-])")


def strip_quote(line: str) -> str:
    """The line without a quote prefix, a list marker or markdown emphasis (the text inside is kept)."""
    line = _QUOTE.sub("", line, count=1) if line.lstrip().startswith(">") else line
    line = _STREAM_LABEL.sub("", line, count=1) if line.startswith("[std") else line
    line = _LIST_MARKER.sub("", line, count=1)
    return _EMPHASIS.sub(r"\2", line) if "**" in line or "__" in line else line


def _hint(block_lines: list[str]) -> str:
    for pattern, hint in SCREEN_HINTS:
        if any(pattern.match(line) for line in block_lines):
            return f" ({hint})"
    return ""


def _fits(kind: str, line: str) -> bool:
    """Does a line belong to a strict block already open?"""
    text = line.rstrip()
    return {"cpu-table": bool(_IRQ_ROW.match(text)) or re.match(r"^\s*[A-Z]{2,}[A-Z0-9_]*:", text) is not None,
            "softnet": bool(_SOFTNET.match(text)), "intrs": bool(_INTRS_ROW.match(text)),
            "vmstat": bool(_VMSTAT_ROW.match(text)),
            "proc-stat": bool(re.match(r"^(cpu|intr|ctxt|btime|processes|procs_|softirq)", text)),
            "ethtool-S": parsers.is_ethtool_counter_line(text),
            "pf-memory": bool(_PF_MEMORY.match(text)),
            "conntrack-S": bool(re.match(r"^(cpu=[0-9]+\s|[a-z_]+\s+[0-9]+\s*$|[0-9a-f]{8}(\s+[0-9a-f]{8})+\s*$)", text)),
            "conntrack-sysctl": bool(_CT_SYSCTL.match(text)),
            "sysfs-stat": bool(nic_statistics.SYSFS_STAT_LINE.match(text)),
            "ethtool-g": bool(nic_statistics.ETHTOOL_RING_LINE.match(text.strip())),
            "ethtool-i": bool(re.match(r"^[a-z][a-z-]*:( .*)?$", text)),
            }.get(kind, False)


def _glued_output(line: str) -> tuple[str, str | None]:
    """(command, output) of a prompt line that carries its output too, when some tracker stored the paste
    without its line breaks ('$ conntrack -S cpu=0 found=770 ... cpu=1 ...'): the output starts at the
    first word from which the rest of the line is output of a kind linerate reads; (line, None) otherwise."""
    words = line.split()
    for index in range(2, len(words)):
        rest = " ".join(words[index:])
        if "=" in words[index] and _start(rest) is not None:
            return " ".join(words[:index]), rest
    return line, None


@dataclass
class Block:
    kind: str | None  # None: not recognised
    lines: list[str]
    command: str | None = None  # the prompt line that ran it

    @property
    def first_line(self) -> str:
        if self.command:
            return self.command
        return next((line.strip() for line in self.lines if line.strip()), "")


def blocks(text: str) -> list[Block]:
    """Cut raw text into blocks of one kind each (None: not recognised). A prompt line closes the
    block before it and names the command of the block after it."""
    out: list[Block] = []
    current: Block | None = None
    for line in (strip_quote(raw) for raw in text.splitlines()):
        if line.lower().startswith(("# source:", "### linerate")) or re.match(r"^\s*(```|~~~)\S*\s*$", line):
            continue  # the corpus' source line, snapshot headers, markdown code fences around a paste
        if BARE_PROMPT.match(line.strip()) or SYSSTAT_BANNER.match(line.strip()):
            continue
        if CAPTION.match(line) and len(line.split()) <= 3 and _start(line) is None and \
                (current is None or current.kind is not None) and \
                not (current is not None and current.kind in STRICT and _fits(current.kind, line)):
            continue  # outside an unread block: a caption says nothing the block after it does not
        if line.startswith("# ") and not PROMPT.match(line.strip()) and current is not None and current.command \
                and current.kind is None and not any(text.strip() for text in current.lines):
            continue  # a remark between a command and its output ('#    user   nice   system', CI20_linux#35)
        if PROMPT.match(line.strip()) or (_start(line) is None and ECHOED.match(line.strip())):
            command, glued = _glued_output(line.strip())
            current = Block(None, [], command)
            out.append(current)
            if glued is None:
                continue
            line = glued  # its output, on the same line (a tracker that lost the paste's line breaks)
        kind = _start(line)
        if current is not None and current.kind in STRICT:
            if _fits(current.kind, line):
                current.lines.append(line)
                continue
            current = None
        if current is not None and current.kind is None:
            if kind is None:
                current.lines.append(line)
                continue
            if current.command and not any(text.strip() for text in current.lines):
                current.kind = kind  # the output of the prompt line above
                current.lines = [line]
                continue
        elif current is not None and (kind is None or kind == current.kind):
            current.lines.append(line)
            continue
        if kind is None and not line.strip():
            current = None
            continue
        current = Block(kind, [line])
        out.append(current)
    return [b for b in out if any(line.strip() for line in b.lines)]


@dataclass
class Reading:
    """What raw outputs said, by kind. Lists hold one entry per display, in the order pasted."""

    irq_tables: list[tuple[int, bool, dict[str, list[int]]]] = field(default_factory=list)  # (CPUs, header, per-CPU)
    net_rx: list[list[int]] = field(default_factory=list)  # /proc/softirqs NET_RX per CPU
    softnet: list[list[dict[str, int]]] = field(default_factory=list)
    vmstat: list[dict[str, int]] = field(default_factory=list)
    intr_bindings: dict[str, tuple[int, int]] = field(default_factory=dict)
    # ethtool -S per-queue packet counters, one dict per display: "enp1s0" -> {("rx", 0): packets}
    queue_packets: list[dict[str, dict[tuple[str, int], int]]] = field(default_factory=list)
    # ethtool -S NIC-wide drop and packet counters, one dict per display: "eth0" -> {"rx_missed_errors": n}
    nic_counters: list[dict[str, dict[str, int]]] = field(default_factory=list)
    # interface statistics named as rtnl_link_stats64 (ifconfig, /sys/class/net/IF/statistics), one dict per
    # display: "eth2" -> {"rx_missed_errors": n, "rx_dropped_missed": n (ifconfig's drop column) ...}
    link_stats: list[dict[str, dict[str, int]]] = field(default_factory=list)
    rings: dict[str, dict[str, int]] = field(default_factory=dict)  # ethtool -g: "eth2" -> {"rx": 512, "rx_max": 4096}
    # netstat -w tables: (interface or "(Total)", one dict of counters per interval row)
    interval_counters: list[tuple[str, list[dict[str, int]]]] = field(default_factory=list)
    drop_rates: bool = False  # interval_counters hold per-second rates (sar), not counts
    usb_nic_driver: str = ""  # a USB NIC driver the paste names (r8152, ax88179_178a, cdc_ether ...)
    proc_stat: list[list[dict[str, int]]] = field(default_factory=list)
    top_cpu: list[dict[str, float]] = field(default_factory=list)
    threads: list[dict] = field(default_factory=list)
    cpu_source: str = ""
    cpu_total: dict[str, float] | None = None  # top's all-CPUs line (%Cpu(s), BusyBox 'CPU:') of the last screen
    # connection-state counters (linerate.dut.state_parsers keys), one dict per output of each kind, in order
    state: dict[str, list[dict[str, int]]] = field(default_factory=dict)
    counters: dict[str, int] = field(default_factory=dict)
    families: set[str] = field(default_factory=set)
    read: list[str] = field(default_factory=list)  # one line per output understood
    not_understood: list[str] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.read)

    def merge(self, other: Reading) -> None:
        """Add another reading's outputs after this one's (displays keep their order)."""
        for name in ("irq_tables", "net_rx", "softnet", "vmstat", "proc_stat", "queue_packets", "nic_counters",
                     "interval_counters", "link_stats", "read",
                     "not_understood"):
            getattr(self, name).extend(getattr(other, name))
        self.intr_bindings.update(other.intr_bindings)
        self.rings.update(other.rings)
        self.counters.update(other.counters)
        self.families |= other.families
        self.usb_nic_driver = self.usb_nic_driver or other.usb_nic_driver
        self.drop_rates = self.drop_rates or other.drop_rates
        for kind, displays in other.state.items():
            self.state.setdefault(kind, []).extend(displays)
        if other.cpu_total is not None:
            self.cpu_total = other.cpu_total
        if other.top_cpu:
            self.top_cpu, self.cpu_source = other.top_cpu, other.cpu_source
        if other.threads:
            self.threads = other.threads


def _parse_cpu_table(block: Block, reading: Reading) -> None:
    text = "\n".join(block.lines)
    displays = parsers.parse_interrupt_displays(text)
    for ncpu, header, rows in displays:
        net_rx = next((counts for label, _, counts in rows if label == "NET_RX"), None)
        if net_rx is not None:
            reading.net_rx.append(net_rx)
            reading.families.add("linux")
            reading.read.append(f"/proc/softirqs ({ncpu} CPUs)")
            continue
        per_cpu = parsers.interrupts_per_cpu(rows)
        if not per_cpu:
            raise ParseError("no numbered IRQ rows")
        reading.irq_tables.append((ncpu, header, per_cpu))
        reading.families.add("linux")
        how = "" if header else f", no CPU header row: {ncpu} CPUs counted from its columns"
        reading.read.append(f"/proc/interrupts ({_count(len(per_cpu), 'source')}{how})")


def _parse_block(block: Block, reading: Reading) -> None:
    text = "\n".join(block.lines)
    kind = block.kind
    if kind == "cpu-table":
        _parse_cpu_table(block, reading)
        return
    if kind == "softnet":
        rows = parsers.parse_softnet_rows(text)
        reading.softnet.append(rows)
        reading.read.append(f"/proc/net/softnet_stat ({len(rows)} CPUs)")
    elif kind == "vmstat":
        reading.vmstat.append(parsers.parse_vmstat_i(text))
        reading.read.append(f"vmstat -i ({_count(len(reading.vmstat[-1]), 'source')})")
    elif kind == "intrs":
        reading.intr_bindings.update(parsers.parse_freebsd_intr_bindings(text))
        reading.read.append(f"hw.intrs ({len(reading.intr_bindings)} sources with their CPU)")
    elif kind == "proc-stat":
        reading.proc_stat.append(parsers.parse_proc_stat(text))
        reading.read.append(f"/proc/stat ({len(reading.proc_stat[-1])} CPUs)")
    elif kind == "freebsd-top":
        cpus, threads = parsers.parse_top(text)
        reading.cpu_total = parsers.freebsd_top_total(text) or reading.cpu_total
        _set_top(reading, cpus, threads, "FreeBSD top", reading.cpu_total)
    elif kind == "linux-top":
        cpus, threads = screens.parse_linux_top(text)
        reading.cpu_total = screens.aggregate_cpu(text) or reading.cpu_total
        _set_top(reading, cpus, threads, "top", reading.cpu_total)
    elif kind in STATE_PARSERS:
        what, parse = STATE_PARSERS[kind]
        values = parse(text)
        reading.state.setdefault(kind, []).append(values)
        reading.read.append(f"{what} ({_state_summary(values)})")
    elif kind == "mpstat":
        _set_top(reading, screens.parse_mpstat(text), [], "mpstat")
    elif kind == "netstat-Q":
        reading.counters.update(parsers.parse_netstat_q(text))
        reading.read.append("netstat -Q")
    elif kind == "netstat-i":
        reading.counters.update(parsers.parse_netstat_i(text))
        reading.read.append("netstat -i")
    elif kind == "netstat-w":
        interface, rows = parsers.parse_netstat_w(text)
        reading.interval_counters.append((interface, rows))
        reading.read.append(f"netstat -w ({interface}, {_count(len(rows), 'interval')})")
    elif kind == "sar-net":
        tables = sar.parse_sar_net(text)
        for nic, rows in tables.items():  # one row of mean rates: a sum of it is a rate, as the rule reads it
            reading.interval_counters.append((nic, [{key: sum(r.get(key, 0) for r in rows) / len(rows) for key in rows[0]}]))
        reading.drop_rates = True
        what = "sar -n EDEV" if any("rx_dropped" in rows[0] for rows in tables.values()) else "sar -n DEV"
        reading.read.append(f"{what} ({', '.join(tables)}; rates per second, "
                            f"{_count(max(map(len, tables.values())), 'interval')})")
    elif kind in ("ifconfig", "sysfs-stat", "ethtool-g", "ethtool-i"):
        _parse_link_block(block, reading)
    elif kind == "ethtool-S":
        nic = _ethtool_interface(block.command)
        try:
            queues = parsers.parse_ethtool_queue_packets(text)
        except ParseError:
            queues = {}
        wide = parsers.parse_ethtool_nic_counters(text)
        if not queues and not wide:
            raise ParseError("ethtool -S: no per-queue packet counter and no NIC-wide drop counter")
        parts = []
        if queues:
            reading.queue_packets.append({nic: queues})
            rx = sum(1 for direction, _ in queues if direction == "rx")
            parts.append(f"{_count(rx, 'rx queue')} with packet counters")
        if wide:
            reading.nic_counters.append({nic: wide})
            drops = sum(1 for name in wide if name in parsers.ETHTOOL_DROP_COUNTERS)
            parts.append(f"{_count(drops, 'NIC-wide drop counter')}")
        reading.read.append(f"ethtool -S {nic} ({', '.join(parts)})")
    else:
        raise ParseError("not a kind linerate reads")
    reading.families.add(FAMILY[kind])


def _parse_link_block(block: Block, reading: Reading) -> None:
    """ifconfig's counters, `grep . /sys/class/net/IF/statistics/*`, ethtool -g ring sizes, ethtool -i's driver."""
    text = "\n".join(block.lines)
    if block.kind == "ifconfig":
        named = re.search(r"ifconfig\s+([\w.:@-]+)", block.command or "")
        stats = nic_statistics.parse_ifconfig(text, named.group(1) if named else "the NIC")
        reading.link_stats.append(stats)
        reading.read.append(f"ifconfig {', '.join(stats)} (RX/TX counters)")
    elif block.kind == "sysfs-stat":
        stats = nic_statistics.parse_sysfs_stat_lines(text)
        reading.link_stats.append(stats)
        reading.read.append(f"/sys/class/net/{'|'.join(stats)}/statistics ({sum(map(len, stats.values()))} counters)")
    elif block.kind == "ethtool-g":
        rings = nic_statistics.parse_ethtool_rings(text)
        reading.rings.update(rings)
        reading.read.append("; ".join(f"ethtool -g {nic} (RX ring {r['rx']} of {r['rx_max']})"
                                      for nic, r in rings.items() if "rx" in r and "rx_max" in r))
    else:
        driver = re.match(r"^driver: ([\w.-]+)", block.lines[0]).group(1)
        reading.read.append(f"ethtool -i (driver {driver})")


def _ethtool_interface(command: str | None) -> str:
    """The interface of `ethtool -S IF`, from the command line above the counters."""
    match = re.search(r"ethtool\s+(?:-S|--statistics)\s+(\S+)", command or "")
    return match.group(1) if match else "the NIC"


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


STATE_PARSERS = {"pf-info": ("pfctl -si", state_parsers.parse_pfctl_state_info),
                 "pf-memory": ("pfctl -sm", state_parsers.parse_pfctl_memory),
                 "conntrack-S": ("conntrack -S", state_parsers.parse_conntrack_stats),
                 "conntrack-sysctl": ("conntrack sysctls", state_parsers.parse_conntrack_sysctl),
                 "conntrack-log": ("kernel log", state_parsers.parse_state_log)}
_STATE_SHOWN = ("state_count", "state_max", "insert_failed", "drop", "early_drop", "memory_failures",
                "state_limit_hits", "state_insert_failures", "table_full_events")


def _state_summary(values: dict[str, int]) -> str:
    shown = [f"{key} {values[key]:,}" for key in _STATE_SHOWN if key in values]
    return ", ".join(shown) or f"{len(values)} counters"


# A bare number is the output of the command above it: `cat /proc/sys/net/netfilter/nf_conntrack_count` (or
# `sysctl -n`, `conntrack -C`). One command may read both (`cat .../nf_conntrack_count .../nf_conntrack_max`).
_COUNT_COMMAND = re.compile(r"(?:nf|ip)_conntrack_(count|max)\b|conntrack\s+(?:-C|--count)\b")
# pf's state count as wc(1) prints it: `pfctl -ss | wc -l` (pfctl(8): -s states, one line per state)
_PF_COUNT_COMMAND = re.compile(r"\bpfctl\s+(?:-[a-zA-Z]+\s+)*-s\s*s(?:tates?)?\b[^|]*\|\s*wc\s+-l\b")


def _bare_numbers(block: Block, reading: Reading) -> bool:
    """A prompt line reading conntrack's count/max and only integers below it: read, True."""
    values = [line.strip() for line in block.lines if line.strip()]
    stats = list(nic_statistics.SYSFS_STAT.finditer(block.command or ""))
    if stats and len(values) == len(stats) and all(is_ascii_int(v) for v in values):
        read: dict[str, dict[str, int]] = {}
        for match, value in zip(stats, values):
            read.setdefault(match.group("nic"), {})[match.group("name")] = ascii_int(value)
        reading.link_stats.append(read)
        reading.families.add("linux")
        prompt = PROMPT.match(block.command or "")
        command = (prompt.group("command") or prompt.group("script")) if prompt else block.command
        reading.read.append(f"{command[:70]} ({', '.join(f'{k} {v:,}' for s in read.values() for k, v in s.items())})")
        return True
    if _PF_COUNT_COMMAND.search(block.command or "") and len(values) == 1 and is_ascii_int(values[0]):
        got = {"state_count": ascii_int(values[0])}
        reading.state.setdefault("pf-count", []).append(got)
        reading.families.add("bsd")
        reading.read.append(f"{block.command[:60]} ({_state_summary(got)})")
        return True
    names = [m.group(1) or "count" for m in _COUNT_COMMAND.finditer(block.command or "")]
    if not names or len(values) != len(names) or not all(is_ascii_int(v) for v in values):
        return False
    got = {("state_count" if name == "count" else "state_max"): ascii_int(v) for name, v in zip(names, values)}
    reading.state.setdefault("conntrack-number", []).append(got)
    reading.families.add("linux")
    reading.read.append(f"{block.command[:60]} ({_state_summary(got)})")
    return True


def _set_top(reading: Reading, cpus: list[dict[str, float]], threads: list[dict], what: str,
             total: dict[str, float] | None = None) -> None:
    if cpus:
        reading.top_cpu, reading.cpu_source = cpus, f"{what}'s per-CPU lines"
    if threads:
        reading.threads = threads
    detail = f"{len(cpus)} CPU lines" if cpus else \
        f"the all-CPUs line only, {total['idle_pct']:.1f}% idle" if total else "no per-CPU lines"
    reading.read.append(f"{what} ({detail}, {len(threads)} threads)")


# softnet_stat turned into decimal by the command that printed it (RHEL's network tuning guide: awk with
# strtonum("0x" $i) over /proc/net/softnet_stat | column -t); a paste may elide rows with "..."
_ELIDED = re.compile(r"^\s*(\.\.\.|…|\(\.\.\.\))\s*$")


def _decimal_softnet(block: Block, reading: Reading) -> bool:
    """A command reading /proc/net/softnet_stat and converting it to decimal, rows of integers below it:
    read as softnet_stat (column 13, since Linux 5.10, is the CPU), True."""
    command = block.command or ""
    if "softnet_stat" not in command or not re.search(r"strtonum|%d|16#|printf", command):
        return False
    rows = [line.split() for line in block.lines if line.strip() and not _ELIDED.match(line)]
    if not rows or not all(len(fields) >= 3 and all(is_ascii_int(f) for f in fields) for fields in rows):
        return False
    softnet = [{"cpu": ascii_int(fields[12]) if len(fields) >= 13 else index, "processed": ascii_int(fields[0]),
                "dropped": ascii_int(fields[1]), "time_squeeze": ascii_int(fields[2])}
               for index, fields in enumerate(rows)]
    reading.softnet.append(softnet)
    reading.families.add("linux")
    elided = any(_ELIDED.match(line) for line in block.lines)
    reading.read.append(f"/proc/net/softnet_stat in decimal ({len(softnet)} CPUs{'; the paste left rows out' if elided else ''})")
    return True


def recognise(text: str) -> Reading:
    """Raw text -> Reading; every block either read or listed as not understood."""
    reading = Reading()
    text = text.lstrip("\ufeff")  # a UTF-8 byte order mark (Notepad) before the first line
    usb = USB_NIC_DRIVER.search("\n".join(line for line in text.splitlines() if not line.startswith("# source:")))
    reading.usb_nic_driver = usb.group(1) if usb else ""
    for block in blocks(text):
        if block.kind is None:
            if _bare_numbers(block, reading) or _decimal_softnet(block, reading):
                continue
            if block.first_line:
                reading.not_understood.append(block.first_line[:100] + _hint(block.lines))
            continue
        try:
            _parse_block(block, reading)
        except (ParseError, ValueError, IndexError):
            reading.not_understood.append(block.first_line[:100])
    return reading
