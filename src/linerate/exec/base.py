"""The Executor protocol shared by local, namespace, fake (and later SSH) executors."""

from __future__ import annotations

import re
import secrets
import shlex
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from linerate.errors import ExecError


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
    scratch_dir: str | None  # the run's own directory on this host, for its files (exec/scratch.py)

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

    def run_many(self, argvs: Sequence[Sequence[str]], *, timeout_s: float | None = None) -> list[CommandResult]:
        """Run fixed commands, in one round trip where the host allows (one process, SSH exchange or
        agent request: see Batch), and return one CommandResult each, in order. A command's non-zero
        exit is in its result, never raised; a timeout or a lost host raises ExecError."""
        ...

    def spawn(self, argv: Sequence[str]) -> SpawnedProcess:
        """Start argv detached (own session) and return at once."""
        ...


class Batch:
    """Several fixed commands as one shell script (one SSH round trip, one `ip netns exec`): each
    argv is quoted on its own (shlex.join); a random marker line carrying the exit status follows
    each command's output. Stderr comes back as a whole and is attached to the commands that failed."""

    def __init__(self, argvs: Sequence[Sequence[str]], quote: Callable[[Sequence[str]], str] | None = None):
        quote = quote or shlex.join
        self.marker = f"@@linerate-{secrets.token_hex(8)}@@"
        self.keys = [tuple(str(a) for a in argv) for argv in argvs]
        self.script = "; ".join(f"{quote(key)}; printf '\\n{self.marker} %d\\n' $?" for key in self.keys)

    def split(self, host: str, returncode: int, stdout: str, stderr: str) -> list[CommandResult]:
        parts = re.split(rf"\n{self.marker} ([0-9]+)\n", stdout)
        if len(parts) != 2 * len(self.keys) + 1:
            raise ExecError(self.keys[0], host, returncode, f"batched output was cut short: {stderr.strip()[:200]}")
        codes = [int(parts[2 * i + 1]) for i in range(len(self.keys))]
        return [CommandResult(key, code, parts[2 * i], stderr if code else "", host)
                for i, (key, code) in enumerate(zip(self.keys, codes))]
