"""Pure parsers of a firewall's state-table telemetry: text in, numbers out. Each is unit-tested on
real captured outputs in tests/data/state (tests/unit/test_state_telemetry.py); anything that is
not the expected shape raises ParseError naming the command, never a silent zero.

Every `parse_*` returns dict[str, int] with these normalised keys where the source has them
(absent keys mean "not read", never 0):

    state_count            entries in the table now (a gauge: nf_conntrack_count, pf 'current
                           entries', net.inet.ip.fw.dyn_count)
    state_max              the table's limit (nf_conntrack_max, pf `set limit states`, dyn_max)
    buckets                conntrack hash buckets (nf_conntrack_buckets) / ipfw dyn_buckets
    searches, inserts, removals   pf State Table totals (conntrack `searched`/`insert`, see below)
    memory_failures        pf 'memory' counter: a pool allocation failed - with the global state
                           limit reached, pool_get()/uma_zalloc() of a state fails (PFRES_MEMORY)
    state_limit_hits       pf 'state-limit': a rule's own `max N` was reached (PFRES_MAXSTATES)
    state_insert_failures  pf 'state-insert': pf_state_insert() found the key taken (PFRES_STATEINS)
    src_limit_hits         pf 'src-limit' (source-tracking limits, PFRES_SRCLIMIT)
    insert_failed, drop, early_drop, found, invalid, ignore, error, search_restart,
    clash_resolve, chaintoolong ...   conntrack counters under the kernel's own names, summed
                           over CPUs (the field set differs between kernels: read generically)
    table_full_events      kernel log lines saying the table was full and a packet dropped
    adaptive_start, adaptive_end     pf adaptive-timeout thresholds, in states
    cpus                   CPU rows the conntrack counters were summed over

Counters (all but the gauges state_count, state_max, buckets, adaptive_*, cpus) are cumulative
since boot or since `pfctl -z`; callers take before/after deltas (diagnose/state_rules.py).
Timeouts come from separate functions, in seconds, under each OS's own names
(`tcp_timeout_time_wait`, `tcp.closed`, `dyn_fin_lifetime`).

Sources of the formats and meanings:
- conntrack(8) (conntrack-tools; `-S`/`--stats`, `-C`/`--count`); the kernel's
  /proc/net/stat/nf_conntrack (net/netfilter/nf_conntrack_standalone.c, ct_cpu_seq_show: one
  hex row per CPU, its `entries` column is the global count repeated on every row); Linux
  Documentation/networking/nf_conntrack-sysctl.rst ("Netfilter Conntrack Sysfs variables",
  https://docs.kernel.org/networking/nf_conntrack-sysctl.html).
- pfctl(8) `-s info`, `-s memory`, `-s timeouts` (https://man.openbsd.org/pfctl.8,
  https://man.freebsd.org/cgi/man.cgi?query=pfctl&sektion=8); the counters' reasons in OpenBSD
  sys/net/pf.c (pf_test_rule, pf_create_state) and FreeBSD sys/netpfil/pf/pf.c.
- ipfw(8) SYSCTL VARIABLES (https://man.freebsd.org/cgi/man.cgi?query=ipfw&sektion=8):
  net.inet.ip.fw.dyn_count, dyn_max, dyn_*_lifetime.
"""

from __future__ import annotations

import re

from linerate.dut.parsers import parse_pfctl_info, parse_single_int
from linerate.errors import ParseError

# pf 'Counters' rows -> normalised names (the raw pf_<counter> keys of parse_pfctl_info stay too).
PF_COUNTERS = {"memory": "memory_failures", "state-limit": "state_limit_hits",
               "state-insert": "state_insert_failures", "src-limit": "src_limit_hits"}
_PF_COUNTER_LINE = re.compile(r"^\s*([a-z][a-z-]*)\s+([0-9]{1,20})\s+[0-9.]+/s\s*$")
_DEC = re.compile(r"[0-9]{1,20}")
_HEX = re.compile(r"[0-9a-fA-F]{1,16}")


def _int(text: str, what: str) -> int:
    if not _DEC.fullmatch(text):
        raise ParseError(f"{what}: {text[:30]!r} is not a counter")
    return int(text)


# --- pf ---------------------------------------------------------------------------------------------

def parse_pfctl_state_info(text: str) -> dict[str, int]:
    """`pfctl -si` / `pfctl -s info` / `pfctl -vsi` / `pfctl -sa` (its INFO section), or just
    counter lines of it (`pfctl -si | grep memory`) -> state_count, searches, inserts, removals,
    memory_failures, state_limit_hits, state_insert_failures, src_limit_hits, plus the raw pf_*
    keys of linerate.dut.parsers.parse_pfctl_info (which reads the full output)."""
    try:
        raw = parse_pfctl_info(text)
    except ParseError:
        raw = {}
        for line in text.splitlines():
            match = _PF_COUNTER_LINE.match(line)
            if match:
                name = match.group(1)
                key = f"pf_state_{name}" if name in ("searches", "inserts", "removals") else \
                    "pf_" + name.replace("-", "_")
                raw[key] = int(match.group(2))
        if not raw:
            raise ParseError("pfctl -s info: no 'current entries' in a State Table and no "
                             "counter lines ('memory  N  R/s')") from None
    out = dict(raw)
    for src, dst in (("pf_states", "state_count"), ("pf_state_searches", "searches"),
                     ("pf_state_inserts", "inserts"), ("pf_state_removals", "removals")):
        if src in raw:
            out[dst] = raw[src]
    for counter, name in PF_COUNTERS.items():
        key = "pf_" + counter.replace("-", "_")
        if key in raw:
            out[name] = raw[key]
    return out


def parse_pfctl_memory(text: str) -> dict[str, int]:
    """`pfctl -sm` / `pfctl -s memory` (or the LIMITS section of `pfctl -sa`): lines
    'states        hard limit    10000' -> state_max, and <name>_max for src-nodes, frags,
    tables, table-entries (app-states on macOS). Text after the number is ignored."""
    out: dict[str, int] = {}
    for line in text.splitlines():
        match = re.match(r"^\s*([a-z][a-z-]*)\s+hard limit\s+([0-9]{1,20})\b", line)
        if match:
            name = match.group(1)
            out["state_max" if name == "states" else name.replace("-", "_") + "_max"] = int(match.group(2))
    if "state_max" not in out:
        raise ParseError("pfctl -s memory output has no 'states  hard limit  N' line")
    return out


def parse_pfctl_timeouts(text: str) -> dict[str, int]:
    """`pfctl -st` / `pfctl -s timeouts` (or the TIMEOUTS section of `pfctl -sa`) -> {pf name:
    seconds}, e.g. {"tcp.first": 120, "tcp.closed": 90, "interval": 10}. The adaptive.* lines
    count states, not seconds: see parse_pfctl_adaptive."""
    out: dict[str, int] = {}
    for line in text.splitlines():
        match = re.match(r"^\s*([a-z0-9]+\.[a-z0-9.]+|frag|interval)\s+([0-9]{1,20})s\s*$", line)
        if match:
            out[match.group(1)] = int(match.group(2))
    if not out:
        raise ParseError("pfctl -s timeouts output has no 'NAME  Ns' lines (tcp.first 120s ...)")
    return out


def parse_pfctl_adaptive(text: str) -> dict[str, int]:
    """`pfctl -st` lines 'adaptive.start 6000 states' / 'adaptive.end 12000 states' ->
    adaptive_start, adaptive_end. pf.conf(5) (OpenBSD and FreeBSD): adaptive timeouts are on by
    default with start = 60% and end = 120% of the state limit; above start every timeout is
    scaled by (end - states) / (end - start); 0 and 0 turn them off."""
    out: dict[str, int] = {}
    for line in text.splitlines():
        match = re.match(r"^\s*adaptive\.(start|end)\s+([0-9]{1,20})\s+states\s*$", line)
        if match:
            out["adaptive_" + match.group(1)] = int(match.group(2))
    if not out:
        raise ParseError("pfctl -s timeouts output has no 'adaptive.start N states' line")
    return out


# --- Linux conntrack -----------------------------------------------------------------------------------

def parse_proc_nf_conntrack(text: str) -> dict[str, int]:
    """/proc/net/stat/nf_conntrack: a header of field names, then one row of hex per CPU. The
    columns differ by kernel (4.x: 'searched ... delete_list', 5.x+: 'clashres ... chainlength'),
    so they are read by the header. Counters are summed over rows; `entries` is the global count
    printed on every row, so it is taken once (state_count), not summed."""
    lines = [line.split() for line in text.splitlines() if line.strip()]
    if not lines or lines[0][:1] != ["entries"]:
        raise ParseError("/proc/net/stat/nf_conntrack has no header starting with 'entries'")
    header, rows = lines[0], lines[1:]
    if not rows:
        raise ParseError("/proc/net/stat/nf_conntrack has a header but no CPU rows")
    out: dict[str, int] = {"cpus": len(rows)}
    for row in rows:
        if len(row) != len(header) or not all(_HEX.fullmatch(v) for v in row):
            raise ParseError(f"/proc/net/stat/nf_conntrack: row {' '.join(row)[:40]!r} is not "
                             f"{len(header)} hex counters")
        for name, value in zip(header[1:], row[1:]):
            out[name] = out.get(name, 0) + int(value, 16)
    out["state_count"] = int(rows[0][0], 16)
    return _conntrack_aliases(out)


def _conntrack_aliases(out: dict[str, int]) -> dict[str, int]:
    """`searched` -> searches; `insert` -> inserts only when non-zero: current kernels no longer
    count it ("found and insert will always be 0", Florian Westphal, Fedora Magazine "Network
    address translation part 2 - the conntrack tool"), and a 0 there is not "no new entries"."""
    if "searched" in out:
        out["searches"] = out["searched"]
    if out.get("insert"):
        out["inserts"] = out["insert"]
    return out


def parse_conntrack_stats(text: str) -> dict[str, int]:
    """`conntrack -S` -> its counters summed over CPUs. Three shapes exist:
    - per CPU 'cpu=0  found=0 invalid=516 ... insert_failed=0 drop=0 early_drop=0 ...'
      (conntrack-tools 1.4.x via ctnetlink; the field set grows with the kernel: ignore,
      clash_resolve, chaintoolong), read as generic key=value;
    - the older one-table form 'entries  90', 'insert_failed  0' ... (decimal, already summed;
      `entries` is the count);
    - a /proc/net/stat/nf_conntrack table (header 'entries ...'), handed to parse_proc_nf_conntrack."""
    lines = [line for line in text.splitlines() if line.strip()]
    if lines and lines[0].split()[:1] == ["entries"] and len(lines[0].split()) > 2:
        return parse_proc_nf_conntrack(text)
    out: dict[str, int] = {}
    cpus = 0
    for line in lines:
        fields = line.split()
        if fields[0].startswith("cpu="):  # one CPU per line, or all of them on one (line breaks lost)
            for field in fields:
                name, sep, value = field.partition("=")
                if name == "cpu":
                    cpus += 1
                elif sep and re.fullmatch(r"[a-z_]+", name):
                    out[name] = out.get(name, 0) + _int(value, f"conntrack -S {name}")
        elif len(fields) == 2 and re.fullmatch(r"[a-z_]+", fields[0]) and _DEC.fullmatch(fields[1]):
            out[fields[0]] = int(fields[1])
    if not out:
        raise ParseError("conntrack -S output has neither 'cpu=N key=value' lines nor 'name  value' lines")
    if cpus:
        out["cpus"] = cpus
    if "entries" in out:
        out["state_count"] = out.pop("entries")
    return _conntrack_aliases(out)


_SYSCTL_LINE = re.compile(r"^\s*(?:/proc/sys/)?([A-Za-z0-9_./]+?)\s*[=:]\s*([0-9]{1,20})\s*$")


def _sysctl_values(text: str) -> dict[str, int]:
    """'name = value' (Linux sysctl), 'name: value' (BSD sysctl) -> {last dotted component: value}."""
    out: dict[str, int] = {}
    for line in text.splitlines():
        match = _SYSCTL_LINE.match(line)
        if match:
            out[re.split(r"[./]", match.group(1))[-1]] = int(match.group(2))
    return out


def parse_conntrack_sysctl(text: str) -> dict[str, int]:
    """`sysctl net.netfilter.nf_conntrack_count net.netfilter.nf_conntrack_max` (or `sysctl -a |
    grep conntrack`; the older net.nf_conntrack_max and net.ipv4.netfilter.ip_conntrack_* names
    too) -> state_count, state_max, buckets. Timeout lines are left to parse_conntrack_timeouts."""
    values = _sysctl_values(text)
    out: dict[str, int] = {}
    for prefix in ("nf_conntrack_", "ip_conntrack_"):
        for name, key in (("count", "state_count"), ("max", "state_max"), ("buckets", "buckets")):
            if prefix + name in values:
                out.setdefault(key, values[prefix + name])
    if not out:
        raise ParseError("sysctl output has no nf_conntrack_count, nf_conntrack_max or nf_conntrack_buckets")
    return out


def parse_conntrack_count(text: str) -> dict[str, int]:
    """/proc/sys/net/netfilter/nf_conntrack_count (one integer), `conntrack -C`, or the sysctl
    line -> state_count."""
    if _DEC.fullmatch(text.strip()):
        return {"state_count": parse_single_int(text, "nf_conntrack_count")}
    out = parse_conntrack_sysctl(text)
    if "state_count" not in out:
        raise ParseError("nf_conntrack_count: neither a single integer nor a sysctl nf_conntrack_count line")
    return {"state_count": out["state_count"]}


def parse_conntrack_max(text: str) -> dict[str, int]:
    """/proc/sys/net/netfilter/nf_conntrack_max (one integer) or the sysctl line -> state_max."""
    if _DEC.fullmatch(text.strip()):
        return {"state_max": parse_single_int(text, "nf_conntrack_max")}
    out = parse_conntrack_sysctl(text)
    if "state_max" not in out:
        raise ParseError("nf_conntrack_max: neither a single integer nor a sysctl nf_conntrack_max line")
    return {"state_max": out["state_max"]}


def parse_conntrack_timeouts(text: str) -> dict[str, int]:
    """`sysctl -a | grep nf_conntrack_.*timeout` -> {name without 'nf_conntrack_': seconds}, e.g.
    {"tcp_timeout_time_wait": 120, "tcp_timeout_established": 432000, "udp_timeout": 30}.
    Kernel defaults: Documentation/networking/nf_conntrack-sysctl.rst (time_wait 120, fin_wait
    120, close_wait 60, last_ack 30, close 10, syn_sent 120, syn_recv 60, established 432000)."""
    out = {name[len(prefix):]: value for name, value in _sysctl_values(text).items()
           for prefix in ("nf_conntrack_", "ip_conntrack_") if name.startswith(prefix) and "timeout" in name}
    if not out:
        raise ParseError("sysctl output has no nf_conntrack_*timeout* lines")
    return out


# --- FreeBSD ipfw ----------------------------------------------------------------------------------------

def parse_ipfw_dyn_sysctl(text: str) -> dict[str, int]:
    """`sysctl net.inet.ip.fw.dyn_count net.inet.ip.fw.dyn_max` (or `sysctl net.inet.ip.fw`) ->
    state_count, state_max, buckets, and the raw dyn_count/dyn_max (which tell the rules the
    firewall is ipfw). ipfw(8): when dyn_count reaches dyn_max no new dynamic rule is created;
    the kernel logs 'Cannot allocate dynamic state, consider increasing net.inet.ip.fw.dyn_max'."""
    values = {k: v for k, v in _sysctl_values(text).items() if k.startswith(("dyn_", "curr_dyn_"))}
    out: dict[str, int] = {}
    for name, key in (("dyn_count", "state_count"), ("dyn_max", "state_max"), ("curr_dyn_buckets", "buckets")):
        if name in values:
            out[key] = values[name]
            out[name] = values[name]
    if "dyn_count" not in out and "dyn_max" not in out:
        raise ParseError("sysctl net.inet.ip.fw output has neither dyn_count nor dyn_max")
    return out


def parse_ipfw_timeouts(text: str) -> dict[str, int]:
    """`sysctl net.inet.ip.fw` -> {"dyn_ack_lifetime": 300, "dyn_fin_lifetime": 1, ...} seconds."""
    out = {k: v for k, v in _sysctl_values(text).items() if k.startswith("dyn_") and k.endswith("_lifetime")}
    if not out:
        raise ParseError("sysctl net.inet.ip.fw output has no dyn_*_lifetime lines")
    return out


# --- clearing states -----------------------------------------------------------------------------------

_DELETED = re.compile(r"\b(\d+) flow entries have been deleted|\bkilled (\d+) states from \d+ sources")


def parse_deleted_states(text: str) -> int | None:
    """How many states a clearing command removed: conntrack -D prints 'conntrack v1.4.7
    (conntrack-tools): N flow entries have been deleted.' (conntrack.c exit_msg; it exits 1 when N is
    0), pfctl -k 'killed N states from S sources and D destinations' (pfctl.c, on stderr). None when
    neither line is there (the tool is missing or failed)."""
    match = _DELETED.search(text)
    return None if match is None else int(match.group(1) or match.group(2))


# --- kernel log ----------------------------------------------------------------------------------------------

# The messages each kernel prints when the table is full and a new state could not be created:
# Linux nf_conntrack_core.c __nf_conntrack_alloc (net_warn_ratelimited "nf_conntrack: table full,
# dropping packet"; 'ip_conntrack:' on old kernels), FreeBSD pf.c uma_zone_set_warning(V_pf_state_z,
# "PF states limit reached"), FreeBSD ip_fw_dynamic.c "Cannot allocate dynamic state, consider
# increasing net.inet.ip.fw.dyn_max".
_TABLE_FULL = re.compile(r"(?:nf|ip)_conntrack: table full|PF states limit reached|Cannot allocate dynamic state")


def parse_state_log(text: str) -> dict[str, int]:
    """dmesg / syslog / logread text -> table_full_events (lines with a table-full message; a
    message wrapped over two lines by a paste counts once) and suppressed_log_messages (from
    'net_ratelimit: N callbacks suppressed', any subsystem's). A log without such lines is a
    valid reading of 0, so this never raises."""
    events = sum(1 for line in text.splitlines() if _TABLE_FULL.search(line))
    suppressed = sum(int(n) for n in re.findall(r"net_ratelimit: ([0-9]{1,12}) callbacks suppressed", text))
    return {"table_full_events": events, "suppressed_log_messages": suppressed}


PARSERS = {
    "pfctl_info": parse_pfctl_state_info, "pfctl_memory": parse_pfctl_memory,
    "pfctl_adaptive": parse_pfctl_adaptive, "conntrack_stats": parse_conntrack_stats,
    "proc_nf_conntrack": parse_proc_nf_conntrack, "conntrack_sysctl": parse_conntrack_sysctl,
    "conntrack_count": parse_conntrack_count, "conntrack_max": parse_conntrack_max,
    "ipfw_dyn": parse_ipfw_dyn_sysctl, "state_log": parse_state_log,
}
TIMEOUT_PARSERS = {"pfctl_timeouts": parse_pfctl_timeouts, "conntrack_timeouts": parse_conntrack_timeouts,
                   "ipfw_timeouts": parse_ipfw_timeouts}
