"""One text format for DUT command outputs, live or pasted.

A snapshot is the outputs of a driver's fixed commands, each under a header line
`### linerate: <command>`. The live path (an Executor runs the commands) renders the same text
that the offline path reads back: `linerate diagnose --snapshot-script --os pfsense` prints a
one-line shell command that a user pastes into the firewall's shell (pfSense Diagnostics >
Command Prompt) before and after a test, and `linerate diagnose --before F --after F` parses the
two files with the very parsers the live driver uses. Stored trials keep this raw text too.

A command that failed has its header marked `### linerate-failed: <command>` (live) or prints its
error as the section body (pasted); either way the driver records the section as unavailable,
never as zero.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterable

HEADER = "### linerate: "
FAILED = "### linerate-failed: "
BANNER = "### linerate-snapshot 1"
FORMAT_HELP = ("a snapshot file: the output of the command `linerate diagnose --snapshot-script --os OS` "
               "prints, with lines starting '### linerate: '")


def command_line(argv: Iterable[str]) -> str:
    return shlex.join(list(argv))


def render(outputs: Iterable[tuple[list[str], int, str]], family: str) -> str:
    """[(argv, returncode, stdout)] -> snapshot text."""
    parts = [f"{BANNER} {family}"]
    for argv, returncode, stdout in outputs:
        marker = HEADER if returncode == 0 else FAILED
        parts.append(f"{marker}{command_line(argv)}")
        parts.append(stdout.rstrip("\n"))
    return "\n".join(parts) + "\n"


def split(text: str) -> dict[str, str]:
    """snapshot text -> {command: output}; a failed command has no entry."""
    sections: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in text.splitlines():
        if line.startswith(HEADER):
            current = sections.setdefault(line[len(HEADER):].strip(), [])
            current.clear()
        elif line.startswith(FAILED):
            current = None
        elif current is not None:
            current.append(line)
    return {name: "\n".join(lines).strip("\n") + "\n" for name, lines in sections.items()}


def outside(text: str) -> str:
    """The lines of a text that are under no `### linerate:` header (nor a failed one) and are not
    the banner: what a user pasted raw around, or instead of, a snapshot."""
    kept: list[str] = []
    inside = False
    for line in text.splitlines():
        if line.startswith((HEADER, FAILED)):
            inside = True
        elif line.startswith(BANNER):
            continue
        elif not inside:
            kept.append(line)
    return "\n".join(kept) + ("\n" if kept else "")


def family_of(text: str) -> str | None:
    """The OS family a snapshot names in its banner line, if any."""
    for line in text.splitlines()[:3]:
        if line.startswith(BANNER):
            words = line[len(BANNER):].split()
            return words[0] if words else None
    return None


def shell_line(argvs: Iterable[list[str]], family: str) -> str:
    """The whole one-liner a user pastes: the snapshot goes to a file of its own (mktemp; seconds
    and the shell's PID where mktemp is missing), whose path is printed on stderr. POSIX sh only."""
    name = "${TMPDIR:-/tmp}/linerate-snapshot"
    return (f'f=$(mktemp "{name}-XXXXXX" 2>/dev/null || echo "{name}-$(date +%s)-$$.txt"); '
            f'{shell_script(argvs, family)} > "$f"; echo "linerate snapshot written to $f" >&2')


def shell_script(argvs: Iterable[list[str]], family: str) -> str:
    """One line of POSIX sh printing a snapshot; only fixed commands, no user values. Each command's
    stderr joins its section so a refusal is visible (and parsed as unavailable)."""
    steps = [f"echo '{BANNER} {family}'"]
    for argv in argvs:
        line = command_line(argv)
        steps.append(f"echo '{HEADER}{line}'; {line} 2>&1")
    return "( " + "; ".join(steps) + " )"
