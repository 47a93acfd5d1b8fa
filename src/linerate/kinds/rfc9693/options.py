"""The keys of an rfc9693 file (test = "rfc9693"), checked before anything runs:

    test = "rfc9693"
    repetitions = 1            # independent runs (rate search + capacity search) per combination
    connections = 1000         # C of the establishment-rate search: connections per trial
    max_connections = 64512    # the capacity search never tries more (the generator's 4-tuples: 64,512)
    start_connections = 1000   # the capacity search's first size, doubled while it holds
    frame_bytes = 64           # phase 1 and phase 2 frames (IPv6: at least 66)
    gamma = 0.4                # capacity trials open their connections at gamma x the establishment rate
    capacity_precision = 0.01  # bisection stops when the bounds are within 1%
    relative_width = 0.01      # the rate search stops when its bounds are within 1%
    max_rate = 1000000         # connections/s the rate search never exceeds (also: the generator's ceiling)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from linerate.kinds.base import option_number
from linerate.traffic import trafgen, tuples

OPTION_KEYS = ("connections", "max_connections", "start_connections", "frame_bytes", "gamma", "capacity_precision",
               "relative_width", "max_rate")
# siitperf (https://github.com/lencsegabor/siitperf, scripts/cttc.sh), the RFC 9693 authors' tester: the
# capacity search accepts a size C while the rate found for C stays at gamma x the rate of the last
# size that held (gamma = 0.4)
GAMMA = 0.4


@dataclass(frozen=True)
class Rfc9693Options:
    connections: int = 1000
    max_connections: int = tuples.TUPLE_SPACE
    start_connections: int = 1000
    frame_bytes: int | None = None  # None: the family's smallest (64 IPv4, 66 IPv6)
    gamma: float = GAMMA
    capacity_precision: float = 0.01
    relative_width: float = 0.01
    max_rate: float = 1_000_000.0

    def frame_for(self, family: int) -> int:
        return self.frame_bytes or trafgen.min_frame(family)

    def goals(self) -> list[dict[str, Any]]:
        """What a search is asked, as stored with it."""
        return [{"name": "rate", "connections": self.connections, "relative_width": self.relative_width,
                 "max_rate": self.max_rate},
                {"name": "capacity", "start_connections": self.start_connections,
                 "max_connections": self.max_connections, "gamma": self.gamma, "precision": self.capacity_precision}]


def parse_options(options: dict[str, Any]) -> Rfc9693Options:
    """ValueError naming the key and what is allowed."""
    most = tuples.TUPLE_SPACE
    frame = options.get("frame_bytes")
    if frame is not None:
        frame = option_number(options, "frame_bytes", 64, trafgen.min_frame(4), 1518, whole=True)
    parsed = Rfc9693Options(
        connections=option_number(options, "connections", 1000, 1, most, whole=True),
        max_connections=option_number(options, "max_connections", most, 2, most, whole=True),
        start_connections=option_number(options, "start_connections", 1000, 1, most, whole=True),
        frame_bytes=frame,
        gamma=option_number(options, "gamma", GAMMA, 0, 1, low_open=True),
        capacity_precision=option_number(options, "capacity_precision", 0.01, 0, 0.5, low_open=True),
        relative_width=option_number(options, "relative_width", 0.01, 0, 0.5, low_open=True),
        max_rate=option_number(options, "max_rate", 1_000_000, 1, 100_000_000))
    if parsed.start_connections > parsed.max_connections:
        raise ValueError(f"start_connections = {parsed.start_connections} is above max_connections = "
                         f"{parsed.max_connections}")
    return parsed
