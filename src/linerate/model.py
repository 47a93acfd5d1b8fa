"""Frozen value types shared across linerate. Units live in field names (throughput_bps, duration_s).

Validation of user-facing values happens here, in one place, so the CLI, experiment files and
tests all reject the same bad input with the same message (errors name the field).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, fields
from typing import Any

from linerate.errors import ConfigError

DIRECTIONS: tuple[str, ...] = ("forward", "reverse", "bidir")
PROTOCOLS: tuple[str, ...] = ("tcp", "udp")
MAX_RULES = 32768  # rules:N draws non-matching sources from 198.18.128.0/17 (see topology.firewall)
LAB_NAME_RE = re.compile(r"^[a-z0-9]{1,8}$")
MIN_BITRATE_BPS, MAX_BITRATE_BPS = 1_000, 400_000_000_000


@dataclass(frozen=True)
class FirewallProfile:
    """A DUT ruleset. kind: none | stateful | nat | rules (stateful, n_rules) | rules-stateless
    (n_rules, every packet walks them: pf `no state`). See topology/firewall.py."""

    kind: str
    n_rules: int = 0

    @classmethod
    def parse(cls, text: str, field_name: str = "firewall") -> "FirewallProfile":
        value = str(text).strip()
        if value in ("none", "stateful", "nat"):
            return cls(value)
        for kind in RULE_PROFILES:
            if value.startswith(kind + ":"):
                count = value.split(":", 1)[1]
                if not re.fullmatch(r"[0-9]{1,5}", count) or not 1 <= int(count) <= MAX_RULES:
                    raise ConfigError(
                        field_name,
                        f"'{value}' is not valid: {kind}:N needs a whole number N from 1 to {MAX_RULES}",
                    )
                return cls(kind, int(count))
        raise ConfigError(
            field_name, f"'{value}' is not a profile; use none, stateful, nat, rules:N or rules-stateless:N "
            "(e.g. rules:100)"
        )

    def __str__(self) -> str:
        return f"{self.kind}:{self.n_rules}" if self.kind in RULE_PROFILES else self.kind


RULE_PROFILES = ("rules", "rules-stateless")


def validate_lab_name(name: object, field_name: str = "name") -> str:
    if not isinstance(name, str) or not LAB_NAME_RE.fullmatch(name):
        shown = repr(name)[:40]
        raise ConfigError(field_name, f"{shown} is not a lab name; use 1-8 lower-case letters or digits")
    return name


MAX_PAIRS = 16  # client/server pairs of a lab's generator pool (topology/pool.py)
# A required feature (TestKind.required_features) of a kind that drives one client/server pair on real hosts:
# an inventory with a generator pool refuses it before anything runs (testbed/ssh.py SshTestbeds.check)
ONE_PAIR = "one client/server pair on real hosts"
SWITCH_ROLES = ("lansw", "wansw")  # a pooled lab's two switches: clients -> DUT lan0, DUT wan0 -> servers


def pair_roles(index: int) -> tuple[str, str]:
    """(client role, server role) of pair `index` (0-based): pair 0 keeps the one-pair lab's names."""
    return ("client", "server") if index == 0 else (f"client{index + 1}", f"server{index + 1}")


LAB_ROLES = ("client", "dut", "server", *SWITCH_ROLES,
             *(role for index in range(1, MAX_PAIRS) for role in pair_roles(index)))


def lab_namespace(lab_id: str, role: str) -> str:
    """The only namespace names a lab owns: lr-<id>-<role>, role one of LAB_ROLES (client, dut, server;
    a generator pool's client2.. server2.. and its two switches)."""
    return f"lr-{lab_id}-{role}"


def probe_namespace(probe_id: str) -> str:
    """preflight's scratch namespace, registered like a lab."""
    return f"lr-probe-{probe_id}"


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
    latency: bool = False  # RTT probes idle and under this trial's load (traffic/latency.py)

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
        if not _is_int(self.udp_bitrate_bps) or not MIN_BITRATE_BPS <= self.udp_bitrate_bps <= MAX_BITRATE_BPS:
            raise ConfigError("bitrate", f"{self.udp_bitrate_bps!r} is out of range; use a whole number of "
                              f"bit/s from {MIN_BITRATE_BPS:,} to {MAX_BITRATE_BPS:,}")
        if not _is_int(self.port) or not 1 <= self.port <= 65535:
            raise ConfigError("port", f"{self.port!r} is not a TCP/UDP port; use 1 to 65535")
        if not isinstance(self.latency, bool):
            raise ConfigError("latency", f"{self.latency!r} is not true or false")
        if self.congestion is not None and not re.fullmatch(r"[a-z0-9_]{1,16}", self.congestion):
            raise ConfigError("congestion", f"{self.congestion!r} is not a congestion control name")


def measure(sql_type: str, doc: str) -> Any:
    """A measured figure of a trial: a dataclass field that is also a column of the trials table.
    The store's schema, its insert and the exports are all derived from these fields."""
    return field(default=None, metadata={"column": sql_type, "doc": doc})


@dataclass(frozen=True)
class Trial:
    """One measured (or failed) traffic run. The `measure` fields are the single definition of a
    trial record: store/schema.py adds their columns, store/db.py inserts them, reports read them."""

    status: str  # "ok" or "failed"
    params: TrialParams
    argv: tuple[str, ...]
    throughput_bps: float | None = measure("REAL", "receiver side: what crossed the DUT")
    sender_bps: float | None = measure("REAL", "sender side")
    reverse_throughput_bps: float | None = measure("REAL", "bidir only: server -> client, receiver side")
    retransmits: int | None = measure("INTEGER", "TCP retransmits, all streams")
    cpu_local_pct: float | None = measure("REAL", "client host CPU during the trial")
    cpu_remote_pct: float | None = measure("REAL", "server host CPU during the trial")
    packets_sent: int | None = measure("INTEGER", "UDP: datagrams the sender sent in the measured window")
    packets_lost: int | None = measure("INTEGER", "UDP: sent minus received datagrams, never negative")
    lost_percent: float | None = measure("REAL", "UDP: 100 * packets_lost / packets_sent, 0..100")
    jitter_ms: float | None = measure("REAL", "UDP: receiver-side jitter")
    congestion: str | None = measure("TEXT", "TCP congestion control the sender used")
    generator: str | None = measure("TEXT", "traffic generator that measured it (iperf3 ...)")
    generator_version: str | None = measure("TEXT", "traffic generator version")
    rtt_idle_sent: int | None = measure("INTEGER", "latency: RTT probes sent before the load")
    rtt_idle_lost: int | None = measure("INTEGER", "latency: idle probes without a reply")
    rtt_idle_p50_ms: float | None = measure("REAL", "latency: idle RTT median")
    rtt_idle_p90_ms: float | None = measure("REAL", "latency: idle RTT 90th percentile")
    rtt_idle_p99_ms: float | None = measure("REAL", "latency: idle RTT 99th percentile")
    rtt_idle_max_ms: float | None = measure("REAL", "latency: idle RTT maximum")
    rtt_loaded_sent: int | None = measure("INTEGER", "latency: RTT probes sent in the measured window")
    rtt_loaded_lost: int | None = measure("INTEGER", "latency: probes under load without a reply")
    rtt_loaded_p50_ms: float | None = measure("REAL", "latency: RTT median under load")
    rtt_loaded_p90_ms: float | None = measure("REAL", "latency: RTT 90th percentile under load")
    rtt_loaded_p99_ms: float | None = measure("REAL", "latency: RTT 99th percentile under load")
    rtt_loaded_max_ms: float | None = measure("REAL", "latency: RTT maximum under load")
    timestamp: float | None = None
    error: str | None = None
    dut_counters: dict[str, int] = field(default_factory=dict)
    telemetry: dict[str, Any] = field(default_factory=dict)  # per host: CPU split, interrupts, window
    telemetry_raw: dict[str, dict[str, str]] = field(default_factory=dict)  # host -> before/after snapshot text
    raw: str = ""

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    def to_dict(self, include_raw: bool = False) -> dict[str, Any]:
        out: dict[str, Any] = {"status": self.status, "error": self.error}
        out.update(family=self.params.family, streams=self.params.streams, direction=self.params.direction,
                   protocol=self.params.protocol, duration_s=self.params.duration_s, omit_s=self.params.omit_s,
                   latency=self.params.latency)
        if self.params.protocol == "udp":
            out["udp_bitrate_bps"] = self.params.udp_bitrate_bps
        out.update({name: getattr(self, name) for name in TRIAL_COLUMNS})
        out.update(timestamp=self.timestamp, argv=list(self.argv), dut_counters=dict(self.dut_counters),
                   telemetry=self.telemetry)
        if include_raw:
            out["raw"] = self.raw
        return out


TRIAL_COLUMNS: tuple[str, ...] = tuple(f.name for f in fields(Trial) if "column" in f.metadata)
TRIAL_COLUMN_TYPES: dict[str, str] = {f.name: f.metadata["column"] for f in fields(Trial) if "column" in f.metadata}
