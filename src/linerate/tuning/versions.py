"""Operating systems and versions. pfSense and OPNsense are audited against their FreeBSD base, OpenWrt
against its Linux kernel.

Each map lists every release of its product between its oldest and newest entry, so a version inside
that range that the map does not hold is no real release (OpenWrt 23.7, pfSense 2.4.6): an error that
lists the known ones. A version newer than the newest entry, within one major number of it (OpenWrt
25.12, pfSense 2.8.1), is judged as the newest release linerate knows, with a note saying so; older
than the oldest entry, or further ahead, is an error too. A release whose targets ship two kernels
(OpenWrt 18.06) maps to both: the audit judges the range."""

from __future__ import annotations

import re
from dataclasses import dataclass

from linerate.errors import ConfigError

ROLES = ("nat-firewall", "router", "server", "vm-guest", "pppoe")
OS_FAMILIES = {"freebsd": "freebsd", "pfsense": "freebsd", "opnsense": "freebsd", "openbsd": "openbsd",
               "linux": "linux", "openwrt": "linux"}

# pfSense CE releases and their FreeBSD base (pfSense release notes, "Operating System" sections).
PFSENSE_BASE = {"2.3.0": "10.3", "2.3.1": "10.3", "2.3.2": "10.3", "2.3.3": "10.3", "2.3.4": "10.3", "2.3.5": "10.3",
                "2.4.0": "11.1", "2.4.1": "11.1", "2.4.2": "11.1", "2.4.3": "11.1", "2.4.4": "11.2", "2.4.5": "11.3",
                "2.5.0": "12.2", "2.5.1": "12.2", "2.5.2": "12.2", "2.6.0": "12.3",
                "2.7.0": "14.0", "2.7.1": "14.0", "2.7.2": "14.0", "2.8.0": "15.0"}
# OPNsense major releases (minor updates keep the base) and their FreeBSD/HardenedBSD base
# (René Mayrhofer, 'Firewall throughput measurements: OPNsense on APU4d4, OPNsense in a Proxmox VM, and OpenWRT on Turris Omnia' (https://www.mayrhofer.eu.org/post/firewall-throughput-opnsense-openwrt/) and the OPNsense release announcements).
# 17.1-19.7 from the announcements in opnsense/changelog (doc/<series>/<series>): 17.1 "features FreeBSD
# 11.0"; 18.1 lists "FreeBSD 11.1 ... migration" among the changes since 17.7 (so 17.7 kept 11.0);
# 18.7 "we have not yet begun to adopt FreeBSD 11.2"; 19.1 "The migration to HardenedBSD 11.2 has been
# completed"; 19.7 names no base change (11.2, as 20.1).
OPNSENSE_BASE = {"17.1": "11.0", "17.7": "11.0", "18.1": "11.1", "18.7": "11.1", "19.1": "11.2", "19.7": "11.2",
                 "20.1": "11.2", "20.7": "12.1", "21.1": "12.1", "21.7": "12.1", "22.1": "13.0", "22.7": "13.1",
                 "23.1": "13.1", "23.7": "13.2", "24.1": "13.2", "24.7": "14.1", "25.1": "14.2", "25.7": "14.3"}
# OpenWrt releases (minor updates keep the kernel series) and their Linux kernel (OpenWrt release notes).
# LEDE 17.01: openwrt/openwrt branch lede-17.01, include/kernel-version.mk holds LINUX_VERSION-4.4 only.
# 18.06: 'uses kernel version 4.14 with most of the targets, and an updated 4.9 kernel for several older
# targets' (Sartura, 'First contributions towards integrating 4.19 kernel in OpenWrt',
# https://sartura.hr/blog/first-contributions-towards-integrating-4.19-kernel-in-openwrt).
# OpenWrt's release notes name each release's kernel: 14.07 Barrier Breaker 3.10, 15.05 Chaos Calmer 3.18
OPENWRT_KERNEL = {"14.07": "3.10", "15.05": "3.18", "17.01": "4.4", "18.06": "4.9..4.14", "19.07": "4.14", "21.02": "5.4", "22.03": "5.10",
                  "23.05": "5.15", "24.10": "6.6"}
# Without --os-version the audit judges the releases from these on: the older ones (LEDE 17.01,
# OpenWrt 18.06, both end of life) only when named, so their 4.4 kernel does not blur every verdict.
SPAN_FROM = {"openwrt": "19.07", "opnsense": "20.1"}  # OPNsense before 20.1 (end of life): only when named

BASES = {"pfsense": (PFSENSE_BASE, 3), "opnsense": (OPNSENSE_BASE, 2), "openwrt": (OPENWRT_KERNEL, 2)}


def parse_version(text: str) -> tuple[int, ...]:
    match = re.match(r"^\s*(\d+(?:\.\d+)*)", str(text))
    if not match:
        raise ValueError(f"'{text}' is not a version such as 14.0 or 2.6.0")
    return tuple(int(part) for part in match.group(1).split("."))


def _release_key(version: tuple[int, ...], width: int) -> tuple[int, ...]:
    padded = version + (0,) * max(0, width - len(version))
    return padded[:width]


@dataclass(frozen=True)
class Release:
    family: str
    version: tuple[int, ...]  # in the family's numbering (the lower kernel of a two-kernel release)
    high: tuple[int, ...] | None = None  # the higher kernel of a two-kernel release
    note: str | None = None  # said once to the user: the version was judged as another release


def _base(text: str) -> tuple[tuple[int, ...], tuple[int, ...] | None]:
    low, _, high = text.partition("..")
    return parse_version(low), (parse_version(high) if high else None)


# what --os-version takes: 14.0, 2.7.2, 23.05.5, 14.2-RELEASE-p1, 24.1.10_1 (ASCII, nothing around it)
USER_VERSION = re.compile(r"[0-9]{1,4}(\.[0-9]{1,4}){0,3}(?:[-_][A-Za-z0-9.]{1,16}){0,3}", re.ASCII)


def resolve_release(os_name: str, version: str) -> Release:
    """--os/--os-version -> the release judged, in its family's numbering."""
    if os_name not in OS_FAMILIES:
        raise ConfigError("--os", f"'{os_name}' is not known; use one of {', '.join(OS_FAMILIES)}")
    if not USER_VERSION.fullmatch(version):
        raise ConfigError("--os-version", f"{version[:24]!r} is not a version such as 14.0, 2.7.2 or 23.05.5")
    parsed = parse_version(version)
    if os_name not in BASES:
        return Release(OS_FAMILIES[os_name], parsed)
    table, width = BASES[os_name]
    known = {_release_key(parse_version(release), width): release for release in table}
    key = _release_key(parsed, width)
    if key in known:
        return Release(OS_FAMILIES[os_name], *_base(table[known[key]]))
    newest = max(known)
    if key > newest and key[0] <= newest[0] + 1:
        release = known[newest]
        low, high = _base(table[release])
        return Release(OS_FAMILIES[os_name], low, high,
                       f"{os_name} {version} is newer than the releases linerate knows; judged as {os_name} "
                       f"{release} ({OS_FAMILIES[os_name]} {table[release]}), the newest it knows: what changed "
                       "since is not checked")
    raise ConfigError("--os-version", f"{os_name} {version} is not a release linerate knows; known: "
                      f"{', '.join(table)}")


def base_version(os_name: str, version: str) -> tuple[str, tuple[int, ...]]:
    """(family, version in that family's numbering) for --os/--os-version."""
    release = resolve_release(os_name, version)
    return release.family, release.version


def fmt(version: tuple[int, ...]) -> str:
    return ".".join(map(str, version))


# A family's releases linerate supports, for --os without --os-version: the bases of the products' maps.
FAMILY_RANGE = {"freebsd": ("10.3", "15.0"), "linux": ("4.14", "6.6"), "openbsd": ("7.3", "7.7")}


def _spanned(os_name: str) -> list[str]:
    releases = list(BASES[os_name][0])
    start = SPAN_FROM.get(os_name)
    return releases[releases.index(start):] if start else releases


def product_span(os_name: str) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """(oldest, newest) base release of every release of this product linerate judges without
    --os-version: OPNsense 20.1..25.7 -> FreeBSD 11.2..14.3."""
    if os_name in BASES:
        bases = [_base(BASES[os_name][0][release]) for release in _spanned(os_name)]
        return min(low for low, _ in bases), max(high or low for low, high in bases)
    low, high = FAMILY_RANGE[OS_FAMILIES[os_name]]
    return parse_version(low), parse_version(high)


def product_release_span(os_name: str) -> tuple[tuple[int, ...], tuple[int, ...]] | None:
    """(oldest, newest) release of the product in its own numbering (OPNsense (20, 1)..(25, 7))."""
    if os_name not in BASES:
        return None
    releases = [parse_version(release) for release in _spanned(os_name)]
    return min(releases), max(releases)


def product_releases(os_name: str) -> str:
    """'OPNsense 20.1..25.7' for messages about a span."""
    if os_name in BASES:
        releases = _spanned(os_name)
        return f"{os_name} {releases[0]}..{releases[-1]}"
    return f"{os_name} {'..'.join(FAMILY_RANGE[OS_FAMILIES[os_name]])}"
