"""The connection-rate search, pure: which rate to offer next, given the verdicts so far.

RFC 9411 (section 7.2 with its common test procedure) asks for the highest rate whose trial
passes the validation criteria — under 0.001% failed transactions — and prescribes no search
algorithm; IxLoad's RFC 3511 "max connection establishment rate" bisects between a minimum and a
maximum to a granularity, CSIT's CPS tests hand MLRsearch the same question. This search:

1. offers `start_rate`; while trials pass it doubles the rate, up to `max_rate`;
2. when the first trial already fails it halves instead, until one passes or the rate would go
   below one connection/s ("no lower bound");
3. then bisects between the highest passing and the lowest failing rate until they are within
   `relative_width` of the upper one, or no rate the generator can offer lies between them
   (h2load offers whole connections per rate period: `pace`).

A later repetition of the same search starts at the bracket the one before found (`bracket`): its
lower rate first, then its upper one; where both hold again the repetition is done in two trials.
Where the box has moved, the search steps from that end by the earlier bracket's width (at least
`relative_width`), doubling the step with every trial that moves the same way, as MLRsearch's
external search does (draft-ietf-bmwg-mlrsearch, "expanding" the interval from an earlier
estimate), until a step would reach half (down) or double (up) the rate, where it halves or doubles
as above; then it bisects. A rate that passed a moment ago and is served late now is run-to-run
noise of about that width, not a box at half its rate: halving there cost a repetition 8-10 trials
where 3-4 find the same bracket. A first search from 100 conn/s takes 13-17 trials to a 0.5%
bracket; this is what made three repetitions of three object sizes take ten minutes.

Every decision depends only on the verdicts before it, so a resumed run replays the stored trials
and arrives at the same next rate (as rfc2544's MLRsearch replay does).

A trial's verdict (verdict()): "pass" below the loss target and served in step with the offered
rate (served_late(): RFC 9411's tests also ask that concurrent connections stay constant, which
"shows the DUT opens and closes connections at approximately the same rate"; in a short trial a DUT
that cannot keep up still completes every connection, late, from its queues); otherwise whose failure it was —
"client" when the client did not offer the load (it could not open connections, fell behind its
pacing) or had used up its ports, "server" when nginx logged errors, else "dut". A failed trial of
any kind is an upper bound (nothing above it was measured), but only a "dut" upper bound makes the
result the DUT's: `limit` says which it was, so a client's ceiling is never reported as the DUT's.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from linerate.kinds.cps.limits import Limit

PASS, DUT, CLIENT, SERVER, LATE = "pass", "dut", "client", "server", "late"
VERDICTS = (PASS, DUT, CLIENT, SERVER, LATE)
MIN_RATE = 1.0


def passes(attempted: int, failures: int, loss_target: float) -> bool:
    """RFC 9411's criterion: failed / attempted below the target (a target of 0: no failure at all)."""
    return failures == 0 or (attempted > 0 and failures / attempted < loss_target)


LATE_RELATIVE = 0.03  # the median request time may grow by 3% of the trial's span (3% more load than served) ...
LATE_ABSOLUTE_S = 0.02  # ... plus 20 ms, from its first fifth of connections to its last, before it counts as late
FIFTH = 5


def served_late(starts_s: Sequence[float], elapsed_s: Sequence[float]) -> str | None:
    """Evidence that the connections were served ever later during the trial (None: in step).
    starts_s/elapsed_s: each request's start and its time to the end of the response (h2load's
    per-request log). Compares the median request time of the first fifth of requests (by start)
    with that of the last fifth: a DUT, link or server that keeps up serves both alike; one that
    falls behind queues the rest, and the time grows with the backlog (by about the share of the
    load it could not serve, times the trial's span)."""
    pairs = sorted(zip(starts_s, elapsed_s))
    if len(pairs) < 2 * FIFTH:
        return None
    span = pairs[-1][0] - pairs[0][0]
    fifth = len(pairs) // FIFTH
    first = float(np.median([e for _, e in pairs[:fifth]]))
    last = float(np.median([e for _, e in pairs[-fifth:]]))
    if last - first <= LATE_RELATIVE * span + LATE_ABSOLUTE_S:
        return None
    return (f"request times grew from {first * 1000:,.0f} ms (median, first fifth of the trial's requests) to "
            f"{last * 1000:,.0f} ms (median, last fifth) within {span:.1f} s: responses fell behind the "
            "offered rate and queued — in the DUT's path, the server or the client; every connection completed "
            "only because the trial was short")


def verdict(attempted: int, failures: int, loss_target: float, limits: Sequence[Limit], late: str | None = None
            ) -> str:
    if any(limit.blocking for limit in limits):
        return CLIENT  # the load was not offered: the trial says nothing about the DUT
    if passes(attempted, failures, loss_target):
        # served late: the DUT's path, the server or the client (a busy h2load reads late too) — the
        # search's trials cannot tell which, so the rate found is a lower bound of the DUT's
        return LATE if late else PASS
    if any(limit.code == "client-ports" for limit in limits):
        return CLIENT
    if any(limit.side == "server" for limit in limits):
        return SERVER
    return DUT


LIMIT_NAMES = {DUT: "DUT", CLIENT: "client", SERVER: "server", LATE: "served late"}


@dataclass
class RateSearch:
    start_rate: float
    max_rate: float
    relative_width: float
    pace: Callable[[float], float] = lambda rate: rate  # a wanted rate -> one the generator offers
    min_rate: float = MIN_RATE
    bracket: tuple[float, float | None] | None = None  # (lower, upper) an earlier repetition found: start there
    lower: float | None = None  # highest passing rate
    upper: float | None = None  # lowest failing rate
    upper_verdict: str | None = None
    history: list[tuple[float, str]] = field(default_factory=list)

    def next_rate(self) -> float | None:
        """The next rate to offer; None when the search is done."""
        if not self.history:
            start = self.bracket[0] if self.bracket else self.start_rate
            return self.pace(min(start, self.max_rate))
        if self.upper is None and self.bracket and self.bracket[1] is not None and self.lower < self.bracket[1]:
            return self.pace(min(self.bracket[1], self.max_rate))  # the earlier bracket's top, before doubling past it
        if self.upper is None:  # every trial passed so far: up by a growing step from the bracket, else double
            top = self.pace(self.max_rate)
            step = self._step(at_bracket=2)  # its lower and upper rate both passed
            grown = self.pace(min(self.lower * (1 + step), self.max_rate)) if step < 1 else None
            if grown is not None and grown > self.lower:
                return grown
            return None if self.lower >= top else self.pace(min(2 * self.lower, self.max_rate))
        if self.lower is None:  # nothing passed yet: down by a growing step from the bracket, else halve
            step = self._step(at_bracket=1)  # its lower rate failed
            lowered = self.pace(self.upper * (1 - step)) if step < 0.5 else None
            if lowered is not None and self.min_rate <= lowered < self.upper:
                return lowered
            rate = self.pace(self.upper / 2)
            return None if rate < self.min_rate or rate >= self.upper else rate
        if self.upper - self.lower <= self.relative_width * self.upper:
            return None
        rate = self.pace((self.lower + self.upper) / 2)
        return None if rate <= self.lower or rate >= self.upper else rate

    def _step(self, at_bracket: int) -> float:
        """The relative step from an earlier repetition's bracket: its width (at least relative_width), doubled
        for each trial of this search after the `at_bracket` it made at the bracket's ends (every one of them
        moved the same way: all failed, or all passed); 1 (double or halve) without a bracket with both ends."""
        if not self.bracket or not self.bracket[1]:
            return 1.0
        lower, upper = self.bracket
        return max(self.relative_width, (upper - lower) / upper) * 2 ** max(0, len(self.history) - at_bracket)

    def record(self, rate: float, result: str) -> None:
        if result not in VERDICTS:
            raise ValueError(f"unknown verdict {result!r}")
        self.history.append((rate, result))
        if result == PASS:
            self.lower = rate if self.lower is None else max(self.lower, rate)
        elif self.upper is None or rate < self.upper:
            self.upper, self.upper_verdict = rate, result

    @property
    def done(self) -> bool:
        return bool(self.history) and self.next_rate() is None

    @property
    def limit(self) -> str:
        """What stopped the rate from going higher: "DUT", "client", "server", "served late", "max_rate" (every
        rate up to max_rate passed), or "no lower bound" (even the lowest rate failed)."""
        if self.lower is None:
            return "no lower bound"
        if self.upper is None:
            return "max_rate"
        return LIMIT_NAMES[self.upper_verdict]
