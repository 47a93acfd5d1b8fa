"""Maintainer tool: build the per-release lists of knob names that exist (src/linerate/tuning/names/*.tsv)
from authoritative sources, so that the audit can tell "does not exist" from "linerate has no advice".

    .venv/bin/python tools/extract_knob_names.py linux    > src/linerate/tuning/names/linux-6.1.tsv
    .venv/bin/python tools/extract_knob_names.py freebsd  > src/linerate/tuning/names/freebsd-12.2.tsv
    .venv/bin/python tools/extract_knob_names.py openbsd  > src/linerate/tuning/names/openbsd-7.3.tsv

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

import gzip
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
    match = re.match(r"^/proc/sys/net/([a-z0-9_]+)/\*", heading)
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
                  "CTL_IFQ_NAMES": ("IFQCTL_", ["net.inet.ip.ifq", "net.inet6.ip6.ifq"])}


def openbsd_name_tables(text: str, origin: str) -> Iterator[Row]:
    """`#define X_NAMES { { "name", CTLTYPE_... }, ... }` tables; a NULL slot whose number has a
    #define is 'unnamed' (the kernel number exists, sysctl(8) accepts no name for it)."""
    defines = {(c, int(n)) for c, n in re.findall(r"#define\s+([A-Z]+CTL_[A-Z_0-9]+)\s+(\d+)", text)}
    for table, body in re.findall(r"#define\s+(\w+_NAMES)\s*\{\s*\\\n(.*?)\n\}", text, re.S):
        constant_prefix, branches = OPENBSD_TABLES.get(table, ("", []))
        unnamed = {n: c[len(constant_prefix):].lower() for c, n in defines if c.startswith(constant_prefix)}
        slots = re.findall(r'\{\s*(NULL|0|"[a-z0-9_]+")\s*,', body)
        for index, slot in enumerate(slots):
            for branch in branches:
                if slot.startswith('"'):
                    yield f"{branch}.{slot.strip(chr(34))}", "runtime", origin
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
              "source: sysctl(8) name tables of openbsd/src sys/netinet/tcp_var.h and sys/net/if.h: "
              "tools/sources/openbsd/headers.h"]
    return header, rows


# ---------- output ----------

WHERE_RANK = {"unnamed": 0, "documented": 1, "read-only": 2, "runtime": 3, "boot": 3, "both": 4}


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
    builders = {"linux": linux_rows, "freebsd": freebsd_rows, "openbsd": openbsd_rows}
    with tempfile.TemporaryDirectory() as tmp:
        header, rows = builders[os_name](Path(tmp))
        sys.stdout.write(render(header, rows))


if __name__ == "__main__":
    main(sys.argv[1])
