"""Parse tuning files into Settings: sysctl.conf / sysctl.d, loader.conf, rc.conf (ifconfig lines)
and the tunables and offload switches of a pfSense/OPNsense config.xml. Pure: text in, settings out.
Garbage (binary, giant lines, broken XML) raises ConfigError naming the file. A config.xml is a
user-supplied file: it is parsed through defusedxml, which refuses entity declarations (billion
laughs, external entities: XXE) and external DTDs; a real config.xml has none."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

from linerate.errors import ConfigError
from linerate.inputs import read_bytes

MAX_FILE_BYTES = 5_000_000
MAX_LINE_CHARS = 65_536
KINDS = ("sysctl", "loader", "rc_conf", "config_xml")
IFCONFIG_FLAGS = ("tso", "lro", "rxcsum", "txcsum", "rxcsum6", "txcsum6", "tso4", "tso6", "vlanhwtso")
GUI_SWITCHES = ("disablechecksumoffloading", "disablesegmentationoffloading", "disablelargereceiveoffloading")


@dataclass(frozen=True)
class Setting:
    file: str
    line: int
    kind: str  # where it was written: sysctl | loader | rc_conf | config_xml
    key: str
    value: str
    raw: str
    interface: str | None = None  # rc.conf ifconfig flags
    product: str | None = None  # config.xml: pfsense | opnsense (its root element)


def guess_kind(path: str) -> str:
    name = Path(path).name.lower()
    if name.endswith(".xml"):
        return "config_xml"
    if "loader" in name:
        return "loader"
    if "rc.conf" in name or name.startswith("rc_"):
        return "rc_conf"
    return "sysctl"


def read_text(path: str) -> str:
    data = read_bytes(path, MAX_FILE_BYTES, "tuning file")
    if b"\x00" in data:
        raise ConfigError(path, "binary data (NUL bytes); expected a text configuration file")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        text = data.decode("latin-1")
    for number, line in enumerate(text.splitlines(), 1):
        if len(line) > MAX_LINE_CHARS:
            raise ConfigError(f"{path}:{number}", f"line of {len(line)} characters; not a configuration line")
    return text


def _strip_comment(line: str) -> str:
    # '#' starts a comment unless inside quotes.
    out, quote = [], None
    for char in line:
        if char in "\"'":
            quote = None if quote == char else (quote or char)
        if char == "#" and quote is None:
            break
        out.append(char)
    return "".join(out).strip()


def _unquote(value: str) -> str:
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        return value[1:-1]
    return value


KEY_RE = re.compile(r"^-?([A-Za-z0-9_.\-/]+)\s*=\s*(.*)$")


def parse_keyvalue(text: str, path: str, kind: str) -> list[Setting]:
    settings = []
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith((";", "#")):
            continue
        body = _strip_comment(line)
        match = KEY_RE.match(body)
        if not match:  # reported by the audit (LR014), so one stray line does not hide the rest
            settings.append(Setting(path, number, "malformed", body[:80], "", raw.strip()[:200]))
            continue
        key = match.group(1).replace("/", ".")  # sysctl.d allows net/ipv4/ip_forward
        settings.append(Setting(path, number, kind, key, _unquote(match.group(2)), raw.strip()))
    return settings


def parse_rc_conf(text: str, path: str) -> list[Setting]:
    settings = []
    for setting in parse_keyvalue(text, path, "rc_conf"):
        match = re.match(r"^ifconfig_([A-Za-z0-9_]+?)(_alias\d+|_ipv6)?$", setting.key)
        if not match:
            settings.append(setting)
            continue
        interface = match.group(1)
        for token in setting.value.split():
            flag = token.lstrip("-")
            if flag in IFCONFIG_FLAGS:
                settings.append(Setting(path, setting.line, "rc_conf", flag, "off" if token.startswith("-") else "on",
                                        setting.raw, interface))
        settings.append(Setting(path, setting.line, "rc_conf", setting.key, setting.value, setting.raw, interface))
    return settings


def parse_config_xml(text: str, path: str) -> list[Setting]:
    # imported here: only a config.xml needs it (the other formats and the CLI's start-up do not)
    from defusedxml import DefusedXmlException
    from defusedxml.ElementTree import fromstring

    try:
        root = fromstring(text)
    except ET.ParseError as exc:
        raise ConfigError(path, f"invalid XML: {exc}") from None
    except DefusedXmlException as exc:
        raise ConfigError(path, f"refused: the file declares XML entities or an external DTD "
                          f"({type(exc).__name__}); a pfSense/OPNsense config.xml has none: export it again "
                          "(Diagnostics > Backup & Restore)") from None
    if root.tag not in ("pfsense", "opnsense"):
        raise ConfigError(path, f"root element <{root.tag}> is not <pfsense> or <opnsense>; is this a config.xml?")
    lines = text.splitlines()
    # one pass over the lines (linear in the file): where each tag and each tunable's text appear
    first_line: dict[str, int] = {}
    tunable_lines: dict[str, list[int]] = {}
    for number, line in enumerate(lines, 1):
        for name in re.findall(r">\s*([^<>\s]+)\s*</tunable", line):
            tunable_lines.setdefault(name, []).append(number)
        for tag in re.findall(r"<([A-Za-z]+)", line):
            first_line.setdefault(tag, number)
    taken: dict[str, int] = {}

    def tunable_line(name: str) -> int:  # the n-th item of a name is on the n-th line that holds it
        found = tunable_lines.get(name, [0])
        taken[name] = taken.get(name, -1) + 1
        return found[min(taken[name], len(found) - 1)]

    settings = []
    for item in root.iter("item"):
        tunable = (item.findtext("tunable") or "").strip()
        if not tunable:
            continue
        value = (item.findtext("value") or "").strip()
        settings.append(Setting(path, tunable_line(tunable), "config_xml", tunable, value,
                                f"<tunable>{tunable}</tunable><value>{value}</value>", product=root.tag))
    system = root.find("system")
    for switch in GUI_SWITCHES:
        present = system is not None and system.find(switch) is not None
        settings.append(Setting(path, first_line.get(switch, 0) if present else first_line.get("system", 0), "config_xml", switch,
                                "present" if present else "absent",
                                f"<{switch}/>" if present else f"<system> has no <{switch}/>", product=root.tag))
    return settings


def parse_file(path: str, kind: str | None = None) -> list[Setting]:
    kind = kind or guess_kind(path)
    text = read_text(path)
    if kind == "config_xml":
        return parse_config_xml(text, path)
    if kind == "rc_conf":
        return parse_rc_conf(text, path)
    return parse_keyvalue(text, path, kind)


def kernel_config_options(path: str) -> tuple[str, frozenset[str]]:
    """(the config's name, the options it turns on) of a FreeBSD kernel configuration file (config(5)):
    `options A B=1` and `device x` lines (a device's DEV_X macro too), less `nooptions` / `nodevice`;
    `include GENERIC` needs nothing here (what GENERIC has is what linerate assumes anyway)."""
    text = read_text(path)
    ident, enabled = Path(path).name, set()
    for line in text.splitlines():
        words = line.split("#", 1)[0].replace(",", " ").split()
        if len(words) < 2:
            continue
        names = [w.split("=", 1)[0] for w in words[1:]]
        if words[0] == "ident":
            ident = words[1].strip('"')
        elif words[0] == "options":
            enabled.update(names)
        elif words[0] == "device":
            enabled.update(names + [f"DEV_{n.upper()}" for n in names])
        elif words[0] in ("nooptions", "nodevice"):
            enabled.difference_update(names)
    if not enabled:
        raise ConfigError("--kernel-config", f"{path} has no `options` or `device` line: give a FreeBSD kernel "
                          "configuration file (config(5)), such as /usr/src/sys/amd64/conf/MYKERNEL")
    return ident, frozenset(enabled)
