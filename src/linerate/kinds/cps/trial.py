"""One cps trial: `rate x duration_s` connections offered at `rate` by h2load on the client, one
HTTP/1.1 request each for one object from nginx on the server, through the DUT.

Around the h2load run, the client's port facts are read (kinds/cps/limits.py) — before it, after
waiting for earlier trials' TIME_WAIT sockets to expire when this trial's connections would not fit
— and after it; h2load's per-request log is read back for request-time percentiles and to tell
whether the responses fell behind the offered rate (search.served_late); nginx's error log for its
new lines. The verdict and the non-DUT limits come from those facts alone. A latency trial also
runs the client's packet capture around h2load (kinds/cps/capture.py).

What a trial stores (a row of search_trials, committed the moment it ends, plus its figures):
intended_load_fps is the offered rate in connections/s, intended_count the connections, sent the
connections the client really started (intended minus those it could not even start), forwarded
those that succeeded, unsent the client's own failures, dut_loss the rest of the failures, send_s
h2load's "finished in". The figures (connect, first byte, request, verdict, limits, port facts) go
with the search (kinds/cps/run.py says where).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from linerate.errors import LinerateError, ParseError
from linerate.exec import Executor
from linerate.exec.scratch import make_temp
from linerate.kinds.cps import capture as client_capture
from linerate.kinds.cps.limits import read_client_state, trial_limits, wait_for_ports
from linerate.kinds.cps.options import CpsOptions
from linerate.kinds.cps.search import served_late, verdict
from linerate.lab.signals import terminations_deferred
from linerate.traffic import h2load

FIGURES = "cps_trials"  # the table of a trial's own figures (store/schema.py): CpsTrial.figures()
RUN_MARGIN_S = 60  # beyond the trial's own length and its timeout, before h2load counts as hung
TIMINGS = ("connect", "ttfb", "request")


@dataclass(frozen=True)
class CpsTrial:
    rate: float  # offered, connections/s (what h2load's pacing gives)
    connections: int
    duration_s: float  # intended
    verdict: str
    succeeded: int
    failed: int  # not succeeded: failed, errored and never done
    client_failures: int  # connections the client could not even start
    errored: int = 0
    timeout: int | None = None
    h2load_s: float = 0.0
    timings: dict[str, dict[str, float | None]] = field(default_factory=dict)  # connect/ttfb/request, seconds
    request_percentiles: dict[str, float] = field(default_factory=dict)  # p50/p90/p99 from --log-file
    capture: dict[str, Any] = field(default_factory=dict)  # connect/ttfb percentiles (traffic/tcp_timings.py)
    late: str | None = None  # evidence that responses fell behind the offered rate (search.served_late)
    status: dict[str, int] = field(default_factory=dict)
    limits: tuple[dict, ...] = ()
    client_before: dict = field(default_factory=dict)
    client_after: dict = field(default_factory=dict)
    waited_s: float = 0.0  # for TIME_WAIT to drain before it
    argv: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    dut_counters: dict[str, int] = field(default_factory=dict)
    state_before: dict[str, int] = field(default_factory=dict)  # the DUT's state table (dut/state_parsers.py keys)
    state_after: dict[str, int] = field(default_factory=dict)
    state_timeouts: dict[str, int] = field(default_factory=dict)  # seconds, read once per testbed
    started_at: float | None = None
    ended_at: float | None = None

    def to_record(self) -> dict[str, Any]:
        """The search_trials row (store/db.py add_search_trial's columns)."""
        return {"intended_duration_s": self.duration_s, "intended_load_fps": self.rate,
                "intended_count": self.connections, "sent": self.connections - self.client_failures,
                "forwarded": self.succeeded, "dut_loss": max(0, self.failed - self.client_failures),
                "unsent": self.client_failures, "send_s": self.h2load_s, "dut_counters": self.dut_counters,
                "started_at": self.started_at, "ended_at": self.ended_at, "argv": list(self.argv)}

    def figures(self) -> dict[str, Any]:
        """What the row has no column for."""
        return {"verdict": self.verdict, "failed": self.failed, "errored": self.errored, "timeout": self.timeout,
                "timings": self.timings, "request_percentiles": self.request_percentiles, "capture": self.capture,
                "late": self.late, "status": self.status,
                "limits": list(self.limits), "client_before": self.client_before, "client_after": self.client_after,
                "waited_s": self.waited_s, "notes": list(self.notes), "state_before": self.state_before,
                "state_after": self.state_after, "state_timeouts": self.state_timeouts}

    @classmethod
    def from_stored(cls, row: Any, figures: dict[str, Any] | None) -> "CpsTrial":
        """A stored trial again (a resumed search replays it, the report reads it). Without its
        figures (a row written by a run killed in between), the verdict follows from the columns."""
        figures = figures or {}
        connections, unsent = int(row["intended_count"]), int(row["unsent"])
        failed = figures.get("failed", connections - int(row["forwarded"]))
        result = figures.get("verdict") or ("client" if unsent else ("pass" if failed == 0 else "dut"))
        return cls(rate=float(row["intended_load_fps"]), connections=connections,
                   duration_s=float(row["intended_duration_s"]), verdict=result, succeeded=int(row["forwarded"]),
                   failed=failed, client_failures=unsent, errored=figures.get("errored", 0),
                   timeout=figures.get("timeout"), h2load_s=float(row["send_s"]),
                   timings=figures.get("timings", {}), request_percentiles=figures.get("request_percentiles", {}),
                   capture=figures.get("capture", {}), late=figures.get("late"), status=figures.get("status", {}),
                   limits=tuple(figures.get("limits", ())),
                   client_before=figures.get("client_before", {}), client_after=figures.get("client_after", {}),
                   waited_s=figures.get("waited_s", 0.0), argv=tuple(_json_list(row["argv"])),
                   notes=tuple(figures.get("notes", ())), state_before=figures.get("state_before", {}),
                   state_after=figures.get("state_after", {}), state_timeouts=figures.get("state_timeouts", {}),
                   started_at=row["started_at"], ended_at=row["ended_at"])


def _json_list(text: Any) -> list:
    return json.loads(text) if isinstance(text, str) else list(text or ())


def _timings(result: h2load.H2loadResult) -> dict[str, dict[str, float | None]]:
    out = {}
    for name in TIMINGS:
        stat = result.timing(name)
        if stat is not None:
            out[name] = {"min": stat.min, "max": stat.max, "mean": stat.mean, "sd": stat.sd,
                         "median": stat.median, "p95": stat.p95, "p99": stat.p99}
    return out


class Server(Protocol):
    """What a trial needs of the HTTP server (traffic/nginx_server.py NginxServer)."""

    def url(self, object_bytes: int, family: int) -> str: ...

    def new_errors(self) -> list[str]: ...


def run_h2load(client: Executor, argv: list[str], timeout_s: float) -> h2load.H2loadResult:
    result = client.run(argv, timeout_s=timeout_s, check=False)
    if result.returncode == 127:
        raise LinerateError(f"h2load is not installed on {client.host}: apt-get install nghttp2-client")
    try:
        return h2load.parse(result.stdout, result.stderr)
    except ParseError as exc:
        raise LinerateError(f"h2load on {client.host} exited {result.returncode} without a result: {exc}") from None


def measure_trial(client: Executor, server: Server, url: str, rate: float, duration_s: float, options: CpsOptions,
                  *, read_dut: Callable[[], dict[str, int]] = dict, read_state: Callable[[], dict[str, int]] = dict,
                  state_timeouts: dict[str, int] | None = None, settle: Callable[[int], str | None] = lambda n: None,
                  sleep: Callable[[float], None] = time.sleep, clock: Callable[[], float] = time.time,
                  capture: bool = False) -> CpsTrial:
    """One trial at (about) `rate` connections/s for `duration_s`, with a packet capture on the client
    when `capture` (kinds/cps/capture.py); LinerateError when h2load could not run at all (a trial
    that ran, however badly, is a CpsTrial)."""
    pace = h2load.pacing(rate)
    connections = max(pace.per_period, round(pace.rate_per_s * duration_s))
    notes = [note for note in (settle(connections),) if note]  # room in the DUT's state table for this trial
    before, waited = wait_for_ports(lambda: read_client_state(client), connections, sleep=sleep)
    if waited:
        notes.append(f"waited {waited:.0f} s for the client's TIME_WAIT sockets to expire before the trial")
    log = capturing = result = None
    try:
        with terminations_deferred():  # a file, once made, is named here before a signal can end the trial
            log = make_temp(client, "h2load")  # in the run's scratch directory: swept even after a SIGKILL
            capturing = client_capture.start(client, url, connections) if capture else None
        threads = max(1, min(options.threads, pace.per_period))  # h2load wants a connection per thread and period
        argv = h2load.client_argv([url], connections=connections, pace=pace, threads=threads,
                                  inactivity_timeout_s=options.timeout_s, log_file=log)
        limit_s = connections / pace.rate_per_s + options.timeout_s + RUN_MARGIN_S
        dut_before, state_before = read_dut(), read_state()
        started = clock()
        result = run_h2load(client, capturing.argv(argv, limit_s) if capturing else argv, limit_s)
    finally:
        ended = clock()
        with terminations_deferred():  # a signal meanwhile waits until the log and the capture are gone
            if result is None:  # cut short (a signal, h2load not starting): only remove what was made
                made = [log] if log else []
                made += [capturing.path, capturing.path + ".log"] if capturing else []
                if made:
                    client.run(["rm", "-f", "--", *made], timeout_s=15, check=False)
            else:
                log_text = client.run(["cat", log], timeout_s=60, check=False).stdout
                client.run(["rm", "-f", "--", log], timeout_s=15, check=False)
                captured, capture_note = client_capture.finish(client, capturing) if capturing else ({}, None)
    if capture_note:
        notes.append(capture_note)
    dut_after, state_after = read_dut(), read_state()
    after = read_client_state(client)
    try:
        records = h2load.parse_log(log_text)
    except ParseError as exc:
        records = []
        notes.append(f"the per-request log could not be read ({exc}); no request-time percentiles")
    percentiles = h2load.request_percentiles(records)
    done = [r for r in records if 200 <= r.status < 400]
    late = served_late([r.start_us / 1e6 for r in done], [r.elapsed_us / 1e6 for r in done])
    if result.total != connections:
        notes.append(f"h2load counted {result.total} requests for {connections} connections")
    limits = trial_limits(before, after, result, pace, connections, options.timeout_s, server.new_errors())
    # RFC 9411 counts a transaction as done with "200 OK" only; h2load's "succeeded" also counts 3xx
    succeeded = min(result.succeeded, result.status.get("2xx", result.succeeded))
    failed = max(connections - succeeded, result.connect_failures)
    return CpsTrial(
        rate=pace.rate_per_s, connections=connections, duration_s=duration_s,
        verdict=verdict(connections, failed, options.loss_target, limits, late), succeeded=succeeded,
        failed=failed, client_failures=min(result.connect_failures, failed), errored=result.errored,
        timeout=result.timeout, h2load_s=result.duration_s, timings=_timings(result),
        request_percentiles=percentiles, capture=captured, late=late, status=result.status,
        limits=tuple(limit.to_dict() for limit in limits),
        client_before=before.to_dict(), client_after=after.to_dict(), waited_s=waited, argv=tuple(argv),
        notes=tuple(notes), dut_counters=_delta(dut_before, dut_after), state_before=state_before,
        state_after=state_after, state_timeouts=dict(state_timeouts or {}), started_at=started, ended_at=ended)


def _delta(before: dict[str, int], after: dict[str, int]) -> dict[str, int]:
    return {key: after[key] - before.get(key, 0) for key in after if isinstance(after[key], int)}
