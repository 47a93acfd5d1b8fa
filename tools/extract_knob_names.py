"""Maintainer tool: build the per-release lists of knob names that exist (src/linerate/tuning/names/*.tsv)
from authoritative sources, so that the audit can tell "does not exist" from "linerate has no advice".

    .venv/bin/python tools/extract_knob_names.py linux    > src/linerate/tuning/names/linux-6.1.tsv
    .venv/bin/python tools/extract_knob_names.py freebsd  > src/linerate/tuning/names/freebsd-12.2.tsv
    .venv/bin/python tools/extract_knob_names.py openbsd-release 7.3 > src/linerate/tuning/names/openbsd-7.3.tsv
    for r in 6.0 ... 7.6 (the folders of tools/sources/openbsd/releases):
        .venv/bin/python tools/extract_knob_names.py openbsd-release $r > src/linerate/tuning/names/openbsd-$r.tsv
    .venv/bin/python tools/extract_knob_names.py freebsd-src /work/.mirror > src/linerate/tuning/names/freebsd-src.tsv

freebsd-src: the FreeBSD source trees of FREEBSD_SNAPSHOTS (public repositories that hold one release's tree,
         fetched as git mirrors under owner+name/), read with git: every SYSCTL_* / TUNABLE_* / getenv
         declaration of sys/ (parents resolved through SYSCTL_NODE; flags give where: RDTUN boot, RWTUN both,
         RW runtime), OpenZFS's ZFS_MODULE_PARAM, and the loader's defaults/loader.conf variables. One table:
         name, where, the snapshots that declare it, origin, and the snapshots where it is declared but its
         variable is read nowhere any more (inert). The man pages (freebsd below) stay for descriptions.

linux:   Debian's linux-doc-6.1 package (Documentation/networking/ip-sysctl.rst, nf_conntrack-sysctl.rst,
         admin-guide/sysctl/net.rst), downloaded with apt-get, plus tools/sources/linux/proc-sys-*.txt:
         `stat -c '%a %n'` of every file under /proc/sys/{net,kernel,vm,fs} of Debian 12's kernel, taken
         from linerate's VM guest (linux-image-cloud-amd64 6.1.0-56, nf_conntrack and nf_tables loaded).
freebsd: Debian's freebsd-manpages 12.2 package (FreeBSD 12.2 section 4 and 7 pages): every `.It Va`
         in LOADER TUNABLES / SYSCTL VARIABLES / MIB VARIABLES sections.
openbsd: tools/sources/openbsd/: the variable lines of sysctl(2) rev 1.50 and the sysctl(8) name
         tables of tcp_var.h and if.h, copied from openbsd/src.

Each row: name, where (runtime | boot | both | read-only | unnamed), origin. Interface and unit parts
of names are generalised: net.ipv4.conf.IF.rp_filter, dev.igb.N.fc.
"""

from __future__ import annotations

import bisect
import gzip
import posixpath
import re
import subprocess
import sys
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path

SOURCES = Path(__file__).resolve().parent / "sources"
Row = tuple[str, str, str]  # name, where, origin


# ---------- Linux ----------

def _linux_prefix(heading: str, current: str) -> str | None:
    """The sysctl prefix a heading of ip-sysctl.rst opens, or None if it is not a prefix heading."""
    match = re.match(r"^(?:``)?/?proc/sys/net/([a-z0-9_]+)/\*", heading)  # rst: ``proc/sys/net/sctp/*``
    if match:
        return f"net.{match.group(1)}"
    match = re.match(r"^``?([a-z0-9_]+)/(all|default|interface)/\*``?:?$", heading.strip())
    if match:
        family = ".".join(current.split(".")[:2])
        return f"{family}.{match.group(1)}.IF"
    return None


def linux_rst(text: str, start_prefix: str, origin: str) -> Iterator[Row]:
    """Variables of ip-sysctl.rst / nf_conntrack-sysctl.rst: lines 'name - TYPE' (name may hold '/')."""
    prefix = start_prefix
    for line in text.splitlines():
        new = _linux_prefix(line, prefix)
        if new:
            prefix = new
            continue
        match = re.match(r"^([a-z][a-z0-9_/]*(?:, *[a-z][a-z0-9_/]*)*) +- +([A-Za-z0-9 ]+)", line)
        if not match:
            continue
        where = "read-only" if "read-only" in line else "runtime"
        for name in re.split(r", *", match.group(1)):
            parts = name.split("/")
            if len(parts) >= 3 and parts[0] in ("neigh", "conf"):
                parts[1] = "IF"
            yield canonical_linux(f"{prefix}.{'.'.join(parts)}"), where, origin


def linux_net_rst(text: str, origin: str) -> Iterator[Row]:
    """admin-guide/sysctl/net.rst: numbered '/proc/sys/net/X' chapters, each variable a heading underlined with -."""
    lines = text.splitlines()
    prefix = None
    for i, line in enumerate(lines):
        chapter = re.match(r"^\d+\. /proc/sys/net/([a-z0-9_]+)", line)
        if chapter:
            prefix = f"net.{chapter.group(1)}"
            continue
        underlined = i + 1 < len(lines) and re.fullmatch(r"-{3,}", lines[i + 1].strip() or "x")
        if prefix and underlined and re.fullmatch(r"[a-z][a-z0-9_]*", line.strip()):
            yield f"{prefix}.{line.strip()}", "runtime", origin


def linux_proc_listing(text: str, origin: str) -> Iterator[Row]:
    """`stat -c '%a %n'` lines of /proc/sys files: mode 2xx/6xx -> runtime, else read-only."""
    for line in text.splitlines():
        match = re.match(r"^([0-7]{3}) /proc/sys/(\S+)$", line)
        if match:
            where = "runtime" if int(match.group(1)[0]) & 2 else "read-only"
            yield canonical_linux(match.group(2).replace("/", ".")), where, origin


def canonical_linux(name: str) -> str:
    parts = name.split(".")
    if len(parts) >= 5 and parts[0] == "net" and parts[1] in ("ipv4", "ipv6") and parts[2] in ("conf", "neigh"):
        parts[3] = "IF"
    return ".".join(parts)


def _debian_package(package: str, workdir: Path) -> Path:
    subprocess.run(["apt-get", "download", package], cwd=workdir, check=True, capture_output=True)
    deb = next(workdir.glob(f"{package}_*.deb"))
    target = workdir / package
    subprocess.run(["dpkg-deb", "-x", str(deb), str(target)], check=True)
    return target


def linux_rows(workdir: Path) -> tuple[list[str], list[Row]]:
    root = _debian_package("linux-doc-6.1", workdir) / "usr/share/doc/linux-doc-6.1/Documentation"

    def read(relative: str) -> str:
        return gzip.decompress((root / relative).read_bytes()).decode()

    rows = list(linux_rst(read("networking/ip-sysctl.rst.gz"), "net.ipv4", "ip-sysctl.rst"))
    rows += linux_rst(read("networking/nf_conntrack-sysctl.rst.gz"), "net.netfilter", "nf_conntrack-sysctl.rst")
    rows += linux_net_rst(read("admin-guide/sysctl/net.rst.gz"), "sysctl/net.rst")
    listing = sorted((SOURCES / "linux").glob("proc-sys-*.txt"))
    for path in listing:
        rows += linux_proc_listing(path.read_text(), path.name)
    header = ["os: linux", "release: 6.1",
              "source: Debian linux-doc-6.1 (Documentation/networking/ip-sysctl.rst, networking/nf_conntrack-sysctl.rst, "
              "admin-guide/sysctl/net.rst)",
              "source: /proc/sys of Debian 12's kernel 6.1.0-56-cloud-amd64 with nf_conntrack and nf_tables loaded "
              "(" + ", ".join(p.name for p in listing) + ")"]
    return header, rows


# ---------- FreeBSD ----------

SECTION_WHERE = {"SYSCTL VARIABLES AND LOADER TUNABLES": "both", "LOADER TUNABLES": "boot", "LOADER TUBABLES": "boot",
                 "BOOT OPTIONS": "boot", "TUNABLE VARIABLES": "boot", "TUNABLES": "boot", "SYSCTL": "runtime",
                 "MIB VARIABLES": "runtime"}
TOP_LEVELS = ("kern.", "net.", "hw.", "dev.", "vm.", "vfs.", "security.", "debug.", "machdep.", "compat.", "user.")


def freebsd_va_name(text: str) -> str | None:
    """'hw.vtnet. Ns Ar X Ns Va .csum_disable' (after '.It Va ' or '.Pq Va ') -> 'hw.vtnet.N.csum_disable'."""
    text = re.sub(r"\s*Ns\s*Ar\s+\S+\s*Ns\s*Va\s*", ".N", text)
    text = re.sub(r"\s*Ns\s*Ar\s+\S+\s*$", ".N", text)
    text = text.replace("..", ".").split()[0] if text.split() else ""
    text = re.sub(r"\.(X|N|\d+|%d|<[a-z]+>|\$\{?[a-z]+\}?)(?=\.|$)", ".N", text)
    return text if re.fullmatch(r"[a-z_][a-zN0-9_.%-]*", text) else None


def freebsd_manpage(text: str, origin: str) -> Iterator[Row]:
    """Names of one FreeBSD man page: '.It Va NAME' and '.Pq Va NAME' items (short names completed with the
    branch the section names, e.g. '.Va net.inet.tcp'), and 'sysctl NAME' in examples. Where a name is
    set comes from the section title (LOADER TUNABLES: boot, SYSCTL VARIABLES / MIB: runtime); a full
    name in any other section is 'documented' (exists, place unknown)."""
    where, branch = None, None
    for line in text.splitlines():
        if line.startswith((".Sh ", ".Ss ")):
            title = line[4:].strip().strip('"').upper()
            where = next((w for key, w in SECTION_WHERE.items() if key in title), None)
            branch = None
            continue
        branch_match = re.match(r"^\.Va ((?:net|kern|hw|vm|vfs)\.[a-z0-9_.]+)\s*[.,]?$", line)
        if branch_match:
            branch = branch_match.group(1)
            continue
        example = re.match(r"^(?:# )?sysctl (?:-w )?([a-z]+\.[a-z0-9_.]+)=", line)
        item = re.match(r"^\.(?:It|Pq) Va (.+)$", line)
        name = example.group(1) if example else (freebsd_va_name(item.group(1)) if item else None)
        if not name:
            continue
        if name.startswith(TOP_LEVELS) and "." in name:
            yield name, "runtime" if example else (where or "documented"), origin
        elif where and branch:
            yield f"{branch}.{name}", where, origin


def freebsd_rows(workdir: Path) -> tuple[list[str], list[Row]]:
    root = _debian_package("freebsd-manpages", workdir) / "usr/share/man"
    rows: list[Row] = []
    for page in sorted(list(root.glob("man4/*.gz")) + list(root.glob("man7/*.gz"))):
        rows += freebsd_manpage(gzip.decompress(page.read_bytes()).decode(errors="replace"),
                                page.name.replace("freebsd.gz", ""))
    header = ["os: freebsd", "release: 12.2",
              "source: Debian freebsd-manpages 12.2 (FreeBSD 12.2 man pages, sections 4 and 7): LOADER TUNABLES, "
              "SYSCTL VARIABLES and MIB VARIABLES sections"]
    return header, rows


# ---------- FreeBSD source trees ----------

# Snapshots of the FreeBSD source tree read with git (fetched public repositories that hold one release's
# tree; freebsd/freebsd-src itself is too large to fetch here). version, label, repository, commit.
FREEBSD_SNAPSHOTS = [
    ("10.4", "10.4-RELEASE", "coder03/freebsd10.4", "3d3f8b116d561bc3ce3a6c68681ac74ed73695ab"),
    ("11.0", "11.0-RELEASE-p1", "YuheiTakagawa/freebsd", "548957e2419fa8917b3b627794c676d3ee32a20e"),
    ("12.1", "12.1-RELEASE", "jimskon/FreeBSDDevPF", "e0b352d81ec73e2e071a9d511ba8d31a200e4776"),
    # main of 2022-07-14 (__FreeBSD_version 1400063), as the Seva kernel of the Enso OS project carries it (its own
    # commits drop the snd_sbc/snd_mss ISA drivers): placed after 13.1 (May 2022) and before 13.2, so that 13.x
    # releases are judged by it and 12.1 or 14.2 (both ends) and never by it alone
    ("13.1.9", "main-20220714", "Uquinix/seva", "e7646b053ba523dd970b3c7e3df90c8ce80c7ea6"),
    ("14.2", "14.2-BETA1", "kaizenwa/freebsd-14.2", "b66633d79ade52b5ca01cc5a2ac16b92e70794e2"),
]
DECLARATION = re.compile(r"\b(SYSCTL_[A-Z0-9_]+|ZFS_MODULE_PARAM\w*|TUNABLE_[A-Z0-9_]+|getenv_(?:int|uint|long|ulong|quad|uquad|string|bool)"
                         r"|testenv|kern_getenv)\s*\(")
# SYSCTL_* macros that are not declarations of a name
NOT_DECLARATIONS = {"SYSCTL_DECL", "SYSCTL_CHILDREN", "SYSCTL_STATIC_CHILDREN", "SYSCTL_IN", "SYSCTL_OUT",
                    "SYSCTL_HANDLER_ARGS", "SYSCTL_PARENT", "SYSCTL_NODE_CHILDREN", "SYSCTL_OUT_STR",
                    "SYSCTL_ADD_OID", "SYSCTL_ADD_PROC_NODE"}


def _strip_comments(text: str) -> str:
    text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)
    return re.sub(r"(?<!:)//[^\n]*", "", text)


def _arguments(text: str, start: int) -> list[str]:
    """The top-level comma-separated arguments of the call whose '(' ends just before `start`."""
    depth, index, out, current = 1, start, [], []
    while index < len(text) and depth:
        char = text[index]
        if char == '"':
            end = index + 1
            while end < len(text) and text[end] != '"':
                end += 2 if text[end] == "\\" else 1
            current.append(text[index:end + 1])
            index = end + 1
            continue
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            if not depth:
                break
        elif char == "," and depth == 1:
            out.append("".join(current).strip())
            current = []
            index += 1
            continue
        current.append(char)
        index += 1
    out.append("".join(current).strip())
    return out


def _flags_where(flags: str) -> str:
    """CTLFLAG_RDTUN: a loader tunable, read-only at runtime; RWTUN: both; RW: runtime; RD: read-only."""
    tokens = set(re.findall(r"CTLFLAG_[A-Z]+", flags))
    tun = "CTLFLAG_TUN" in tokens
    if "CTLFLAG_RWTUN" in tokens or (tun and tokens & {"CTLFLAG_RW", "CTLFLAG_WR"}):
        return "both"
    if "CTLFLAG_RDTUN" in tokens or tun:
        return "boot"
    if tokens & {"CTLFLAG_RW", "CTLFLAG_WR", "CTLFLAG_ANYBODY"}:
        return "runtime"
    return "read-only" if "CTLFLAG_RD" in tokens else "runtime"


def _literal(argument: str) -> str | None:
    parts = re.findall(r'"((?:[^"\\]|\\.)*)"', argument)
    if not parts or re.sub(r'"(?:[^"\\]|\\.)*"', "", argument).strip():
        return None
    return "".join(parts)


def _variable(argument: str) -> str | None:
    match = re.fullmatch(r"&\s*(?:VNET_NAME\s*\(\s*)?([A-Za-z_]\w*)\s*\)?", argument.strip())
    return match.group(1) if match else None


def _required(expression: str) -> frozenset[str]:
    """The identifiers an #if expression needs defined for its block to be compiled: the defined(X) terms
    of an && chain (an || or a negation proves nothing)."""
    if "||" in expression:
        return frozenset()
    needed = set()
    for term in expression.split("&&"):
        term = term.strip()
        match = re.fullmatch(r"defined\s*\(?\s*(\w+)\s*\)?|(\w+)", term)
        if match:
            needed.add(match.group(1) or match.group(2))
    return frozenset(needed)


def preprocessor_guards(text: str) -> list[tuple[int, frozenset[str]]]:
    """(offset, identifiers every enclosing #ifdef/#if requires) from each preprocessor line on: inside
    `#ifdef IPSTEALTH` a declaration exists only in kernels built with that option. #else, #elif and
    #ifndef blocks require nothing known."""
    out: list[tuple[int, frozenset[str]]] = [(0, frozenset())]
    stack: list[frozenset[str]] = []
    for match in re.finditer(r"^[ \t]*#[ \t]*(ifdef|ifndef|if|elif|else|endif)\b([^\n]*)", text, re.M):
        kind, rest = match.group(1), match.group(2).strip()
        if kind == "ifdef":
            stack.append(frozenset(re.findall(r"\w+", rest)[:1]))
        elif kind == "ifndef":
            stack.append(frozenset())
        elif kind == "if":
            stack.append(_required(rest))
        elif kind in ("elif", "else") and stack:
            stack[-1] = frozenset()
        elif kind == "endif" and stack:
            stack.pop()
        out.append((match.end(), frozenset().union(*stack)))
    return out


def _guard_at(guards: list[tuple[int, frozenset[str]]], offset: int) -> frozenset[str]:
    return guards[bisect.bisect_right([g[0] for g in guards], offset) - 1][1]


def freebsd_declarations(text: str, origin: str) -> list[tuple]:
    """Declarations in one C file: ('node', parent, name, origin, dynamic), ('leaf', parent, name, where,
    origin, inert) and ('tunable', full name, origin, inert). A leaf or tunable is inert when it sets a
    static variable of the file that nothing but its declarations names: declared, but nothing reads it
    (such as hw.em.rx_process_limit in the iflib em(4) of 12.x). Every tuple is followed by the
    identifiers its #ifdef blocks require: (declaration, guards)."""
    text = _strip_comments(text)
    guards = preprocessor_guards(text)
    defines = [(m.start(), m.end()) for m in re.finditer(r"^[ \t]*#[ \t]*define\b(?:[^\n]*\\\n)*[^\n]*", text, re.M)]
    words: dict[str, int] = {}
    for word in re.findall(r"[A-Za-z_]\w*", text):
        words[word] = words.get(word, 0) + 1
    found: list[tuple] = []
    in_declarations: dict[str, int] = {}
    for match in DECLARATION.finditer(text):
        macro = match.group(1)
        if macro in NOT_DECLARATIONS:
            continue
        args = _arguments(text, match.end())
        if any(a <= match.start() < b for a, b in defines):
            # a declaration inside a macro (G_LABEL_INIT makes kern.geom.label.<kind>.enable): its names are
            # unknown here, so the branch it hangs on is open
            if macro.startswith("SYSCTL_") and args and re.fullmatch(r"_\w+", args[0]):
                found.append((("opens", args[0]), frozenset()))
            continue
        for word in re.findall(r"[A-Za-z_]\w*", " ".join(args)):
            in_declarations[word] = in_declarations.get(word, 0) + 1
        assigned = re.search(r"(\w+)\s*=\s*$", text[max(0, match.start() - 80):match.start()])
        guard = _guard_at(guards, match.start())
        found += [(d, guard) for d in _declaration(macro, args, origin, assigned.group(1) if assigned else None)]

    def inert(variable: str | None) -> bool:
        if variable is None or "##" in text or not re.search(r"\bstatic\b[^;=(]*\b" + re.escape(variable) + r"\b", text):
            return False  # a global may be read in another file
        return words.get(variable, 0) - in_declarations.get(variable, 0) <= 1  # only its definition is left

    return [(d[:-1] + (inert(d[-1]),) if d[0] in ("leaf", "tunable") else d, guard) for d, guard in found]


def _declaration(macro: str, args: list[str], origin: str, assigned_to: str | None) -> list[tuple]:
    """One declaration; node tuples end with the symbol their children name as parent: _net_inet_tcp for
    SYSCTL_NODE(_net_inet, OID_AUTO, tcp, ...), 'file#var' for var = SYSCTL_ADD_NODE(...) (whose children
    are added with SYSCTL_CHILDREN(var) in the same file)."""
    if macro.startswith("ZFS_MODULE_PARAM") and len(args) >= 5:  # OpenZFS: vfs.zfs.<scope>.<name>, ZMOD_RW/RD
        where = "both" if "ZMOD_RW" in args[4] else "boot"
        return [("leaf", f"_vfs_{args[0]}", args[2], where, origin, None)] if re.fullmatch(r"\w+", args[2]) else []
    if macro.startswith(("TUNABLE_", "getenv_", "testenv", "kern_getenv")):
        name = _literal(args[0]) if args else None
        if not name or not re.fullmatch(r"[a-z][A-Za-z0-9_.%-]*", name) or "%s" in name:
            return []
        variable = _variable(args[1]) if len(args) > 1 and macro.startswith("TUNABLE_") else None
        return [("tunable", re.sub(r"%[0-9]*[dui]", "N", name), origin, variable)]
    if macro.startswith("SYSCTL_ADD_"):
        static = re.fullmatch(r"SYSCTL_STATIC_CHILDREN\s*\(\s*(_\w*)\s*\)", args[1]) if len(args) >= 4 else None
        local = re.fullmatch(r"SYSCTL_CHILDREN\s*\(\s*(\w+)\s*\)", args[1]) if len(args) >= 4 else None
        parent = static.group(1) if static else (f"{origin}#{local.group(1)}" if local else None)
        name = _literal(args[3]) if parent else None
        if parent and not name:  # a name computed at run time: a wildcard branch (its children are literal),
            if macro.startswith("SYSCTL_ADD_NODE"):  # or, for a leaf, an open parent
                own = f"{origin}#{assigned_to}" if assigned_to else f"{parent}_*"
                return [("node", parent, "*", origin, False, own)]
            return [("opens", parent)]
        if not name or not re.fullmatch(r"[A-Za-z0-9_-]+", name):
            return []
        if macro.startswith("SYSCTL_ADD_NODE"):  # open unless its children can be found (var = ..._ADD_NODE)
            own = f"{origin}#{assigned_to}" if assigned_to else f"{parent}_{name}"
            return [("node", parent, name, origin, not assigned_to, own)]
        return [("leaf", parent, name, _flags_where(args[4]), origin, None)] if len(args) >= 5 else []
    if macro == "SYSCTL_ROOT_NODE" and len(args) >= 2:
        return [("node", "", args[1], origin, False, f"_{args[1]}")]
    if len(args) < 4 or not re.fullmatch(r"_?\w*", args[0]) or not re.fullmatch(r"\w+", args[2]):
        return []
    if macro.startswith("SYSCTL_NODE"):
        return [("node", args[0], args[2], origin, False, f"{args[0]}_{args[2]}" if args[0] else f"_{args[2]}")]
    return [("leaf", args[0], args[2], _flags_where(args[3]), origin, _variable(args[4]) if len(args) > 4 else None)]


def _show(gitdir: str, commit: str, path: str) -> str:
    shown = subprocess.run(["git", "-C", gitdir, "show", f"{commit}:{path}"], capture_output=True, text=True)
    return shown.stdout if shown.returncode == 0 else ""


def kernel_options(gitdir: str, commit: str) -> tuple[set[str], set[str]]:
    """(every kernel option sys/conf/options{,.amd64} declare, those amd64 GENERIC turns on): the options of
    GENERIC, DEFAULTS and the files they include, and DEV_<NAME> for each of their devices."""
    known = set()
    for path in ("sys/conf/options", "sys/conf/options.amd64"):
        known |= {line.split()[0] for line in _show(gitdir, commit, path).splitlines()
                  if line.strip() and not line.lstrip().startswith("#")}
    enabled: set[str] = set()
    pending, seen = ["sys/amd64/conf/GENERIC", "sys/amd64/conf/DEFAULTS"], set()
    while pending:
        path = pending.pop()
        if path in seen:
            continue
        seen.add(path)
        for line in _show(gitdir, commit, path).splitlines():
            words = line.split("#", 1)[0].split()
            if len(words) < 2:
                continue
            if words[0] == "include":
                pending.append(posixpath.normpath(posixpath.join(posixpath.dirname(path), words[1].strip('"'))))
            elif words[0] in ("options", "device"):
                for word in words[1:]:
                    name = word.split("=")[0].strip(",")
                    enabled |= {name, f"DEV_{name.upper()}"} if words[0] == "device" else {name}
            elif words[0] in ("nooptions", "nodevice"):
                enabled -= {w.split("=")[0] for w in words[1:]}
    return known, enabled


FILES_KEYWORDS = {"compile-with", "no-obj", "no-implicit-rule", "dependency", "clean", "before-depend",
                  "local", "warning", "obj-prefix", "nowerror", "no-ctfconvert", "profiling-routine", "mandatory"}


def module_builds(gitdir: str, commit: str) -> tuple[set[str], set[str]]:
    """(the .c files sys/modules builds as loadable modules, the options that are modules too or that their
    Makefiles define): a file a module builds exists without the kernel option, an option named like a
    module directory (ZFS: zfs.ko, DUMMYNET: dummynet.ko) is loaded rather than compiled in, and a macro a
    module's Makefile defines (-DINVARIANTS, `#define VIMAGE 1` into its opt_*.h) is on in that module."""
    text = subprocess.run(["git", "-C", gitdir, "grep", "-h", "-E", r"\.c\b|-D[A-Z]|define [A-Z]", commit, "--",
                           "sys/modules/*Makefile*"], capture_output=True, text=True).stdout
    folders = subprocess.run(["git", "-C", gitdir, "ls-tree", "-r", "-d", "--name-only", commit, "sys/modules/"],
                             capture_output=True, text=True).stdout.split()
    return (set(re.findall(r"([\w-]+\.c)\b", text)),
            set(re.findall(r"-D([A-Z][A-Z0-9_]+)", text)) | set(re.findall(r"define ([A-Z][A-Z0-9_]+)\b", text))
            | {posixpath.basename(folder).upper() for folder in folders})


def file_gates(gitdir: str, commit: str, missing: set[str], built_as_module: set[str]) -> dict[str, frozenset[str]]:
    """sys/conf/files{,.amd64}: for each source file compiled only with a kernel option GENERIC lacks
    (net/rss_config.c: `optional inet rss | inet6 rss`), the options it needs. Devices are not gates (a
    driver GENERIC leaves out is a loadable module), nor is a file some module builds."""
    gates = {}
    for path in ("sys/conf/files", "sys/conf/files.amd64"):
        text = re.sub(r"\\\n", " ", _show(gitdir, commit, path))
        for line in text.splitlines():
            words = line.split("#", 1)[0].split()
            if len(words) < 3 or words[1] != "optional":
                continue
            tokens = []
            for word in words[2:]:
                if word in FILES_KEYWORDS or word.startswith('"'):
                    break
                tokens.append(word)
            clauses = " ".join(tokens).split("|")
            needs = [{w.upper() for w in clause.split()} & missing for clause in clauses]
            if needs and all(needs) and posixpath.basename(words[0]) not in built_as_module:
                gates[words[0]] = frozenset(needs[0])
    return gates


def freebsd_tree_rows(gitdir: str, commit: str) -> tuple[list[Row], set[str], set[str], dict[str, frozenset[str]]]:
    """(rows, open nodes, inert names, names that exist only with kernel options GENERIC lacks -> those
    options) of one source tree: every SYSCTL_*/TUNABLE_* declaration of sys/, with parent symbols
    (_net_inet_tcp) resolved through the SYSCTL_NODE declarations, plus the loader's own variables from its
    defaults file."""
    listing = subprocess.run(["git", "-C", gitdir, "grep", "-l", "-E", r"SYSCTL_|TUNABLE_|getenv_|testenv|ZFS_MODULE_PARAM",
                              commit, "--", "sys/*.c", "sys/*.h"], capture_output=True, text=True).stdout.split()
    paths = [entry.split(":", 1)[1] for entry in listing]
    batch = subprocess.run(["git", "-C", gitdir, "cat-file", "--batch"], input="".join(
        f"{commit}:{p}\n" for p in paths).encode(), capture_output=True).stdout
    known, enabled = kernel_options(gitdir, commit)
    module_sources, module_macros = module_builds(gitdir, commit)
    missing = known - enabled - module_macros
    gates_of_file = file_gates(gitdir, commit, missing, module_sources)
    declarations, guard_of, offset = [], [], 0
    for path in paths:
        header_end = batch.index(b"\n", offset)
        header = batch[offset:header_end].split()
        if header[-1] == b"missing":
            offset = header_end + 1
            continue
        size = int(header[2])
        blob = batch[header_end + 1:header_end + 1 + size].decode("utf-8", "replace")
        offset = header_end + 1 + size + 1
        origin = path.removeprefix("sys/")
        for declaration, guard in freebsd_declarations(blob, origin):
            declarations.append(declaration)
            guard_of.append(gates_of_file.get(origin, frozenset()) | (guard & missing))
    paths_of: dict[str, str] = {"": ""}
    open_nodes: set[str] = set()
    nodes = [d for d in declarations if d[0] == "node"]
    for _ in range(8):  # parents are resolved level by level
        for _, parent, name, _, dynamic, own in nodes:
            if parent in paths_of:
                full = f"{paths_of[parent]}.{name}".lstrip(".")
                paths_of[own] = full
                if dynamic:
                    open_nodes.add(full)
    open_nodes |= {paths_of[d[1]] for d in declarations if d[0] == "opens" and d[1] in paths_of}
    rows: list[Row] = []
    live: set[str] = set()
    declared_inert: set[str] = set()
    gates: dict[str, set[frozenset[str]]] = {}
    for declaration, guard in zip(declarations, guard_of):
        if declaration[0] == "node":
            _, parent, name, origin, _dynamic, _own = declaration
            if parent not in paths_of:
                continue
            full, where, inert = f"{paths_of[parent]}.{name}".lstrip("."), "node", None
        elif declaration[0] == "leaf":
            _, parent, name, where, origin, inert = declaration
            if parent not in paths_of or not paths_of[parent]:
                continue
            full = f"{paths_of[parent]}.{name}"
        elif declaration[0] == "tunable":
            _, full, origin, inert = declaration
            where = "boot"
        else:
            continue
        rows.append((full, where, origin))
        gates.setdefault(full, set()).add(guard)
        if where != "node":
            (declared_inert if inert else live).add(full)
    # a name declared twice (a sysctl and a TUNABLE_FETCH elsewhere) does something if either declaration does;
    # it needs an option only if every declaration of it does
    inert_names = declared_inert - live
    gated = {name: min(found, key=sorted) for name, found in gates.items() if all(found)}
    return rows, open_nodes, inert_names, gated


def loader_defaults(gitdir: str, commit: str) -> list[Row]:
    """Variables of the loader's defaults file (stand/defaults/loader.conf; sys/boot/forth/loader.conf
    before 12.0): every 'name="value"' line, commented or not, is a variable loader(8) reads."""
    for path in ("stand/defaults/loader.conf", "sys/boot/forth/loader.conf"):
        shown = subprocess.run(["git", "-C", gitdir, "show", f"{commit}:{path}"], capture_output=True, text=True)
        if shown.returncode == 0:
            names = re.findall(r'^#?\s*([A-Za-z][A-Za-z0-9_.]*)\s*=\s*"', shown.stdout, re.M)
            return [(name, "loader", path.rsplit("/", 2)[-2] + "/loader.conf") for name in names]
    return []


def freebsd_source_rows(mirrors: Path) -> str:
    """One table over all snapshots: name, where, the snapshots (indices) that declare it, origin."""
    table: dict[tuple[str, str], tuple[set[int], str]] = {}
    open_nodes: set[str] = set()
    inert: dict[str, set[int]] = {}
    needs: dict[str, dict[int, frozenset[str]]] = {}
    for index, (_, _, repo, commit) in enumerate(FREEBSD_SNAPSHOTS):
        gitdir = next(p for p in (mirrors / repo.replace("/", "+")).glob("repo*") if p.is_dir())
        rows, opened, inert_names, gated = freebsd_tree_rows(str(gitdir), commit)
        for name in {row[0] for row in rows}:
            needs.setdefault(name, {})[index] = gated.get(name, frozenset())
        rows += loader_defaults(str(gitdir), commit)
        open_nodes |= opened
        merged = merge(rows)
        for name, (where, origin) in merged.items():
            seen, first_origin = table.get((name, where), (set(), origin.split(",")[0]))
            seen.add(index)
            table[(name, where)] = (seen, origin.split(",")[0])
            if name in inert_names and where != "node":
                inert.setdefault(name, set()).add(index)
    lines = ["# os: freebsd"]
    for version, label, repo, commit in FREEBSD_SNAPSHOTS:
        lines.append(f"# snapshot: {version}\t{label}\t{repo}@{commit[:12]}")
    lines += ["# source: SYSCTL_*, TUNABLE_* and getenv declarations of sys/ in each snapshot (parents resolved "
              "through SYSCTL_NODE), and the loader's defaults/loader.conf",
              "# generated by tools/extract_knob_names.py freebsd-src; columns: name, where, snapshots "
              "(indices of the snapshot lines), origin; where=node is a branch, open-node a branch whose "
              "children are added at run time; a snapshot index in 'inert' declares the name but reads it nowhere; "
              "'needs:OPT' names kernel options the newest snapshot declaring it compiles it only with, which "
              "amd64 GENERIC lacks (an #ifdef OPT block, or a file sys/conf/files makes optional on OPT)"]
    for (name, where), (seen, origin) in sorted(table.items()):
        if where == "node" and name in open_nodes:
            where = "open-node"
        spans = _spans(sorted(seen))
        # inert only where an earlier snapshot read it: a driver generation that dropped the knob (a name
        # inert from its first snapshot on is more likely read through a macro of a header)
        first_live = min(seen - inert.get(name, set()), default=None)
        dead = _spans(sorted(i for i in inert.get(name, set()) & seen if first_live is not None and i > first_live))
        newest = needs.get(name, {}).get(max(seen), frozenset())
        lines.append(f"{name}\t{where}\t{spans}\t{origin}" + (f"\tinert:{dead}" if dead else "")
                     + (f"\tneeds:{'+'.join(sorted(newest))}" if newest else ""))
    return "\n".join(lines) + "\n"


def _spans(indices: list[int]) -> str:
    out, start = [], None
    for position, index in enumerate(indices):
        if start is None:
            start = index
        if position + 1 == len(indices) or indices[position + 1] != index + 1:
            out.append(str(start) if start == index else f"{start}-{index}")
            start = None
    return ",".join(out)


# ---------- OpenBSD ----------

def openbsd_sysctl2(text: str, origin: str) -> list[Row]:
    """Variable lines of sysctl(2): '.It Dv CONST Pq Va name', '.It Dv CONST Ta type Ta changeable',
    and the PF_INET / PF_INET6 tables '.It proto Ta variable Ta type Ta changeable'."""
    names: dict[str, str] = {}
    changeable: dict[str, str] = {}
    family = None
    out: list[Row] = []
    for line in text.splitlines():
        if re.fullmatch(r"\.It Dv PF_INET6?\s*", line):
            family = "net.inet6" if line.strip().endswith("6") else "net.inet"
            continue
        match = re.match(r"^\.It Dv (\w+) Pq Va ([a-z0-9_.]+)", line)
        if match:
            names[match.group(1)] = match.group(2)
            continue
        match = re.match(r'^\.It Dv (\w+) Ta "[^"]*" Ta "([^"]*)"', line)
        if match:
            changeable[match.group(1)] = match.group(2)
            continue
        match = re.match(r'^\.It ([a-z0-9]+) Ta ([a-z0-9_-]+) Ta \S+ Ta "?([^"]+)"?$', line)
        if match and family:
            proto, variable, change = match.groups()
            name = f"net.bpf.{variable}" if proto == "bpf" else f"{family}.{proto}.{variable}"
            out.append((name, _openbsd_where(change), origin))
    out += [(name, _openbsd_where(changeable.get(const, "no")), origin) for const, name in names.items()]
    return out


def _openbsd_where(changeable: str) -> str:
    return "runtime" if changeable.strip() in ("yes", "raise only") else "read-only"


# table -> (prefix of its slot-number #defines, sysctl branches it names)
OPENBSD_TABLES = {"TCPCTL_NAMES": ("TCPCTL_", ["net.inet.tcp"]),
                  "CTL_IFQ_NAMES": ("IFQCTL_", ["net.inet.ip.ifq", "net.inet6.ip6.ifq"]),
                  "CTL_HW_NAMES": ("HW_", ["hw"]), "CTL_HW_BATTERY_NAMES": ("HW_BATTERY_", ["hw.battery"])}
# the header each table was copied from (tools/sources/openbsd/headers.h names the revision)
OPENBSD_TABLE_ORIGIN = {"CTL_HW_NAMES": "sysctl.h", "CTL_HW_BATTERY_NAMES": "sysctl.h"}


def openbsd_name_tables(text: str, origin: str) -> Iterator[Row]:
    """`#define X_NAMES { { "name", CTLTYPE_... }, ... }` tables; a NULL slot whose number has a
    #define is 'unnamed' (the kernel number exists, sysctl(8) accepts no name for it)."""
    defines = {(c, int(n)) for c, n in re.findall(r"#define\s+([A-Z]+CTL_[A-Z_0-9]+)\s+(\d+)", text)}
    for table, body in re.findall(r"#define\s+(\w+_NAMES)\s*\{\s*\\\n(.*?)\n\}", text, re.S):
        constant_prefix, branches = OPENBSD_TABLES.get(table, ("", []))
        unnamed = {n: c[len(constant_prefix):].lower() for c, n in defines if c.startswith(constant_prefix)}
        slots = re.findall(r'\{\s*(NULL|0|"[a-z0-9_]+")\s*,', body)
        where_from = OPENBSD_TABLE_ORIGIN.get(table, origin)
        for index, slot in enumerate(slots):
            for branch in branches:
                if slot == '"gap"':
                    continue  # a number no longer used (sysctl.h)
                if slot.startswith('"'):  # sysctl.h says a name exists, not whether a write is taken
                    yield f"{branch}.{slot.strip(chr(34))}", "documented" if table in OPENBSD_TABLE_ORIGIN else "runtime", where_from
                elif index in unnamed:
                    yield f"{branch}.{unnamed[index]}", "unnamed", origin


def openbsd_rows(_: Path) -> tuple[list[str], list[Row]]:
    sysctl2 = SOURCES / "openbsd" / "sysctl.2.lines"
    headers = SOURCES / "openbsd" / "headers.h"
    rows = list(openbsd_sysctl2(sysctl2.read_text(), "sysctl.2"))
    rows += openbsd_name_tables(headers.read_text(), "tcp_var.h/if.h")
    header = ["os: openbsd", "release: 7.3",
              "source: sysctl(2) rev 1.50 of 2022-11-07 (after 7.2, so 7.3 is the first release with it): "
              "tools/sources/openbsd/sysctl.2.lines",
              "source: sysctl(8) name tables of openbsd/src sys/netinet/tcp_var.h and sys/net/if.h, and "
              "CTL_HW_NAMES of sys/sys/sysctl.h rev 1.246: tools/sources/openbsd/headers.h"]
    return header, rows


# The sysctl(8) name tables of each release (tools/sources/openbsd/releases/<folder>/, one file per header,
# line 1 naming repo@commit:path): table -> the branches it names. A NODE slot is a branch, other slots are
# variables; CTL_NET_UNIX_PROTO_NAMES repeats under each socket type that CTL_NET_UNIX_NAMES lists.
OPENBSD_RELEASE_TABLES = {
    "CTL_KERN_NAMES": ["kern"], "CTL_KERN_SEMINFO_NAMES": ["kern.seminfo"], "CTL_KERN_SHMINFO_NAMES": ["kern.shminfo"],
    "CTL_KERN_WITNESS_NAMES": ["kern.witness"], "CTL_KERN_AUDIO_NAMES": ["kern.audio"],
    "CTL_KERN_VIDEO_NAMES": ["kern.video"], "CTL_KERN_FORKSTAT_NAMES": ["kern.forkstat"],
    "CTL_KERN_INTRCNT_NAMES": ["kern.intrcnt"], "CTL_KERN_MALLOC_NAMES": ["kern.malloc"],
    "CTL_KERN_NCHSTATS_NAMES": ["kern.nchstats"], "CTL_KERN_TIMECOUNTER_NAMES": ["kern.timecounter"],
    "CTL_KERN_TTY_NAMES": ["kern.tty"], "CTL_KERN_WATCHDOG_NAMES": ["kern.watchdog"],
    "CTL_KERN_CLOCKINTR_NAMES": ["kern.clockintr"], "CTL_HW_NAMES": ["hw"], "CTL_HW_BATTERY_NAMES": ["hw.battery"],
    "CTL_VM_NAMES": ["vm"], "CTL_SWPENC_NAMES": ["vm.swapencrypt"], "CTL_FS_NAMES": ["fs"],
    "CTL_FS_POSIX_NAMES": ["fs.posix"], "CTL_NET_RT_NAMES": ["net.route"], "CTL_NET_KEY_NAMES": ["net.key"],
    "CTL_NET_BPF_NAMES": ["net.bpf"], "CTL_NET_PFLOW_NAMES": ["net.pflow"], "CTL_NET_LINK_NAMES": ["net.link"],
    "CTL_NET_LINK_IFRXQ_NAMES": ["net.link.ifrxq"], "CTL_NET_UNIX_NAMES": ["net.unix"],
    "IPCTL_NAMES": ["net.inet.ip"], "ICMPCTL_NAMES": ["net.inet.icmp"], "IGMPCTL_NAMES": ["net.inet.igmp"],
    "IPIPCTL_NAMES": ["net.inet.ipip"], "TCPCTL_NAMES": ["net.inet.tcp"], "UDPCTL_NAMES": ["net.inet.udp"],
    "GRECTL_NAMES": ["net.inet.gre"], "ESPCTL_NAMES": ["net.inet.esp"], "AHCTL_NAMES": ["net.inet.ah"],
    "MOBILEIPCTL_NAMES": ["net.inet.mobileip"], "ETHERIPCTL_NAMES": ["net.inet.etherip"],
    "IPCOMPCTL_NAMES": ["net.inet.ipcomp"], "CARPCTL_NAMES": ["net.inet.carp"], "PFSYNCCTL_NAMES": ["net.inet.pfsync"],
    "DIVERTCTL_NAMES": ["net.inet.divert"], "PIMCTL_NAMES": ["net.inet.pim"], "IPV6CTL_NAMES": ["net.inet6.ip6"],
    "ICMPV6CTL_NAMES": ["net.inet6.icmp6"], "DIVERT6CTL_NAMES": ["net.inet6.divert"], "PIM6CTL_NAMES": ["net.inet6.pim6"],
    "CTL_IFQ_NAMES": ["net.inet.ip.ifq", "net.inet6.ip6.ifq"], "MPLSCTL_NAMES": ["net.mpls"],
    "PIPEXCTL_NAMES": ["net.pipex"],
}
# release folder -> (the version it is placed at, how lists name it): a -current tree sits after the release it
# follows and before the next, so releases between are judged by it and the next list, never by it alone
OPENBSD_RELEASES = {"6.0": ("6.0", "6.0"), "6.1": ("6.1", "6.1"), "6.2": ("6.2", "6.2"), "6.3": ("6.3", "6.3"),
                    "6.4": ("6.4", "6.4"), "6.5": ("6.5", "6.5"), "6.6": ("6.6", "6.6"), "6.7": ("6.7", "6.7"),
                    "6.8-current": ("6.7.9", "6.8-current of 2020-06"), "7.3": ("7.3", "7.3"),
                    "7.4-current": ("7.4.9", "7.4-current of 2023-12 (CobaltBSD's tree)"),
                    "7.5": ("7.5", "7.5 (SecBSD 1.5's tree)"), "7.6": ("7.6", "7.6 (SecBSD 1.6's tree)")}
_TABLE = re.compile(r"#define\s+(\w+_NAMES)\s*\{\s*\\\n(.*?)\n\s*\}", re.S)
_SLOT = re.compile(r'\{\s*(NULL|0|"[A-Za-z0-9_.-]+")\s*,\s*(\w+)\s*\}')


def openbsd_release_rows(folder: Path) -> list[Row]:
    """Every variable the name tables of one release folder give sysctl(8), placed under its branch."""
    tables: dict[str, list[tuple[str, str]]] = {}
    origins: dict[str, str] = {}
    for header in sorted(folder.glob("*.h")):
        text = header.read_text()
        defines = {int(n): c for c, n in re.findall(r"#define\s+([A-Z][A-Z0-9_]*)\s+(\d+)\b", text)}
        for table, body in _TABLE.findall(text):
            prefix = _constant_prefix(table)
            slots = []
            for index, (name, kind) in enumerate(_SLOT.findall(body)):
                if name.startswith('"'):
                    slots.append((name.strip('"'), kind))
                elif prefix and defines.get(index, "").startswith(prefix):  # a number sysctl(8) has no name for
                    slots.append((defines[index][len(prefix):].lower(), "unnamed"))
            tables.setdefault(table, slots)
            origins.setdefault(table, header.name)
    branches = dict(OPENBSD_RELEASE_TABLES)
    unix = [f"net.unix.{name}" for name, kind in tables.get("CTL_NET_UNIX_NAMES", []) if kind == "CTLTYPE_NODE"]
    branches["CTL_NET_UNIX_PROTO_NAMES"] = unix
    rows: list[Row] = []
    for table, slots in tables.items():
        for branch in branches.get(table, []):
            rows += [(f"{branch}.{name}", "unnamed" if kind == "unnamed" else "documented", origins[table])
                     for name, kind in slots if kind != "CTLTYPE_NODE" and name != "gap"]
    return rows


def _constant_prefix(table: str) -> str | None:
    """The prefix of the slot-number #defines of a table (TCPCTL_NAMES: TCPCTL_; CTL_IFQ_NAMES: IFQCTL_), for
    the tables whose NULL slots the headers number (tcp_var.h's TCPCTL_RECVSPACE)."""
    special = {"CTL_IFQ_NAMES": "IFQCTL_", "CTL_HW_NAMES": "HW_", "CTL_KERN_NAMES": "KERN_"}
    if table in special:
        return special[table]
    return table[:-len("NAMES")] if not table.startswith("CTL_") else None


def openbsd_release_list(folder: Path) -> str:
    version, label = OPENBSD_RELEASES[folder.name]
    first_lines = sorted({p.read_text().splitlines()[0] for p in folder.glob("*.h")})
    where = re.search(r"Source: (\S+?)@([0-9a-f]{40})", first_lines[0])
    header = ["os: openbsd", f"release: {version}", f"label: {label}",
              f"source: the sysctl(8) name tables (#define *_NAMES) of {len(first_lines)} headers of "
              f"{where.group(1)}@{where.group(2)[:12]} (tools/sources/openbsd/releases/{folder.name}/, each file's "
              "first line names its path)"]
    rows = openbsd_release_rows(folder)
    if folder.name == "7.3":  # the 7.3 list also reads sysctl(2) of that release: what a write is taken for
        extra_header, extra = openbsd_rows(folder)
        header += [line for line in extra_header if line.startswith("source:")]
        rows += extra
    return render(header, rows)


# ---------- output ----------

WHERE_RANK = {"node": 0, "open-node": 0, "loader": 3, "unnamed": 0, "documented": 1, "read-only": 2, "runtime": 3, "boot": 3, "both": 4}


def merge(rows: Iterable[Row]) -> dict[str, tuple[str, str]]:
    """One entry per name; a name seen as loader tunable and runtime sysctl is 'both'."""
    merged: dict[str, tuple[str, list[str]]] = {}
    for name, where, origin in rows:
        if name not in merged:
            merged[name] = (where, [origin])
            continue
        old, origins = merged[name]
        if {old, where} == {"boot", "runtime"} or "both" in (old, where):
            new = "both"
        else:
            new = max(old, where, key=WHERE_RANK.__getitem__)
        merged[name] = (new, origins if origin in origins else origins + [origin])
    return {name: (where, ",".join(origins[:3])) for name, (where, origins) in merged.items()}


def render(header: list[str], rows: Iterable[Row]) -> str:
    merged = merge(rows)
    lines = [f"# {line}" for line in header]
    lines.append("# generated by tools/extract_knob_names.py; columns: name, where, origin")
    lines += [f"{name}\t{where}\t{origin}" for name, (where, origin) in sorted(merged.items())]
    return "\n".join(lines) + "\n"


def main(os_name: str) -> None:
    if os_name == "openbsd-release":  # argument 2: a folder of tools/sources/openbsd/releases
        sys.stdout.write(openbsd_release_list(SOURCES / "openbsd" / "releases" / sys.argv[2]))
        return
    if os_name == "freebsd-src":  # argument 2: the folder that holds the fetched mirrors (owner+name/repo)
        sys.stdout.write(freebsd_source_rows(Path(sys.argv[2] if len(sys.argv) > 2 else "/work/.mirror")))
        return
    builders = {"linux": linux_rows, "freebsd": freebsd_rows, "openbsd": openbsd_rows}
    with tempfile.TemporaryDirectory() as tmp:
        header, rows = builders[os_name](Path(tmp))
        sys.stdout.write(render(header, rows))


if __name__ == "__main__":
    main(sys.argv[1])
