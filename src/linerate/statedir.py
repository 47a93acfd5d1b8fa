"""linerate's own directories (the labs' records, the DUT journal): made by linerate, owned by it,
and never anyone else's directory put to our use.

A directory linerate makes is created 0700 and gets a marker file (`.linerate-state`). An
existing directory is used only when it is ours: a real directory (not a link), owned by this
user, mode exactly 0700, and carrying the marker — or, for a directory an older linerate made,
holding nothing but linerate's own files (then the marker is added). Anything else (a shared
1777 /tmp, someone's home, a directory of another owner) is refused with the reason; it is never
chmodded, and nothing in it is touched. Read-only commands only *look* (`is_ours`): they create
nothing and delete nothing.
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

from linerate.errors import ConfigError
from linerate.safepath import untrusted_component

MARKER = ".linerate-state"
DEFAULT_LAB_STATE_DIR = "/run/linerate/labs"


def lab_state_dir() -> Path:
    """Where the labs' records live: $LINERATE_STATE_DIR, else /run/linerate/labs."""
    return Path(os.environ.get("LINERATE_STATE_DIR") or DEFAULT_LAB_STATE_DIR)
# what an older linerate left in a labs directory: records, VM directories, temp files, the marker
LEGACY_NAMES = re.compile(r"^([a-z0-9]{1,8}\.(json|vm)|\.[a-z0-9]{1,8}\.\d{1,10}\.[0-9a-f]{8}\.tmp|"
                          r"\.linerate-[a-z0-9]{1,8}\.\d{1,10}\.[0-9a-f]{8}\.tmp)$")


def _refuse(path: Path, env: str, why: str) -> ConfigError:
    return ConfigError(f"state directory {path}", f"{why}; linerate uses only a directory it made itself "
                       f"(0700, owned by uid {os.geteuid()}): point {env} at a path that does not exist yet")


def problem(path: Path, legacy: re.Pattern[str] | None = LEGACY_NAMES) -> str | None:
    """Why the existing directory at `path` is not ours (None: it is). Never changes anything."""
    try:
        info = os.lstat(path)
    except OSError as exc:
        return f"cannot be inspected ({exc.strerror})"
    if stat.S_ISLNK(info.st_mode):
        return "is a symbolic link"
    if not stat.S_ISDIR(info.st_mode):
        return "is not a directory"
    if info.st_uid != os.geteuid():
        return f"belongs to uid {info.st_uid}"
    if stat.S_IMODE(info.st_mode) != 0o700:
        return f"has mode {stat.S_IMODE(info.st_mode):04o}, not 0700 (a shared directory?)"
    marker = path / MARKER
    try:
        mark = os.lstat(marker)
    except FileNotFoundError:
        mark = None
    if mark is not None:
        return None if stat.S_ISREG(mark.st_mode) and mark.st_uid == os.geteuid() else f"{MARKER} is not linerate's"
    names = os.listdir(path)
    if legacy is None or not all(legacy.fullmatch(name) for name in names):
        return "was not made by linerate (no .linerate-state marker, and it holds other files)"
    return None


def is_ours(path: str | os.PathLike[str], env: str = "LINERATE_STATE_DIR",
            legacy: re.Pattern[str] | None = LEGACY_NAMES) -> bool:
    """For read-only commands: False when nothing is there yet; ConfigError when something that is
    not ours is there; True for our directory. Writes nothing (not even the marker)."""
    path = Path(path)
    if not os.path.lexists(path):
        return False
    why = problem(path, legacy)
    if why is not None:
        raise _refuse(path, env, why)
    return True


def ensure(path: str | os.PathLike[str], env: str = "LINERATE_STATE_DIR",
           legacy: re.Pattern[str] | None = LEGACY_NAMES) -> Path:
    """Our directory at `path`, made now (0700, marker) if it does not exist; ConfigError if
    something that is not ours is there. Parents are made as mkdir -p would (never chmodded)."""
    path = Path(path)
    steered = untrusted_component(str(path))
    if steered is not None:
        raise _refuse(path, env, steered)
    if not os.path.lexists(path):
        steered = untrusted_component(str(path.parent), make=0o755)  # its parents as mkdir -p would, safely
        if steered is not None:
            raise _refuse(path, env, steered)
        try:
            os.mkdir(path, 0o700)
        except FileExistsError:
            pass  # made by a concurrent linerate (or someone else): checked below like any other
        else:
            os.chmod(path, 0o700)  # our own new directory: undo the umask, exactly 0700
            _mark(path)
            return path
    why = problem(path, legacy)
    if why is not None:
        raise _refuse(path, env, why)
    if not os.path.lexists(path / MARKER):
        _mark(path)  # an older linerate's directory, holding only our files: adopted
    return path


def _mark(path: Path) -> None:
    try:
        fd = os.open(path / MARKER, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    except FileExistsError:
        return
    with os.fdopen(fd, "w") as handle:
        handle.write("made by linerate; its labs' records and journals live here\n")


def try_lock(path: Path, *, shared: bool = False) -> int | None:
    """A lock file in one of linerate's own directories: its descriptor with the flock taken (exclusive,
    or shared), or None when another process holds it. Made 0600, never through a link; the kernel
    releases the lock when the holder ends, even by SIGKILL."""
    import fcntl

    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, (fcntl.LOCK_SH if shared else fcntl.LOCK_EX) | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    return fd
