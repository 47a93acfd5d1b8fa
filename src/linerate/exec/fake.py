"""FakeExecutor: replays recorded outputs so everything above the executor runs without root.

Responses are matched by argv prefix, the longest prefix first (of equal ones, the newest); each
call is recorded in ``calls`` (its stdin in ``inputs``) so tests can assert on the exact argv that
would have run.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from linerate.errors import ExecError
from linerate.exec.base import CommandResult, SpawnedProcess

Responder = Callable[[tuple[str, ...]], tuple[int, str, str]]


class FakeExecutor:
    def __init__(self, host: str = "fake", scratch_dir: str | None = None):
        self.host = host
        self.scratch_dir = scratch_dir
        self.calls: list[tuple[str, ...]] = []
        self.inputs: list[str | None] = []  # the stdin of each call, beside `calls`
        self.spawned: list[SpawnedProcess] = []
        self._responses: list[tuple[tuple[str, ...], Responder]] = []
        self._next_pid = 40000

    def respond(
        self, prefix: Sequence[str], stdout: str = "", *, returncode: int = 0, stderr: str = ""
    ) -> "FakeExecutor":
        return self.respond_with(prefix, lambda argv: (returncode, stdout, stderr))

    def respond_with(self, prefix: Sequence[str], responder: Responder) -> "FakeExecutor":
        self._responses.insert(0, (tuple(prefix), responder))  # of two equal prefixes, the newer answers
        self._responses.sort(key=lambda item: -len(item[0]))
        return self

    def run(
        self,
        argv: Sequence[str],
        *,
        stdin: str | None = None,
        timeout_s: float | None = None,
        check: bool = True,
    ) -> CommandResult:
        key = tuple(str(a) for a in argv)
        self.calls.append(key)
        self.inputs.append(stdin)
        for prefix, responder in self._responses:
            if key[: len(prefix)] == prefix:
                rc, out, err = responder(key)
                break
        else:
            rc, out, err = 127, "", f"FakeExecutor: no recording for {' '.join(key)}"
        if check and rc != 0:
            raise ExecError(key, self.host, rc, err)
        return CommandResult(key, rc, out, err, self.host)

    def run_many(self, argvs: Sequence[Sequence[str]], *, timeout_s: float | None = None) -> list[CommandResult]:
        """Each argv replayed as its own run (check=False), recorded in `calls` in order."""
        return [self.run(argv, timeout_s=timeout_s, check=False) for argv in argvs]

    def spawn(self, argv: Sequence[str]) -> SpawnedProcess:
        self._next_pid += 1
        proc = SpawnedProcess(self._next_pid, tuple(str(a) for a in argv), self.host)
        self.spawned.append(proc)
        return proc
