"""Maintainer tool: build src/linerate/tuning/names/linux-releases.tsv, the Linux sysctl names of every
long-term kernel series from 4.4 on, read from each release's own source tree.

    .venv/bin/python tools/extract_linux_releases.py > src/linerate/tuning/names/linux-releases.tsv

Per release (LINUX_TREES: a public git repository holding that release's tree, or an unpacked Debian
linux-source package), two readings:
- declarations: every `struct ctl_table NAME[] = {...}` of the tree, its `.procname` entries (and the
  literal names of devinet.c's / neighbour.c's *_ENTRY macros), placed under the path the file registers
  the table at (register_sysctl*("net/ipv4", table), register_net_sysctl(net, "net/core", ...), or a
  parent entry's `.child = table` in kernel/sysctl.c before 6.x). A table whose path cannot be read
  (built at run time) gives leaf names only ("leaf" rows): the name of a sysctl whose last part no
  release declares anywhere cannot exist in that release.
- documentation: Documentation/networking/ip-sysctl.{txt,rst}, nf_conntrack-sysctl.{txt,rst} and
  sysctl/net.{txt,rst}; an entry whose text says "Obsolete since linux-X", "legacy option, it has no
  effect anymore" or "this tunable has no effect" marks the name a no-op from X (or from the first
  release whose text says so).

Rows: name, kind (name | leaf), the release indices (as in the '# release:' lines) that have it,
the release index from which the documentation calls it a no-op and its words, origin.
Interface parts of net.ipv{4,6}.{conf,neigh}.IF.* are generalised to IF, as in linux-6.1.tsv.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

# version, label, where: "repo-dir@commit" of a fetched mirror (/work/.mirror/owner+name/repo) or a folder
LINUX_TREES = [
    ("4.4", "4.4.121", "AnTuanHa/linux-stable-v4.4.121@2fbc93135f8d52084b11bfb512a6834b6cfe8767", ""),
    ("4.9", "4.9.154", "sh1rataki/linux-4.9.154@9d53b8b4dd1b6d5863fd4a2310a2dc4a55584963", ""),
    ("4.14", "4.14.5", "monkeygq/linux-4.14.5@" + "HEAD", ""),
    ("4.19", "4.19.13", "shubham95/linux-4.19.13@a87d8dfdd8057100f3a889e6f98299a8502ca70c", ""),
    ("5.4", "5.4.59", "BoKyoungHan/linux-5.4.59-vanilla@8b9bd8c4249b93898885d4797a10b7e749e9dfbe", "linux-5.4.59/"),
    ("5.10", "5.10.7", "ejga2001/linux-5.10.7@HEAD", ""),
    ("5.15", "5.15.135", "waterm310n/linux-5.15.135@e56ab5423d41b6039b3fdb0020dda60f202d5a74", ""),
    ("6.1", "6.1.20", "c1336658570/linux-6.1.20@fad5889c0b10f47566f112b3c48405ce49369f80", ""),
    ("6.6", "6.6.87", "Yunbaby8/linux-6.6.87-lab@HEAD", ""),
    ("6.12", "6.12.117", "Debian linux-source-6.12 6.12.117-1 (trixie)", "/tmp/lr41/src612/usr/src/linux-source-6.12/"),
]
MIRRORS = Path("/work/.mirror")
DOCS = ["Documentation/networking/ip-sysctl.txt", "Documentation/networking/ip-sysctl.rst",
        "Documentation/networking/nf_conntrack-sysctl.txt", "Documentation/networking/nf_conntrack-sysctl.rst",
        "Documentation/sysctl/net.txt", "Documentation/admin-guide/sysctl/net.rst"]
SOURCE_DIRS = ["net", "kernel", "mm", "fs", "ipc", "security", "drivers/net", "drivers/char", "drivers/tty", "crypto",
               "block", "lib", "arch/x86", "init"]
# The words with which ip-sysctl / nf_conntrack-sysctl / sysctl/net say a knob does nothing any more.
# "deprecated" alone is not enough: unres_qlen is "(deprecated in linux 3.3) : use unres_qlen_bytes
# instead" and still works (it sets unres_qlen_bytes); only a deprecation that says the mechanism is gone
# counts ("this is deprecated for ipv4 as route cache is no longer used", route/max_size since 3.6).
NO_OP = re.compile(r"\(?obsolete since linux-?([\d.]+)\)?|legacy option, it has no effect anymore|"
                   r"this tunable has no effect|has no effect any ?more|no longer has any effect|"
                   r"(?:from linux kernel [\d.]+ onwards, )?this is deprecated(?: for (?P<family>ipv4|ipv6))? as [^.]*"
                   r"no longer used|this sysctl is now unused", re.I)
# A ctl_table entry a write cannot change: mode 0444, or devinet.c's DEVINET_SYSCTL_RO_ENTRY
READ_ONLY = re.compile(r"\.mode\s*=\s*0444\b")
# A file that changes a table's mode at run time (watchdog.c 6.6: nmi_watchdog declared 0444, set to 0644
# when the hardware has an NMI watchdog; nf_conntrack_standalone.c: 0444 in other namespaces) says nothing
# certain by its declarations: its 0444 entries are not read as read-only.
RUNTIME_MODE = re.compile(r"(?:\]|->)\s*\.?\s*mode\s*=")
RO_MACRO = re.compile(r"\w+_RO_ENTRY\s*\(\s*\w+\s*,\s*\"([a-z0-9_]+)\"")


class Tree:
    def __init__(self, where: str, prefix: str):
        self.prefix = prefix
        if prefix.startswith("/"):
            self.root, self.gitdir, self.commit = Path(prefix), None, None
            self.prefix = ""
        else:
            repo, _, commit = where.partition("@")
            self.gitdir = str(MIRRORS / repo.replace("/", "+") / "repo")
            self.commit, self.root = commit, None

    def read(self, path: str) -> str | None:
        if self.root is not None:
            file = self.root / path
            return file.read_text(errors="replace") if file.is_file() else None
        shown = subprocess.run(["git", "-C", self.gitdir, "show", f"{self.commit}:{self.prefix}{path}"],
                               capture_output=True)
        return shown.stdout.decode(errors="replace") if shown.returncode == 0 else None

    def files_with(self, needle: str) -> list[str]:
        if self.root is not None:
            found = subprocess.run(["grep", "-rl", "--include=*.c", needle] + SOURCE_DIRS, cwd=self.root,
                                   capture_output=True, text=True).stdout.split()
            return found
        specs = [f"{self.prefix}{d}/*.c" for d in SOURCE_DIRS]
        out = subprocess.run(["git", "-C", self.gitdir, "grep", "-l", needle, self.commit, "--"] + specs,
                             capture_output=True, text=True).stdout.split()
        return [line.split(":", 1)[1][len(self.prefix):] for line in out]


TABLE = re.compile(r"struct\s+ctl_table\s+(\w+)\s*\[[^\]]*\]\s*(?:__\w+\s*)*=\s*\{(.*?)\n\s*\};", re.S)
ENTRY = re.compile(r"\{([^{}]*)\}")
MACRO_NAME = re.compile(r"\w+_ENTRY\s*\([^\"()]*\"([a-z0-9_]+)\"")
REGISTER = re.compile(r"register_(?:net_)?sysctl\w*\s*\(\s*(?:[&\w>.-]+\s*,\s*)?\"([a-z0-9_/]+)\"\s*,\s*(\w+)")
LITERAL_PATH = re.compile(r"\"(net/[a-z0-9_/]+|kernel|vm|fs|debug|dev|abi)\"")


# Files whose per-interface tables are templates filled in with one entry per device
FILE_PATHS = {"net/ipv4/devinet.c": ["net.ipv4.conf.IF"], "net/ipv6/addrconf.c": ["net.ipv6.conf.IF"],
              "net/core/neighbour.c": ["net.ipv4.neigh.IF", "net.ipv6.neigh.IF"]}


def unread_variables(text: str, path: str) -> dict[str, str]:
    """What of one C file a ctl_table can write without effect -> why: a file-static variable named only
    where it is declared, assigned (`x = ...;`) or handed to a ctl_table (`.data = &x`) (net/ipv4/
    ip_fragment.c 4.4: ip4_frags_secret_interval_unused; route.c: ip_rt_gc_interval); and the gc_thresh of a
    `struct dst_ops` that has no .gc function (net/core/dst.c, dst_alloc(): `if (ops->gc && ... >
    ops->gc_thresh)`; route.c's ipv4_dst_ops since the IPv4 route cache went in 3.6)."""
    unread = {}
    for var in set(re.findall(r"^static\s+(?:const\s+)?(?:unsigned\s+)?(?:int|long|u32)\s+(\w+)\b[^;(]*;", text, re.M)):
        uses = [line for line in text.splitlines() if re.search(rf"\b{var}\b", line)]
        if all(re.match(rf"^\s*(?:static\s.*\b{var}\b[^(]*;|\.data\s*=\s*&{var}\s*,|{var}\s*=[^=])", line)
               for line in uses):
            unread[var] = f"{var}, which {path} never reads"
    for ops, body in re.findall(r"^static struct dst_ops (\w+) = \{(.*?)^\};", text, re.M | re.S):
        if not re.search(r"\.gc\s*=", body):
            unread[f"{ops}.gc_thresh"] = (f"{ops}.gc_thresh, which net/core/dst.c's dst_alloc() reads only for a "
                                          f"dst_ops with a .gc function, and {path}'s {ops} has none")
    return unread


def declarations(text: str, path: str = "") -> tuple[set[str], set[str], set[str]]:
    """(full dotted names, leaf names, full names declared read-only) of one C file's ctl_tables."""
    full, leaves, read_only, _, _ = declarations_with_data(text, path)
    return full, leaves, read_only


# The handlers that refuse a value outside [*extra1, *extra2] (EINVAL, the old value stays): kernel/sysctl.c
# do_proc_dointvec_minmax_conv / do_proc_douintvec_minmax_conv / proc_dou8vec_minmax, 4.4 .. 6.12
MINMAX = re.compile(r"\.proc_handler\s*=\s*&?(proc_dointvec_minmax|proc_douintvec_minmax|proc_dou8vec_minmax)\b")
# include/linux/sysctl.h (5.8+): the shared bounds
SYSCTL_VALUES = {"SYSCTL_ZERO": 0, "SYSCTL_ONE": 1, "SYSCTL_TWO": 2, "SYSCTL_THREE": 3, "SYSCTL_FOUR": 4,
                 "SYSCTL_ONE_HUNDRED": 100, "SYSCTL_TWO_HUNDRED": 200, "SYSCTL_ONE_THOUSAND": 1000,
                 "SYSCTL_THREE_THOUSAND": 3000, "SYSCTL_INT_MAX": 2147483647, "SYSCTL_MAXOLDUID": 65535,
                 "SYSCTL_NEG_ONE": -1}
STATIC_INT = re.compile(r"^\s*static\s+(?:const\s+)?(?:unsigned\s+)?(?:int|long|u8|u32)\s+(\w+)"
                        r"\s*(?:=\s*(-?\d+)\s*)?;", re.M)


def _bound(expression: str | None, constants: dict[str, int]) -> int | None:
    """The value an .extra1/.extra2 points at, when the file says it: SYSCTL_ONE, &one (`static int one =
    1;`, or `static int zero;`: 0); None for anything computed (10 * HZ, a value set at run time)."""
    if expression is None:
        return None
    expression = re.sub(r"\(\s*void\s*\*\s*\)", "", expression).strip()
    if expression in SYSCTL_VALUES:
        return SYSCTL_VALUES[expression]
    match = re.fullmatch(r"&\s*(\w+)", expression)
    return constants.get(match.group(1)) if match else None


def entry_bounds(entry: str, constants: dict[str, int]) -> tuple[str, int | None, int | None] | None:
    """(handler, min, max) of one ctl_table entry whose handler refuses values out of bounds; None otherwise."""
    handler = MINMAX.search(entry)
    if handler is None or re.search(r"^\s*#\s*if", entry, re.M):
        return None  # bounds under #ifdef CONFIG_X (bpf_jit_enable: 1..1 with BPF_JIT_ALWAYS_ON, else 0..2)
    extra = {key: value.strip() for key, value in re.findall(r"\.(extra[12])\s*=\s*([^,\n]+)", entry)}
    return handler.group(1), _bound(extra.get("extra1"), constants), _bound(extra.get("extra2"), constants)


def declarations_with_data(text: str, path: str = "") -> tuple[set[str], set[str], set[str], dict[str, str],
                                                                dict[str, tuple[str, int | None, int | None]]]:
    """declarations(), for each full name whose entry writes a variable nothing reads, that variable, and
    for each full name whose handler refuses values out of bounds, (handler, min, max) (None: unbounded or
    not known; a name declared twice with other bounds keeps the looser)."""
    tables: dict[str, list[tuple[str, str | None]]] = {}
    data: dict[str, str] = {}
    # file-static bounds, unless the file also assigns them (a bound set at boot is not its initialiser)
    constants = {name: int(value or 0) for name, value in STATIC_INT.findall(text)
                 if len(re.findall(rf"\b{name}\s*=[^=]", text)) <= (1 if value else 0)}
    bounds: dict[str, tuple[str, int | None, int | None]] = {}
    unread = unread_variables(text, path)
    leaves: set[str] = set()
    full: set[str] = set()
    read_only_leaves: set[str] = set()
    for name, body in TABLE.findall(text):
        entries = []
        for entry in ENTRY.findall(body):
            proc = re.search(r"\.procname\s*=\s*\"([^\"]+)\"", entry)
            child = re.search(r"\.child\s*=\s*(\w+)", entry)
            if proc:
                entries.append((proc.group(1), child.group(1) if child else None))
                written = re.search(r"\.data\s*=\s*&([\w.]+)\s*,", entry)
                if written and written.group(1) in unread:
                    data[proc.group(1)] = unread[written.group(1)]
                bounded = entry_bounds(entry, constants)
                known = bounds.get(proc.group(1), bounded)
                bounds[proc.group(1)] = None if bounded is None or known is None else (
                    bounded[0], _looser(known[1], bounded[1], min), _looser(known[2], bounded[2], max))
                if READ_ONLY.search(entry) and not RUNTIME_MODE.search(text):
                    read_only_leaves.add(proc.group(1))
        entries += [(macro, None) for macro in MACRO_NAME.findall(body)]
        read_only_leaves |= set(RO_MACRO.findall(body))
        tables[name] = entries
        leaves |= {proc for proc, _ in entries}
    paths: dict[str, str] = {}
    for registered, table in REGISTER.findall(text):
        paths.setdefault(table, registered)
    if "register_sysctl_table(sysctl_base_table)" in text:
        paths["sysctl_base_table"] = ""
    for base in re.findall(r"register_sysctl_base\((\w+)\)", text):  # 6.1: kern_table under kernel
        paths.setdefault("kern_table" if base == "kernel" else f"{base}_table", base)
    if path in FILE_PATHS:
        leaves |= set(MACRO_NAME.findall(text))
        read_only_leaves |= set(RO_MACRO.findall(text))
    read_only: set[str] = set()
    for prefix in FILE_PATHS.get(path, []):  # per-interface tables filled in by macros
        full |= {canonical(f"{prefix}.{leaf}") for leaf in leaves}
        read_only |= {canonical(f"{prefix}.{leaf}") for leaf in read_only_leaves}
    literal = set(LITERAL_PATH.findall(text))
    for _ in range(6):  # .child links, level by level
        for table, entries in tables.items():
            if table in paths:
                for proc, child in entries:
                    if child and child not in paths:
                        paths[child] = f"{paths[table]}/{proc}".lstrip("/")
    if len(literal) == 1:  # a table copied at run time (kmemdup) and registered under the file's one path
        only = literal.pop()
        for table in tables:
            paths.setdefault(table, only)
    for table, entries in tables.items():
        if table not in paths or not paths[table]:
            continue
        for proc, child in entries:
            if child is None:
                full.add(canonical(f"{paths[table]}/{proc}".replace("/", ".")))
                if proc in read_only_leaves and path not in FILE_PATHS:
                    read_only.add(canonical(f"{paths[table]}/{proc}".replace("/", ".")))
    unread_names = {canonical(f"{paths[table]}/{proc}".replace("/", ".")): data[proc]
                    for table, entries in tables.items() if paths.get(table)
                    for proc, child in entries if child is None and proc in data}
    bounded_names = {canonical(f"{paths[table]}/{proc}".replace("/", ".")): bounds[proc]
                     for table, entries in tables.items() if paths.get(table)
                     for proc, child in entries if child is None and bounds.get(proc)
                     and (bounds[proc][1] is not None or bounds[proc][2] is not None)}
    return full, leaves, read_only, unread_names, bounded_names


def _looser(a: int | None, b: int | None, pick) -> int | None:
    return None if a is None or b is None else pick(a, b)


def canonical(name: str) -> str:
    parts = name.split(".")
    if len(parts) >= 5 and parts[0] == "net" and parts[1] in ("ipv4", "ipv6") and parts[2] in ("conf", "neigh"):
        parts[3] = "IF"
    return ".".join(parts)


def _prefix(heading: str, current: str) -> str | None:
    match = re.match(r"^(?:``)?/?proc/sys/net/([a-z0-9_]+)/\*", heading)
    if match:
        return f"net.{match.group(1)}"
    match = re.match(r"^``?([a-z0-9_]+)/(all|default|interface)/\*``?:?$", heading.strip())
    if match:
        return f"{'.'.join(current.split('.')[:2])}.{match.group(1)}.IF"
    return None


def documented(text: str, start: str) -> dict[str, str | None]:
    """name -> the no-op words of its entry (None: a live knob) of ip-sysctl / nf_conntrack-sysctl."""
    out: dict[str, str | None] = {}
    prefix, current = start, []
    lines = text.splitlines()
    for i, line in enumerate(lines):
        new = _prefix(line, prefix)
        if new:
            prefix = new
            continue
        match = re.match(r"^([a-z][a-z0-9_/]*(?:, *[a-z][a-z0-9_/]*)*) +- +([A-Za-z0-9 ]+)", line)
        if not match:
            continue
        body = []  # the whole entry: indented lines and blank lines up to the next entry or heading
        for following in lines[i + 1:]:
            if following.strip() and not following[0].isspace():
                break
            body.append(following.strip())
        family = prefix.split(".")[1] if prefix.startswith("net.ipv") else None
        words = next((m for m in NO_OP.finditer(" ".join(part for part in body if part))
                      if not m.group("family") or m.group("family") == family), None)
        current = [n for n in re.split(r", *", match.group(1))]
        for name in current:
            parts = name.split("/")
            if len(parts) >= 3 and parts[0] in ("neigh", "conf"):
                parts[1] = "IF"
            out[canonical(f"{prefix}.{'.'.join(parts)}")] = words.group(0).strip("()") if words else None
    return out


def core_documented(text: str) -> dict[str, str | None]:
    """sysctl/net.{txt,rst}: variables under '/proc/sys/net/core' chapters (a name line underlined or 'name')
    -> the no-op words of its text ("This sysctl is now unused.", net.core.warnings), else None."""
    out: dict[str, str | None] = {}
    prefix = None
    lines = text.splitlines()
    for i, line in enumerate(lines):
        chapter = re.match(r"^\d+\.\s+/proc/sys/net/([a-z0-9_]+)", line)
        if chapter:
            prefix = f"net.{chapter.group(1)}"
            continue
        underlined = i + 1 < len(lines) and re.fullmatch(r"-{3,}", lines[i + 1].strip() or "x")
        if prefix and underlined and re.fullmatch(r"[a-z][a-z0-9_]*", line.strip()):
            body = []  # up to the next underlined name or chapter
            for j in range(i + 2, len(lines)):
                if re.match(r"^\d+\.\s+/proc/sys/", lines[j]) or (
                        j + 1 < len(lines) and re.fullmatch(r"-{3,}", lines[j + 1].strip() or "x")):
                    break
                body.append(lines[j].strip())
            words = NO_OP.search(" ".join(part for part in body if part))
            out[f"{prefix}.{line.strip()}"] = words.group(0) if words else None
    return out


def main() -> None:
    names: dict[str, set[int]] = {}
    leaves: dict[str, set[int]] = {}
    no_op: dict[str, tuple[int, str]] = {}
    read_only: dict[str, set[int]] = {}
    origin: dict[str, str] = {}
    unread: dict[str, dict[int, str]] = {}  # name -> release index -> what it writes that nothing reads, and why
    declared: dict[str, set[int]] = {}
    ranges: dict[str, dict[int, tuple[str, int | None, int | None]]] = {}  # name -> release -> (handler, min, max)
    for index, (_, _, where, prefix) in enumerate(LINUX_TREES):
        tree = Tree(where, prefix)
        for path in tree.files_with("ctl_table"):
            text = tree.read(path) or ""
            full, leaf, fixed, unread_here, bounded = declarations_with_data(text, path)
            for name, found in bounded.items():
                known = ranges.setdefault(name, {}).get(index, found)
                ranges[name][index] = (found[0], _looser(known[1], found[1], min), _looser(known[2], found[2], max))
            for name, var in unread_here.items():
                unread.setdefault(name, {})[index] = var
            for name in full:
                declared.setdefault(name, set()).add(index)
            for name in fixed:
                read_only.setdefault(name, set()).add(index)
            for name in full:
                names.setdefault(name, set()).add(index)
                origin.setdefault(name, path)
            for name in leaf:
                leaves.setdefault(name, set()).add(index)
        for doc in DOCS:
            text = tree.read(doc)
            if text is None:
                continue
            if "net.rst" in doc or "net.txt" in doc:
                found = core_documented(text)
            else:
                found = documented(text, "net.netfilter" if "conntrack" in doc else "net.ipv4")
            for name, words in found.items():
                names.setdefault(name, set()).add(index)
                origin.setdefault(name, doc.rsplit("/", 1)[1])
                if words and name not in no_op:
                    since = re.search(r"(\d+\.\d+)", words)  # the version the words name, else this release
                    no_op[name] = (since.group(1) if since else LINUX_TREES[index][0], words)
    for name, found in unread.items():  # a no-op by its source: from the first release on which every later one agrees
        if name in no_op:
            continue
        later = sorted(i for i in declared[name] if i >= min(found))
        first = min(i for i in found if all(j in found for j in later if j >= i))
        last = max(declared[name])
        no_op[name] = (LINUX_TREES[first][0], f"its ctl_table entry writes {found[first]} (source of "
                       f"{LINUX_TREES[first][1]} to {LINUX_TREES[last][1]})")
    lines = ["# os: linux"]
    lines += [f"# release: {version}\t{label}\t{where}" for version, label, where, _ in LINUX_TREES]
    lines += ["# source: each release's ctl_table declarations (.procname under the path its file registers) "
              "and Documentation/networking/ip-sysctl, nf_conntrack-sysctl, sysctl/net",
              "# generated by tools/extract_linux_releases.py; columns: name, kind (name | leaf), release "
              "indices, no-op from (version: the documentation's words, or what the source shows), origin; 'read-only' rows: the releases whose "
              "declaration is mode 0444 or a *_RO_ENTRY macro; 'range' rows: the releases whose handler refuses a value "
              "outside min..max (an empty end: no bound known), as 'handler min..max'"]
    for name in sorted(names):
        seen = ",".join(map(str, sorted(names[name])))
        op = f"{no_op[name][0]}:{no_op[name][1]}" if name in no_op else ""
        lines.append(f"{name}\tname\t{seen}\t{op}\t{origin[name]}")
    for name in sorted(read_only):
        lines.append(f"{name}\tread-only\t{','.join(map(str, sorted(read_only[name])))}\t\t{origin.get(name, '')}")
    for name in sorted(ranges):  # one row per (handler, min, max) and the releases that declare it so
        same: dict[tuple, list[int]] = {}
        for index, bound in ranges[name].items():
            same.setdefault(bound, []).append(index)
        for (handler, low, high), indices in sorted(same.items(), key=lambda item: min(item[1])):
            span = f"{'' if low is None else low}..{'' if high is None else high}"
            lines.append(f"{name}\trange\t{','.join(map(str, sorted(indices)))}\t{handler} {span}\t{origin.get(name, '')}")
    for leaf in sorted(leaves):
        lines.append(f"{leaf}\tleaf\t{','.join(map(str, sorted(leaves[leaf])))}\t\t")
    sys.stdout.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
