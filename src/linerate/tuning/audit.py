"""Audit settings against the catalog for one OS, version and role -> Findings.

Codes are stable (scripts may rely on them):
  LR001 obsolete: removed in this version (with its replacement)      warning
  LR002 unknown name (with "did you mean")                             warning
  LR003 wrong place: loader-only in sysctl.conf, or runtime-only in loader.conf   warning
  LR004 value of the wrong type or out of range                        error
  LR005 harmful for the role                                           warning
  LR006 security trade-off (advice: the value is valid)                 info
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
  LR017 a value the kernel will not take as meant: pages written as bytes, a read-only name, a
        tcp(4) millisecond timer written in seconds, a value the kernel's handler rejects or cuts   warning
  LR018 exists only in kernels built with an option the stock kernel lacks (FreeBSD GENERIC)   warning
        (info on pfSense / OPNsense, whose kernels are their own)

One finding per line and problem: a line that does nothing (LR001, LR002, LR011, LR014) gets only that
finding; "move it" (LR003) and "change the value" (LR005, LR013) outrank "already the default, the line
can go" (LR010). CONTRADICTS lists the pairs that never share a line.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass

from linerate.tuning.advice import ARTICLES, check_advice, cites, is_loader_directive
from linerate.tuning.kernel_modules import module_line
from linerate.tuning.catalog import Catalog, Knob, defaults_over
from linerate.tuning.harm import above_netisr_limit, below_lists, ipv6_forwarding_scope
from linerate.tuning.names import all_lists, bracketing_lists, close_names, edit_distance, missing_node, name_list
from linerate.tuning.parsers import Setting
from linerate.tuning.releases import linux_absent, linux_lifecycle, linux_range_problem
from linerate.tuning.values import (fraction_problem, quoted_problem, freebsd_ms_fix, freebsd_ms_problem, harmful_value, lowers_capacity,
                                    rc_service_problem, read_only, unit_problem)
from linerate.tuning.sources import Presence, describe, source_list, span_text
from linerate.tuning.syntax import RUNTIME_KINDS, loader_line_problem, sysctl_value_problem
from linerate.tuning.versions import parse_version, product_release_span, product_releases, product_span

SEVERITY_RANK = {"info": 0, "warning": 1, "error": 2}
# Where each kind of line is applied. pfSense applies System Tunables as runtime sysctls only (pfsense/pfsense
# src/etc/inc/system.inc, activate_sysctls: set_sysctl of every <sysctl><item>); OPNsense applies them at
# run time (src/etc/inc/system.inc, system_sysctl_configure) and also writes every one of them into
# /boot/loader.conf (system_loader_configure), so a boot-time name there is not misplaced.
DEFAULT_MARKERS = ("default", "")  # both products: use the built-in default (system_sysctl_get / activate_sysctls)
SOLE = ("LR001", "LR002", "LR011", "LR014", "LR017")  # the line does nothing: no other advice about it
OUTRANKS = {"LR003": {"LR010", "LR013"}, "LR005": {"LR010", "LR013"}, "LR013": {"LR010"}}
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
    version_high: tuple[int, ...] | None = None  # a release with two kernels (OpenWrt 18.06: 4.9..4.14)
    kernel: tuple[str, frozenset[str]] | None = None  # FreeBSD: (config name, its options) of a custom kernel

    @property
    def roles(self) -> set[str]:
        roles = {self.role} if self.role else set()
        return roles | ({"vm-guest"} if self.virtual else set())

    @property
    def span(self) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """The releases judged: the one given, else every release of the product linerate knows."""
        if self.version:
            return self.version, self.version_high or self.version
        return product_span(self.os_name)

    def label(self) -> str:
        if self.version is None:
            low, high = self.span
            if self.os_name == self.family:
                return f"{self.family} {span_text(low, high)}"
            return f"{product_releases(self.os_name)} ({self.family} {span_text(low, high)})"
        if self.os_name == self.family:
            return f"{self.os_name} {span_text(*self.span)}"
        return f"{self.os_name} {self.os_version} ({self.family} {span_text(*self.span)})"

    def straddle_hint(self) -> str:
        if self.version:  # a release whose targets ship different kernels
            return "its targets run different kernels: `uname -r` on the box tells"
        return "give --os-version to know"

    def product_span(self) -> tuple[tuple[int, ...], tuple[int, ...]] | None:
        """The product releases judged, in the product's own numbering (pfSense 2.7.2), if it has one."""
        if self.os_name == self.family:
            return None
        if self.os_version:
            return parse_version(self.os_version), parse_version(self.os_version)
        return product_release_span(self.os_name)


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


def _still_named(s: Setting, ctx: Context, presence: Presence | None) -> str | None:
    """Where the name is still listed although the catalog says it stopped working: the kernel kept it
    as a no-op (Linux's tcp_low_latency: ip-sysctl.rst 'a legacy option, it has no effect anymore')."""
    if presence is not None and presence.state == "exists":
        return source_list(ctx.family).label()
    names = name_list(ctx.family, ctx.version)
    listed = names.lookup(s.key) if names else None
    return names.label() if listed else None


def _lifecycle(knob: Knob, s: Setting, ctx: Context, presence: Presence | None = None) -> list[Finding]:
    out = []
    removed, introduced = knob.removed_in(), knob.introduced_in()
    low, high = ctx.span
    fix = f"delete it; use {knob.replaced_by} instead" if knob.replaced_by else "delete the line"
    kept = _still_named(s, ctx, presence) if removed else None
    gone = (f"{s.key} does nothing since {ctx.family} {knob.removed} (kept as a no-op: the {kept} still has "
            "the name)" if kept else f"{s.key} was removed in {ctx.family} {knob.removed}")
    if removed and low >= removed:
        every = "" if ctx.version else " (every release linerate judges without --os-version is past that)"
        joint = ", so" if kept else ":"
        out.append(_finding("LR001", "warning", s, f"{gone}{joint} this line does nothing on {ctx.label()}{every}", fix))
    elif removed and high >= removed:
        out.append(_finding("LR001", "info", s, f"{gone}: it does nothing if your box runs {ctx.family} "
                            f"{knob.removed} or later ({ctx.label()} straddles it; {ctx.straddle_hint()})", fix))
    elif introduced and high < introduced:
        out.append(_finding("LR008", "warning", s, f"{s.key} only exists from {ctx.family} {knob.introduced} on, "
                            f"not on {ctx.label()}", "delete it, or upgrade"))
    elif knob.replaced_by and not removed:
        out.append(_finding("LR009", "info", s, f"{s.key} is superseded by {knob.replaced_by}",
                            f"prefer {knob.replaced_by}"))
    return out


LOCATION_WHERE = {"loader": "boot", "sysctl": "runtime", "both": "both"}


def _placement(knob: Knob | None, s: Setting, presence: Presence | None) -> list[Finding]:
    """LR003 from what the source declares (a CTLFLAG_RDTUN / TUNABLE name is boot-time, a CTLFLAG_RW one
    without TUN runtime only), else from the catalog."""
    where = presence.where if presence and presence.where else (LOCATION_WHERE.get(knob.location) if knob else None)
    if s.kind == "config_xml" and s.product == "opnsense":
        return []  # written to loader.conf and applied as sysctls: either kind of name takes effect
    if where in ("boot", "loader") and s.kind in RUNTIME_KINDS:
        place = "a pfSense System Tunable (applied as a runtime sysctl)" if s.kind == "config_xml" else "sysctl.conf"
        return [_finding("LR003", "warning", s, f"{s.key} is a boot-time loader tunable (read-only once the kernel "
                         f"runs); set in {place} it does nothing", f'move it to /boot/loader.conf(.local) as '
                         f'{s.key}="{s.value}"')]
    if where == "runtime" and s.kind == "loader":
        return [_finding("LR003", "warning", s, f"{s.key} is a runtime sysctl, not a loader tunable; "
                         "loader.conf does not set it", f"move it to /etc/sysctl.conf as {s.key}={s.value}")]
    return []


def _values(knob: Knob, s: Setting, ctx: Context) -> list[Finding]:
    out = []
    if s.kind == "config_xml" and s.value in DEFAULT_MARKERS and knob.type != "gui_checkbox":
        return out  # the product's own "use the built-in default"
    problem = check_value(knob, s.value) if knob.location not in ("rc_conf", "gui") else None
    if problem:
        limits = (f" (allowed {'' if knob.min is None else knob.min}..{'' if knob.max is None else knob.max})"
                  if knob.min is not None or knob.max is not None else "")
        out.append(_finding("LR004", "error", s, f"{s.key}: {problem}{limits}", "fix the value"))
        return out
    defaults = _defaults_judged(knob, ctx)
    for role in sorted(ctx.roles):
        rule = knob.harmful.get(role)
        if rule and defaults == {s.value} and not rule.default_is_harm:
            continue  # the OS default: the line changes nothing (net.inet.tcp.tso=1 on FreeBSD 13.1)
        if rule and s.value in rule.values and knob.type == "gui_checkbox":
            out.append(_finding("LR005", "warning", s, f"<{s.key}> is {s.value} ({knob.description}); harmful for a "
                                f"{role}: {cites(rule.why)}", "tick the box in System > Advanced > Networking"))
        elif rule and s.value in rule.values:
            out.append(_finding("LR005", "warning", s, f"{s.key}={s.value} is harmful for a {role}: {cites(rule.why)}",
                                "change or remove it"))
    trade_off = bool(knob.security and s.value in knob.security.values)
    if trade_off and defaults != {s.value}:
        out.append(_finding("LR006", "info", s, f"security trade-off: {cites(knob.security.why)}",
                            "keep the default unless you accept the risk"))
    if defaults == {s.value} and (ctx.version or trade_off):
        stock = (f"; the trade-off it is known for ({cites(knob.security.why)}) is the stock setting there, "
                 "so this line changes nothing" if trade_off else "")
        out.append(_finding("LR010", "info", s, f"{s.key}={s.value} is already the documented default on "
                            f"{ctx.label()}{stock}", "the line can go"))
    for role in sorted(ctx.roles):
        rec = knob.recommend.get(role)
        if rec and lowers_capacity(s.key, rec.value, s.value):
            continue  # never advise shrinking a table or buffer the user raised: no reason to cite
        if rec and rec.value != s.value and _version_applies(rec.versions, ctx.version) and not rec.value.startswith("on "):
            out.append(_finding("LR013", "info", s, f"for a {role} linerate suggests {s.key}={rec.value}: {cites(rec.why)}",
                                f"consider {rec.value}"))
    return out


def _defaults_judged(knob: Knob, ctx: Context) -> set[str]:
    """The defaults in force on the releases judged: the product's own where it sets one (OPNsense's
    hw.ibrs_disable=0 until 25.1), else the base OS's (FreeBSD's 1)."""
    products = ctx.product_span()
    if products and ctx.os_name in knob.product_defaults:
        return defaults_over(knob.product_defaults[ctx.os_name], *products)
    return defaults_over(knob.defaults, *ctx.span)


def syntax_problem(s: Setting) -> str | None:
    """Value syntax any name must obey, known or not (tuning/syntax.py)."""
    return sysctl_value_problem(s)


def audit_setting(catalog: Catalog, s: Setting, ctx: Context) -> list[Finding]:
    if s.kind == "malformed" and s.raw.startswith("\ufeff"):
        return [_finding("LR014", "error", s, "the file starts with a UTF-8 byte order mark (U+FEFF, invisible in "
                         "most editors): sysctl(8)/loader(8) read it as part of the first name and reject the line",
                         "save the file as UTF-8 without a BOM (e.g. `sed -i '1s/^\\xEF\\xBB\\xBF//' FILE`)")]
    if s.kind == "malformed":
        return [_finding("LR014", "error", s, "not a name=value line; sysctl(8)/loader(8) will reject it",
                         "comment it out with '#' or fix it")]
    if s.kind == "rc_conf" and s.interface is None and not s.key.startswith("ifconfig_"):
        harm = rc_service_problem(s, ctx.roles)  # other rc.conf variables are services, not tuning knobs
        return [_finding("LR005", "warning", s, harm[0], harm[1])] if harm else []
    if s.kind == "rc_conf" and s.key.startswith("ifconfig_"):
        return []
    cut = _linux_first_number(s, ctx, catalog)
    if cut:
        return [cut]
    problem = syntax_problem(s)
    if problem:
        return [_finding("LR004", "error", s, f"{s.key}: {problem}; sysctl rejects the whole line",
                         "keep only the value; put remarks after a '#'")]
    problem = loader_line_problem(s.raw) if s.kind == "loader" and ctx.family == "freebsd" else None
    if problem:
        return [_finding("LR014", "error", s, f"{s.key}: {problem}; FreeBSD's loader prints 'Malformed line' "
                         "and skips it (stand/lua/config.lua, config.parse; loader.conf(5))",
                         'write it as NAME="VALUE", remarks after a \'#\'')]
    if ctx.family == "freebsd" and s.kind == "loader" and (is_loader_directive(s.key) or "." not in s.key):
        judged = module_line(s, ctx.span, ctx.label(), source_list(ctx.family))
        if judged is not None:
            return [_finding(*judged[:2], s, *judged[2:])]
        if is_loader_directive(s.key):
            return []  # loader(8) acts on module directives and hints itself
    knob = catalog.find(s.key, ctx.family)
    presence = _presence(s.key, ctx)
    # the catalog's removal release (from release notes) is more precise than the snapshots' "between"
    gone = [] if knob is not None and knob.removed_in() else _gone(s, ctx, presence, knob)
    if not gone and ctx.family == "linux" and not (knob is not None and knob.removed_in()):
        names = name_list(ctx.family, ctx.version)
        judged = linux_lifecycle(s.key, ctx.label(), *ctx.span, ctx.straddle_hint(),
                                 also_known=bool(names and names.lookup(s.key)))
        gone = [_finding(judged[0], judged[1], s, judged[2], judged[3])] if judged else []
    if gone:
        return gone
    built = ctx.kernel[1] if ctx.kernel else frozenset(VENDOR_OPTIONS.get(ctx.os_name, ()))
    lacking = presence.needs - built if presence is not None else None
    if lacking:
        return [_option_gated(s, ctx, presence, lacking)]
    semantic = _semantics(s, ctx)
    if semantic:
        return semantic
    if knob is None:
        return _not_in_catalog(catalog, s, ctx, presence)
    found = _one_problem(_lifecycle(knob, s, ctx, presence) + _placement(knob, s, presence) + _values(knob, s, ctx))
    names = name_list(ctx.family, ctx.version)
    listed = names.lookup(s.key) if names else None
    if listed and listed[0] == "unnamed" and names.release <= ctx.span[0] and not any(f.code in SOLE for f in found):
        found.append(_unnamed(s, ctx, listed[1], names.label()))  # only from a list of that release or older
    return found


def _semantics(s: Setting, ctx: Context) -> list[Finding]:
    """LR017: a value the kernel will not take as meant (pages written as bytes) or a read-only name."""
    problem = unit_problem(s, ctx.family)
    if problem:
        return [_finding("LR017", "warning", s, problem, "give the value in pages (bytes / 4096), or delete the "
                         "line: the kernel sizes it from RAM at boot")]
    listed = read_only(s, ctx.family, ctx.version, ctx.span)
    if listed:
        return [_finding("LR017", "warning", s, listed, "delete the line")]
    refused = linux_range_problem(s.key, s.value, *ctx.span) if ctx.family == "linux" and s.kind == "sysctl" else None
    if refused:
        return [_finding("LR017", "warning", s, refused, "write a value inside the bounds, or delete the line")]
    timer = freebsd_ms_problem(s, ctx.family)
    if timer:
        return [_finding("LR017", "warning", s, timer, freebsd_ms_fix(s))]
    quoted = quoted_problem(s, ctx.family)
    if quoted:
        return [_finding("LR017", "warning", s, quoted, "write the value without quotes")]
    fraction = fraction_problem(s, ctx.family)
    if fraction:
        return [_finding("LR017", "warning", s, fraction, "write a whole number in the unit the name takes")]
    harm = harmful_value(s, ctx.family, ctx.span)
    if harm:
        return [_finding(harm[0], harm[1], s, harm[2], harm[3])]
    return []


# Linux's integer handlers (kernel/sysctl.c, __do_proc_dointvec, 4.4 .. 6.12; proc_douintvec and
# proc_doulongvec likewise) read one number per slot with proc_get_long, which stops at a space, tab or
# newline; a one-number sysctl then stops, answers the write with a short count, and the rest (written
# again at a non-zero offset) is ignored under sysctl_writes_strict=1, the default since 4.4 at least.
# So `net.core.somaxconn = 16384 12` sets 16384: not an error, but not what the line says either.
_FIRST_NUMBER = re.compile(r"^(-?\d+)[ \t]+(\S.*)$")


def _linux_first_number(s: Setting, ctx: Context, catalog: Catalog) -> Finding | None:
    if ctx.family != "linux" or s.kind not in RUNTIME_KINDS:
        return None
    match = _FIRST_NUMBER.match(s.value.strip())
    if not match:
        return None
    knob = catalog.find(s.key, ctx.family)
    single = knob is not None and knob.type in ("int", "bool")
    if not single and all(re.fullmatch(r"-?\d+", token) for token in s.value.split()):
        return None  # a vector (tcp_rmem = 4096 87380 6291456) or a name linerate cannot size: fine
    first, rest = match.group(1), match.group(2)
    bad = next((token for token in rest.split() if not re.fullmatch(r"-?\d+", token)), rest.split()[0])
    what = ("a one-number sysctl" if single else "a one-number sysctl (a vector would instead fail at "
            f"'{bad}' with EINVAL)")
    return _finding("LR017", "warning", s, f"{s.key} = {s.value}: for {what} the kernel's integer handler "
                    f"(kernel/sysctl.c, proc_dointvec) reads {first}, stops at the space and ignores '{rest}'; the "
                    f"value set is {first}, whatever the rest meant", f"write {s.key} = {first}, remarks after a '#'")


def _presence(name: str, ctx: Context) -> Presence | None:
    source = source_list(ctx.family)
    if source is None or not re.fullmatch(r"[A-Za-z0-9_.*-]+", name):
        return None
    low, high = ctx.span
    return _cached_presence(source, name, low, high)


_PRESENCE_CACHE: dict = {}


def _cached_presence(source, name: str, low, high) -> Presence:
    key = (id(source), name, low, high)
    if key not in _PRESENCE_CACHE:
        if len(_PRESENCE_CACHE) > 100_000:
            _PRESENCE_CACHE.clear()
        presence = source.presence(name, low, high)
        if presence.state == "removed" and name.startswith(UNSURE_REMOVALS):
            presence = Presence("unsure", presence.where, presence.origin, presence.last, presence.gone)
        _PRESENCE_CACHE[key] = presence
    return _PRESENCE_CACHE[key]


# OpenZFS replaced FreeBSD's ZFS in 13.0 and renamed most vfs.zfs.* names, keeping some old names as
# aliases set up at run time: absence from the newer source says little there.
UNSURE_REMOVALS = ("vfs.zfs.",)


def _option_gated(s: Setting, ctx: Context, presence: Presence, lacking: frozenset[str]) -> Finding:
    """A name the source compiles only inside `#ifdef OPTION` (or in a file sys/conf/files builds only with
    it) for an option amd64 GENERIC does not turn on: a stock kernel has no such name, so the line does
    nothing there (`sysctl: unknown oid`); a kernel built with the option has it (--kernel-config)."""
    options = " and ".join(f"options {o}" for o in sorted(lacking))
    build = (f"{s.key} exists only in kernels built with `{options}` ({presence.origin}, {source_list(ctx.family).label()})"
             f"; FreeBSD's GENERIC kernel lacks it")
    if ctx.kernel:
        return _finding("LR018", "warning", s, f"{build}, and so does your kernel config {ctx.kernel[0]}: this line "
                        "does nothing", f"remove it, or add `{options}` to {ctx.kernel[0]} and rebuild")
    if ctx.os_name == ctx.family:
        return _finding("LR018", "warning", s, f"{build}, so on a stock kernel this line does nothing (a custom "
                        "kernel: give its config with --kernel-config)", f"remove it, or build a kernel config with "
                        f"`{options}`; `sysctl -d {s.key}` on the box says whether it is there")
    return _finding("LR018", "info", s, f"{build}; {ctx.os_name} builds its own kernel, which may have it",
                    f"check with `sysctl -d {s.key}` on the box (no output: the line does nothing)")


def _gone(s: Setting, ctx: Context, presence: Presence | None, knob: Knob | None) -> list[Finding]:
    """LR001 / LR008 from the source snapshots: the name is not declared (or declared but read nowhere) on
    the releases judged."""
    if presence is None or presence.state not in ("removed", "straddles", "added"):
        return []
    fix = f"delete it; use {knob.replaced_by} instead" if knob and knob.replaced_by else "delete the line"
    evidence = describe(presence)
    if presence.state == "added":
        return [_finding("LR008", "warning", s, f"{s.key} is not declared before the {presence.gone} source, "
                         f"so it does not exist on {ctx.label()}", "delete it, or upgrade")]
    if presence.state == "removed":
        every = "" if ctx.version else " (every release linerate judges without --os-version is past that)"
        return [_finding("LR001", "warning", s, f"{s.key}: {evidence}; this line does nothing on "
                         f"{ctx.label()}{every}", fix)]
    return [_finding("LR001", "info", s, f"{s.key}: {evidence}: it does nothing if your box runs "
                     f"{presence.gone} or later ({ctx.label()} straddles that; {ctx.straddle_hint()})", fix)]


def _unnamed(s: Setting, ctx: Context, origin: str, label: str) -> Finding:
    """OpenBSD: a number the kernel keeps whose slot in the sysctl(8) name table is empty. sysctl(8)'s
    findname() (sbin/sysctl/sysctl.c) skips empty slots, so the name is refused ('... level name X in Y is
    invalid') and the line does nothing."""
    return _finding("LR002", "warning", s, f"{s.key} has no name on {ctx.label()}: its kernel number is left but its "
                    f"slot in the sysctl(8) name table of {origin} (the {label}) is empty, and sysctl(8) skips empty "
                    "slots ('level name ... is invalid')", "remove it")


def _one_problem(found: list[Finding]) -> list[Finding]:
    sole = [f for f in found if f.code in SOLE]
    if sole:
        return sole[:1]
    codes = {f.code for f in found}
    beaten = set().union(*(OUTRANKS.get(code, set()) for code in codes))
    return [f for f in found if f.code not in beaten]


def _not_in_catalog(catalog: Catalog, s: Setting, ctx: Context, presence: Presence | None) -> list[Finding]:
    if presence is not None:
        return _judged_by_source(catalog, s, ctx, presence)
    names = name_list(ctx.family, ctx.version)
    listed = names.lookup(s.key) if names else None
    where_list = f"the {names.label()}" if names else "no name list"
    if listed and listed[0] != "unnamed":
        return [_finding("LR015", "info", s, f"{s.key} exists on {ctx.family} (listed in {where_list}, from "
                         f"{listed[1]}){below_lists(ctx.family, ctx.span[0])}; linerate has no advice for it", "none needed")]
    other = _other_os(catalog, s.key, ctx.family)
    if listed and listed[0] == "unnamed" and names.release > ctx.span[0]:  # the lists start after this release
        return [_finding("LR016", "info", s, f"linerate cannot confirm {s.key} exists on {ctx.label()}: the oldest "
                         f"list it holds, the {names.label()}, keeps only its number", check_advice(ctx.family, s.kind,
                                                                                                    s.key))]
    if listed and other:
        return [_finding("LR011", "warning", s, f"{s.key} is a {other} name; on {ctx.family} only its number is "
                         f"left, without a name sysctl(8) accepts ({listed[1]}, the {names.label()})",
                         "remove it; look up the equivalent with `linerate explain`")]
    if listed:
        return [_unnamed(s, ctx, listed[1], names.label())]
    hints = _hints(catalog, s.key, ctx.family, ctx.version)
    if hints:
        return [_finding("LR002", "warning", s, f"{s.key} does not exist on {ctx.label()} (not in {where_list} nor "
                         f"linerate's catalog); did you mean {' or '.join(hints)}?", f"replace with {hints[0]}")]
    if other and names and (names.covers_parent(s.key) or not _family_has_branch(catalog, names, s.key)):
        branch = ".".join(s.key.split(".")[:2])
        why = (f"{where_list} has other names under {s.key.rsplit('.', 1)[0]} but not this one"
               if names.covers_parent(s.key) else f"{ctx.family} has no {branch} branch at all")
        return [_finding("LR011", "warning", s, f"{s.key} is a {other} name; {why}",
                         "remove it; look up the equivalent with `linerate explain`")]
    absent = _absent_from_lists(s, ctx, names, other)
    if absent:
        return absent
    return [_finding("LR016", "info", s, f"linerate cannot confirm {s.key} exists on {ctx.label()}: it is in "
                     f"neither {where_list} nor the catalog" + (f" (it is a {other} name)" if other else "")
                     + below_lists(ctx.family, ctx.span[0]),
                     check_advice(ctx.family, s.kind, s.key))]


# OpenBSD's sysctl tree is static: sysctl(2) and the CTL_*_NAMES tables name every variable. Machine-
# dependent (machdep.*) names and hw.sensors.* (made by sensor drivers at run time) are left to "cannot
# confirm"; the rest of hw.* is CTL_HW_NAMES of sys/sys/sysctl.h (hw_sysctl() in kern_sysctl.c answers
# only those), which the list holds from rev 1.246, a superset of every release linerate judges.
OPENBSD_OPEN_TOP = ("machdep.", "hw.sensors.", "ddb.", "vfs.")


def _absent_from_lists(s: Setting, ctx: Context, names, other: str | None) -> list[Finding]:
    """LR002 where the lists for this OS and the releases judged are complete enough that silence is
    evidence: Linux names whose last part no release 4.4 .. 6.12 declares; OpenBSD names under a branch
    whose other names every list judging the releases holds (names.bracketing_lists)."""
    low, high = ctx.span
    if ctx.family == "linux":
        judged = linux_absent(s.key, ctx.label(), low, high, also_known=bool(names and names.lookup(s.key)))
        return [_finding(judged[0], judged[1], s, judged[2], judged[3])] if judged else []
    lists = bracketing_lists("openbsd", low, high) if ctx.family == "openbsd" else []
    if not lists or s.key.startswith(OPENBSD_OPEN_TOP) or any(n.lookup(s.key) for n in lists):
        return []
    read = " and ".join(n.label() for n in lists)
    missing = [missing_node(s.key, n) for n in lists]
    if all(missing):
        parent, node = missing[0]
        return [_finding("LR002", "warning", s, f"{s.key} does not exist on {ctx.label()}: {node} is not a "
                         f"node of the sysctl tree (the {read}, from the sysctl(8) name tables, list the names "
                         f"under {parent} and no '{node}' among them)", "remove it; `sysctl` says 'unknown variable'")]
    if all(n.covers_parent(s.key) for n in lists):
        parent = s.key.rsplit(".", 1)[0]
        also = f" (it is a {other} name)" if other else ""
        earlier = [n.label() for n in all_lists() if n.os == "openbsd" and n.release < lists[0].release
                   and n.lookup(s.key)]
        gone = f"; {earlier[-1]} had it: removed since" if earlier else ""
        return [_finding("LR002", "warning", s, f"{s.key} does not exist on {ctx.label()}{also}: the {read} "
                         f"(the sysctl(8) name tables of the releases judged) list the names under {parent} and not "
                         f"this one{gone}", "remove it; `sysctl` says 'unknown variable'")]
    return []


def _judged_by_source(catalog: Catalog, s: Setting, ctx: Context, presence: Presence) -> list[Finding]:
    """A name without advice on an OS whose source declarations linerate holds (FreeBSD)."""
    source = source_list(ctx.family)
    if presence.state == "exists":
        placed = _placement(None, s, presence)
        return placed or [_finding("LR015", "info", s, f"{s.key} exists on {ctx.label()} (declared in "
                                   f"{presence.origin}, {source.label()}); linerate has no advice for it", "none needed")]
    documented = _documented(s.key, ctx)
    driver = source.driver_tunables(s.key, *ctx.span) if presence.state == "absent" else None
    if driver:
        branch, declared = driver
        doc = f"; {documented} (12.2 man pages) still names it, but no source read declares it" if documented else ""
        return [_finding("LR002", "warning", s, f"{s.key} is not a tunable of the in-tree {branch.split('.')[1]} "
                         f"driver on {ctx.label()}: its source declares only {', '.join(declared)} under {branch} "
                         f"({source.label()}){doc}; a driver from ports (a vendor kmod) has names of its own",
                         "remove it, or use one of the names the driver declares (check with `sysctl -d "
                         f"{branch}` on the box)")]
    moved = source.moved_branch(s.key) if not documented and not _other_os(catalog, s.key, ctx.family) else None
    if moved:  # a whole branch no release has (newer releases included: the subsystem lives elsewhere)
        there = f"{moved}.{s.key.split('.', 2)[2]}"
        if source.declared(there):
            fix = f"use {there} (declared there), after checking it with `sysctl -d {there}`"
        else:  # the same leaf under the right branch need not exist either: name what does
            near = _nearest(source, moved, there) if moved in source.nodes else []
            fix = (f"no {there} is declared either; use the name under {moved} that sets it"
                   + (f" (declared there: {', '.join(near)})" if near else "") + f"; `sysctl -d {moved}` lists them")
        return [_finding("LR002", "warning", s, f"{s.key} does not exist on {ctx.label()}: no {source.label()} "
                         f"declares anything under {'.'.join(s.key.split('.')[:2])}; that subsystem's names are "
                         f"under {moved}", fix)]
    if presence.state == "unsure" or documented:
        why = (f"documented in {documented} (12.2 man pages)" if documented else describe(presence))
        return [_finding("LR016", "info", s, f"linerate cannot confirm {s.key} exists on {ctx.label()}: {why}",
                         check_advice(ctx.family, s.kind, s.key))]
    if s.key in source.nodes:
        kids = sorted(source.children(s.key))[:3]
        return [_finding("LR002", "warning", s, f"{s.key} is a branch of the sysctl tree, not a value; its names "
                         f"are such as {', '.join(kids)}", "set one of the names under it")]
    hints = _hints(catalog, s.key, ctx.family, ctx.version)
    if hints:
        return [_finding("LR002", "warning", s, f"{s.key} does not exist on {ctx.label()} (declared in no "
                         f"{source.label()} nor linerate's catalog); did you mean {' or '.join(hints)}?",
                         f"replace with {hints[0]}")]
    other = _other_os(catalog, s.key, ctx.family)
    parent = source.closed_parent(s.key)
    if other and parent:
        return [_finding("LR011", "warning", s, f"{s.key} is a {other} name; the {source.label()} declares "
                         f"every name under {parent} and not this one", "remove it; look up the equivalent with "
                         "`linerate explain`")]
    vendor = VENDOR_DECLARED.get(ctx.os_name, {}).get(s.key)
    if vendor:
        return [_finding("LR015", "info", s, f"{s.key} exists on {ctx.label()}: {ctx.os_name}'s own kernel declares "
                         f"it ({vendor}), FreeBSD's does not; linerate has no advice for it", "none needed")]
    gated = sorted(source.needs(parent)) if parent else []
    if parent and gated and set(gated) <= VENDOR_OPTIONS.get(ctx.os_name, set()):
        options = " and ".join(f"options {o}" for o in gated)
        return [_finding("LR016", "info", s, f"linerate cannot confirm {s.key} exists on {ctx.label()}: FreeBSD "
                         f"declares {parent} only in kernels built with `{options}` and not this name under it "
                         f"({source.label()}); {ctx.os_name} builds its own kernel, whose patches may add names there",
                         check_advice(ctx.family, s.kind, s.key))]
    if parent:
        near = _nearest(source, parent, s.key)
        return [_finding("LR002", "warning", s, f"{s.key} does not exist on {ctx.label()}: the {source.label()} "
                         f"declares every name under {parent} and not this one"
                         + (f"; nearest real names: {', '.join(near)}" if near else ""), "remove it")]
    return [_finding("LR016", "info", s, f"linerate cannot confirm {s.key} exists on {ctx.label()}: no "
                     f"{source.label()} declares it, but names under its branch are also made at run time "
                     "or by drivers outside the tree" + (f" (it is a {other} name)" if other else ""),
                     check_advice(ctx.family, s.kind, s.key))]


# Kernel options a vendor's kernel is built with that amd64 GENERIC lacks, each from the vendor's source:
# OPNsense builds `options RSS` (opnsense/src sys/net/rss_config.c, compiled only with RSS, carries its
# own net.inet.rss.enabled toggle; docs.opnsense.org "Network Performance" tells users to set it).
VENDOR_OPTIONS = {"opnsense": {"RSS"}}
# Names a vendor's kernel declares that no FreeBSD release does, with where.
VENDOR_DECLARED = {"opnsense": {
    "net.inet.rss.enabled": "opnsense/src sys/net/rss_config.c@3b548a187de6, SYSCTL_INT CTLFLAG_RDTUN: a loader tunable",
}}


def _documented(name: str, ctx: Context) -> str | None:
    names = name_list(ctx.family, ctx.version)
    listed = names.lookup(name) if names else None
    return listed[1] if listed else None


def _nearest(source, parent: str, name: str) -> list[str]:
    tail = name[len(parent) + 1:].split(".")[0]
    scored = sorted((edit_distance(tail, child.rsplit(".", 1)[1], 99), child) for child in source.children(parent)
                    if "*" not in child)
    return [child for _, child in scored[:2]]


_HINT_CACHE: dict = {}


def _hints(catalog: Catalog, name: str, family: str, version) -> list[str]:
    key = (id(catalog), name, family, version)
    if key not in _HINT_CACHE:
        names = name_list(family, version)
        candidates = set(names.entries) if names else set()
        source = source_list(family)
        if source:
            candidates |= {n for n in source.rows if "*" not in n}
        candidates |= {k.name for k in catalog.knobs if k.os == family}
        _HINT_CACHE[key] = close_names(name, candidates, family)
    return _HINT_CACHE[key]


def _family_has_branch(catalog: Catalog, names, key: str) -> bool:
    branch = ".".join(key.split(".")[:2]) + "."
    return (any(name.startswith(branch) for name in names.entries)
            or any(k.os == names.os and k.name.startswith(branch) for k in catalog.knobs))


_OTHER_CACHE: dict = {}


def _other_os(catalog: Catalog, name: str, family: str) -> str | None:
    key = (id(catalog), name, family)
    if key not in _OTHER_CACHE:
        knob = next((k for k in catalog.knobs if k.os != family and k.matches(name)), None)
        _OTHER_CACHE[key] = knob.os if knob else next(
            (n.os for n in all_lists() if n.os != family and n.lookup(name)), None)
    return _OTHER_CACHE[key]


def _duplicates(settings: list[Setting]) -> list[Finding]:
    """A name set more than once: with different values every line but the last does nothing (the
    last one read wins: sysctl(8) -p and the loader read top to bottom), so LR007 marks the lines
    that are overridden; the same value again is a harmless repeat (LR012, on the repeat)."""
    out, seen = [], {}
    last: dict[tuple, Setting] = {}
    for s in settings:
        if s.kind != "malformed" and not (s.kind == "config_xml" and s.value in ("present", "absent")) \
                and not syntax_problem(s) and not (s.kind == "loader" and loader_line_problem(s.raw)):
            last[(s.key, s.interface, s.kind == "loader")] = s
    for s in settings:
        if s.kind == "malformed":
            continue
        key = (s.key, s.interface, s.kind == "loader")
        if s.kind == "config_xml" and s.value in ("present", "absent"):
            continue
        if syntax_problem(s) or (s.kind == "loader" and loader_line_problem(s.raw)):
            continue  # sysctl/the loader rejects that line (its own LR004/LR014 says so): it overrides nothing
        winner = last[key]
        if winner is not s and winner.value != s.value:
            out.append(_finding("LR007", "warning", s, f"{s.key} is set again with another value at {winner.file}:"
                                f"{winner.line} ({winner.value!r}), which is read later and wins: this line does "
                                "nothing", "keep one line"))
        elif (key, s.value) in seen:
            earlier = seen[(key, s.value)]
            out.append(_finding("LR012", "info", s, f"{s.key} repeats {earlier.file}:{earlier.line}",
                                "keep one line"))
        seen.setdefault((key, s.value), s)
    return out


def _virtio_checks(settings: list[Setting], ctx: Context) -> list[Finding]:
    """Netgate forum, 'Performance Measurments with VirtIO + Offloading on Atom C2358': on virtio (vtnet) with pf, hardware checksum offload must be off."""
    if "vm-guest" not in ctx.roles or ctx.family != "freebsd":
        return []
    out = []
    rc_ifaces = {s.interface: s for s in settings if s.kind == "rc_conf" and s.key.startswith("ifconfig_vtnet")}
    for iface, line in rc_ifaces.items():
        flags = {s.key: s.value for s in settings if s.interface == iface and s.key in ("rxcsum", "txcsum")}
        if flags.get("rxcsum") != "off" or flags.get("txcsum") != "off":
            out.append(_finding("LR005", "warning", line, f"{iface} is virtio: with pf, checksum offload left on "
                                "forwarded ~5 Mbit/s instead of ~300 in " + ARTICLES["netgate-virtio"], f"add -rxcsum -txcsum to {line.key}"))
    return out


def audit(catalog: Catalog, settings: list[Setting], ctx: Context) -> list[Finding]:
    findings = [f for s in settings for f in audit_setting(catalog, s, ctx)]
    scope = ipv6_forwarding_scope(settings, ctx.roles) if ctx.family == "linux" else []
    scoped = {(s.file, s.line) for s, _, _ in scope}  # "no advice, none needed" would contradict the fix
    findings = [f for f in findings if f.code != "LR015" or (f.file, f.line) not in scoped]
    bounded = above_netisr_limit(settings) if ctx.family == "freebsd" else []
    findings += _duplicates(settings) + _virtio_checks(settings, ctx) + [
        _finding("LR005", "warning", s, message, fix) for s, message, fix in scope] + [
        _finding("LR017", "warning", s, message, fix) for s, message, fix in bounded]
    return sorted(findings, key=lambda f: (f.file, f.line, -SEVERITY_RANK[f.severity], f.code))


def exit_code(findings: list[Finding]) -> int:
    return 1 if any(SEVERITY_RANK[f.severity] >= SEVERITY_RANK["warning"] for f in findings) else 0
