"""Executors run argv lists on a host. Only this package and lab/ start processes.

Every executor takes argv lists, never shell strings, so user values cannot be interpreted by a
shell. ``FakeExecutor`` replays recorded outputs so the CLI and scheduler run in tests without root.
"""

from linerate.exec.base import CommandResult, Executor, SpawnedProcess
from linerate.exec.fake import FakeExecutor
from linerate.exec.local import LocalExecutor, NetnsExecutor

__all__ = [
    "CommandResult",
    "Executor",
    "SpawnedProcess",
    "FakeExecutor",
    "LocalExecutor",
    "NetnsExecutor",
]
