"""Build the built-in guest: Debian's cloud kernel and a busybox initramfs, from Debian packages only.

Inputs: the kernel package that `linux-image-cloud-amd64` depends on, `busybox-static`, and the
host's own iproute2, ethtool and nftables binaries (Debian packages installed by `make install`)
copied with the shared libraries `ldd` names. Modules: the closure of GUEST_MODULES under the
`depends=` field of each module's .modinfo, loaded by /init in dependency order. The packages are
unpacked with dpkg-deb, never installed on the host.

The result is cached in GUEST_DIR with a manifest whose digest covers every input (package
versions, the host binaries' and libraries' bytes, the guest scripts, the module list): `ensure_guest`
rebuilds when any of them changes and costs one `apt-cache` call otherwise.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import re
import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from linerate.errors import ExecError, LabError
from linerate.exec import LocalExecutor
from linerate.safepath import untrusted_component

GUEST_DIR = Path(os.environ.get("LINERATE_GUEST_DIR", "/var/cache/linerate/guest"))
KERNEL_META = "linux-image-cloud-amd64"
BUSYBOX = "busybox-static"
BUILDER_VERSION = 2
CC = "gcc"  # the agent (guest/agent.c) is built static with the host's compiler: no library in the guest
HOST_TOOLS = ("ip", "tc", "nstat", "ethtool", "nft", "dash", "conntrack")  # found on PATH, put in the guest's /usr/sbin
# conntrack (conntrack-tools): the state-table statistics and clearing rfc9693's test states between trials
# Debian's busybox-static runs its own applets before PATH (FEATURE_SH_STANDALONE), so its `ip`
# and `tc` would shadow iproute2's: the guest's /bin/sh is Debian's dash instead.
GUEST_MODULES = (
    "virtio_pci", "virtio_net", "virtio_console",  # the NICs and the agent's port
    "nf_tables", "nft_ct", "nft_nat", "nft_chain_nat", "nft_masq", "nf_conntrack",  # firewall profiles
    "nf_conntrack_netlink",  # ctnetlink: what the conntrack tool talks to
    "nft_flow_offload", "nf_flow_table_inet",  # flowtables (absent from this host's kernel, present in the guest's)
    "sch_tbf",
)
HOST_FILES = ("/etc/protocols", "/etc/services")  # netbase: nft resolves "icmp", "ipv6-icmp" with them
SCRIPTS = Path(__file__).with_name("guest")
DEPENDS_RE = re.compile(rb"(?:^|\x00)depends=([^\x00]*)\x00")


@dataclass(frozen=True)
class Guest:
    kernel: Path
    initrd: Path
    manifest: dict

    @property
    def kernel_release(self) -> str:
        return self.manifest["kernel_release"]


def _run(argv: list[str], cwd: Path | None = None) -> str:
    try:
        result = LocalExecutor().run(argv, cwd=cwd, timeout_s=600, check=False)
    except ExecError as exc:
        if exc.returncode == 127:  # could not be started; a timeout (None) stays an ExecError
            raise LabError(f"{argv[0]} not found; the built-in guest needs Debian's apt and dpkg") from None
        raise
    if result.returncode != 0:
        raise LabError(f"building the guest: {' '.join(argv)} failed: {result.stderr.strip()[-300:]}")
    return result.stdout


def kernel_package() -> str:
    """The versioned kernel package the cloud meta-package points at (linux-image-6.1.0-N-cloud-amd64)."""
    for line in _run(["apt-cache", "depends", KERNEL_META]).splitlines():
        name = line.split(":", 1)[1].strip() if line.strip().startswith("Depends:") else ""
        if name.startswith("linux-image-") and name.endswith("-cloud-amd64"):
            return name
    raise LabError(f"apt-cache knows no kernel behind {KERNEL_META}; run apt-get update")


def package_version(name: str) -> str:
    for line in _run(["apt-cache", "show", "--no-all-versions", name]).splitlines():
        if line.startswith("Version:"):
            return line.split(":", 1)[1].strip()
    raise LabError(f"apt-cache has no version of {name}")


def shared_libraries(binary: str) -> list[str]:
    """The files `ldd` says binary loads (the dynamic loader included)."""
    paths = []
    for line in _run(["ldd", binary]).splitlines():
        words = line.split()
        if "=>" in words and len(words) > words.index("=>") + 1 and words[words.index("=>") + 1].startswith("/"):
            paths.append(words[words.index("=>") + 1])
        elif words and words[0].startswith("/"):
            paths.append(words[0])
    return paths


def host_tool(name: str) -> str:
    path = shutil.which(name, path="/usr/sbin:/usr/bin:/sbin:/bin")
    if path is None:
        raise LabError(f"{name} is not installed; the built-in guest copies the host's {name} (run make install)")
    return path


def _sha256(path: str | Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def input_digest() -> tuple[str, dict]:
    kernel = kernel_package()
    tools = {name: host_tool(name) for name in HOST_TOOLS}
    libraries = sorted({lib for path in tools.values() for lib in shared_libraries(path)})
    inputs = {
        "builder": BUILDER_VERSION,
        "kernel_package": kernel, "kernel_version": package_version(kernel),
        "busybox_version": package_version(BUSYBOX),
        "tools": {name: [path, _sha256(path)] for name, path in tools.items()},
        "libraries": {path: _sha256(path) for path in libraries},
        "files": {path: _sha256(path) for path in HOST_FILES},
        "scripts": {p.name: _sha256(p) for p in sorted(SCRIPTS.iterdir())},
        "modules": list(GUEST_MODULES),
        "compiler": [host_tool(CC), _run([host_tool(CC), "--version"]).splitlines()[0]],
    }
    return hashlib.sha256(json.dumps(inputs, sort_keys=True).encode()).hexdigest(), inputs


def module_closure(module_dir: Path, wanted: tuple[str, ...]) -> list[Path]:
    """Module files for `wanted` and everything they depend on, dependencies first."""
    by_name = {path.name.split(".ko")[0].replace("-", "_"): path for path in module_dir.rglob("*.ko*")}
    ordered: list[Path] = []

    def visit(name: str, trail: tuple[str, ...]) -> None:
        key = name.replace("-", "_")
        if key in trail or by_name.get(key) in ordered:
            return
        if key not in by_name:
            raise LabError(f"the guest kernel has no module {name}")
        match = DEPENDS_RE.search(by_name[key].read_bytes())
        for dependency in filter(None, (match.group(1).decode().split(",") if match else [])):
            visit(dependency, trail + (key,))
        ordered.append(by_name[key])

    for name in wanted:
        visit(name, ())
    return ordered


def _copy(source: str | Path, root: Path, target: str | None = None) -> None:
    destination = root / (target or str(source)).lstrip("/")
    destination.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, destination)  # follows links: the guest gets the library itself
    destination.chmod(0o755)


def _unpack(package: str, work: Path) -> Path:
    _run(["apt-get", "download", "-q", package], cwd=work)
    deb = next(work.glob(f"{package}_*.deb"))
    tree = work / package
    _run(["dpkg-deb", "-x", str(deb), str(tree)])
    return tree


def build(target: Path, digest: str, inputs: dict) -> Guest:
    started = time.monotonic()
    steered = untrusted_component(str(target))
    if steered is not None:  # the kernel and initrd built here are booted as root
        raise LabError(f"guest cache {target}: {steered}; set LINERATE_GUEST_DIR to a folder of yours")
    steered = untrusted_component(str(target.parent), make=0o755)
    if steered is not None:
        raise LabError(f"guest cache {target}: {steered}; set LINERATE_GUEST_DIR to a folder of yours")
    with tempfile.TemporaryDirectory(dir=target.parent, prefix=".build-") as tmp:
        work = Path(tmp)
        os.chmod(work, 0o755)  # apt-get download drops privileges to _apt where it can
        kernel_tree, busybox_tree = _unpack(inputs["kernel_package"], work), _unpack(BUSYBOX, work)
        release = next((kernel_tree / "lib/modules").iterdir()).name
        root = work / "root"
        for folder in ("proc", "sys", "dev", "tmp", "run", "etc/linerate", "usr/sbin", "bin"):
            (root / folder).mkdir(parents=True, exist_ok=True)
        busybox = busybox_tree / "bin/busybox"
        _copy(busybox, root, "/bin/busybox")
        for applet in _run([str(busybox), "--list"]).split():
            if applet != "busybox" and not (root / "bin" / applet).exists():
                (root / "bin" / applet).symlink_to("busybox")
        for name, (path, _) in inputs["tools"].items():
            _copy(path, root, f"/usr/sbin/{name}")
        (root / "bin/sh").unlink()
        (root / "bin/sh").symlink_to("/usr/sbin/dash")
        for path in [*inputs["libraries"], *inputs["files"]]:
            _copy(path, root)
        modules = module_closure(kernel_tree / "lib/modules" / release, GUEST_MODULES)
        for module in modules:
            _copy(module, root, f"/lib/modules/{module.name}")
        (root / "etc/linerate/modules").write_text("".join(f"{m.name}\n" for m in modules))
        _compile_agent(root / "etc/linerate/agent")
        _copy(SCRIPTS / "init", root, "/init")
        files = sorted(str(p.relative_to(root)) for p in root.rglob("*"))
        archive = _cpio(busybox, root, files)
        staged = work / "out"
        staged.mkdir()
        shutil.copyfile(kernel_tree / f"boot/vmlinuz-{release}", staged / "vmlinuz")
        (staged / "initrd.img").write_bytes(gzip.compress(archive, compresslevel=6))
        manifest = {"digest": digest, "kernel_release": release, "modules": [m.name for m in modules],
                    "build_s": round(time.monotonic() - started, 1), "built_at": time.time(), "inputs": inputs}
        (staged / "manifest.json").write_text(json.dumps(manifest, indent=2))
        if target.exists():
            shutil.rmtree(target)
        staged.rename(target)
    return load(target)


def _compile_agent(target: Path) -> None:
    """guest/agent.c -> a static binary (glibc's libc.a, Debian libc6-dev)."""
    _run([host_tool(CC), "-static", "-O2", "-Wall", "-o", str(target), str(SCRIPTS / "agent.c")])
    target.chmod(0o755)


def _cpio(busybox: Path, root: Path, files: list[str]) -> bytes:
    result = LocalExecutor().run_bytes([str(busybox), "cpio", "-o", "-H", "newc"], cwd=root,
                                       stdin=("\n".join(files) + "\n").encode(), check=False)
    if result.returncode != 0:
        raise LabError(f"building the guest: busybox cpio failed: {result.stderr.decode()[-300:]}")
    return result.stdout


def load(target: Path = GUEST_DIR) -> Guest:
    manifest = json.loads((target / "manifest.json").read_text())
    return Guest(target / "vmlinuz", target / "initrd.img", manifest)


def cached(target: Path = GUEST_DIR) -> Guest | None:
    """The cached guest, if it is there whole and built by this builder version (an older one may
    lack what this linerate asks its agent for, e.g. LRF file reads): else None, and it is rebuilt."""
    try:
        guest = load(target)
    except (OSError, ValueError):
        return None
    if (guest.manifest.get("inputs") or {}).get("builder") != BUILDER_VERSION:
        return None
    return guest if guest.kernel.is_file() and guest.initrd.is_file() else None


def current_guest(target: Path = GUEST_DIR) -> Guest:
    """The cached guest as `make install` (`linerate lab guest`) left it, built only when there is
    none: checking every input costs apt-cache, ldd and hashing (~1 s), too much for each lab up."""
    return cached(target) or ensure_guest(target)[0]


def ensure_guest(target: Path = GUEST_DIR, rebuild: bool = False) -> tuple[Guest, bool]:
    """(the guest, whether it was built now): build when missing, when an input changed, or asked."""
    digest, inputs = input_digest()
    guest = cached(target)
    if guest is not None and guest.manifest.get("digest") == digest and not rebuild:
        return guest, False
    return build(target, digest, inputs), True
