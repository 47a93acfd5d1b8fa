"""The knob catalog: TOML files in tuning/catalog/, validated by a schema at load (and in tests).

Names may hold a unit placeholder N (dev.igb.N.fc matches dev.igb.0.fc). Versions are strings
so that "unknown" can be said where no source gives a fact — no invented defaults.
"""

from __future__ import annotations

import re
import tomllib
from functools import lru_cache
from importlib import resources
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from linerate.numbers import is_ascii_int
from linerate.tuning.versions import parse_version

Location = Literal["loader", "sysctl", "both", "rc_conf", "gui", "pf_conf", "ethtool", "sysfs", "uci", "nft", "service", "ifconfig"]
from linerate.tuning.versions import ROLES  # noqa: E402  (kept here for importers)


class Recommendation(BaseModel):
    model_config = ConfigDict(extra="forbid")
    value: str
    why: str
    versions: str | None = None  # e.g. "<12.0"


class ValueRule(BaseModel):
    model_config = ConfigDict(extra="forbid")
    values: list[str]
    why: str
    # A role-harm rule (LR005) does not fire on a value equal to the OS default of the releases judged:
    # the line changes nothing. Set this when the default itself is the harm (virtio checksum offload
    # left on in a pfSense VM: hw.vtnet.csum_disable=0 is both the default and the problem).
    default_is_harm: bool = False


class Knob(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    name: str
    os: Literal["freebsd", "openbsd", "linux"]
    location: Location
    type: Literal["int", "bool", "string", "ifconfig_flag", "gui_checkbox"]
    description: str
    min: int | None = None
    max: int | None = None
    choices: list[str] | None = None
    pattern: str | None = None
    defaults: dict[str, str] = Field(default_factory=dict)
    # a product that sets its own default over its base OS's (OPNsense's hw.ibrs_disable=0):
    # product -> {the product's release from which it holds: value}
    product_defaults: dict[str, dict[str, str]] = Field(default_factory=dict)
    default_note: str | None = None
    introduced: str = "unknown"
    removed: str = "unknown"
    replaced_by: str | None = None
    effect: list[Literal["throughput", "latency", "security"]] = Field(default_factory=list)
    risks: str | None = None
    recommend: dict[str, Recommendation] = Field(default_factory=dict)
    harmful: dict[str, ValueRule] = Field(default_factory=dict)
    security: ValueRule | None = None
    sources: list[str] = Field(min_length=1)

    @field_validator("introduced", "removed")
    @classmethod
    def _version_or_unknown(cls, value: str) -> str:
        if value != "unknown":
            parse_version(value)
        return value

    @field_validator("defaults")
    @classmethod
    def _default_versions(cls, value: dict[str, str]) -> dict[str, str]:
        for version in value:
            parse_version(version)
        return value

    @field_validator("product_defaults")
    @classmethod
    def _product_default_versions(cls, value: dict[str, dict[str, str]]) -> dict[str, dict[str, str]]:
        for table in value.values():
            for version in table:
                parse_version(version)
        return value

    @field_validator("recommend", "harmful")
    @classmethod
    def _known_roles(cls, value: dict) -> dict:
        unknown = set(value) - set(ROLES)
        if unknown:
            raise ValueError(f"unknown role(s) {sorted(unknown)}; roles are {ROLES}")
        return value

    def matches(self, name: str) -> bool:
        if "N" not in self.name.split("."):
            return name == self.name
        regex = "^" + r"\.".join(r"\d+" if part == "N" else re.escape(part) for part in self.name.split(".")) + "$"
        return re.match(regex, name) is not None

    def removed_in(self) -> tuple[int, ...] | None:
        return None if self.removed == "unknown" else parse_version(self.removed)

    def introduced_in(self) -> tuple[int, ...] | None:
        return None if self.introduced == "unknown" else parse_version(self.introduced)


def defaults_over(table: dict[str, str], low: tuple[int, ...], high: tuple[int, ...]) -> set[str]:
    """The documented defaults in force on the releases low..high: the one in force at low and any that
    takes over up to high. A table starts at the first release its source shows the knob with that
    default (the knob may be younger than the releases judged); releases before it add nothing. Empty:
    no default known there."""
    known = sorted((parse_version(v), value) for v, value in table.items())
    at_low = [value for v, value in known if v <= low][-1:]
    return set(at_low) | {value for v, value in known if low < v <= high}


class Catalog:
    def __init__(self, knobs: list[Knob]):
        self.knobs = knobs
        # exact names in a dict, unit-placeholder names (dev.igb.N.fc) by their shape: find() costs the same
        # whatever the size of the catalog (the audit calls it once per line)
        self._exact: dict[str, list[Knob]] = {}
        self._patterns: dict[tuple[str, ...], list[Knob]] = {}
        self._order = {id(knob): index for index, knob in enumerate(knobs)}
        for knob in knobs:
            parts = knob.name.split(".")
            if "N" in parts:
                shape = tuple("N" if part == "N" else part for part in parts)
                self._patterns.setdefault(shape, []).append(knob)
            else:
                self._exact.setdefault(knob.name, []).append(knob)

    def find(self, name: str, os: str | None = None) -> Knob | None:
        candidates = list(self._exact.get(name, []))
        parts = name.split(".")
        if any(is_ascii_int(part) for part in parts):
            shape = tuple("N" if is_ascii_int(part) else part for part in parts)
            candidates += self._patterns.get(shape, [])
        if len(candidates) > 1:
            candidates.sort(key=lambda knob: self._order[id(knob)])  # the catalog's order decides, as before
        return next((k for k in candidates if (os is None or k.os == os) and k.matches(name)), None)

    def stats(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for knob in self.knobs:
            counts[knob.os] = counts.get(knob.os, 0) + 1
        return counts


@lru_cache(maxsize=1)
def load_catalog() -> Catalog:
    knobs = []
    for entry in sorted(resources.files("linerate.tuning").joinpath("catalog").iterdir(), key=lambda p: p.name):
        if entry.name.endswith(".toml"):
            doc = tomllib.loads(entry.read_text(encoding="utf-8"))
            knobs += [Knob.model_validate(item) for item in doc.get("knob", [])]
    return Catalog(knobs)


def runtime_recommendations(os_name: str, role: str = "router") -> list[tuple[str, str]]:
    """(name=value, why) of every runtime sysctl the catalog recommends for a role on an OS and says
    affects throughput — what `linerate tune` tries when the file names no candidates. Knobs that
    only switch forwarding on are left out (a DUT under test forwards already), and so are
    boot-time tunables (they need a reboot) and per-unit names (dev.igb.N.fc: the unit is the box's)."""
    out = []
    for knob in load_catalog().knobs:
        recommendation = knob.recommend.get(role)
        if (knob.os != os_name or recommendation is None or "throughput" not in knob.effect
                or knob.location not in ("sysctl", "both") or "N" in knob.name.split(".")
                or "forward" in knob.name):
            continue
        out.append((f"{knob.name}={recommendation.value}", f"catalog: {recommendation.why}"))
    return out
