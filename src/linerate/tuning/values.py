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
- natd_enable: natd(8) "the natd daemon ... uses divert(4) sockets": every packet NATed crosses to user
  space and back; the FreeBSD Handbook, chapter "Firewalls", section "In-kernel NAT" (ipfw nat) and pf's
  nat-to / rdr rules do the same in the kernel.
"""

from __future__ import annotations

import re

from linerate.numbers import is_ascii_int
from linerate.tuning.names import name_list
from linerate.tuning.parsers import Setting

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
    if high >= PAGES_ABSURD:
        gib = high * PAGE_BYTES / 2**30
        return (f"{s.key} counts pages, not bytes (ip-sysctl.rst: 'vector of 3 INTEGERs: min, pressure, max', "
                f"in pages of {PAGE_BYTES} bytes): a max of {high} pages lets sockets pin {gib:,.0f} GiB; a byte "
                "count written here (as for rmem_max) removes the memory limit")
    if not low <= pressure <= high:
        return f"{s.key} must rise: min {low} <= pressure {pressure} <= max {high} (ip-sysctl.rst)"
    return None


def read_only(s: Setting, family: str, version) -> str | None:
    """The list that says the name is read-only, or None."""
    if family != "linux" or s.kind not in ("sysctl", "config_xml"):
        return None
    names = name_list(family, version)
    listed = names.lookup(s.key) if names else None
    if listed and listed[0] == "read-only":
        return names.label()
    return None


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
