"""Operating systems and versions. pfSense and OPNsense are audited against their FreeBSD base, OpenWrt
against its Linux kernel; a release these maps do not hold is an error that lists the known ones."""

from __future__ import annotations

import re

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
OPNSENSE_BASE = {"20.1": "11.2", "20.7": "12.1", "21.1": "12.1", "21.7": "12.1", "22.1": "13.0", "22.7": "13.1",
                 "23.1": "13.1", "23.7": "13.2", "24.1": "13.2", "24.7": "14.1", "25.1": "14.2", "25.7": "14.3"}
# OpenWrt releases (minor updates keep the kernel series) and their Linux kernel (OpenWrt release notes).
OPENWRT_KERNEL = {"19.07": "4.14", "21.02": "5.4", "22.03": "5.10", "23.05": "5.15", "24.10": "6.6"}

BASES = {"pfsense": (PFSENSE_BASE, 3), "opnsense": (OPNSENSE_BASE, 2), "openwrt": (OPENWRT_KERNEL, 2)}


def parse_version(text: str) -> tuple[int, ...]:
    match = re.match(r"^\s*(\d+(?:\.\d+)*)", str(text))
    if not match:
        raise ValueError(f"'{text}' is not a version such as 14.0 or 2.6.0")
    return tuple(int(part) for part in match.group(1).split("."))


def _release_key(version: tuple[int, ...], width: int) -> tuple[int, ...]:
    padded = version + (0,) * max(0, width - len(version))
    return padded[:width]


def base_version(os_name: str, version: str) -> tuple[str, tuple[int, ...]]:
    """(family, version in that family's numbering) for --os/--os-version."""
    if os_name not in OS_FAMILIES:
        raise ConfigError("--os", f"'{os_name}' is not known; use one of {', '.join(OS_FAMILIES)}")
    try:
        parsed = parse_version(version)
    except ValueError as exc:
        raise ConfigError("--os-version", str(exc)) from None
    if os_name not in BASES:
        return OS_FAMILIES[os_name], parsed
    table, width = BASES[os_name]
    known = {_release_key(parse_version(release), width): base for release, base in table.items()}
    base = known.get(_release_key(parsed, width))
    if base is None:
        raise ConfigError("--os-version", f"{os_name} {version} is not a release linerate knows; known: "
                          f"{', '.join(table)}")
    return OS_FAMILIES[os_name], parse_version(base)


def fmt(version: tuple[int, ...]) -> str:
    return ".".join(map(str, version))


# A family's releases linerate supports, for --os without --os-version: the bases of the products' maps.
FAMILY_RANGE = {"freebsd": ("10.3", "15.0"), "linux": ("4.14", "6.6"), "openbsd": ("7.3", "7.7")}


def product_span(os_name: str) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """(oldest, newest) base release of every release of this product linerate knows: OPNsense 20.1..25.7
    -> FreeBSD 11.2..14.3. Without --os-version the audit judges the whole span."""
    if os_name in BASES:
        bases = [parse_version(base) for base in BASES[os_name][0].values()]
        return min(bases), max(bases)
    low, high = FAMILY_RANGE[OS_FAMILIES[os_name]]
    return parse_version(low), parse_version(high)


def product_releases(os_name: str) -> str:
    """'OPNsense 20.1..25.7' for messages about a span."""
    if os_name in BASES:
        releases = list(BASES[os_name][0])
        return f"{os_name} {releases[0]}..{releases[-1]}"
    return f"{os_name} {'..'.join(FAMILY_RANGE[OS_FAMILIES[os_name]])}"
