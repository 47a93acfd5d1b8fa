"""Audit settings against the catalog for one OS, version and role -> Findings.

Codes are stable (scripts may rely on them):
  LR001 obsolete: removed in this version (with its replacement)      warning
  LR002 unknown name (with "did you mean")                             warning
  LR003 wrong place: loader-only in sysctl.conf, or runtime-only in loader.conf   warning
  LR004 value of the wrong type or out of range                        error
  LR005 harmful for the role                                           warning
  LR006 security trade-off                                             warning
  LR007 conflicting duplicate                                          warning
  LR008 not yet available in this version                              warning
  LR009 superseded by a newer knob (still works)                       info
  LR010 already the default on this version                            info
  LR011 a knob of another operating system                             warning
  LR012 repeated with the same value                                   info
  LR013 differs from the recommendation for the role                   info
  LR014 a line that is not name=value (the tool reading it rejects it)  error
  LR015 exists on this release; linerate has no advice for it         info
  LR016 linerate cannot confirm the name exists on this release       info

One finding per line and problem: a line that does nothing (LR001, LR002, LR011, LR014) gets only that
finding; "move it" (LR003) and "change the value" (LR005, LR013) outrank "already the default, the line
can go" (LR010). CONTRADICTS lists the pairs that never share a line.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass

from linerate.tuning.catalog import Catalog, Knob
from linerate.tuning.names import all_lists, close_names, name_list
from linerate.tuning.parsers import Setting
from linerate.tuning.versions import fmt, parse_version

SEVERITY_RANK = {"info": 0, "warning": 1, "error": 2}
RUNTIME_KINDS = ("sysctl", "config_xml")  # pfSense System Tunables are applied as runtime sysctls
SOLE = ("LR001", "LR002", "LR011", "LR014")  # the line does nothing: no other advice about it
OUTRANKS = {"LR003": {"LR010", "LR013"}, "LR005": {"LR010"}, "LR013": {"LR010"}}
CONTRADICTS = {frozenset(pair) for pair in [("LR001", "LR003"), ("LR001", "LR010"), ("LR001", "LR013"),
                                            ("LR001", "LR005"), ("LR003", "LR010"), ("LR010", "LR013"),
                                            ("LR010", "LR005"), ("LR002", "LR003"), ("LR011", "LR003")]}


@dataclass(frozen=True)
class Finding:
    code: str
    severity: str
    file: str
    line: int
    key: str
    evidence: str
    message: str
    fix: str

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class Context:
    os_name: str
    family: str
    version: tuple[int, ...] | None
    role: str | None = None
    virtual: bool = False
    os_version: str | None = None  # as the user gave it (2.6.0 for pfSense), for messages

    @property
    def roles(self) -> set[str]:
        roles = {self.role} if self.role else set()
        return roles | ({"vm-guest"} if self.virtual else set())

    def label(self) -> str:
        if self.version is None:
            return self.os_name
        if self.os_name == self.family:
            return f"{self.os_name} {fmt(self.version)}"
        return f"{self.os_name} {self.os_version} ({self.family} {fmt(self.version)})"


def _finding(code: str, severity: str, s: Setting, message: str, fix: str) -> Finding:
    return Finding(code, severity, s.file, s.line, s.key, s.raw, message, fix)


def _version_applies(rule: str | None, version: tuple[int, ...] | None) -> bool:
    if not rule or version is None:
        return True
    match = re.match(r"^(<=|>=|<|>)\s*([\d.]+)$", rule.strip())
    if not match:
        return True
    op, bound = match.group(1), parse_version(match.group(2))
    return {"<": version < bound, "<=": version <= bound, ">": version > bound, ">=": version >= bound}[op]


def check_value(knob: Knob, value: str) -> str | None:
    """None if the value fits the knob's type and range, else what is wrong."""
    if knob.type in ("int", "bool"):
        if not re.fullmatch(r"-?\d+", value.strip()):
            return f"'{value}' is not a whole number"
        number = int(value)
        low, high = (0, 1) if knob.type == "bool" else (knob.min, knob.max)
        if (low is not None and number < low) or (high is not None and number > high):
            return f"{number} is out of range"
    if knob.choices and value not in knob.choices:
        return f"'{value}' is not one of {', '.join(knob.choices)}"
    if knob.pattern and not re.match(knob.pattern, value):
        return f"'{value}' does not have the expected form"
    return None


def _lifecycle(knob: Knob, s: Setting, ctx: Context) -> list[Finding]:
    out = []
    removed, introduced = knob.removed_in(), knob.introduced_in()
    if removed and ctx.version and ctx.version >= removed:
        fix = f"delete it; use {knob.replaced_by} instead" if knob.replaced_by else "delete the line"
        out.append(_finding("LR001", "warning", s, f"{s.key} was removed in {ctx.family} {knob.removed}: "
                            f"this line does nothing on {ctx.label()}", fix))
    elif introduced and ctx.version and ctx.version < introduced:
        out.append(_finding("LR008", "warning", s, f"{s.key} only exists from {ctx.family} {knob.introduced} on, "
                            f"not on {ctx.label()}", "delete it, or upgrade"))
    elif knob.replaced_by and not removed:
        out.append(_finding("LR009", "info", s, f"{s.key} is superseded by {knob.replaced_by}",
                            f"prefer {knob.replaced_by}"))
    return out


def _placement(knob: Knob, s: Setting) -> list[Finding]:
    if knob.location == "loader" and s.kind in RUNTIME_KINDS:
        where = "a pfSense/OPNsense System Tunable" if s.kind == "config_xml" else "sysctl.conf"
        return [_finding("LR003", "warning", s, f"{s.key} is a boot-time loader tunable; set in {where} it does "
                         "nothing at runtime", f'move it to /boot/loader.conf(.local) as {s.key}="{s.value}"')]
    if knob.location == "sysctl" and s.kind == "loader":
        return [_finding("LR003", "warning", s, f"{s.key} is a runtime sysctl, not a loader tunable; "
                         "loader.conf does not set it", f"move it to /etc/sysctl.conf as {s.key}={s.value}")]
    return []


def _values(knob: Knob, s: Setting, ctx: Context) -> list[Finding]:
    out = []
    problem = check_value(knob, s.value) if knob.location not in ("rc_conf", "gui") else None
    if problem:
        limits = (f" (allowed {'' if knob.min is None else knob.min}..{'' if knob.max is None else knob.max})"
                  if knob.min is not None or knob.max is not None else "")
        out.append(_finding("LR004", "error", s, f"{s.key}: {problem}{limits}", "fix the value"))
        return out
    for role in sorted(ctx.roles):
        rule = knob.harmful.get(role)
        if rule and s.value in rule.values and knob.type == "gui_checkbox":
            out.append(_finding("LR005", "warning", s, f"<{s.key}> is {s.value} ({knob.description}); harmful for a "
                                f"{role}: {rule.why}", "tick the box in System > Advanced > Networking"))
        elif rule and s.value in rule.values:
            out.append(_finding("LR005", "warning", s, f"{s.key}={s.value} is harmful for a {role}: {rule.why}",
                                "change or remove it"))
    if knob.security and s.value in knob.security.values:
        out.append(_finding("LR006", "warning", s, f"security trade-off: {knob.security.why}",
                            "keep the default unless you accept the risk"))
    default = knob.default_for(ctx.version)
    if default is not None and default == s.value:
        out.append(_finding("LR010", "info", s, f"{s.key}={s.value} is already the documented default "
                            f"(latest source at or before {ctx.label()})", "the line can go"))
    for role in sorted(ctx.roles):
        rec = knob.recommend.get(role)
        if rec and rec.value != s.value and _version_applies(rec.versions, ctx.version) and not rec.value.startswith("on "):
            out.append(_finding("LR013", "info", s, f"for a {role} linerate suggests {s.key}={rec.value}: {rec.why}",
                                f"consider {rec.value}"))
    return out


def audit_setting(catalog: Catalog, s: Setting, ctx: Context) -> list[Finding]:
    if s.kind == "malformed":
        return [_finding("LR014", "error", s, "not a name=value line; sysctl(8)/loader(8) will reject it",
                         "comment it out with '#' or fix it")]
    if s.kind == "rc_conf" and s.interface is None and not s.key.startswith("ifconfig_"):
        return []  # other rc.conf variables are services, not tuning knobs
    if s.kind == "rc_conf" and s.key.startswith("ifconfig_"):
        return []
    knob = catalog.find(s.key, ctx.family)
    if knob is None:
        return _not_in_catalog(catalog, s, ctx)
    found = _one_problem(_lifecycle(knob, s, ctx) + _placement(knob, s) + _values(knob, s, ctx))
    names = name_list(ctx.family, ctx.version)
    listed = names.lookup(s.key) if names else None
    if listed and listed[0] == "unnamed" and not any(f.code in SOLE for f in found):
        found.append(_unnamed(s, ctx, listed[1], names.label()))
    return found


def _unnamed(s: Setting, ctx: Context, origin: str, label: str) -> Finding:
    return _finding("LR016", "info", s, f"{s.key}: its kernel number exists but sysctl(8) has no name for it in "
                    f"{origin} (the {label}); linerate cannot confirm it is accepted on {ctx.label()}",
                    f"check with `sysctl {s.key}` on the box")


def _one_problem(found: list[Finding]) -> list[Finding]:
    sole = [f for f in found if f.code in SOLE]
    if sole:
        return sole[:1]
    codes = {f.code for f in found}
    beaten = set().union(*(OUTRANKS.get(code, set()) for code in codes))
    return [f for f in found if f.code not in beaten]


def _not_in_catalog(catalog: Catalog, s: Setting, ctx: Context) -> list[Finding]:
    names = name_list(ctx.family, ctx.version)
    listed = names.lookup(s.key) if names else None
    where_list = f"the {names.label()}" if names else "no name list"
    if listed and listed[0] != "unnamed":
        return [_finding("LR015", "info", s, f"{s.key} exists on {ctx.family} (listed in {where_list}, from "
                         f"{listed[1]}); linerate has no advice for it", "none needed")]
    if listed:
        return [_unnamed(s, ctx, listed[1], names.label())]
    candidates = set(names.entries) if names else set()
    candidates |= {k.name for k in catalog.knobs if k.os == ctx.family}
    hints = close_names(s.key, candidates, ctx.family)
    if hints:
        return [_finding("LR002", "warning", s, f"{s.key} does not exist on {ctx.label()} (not in {where_list} nor "
                         f"linerate's catalog); did you mean {' or '.join(hints)}?", f"replace with {hints[0]}")]
    other = _other_os(catalog, s.key, ctx.family)
    if other and names and (names.covers_parent(s.key) or not _family_has_branch(catalog, names, s.key)):
        branch = ".".join(s.key.split(".")[:2])
        why = (f"{where_list} has other names under {s.key.rsplit('.', 1)[0]} but not this one"
               if names.covers_parent(s.key) else f"{ctx.family} has no {branch} branch at all")
        return [_finding("LR011", "warning", s, f"{s.key} is a {other} name; {why}",
                         "remove it; look up the equivalent with `linerate explain`")]
    return [_finding("LR016", "info", s, f"linerate cannot confirm {s.key} exists on {ctx.label()}: it is in "
                     f"neither {where_list} nor the catalog" + (f" (it is a {other} name)" if other else ""),
                     f"check with `sysctl -d {s.key}` on the box")]


def _family_has_branch(catalog: Catalog, names, key: str) -> bool:
    branch = ".".join(key.split(".")[:2]) + "."
    return (any(name.startswith(branch) for name in names.entries)
            or any(k.os == names.os and k.name.startswith(branch) for k in catalog.knobs))


def _other_os(catalog: Catalog, name: str, family: str) -> str | None:
    knob = next((k for k in catalog.knobs if k.os != family and k.matches(name)), None)
    if knob:
        return knob.os
    return next((n.os for n in all_lists() if n.os != family and n.lookup(name)), None)


def _duplicates(settings: list[Setting]) -> list[Finding]:
    out, seen = [], {}
    for s in settings:
        if s.kind == "malformed":
            continue
        key = (s.key, s.interface, s.kind == "loader")
        if s.kind == "config_xml" and s.value in ("present", "absent"):
            continue
        if key in seen:
            first = seen[key]
            if first.value != s.value:
                out.append(_finding("LR007", "warning", s, f"{s.key} is set twice with different values: "
                                    f"{first.value!r} at {first.file}:{first.line}, {s.value!r} here; the later wins",
                                    "keep one line"))
            else:
                out.append(_finding("LR012", "info", s, f"{s.key} repeats {first.file}:{first.line}", "keep one line"))
        else:
            seen[key] = s
    return out


def _virtio_checks(settings: list[Setting], ctx: Context) -> list[Finding]:
    """Seed 004: on virtio (vtnet) with pf, hardware checksum offload must be off."""
    if "vm-guest" not in ctx.roles or ctx.family != "freebsd":
        return []
    out = []
    rc_ifaces = {s.interface: s for s in settings if s.kind == "rc_conf" and s.key.startswith("ifconfig_vtnet")}
    for iface, line in rc_ifaces.items():
        flags = {s.key: s.value for s in settings if s.interface == iface and s.key in ("rxcsum", "txcsum")}
        if flags.get("rxcsum") != "off" or flags.get("txcsum") != "off":
            out.append(_finding("LR005", "warning", line, f"{iface} is virtio: with pf, checksum offload left on "
                                "forwarded ~5 Mbit/s instead of ~300 in seed 004", f"add -rxcsum -txcsum to {line.key}"))
    return out


def audit(catalog: Catalog, settings: list[Setting], ctx: Context) -> list[Finding]:
    findings = [f for s in settings for f in audit_setting(catalog, s, ctx)]
    findings += _duplicates(settings) + _virtio_checks(settings, ctx)
    return sorted(findings, key=lambda f: (f.file, f.line, -SEVERITY_RANK[f.severity], f.code))


def exit_code(findings: list[Finding]) -> int:
    return 1 if any(SEVERITY_RANK[f.severity] >= SEVERITY_RANK["warning"] for f in findings) else 0
