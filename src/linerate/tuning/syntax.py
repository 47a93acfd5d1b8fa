"""Line syntax the tool reading a file enforces, whatever the name on the line: a line it rejects does
nothing, known knob or not.

loader.conf: FreeBSD's Lua loader (stand/lua, in the 12.1 and 14.0 trees linerate read) parses every line in
stand/lua/config.lua, config.parse(): a line must match `^%s*KEY%s*=%s*VALUE%s*(.*)` where VALUE is
first tried as QVALEXPR `"(.*)"` (a quoted value, up to the last quote of the line) and then as
WORDEXPR `([-%w%d][-%w%d_.]*)` (an unquoted word), and the rest `(.*)` must pass isValidComment:
empty or a `#` comment. Anything else prints "Malformed line (N)" and the line is skipped — module
directives (fib_dxr_load="YES with its closing quote missing) exactly like tunables. Quoted from
FreeBSD 14.0's stand/lua/config.lua; 12.1's is stricter still (QVALEXPR `"([%w%s%p]-)"`, WORDEXPR
`([%w]+)`: an unquoted -1 is malformed there), so what this module rejects is rejected by both.

sysctl.conf: a number followed by words (a comment without '#', '0 (default 0)') is rejected as an
invalid integer by FreeBSD's `sysctl -f` (sbin/sysctl/sysctl.c: strtol must end the value) and by
Linux's proc handlers; several numbers (tcp_rmem = 4096 87380 ...) are fine on Linux.
"""

from __future__ import annotations

import re

from linerate.tuning.parsers import Setting

RUNTIME_KINDS = ("sysctl", "config_xml")
NUMBER = re.compile(r"^[-+]?(0x[0-9a-fA-F]+|\d+)$")

# Lua patterns of stand/lua/config.lua as Python regexes: %w is [A-Za-z0-9], %s whitespace
_LOADER_KEY = r"\s*(?:[-A-Za-z0-9_]+_(?:load|name|type|flags|before|after|error)|[A-Za-z0-9][A-Za-z0-9_.\-]*)\s*=\s*"
_LOADER_QUOTED = re.compile(r"^" + _LOADER_KEY + r'"(?P<value>.*)"\s*(?P<rest>.*)$')
_LOADER_WORD = re.compile(r"^" + _LOADER_KEY + r"(?P<value>[-A-Za-z0-9][-A-Za-z0-9_.]*)\s*(?P<rest>.*)$")
_LOADER_EXEC = re.compile(r'^\s*exec\s*=\s*"(?P<value>.*)"\s*(?P<rest>.*)$')


def _comment_or_nothing(rest: str) -> bool:
    return not rest.strip() or rest.lstrip().startswith("#")


def loader_line_problem(raw: str) -> str | None:
    """None if FreeBSD's loader accepts the loader.conf line, else what is wrong with it."""
    line = raw.strip()
    if not line or line.startswith("#"):
        return None
    for pattern in (_LOADER_EXEC, _LOADER_QUOTED, _LOADER_WORD):
        match = pattern.match(line)
        if match:
            if _comment_or_nothing(match.group("rest")):
                return None
            return f"text after the value ('{match.group('rest').strip()[:40]}') that is not a '#' comment"
    _, _, value = line.partition("=")
    value = value.strip()
    if value.count('"') % 2:
        return "its quotes do not balance (a closing \" is missing)"
    if value and not value.startswith('"'):
        return "an unquoted value that is not one word (letters, digits, - _ .); quote it"
    return "not KEY=VALUE as the loader reads it"


def sysctl_value_problem(s: Setting) -> str | None:
    """What `sysctl -f` (or the Linux proc handler) rejects in a runtime line's value, any name."""
    if s.kind not in RUNTIME_KINDS:
        return None
    tokens = s.value.split()
    if len(tokens) > 1 and NUMBER.match(tokens[0]) and not all(NUMBER.match(tok) for tok in tokens[1:]):
        return f"'{s.value}' is a number followed by other text"
    return None
