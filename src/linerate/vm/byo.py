"""Bring-your-own DUT images (dut_image = "OPNsense-26.1.qcow2", dut_os = "opnsense").

The user's image is never written: qemu runs on a throwaway qcow2 overlay in the lab's VM
directory whose backing file is the image (qemu opens a backing file read-only), removed with the
lab. NIC order is fixed by PCI slot (vm/qemu.py): vtnet0 = LAN (198.18.0.1/24, 2001:2:0:1::1/64),
vtnet1 = WAN (198.19.0.1/24, 2001:2:0:2::1/64), vtnet2 = management (qemu user networking, the
guest's port 22 forwarded to 127.0.0.1 inside the lab's dut namespace; testbed/vm_image.py).
"""

from __future__ import annotations

import json
import os
import stat
import struct
from pathlib import Path

from linerate.errors import ConfigError, ExecError, LabError
from linerate.exec import LocalExecutor

OVERLAY_NAME = "overlay.qcow2"


MAX_CHAIN = 16


def _info(image: Path) -> dict:
    """`qemu-img info` of one file (it does not open a backing file: a FIFO there cannot hang it)."""
    try:
        info = LocalExecutor().run(["qemu-img", "info", "--output=json", "--", str(image)], timeout_s=60, check=False)
    except ExecError as exc:
        if exc.returncode == 127:  # could not be started; a timeout (None) stays an ExecError
            raise LabError("qemu-img is not installed (package qemu-utils; make install adds it)") from None
        raise
    if info.returncode != 0:
        raise ConfigError("dut_image", f"{image}: qemu-img cannot read it ({info.stderr.strip()[-160:]})")
    try:
        details = json.loads(info.stdout)
    except ValueError:
        raise ConfigError("dut_image", f"{image}: qemu-img info printed no JSON") from None
    return details if isinstance(details, dict) else {}


def image_format(image: Path) -> str:
    """The image's format, once every file qemu would open for it (as root) is judged: a backing chain
    of regular files that are the image owner's or readable by everyone, no external data file. A qcow2 from another
    user could otherwise name /dev/sda or a root-only file, and the guest would read it as a disk."""
    details = _info(image)
    fmt = details.get("format")
    if not isinstance(fmt, str) or not fmt:
        raise ConfigError("dut_image", f"{image}: qemu-img names no format for it; give a qcow2 or raw disk image")
    owner = os.stat(image).st_uid
    current, seen = image, 0
    while True:
        specific = (details.get("format-specific") or {}).get("data") or {}
        if isinstance(specific, dict) and specific.get("data-file"):
            raise ConfigError("dut_image", f"{current} keeps its data in an external file; give a standalone image "
                              "(qemu-img convert -O qcow2 makes one)")
        backing = details.get("full-backing-filename") or details.get("backing-filename")
        if not backing:
            break
        path = Path(backing) if Path(backing).is_absolute() else current.parent / backing
        try:
            link = os.lstat(path)
        except OSError:
            link = None
        seen += 1
        readable = link is not None and (link.st_uid == owner or link.st_mode & stat.S_IROTH)  # no one else's secret
        if link is None or not stat.S_ISREG(link.st_mode) or not readable or seen > MAX_CHAIN:
            raise ConfigError("dut_image", f"{current} is an overlay whose backing file {str(backing)[:200]!r} is not a "
                              "regular file the image's owner may read (or it is missing, or the chain is too long); "
                              "give the base image itself (qemu-img convert -O qcow2 makes one standalone)")
        current, details = path, _info(path)
    return fmt


def create_overlay(image: Path, directory: Path) -> Path:
    """A new qcow2 overlay in `directory` backed by `image` (absolute path, its format named)."""
    image = image.resolve()
    if not image.is_file():
        raise ConfigError("dut_image", f"{image} is not a file")
    overlay = directory / OVERLAY_NAME
    made = LocalExecutor().run(["qemu-img", "create", "-q", "-f", "qcow2", "-F", image_format(image), "-b", str(image),
                                str(overlay)], timeout_s=60, check=False)
    if made.returncode != 0:
        raise ConfigError("dut_image", f"{image}: qemu-img cannot make an overlay of it "
                          f"({made.stderr.strip()[-160:] or 'no message'})")
    return overlay


def overlay_backing(overlay: Path) -> str | None:
    """The backing file a qcow2 overlay names in its header, None when it is no qcow2 or names none.
    The header is read directly (QEMU's qcow2 format, docs/interop/qcow2.txt: magic "QFI\\xfb", bytes 8-15
    the name's offset, 16-19 its length, at most 1023): `qemu-img info` would need the lock a running
    qemu holds. A link or anything but a regular file is not read."""
    try:
        fd = os.open(overlay, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        return None
    with os.fdopen(fd, "rb") as handle:
        try:
            head = handle.read(20)
            if len(head) < 20 or head[:4] != b"QFI\xfb":
                return None
            offset, size = struct.unpack(">QI", head[8:20])
            if not offset or not 0 < size <= 1023:
                return None
            handle.seek(offset)
            name = handle.read(size)
        except OSError:
            return None
    return name.decode(errors="replace") if len(name) == size else None
