"""Operating systems and versions. pfSense and OPNsense are audited against their FreeBSD base."""

from __future__ import annotations

import re

from linerate.errors import ConfigError

ROLES = ("nat-firewall", "router", "server", "vm-guest", "pppoe")
OS_FAMILIES = {"freebsd": "freebsd", "pfsense": "freebsd", "opnsense": "freebsd", "openbsd": "openbsd",
               "linux": "linux", "openwrt": "linux"}

# pfSense releases and their FreeBSD base (pfSense release notes).
PFSENSE_BASE = [((2, 3), "10.3"), ((2, 4), "11.1"), ((2, 4, 4), "11.2"), ((2, 4, 5), "11.3"), ((2, 5), "12.2"),
                ((2, 6), "12.3"), ((2, 7), "14.0"), ((2, 8), "15.0")]
# OPNsense major releases and their FreeBSD/HardenedBSD base (seed 001 and OPNsense release notes).
OPNSENSE_BASE = [((20, 1), "11.2"), ((20, 7), "12.1"), ((21, 1), "12.1"), ((22, 1), "13.0"), ((23, 1), "13.1"),
                 ((24, 1), "13.2"), ((24, 7), "14.1"), ((25, 1), "14.2"), ((26, 1), "14.3")]


def parse_version(text: str) -> tuple[int, ...]:
    match = re.match(r"^\s*(\d+(?:\.\d+)*)", str(text))
    if not match:
        raise ValueError(f"'{text}' is not a version such as 14.0 or 2.6.0")
    return tuple(int(part) for part in match.group(1).split("."))


def base_version(os_name: str, version: str) -> tuple[str, tuple[int, ...]]:
    """(family, version in that family's numbering) for --os/--os-version."""
    if os_name not in OS_FAMILIES:
        raise ConfigError("--os", f"'{os_name}' is not known; use one of {', '.join(OS_FAMILIES)}")
    try:
        parsed = parse_version(version)
    except ValueError as exc:
        raise ConfigError("--os-version", str(exc)) from None
    table = {"pfsense": PFSENSE_BASE, "opnsense": OPNSENSE_BASE}.get(os_name)
    if table is None:
        return OS_FAMILIES[os_name], parsed
    candidates = [base for release, base in table if release <= parsed]
    if not candidates:
        raise ConfigError("--os-version", f"{os_name} {version} is older than linerate knows "
                          f"({'.'.join(map(str, table[0][0]))} is the first)")
    return "freebsd", parse_version(candidates[-1])


def fmt(version: tuple[int, ...]) -> str:
    return ".".join(map(str, version))
