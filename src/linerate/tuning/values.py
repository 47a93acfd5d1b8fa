"""Value and meaning checks that need no catalog entry: a value in the wrong unit, a write to a read-only
sysctl, an rc.conf service that works against the box's role, and which role suggestions would lower a
capacity the user raised.

Sources:
- tcp_mem / udp_mem / sctp_mem: Documentation/networking/ip-sysctl.rst, "tcp_mem - vector of 3 INTEGERs:
  min, pressure, max ... in pages" (udp_mem likewise, "Number of pages allowed for queueing by all UDP
  sockets"); a page is 4 KiB on x86 and most arm64 kernels (getconf PAGESIZE).
- read-only: mode 0444 in the kernel's ctl_table (net.netfilter.nf_conntrack_count, nf_conntrack_buckets
  before it became writable in 5.x are 0444); writes fail with EACCES/EPERM ("sysctl: permission denied
  on key"). The names come from the mode column of /proc/sys of Debian 12's kernel (linux-6.1.tsv).
- read-only per interface and per release: tuning/names/linux-releases.tsv 'read-only' rows, from each
  release's declarations (mode 0444, devinet.c's DEVINET_SYSCTL_RO_ENTRY(MC_FORWARDING, "mc_forwarding"),
  addrconf.c's mc_forwarding entry with .mode 0444): net.ipv{4,6}.conf.{all,default,IF}.mc_forwarding.
- FreeBSD TCP timers in milliseconds: tcp(4) (12.2 and 14.x), "keepidle: Amount of time, in milliseconds,
  that the connection must be idle before keepalive probes (if enabled) are sent. The default is 7200000
  msec (2 hours)"; keepintvl "The interval, in milliseconds, between keepalive probes ... The default is
  75000 msec"; keepinit "Timeout, in milliseconds, for new, non-established TCP connections. The default
  is 75000 msec"; msl "The Maximum Segment Lifetime, in milliseconds ... Default is 30000 msec". A value
  that as milliseconds is under 10 s and under 5% of the default, and as seconds within 100x of the
  default, was written in seconds (keepidle=3600, keepintvl=150); keepidle=60000 (60 s) is left alone.
- net.inet.tcp.minmss: tcp(4) "Minimum TCP Maximum Segment Size; used to prevent a denial of service
  attack ... The default is 216 bytes"; RFC 1122 4.2.2.6: a host that receives no MSS option MUST assume
  536, and a peer may announce any MSS it can take. A floor above 536 makes FreeBSD send segments larger
  than a peer (PPPoE 1452, tunnels, RFC 879 hosts) asked for: they are dropped or fragmented.
- OpenBSD kern.stackgap_random: sys/kern/kern_sysctl.c, KERN_STACKGAPRANDOM "Safety harness": EINVAL
  unless the value is 0 or a power of two >= ALIGNBYTES (7 on amd64/arm64, 3 on i386) and < MAXSSIZ.
- natd_enable: natd(8) "the natd daemon ... uses divert(4) sockets": every packet NATed crosses to user
  space and back; the FreeBSD Handbook, chapter "Firewalls", section "In-kernel NAT" (ipfw nat) and pf's
  nat-to / rdr rules do the same in the kernel.
"""

from __future__ import annotations

import re

from linerate.numbers import is_ascii_int
from linerate.tuning.harm import freebsd_zero_default, linux_harm
from linerate.tuning.names import name_list
from linerate.tuning.parsers import Setting
from linerate.tuning.releases import linux_read_only
from linerate.tuning.sources import source_list

PAGE_BYTES = 4096
# 64 GiB worth of 4 KiB pages: a max of that size is almost always a byte count written where the kernel
# reads pages (the same figure as rmem_max/wmem_max in bytes: 16777216)
PAGES_ABSURD = 16 * 1024 * 1024
PAGE_VECTORS = ("net.ipv4.tcp_mem", "net.ipv4.udp_mem", "net.sctp.sctp_mem")
# A suggestion for one of these names that is lower than the user's value would shrink a capacity.
CAPACITY = re.compile(r"max|size|bucket|backlog|mem|buf|limit|hash|nmb|queue|qlen|len$|count|space")


def unit_problem(s: Setting, family: str) -> str | None:
    """What is wrong with the unit of a value the kernel reads in pages, or None."""
    if family != "linux" or s.key not in PAGE_VECTORS:
        return None
    numbers = s.value.split()
    if len(numbers) != 3 or not all(is_ascii_int(n) for n in numbers):
        return f"{s.key} takes three whole numbers (min pressure max, in pages); '{s.value}' is not that"
    low, pressure, high = map(int, numbers)
    disorder = ("" if low <= pressure <= high else f"; and the three are out of order: ip-sysctl.rst reads them as "
                f"min {low}, pressure {pressure}, max {high}, which must rise (min <= pressure <= max)")
    top = max(low, pressure, high)
    if top >= PAGES_ABSURD:
        gib = top * PAGE_BYTES / 2**30
        return (f"{s.key} counts pages, not bytes (ip-sysctl.rst: 'vector of 3 INTEGERs: min, pressure, max', "
                f"in pages of {PAGE_BYTES} bytes): {top} pages lets sockets pin {gib:,.0f} GiB; a byte "
                f"count written here (as for rmem_max) removes the memory limit{disorder}")
    if disorder:
        return f"{s.key}: {disorder[2:]}"
    return None


# FreeBSD TCP timers tcp(4) gives in milliseconds: name -> default in ms
FREEBSD_MS_TIMERS = {"net.inet.tcp.keepidle": 7_200_000, "net.inet.tcp.keepintvl": 75_000,
                     "net.inet.tcp.keepinit": 75_000, "net.inet.tcp.msl": 30_000}


def freebsd_ms_problem(s: Setting, family: str) -> str | None:
    """A tcp(4) millisecond timer written in seconds: tiny as milliseconds, plausible as seconds."""
    default_ms = FREEBSD_MS_TIMERS.get(s.key) if family == "freebsd" else None
    if default_ms is None or not is_ascii_int(s.value.strip()):
        return None
    value = int(s.value.strip())
    tiny_ms = min(10_000, default_ms // 20)  # under 10 s and under 5% of the default: nobody means that
    if not 0 < value < tiny_ms or not default_ms // 100 <= value * 1000 <= default_ms * 100:
        return None
    return (f"{s.key} is in milliseconds (tcp(4): default {default_ms} ms = {default_ms / 1000:g} s): {value} "
            f"means {value} ms = {value / 1000:g} s, while {value} s (= {value * 1000} ms) is a usual setting; "
            "it was almost surely written in seconds")


def freebsd_ms_fix(s: Setting) -> str:
    return f"write it in milliseconds: {s.key}={int(s.value.strip()) * 1000} if you meant {s.value.strip()} s"


RFC1122_DEFAULT_MSS = 536


def harmful_value(s: Setting, family: str, span=None) -> tuple[str, str, str, str] | None:
    """(code, severity, message, fix) for a value that hurts any role, with its source: the documented harm
    and hard limits of tuning/harm.py (Linux, FreeBSD's autosized 0); FreeBSD's minmss above the MSS every
    host may use (RFC 1122 4.2.2.6); OpenBSD's kern.stackgap_random that the kernel rejects."""
    table = (linux_harm(s.key, s.value.strip(), span) if family == "linux" and span else
             freebsd_zero_default(s.key, s.value, s.kind, s.product) if family == "freebsd" else None)
    if table:
        return table
    value = s.value.strip()
    if not is_ascii_int(value):
        return None
    number = int(value)
    if family == "freebsd" and s.key == "net.inet.tcp.minmss" and number > RFC1122_DEFAULT_MSS:
        return ("LR005", "warning", f"net.inet.tcp.minmss={number} raises the floor FreeBSD applies to every "
                f"peer's MSS above "
                f"{RFC1122_DEFAULT_MSS}, the MSS RFC 1122 (4.2.2.6) lets any host use: to a peer that announced "
                "less (PPPoE 1452, VPN and other tunnels, small-MTU paths) FreeBSD sends segments larger than it "
                "asked for, which are dropped or fragmented; tcp(4): minmss only guards against absurdly small "
                "MSS (default 216)", "delete the line (default 216), or keep it <= 536")
    if family == "openbsd" and s.key == "kern.stackgap_random" and number != 0 and (
            number & (number - 1) or number < 8):
        why = "not a power of two" if number & (number - 1) else "below ALIGNBYTES (7 on amd64/arm64)"
        return ("LR017", "warning", f"kern.stackgap_random={number} is {why}: sys/kern/kern_sysctl.c "
                "(KERN_STACKGAPRANDOM, 'safety "
                "harness') returns EINVAL unless the value is 0 or a power of two >= ALIGNBYTES and < MAXSSIZ, "
                "so sysctl fails and the default stays", "delete the line, or use 0 or a power of two such as 262144")
    return None


def read_only(s: Setting, family: str, version, span=None) -> str | None:
    """Why a write of the name fails (it is read-only on the releases judged), or None."""
    if s.kind not in ("sysctl", "config_xml", "loader"):
        return None
    if family == "freebsd" and span:
        return _freebsd_read_only(s, span)
    if family != "linux" or s.kind == "loader":
        return None
    declared = linux_read_only(s.key, *span) if span else None
    if not declared:
        names = name_list(family, version)
        listed = names.lookup(s.key) if names else None
        declared = f"mode 0444 in the {names.label()}" if listed and listed[0] == "read-only" else None
    return (f"{s.key} is read-only ({declared}): the kernel reports it, a write fails with 'permission denied' "
            "and sysctl -p exits non-zero") if declared else None


def _freebsd_read_only(s: Setting, span) -> str | None:
    """FreeBSD: every snapshot judging the releases declares the name CTLFLAG_RD without CTLFLAG_TUN and
    without CTLFLAG_WR. sysctl(8) (sbin/sysctl/sysctl.c) then refuses a write: "oid '%s' is read only";
    the loader sets only tunables (CTLFLAG_TUN), so loader.conf cannot set it either."""
    source = source_list("freebsd")
    kinds, origin = source.kinds_over(s.key, *span) if source else (set(), None)
    if kinds != {"read-only"}:
        return None
    tool = "the loader sets only tunables (CTLFLAG_TUN)" if s.kind == "loader" else \
        f"sysctl(8) refuses the write (\"oid '{s.key}' is read only\")"
    return (f"{s.key} is read-only: declared CTLFLAG_RD, neither writable nor a loader tunable, in {origin} "
            f"({source.label()}); {tool} and the line does nothing")


def lowers_capacity(name: str, suggested: str, current: str) -> bool:
    """True when a role suggestion would shrink a number the user set higher (a NAT box's conntrack
    table halved because the catalog's figure is smaller)."""
    if not (is_ascii_int(suggested) and is_ascii_int(current)):
        return False
    return int(suggested) < int(current) and bool(CAPACITY.search(name.rsplit(".", 1)[-1]))


# rc.conf services that work against a role: (variable, value, roles, message)
RC_SERVICES = [
    ("natd_enable", "yes", ("nat-firewall", "router"),
     "natd(8) is userland NAT: each packet crosses to the natd process through a divert(4) socket and back, "
     "so a NAT gateway forwards far less than with NAT done in the kernel (ipfw's in-kernel NAT, "
     "firewall_nat_enable, or pf's nat-to rules; FreeBSD Handbook, Firewalls, 'In-kernel NAT')",
     "use firewall_nat_enable=\"YES\" with an 'ipfw nat' rule, or pf's nat-to; then natd_enable=\"NO\""),
]


def rc_service_problem(s: Setting, roles: set[str]) -> tuple[str, str] | None:
    """(message, fix) for an rc.conf service that hurts the role, or None."""
    for variable, value, harmed, message, fix in RC_SERVICES:
        role = next((r for r in sorted(roles) if r in harmed), None)
        if s.key == variable and s.value.strip().lower() == value and role:
            return f"{s.key}={s.value} on a {role}: {message}", fix
    return None


# A number with a decimal point where the kernels read whole numbers: Linux's numeric handlers
# (kernel/sysctl.c proc_dointvec/proc_douintvec/proc_doulongvec: proc_get_long parses digits, and a
# '.' after them is neither a separator nor the end, so the write fails with EINVAL) and FreeBSD's
# sysctl(8) (strtol/strtoimax must consume the whole value: "invalid integer"). String-valued names
# (a congestion control's name, a hostname) never hold a bare decimal number.
_FRACTION = re.compile(r"[0-9]+\.[0-9]+")


_QUOTED = re.compile(r"""^[^=]*=\s*(["'])(.*)\1\s*(?:#.*)?$""")


def quoted_problem(s: Setting, family: str) -> str | None:
    """A Linux sysctl.conf value in quotes: procps sysctl -p (Preload: whitespace stripped, nothing else),
    BusyBox sysctl -p (config_read on '=' and blanks) and systemd-sysctl write the quotes to /proc/sys too,
    so a number is refused by the kernel's integer handler (EINVAL) and a string keeps its quotes."""
    if family != "linux" or s.kind != "sysctl":
        return None
    match = _QUOTED.match(s.raw.strip())
    if not match:
        return None
    return (f"{s.key}: the value is in quotes ({match.group(1)}{match.group(2)}{match.group(1)}); sysctl -p (procps, "
            "BusyBox) and systemd-sysctl strip blanks, not quotes, and write them to /proc/sys: a number is refused "
            "(EINVAL, 'Invalid argument') and a string keeps the quotes")


def fraction_problem(s: Setting, family: str) -> str | None:
    if family not in ("linux", "freebsd") or s.kind not in ("sysctl", "config_xml") or not _FRACTION.fullmatch(s.value):
        return None
    how = ("Linux's numeric sysctl handlers (kernel/sysctl.c) read whole numbers and refuse the write"
           if family == "linux" else "sysctl(8) reads integers whole and refuses it ('invalid integer')")
    return f"{s.key} = {s.value}: a fraction, but {how}; the value stays what it was"

