"""Is a path one that no other user could have steered? Every file linerate writes on this machine
(results database, reports, exports, known_hosts, its state directories) goes through a folder; when
linerate runs as root, a symbolic link another user planted anywhere on the way — not only at the
last name — would carry root's write into a place that user chose (/root/.ssh, /etc/sudoers.d).

The rule, the one OpenSSH's StrictModes and Linux's fs.protected_symlinks apply, here to every
component walked from `/`:
- a directory on the way belongs to root or to this user, and no one else may write to it — unless
  it is sticky (/tmp, /var/tmp), where others may add names but not replace ours;
- a symbolic link on the way is followed only when root or this user made it, in a folder no other
  user can write (in a sticky folder: only one this user made); its target is then walked the same way;
- `..` is the parent of where the walk *is* (a link's target once followed), as the kernel takes it —
  never removed from the text first: `/tmp/L/../x` is beside L's target, not /tmp/x;
- the walk stops at the first name that does not exist yet: what follows is made by linerate inside
  the last trusted folder.
"""

from __future__ import annotations

import os
import stat

from linerate.errors import ConfigError

MAX_LINKS = 40  # as the kernel's own limit on links followed in one lookup


def absolute(path: str) -> str:
    """The path from `/` as the kernel will take it: a relative one joined to the working directory,
    nothing normalised (os.path.abspath would drop `name/..` before a link named `name` is followed)."""
    if path.startswith("/"):
        return path
    try:
        here = os.getcwd()
    except FileNotFoundError:
        raise ConfigError("working directory", f"it was removed, so {path[:200]!r} leads nowhere; cd to a folder "
                          "that exists, or give an absolute path") from None
    return here.rstrip("/") + "/" + path


def _owner_ok(info: os.stat_result) -> bool:
    return info.st_uid in (0, os.geteuid())


def others_may_write(info: os.stat_result) -> bool:
    return bool(info.st_mode & (stat.S_IWGRP | stat.S_IWOTH))


def foreign_file(path: str, info: os.stat_result) -> str | None:
    """Why an existing file at `path` must not be written over or into as this user (None: it may): in a
    folder others can write (/tmp), one another user made — the rule Linux's fs.protected_regular
    applies there, here whatever that setting is — or one with a second name (a hard link someone made
    to a file of ours). In a folder only root or this user can write, no one else could have put it."""
    folder = os.stat(os.path.dirname(absolute(path)))
    if not others_may_write(folder):
        return None
    if info.st_uid != os.geteuid():
        return f"{path[:200]} is a file another user (uid {info.st_uid}) made in a folder others can write"
    if stat.S_ISREG(info.st_mode) and info.st_nlink > 1:  # another name of it, made by anyone, elsewhere
        return f"{path[:200]} has another name (a hard link) and is in a folder others can write"
    return None


def kept_mode(info: os.stat_result) -> int:
    """The permission bits a replaced file keeps: never set-id or sticky bits, and no write for group or
    others on a file this user did not make."""
    mode = stat.S_IMODE(info.st_mode) & 0o777
    return mode if info.st_uid == os.geteuid() else mode & ~0o022


def trusted_link(link: os.stat_result, folder: os.stat_result) -> bool:
    """A link this user may follow: made by this user (or root), in a folder only its owner (root or
    this user) can write, or a sticky one where only the link's own maker could have put it."""
    if not _owner_ok(link):
        return False
    if others_may_write(folder):
        return bool(folder.st_mode & stat.S_ISVTX) and link.st_uid == os.geteuid()
    return _owner_ok(folder)


def untrusted_component(folder: str, make: int | None = None) -> str | None:
    """Why `folder` (and every folder and link on the way to it) could have been steered by another
    user — a short reason naming the component — or None when it could not. Changes nothing, unless
    `make` (a mode): then each folder missing on the way is made, one at a time, inside the folder just
    walked, never through a name someone put there in between (mkdir -p, without its races) — and only
    once the whole path is judged. A `..` after a name that does not exist yet is refused: where it
    leads is not known until that name is made."""
    if make is not None:
        whole = untrusted_component(folder)
        if whole is not None:
            return whole
    current = "/"
    todo = [part for part in absolute(folder).split("/") if part][::-1]  # a stack: next on top
    links = 0
    while todo:
        name = todo.pop()
        if name == ".":
            continue
        if name == "..":
            current = os.path.dirname(current)
            continue
        candidate = os.path.join(current, name)
        try:
            info = os.lstat(candidate)
            here = os.lstat(current)
        except FileNotFoundError:
            if ".." in todo:
                return f"{candidate[:200]} does not exist, and a '..' follows it; give the path without '..'"
            if make is None:
                return None  # not made yet: linerate makes it inside `current`, already walked
            try:
                os.mkdir(candidate, make)
            except FileExistsError:
                pass  # made in between, by someone: looked at again below like anything found
            except OSError as exc:
                return f"cannot make {candidate[:200]} ({exc.strerror})"
            todo.append(name)
            continue
        except NotADirectoryError:
            return None
        except OSError as exc:
            return f"{candidate[:200]} cannot be inspected ({exc.strerror})"
        if stat.S_ISLNK(info.st_mode):
            if not trusted_link(info, here):
                return (f"{candidate[:200]} is a symbolic link another user made, or in a folder others can write "
                        "(one planted there would be followed)")
            links += 1
            if links > MAX_LINKS:
                return f"{candidate[:200]}: too many symbolic links"
            target = os.readlink(candidate)
            if target.startswith("/"):
                current = "/"
            todo.extend(part for part in target.split("/")[::-1] if part)
            continue
        if not stat.S_ISDIR(info.st_mode):
            return None  # a file where a folder should be: the caller's own open or mkdir says so
        if not _owner_ok(info):
            return f"{candidate[:200]} belongs to another user (uid {info.st_uid})"
        if others_may_write(info) and not info.st_mode & stat.S_ISVTX:
            return f"{candidate[:200]} may be written by other users (mode {stat.S_IMODE(info.st_mode):04o})"
        current = candidate
    return None
