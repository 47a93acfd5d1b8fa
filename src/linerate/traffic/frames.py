"""Frame sizes of packet-rate tests: one fixed size (an int: bytes from MAC header to FCS, as RFC 2544
counts them) or a named mix of sizes.

"imix" is FD.io CSIT's IMIX (CSIT report, methodology "Data Plane Throughput"): IPv4 28 x 64 B,
16 x 570 B, 4 x 1518 B; IPv6 the same with 78-byte small frames — a 7:4:1 cycle of 12 frames.
trafgen sends the packets of its configuration round-robin (trafgen(8), `--rand`), so a config
holding the 12-frame cycle offers the mix exactly, and `--num` / `--rate` count frames of any size.
A mix's theoretical frame rate is the link over its mean wire size, link / (8 x (mean + 20)): the
cycle's wire time divided by its frames.
"""

from __future__ import annotations

from typing import Union

FrameSize = Union[int, str]  # 64, 1518 ... or the name of a mix ("imix")

MIXES: dict[str, dict[int, tuple[tuple[int, int], ...]]] = {
    "imix": {4: ((64, 7), (570, 4), (1518, 1)), 6: ((78, 7), (570, 4), (1518, 1))},
}


def is_mix(frame: FrameSize) -> bool:
    return isinstance(frame, str) and frame in MIXES


def composition(frame: FrameSize, family: int) -> tuple[tuple[int, int], ...]:
    """(size, weight) pairs: ((64, 1),) for a fixed size."""
    return MIXES[frame][family] if is_mix(frame) else ((int(frame), 1),)


def cycle(frame: FrameSize, family: int) -> list[int]:
    """One cycle of the mix in sending order, each size spread evenly through it (7:4:1 ->
    64 570 64 64 570 1518 64 ...) rather than in bursts of one size."""
    slots = [((index + 0.5) / weight, size) for size, weight in composition(frame, family) for index in range(weight)]
    return [size for _, size in sorted(slots)]


def mean_bytes(frame: FrameSize, family: int) -> float:
    sizes = composition(frame, family)
    return sum(size * weight for size, weight in sizes) / sum(weight for _, weight in sizes)


def largest(frame: FrameSize, family: int) -> int:
    return max(size for size, _ in composition(frame, family))


def name(frame: FrameSize) -> str:
    """In a column of frame sizes: "64", "IMIX"."""
    return frame.upper() if is_mix(frame) else str(frame)


def label(frame: FrameSize) -> str:
    """In running text: "64 B", "IMIX"."""
    return name(frame) if is_mix(frame) else f"{frame} B"


def describe(frame: FrameSize, family: int) -> str:
    """"IMIX = 7 x 64 + 4 x 570 + 1 x 1518 B (mean 353.8 B)"; a fixed size is its label."""
    if not is_mix(frame):
        return label(frame)
    parts = " + ".join(f"{weight} x {size}" for size, weight in composition(frame, family))
    return f"{label(frame)} = {parts} B (mean {mean_bytes(frame, family):.1f} B)"


def sort_key(frame: FrameSize, family: int) -> tuple[float, str]:
    return (mean_bytes(frame, family), str(frame))
