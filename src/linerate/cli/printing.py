"""The one printing path: everything the CLI writes to the terminal goes through these streams,
which show control characters as \\xNN instead of obeying them. Text from outside — a DUT's
output, a file's content, a name — can then neither retitle the terminal, recolour it, move the
cursor nor hide a line with a carriage return. Newline and tab pass; everything else below 0x20,
DEL and the C1 range (0x80-0x9f, also terminal controls) is escaped.

`main()` installs them around every command (`guarded()`); rich's progress bar is given the raw
stream (`raw_stderr()`) because it draws with escapes of its own, and escapes its text itself
(cli/progress.py)."""

from __future__ import annotations

import contextlib
import re
import sys
from collections.abc import Iterator

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def escape_controls(text: str) -> str:
    """Control characters (except newline and tab) as \\xNN."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


class SafeStream:
    """A text stream that writes through `raw` with control characters escaped. (Not an IOBase:
    that would close `raw` when the wrapper is collected.)"""

    def __init__(self, raw):
        self.raw = raw

    def write(self, text: str) -> int:
        self.raw.write(escape_controls(text))
        return len(text)

    def flush(self) -> None:
        self.raw.flush()

    def isatty(self) -> bool:
        return self.raw.isatty()

    def fileno(self) -> int:
        return self.raw.fileno()

    def writable(self) -> bool:
        return True

    def writelines(self, lines) -> None:
        for line in lines:
            self.write(line)

    @property
    def encoding(self) -> str:
        return getattr(self.raw, "encoding", "utf-8")

    @property
    def errors(self) -> str:
        return getattr(self.raw, "errors", "strict")

    @property
    def closed(self) -> bool:
        return getattr(self.raw, "closed", False)

    def close(self) -> None:
        self.raw.close()


def shown(name: object) -> str:
    """A name from the user or a file (an output path, an experiment name) inside one printed line:
    a newline or tab in it shown as \\xNN too, so the line stays one line."""
    return re.sub(r"[\n\t]", lambda m: f"\\x{ord(m.group()):02x}", str(name))


def raw_stderr():
    """The stream under the safe stderr (for a progress bar that draws with escapes)."""
    return sys.stderr.raw if isinstance(sys.stderr, SafeStream) else sys.stderr


@contextlib.contextmanager
def guarded() -> Iterator[None]:
    """sys.stdout and sys.stderr escape control characters while a command runs."""
    saved = sys.stdout, sys.stderr
    sys.stdout = saved[0] if isinstance(saved[0], SafeStream) else SafeStream(saved[0])
    sys.stderr = saved[1] if isinstance(saved[1], SafeStream) else SafeStream(saved[1])
    try:
        yield
    finally:
        with contextlib.suppress(Exception):
            sys.stdout.flush()
        sys.stdout, sys.stderr = saved
