"""The DUT journal: every change linerate makes on a real host — a sysctl, an offload flag, an
iperf3 server it started, an rfc2544 counting table — committed *before* the change is made.

It lives in linerate's own state directory, one SQLite file per testbed named by the testbed's
identity (Inventory.identity_key(): its hosts), not in the results database: so
`linerate testbed restore lab.toml` finds it from any directory, whatever `--db` a killed run
used, and the next run on that testbed restores first, whatever `--db` it uses. Where:
$LINERATE_JOURNAL_DIR, else /var/lib/linerate/journal (root) or
$XDG_STATE_HOME/linerate/journal (~/.local/state). Not /run: the journal must outlive a reboot
of the controller, since the DUT stays changed. The directory follows statedir.py's rule.

What a host reports is input: a value is journaled only when it is one linerate can put back
(`value_problem`: bounded length, printable, no control characters; an offload state on/off), so
a hostile or broken DUT can neither grow the journal nor have its output written back. A change
whose original fails is refused before it is made. An entry whose restore fails is marked
`needs-hand` once, with the command to run by hand; it stays listed by `testbed restore` (never
blocking the others or later runs) until `testbed restore --resolve ID` closes it.
"""

from __future__ import annotations

import re
import shlex

from linerate.errors import LinerateError
from linerate.exec import scratch
from linerate.report.layout import plain
from linerate.store.journal import JournalFile

MAX_VALUE_CHARS = 256
MAX_NAME_CHARS = 256
VALUE_RE = re.compile(r"^[\x20-\x7e]*$")  # printable ASCII: what a sysctl value of a network knob is
OFFLOAD_STATES = ("on", "off")


class HostValueError(LinerateError):
    """A value read from a host that linerate will not keep or write back."""

    exit_code = 2


def value_problem(kind: str, value: str) -> str | None:
    """Why `value` (read from a host) cannot be journaled and written back; None when it can."""
    if kind == "offload":
        return None if value in OFFLOAD_STATES else f"offload state {_shown(value)} is neither on nor off"
    if kind != "sysctl":
        return None if value == "" else "unexpected value"
    if len(value) > MAX_VALUE_CHARS:
        return f"{len(value):,} characters (more than {MAX_VALUE_CHARS})"
    if not VALUE_RE.fullmatch(value):
        return "control characters or non-ASCII bytes in it"
    if value == "":
        return "an empty value"
    return None


def _shown(value: str) -> str:
    return repr(plain(value[:40])) + ("..." if len(value) > 40 else "")


def manual_command(os_family: str | None, kind: str, name: str, original: str | None) -> str:
    """What to run on the host by hand to put a change back (`original` None: value unknown, and the
    command says so with a placeholder the user must replace). Every value is shell-quoted."""
    value = original if original is not None else "VALUE"
    if kind == "sysctl":
        argv = ["sysctl", "-w", f"{name}={value}"] if os_family in (None, "linux") else ["sysctl", f"{name}={value}"]
    elif kind == "offload":
        ifname, _, feature = name.partition(":")
        if os_family in (None, "linux"):
            argv = ["ethtool", "-K", ifname, feature, original if original is not None else "on|off"]
        elif original is None:
            return f"ifconfig {shlex.quote(ifname)} {shlex.quote(feature)}  # or -{feature}: the original is unknown"
        else:
            argv = ["ifconfig", ifname, feature if original == "on" else f"-{feature}"]
    elif kind == "process":
        return f"kill \"$(cat {shlex.quote(name)})\""
    elif kind == "scratch":
        if not scratch.is_scratch_path(name):  # never suggest removing what linerate did not make
            return "nothing to run: this entry names no directory linerate makes; look at it, then resolve it"
        return f"rm -rf -- {shlex.quote(name)}"
    elif kind == "nginx":
        return f"kill -QUIT \"$(cat {shlex.quote(name + '/nginx.pid')})\"; rm -rf -- {shlex.quote(name)}"
    elif kind == "nft-table":  # an rfc2544 search's counting table (testbed/ssh_path.py)
        argv = ["nft", "delete", "table", "inet", name]
    else:  # not a kind linerate journals: nothing it could suggest is known to be right
        return f"nothing to run: linerate journals no change of kind {kind[:40]!r}; look at it, then resolve it"
    command = shlex.join(argv)
    return command if original is not None else f"{command}  # VALUE: the original, which linerate could not keep"


class Journal(JournalFile):
    """A testbed's journal (store/journal.py holds its SQL): only values linerate can write back."""

    def add(self, role: str, kind: str, name: str, original: str, applied: str | None) -> int:
        """Committed before the change is made. The value must be one linerate can write back."""
        problem = value_problem(kind, original)
        if problem is not None or len(name) > MAX_NAME_CHARS or (applied is not None and len(applied) > MAX_VALUE_CHARS):
            raise HostValueError(f"{kind} {name[:80]}: {problem or 'too long'}; not journaled")
        return super().add(role, kind, name, original, applied)

    # --- an older linerate kept the journal in the results database -------------------------------

    def adopt(self, store, os_family: str | None = None) -> int:
        """Move this testbed's open entries out of a results database (an older linerate's
        journal) into this one, each checked like a fresh value; how many were moved."""
        moved = 0
        for row in reversed(store.journal_open(self.key)):  # oldest first: ids keep the order of change
            kind, name, original = row["kind"], str(row["name"]), row["original"]
            problem = value_problem(kind, original if isinstance(original, str) else "")
            if problem is None and len(name) <= MAX_NAME_CHARS:
                self.add(row["role"], kind, name, original, row["applied"])
            else:
                self.add_needs_hand(row["role"], kind, name, f"its recorded original value was not kept: "
                                    f"{problem or 'name too long'}", manual_command(os_family, kind, name, None))
            store.journal_done(row["id"])
            moved += 1
        return moved
