"""Pure lab description: LabSpec -> Plan (ordered, printable steps). Nothing here touches the system."""

from linerate.topology.plan import LabSpec, Plan, build_plan

__all__ = ["LabSpec", "Plan", "build_plan"]
