"""Documented harm and hard limits of a value, table-driven: name -> condition -> the primary source's
words. Each rule fires only on the releases where the name exists and its text applies.

Sources (each rule quotes its own):
- Documentation/networking/ip-sysctl.{txt,rst} of 4.4 .. 6.12: tcp_retries2 ("RFC 1122 recommends at
  least 100 seconds for the timeout, which corresponds to a value of at least 8"), tcp_wmem min ("Each TCP
  socket has rights to use it due to fact of its birth"), tcp_rmem min ("It is guaranteed to each TCP
  socket, even under moderate memory pressure"), tcp_window_scaling ("Enable window scaling as defined in
  RFC1323"), conf/all/forwarding for IPv6 ("Enable global IPv6 forwarding between all interfaces"; the
  per-interface value only "Configure interface-specific Host/Router behaviour"; net/ipv6/ip6_output.c,
  ip6_forward(): `if (net->ipv6.devconf_all->forwarding == 0) goto error;`).
- RFC 7323 section 2: without the window scale option the 16-bit window field caps a window at 65,535 bytes.
- Linux commit 4396e46187ca5070219b81773c4e65088dac50cc "tcp: remove tcp_tw_recycle" (4.12): recycling was
  "already broken for connections behind NAT, since the per-destination timestamp is not monotonically
  increasing for multiple machines behind a single destination address".
- Hard limits (the write fails with EINVAL, the old value stays): kernel/sysctl.c pid_max is
  proc_dointvec_minmax with extra1 = &pid_max_min (RESERVED_PIDS + 1 = 301) and extra2 = &pid_max_max =
  PID_MAX_LIMIT, include/linux/threads.h `(sizeof(long) > 4 ? 4 * 1024 * 1024 : PID_MAX_DEFAULT)` (read in
  4.4.121, 6.1.20 and 6.12); net/ipv4/sysctl_net_ipv4.c ip_local_port_range_min {1, 1} / _max {65535,
  65535} and "if (range[1] < range[0]) ... -EINVAL" (4.4 .. 6.12); tcp_syn_retries min 1, max
  MAX_TCP_SYNCNT = 127 (include/net/tcp.h).
- FreeBSD sys/kern/kern_mbuf.c (13.x .. 15), tunable_mbinit(): `if (nmbclusters == 0) nmbclusters =
  maxmbufmem / MCLBYTES / 4;` (nmbjumbop, nmbjumbo9, nmbjumbo16 alike): 0 in loader.conf is the autosized
  default; sysctl_nmbclusters() answers EINVAL to any runtime value below the current one.
- FreeBSD sys/net/netisr.c (10.x .. 14.x): `#define NETISR_DEFAULT_MAXQLIMIT 10240`, net.isr.maxqlimit
  CTLFLAG_RDTUN ("Maximum netisr per-protocol, per-CPU queue depth"), and netisr_setqlimit(): `if (qlimit >
  netisr_maxqlimit) return (EINVAL);` — the handlers of the netisr queue lengths (ip_input.c
  intr_queue_maxlen / intr_direct_queue_maxlen, ip6_input.c likewise, rtsock.c netisr_maxqlen) call it,
  so a length above net.isr.maxqlimit is refused and the queue keeps its old length.
Not taken, for want of a text that says harm: tcp_sack=0 (it was the documented workaround for
CVE-2019-11477), tcp_timestamps=0, tcp_retries1, net.core.somaxconn (no upper bound but INT_MAX in 4.4 ..
6.12).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from linerate.numbers import is_ascii_int
from linerate.tuning.versions import fmt

LISTS_START = (4, 4)  # the oldest release of tuning/names/linux-releases.tsv
TCP_RTO_MIN_S, TCP_RTO_MAX_S = 0.2, 120.0
PID_MAX_LIMIT_64BIT = 4 * 1024 * 1024
SOCKET_MIN_HUGE = 1024 * 1024  # 256x the documented 4K default min, per socket


@dataclass(frozen=True)
class Rule:
    """A documented condition on a Linux value: when(numbers) true -> (code, why(numbers), fix)."""
    name: str
    when: Callable[[list[int]], bool]
    code: str  # LR005 harmful, LR017 the kernel rejects the write
    why: Callable[[list[int]], str]
    fix: str
    before: tuple[int, ...] | None = None  # only kernels older than this still have the name


def retries_timeout_s(n: int) -> float:
    """ip-sysctl.rst tcp_retries2: N retransmissions with exponential backoff from TCP_RTO_MIN, killed at the
    (N+1)th RTO (15 -> 924.6 s, the document's own figure)."""
    return sum(min(TCP_RTO_MIN_S * 2 ** i, TCP_RTO_MAX_S) for i in range(n + 1))


def _socket_min(doc: str):
    return lambda v: (f"the first number is the min, {doc} (ip-sysctl.rst); {v[0]:,} bytes per socket "
                      f"(default 4096) means 10,000 connections hold {v[0] * 10_000 / 2**30:,.1f} GiB before "
                      "sending a byte, and under memory pressure the kernel can no longer shrink them")


LINUX_RULES = [
    Rule("net.ipv4.tcp_window_scaling", lambda v: v == [0], "LR005",
         lambda v: "it turns off window scaling (ip-sysctl.rst: 'Enable window scaling as defined in RFC1323'): "
         "without the option the 16-bit window field caps every connection's window at 65,535 bytes (RFC 7323 "
         "section 2), so one connection moves at most 64 KiB per round trip (about 5 Mbit/s at 100 ms) "
         "whatever tcp_rmem/tcp_wmem allow", "delete the line (default 1)"),
    Rule("net.ipv4.tcp_retries2", lambda v: len(v) == 1 and 0 <= v[0] < 8, "LR005",
         lambda v: "ip-sysctl.rst: 'RFC 1122 recommends at least 100 seconds for the timeout, which corresponds "
         f"to a value of at least 8'; with {v[0]} an established connection is killed after about "
         f"{retries_timeout_s(v[0]):.1f} s of unacknowledged retransmissions (default 15: 924.6 s)",
         "delete the line (default 15), or keep it >= 8"),
    Rule("net.ipv4.tcp_wmem", lambda v: len(v) == 3 and v[0] >= SOCKET_MIN_HUGE, "LR005",
         _socket_min("'Amount of memory reserved for send buffers for TCP sockets. Each TCP socket has rights to "
                     "use it due to fact of its birth'"),
         "keep the min at 4096 and raise only the max (the third number)"),
    Rule("net.ipv4.tcp_rmem", lambda v: len(v) == 3 and v[0] >= SOCKET_MIN_HUGE, "LR005",
         _socket_min("'Minimal size of receive buffer used by TCP sockets. It is guaranteed to each TCP socket, "
                     "even under moderate memory pressure'"),
         "keep the min at 4096 and raise only the max (the third number)"),
    Rule("net.ipv4.tcp_tw_recycle", lambda v: v == [1], "LR005",
         lambda v: "recycling drops the SYNs of clients that share one NAT address, whose timestamps are not "
         "monotonic: Linux commit 4396e46187ca ('tcp: remove tcp_tw_recycle', 4.12) removed it as 'already broken "
         "for connections behind NAT, since the per-destination timestamp is not monotonically increasing for "
         "multiple machines behind a single destination address'; ip-sysctl.txt: 'It should not be changed "
         "without advice/request of technical experts'", "delete the line (default 0)", before=(4, 12)),
    Rule("kernel.pid_max", lambda v: len(v) == 1 and (v[0] > PID_MAX_LIMIT_64BIT or v[0] < 301), "LR017",
         lambda v: f"{v[0]} is outside 301 .. {PID_MAX_LIMIT_64BIT}: kernel/sysctl.c takes pid_max through "
         "proc_dointvec_minmax bounded by RESERVED_PIDS + 1 and PID_MAX_LIMIT, which include/linux/threads.h sets "
         "to 4 * 1024 * 1024 on 64-bit kernels (32768 on 32-bit); the write fails with EINVAL and pid_max stays",
         f"delete the line, or use at most {PID_MAX_LIMIT_64BIT}"),
    Rule("net.ipv4.ip_local_port_range",
         lambda v: len(v) == 2 and (v[1] < v[0] or min(v) < 1 or max(v) > 65535), "LR017",
         lambda v: f"'{v[0]} {v[1]}' is not a range the kernel takes: net/ipv4/sysctl_net_ipv4.c bounds both ends "
         "to 1 .. 65535 and returns EINVAL 'if (range[1] < range[0])'; the write fails and the old range stays",
         "write LOW HIGH with 1 <= LOW <= HIGH <= 65535"),
    Rule("net.ipv4.tcp_syn_retries", lambda v: len(v) == 1 and not 1 <= v[0] <= 127, "LR017",
         lambda v: f"{v[0]} is outside 1 .. 127: net/ipv4/sysctl_net_ipv4.c bounds tcp_syn_retries by "
         "tcp_syn_retries_min = 1 and MAX_TCP_SYNCNT = 127 (include/net/tcp.h); the write fails with EINVAL",
         "delete the line (default 6)"),
]
BY_NAME = {rule.name: rule for rule in LINUX_RULES}

# FreeBSD tunables whose 0 means "size it from memory" (kern_mbuf.c tunable_mbinit)
FREEBSD_ZERO_IS_AUTO = {"kern.ipc.nmbclusters": "maxmbufmem / MCLBYTES / 4",
                        "kern.ipc.nmbjumbop": "maxmbufmem / MJUMPAGESIZE / 4",
                        "kern.ipc.nmbjumbo9": "maxmbufmem / MJUM9BYTES / 6",
                        "kern.ipc.nmbjumbo16": "maxmbufmem / MJUM16BYTES / 6"}


def below_lists(family: str, low: tuple[int, ...] | None) -> str:
    """The note for a Linux kernel older than the release lists (CentOS 7's 3.10), else ''."""
    if family != "linux" or low is None or low[:2] >= LISTS_START:
        return ""
    return (f" (linerate's Linux release lists start at {fmt(LISTS_START)}: on {fmt(low)} names are not checked "
            "against a list; documented harm of a value still is)")


def linux_harm(key: str, value: str, span) -> tuple[str, str, str, str] | None:
    """(code, severity, message, fix) for a Linux value a primary source calls harmful or the kernel rejects."""
    rule = BY_NAME.get(key)
    numbers = value.split()
    if rule is None or not numbers or not all(is_ascii_int(n) for n in numbers):
        return None
    low, _ = span
    if rule.before and low[:2] >= rule.before:
        return None  # the name is gone there: its removal finding says so
    values = [int(n) for n in numbers]
    if not rule.when(values):
        return None
    return rule.code, "warning", f"{key} = {value}: {rule.why(values)}{below_lists('linux', low)}", rule.fix


def freebsd_zero_default(key: str, value: str, kind: str, product: str | None = None
                         ) -> tuple[str, str, str, str] | None:
    """kern.ipc.nmbclusters=0 and its kin: the autosized default at boot, EINVAL at run time."""
    formula = FREEBSD_ZERO_IS_AUTO.get(key)
    if formula is None or value.strip() != "0":
        return None
    if kind == "loader" or product == "opnsense":  # OPNsense also writes its tunables to loader.conf
        return ("LR010", "info", f"{key}=0 is the autosized default, not 'unlimited': sys/kern/kern_mbuf.c "
                f"tunable_mbinit() replaces 0 with {formula} (maxmbufmem is half of kernel memory); the line "
                "changes nothing", "the line can go")
    return ("LR017", "warning", f"{key}=0 at run time: sys/kern/kern_mbuf.c's handler only raises the limit and "
            "answers EINVAL to a value below the current one, so the write fails", "delete the line")


def ipv6_forwarding_scope(settings, roles: set[str]) -> list[tuple[object, str, str]]:
    """(setting, message, fix) for net.ipv6.conf.{default,IF}.forwarding=1 on a forwarding role when no
    line of the files audited sets net.ipv6.conf.all.forwarding=1: the kernel forwards IPv6 only when
    conf/all/forwarding is on (ip6_forward), the per-interface value sets Host/Router behaviour only."""
    role = next((r for r in sorted(roles) if r in ("router", "nat-firewall")), None)
    if role is None:
        return []
    values = {s.key: s.value.strip() for s in settings if s.kind in ("sysctl", "config_xml")}
    if values.get("net.ipv6.conf.all.forwarding") == "1":
        return []
    out = []
    for s in settings:
        parts = s.key.split(".")
        if (s.kind in ("sysctl", "config_xml") and len(parts) == 5 and parts[:3] == ["net", "ipv6", "conf"]
                and parts[3] != "all" and parts[4] == "forwarding" and s.value.strip() == "1"):
            out.append((s, f"{s.key}=1 does not make this {role} forward IPv6: ip-sysctl.rst, conf/all/forwarding "
                        "'Enable global IPv6 forwarding between all interfaces', while the per-interface value "
                        "only sets 'interface-specific Host/Router behaviour'; ip6_forward() drops every packet "
                        "while net.ipv6.conf.all.forwarding is 0, and no line of the files audited sets it to 1",
                        "set net.ipv6.conf.all.forwarding=1 (it also sets every interface's value)"))
    return out


# netisr queue lengths whose handlers call netisr_setqlimit() (sys/netinet/ip_input.c, netinet6/ip6_input.c,
# net/rtsock.c)
NETISR_QUEUES = ("net.inet.ip.intr_queue_maxlen", "net.inet.ip.intr_direct_queue_maxlen",
                 "net.inet6.ip6.intr_queue_maxlen", "net.inet6.ip6.intr_direct_queue_maxlen",
                 "net.route.netisr_maxqlen")
NETISR_DEFAULT_MAXQLIMIT = 10240


def above_netisr_limit(settings) -> list[tuple[object, str, str]]:
    """(setting, message, fix) for a FreeBSD netisr queue length above net.isr.maxqlimit (as set by a line
    of the files audited, else its default): netisr_setqlimit() refuses it with EINVAL."""
    limit_line = next((s for s in reversed(settings) if s.key == "net.isr.maxqlimit" and is_ascii_int(s.value.strip())),
                      None)
    limit = int(limit_line.value.strip()) if limit_line else NETISR_DEFAULT_MAXQLIMIT
    where = (f"as {limit_line.file}:{limit_line.line} sets it" if limit_line else
             "its default, NETISR_DEFAULT_MAXQLIMIT, since no line of the files audited raises it")
    out = []
    for s in settings:
        value = s.value.strip()
        if s.key in NETISR_QUEUES and s.kind in ("sysctl", "config_xml") and is_ascii_int(value) and int(value) > limit:
            out.append((s, f"{s.key}={value} is refused: its handler calls netisr_setqlimit() (sys/net/netisr.c), "
                        f"which answers EINVAL to a queue length above net.isr.maxqlimit, {limit:,} ({where}); the "
                        "queue keeps its old length", f"raise net.isr.maxqlimit to at least {value} in loader.conf "
                        "(a boot tunable), or lower this value"))
    return out
