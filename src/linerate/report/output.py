"""The one writer of every output file (`report -o`, `compare -o`, `--plot`): a shell's `>`,
without its accidents.

- a path that does not exist: created (its directory must exist) — written whole to a temp file
  beside it, then renamed into place, so a kill never leaves half a report;
- an existing regular file: replaced the same way (it keeps its permission bits, never set-id bits);
  one another user made in a folder others can write (/tmp) is refused (fs.protected_regular's rule);
- an existing character device or FIFO (/dev/null, /dev/stdout, a named pipe): written *into*,
  as `>` would — never renamed over, never replaced by a regular file; a FIFO that nobody reads
  is refused instead of hanging;
- every folder and link on the way is one no other user could have steered (safepath.py);
- a symbolic link is followed when this user (or root) made it in a folder no other user can write
  (a sticky one: only when this user made it): what it points to gets the rule above, and the link
  stays a link; a link another user could have planted is refused, and so is a link to nothing;
- a directory, a block device (a disk) or a socket: refused;
- a results database this process opened (its -wal, -shm, -journal too, through any link or hard link),
  or a file in linerate's own state directories (the DUT journals, the labs' records): refused.

Every refusal is a ConfigError naming the option (exit 2) and nothing is written. check() runs
the same rule before any work, so a bad path fails at once rather than after a long report.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import stat
import tempfile
from dataclasses import dataclass

from linerate.errors import ConfigError
from linerate.safepath import absolute, foreign_file, kept_mode, trusted_link, untrusted_component
from linerate.statedir import lab_state_dir
from linerate.store.db import OPENED, database_files
from linerate.store.journal import journal_dir


@dataclass(frozen=True)
class Target:
    how: str  # "replace" (regular or new file: temp + rename) or "stream" (device, FIFO: write into)
    path: str  # for "replace", the real file (a link followed); for "stream", the path as given
    mode: int | None  # permission bits to keep on a replaced file


def check(path: str, option: str) -> Target:
    """Where `path` would be written, by the rule above; ConfigError when it must not be."""
    if not path or "\x00" in path:
        raise ConfigError(option, "is not a file path")
    shown = path[:200]
    steered = untrusted_component(path)
    if steered is not None:
        raise ConfigError(option, f"{steered}; give a path through folders only you (or root) can write")
    try:
        link = os.lstat(path)
    except FileNotFoundError:
        parent = os.path.dirname(absolute(path))
        if not os.path.isdir(parent):
            raise ConfigError(option, f"directory {parent[:200]!r} does not exist; create it first") from None
        _refuse_own(os.path.join(os.path.realpath(parent), os.path.basename(path)), None, option, shown)
        return Target("replace", path, None)
    except OSError as exc:
        raise ConfigError(option, f"{shown}: {exc.strerror}") from None
    info, real = link, path
    if stat.S_ISLNK(link.st_mode):
        if not _trusted_link(path, link):
            raise ConfigError(option, f"{shown} is a symbolic link another user made, or in a folder others can "
                              "write (one planted there would be followed as this user); give the target's own path")
        try:
            info = os.stat(path)
        except FileNotFoundError:
            raise ConfigError(option, f"{shown} is a symbolic link to a file that does not exist; give the "
                              "target's path (linerate does not create files through links)") from None
        except OSError as exc:
            raise ConfigError(option, f"{shown}: {exc.strerror}") from None
        real = os.path.realpath(path)
    mode = info.st_mode
    if stat.S_ISREG(mode):
        _refuse_own(os.path.realpath(real), info, option, shown)
        foreign = foreign_file(real, info)
        if foreign is not None:
            raise ConfigError(option, f"{foreign} (it could be theirs to read or change); give another file name")
        return Target("replace", real, kept_mode(info))
    if stat.S_ISFIFO(mode) and foreign_file(path, info) is not None:
        raise ConfigError(option, f"{foreign_file(path, info)}: a named pipe (what is written there goes to them); "
                          "give a file name")
    if stat.S_ISCHR(mode) or stat.S_ISFIFO(mode):
        return Target("stream", path, None)
    if stat.S_ISDIR(mode):
        raise ConfigError(option, f"{shown} is a directory; give a file name such as report.html")
    if stat.S_ISBLK(mode):
        raise ConfigError(option, f"{shown} is a block device (a disk); give a file name")
    raise ConfigError(option, f"{shown} is a socket or other special file; give a file name")


def _trusted_link(path: str, link: os.stat_result) -> bool:
    """The rule Linux's fs.protected_symlinks applies in sticky folders, here in every folder
    (safepath.trusted_link; /dev/stdout passes)."""
    return trusted_link(link, os.lstat(os.path.dirname(absolute(path))))


def _refuse_own(real: str, info: os.stat_result | None, option: str, shown: str) -> None:
    """ConfigError when the file is one linerate reads or keeps: an opened results database (or a sidecar),
    the same file under another name included, or anything in its state directories."""
    for database in OPENED:
        for own in database_files(database):
            try:
                same = info is not None and os.path.samefile(own, real)
            except OSError:
                same = False
            if same or os.path.realpath(own) == real:
                raise ConfigError(option, f"{shown} is the results database this command reads ({database[:200]}); "
                                  "give another file name")
    for directory in (journal_dir(), lab_state_dir()):
        inside = os.path.realpath(directory)
        if real == inside or real.startswith(inside.rstrip("/") + "/"):
            raise ConfigError(option, f"{shown} is in linerate's own state directory {inside[:200]}; give a file "
                              "elsewhere")


def write(path: str, data: bytes | str, option: str = "--output") -> int:
    """Write `data` to `path` by the rule above; the number of bytes written."""
    if isinstance(data, str):
        data = data.encode("utf-8")
    target = check(path, option)  # again at write time: the path may have changed since
    if target.how == "stream":
        _write_into(target.path, data, option)
    else:
        _replace(target, data, option)
    return len(data)


def _write_into(path: str, data: bytes, option: str) -> None:
    try:
        # no O_CREAT: never makes a file; O_NONBLOCK: a FIFO without a reader fails instead of hanging
        fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    except OSError as exc:
        what = "a FIFO nobody reads" if exc.errno == 6 else exc.strerror  # ENXIO
        raise ConfigError(option, f"{path[:200]}: cannot write into it ({what})") from None
    try:
        info = os.fstat(fd)
        if not (stat.S_ISCHR(info.st_mode) or stat.S_ISFIFO(info.st_mode)):
            raise ConfigError(option, f"{path[:200]} changed while linerate wrote to it; run again")
        flags = fcntl.fcntl(fd, fcntl.F_GETFL)
        fcntl.fcntl(fd, fcntl.F_SETFL, flags & ~os.O_NONBLOCK)  # from now on, wait for a slow reader
        view = memoryview(data)
        while view:
            written = os.write(fd, view)
            view = view[written:]
    except BrokenPipeError:
        raise ConfigError(option, f"{path[:200]}: the reader went away") from None
    except OSError as exc:  # /dev/full: ENOSPC, and the like
        raise ConfigError(option, f"{path[:200]}: cannot write into it ({exc.strerror})") from None
    finally:
        os.close(fd)


def _replace(target: Target, data: bytes, option: str = "-o") -> None:
    """Temp file beside the target, renamed over it; an OS refusal (no space, a read-only or pseudo
    filesystem such as /proc or /sys, no write permission on the directory) is a one-line error."""
    try:
        _replace_unchecked(target, data)
    except OSError as exc:
        raise ConfigError(option, f"{target.path[:200]}: cannot write it ({exc.strerror or exc})") from None


def _replace_unchecked(target: Target, data: bytes) -> None:
    directory = os.path.dirname(absolute(target.path))
    fd, scratch = tempfile.mkstemp(dir=directory, prefix=".linerate-", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        if target.mode is not None:
            os.chmod(scratch, target.mode)
        else:
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(scratch, 0o666 & ~umask)
        os.replace(scratch, target.path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(scratch)
        raise
