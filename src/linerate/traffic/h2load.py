"""h2load (nghttp2, Debian/Ubuntu `nghttp2-client`): the client side of the `cps` test — TCP
connections opened at a fixed, open-loop rate, one HTTP/1.1 request each (RFC 9411 section 7.2).

The command (h2load(1), https://nghttp2.org/documentation/h2load.1.html; doc/h2load.1.rst in
github.com/nghttp2/nghttp2):

- `--h1`: HTTP/1.1 over cleartext ("short hand for --alpn-list=http/1.1 --no-tls-proto=http/1.1").
- `-c N -n N -m 1`: N clients, N requests in all, one in flight per client. h2load gives every
  client n / c requests, and a client that has made its last request closes its connection
  (src/h2load.cc: `terminate_session()` once `req_left == 0`), so each connection carries exactly
  one request and the *client* closes first, as RFC 9411 asks.
- `-r K --rate-period P`: "the fixed rate at which connections are created ... the number of
  connections to be made per rate period. The maximum number of connections to be made is given
  in -c". With -r, h2load starts K new clients every P whatever the earlier ones are doing: the
  offered rate is K / P, open loop. `-r` and `-D` are mutually exclusive, so a trial's length is
  set by N: N / (K / P) seconds. h2load refuses K greater than N or smaller than -t.
- `-N T`: a connection with no activity for T is given up (a timeout, counted as errored). The
  timer also runs while connecting, so a SYN the DUT never answers ends the trial in T rather
  than after the kernel's ~2 minutes of SYN retries.
- `--log-file PATH`: "per-request information ... as tab-separated columns: start time as
  microseconds since epoch; HTTP status code; microseconds until end of response. More columns
  may be added later ... Status code is -1 for failed streams." parse_log() reads it; request-time
  percentiles come from it (h2load 1.52, Debian 12's, prints min/max/mean/sd only).

Each period's K connections are created at once (src/h2load.cc rate_period_timeout_w_cb), so the
period is kept short (pacing(): 100 ms from 100 connections/s up) to keep the bursts small.

The summary (parse()) has changed over the years (release tags of github.com/nghttp2/nghttp2):

- before v1.3 (2015): the requests line has no "timeout" count yet;
- v1.3, v1.4: "traffic: N bytes total, N bytes headers, N bytes data", rows "time for request",
  "time for connect" and (from v0.7.14) "time to 1st byte" with min max mean sd +/- sd;
- v1.5, v1.6: "(space savings x%)" after the header bytes; from v1.6 a "req/s" row (development
  builds of December 2015 named it "req/s (client)");
- v1.7 to v1.68: "traffic: 3.17MB (3326600) total, ..." (Debian 12 ships 1.52);
- v1.69 (2026): rows "request", "connect", "TTFB", "req/s" with median, p95 and p99 columns.

tests/data/h2load/ holds real captures of all but the first and the last, which the tests build
from the format strings of src/h2load.cc (v1.0.0 and v1.69.0).

A connection that cannot even be started — socket() or connect() failing at once, as connect()
does with EADDRNOTAVAIL when the client has no free local port — makes h2load print "client could
not connect to host" on stderr, one line per connection (src/h2load.cc, v1.52.0), and count its
request failed and errored. Those lines are counted: they are the client's failures, not the DUT's.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from linerate import stats
from linerate.errors import ConfigError, ParseError

H2LOAD = "h2load"
CONNECT_FAILED = "client could not connect to host"
MAX_CONNECTIONS = 10_000_000
PERIOD_MS = 100  # rate period from 100 connections/s up: bursts of rate/10, steps of 10/s (<= 10%)
SLOW_PERIOD_MS = 1000  # below 100 connections/s: whole connections per second, steps of 1/s
SLOW_BELOW = 100


@dataclass(frozen=True)
class Pacing:
    """h2load's open-loop rate: `per_period` new connections every `period_ms` (-r, --rate-period)."""

    per_period: int
    period_ms: int

    @property
    def rate_per_s(self) -> float:
        return self.per_period * 1000 / self.period_ms

    @property
    def granularity_per_s(self) -> float:
        """The step between two rates this period can offer."""
        return 1000 / self.period_ms


def pacing(rate_per_s: float) -> Pacing:
    """The pacing closest to rate_per_s that h2load can offer (a whole number per period)."""
    if not isinstance(rate_per_s, (int, float)) or isinstance(rate_per_s, bool) or not math.isfinite(rate_per_s) \
            or rate_per_s < 1:
        raise ConfigError("rate", f"{rate_per_s!r} is not a connection rate; use 1 connection/s or more")
    period = PERIOD_MS if rate_per_s >= SLOW_BELOW else SLOW_PERIOD_MS
    return Pacing(max(1, round(rate_per_s * period / 1000)), period)


def url(address: str, port: int, path: str) -> str:
    """http://ADDRESS:PORT/PATH, an IPv6 address in brackets."""
    if not re.fullmatch(r"[0-9A-Fa-f:.]+", address or ""):
        raise ConfigError("address", f"{str(address)[:60]!r} is not an IP address")
    host = f"[{address}]" if ":" in address else address
    return f"http://{host}:{int(port)}/{path.lstrip('/')}"


def _duration(seconds: float) -> str:
    """h2load's <DURATION>: an integer and a unit (ms here)."""
    return f"{max(1, round(seconds * 1000))}ms"


def client_argv(urls: Sequence[str], *, connections: int, pace: Pacing, threads: int = 1,
                inactivity_timeout_s: float | None = 5.0, log_file: str | None = None) -> list[str]:
    """h2load opening `connections` connections at pace.rate_per_s, one HTTP/1.1 request each."""
    if isinstance(connections, bool) or not isinstance(connections, int) or not 1 <= connections <= MAX_CONNECTIONS:
        raise ConfigError("connections", f"{connections!r}: use 1 to {MAX_CONNECTIONS:,} connections per trial")
    if isinstance(threads, bool) or not isinstance(threads, int) or not 1 <= threads <= 256:
        raise ConfigError("threads", f"{threads!r}: use 1 to 256 h2load threads")
    if not urls:
        raise ConfigError("urls", "give at least one URL")
    # h2load refuses "-r" above "-c" and below "-t" (src/h2load.cc option checks)
    per_period = min(pace.per_period, connections)
    if per_period < threads or connections < threads:
        raise ConfigError("threads", f"{threads} h2load threads need at least {threads} connections per period "
                          f"(this trial opens {per_period}); use fewer threads or a higher rate")
    argv = [H2LOAD, "--h1", "-n", str(connections), "-c", str(connections), "-m", "1", "-t", str(threads),
            "-r", str(per_period), "--rate-period", f"{pace.period_ms}ms"]
    if inactivity_timeout_s:
        argv += ["-N", _duration(inactivity_timeout_s)]
    if log_file:
        argv += ["--log-file", log_file]
    return argv + list(urls)


def version_argv() -> list[str]:
    return [H2LOAD, "--version"]  # "h2load nghttp2/1.52.0"


def parse_version(text: str) -> str | None:
    match = re.search(r"nghttp2/(\d+(?:\.\d+)+)", text)
    return match.group(1) if match else None


# --- the summary --------------------------------------------------------------------------------

@dataclass(frozen=True)
class Stat:
    """One row of h2load's statistics table, durations in seconds (req/s rows: requests/s).
    median/p95/p99 only from h2load 1.69 on (None before)."""

    min: float
    max: float
    mean: float
    sd: float
    within_sd_pct: float
    median: float | None = None
    p95: float | None = None
    p99: float | None = None


@dataclass(frozen=True)
class H2loadResult:
    duration_s: float  # "finished in": first connection to last response
    requests_per_s: float
    total: int  # requests h2load was told to make (= connections here)
    started: int
    done: int
    succeeded: int  # 2xx or 3xx
    failed: int  # errored + non-2xx/3xx
    errored: int  # network-level failures (refused, reset, timed out)
    timeout: int | None  # a subset of errored; None: an h2load from before it counted them (2015)
    status: dict[str, int]  # "2xx" ... "5xx"
    traffic_bytes: int
    header_bytes: int
    data_bytes: int
    protocol: str | None  # "http/1.1", "h2c", ... (None: no connection was made)
    stats: dict[str, Stat] = field(default_factory=dict)  # request, connect, ttfb (seconds); req_per_s
    connect_failures: int = 0  # "client could not connect to host" lines on stderr

    @property
    def not_succeeded(self) -> int:
        """Requests that did not end with a 2xx/3xx: failed ones and any never done."""
        return max(0, self.total - self.succeeded)

    def timing(self, name: str) -> Stat | None:
        """A duration row, None when no request succeeded (h2load prints zeros then)."""
        return self.stats.get(name) if self.succeeded else None


_UNITS = {"us": 1e-6, "ms": 1e-3, "s": 1.0}
_VALUE = re.compile(r"^(-?[0-9]+(?:\.[0-9]+)?)(us|ms|s)?%?$")
ROWS = {"time for request": "request", "request": "request", "time for connect": "connect", "connect": "connect",
        "time to 1st byte": "ttfb", "TTFB": "ttfb", "req/s": "req_per_s", "req/s (client)": "req_per_s"}


def _number(token: str, what: str) -> tuple[float, str | None]:
    match = _VALUE.match(token)
    if not match:
        raise ParseError(f"h2load {what}: {token[:30]!r} is not a number")
    return float(match.group(1)), match.group(2)


def _row(label: str, tokens: list[str], columns: list[str]) -> Stat:
    if len(tokens) != len(columns):
        raise ParseError(f"h2load row {label!r} has {len(tokens)} values for {len(columns)} columns")
    values = {}
    for column, token in zip(columns, tokens):
        number, unit = _number(token, f"row {label!r}")
        values[column] = number * _UNITS[unit] if unit else number
    return Stat(values["min"], values["max"], values["mean"], values["sd"], values["+/- sd"],
                values.get("median"), values.get("p95"), values.get("p99"))


def _columns(line: str) -> list[str]:
    """The statistics header: 'min max mean sd +/- sd' (to v1.68) or with median p95 p99 (v1.69)."""
    return ["+/- sd" if word == "+/-sd" else word for word in line.replace("+/- sd", "+/-sd").split()]


def _int(match: re.Match, group: int) -> int:
    return int(match.group(group))


def parse(text: str, stderr: str = "") -> H2loadResult:
    """h2load's text summary (stdout), and its stderr for connections it could not even start.
    ParseError when there is no summary (h2load refused its options or could not start)."""
    finished = re.search(r"^finished in ([0-9.]+)(us|ms|s), ([0-9.]+) req/s", text, re.M)
    requests = re.search(r"^requests: (\d+) total, (\d+) started, (\d+) done, (\d+) succeeded, (\d+) failed, "
                         r"(\d+) errored(?:, (\d+) timeout)?", text, re.M)
    if not finished or not requests:
        last = next((line.strip() for line in reversed((stderr or text).splitlines()) if line.strip()), "no output")
        raise ParseError(f"h2load printed no summary (last line: {last[:160]!r})")
    status = re.search(r"^status codes: (\d+) 2xx, (\d+) 3xx, (\d+) 4xx, (\d+) 5xx", text, re.M)
    traffic = (re.search(r"^traffic: \S+ \((\d+)\) total, \S+ \((\d+)\) headers(?: \(space savings [-0-9.]+%\))?, "
                         r"\S+ \((\d+)\) data", text, re.M)
               or re.search(r"^traffic: (\d+) bytes total, (\d+) bytes headers(?: \(space savings [-0-9.]+%\))?, "
                            r"(\d+) bytes data", text, re.M))
    protocol = re.search(r"^Application protocol: (\S+)", text, re.M)
    stats: dict[str, Stat] = {}
    columns: list[str] | None = None
    for line in text.splitlines():
        if re.match(r"^\s+min\s+max\s", line) and line.rstrip().endswith("+/- sd"):
            columns = _columns(line)
            continue
        if columns is None or ":" not in line:
            continue
        label, _, rest = line.partition(":")
        name = ROWS.get(label.strip())
        if name is not None and rest.strip():
            stats[name] = _row(label.strip(), rest.split(), columns)
    result = H2loadResult(
        duration_s=float(finished.group(1)) * _UNITS[finished.group(2)],
        requests_per_s=float(finished.group(3)),
        total=_int(requests, 1), started=_int(requests, 2), done=_int(requests, 3), succeeded=_int(requests, 4),
        failed=_int(requests, 5), errored=_int(requests, 6),
        timeout=None if requests.group(7) is None else _int(requests, 7),
        status={f"{n}xx": int(status.group(n - 1)) for n in (2, 3, 4, 5)} if status else {},
        traffic_bytes=_int(traffic, 1) if traffic else 0, header_bytes=_int(traffic, 2) if traffic else 0,
        data_bytes=_int(traffic, 3) if traffic else 0,
        protocol=protocol.group(1) if protocol else None, stats=stats,
        connect_failures=sum(1 for line in stderr.splitlines() if line.strip() == CONNECT_FAILED))
    if result.succeeded > result.total or result.failed > result.total or result.errored > result.failed:
        raise ParseError(f"h2load counts do not add up (total {result.total}, succeeded {result.succeeded}, "
                         f"failed {result.failed}, errored {result.errored}): not an h2load summary")
    return result


# --- the per-request log (--log-file) ------------------------------------------------------------

@dataclass(frozen=True)
class LogRecord:
    start_us: int  # request start, microseconds since the epoch
    status: int  # HTTP status; -1 for a failed stream
    elapsed_us: int  # request start to end of response


def parse_log(text: str) -> list[LogRecord]:
    """h2load --log-file: tab-separated start time (µs since epoch), status, µs to end of response;
    further columns (h2load may add some) are ignored."""
    records = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        fields = line.split("\t")
        if len(fields) < 3:
            raise ParseError(f"h2load log line {number} has {len(fields)} tab-separated columns, not 3: {line[:80]!r}")
        try:
            start, status, elapsed = (int(value) for value in fields[:3])
        except ValueError:
            raise ParseError(f"h2load log line {number} is not three whole numbers: {line[:80]!r}") from None
        if start < 0 or elapsed < 0 or status < -1 or status > 999:
            raise ParseError(f"h2load log line {number} is out of range: {line[:80]!r}")
        records.append(LogRecord(start, status, elapsed))
    return records


PERCENTILES = (50, 90, 99)


def request_percentiles(records: Sequence[LogRecord], percentiles: Sequence[float] = PERCENTILES) -> dict[str, float]:
    """Request time (s) at each percentile over the requests that succeeded (2xx/3xx), linear
    interpolation between closest ranks (numpy.percentile's default); {} with no such request."""
    return stats.percentiles([r.elapsed_us / 1e6 for r in records if 200 <= r.status < 400], percentiles)


