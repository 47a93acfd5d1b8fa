"""The Executor protocol shared by local, namespace, fake (and later SSH) executors."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable


@dataclass(frozen=True)
class CommandResult:
    argv: tuple[str, ...]
    returncode: int
    stdout: str
    stderr: str
    host: str


@dataclass(frozen=True)
class SpawnedProcess:
    """A long-running process (an iperf3 server) started in the background on a host."""

    pid: int
    argv: tuple[str, ...]
    host: str


@runtime_checkable
class Executor(Protocol):
    host: str

    def run(
        self,
        argv: Sequence[str],
        *,
        stdin: str | None = None,
        timeout_s: float | None = None,
        check: bool = True,
    ) -> CommandResult:
        """Run argv to completion. With check=True a non-zero exit raises ExecError."""
        ...

    def spawn(self, argv: Sequence[str]) -> SpawnedProcess:
        """Start argv detached (own session) and return at once."""
        ...
