"""Whole numbers from text linerate did not write: a host's output, a file, a command line.

`str.isdigit()` is true for '٣' (Arabic-Indic three), '²' and other Unicode digits, and `int()`
accepts some of them: a DUT printing `١٠٠٠` for a link speed, or `--repetitions ٣`, was read as a
number (or crashed on '²'). Every whole number linerate reads from outside goes through
`ascii_int`: ASCII digits only, bounded length, so a 10,000-digit line is never converted either.
"""

from __future__ import annotations

import re

MAX_DIGITS = 20  # 2**64 has 20 digits: no counter or id linerate reads is longer
_ASCII_INT = re.compile(r"[0-9]{1,%d}" % MAX_DIGITS)
_SIGNED_INT = re.compile(r"[-+]?[0-9]{1,%d}" % MAX_DIGITS)


def ascii_int(text: str, *, signed: bool = False) -> int | None:
    """The integer `text` (surrounding white space ignored) spells in ASCII digits, else None."""
    text = text.strip()
    return int(text) if (_SIGNED_INT if signed else _ASCII_INT).fullmatch(text) else None


def is_ascii_int(text: str) -> bool:
    return _ASCII_INT.fullmatch(text) is not None
