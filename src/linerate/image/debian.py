"""`linerate image build debian`: a Debian 12 router image for a VM DUT, from Debian packages only.

A full distribution as a user would run it — its own kernel (linux-image-cloud-amd64), systemd,
openssh-server, nftables, ethtool, conntrack, iproute2 — built with mmdebstrap (Debian's
multi-mode bootstrapper, https://gitlab.mister-muffin.de/josch/mmdebstrap) into an ext4 file system
made with `mke2fs -d`, booted by EXTLINUX from the disk's MBR (syslinux's mbr.bin), saved as qcow2.
It has no linerate agent: linerate reaches it only as it reaches a user's own image — over SSH on
its management NIC (the third virtio NIC, MAC vm/qemu.MGMT_MAC, DHCP from qemu's user network).

Beside the image go the two files a VM DUT needs to log in (vm/image_access.py reads them):
`IMG.key` (the private key whose public half is root's authorized key) and `IMG.host_keys` (the
host keys the image's sshd holds, so the first login is already verified). A manifest `IMG.json`
holds a digest of every input: a second build with the same inputs only checks the image's sha256.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
import uuid
from dataclasses import dataclass
from pathlib import Path

from linerate.errors import ConfigError, ExecError, LabError, PreflightError
from linerate.exec import LocalExecutor
from linerate.inputs import read_text
from linerate.lab.signals import terminations_deferred
from linerate.report import output
from linerate.vm.qemu import MGMT_MAC

BUILDER_VERSION = 1
SUITE = "bookworm"
PACKAGES = ("linux-image-cloud-amd64", "systemd-sysv", "udev", "kmod", "openssh-server", "nftables", "ethtool",
            "conntrack", "iproute2", "procps")  # systemd-networkd (in systemd) manages the management NIC
MBR = Path("/usr/lib/EXTLINUX/mbr.bin")  # package extlinux (syslinux-common ships the same file)
PART_OFFSET = 1 << 20  # the root partition starts at 1 MiB
HOSTNAME = "linerate-dut"
# systemd-networkd: DHCP on the management NIC only; the LAN and WAN NICs are linerate's to address.
MGMT_NETWORK = f"[Match]\nMACAddress={MGMT_MAC}\n\n[Network]\nDHCP=ipv4\nLinkLocalAddressing=no\nIPv6AcceptRA=no\n"
SSHD_CONFIG = "PermitRootLogin prohibit-password\nPasswordAuthentication no\nUseDNS no\n"
# what a router DUT does not need at boot: under TCG e2scrub_reap alone took 4.2 s of the one vCPU
# (systemd-analyze blame in the guest), and the root file system is new on every overlay (no fsck)
SERVICES_OFF = ("apt-daily.timer", "apt-daily-upgrade.timer", "e2scrub_all.timer", "fstrim.timer",
                "e2scrub_reap.service", "getty-static.service")


@dataclass(frozen=True)
class BuiltImage:
    path: Path
    key: Path | None  # None: the user's own key (--ssh-key) logs in; its private half is theirs
    host_keys: Path
    sha256: str
    built_now: bool
    manifest: dict


def sidecars(image: Path) -> dict[str, Path]:
    return {"key": Path(f"{image}.key"), "host_keys": Path(f"{image}.host_keys"), "manifest": Path(f"{image}.json")}


def _run(argv: list[str], what: str, timeout_s: float = 900) -> str:
    try:
        result = LocalExecutor().run(argv, timeout_s=timeout_s, check=False)
    except ExecError as exc:
        if exc.returncode == 127:
            raise LabError(f"{argv[0]} is not installed; `make install` adds it (Debian packages mmdebstrap, "
                           "extlinux, qemu-utils, e2fsprogs, fdisk)") from None
        raise
    if result.returncode != 0:
        raise LabError(f"image build: {what} failed ({argv[0]}): {result.stderr.strip()[-400:]}")
    return result.stdout


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def input_digest(public_key: str) -> tuple[str, dict]:
    inputs = {"builder": BUILDER_VERSION, "append": "fsck.mode=skip", "suite": SUITE, "packages": list(PACKAGES), "hostname": HOSTNAME,
              "mgmt_network": MGMT_NETWORK, "sshd_config": SSHD_CONFIG, "services_off": list(SERVICES_OFF),
              "authorized_key": public_key.strip(), "mbr": file_sha256(MBR) if MBR.exists() else None}
    return hashlib.sha256(json.dumps(inputs, sort_keys=True).encode()).hexdigest(), inputs


def _manifest(image: Path) -> dict | None:
    """The manifest beside the image, or None (missing, not a regular file, not JSON)."""
    try:
        manifest = json.loads(read_text(sidecars(image)["manifest"], 1 << 20, "manifest"))
    except (ConfigError, ValueError):
        return None
    return manifest if isinstance(manifest, dict) else None


def _cached(image: Path, digest: str) -> BuiltImage | None:
    files = sidecars(image)
    manifest = _manifest(image)
    if manifest is None or manifest.get("digest") != digest:
        return None
    generated = manifest.get("generated_key") is True  # IMG.key is ours only when the build made the key pair
    if (generated and not files["key"].is_file()) or not files["host_keys"].is_file() or not image.is_file():
        return None
    if file_sha256(image) != manifest.get("sha256"):
        return None  # changed since it was built (booted without an overlay, say): build it again
    return BuiltImage(image, files["key"] if generated else None, files["host_keys"], manifest["sha256"], False,
                      manifest)


def _check_outputs(image: Path) -> None:
    for path in (image, *sidecars(image).values()):
        target = output.check(str(path), "--output")
        if target.how != "replace":
            raise ConfigError("--output", f"{path} is not a file name (a device or pipe); give a file name such "
                              "as debian-router.qcow2")


def build(image: Path, *, public_key_file: Path | None = None, rebuild: bool = False,
          progress=lambda text: None) -> BuiltImage:
    """Build (or find current) the reference image at `image`. With `public_key_file`, that key is
    root's authorized key and IMG.key is not written (the user holds the private half)."""
    if image.suffix != ".qcow2":
        raise ConfigError("--output", f"{str(image)[:200]} should end in .qcow2 (the image is written as qcow2)")
    _check_outputs(image)
    public_key = None
    if public_key_file is not None:
        public_key = read_public_key(public_key_file)
    earlier = _manifest(image) or {}
    if public_key is None and not rebuild and earlier.get("generated_key") is True:
        inputs = earlier.get("inputs")  # the key pair an earlier build made: the same inputs if nothing else changed
        public_key = inputs.get("authorized_key") if isinstance(inputs, dict) else None
        public_key = public_key if isinstance(public_key, str) else None
    if public_key is not None and not rebuild:
        found = _cached(image, input_digest(public_key)[0])
        if found is not None:
            return found
    preflight()
    work = Path(tempfile.mkdtemp(prefix=".linerate-image-", dir=image.parent.resolve()))
    try:
        return _build_in(work, image, public_key_file, progress)
    finally:
        with terminations_deferred():  # a signal meanwhile waits until the work tree (~400 MB) is gone
            shutil.rmtree(work, ignore_errors=True)


TOOLS = ("mmdebstrap", "mke2fs", "sfdisk", "extlinux", "unshare", "qemu-img", "ssh-keygen")


def preflight() -> None:
    """Every missing piece at once, before anything is made: root (mmdebstrap's root mode, the loop
    mount EXTLINUX needs), the tools, syslinux's MBR."""
    missing = [f"{tool} (not on PATH)" for tool in TOOLS
               if shutil.which(tool, path=os.environ.get("PATH", "") + ":/usr/sbin:/sbin") is None]
    if not MBR.is_file():
        missing.append(f"{MBR} (package extlinux)")
    if os.geteuid() != 0:
        missing.append("root (mmdebstrap builds the tree as root, and EXTLINUX needs a loop mount)")
    if missing:
        raise PreflightError([f"image build needs {piece}" for piece in missing] +
                             ["`make install` installs the packages (mmdebstrap, extlinux, fdisk, e2fsprogs, qemu-utils)"])


def read_public_key(path: Path) -> str:
    """One OpenSSH public key line from a regular file of a sane size (a FIFO or /dev/zero: refused)."""
    try:
        text = read_text(path, 16 * 1024, "public key file").strip()
    except ConfigError as exc:
        raise ConfigError("--ssh-key", f"{str(path)[:200]}: {exc.problem}") from None
    if not text.startswith(("ssh-ed25519 ", "ssh-rsa ", "ecdsa-sha2-")) or "\n" in text or not text.isascii():
        raise ConfigError("--ssh-key", f"{str(path)[:200]} is not one OpenSSH public key line (ssh-ed25519 ...)")
    return text


def _build_in(work: Path, image: Path, public_key_file: Path | None, progress) -> BuiltImage:
    if public_key_file is None:
        _run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "linerate-dut", "-f", str(work / "key")], "ssh-keygen")
        public_key = (work / "key.pub").read_text().strip()
    else:
        public_key = read_public_key(public_key_file)
    digest, inputs = input_digest(public_key)
    root = work / "root"
    progress(f"mmdebstrap {SUITE} ({', '.join(PACKAGES)})")
    hooks = ["--customize-hook=chroot \"$1\" systemctl enable systemd-networkd.service",
             f"--customize-hook=chroot \"$1\" systemctl mask {' '.join(SERVICES_OFF)}"]
    _run(["mmdebstrap", "--quiet", "--variant=minbase", "--include=" + ",".join(PACKAGES), *hooks, SUITE, str(root)],
         "mmdebstrap")
    fs_uuid = str(uuid.uuid4())
    _configure(root, public_key, fs_uuid)
    host_keys = "".join(path.read_text() for path in sorted((root / "etc/ssh").glob("ssh_host_*_key.pub")))
    progress("disk: ext4 from the tree (mke2fs -d), EXTLINUX, qcow2")
    raw = work / "disk.raw"
    size_mb = _tree_mb(root) * 3 // 2 + 256
    with open(raw, "wb") as handle:
        handle.truncate((size_mb << 20) + PART_OFFSET)
    _partition(raw)
    _run(["mke2fs", "-q", "-t", "ext4", "-L", "linerate-root", "-U", fs_uuid, "-d", str(root),
          "-E", f"offset={PART_OFFSET}", str(raw), f"{size_mb}M"], "mke2fs")
    _install_extlinux(raw, work / "mnt")
    with open(raw, "r+b") as handle:
        handle.write(MBR.read_bytes()[:440])  # boot code only: the partition table stays
    staged = work / "image.qcow2"
    _run(["qemu-img", "convert", "-q", "-f", "raw", "-O", "qcow2", str(raw), str(staged)], "qemu-img convert")
    sha = file_sha256(staged)
    manifest = {"digest": digest, "inputs": inputs, "sha256": sha, "kernel": _kernel_name(root),
                "host_keys": host_keys.splitlines(), "generated_key": public_key_file is None}
    files = sidecars(image)
    _check_outputs(image)  # again: the folder may have changed while it built
    os.replace(staged, image)
    output.write(str(files["host_keys"]), host_keys)
    if public_key_file is None:
        (work / "key").chmod(0o600)
        os.replace(work / "key", files["key"])
    elif os.path.lexists(files["key"]) and output.check(str(files["key"]), "--output").how == "replace":
        os.unlink(files["key"])  # an earlier build's key: it does not log in to this image (--dut-key would pick it)
    output.write(str(files["manifest"]), json.dumps(manifest, indent=1) + "\n")
    return BuiltImage(image, files["key"] if public_key_file is None else None, files["host_keys"], sha, True,
                      manifest)


def _partition(raw: Path) -> None:
    script = f"label: dos\nstart={PART_OFFSET // 512}, type=83, bootable\n"
    try:
        result = LocalExecutor().run(["sfdisk", "--quiet", str(raw)], stdin=script, timeout_s=60, check=False)
    except ExecError as exc:
        raise LabError(f"image build: sfdisk could not run ({exc})") from None
    if result.returncode != 0:
        raise LabError(f"image build: sfdisk failed: {result.stderr.strip()[-300:]}")


def _install_extlinux(raw: Path, mountpoint: Path) -> None:
    """EXTLINUX into the file system's /boot/extlinux: it needs the file system mounted, so a loop
    mount in a private mount namespace of its own (unshare -m): gone with that process whatever
    happens, its loop device freed with it (autoclear)."""
    mountpoint.mkdir()
    script = 'mount -o loop,offset="$3" "$1" "$2" && extlinux --install "$2/boot/extlinux" >/dev/null; s=$?; ' \
             'umount "$2"; exit $s'
    _run(["unshare", "-m", "--propagation", "private", "sh", "-c", script, "extlinux", str(raw), str(mountpoint),
          str(PART_OFFSET)], "extlinux --install", timeout_s=120)


def _kernel_name(root: Path) -> str:
    kernels = sorted(p.name for p in (root / "boot").glob("vmlinuz-*"))
    if not kernels:
        raise LabError("image build: mmdebstrap installed no kernel in /boot")
    return kernels[-1]


def _configure(root: Path, public_key: str, fs_uuid: str) -> None:
    kernel = _kernel_name(root)
    initrd = "initrd.img-" + kernel.removeprefix("vmlinuz-")
    if not (root / "boot" / initrd).is_file():
        raise LabError(f"image build: no /boot/{initrd} (initramfs-tools did not run)")
    (root / "boot/extlinux").mkdir(parents=True, exist_ok=True)
    (root / "boot/extlinux/extlinux.conf").write_text(
        f"DEFAULT debian\nPROMPT 0\nTIMEOUT 0\nLABEL debian\n  LINUX /boot/{kernel}\n  INITRD /boot/{initrd}\n"
        f"  APPEND root=UUID={fs_uuid} ro console=ttyS0,115200 quiet fsck.mode=skip\n")
    (root / "etc/fstab").write_text(f"UUID={fs_uuid} / ext4 defaults,noatime 0 0\n")
    (root / "etc/hostname").write_text(HOSTNAME + "\n")
    (root / "etc/hosts").write_text(f"127.0.0.1 localhost\n127.0.1.1 {HOSTNAME}\n")
    (root / "etc/systemd/network/10-linerate-mgmt.network").write_text(MGMT_NETWORK)
    (root / "etc/ssh/sshd_config.d/linerate.conf").write_text(SSHD_CONFIG)
    ssh_dir = root / "root/.ssh"
    ssh_dir.mkdir(mode=0o700, exist_ok=True)
    (ssh_dir / "authorized_keys").write_text(public_key + "\n")
    (ssh_dir / "authorized_keys").chmod(0o600)


def _tree_mb(root: Path) -> int:
    total = 0
    for folder, _, names in os.walk(root):
        for name in names:
            try:
                total += os.lstat(os.path.join(folder, name)).st_blocks * 512
            except OSError:
                pass
    return total >> 20
