"""The rows a tune owns (store/schema.py): `tune_state`, what it records once so that a resumed run and
the report use the same axes and proposals; `tune_decisions`, every decision as it was made. The
trials themselves are ordinary cells' trials, committed when each ends."""

from __future__ import annotations

import time
from typing import Any

from linerate.kinds.tune.engine import Step
from linerate.store.db import Store

STATE, DECISIONS = "tune_state", "tune_decisions"


def state(store: Store, experiment_id: int) -> dict[str, Any]:
    """{"axes": [...], "candidates": [...]} as recorded so far (either may be absent)."""
    found = store.rows(STATE, experiment_id=experiment_id)
    return {k: v for k, v in found[0].items() if k != "experiment_id"} if found else {}


def record(store: Store, experiment_id: int, **values: Any) -> dict[str, Any]:
    """Record axes and/or candidates beside what is recorded already; the state now."""
    now = {**state(store, experiment_id), **values}
    store.put_row(STATE, {"experiment_id": experiment_id, **now})
    return now


def record_decision(store: Store, experiment_id: int, seq: int, step: Step) -> None:
    """One decision (a replayed one again, the same), committed when it is made."""
    j = step.judgement
    low, high = j.ci if j.ci is not None else (None, None)
    store.put_row(DECISIONS, {
        "experiment_id": experiment_id, "seq": seq, "knob": step.candidate.knob, "value": step.candidate.value,
        "proposed_by": step.candidate.proposed_by, "decision": j.decision or "undecided", "why": j.why,
        "pairs": j.pairs, "trials": step.trials, "effect": j.effect, "effect_low": low, "effect_high": high,
        "p_better": j.p_better, "mean_best": j.mean_best, "mean_candidate": j.mean_candidate,
        "best": step.best, "cell": step.cell, "decided_at": time.time()})


def decisions(store: Store, experiment_id: int) -> list[dict[str, Any]]:
    return store.rows(DECISIONS, order_by="seq", experiment_id=experiment_id)
