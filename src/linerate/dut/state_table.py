"""Facts about a stateful DUT's connection-state table, as the kinds that load it (cps, rfc9693)
and the rules that judge it (diagnose/state_rules.py) both need them: which firewall keeps the
table (conntrack, pf, ipfw), how long a closed connection's state lingers in it, how full is full,
the connection rate a table of N states sustains, and a trial's counters as deltas. Pure; imports
nothing of linerate's. Anyone may import it.

Connection rate and table size are tied by Little's law (J. D. C. Little, "A Proof for the
Queuing Formula: L = lambda W", Operations Research 9(3), 1961): a table of N entries whose
closed connections keep their state for W seconds sustains at most N / W new connections per
second - the coupling RFC 9693 ("Benchmarking Methodology for Stateful NATxy Gateways",
https://www.rfc-editor.org/info/rfc9693) measures as connection establishment rate against
connection-tracking-table capacity. The W of a normally closed TCP connection, verified in the
sources rather than the man pages' one-line summaries:
- Linux: TIME_WAIT, net.netfilter.nf_conntrack_tcp_timeout_time_wait, default 120 s (the
  tcp_conntracks table of nf_conntrack_proto_tcp.c takes a FIN/ACK close LAST_ACK -> TIME_WAIT;
  defaults in Documentation/networking/nf_conntrack-sysctl.rst).
- pf: tcp.closed, default 90 s. pf_tcp_track_full() sets PFTM_TCP_CLOSED once both peers are in
  TCPS_FIN_WAIT_2, i.e. both FINs acknowledged (tcp.finwait, 45 s, only covers both FINs sent
  but not both acknowledged), although pf.conf(5) describes tcp.closed as "the state after one
  endpoint sends an RST" (OpenBSD sys/net/pf.c; FreeBSD sys/netpfil/pf/pf.c alike).
- ipfw: net.inet.ip.fw.dyn_fin_lifetime, default 1 s (ip_fw_dynamic.c: BOTH_SYN|BOTH_FIN ->
  dyn_fin_lifetime, kept below dyn_keepalive_period), ipfw(8) SYSCTL VARIABLES.
"""

from __future__ import annotations

FULL_SHARE = 0.98  # a table this full is at its limit (the kernels refuse at 100%; reads are not atomic)
GAUGES = frozenset({"state_count", "state_count_peak", "state_max", "buckets", "adaptive_start",
                    "adaptive_end", "cpus", "dyn_count", "dyn_max", "curr_dyn_buckets", "pf_states"})
DEFAULT_LINGER_S = {"conntrack": 120.0, "pf": 90.0, "ipfw": 1.0}
LINGER_TIMEOUT = {"conntrack": "tcp_timeout_time_wait", "pf": "tcp.closed", "ipfw": "dyn_fin_lifetime"}
LINGER_WHAT = {"conntrack": "conntrack TIME_WAIT, net.netfilter.nf_conntrack_tcp_timeout_time_wait",
               "pf": "pf tcp.closed, the state after both FINs are acknowledged",
               "ipfw": "ipfw net.inet.ip.fw.dyn_fin_lifetime"}
PF_OSES = frozenset({"freebsd", "openbsd", "pfsense", "opnsense", "netbsd", "macos", "darwin", "dragonfly"})


def firewall(os_name: str, snapshot: dict | None = None) -> str:
    """'conntrack' | 'pf' | 'ipfw' for an OS name, told apart on FreeBSD by what was read (ipfw's
    dyn_* sysctls, pf's pf_* counters, or the timeouts' names)."""
    keys = set(snapshot or {})
    name = (os_name or "").lower()
    if "ipfw" in name or keys & {"dyn_count", "dyn_max", "dyn_fin_lifetime", "dyn_ack_lifetime"}:
        return "ipfw"
    if name == "pf" or name in PF_OSES or any(k.startswith("pf_") or k.startswith("tcp.") for k in keys):
        return "pf"
    return "conntrack"


def littles_law_bound(table_size: int, linger_s: float) -> float:
    """Most new connections per second a table of `table_size` states sustains when each closed
    connection keeps its state `linger_s` seconds (Little's law, L = lambda W, solved for lambda)."""
    if table_size < 0 or linger_s <= 0:
        raise ValueError(f"littles_law_bound needs table_size >= 0 and linger_s > 0, not {table_size}, {linger_s}")
    return table_size / linger_s


def linger_seconds(os_name: str, timeouts_s: dict | None) -> float:
    """Seconds a normally closed TCP connection's state stays in the DUT's table: the OS's own
    timeout read from the DUT (parse_conntrack_timeouts, parse_pfctl_timeouts,
    parse_ipfw_timeouts), else its default (Linux 120, pf 90, ipfw 1; see the module docstring)."""
    fw = firewall(os_name, timeouts_s)
    value = (timeouts_s or {}).get(LINGER_TIMEOUT[fw])
    return float(value) if value else DEFAULT_LINGER_S[fw]


def state_deltas(before: dict | None, after: dict) -> dict[str, int]:
    """Counters: after - before (a counter that went down was reset, e.g. `pfctl -z` or a reboot:
    its after value is the increase); gauges: the after value (state_count_peak if sampled). A key
    read after but not before is left out rather than guessed. Without before: after as is."""
    if before is None:
        return dict(after)
    out: dict[str, int] = {}
    for key, value in after.items():
        if key in GAUGES:
            out[key] = value
        elif key in before:
            out[key] = value - before[key] if value >= before[key] else value
    return out
