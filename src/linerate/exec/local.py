"""Executors that run on this machine: directly, or inside a named network namespace."""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from linerate.errors import ExecError
from linerate.exec.base import Batch, CommandResult, SpawnedProcess


@dataclass(frozen=True)
class BytesResult:
    """A CommandResult whose output stays bytes (LocalExecutor.run_bytes)."""

    argv: tuple[str, ...]
    returncode: int
    stdout: bytes
    stderr: bytes
    host: str


class LocalExecutor:
    """Runs argv on this machine."""

    def __init__(self, host: str = "localhost", scratch_dir: str | None = None):
        self.host = host
        self.scratch_dir = scratch_dir

    def wrap(self, argv: Sequence[str]) -> list[str]:
        return [str(a) for a in argv]

    def run(
        self,
        argv: Sequence[str],
        *,
        stdin: str | None = None,
        timeout_s: float | None = None,
        check: bool = True,
        cwd: str | Path | None = None,
    ) -> CommandResult:
        """Executor.run, plus cwd: the directory the command starts in (this machine's)."""
        returncode, stdout, stderr = self._run(argv, stdin, timeout_s, cwd, text=True)
        result = CommandResult(tuple(argv), returncode, stdout, stderr, self.host)
        if check and returncode != 0:
            raise ExecError(argv, self.host, returncode, stderr)
        return result

    def run_bytes(
        self,
        argv: Sequence[str],
        *,
        stdin: bytes | None = None,
        timeout_s: float | None = None,
        check: bool = True,
        cwd: str | Path | None = None,
    ) -> BytesResult:
        """run() for binary data (an archive on stdout, a file list that need not be UTF-8 on stdin)."""
        returncode, stdout, stderr = self._run(argv, stdin, timeout_s, cwd, text=False)
        if check and returncode != 0:
            raise ExecError(argv, self.host, returncode, stderr.decode(errors="replace"))
        return BytesResult(tuple(str(a) for a in argv), returncode, stdout, stderr, self.host)

    def _run(self, argv: Sequence[str], stdin, timeout_s: float | None, cwd: str | Path | None,
             text: bool) -> tuple[int, Any, Any]:
        """(returncode, stdout, stderr); ExecError with returncode None when it outlives timeout_s,
        127 when it cannot be started (no such command, or no such cwd)."""
        full = self.wrap(argv)
        try:  # a session of its own: a timeout or a stop ends the command's whole process group
            proc = subprocess.Popen(full, stdin=subprocess.PIPE if stdin is not None else None, stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, text=text, cwd=cwd, start_new_session=True)
        except FileNotFoundError:
            raise ExecError(argv, self.host, 127, f"{full[0]}: command not found") from None
        with proc:
            try:
                stdout, stderr = proc.communicate(stdin, timeout=timeout_s)
            except subprocess.TimeoutExpired:
                _kill_group(proc)
                _, stderr = proc.communicate()
                stderr = stderr.decode(errors="replace") if isinstance(stderr, bytes) else (stderr or "")
                raise ExecError(argv, self.host, None, stderr) from None
            except BaseException:  # a signal ending linerate: what the command started goes with it (tcpdump
                _kill_group(proc)  # under `timeout`, a script's children), not only its first process
                raise
        return proc.returncode, stdout, stderr

    def run_many(self, argvs: Sequence[Sequence[str]], *, timeout_s: float | None = None) -> list[CommandResult]:
        """Fixed commands in one `sh -c` (one process start, one `ip netns exec`): telemetry read
        while traffic flows must cost the shared CPUs as little as possible. See exec.base.Batch."""
        batch = Batch(argvs)
        result = self.run(["sh", "-c", batch.script], timeout_s=timeout_s, check=False)
        return batch.split(self.host, result.returncode, result.stdout, result.stderr)

    def spawn(self, argv: Sequence[str], pass_fds: Sequence[int] = (),
              log: str | None = None) -> SpawnedProcess:
        """pass_fds: descriptors the process inherits (a VM's taps); log: a file for its stderr."""
        # A new session so that SIGINT to our terminal does not reach the server, and the server
        # outlives `linerate lab up`; it is stopped by pid from the lab's state file, never by name.
        stderr = open(log, "ab") if log else subprocess.DEVNULL
        try:
            proc = subprocess.Popen(
                self.wrap(argv),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=stderr,
                start_new_session=True,
                pass_fds=tuple(pass_fds),
            )
        finally:
            if log:
                stderr.close()
        return SpawnedProcess(proc.pid, tuple(argv), self.host)


class NetnsExecutor(LocalExecutor):
    """Runs argv inside the named network namespace (via `ip netns exec`, which also remounts
    /sys so that tools such as ethtool see the namespace's own devices), optionally pinned to a
    set of CPUs (taskset) — the lab keeps its client side and its server side apart."""

    def __init__(self, netns: str, cpus: Sequence[int] = (), scratch_dir: str | None = None):
        super().__init__(host=f"netns:{netns}", scratch_dir=scratch_dir)
        self.netns = netns
        self.cpus = tuple(cpus)

    def wrap(self, argv: Sequence[str]) -> list[str]:
        pin = ["taskset", "--cpu-list", ",".join(map(str, self.cpus))] if self.cpus else []
        return ["ip", "netns", "exec", self.netns, *pin, *[str(a) for a in argv]]


def _kill_group(proc: subprocess.Popen) -> None:
    """SIGKILL the process group a command was started in (its own session: start_new_session)."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    proc.wait()
