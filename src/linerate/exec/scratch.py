"""Where linerate may write files on a host: the run's own scratch directory.

Every file or directory linerate makes on a host (a cps test's h2load log and packet capture, its
nginx directory, an iperf3 pid file, rfc9693's pcaps) is made *fresh* inside a directory of the
run's own, never at a predictable path: a predictable name in /tmp (a world-writable directory) can
be planted beforehand by any local user as a symbolic link or a directory of theirs, and a root
`mkdir -p`, `truncate`, `chmod`, `tee` or daemon writing there then follows it (CWE-377/CWE-59).

The scratch directory itself is made with a random name (`new_scratch_path`), recorded before it is
made (the lab's state file, or the SSH testbed's journal), then made with `mkdir`, which fails when
anything is already there (unlike `mkdir -p`). Mode 0711: only its owner lists or writes it; an
unprivileged nginx worker can still reach the files it serves inside. Files inside it are made with
`mktemp` (O_EXCL). A run killed with SIGKILL leaves them inside the recorded directory, so
`linerate lab clean` and `linerate testbed restore` remove them with it — after checking that what is
there is a real directory owned by the user linerate runs as (`REMOVE_SCRIPT`), never a link.

An executor whose testbed gave it no scratch directory (`scratch_dir` None) gets `mktemp` under
/tmp: fresh, never followed, but not swept after a SIGKILL.
"""

from __future__ import annotations

import re
import secrets

from linerate.errors import LinerateError

SCRATCH_PARENT = "/tmp"
SCRATCH_MODE = "0711"
_PATH_RE = re.compile(r"/tmp/linerate-[a-z0-9]{1,16}-[0-9a-f]{16}")
_MADE_RE = re.compile(r"/[A-Za-z0-9._/-]{1,200}")

# run on the host with the path as $1: removes a scratch directory only when it is one (not a link,
# nothing else) and belongs to the user running it; exit 0 when nothing is there, 4 when something
# that is not ours is (left alone).
REMOVE_SCRIPT = ('[ -L "$1" ] && exit 4; [ -e "$1" ] || exit 0; '
                 '[ -d "$1" ] && [ -O "$1" ] || exit 4; exec rm -rf -- "$1"')


def new_scratch_path(owner: str) -> str:
    """A fresh scratch directory's path for `owner` (a lab id or a testbed key): unpredictable."""
    if not re.fullmatch(r"[a-z0-9]{1,16}", owner):
        raise ValueError(f"scratch owner {owner!r}")
    return f"{SCRATCH_PARENT}/linerate-{owner}-{secrets.token_hex(8)}"


def is_scratch_path(path: object) -> bool:
    """Is this a path new_scratch_path makes (what a state file or journal may name for removal)?"""
    return isinstance(path, str) and _PATH_RE.fullmatch(path) is not None


def make_argv(path: str) -> list[str]:
    """Make the scratch directory; fails when anything (a planted link, a directory) is there."""
    if not is_scratch_path(path):
        raise ValueError(f"not a scratch path: {path!r}")
    return ["mkdir", "-m", SCRATCH_MODE, "--", path]


def remove_argv(path: str) -> list[str]:
    if not is_scratch_path(path):
        raise ValueError(f"not a scratch path: {path!r}")
    return ["sh", "-c", REMOVE_SCRIPT, "linerate-scratch", path]


def make_temp(executor, stem: str, *, directory: bool = False, suffix: str = "") -> str:
    """A new file (or directory) inside the executor's scratch directory (/tmp without one), made
    by mktemp on that host; its path, checked to be what was asked for."""
    if not re.fullmatch(r"[a-z0-9-]{1,32}", stem) or not re.fullmatch(r"(\.[a-z0-9]{1,8})?", suffix):
        raise ValueError(f"temp name {stem!r}{suffix!r}")
    parent = executor.scratch_dir or SCRATCH_PARENT
    template = f"{parent}/linerate-{stem}.XXXXXX{suffix}"
    argv = ["mktemp", *(["-d"] if directory else []), template]
    path = executor.run(argv, timeout_s=15).stdout.strip()
    if not _MADE_RE.fullmatch(path) or not path.startswith(f"{parent}/linerate-{stem}.") \
            or ".." in path.split("/") or not path.endswith(suffix):
        raise LinerateError(f"mktemp on {executor.host} answered {path[:80]!r} for {template}")
    return path
