"""Domain errors. The CLI turns these into one clean line and an exit code; bugs keep tracebacks.

ConfigError / PreflightError are the user's to fix (exit 2); ExecError and TrialError are
failures of the world outside (a command failed, a trial could not be measured).
"""

from __future__ import annotations

from collections.abc import Sequence


class LinerateError(Exception):
    """Base of every error the user may see as a message rather than a traceback."""

    exit_code = 1


class ConfigError(LinerateError):
    """Bad input: an option, a file, a key. The message names the field and what is allowed."""

    exit_code = 2

    def __init__(self, field: str, problem: str):
        self.field = field
        self.problem = problem
        super().__init__(f"{field}: {problem}")


class PreflightError(LinerateError):
    """Something the machine lacks. Carries every problem found, not just the first."""

    exit_code = 2

    def __init__(self, problems: Sequence[str]):
        self.problems = list(problems)
        super().__init__("preflight failed:\n" + "\n".join(f"  - {p}" for p in self.problems))


class ExecError(LinerateError):
    """A command exited non-zero (or timed out) on some host."""

    def __init__(self, argv: Sequence[str], host: str, returncode: int | None, stderr: str):
        self.argv = list(argv)
        self.host = host
        self.returncode = returncode
        self.stderr = stderr
        what = "did not finish" if returncode is None else f"exited {returncode}"
        # bounded: a hostile host's 30 MB error line (or an argv carrying one) is not repeated whole
        lines = stderr[-4096:].strip().splitlines()
        detail = _clip(lines[-1], 200) if lines else "no error output"
        command = " ".join(_clip(a, 80) for a in self.argv[:12]) + (" ..." if len(self.argv) > 12 else "")
        super().__init__(f"on {host}: {command} {what}: {detail}")


class ExecBroken(ExecError):
    """A command whose answer broke off for a reason of its own, not of the host's: it printed more
    than linerate reads, or the shell it ran in died under it. Commands batched with it (one round
    trip) are worth running again one by one: each of the others still has its answer."""


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text):,} characters)"


class RestoreFailed(LinerateError):
    """A run whose trials all ended, but a host refused to take back a change at the end: the
    experiment is done (every trial stored); the change stays in the journal for `testbed restore`."""


class ParseError(LinerateError):
    """Output of a tool we could not understand."""


class LabError(LinerateError):
    """The lab could not be built, found or removed."""


class Interrupted(BaseException):
    """Stopped by a termination signal; what was created has been removed.

    Not a LinerateError, not even an Exception: every best-effort handler in linerate catches
    those (a telemetry read that fails leaves its figures out), and a signal caught there would be
    swallowed and the run would go on. As a BaseException (like KeyboardInterrupt) it passes every
    such handler, unwinds the `finally` blocks that restore and remove, and ends the run with the
    shell's code for the signal: 128 + its number (143 for SIGTERM, 129 for SIGHUP)."""

    def __init__(self, message: str, signum: int = 15):
        super().__init__(message)
        self.signum = signum
        self.exit_code = 128 + signum


def failure_text(exc: BaseException, seconds: float) -> str:
    """What a failed attempt says. A timeout's exception says nothing (asyncio's and the builtin are one class
    since Python 3.11): name the wait instead."""
    if isinstance(exc, TimeoutError):
        return f"no answer within {seconds:g} s"
    return str(exc) or type(exc).__name__
