"""Pure lab description: LabSpec -> Plan (ordered, printable steps). Nothing here touches the system."""

from __future__ import annotations

from linerate.topology.plan import LabSpec, Plan, build_plan
from linerate.topology.pool import build_pool_plan


def lab_plan(spec: LabSpec) -> Plan:
    """A namespace lab's plan: one client and one server, or a generator pool joined by switches."""
    return build_pool_plan(spec) if spec.pooled else build_plan(spec)


__all__ = ["LabSpec", "Plan", "build_plan", "lab_plan"]
