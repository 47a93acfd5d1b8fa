"""State-table verdicts: is a stateful DUT held back by its connection-state table?

Pure functions over the normalised dicts of linerate.dut.state_parsers (one snapshot, or a
before/after pair around a trial). They return the Verdict of diagnose/rules.py:

- `state-table-full` (limit): the table is at (>= 98% of) its limit, or the kernel refused new
  state because it was: pf 'memory' rising (pool_get()/uma_zalloc() of a state failed under
  `set limit states`, PFRES_MEMORY) or 'state-limit' (a rule's `max`, PFRES_MAXSTATES) -
  OpenBSD sys/net/pf.c pf_test_rule/pf_create_state, FreeBSD sys/netpfil/pf/pf.c; conntrack
  `early_drop` and `drop` rising together (early_drop only runs above nf_conntrack_max and
  `drop` counts what it could not evict); a kernel log line 'nf_conntrack: table full, dropping
  packet' / 'PF states limit reached' / 'Cannot allocate dynamic state'.
- `state-insert-failures` (limit): state could not be inserted or created while the table was
  not full: conntrack `insert_failed` (a clash: another CPU inserted the same tuple first; an
  unresolved clash also counts in `drop`), `drop` beyond insert_failed without evidence of a
  full table, pf 'state-insert' (PFRES_STATEINS, the key already existed).
- `state-evictions` (note): pressure without loss: conntrack `early_drop` (Linux evicts entries
  that are not assured, and closing TCP ones, to admit new connections), or pf adaptive timeouts
  in force (states above adaptive.start: every timeout is scaled by (end - states) / (end -
  start), pf.conf(5)).

Counter semantics (Linux net/netfilter/nf_conntrack_core.c): `drop` is incremented when
resolve_normal_ct() fails ("too stressed": table full with nothing evictable, or no memory),
when an insert clash cannot be resolved (with insert_failed), and when the TCP tracker drops a
SYN for an entry being removed (rare). So `drop` alone does not say which; the verdict says so.

With one snapshot the counters run since boot (SINCE_BOOT, as in rules.py): a failure counter
then needs at least MIN_SINCE_BOOT events and, where the number of states created is known, at
least NEGLIGIBLE_DROP_SHARE of them, so that a handful of events over months does not read as
a limit. With before and after, any rise during the trial counts.

Connection rate and table size are tied by Little's law, and a closed connection's state
lingers for the firewall's own timeout: those facts about the DUT (which firewall, how long a
state lingers, the bound, counters as deltas) live in dut/state_table.py.
"""

from __future__ import annotations

from linerate.diagnose.verdict import NEGLIGIBLE_DROP_SHARE, SINCE_BOOT, Verdict
from linerate.dut.state_table import (FULL_SHARE, LINGER_TIMEOUT, LINGER_WHAT, firewall, linger_seconds,
                                      littles_law_bound, state_deltas)

MIN_SINCE_BOOT = 100  # failure events since boot below this say nothing about a test (cf. rules.MIN_TIME_SQUEEZE)

KERNEL_DOC = ('Linux "Netfilter Conntrack Sysfs variables" '
              "(https://docs.kernel.org/networking/nf_conntrack-sysctl.html)")
PF_CONF = "pf.conf(5) (https://man.openbsd.org/pf.conf.5, https://man.freebsd.org/cgi/man.cgi?query=pf.conf&sektion=5)"
PFCTL = "pfctl(8) (https://man.openbsd.org/pfctl.8)"
IPFW = "ipfw(8) SYSCTL VARIABLES (https://man.freebsd.org/cgi/man.cgi?query=ipfw&sektion=8)"
PFSENSE_DOC = "https://docs.netgate.com/pfsense/en/latest/config/advanced-firewall-nat.html"
RACE_ADVICE = ("clashes come from packets of one new flow racing on two CPUs through NAT (UDP DNS sending A and AAAA "
               "from one socket is the classic case): `--random-fully` on MASQUERADE/SNAT rules "
               "(iptables-extensions(8)), fewer parallel same-tuple sends (resolv.conf single-request-reopen) or a "
               "node-local DNS cache")
NEARLY_FULL_SHARE = 0.80  # a table this full (but under dut/state_table.FULL_SHARE) is noted as nearly full


class _Reading:
    """One snapshot or one trial's deltas, with the since-boot thresholds applied."""

    def __init__(self, before: dict | None, after: dict, os_name: str, timeouts_s: dict | None):
        self.fw = firewall(os_name, after)
        self.os = (os_name or "").lower()
        self.since_boot = before is None
        self.d = state_deltas(before, after)
        self.timeouts = timeouts_s or {}
        self.count = self.d.get("state_count_peak", self.d.get("state_count"))
        self.size = self.d.get("state_max")
        self.created = self.d.get("inserts") or self.d.get("new")

    def moved(self, key: str) -> int:
        value = self.d.get(key) or 0
        if value <= 0 or not self.since_boot or key == "table_full_events":
            return max(value, 0)
        if value < MIN_SINCE_BOOT or (self.created and value < NEGLIGIBLE_DROP_SHARE * self.created):
            return 0
        return value

    @property
    def at_max(self) -> bool:
        return bool(self.count is not None and self.size and self.count >= FULL_SHARE * self.size)

    def when(self) -> str:
        return f" {SINCE_BOOT}" if self.since_boot else " during the test"

    def share(self, value: int) -> str:
        return f" = {value / self.created * 100:.3f}% of {self.created:,} states created" if self.created else ""

    def fill(self) -> str:
        if self.count is not None and self.size:
            return f"{self.count:,} of {self.size:,} states in use ({self.count / self.size * 100:.1f}%)"
        if self.count is not None:
            return f"{self.count:,} states in use, limit not read"
        return "table fill not read"


def _n(value: int) -> str:
    return f"{value:,}"


def bound_sentence(reading: _Reading) -> str:
    """Little's law with the DUT's own figures (and pf's adaptive scaling at the limit)."""
    linger = linger_seconds(reading.fw, reading.timeouts)
    read = LINGER_TIMEOUT[reading.fw] in reading.timeouts
    what = f"{LINGER_WHAT[reading.fw]}, {'as read' if read else 'default'}"
    if not reading.size:
        return (f"read the table limit to get the sustainable new-connection rate: by Little's law it is the table "
                f"size / {linger:g} s ({what})")
    text = (f"by Little's law a table of {_n(reading.size)} states, with closed connections lingering {linger:g} s "
            f"({what}), sustains at most ~{littles_law_bound(reading.size, linger):,.0f} new connections/s")
    start, end = reading.d.get("adaptive_start"), reading.d.get("adaptive_end")
    if reading.fw == "pf" and start and end and start < reading.size < end:
        factor = (end - reading.size) / (end - start)
        text += (f"; with adaptive timeouts (start {_n(start)}, end {_n(end)}) pf scales timeouts by "
                 f"{factor:.2f} at the limit, so ~{littles_law_bound(reading.size, linger * factor):,.0f}/s "
                 f"before it refuses states")
    return text + " - test rates above this measure the table, not the forwarding path"


def _knob(reading: _Reading, rule_max_only: bool = False) -> str:
    if reading.fw == "conntrack":
        return ("raise net.netfilter.nf_conntrack_max (sysctl -w, persisted in /etc/sysctl.d; its default is "
                "nf_conntrack_buckets, x4 on older kernels) and the hash with it (nf_conntrack_buckets, writable only in the initial "
                "network namespace, or /sys/module/nf_conntrack/parameters/hashsize): every entry is hashed twice, "
                "so max = buckets gives chains of 2 on average - " + KERNEL_DOC + "; or shorten the closing "
                "timeouts (nf_conntrack_tcp_timeout_time_wait, _fin_wait, _close_wait) so states leave sooner")
    if reading.fw == "ipfw":
        return ("raise net.inet.ip.fw.dyn_max (and dyn_buckets) with sysctl, or shorten dyn_ack_lifetime if idle "
                "connections hold the table - " + IPFW)
    if rule_max_only:
        return ("a rule's own limit was hit: raise or drop its `max N` (keep state (max N), and max-src-states / "
                "max-src-nodes for src-limit) - " + PF_CONF + "; find the rule with `pfctl -vsr` (States column)")
    return ("raise `set limit states N` in pf.conf (" + PF_CONF + "; check with `pfctl -sm`, " + PFCTL + "); "
            "pfSense: System > Advanced > Firewall & NAT, Firewall Maximum States (" + PFSENSE_DOC + "); "
            "OPNsense: Firewall > Settings > Advanced, Firewall Maximum States; or shorten `set timeout tcp.closed` / tcp.finwait so closed connections leave sooner")


def table_full(r: _Reading) -> Verdict | None:
    parts: list[str] = []
    counters: list[str] = []
    rule_only = False
    if r.at_max:
        parts.append(r.fill())
    events = r.moved("table_full_events")
    if events:
        suppressed = r.d.get("suppressed_log_messages") or 0
        extra = f" (plus {_n(suppressed)} rate-limited messages suppressed)" if suppressed else ""
        window = " in the log as read (not necessarily during this test)" if r.since_boot else " during the test"
        parts.append(f"{events} kernel log line{'s' if events > 1 else ''} saying the table was full and a "
                     f"packet was dropped{extra}{window}")
    if r.fw == "pf":
        memory, rule_limit = r.moved("memory_failures"), r.moved("state_limit_hits")
        if memory:
            counters.append(f"pf 'memory' {_n(memory)}{r.share(memory)} (a pool allocation failed: a state "
                            f"refused at the `set limit states` limit is the usual cause)")
        if rule_limit:
            counters.append(f"pf 'state-limit' {_n(rule_limit)} (a rule's `max` was reached)")
        rule_only = bool(rule_limit and not memory and not r.at_max and not events)
    elif r.fw == "conntrack":
        early, drop = r.moved("early_drop"), r.moved("drop")
        excess = max((r.d.get("drop") or 0) - (r.d.get("insert_failed") or 0), 0)
        if early and drop and excess:
            counters.append(f"early_drop {_n(early)} and drop {_n(drop)}: the table was over nf_conntrack_max "
                            f"and the kernel could not always evict an entry")
        elif r.at_max and (drop or r.moved("insert_failed")):
            counters.append(f"drop {_n(r.d.get('drop') or 0)}, insert_failed {_n(r.d.get('insert_failed') or 0)}")
    if counters:
        parts.append("; ".join(counters) + r.when())
    if not parts:
        return None
    if not r.at_max and r.count is not None:
        parts.append(f"now {r.fill()}")
    title = "a rule's state limit reached: new connections dropped" if rule_only else \
        "state table full: new connections dropped"
    return Verdict("state-table-full", "limit", title, "; ".join(parts),
                   _knob(r, rule_only) + "; " + bound_sentence(r))


def insert_failures(r: _Reading) -> Verdict | None:
    if r.at_max:
        return None  # a full table explains them: state-table-full
    if r.fw == "pf":
        failed = r.moved("state_insert_failures")
        if not failed:
            return None
        return Verdict("state-insert-failures", "limit", "pf could not insert new states (table not full)",
                       f"pf 'state-insert' {_n(failed)}{r.share(failed)}{r.when()}: pf_state_insert() found a "
                       f"state with the same key (PFRES_STATEINS); {r.fill()}",
                       "typically two flows mapped onto one state key: NAT reusing a source port (a nat rule with "
                       "`static-port`), or one connection seen on two interfaces (`set state-policy`) - "
                       + PF_CONF + "; `pfctl -ss` shows the colliding states")
    if r.fw != "conntrack":
        return None
    failed, drop = r.moved("insert_failed"), r.moved("drop")
    full_elsewhere = r.moved("early_drop") or r.moved("table_full_events")
    excess = max((r.d.get("drop") or 0) - (r.d.get("insert_failed") or 0), 0) if drop else 0
    if not failed and not (excess and not full_elsewhere):
        return None
    parts = []
    if failed:
        parts.append(f"insert_failed {_n(failed)}{r.share(failed)} (another CPU inserted the same tuple first: "
                     f"a clash that could not be resolved)")
    if excess and not full_elsewhere:
        parts.append(f"drop {_n(r.d.get('drop') or 0)}{r.share(drop)} with no sign of a full table (state could "
                     f"not be created: no memory, or the TCP tracker's drop of a SYN for a dying entry)")
    for key, why in (("clash_resolve", "clashes resolved"), ("chaintoolong", "hash chains too long")):
        if r.moved(key):
            parts.append(f"{key} {_n(r.d[key])} ({why})")
    advice = []
    if failed:
        advice.append(RACE_ADVICE)
    else:
        advice.append("drops without clashes or evictions: check kernel memory for conntrack (the nf_conntrack slab "
                      "in /proc/slabinfo, dmesg for allocation failures) and read the kernel log for 'table full'")
    advice = "; ".join(advice)
    if r.moved("chaintoolong"):
        advice += "; chaintoolong: more hash buckets (nf_conntrack_buckets) - " + KERNEL_DOC
    if r.count is None or not r.size:
        advice += ("; read nf_conntrack_count and nf_conntrack_max with the counters to tell a clash from a full "
                   "table")
    return Verdict("state-insert-failures", "limit", "conntrack could not insert or create state (table not full)",
                   "; ".join(parts) + f"{r.when()}; {r.fill()}", advice)


def evictions(r: _Reading) -> Verdict | None:
    if r.fw == "conntrack":
        early = r.moved("early_drop")
        if not early:
            return None
        return Verdict("state-evictions", "note", "conntrack evicting entries to admit new connections",
                       f"early_drop {_n(early)}{r.share(early)}{r.when()}: the table reached nf_conntrack_max and "
                       f"the kernel evicted entries not yet assured (or closing TCP ones); {r.fill()}",
                       "the table is at its limit at this load, without loss as long as drop stays flat: count it as "
                       "pressure; " + _knob(r) + "; " + bound_sentence(r))
    start, end = r.d.get("adaptive_start"), r.d.get("adaptive_end")
    if r.fw != "pf" or not start or not end or r.count is None or r.count <= start:
        return None
    factor = max(0.0, min(1.0, (end - r.count) / (end - start)))
    return Verdict("state-evictions", "note", "pf adaptive timeouts in force: states expire early",
                   f"{_n(r.count)} states above adaptive.start {_n(start)} (adaptive.end {_n(end)}): pf scales every "
                   f"timeout by {factor:.2f}, so idle and closing states are expired early",
                   "connections kept idle on purpose (RFC 9411 concurrent-connection tests) can be expired before "
                   "the hard limit; " + _knob(r) + " (adaptive.start/end default to 60%/120% of it) or set "
                   "`set timeout { adaptive.start N, adaptive.end M }` - " + PF_CONF)


STATE_RULES = (table_full, insert_failures, evictions)

# What one failure event of each counter is, for the since-boot note (sources as in the module docstring)
FAILURE_MEANING = {
    "conntrack": {
        "insert_failed": ("a packet conntrack dropped because its new entry clashed with one another CPU had just "
                          "inserted for the same tuple (__nf_conntrack_confirm() returns NF_DROP on a clash it "
                          "cannot resolve): the known insertion race of parallel UDP sends from one socket through "
                          "NAT - DNS A and AAAA queries the classic case (weaveworks/weave#3287)"),
        "drop": "a packet dropped because its state could not be created or inserted",
        "early_drop": "an entry evicted because the table was at nf_conntrack_max",
    },
    "pf": {
        "memory_failures": "a state refused because the pool was at `set limit states`",
        "state_limit_hits": "a state refused at a rule's `max`",
        "state_insert_failures": "a state refused because one with the same key existed (PFRES_STATEINS)",
    },
}


def failures_since_boot(after: dict, os_name: str) -> Verdict | None:
    """One reading since boot whose failure counters are not zero but too few (MIN_SINCE_BOOT, or under
    NEGLIGIBLE_DROP_SHARE of the states created) for the rules above: a note that names the count and
    what each event is, never "no failures". A table at (nearly) its limit points at a full table."""
    reading = _Reading(None, after, os_name, None)
    meaning = FAILURE_MEANING.get(reading.fw, {})
    counted = {key: after[key] for key in meaning if after.get(key)}
    if not counted:
        return None
    parts = [f"{key} {_n(value)}{reading.share(value)}: each is {meaning[key]}" for key, value in counted.items()]
    quiet = [f"{key} 0" for key in meaning if key in after and key not in counted]
    nearly_full = reading.count is not None and reading.size and reading.count >= NEARLY_FULL_SHARE * reading.size
    if nearly_full:
        cause = f"the table is {reading.fill()}: a full table is the likelier cause"
    elif reading.fw == "conntrack" and "insert_failed" in counted and not after.get("early_drop"):
        cause = "no sign of a full table (early_drop 0): the insertion race"
        cause += "" if reading.size else "; table fill not read"
    else:
        cause = reading.fill()
    evidence = "; ".join(parts) + (f"; {', '.join(quiet)}" if quiet else "") + f" - {SINCE_BOOT}; {cause}"
    total = sum(counted.values())
    title = (f"{_n(total)} packets dropped by conntrack since boot (insert_failed: the insertion race)"
             if reading.fw == "conntrack" and "insert_failed" in counted and not nearly_full else
             f"{_n(total)} state failures counted since boot, too few to call a limit")
    command = "conntrack -S" if reading.fw == "conntrack" else "pfctl -si"
    advice = ("one reading since boot cannot say whether they happen under your load: read the counters before and "
              f"after a test (`{command}` twice) - any rise then is a limit")
    if "insert_failed" in counted and not nearly_full:
        advice = (RACE_ADVICE + "; " + advice)
    elif nearly_full:
        advice = _knob(reading) + "; " + advice
    if reading.fw == "conntrack" and (reading.count is None or not reading.size):
        advice += "; read nf_conntrack_count and nf_conntrack_max with them to tell a clash from a full table"
    return Verdict("state-failures-since-boot", "note", title, evidence, advice)


def state_verdicts(before: dict | None, after: dict, os_name: str, timeouts_s: dict | None) -> list[Verdict]:
    """The state-table verdicts for one DUT reading: `after` alone (since boot) or a before/after
    pair around a trial, both merged dicts of linerate.dut.state_parsers; `timeouts_s` from its
    timeout parsers (None: the OS defaults). An empty list: nothing state-related held it back
    (or nothing was read that could show it - the rules never guess)."""
    reading = _Reading(before, after, os_name, timeouts_s)
    return [v for v in (rule(reading) for rule in STATE_RULES) if v is not None]
