"""Reading the files a user names (experiment TOML, iperf3 JSON, tuning files): regular files
only, opened without blocking (a FIFO would hang a plain open()), at most a stated size (/dev/zero
never ends), read through one bounded read. Every refusal is a ConfigError naming the file."""

from __future__ import annotations

import os
import stat

from linerate.errors import ConfigError


def read_bytes(path: str | os.PathLike[str], max_bytes: int, what: str = "file") -> bytes:
    name = os.fspath(path)
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        raise ConfigError(name, "no such file") from None
    except IsADirectoryError:
        raise ConfigError(name, "is a directory; give a file") from None
    except OSError as exc:
        raise ConfigError(name, f"cannot open: {exc.strerror}") from None
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise ConfigError(name, "is a directory; give a file")
        if not stat.S_ISREG(info.st_mode):
            raise ConfigError(name, f"is not a regular file (a device, FIFO or socket); give a {what}")
        if info.st_size > max_bytes:
            raise ConfigError(name, f"{info.st_size} bytes is too large for a {what} (limit {max_bytes} bytes)")
        try:
            data = os.read(fd, max_bytes + 1)
        except OSError as exc:
            raise ConfigError(name, f"cannot read: {exc.strerror}") from None
    finally:
        os.close(fd)
    if len(data) > max_bytes:
        raise ConfigError(name, f"too large for a {what} (limit {max_bytes} bytes)")
    return data


def read_text(path: str | os.PathLike[str], max_bytes: int, what: str = "file") -> str:
    data = read_bytes(path, max_bytes, what)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise ConfigError(os.fspath(path), f"not UTF-8 text; expected a {what}") from None


def parse_toml(text: str, source: str, what: str) -> dict:
    """tomllib.loads with its errors as one ConfigError naming the file (a RecursionError from
    absurd nesting included)."""
    import tomllib

    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(source, f"not valid TOML: {exc}") from None
    except RecursionError:
        raise ConfigError(source, f"nested too deeply; not {what}") from None
