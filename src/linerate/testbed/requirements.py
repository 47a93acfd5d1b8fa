"""What this machine must have for the cells of a namespace or VM lab, checked before anything
runs (and before --dry-run says "ok"): kernel features and binaries preflight must find, TCP
congestion controls the kernel can load, own DUT images that are image files."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any


def required_features(cells: list[dict[str, Any]]) -> set[str]:
    """Preflight checks that become required because of what the cells ask for."""
    needed = set()
    for cell in cells:
        if cell.get("delay_ms") or cell.get("jitter_ms") or cell.get("loss_pct"):
            needed.add("qdisc netem")
        if cell.get("link_rate", "none") != "none" or cell.get("pair_link_rate", "none") != "none":
            needed.add("qdisc tbf")
        if cell.get("dut") == "vm":
            needed.add("vm qemu")
        if cell.get("vhost") == "on":
            needed.add("vm vhost-net")
        if cell.get("latency"):
            needed.add("binary fping")
    return needed


IMAGE_MAGIC = {b"QFI\xfb": "qcow2"}  # raw images: a boot sector (MBR or GPT's protective MBR) ends in 55 aa


def congestion_available(name: str, release: str | None = None) -> bool:
    """Is the TCP congestion control `name` usable by this kernel: loaded already, built in, or a
    module it can load (tcp_NAME.ko*)?"""
    try:
        if name in Path("/proc/sys/net/ipv4/tcp_available_congestion_control").read_text().split():
            return True
    except OSError:
        return True  # no /proc here: the lab's own preflight speaks for the kernel
    release = release or os.uname().release
    modules = Path("/lib/modules") / release
    if any((modules / "kernel/net/ipv4").glob(f"tcp_{name}.ko*")):
        return True
    try:
        return f"tcp_{name}.ko" in (modules / "modules.builtin").read_text()
    except OSError:
        return False


def image_problem(path: str) -> str | None:
    """Why an own DUT image file cannot be one (None: it can): a regular file, readable, with a
    qcow2 header or a raw disk's boot sector. Opened without blocking (a FIFO would hang)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        return "no such file"
    except OSError as exc:
        return f"cannot be opened ({exc.strerror})"
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return "is not a regular file (a device, FIFO or directory)"
        head = os.pread(fd, 512, 0)
    except OSError as exc:
        return f"cannot be read ({exc.strerror})"
    finally:
        os.close(fd)
    if head[:4] in IMAGE_MAGIC or (len(head) == 512 and head[510:512] == b"\x55\xaa"):
        return None
    return "is not a disk image (no qcow2 header, no boot sector)"


def local_problems(cells: list[dict[str, Any]]) -> list[str]:
    """What this machine lacks for the cells of a namespace or VM lab: congestion controls its
    kernel cannot use, own DUT images that are not image files. Every problem at once."""
    problems = []
    for name in sorted({cell.get("congestion") or "" for cell in cells} - {""}):
        if not congestion_available(name):
            problems.append(f"congestion = {name!r}: this kernel has no such TCP congestion control (see "
                            "/proc/sys/net/ipv4/tcp_available_congestion_control); load its module tcp_"
                            f"{name} or remove it")
    for image in sorted({cell.get("dut_image") or "" for cell in cells} - {""}):
        why = image_problem(image)
        if why:
            problems.append(f"dut_image = {image[:200]!r}: {why}; give a .qcow2 or raw disk image")
    return problems
