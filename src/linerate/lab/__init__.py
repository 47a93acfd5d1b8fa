"""The only code that needs root: apply/teardown a Plan, and the registry of what it made."""

from linerate.lab.lab import Lab
from linerate.lab.registry import LabRecord, Registry

__all__ = ["Lab", "LabRecord", "Registry"]
