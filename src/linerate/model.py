"""Frozen value types shared across linerate. Units live in field names (throughput_bps, duration_s).

Validation of user-facing values happens here, in one place, so the CLI, experiment files and
tests all reject the same bad input with the same message (errors name the field).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from linerate.errors import ConfigError

DIRECTIONS: tuple[str, ...] = ("forward", "reverse", "bidir")
PROTOCOLS: tuple[str, ...] = ("tcp", "udp")
MAX_RULES = 32768  # rules:N draws non-matching sources from 198.18.128.0/17 (see topology.firewall)
LAB_NAME_RE = re.compile(r"^[a-z0-9]{1,8}$")


@dataclass(frozen=True)
class FirewallProfile:
    """A DUT ruleset. kind: none | stateful | rules (with n_rules) | nat."""

    kind: str
    n_rules: int = 0

    @classmethod
    def parse(cls, text: str, field_name: str = "firewall") -> "FirewallProfile":
        value = str(text).strip()
        if value in ("none", "stateful", "nat"):
            return cls(value)
        if value.startswith("rules:"):
            count = value.split(":", 1)[1]
            if not count.isdigit() or not 1 <= int(count) <= MAX_RULES:
                raise ConfigError(
                    field_name,
                    f"'{value}' is not valid: rules:N needs a whole number N from 1 to {MAX_RULES}",
                )
            return cls("rules", int(count))
        raise ConfigError(
            field_name, f"'{value}' is not a profile; use none, stateful, nat or rules:N (e.g. rules:100)"
        )

    def __str__(self) -> str:
        return f"rules:{self.n_rules}" if self.kind == "rules" else self.kind


def validate_lab_name(name: str) -> str:
    if not LAB_NAME_RE.match(name):
        raise ConfigError("name", f"'{name}' is not a lab name; use 1-8 lower-case letters or digits")
    return name


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


@dataclass(frozen=True)
class TrialParams:
    """What one iperf3 run measures. Validated on construction."""

    family: int = 4
    streams: int = 1
    direction: str = "forward"
    duration_s: int = 5  # iperf3 -t and -O take whole seconds
    omit_s: int = 1
    protocol: str = "tcp"
    udp_bitrate_bps: int = 1_000_000_000
    congestion: str | None = None
    port: int = 5201

    def __post_init__(self) -> None:
        if self.family not in (4, 6):
            raise ConfigError("family", f"{self.family!r} is not an IP family; use 4 or 6")
        if not _is_int(self.streams) or not 1 <= self.streams <= 128:
            raise ConfigError("streams", f"{self.streams!r} is out of range; use 1 to 128 parallel streams")
        if self.direction not in DIRECTIONS:
            raise ConfigError("direction", f"{self.direction!r} is not one of {', '.join(DIRECTIONS)}")
        if not _is_int(self.duration_s) or not 1 <= self.duration_s <= 86400:
            raise ConfigError("duration", f"{self.duration_s!r} is out of range; use whole seconds, 1 or more")
        if not _is_int(self.omit_s) or not 0 <= self.omit_s <= 600:
            raise ConfigError("omit", f"{self.omit_s!r} is out of range; use whole seconds from 0 to 600")
        if self.protocol not in PROTOCOLS:
            raise ConfigError("protocol", f"{self.protocol!r} is not one of {', '.join(PROTOCOLS)}")
        if self.udp_bitrate_bps <= 0:
            raise ConfigError("udp-bitrate", "must be a positive bit rate")
        if self.congestion is not None and not re.fullmatch(r"[a-z0-9_]{1,16}", self.congestion):
            raise ConfigError("congestion", f"{self.congestion!r} is not a congestion control name")


@dataclass(frozen=True)
class Trial:
    """One measured (or failed) iperf3 run, parsed from its -J output."""

    status: str  # "ok" or "failed"
    params: TrialParams
    argv: tuple[str, ...]
    throughput_bps: float | None = None  # receiver side: what crossed the DUT
    sender_bps: float | None = None
    reverse_throughput_bps: float | None = None  # only for bidir: server -> client receiver side
    retransmits: int | None = None
    cpu_local_pct: float | None = None
    cpu_remote_pct: float | None = None
    lost_percent: float | None = None  # UDP only
    jitter_ms: float | None = None  # UDP only
    congestion: str | None = None
    iperf3_version: str | None = None
    timestamp: float | None = None
    error: str | None = None
    dut_counters: dict[str, int] = field(default_factory=dict)
    raw: str = ""

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    def to_dict(self, include_raw: bool = False) -> dict[str, Any]:
        out = {
            "status": self.status,
            "error": self.error,
            "family": self.params.family,
            "streams": self.params.streams,
            "direction": self.params.direction,
            "protocol": self.params.protocol,
            "duration_s": self.params.duration_s,
            "omit_s": self.params.omit_s,
            "throughput_bps": self.throughput_bps,
            "sender_bps": self.sender_bps,
            "reverse_throughput_bps": self.reverse_throughput_bps,
            "retransmits": self.retransmits,
            "cpu_local_pct": self.cpu_local_pct,
            "cpu_remote_pct": self.cpu_remote_pct,
            "lost_percent": self.lost_percent,
            "jitter_ms": self.jitter_ms,
            "congestion": self.congestion,
            "iperf3_version": self.iperf3_version,
            "timestamp": self.timestamp,
            "argv": list(self.argv),
            "dut_counters": dict(self.dut_counters),
        }
        if include_raw:
            out["raw"] = self.raw
        return out
