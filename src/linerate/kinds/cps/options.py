"""The keys of a cps file (test = "cps"), checked before anything runs:

    test = "cps"
    repetitions = 3            # independent searches per object size: mean and 95% CI over them
    duration_s = 5             # one trial: rate x duration_s connections
    object_sizes = ["1k", "16k", "64k"]   # RFC 9411 section 7.2's 1, 16, 64 KB (bytes or "Nk")
    start_rate = 100           # connections/s of the first trial
    max_rate = 100000          # the search never offers more
    loss_target = 0.00001      # a trial passes below 0.001% failed connections (RFC 9411's criterion)
    relative_width = 0.005     # the search stops when its bounds are within 0.5% (as rfc2544's)
    http_port = 8080           # nginx's port: the DUT's ruleset must pass it
    threads = 1                # h2load -t
    timeout_s = 5              # h2load -N: a connection silent this long has failed
    closer = "client"          # who closes first: "client" (RFC 9411) or "server" (nginx, keepalive 0)
    server_workers = 1         # nginx worker_processes
    latency_load = 0.5         # after each search, a trial at this share of the rate found, with a packet
                               # capture on the client: connect/TTFB percentiles (RFC 9411 7.4); 0: none
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from linerate.errors import ConfigError
from linerate.kinds.base import option_number
from linerate.traffic import nginx

OPTION_KEYS = ("object_sizes", "start_rate", "max_rate", "loss_target", "relative_width", "http_port", "threads",
               "timeout_s", "closer", "server_workers", "latency_load")
# RFC 9411 'Benchmarking Methodology for Network Security Device Performance'
# (https://www.rfc-editor.org/rfc/rfc9411), its test cases' validation criteria: "Number of failed application
# transactions (receiving any HTTP response code other than 200 OK) MUST be less than 0.001% (1 out of 100,000
# transactions) of total attempted transactions" — read in draft-ietf-bmwg-ngfw-performance (section 7.1.3.4),
# from which the RFC was published; the RFC's own section numbers were not checked here
LOSS_TARGET = 1e-5
RELATIVE_WIDTH = 0.005
MAX_RATE = 10_000_000
CLOSERS = ("client", "server")
# RFC 9411 section 7.4 (HTTP transaction latency), scenario 1: one transaction per connection at 50% of the
# maximum connections per second found by 7.2 (the figure as read in ../shared/research/firewall-load.md)
LATENCY_LOAD = 0.5


@dataclass(frozen=True)
class CpsOptions:
    object_sizes: tuple[int, ...] = nginx.DEFAULT_OBJECT_BYTES
    start_rate: float = 100.0
    max_rate: float = 100_000.0
    loss_target: float = LOSS_TARGET
    relative_width: float = RELATIVE_WIDTH
    http_port: int = nginx.DEFAULT_PORT
    threads: int = 1
    timeout_s: float = 5.0
    closer: str = "client"
    server_workers: int = 1
    latency_load: float = LATENCY_LOAD

    def goals(self, duration_s: float) -> list[dict[str, Any]]:
        """What a search is asked, as stored with it."""
        return [{"name": "CPS", "loss_ratio": self.loss_target, "relative_width": self.relative_width,
                 "start_rate": self.start_rate, "max_rate": self.max_rate, "trial_duration_s": duration_s,
                 "closer": self.closer, "threads": self.threads, "timeout_s": self.timeout_s}]


def object_bytes(value: Any) -> int:
    """1024, "1k", "16K", "64KB", "1500b", "1500": bytes (k = 1024, RFC 9411's KB)."""
    if isinstance(value, int) and not isinstance(value, bool):
        return nginx.check_object_bytes(value)
    match = re.fullmatch(r"\s*([0-9]{1,8})\s*(k|kb|kib|b)?\s*", str(value), re.I) if isinstance(value, str) else None
    if not match:
        raise ValueError(f"object_sizes: {str(value)[:30]!r} is not a size; use bytes (16384) or \"16k\"")
    size = int(match.group(1)) * (1024 if (match.group(2) or "b").lower().startswith("k") else 1)
    try:
        return nginx.check_object_bytes(size)
    except ConfigError as exc:
        raise ValueError(f"object_sizes: {exc.problem}") from None


def parse_options(options: dict[str, Any]) -> CpsOptions:
    """ValueError naming the key and what is allowed."""
    sizes = options.get("object_sizes", list(nginx.DEFAULT_OBJECT_BYTES))
    if not isinstance(sizes, list) or not sizes or len(sizes) > 16:
        raise ValueError("object_sizes: give a list of 1 to 16 sizes, e.g. [\"1k\", \"16k\", \"64k\"]")
    parsed = tuple(object_bytes(size) for size in sizes)
    if len(set(parsed)) != len(parsed):
        raise ValueError("object_sizes lists a size twice")
    max_rate = option_number(options, "max_rate", 100_000, 1, MAX_RATE)
    start_rate = option_number(options, "start_rate", min(100.0, max_rate), 1, MAX_RATE)
    if start_rate > max_rate:
        raise ValueError(f"start_rate = {start_rate:g} is above max_rate = {max_rate:g}")
    closer = options.get("closer", "client")
    if closer not in CLOSERS:
        raise ValueError(f"closer = {str(closer)[:20]!r}: use \"client\" (RFC 9411: the client closes with FIN) or "
                         "\"server\" (nginx closes first; TIME_WAIT stays on the server)")
    return CpsOptions(
        object_sizes=parsed, start_rate=start_rate, max_rate=max_rate,
        loss_target=option_number(options, "loss_target", LOSS_TARGET, 0, 0.5),
        relative_width=option_number(options, "relative_width", RELATIVE_WIDTH, 0, 0.5, low_open=True),
        http_port=option_number(options, "http_port", nginx.DEFAULT_PORT, 1, 65535, whole=True),
        threads=option_number(options, "threads", 1, 1, 64, whole=True),
        timeout_s=option_number(options, "timeout_s", 5, 0.1, 600),
        closer=closer,
        server_workers=option_number(options, "server_workers", 1, 1, 256, whole=True),
        latency_load=option_number(options, "latency_load", LATENCY_LOAD, 0, 1))
