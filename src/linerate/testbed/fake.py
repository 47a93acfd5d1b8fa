"""Fakes of the Testbed seam for tests: FakeTestbed has every member of the protocol with a
harmless default (subclasses give run_trial or packet_path), FakeTestbeds opens them from a
factory, so the runner, the scheduler and every kind run without root, namespaces or hosts."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any, ContextManager

from linerate.errors import LinerateError
from linerate.model import Trial, TrialParams


class FakeTestbed:
    shared_kernel = False
    driver = None
    line_rate: dict | None = None
    read_cost_s: float | None = None
    description = "a fake testbed"

    def __init__(self, params: dict[str, Any] | None = None):
        self.params = dict(params or {})
        self.state: dict = {}

    def executor(self, role: str):
        raise LinerateError(f"a fake testbed has no {role} host")

    def generator_hosts(self) -> dict:
        return {}

    def environment(self) -> dict:
        return {}

    def apply_knobs(self) -> dict:
        return {}

    def knob_choices(self) -> dict[str, list[tuple]]:
        return {}

    def dut_counters(self) -> dict[str, int]:
        return {}

    def packet_path(self, family: int, generator: str = "auto") -> ContextManager[Any]:
        raise LinerateError("a fake testbed has no packet path")

    def state_path(self, family: int) -> ContextManager[Any]:
        raise LinerateError("a fake testbed has no state path")

    def http_server(self, spec: Any) -> ContextManager[Any]:
        raise LinerateError("a fake testbed has no HTTP server")

    def run_trial(self, params: TrialParams) -> Trial:
        return Trial(status="failed", params=params, argv=(), error="a fake testbed runs no trials")


class FakeTestbeds:
    """Testbeds from open(lab_params) -> a context manager giving a testbed (a FakeTestbed, or any
    object with the protocol's members)."""


    def __init__(self, open: Callable[[dict[str, Any]], ContextManager[Any]], record: dict | None = None,
                 calibrates: bool = True):
        self.open = open
        self._record = dict(record or {})
        self.calibrates = calibrates

    def record(self) -> dict:
        return dict(self._record)

    def reserve(self) -> ContextManager[None]:
        return contextlib.nullcontext()

    def held_params(self) -> dict[str, Any]:
        return {}

    def refuse_unsupported(self, cells: list[dict[str, Any]]) -> None:
        return None

    def check(self, cells: list[dict[str, Any]], extra_required: set[str] = frozenset()) -> str:
        return "fake testbeds: nothing to check"
