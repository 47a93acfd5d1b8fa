"""A Verdict (code, kind, title, evidence, advice) and the thresholds that several rule modules
share: rules.py (throughput) and state_rules.py (the firewall's state table) both build on it,
so neither imports the other's module for it."""

from __future__ import annotations

from dataclasses import asdict, dataclass

SATURATED_PCT = 90.0  # a CPU (or one thread) this busy has nothing left (top's all-CPUs line: every CPU)
NEGLIGIBLE_DROP_SHARE = 1e-4  # NIC drops under 1 in 10,000 of its packets: a note, not a limit
SINCE_BOOT = "since boot (one snapshot of cumulative counters)"


@dataclass(frozen=True)
class Verdict:
    code: str
    kind: str  # "ok" (nothing to tune) | "limit" (what held it back) | "note" (read the figures with this)
    title: str
    evidence: str
    advice: str

    def to_dict(self) -> dict:
        return asdict(self)
