"""Bring-your-own DUT images (dut_image = "OPNsense-26.1.qcow2", dut_os = "opnsense").

The user's image is never written: qemu runs on a throwaway qcow2 overlay in the lab's VM
directory whose backing file is the image (qemu opens a backing file read-only), removed with the
lab. NIC order is fixed by PCI slot (vm/qemu.py): vtnet0 = LAN (198.18.0.1/24, 2001:2:0:1::1/64),
vtnet1 = WAN (198.19.0.1/24, 2001:2:0:2::1/64), vtnet2 = management (qemu user networking, the
guest's port 22 forwarded to 127.0.0.1 inside the lab's dut namespace; testbed/vm_image.py).
"""

from __future__ import annotations

import json
from pathlib import Path

from linerate.errors import ConfigError, ExecError, LabError
from linerate.exec import LocalExecutor

OVERLAY_NAME = "overlay.qcow2"


def image_format(image: Path) -> str:
    try:
        info = LocalExecutor().run(["qemu-img", "info", "--output=json", "--", str(image)], timeout_s=60, check=False)
    except ExecError as exc:
        if exc.returncode == 127:  # could not be started; a timeout (None) stays an ExecError
            raise LabError("qemu-img is not installed (package qemu-utils; make install adds it)") from None
        raise
    if info.returncode != 0:
        raise ConfigError("dut_image", f"{image}: qemu-img cannot read it ({info.stderr.strip()[-160:]})")
    return json.loads(info.stdout)["format"]


def create_overlay(image: Path, directory: Path) -> Path:
    """A new qcow2 overlay in `directory` backed by `image` (absolute path, its format named)."""
    image = image.resolve()
    if not image.is_file():
        raise ConfigError("dut_image", f"{image} is not a file")
    overlay = directory / OVERLAY_NAME
    LocalExecutor().run(["qemu-img", "create", "-q", "-f", "qcow2", "-F", image_format(image), "-b", str(image),
                         str(overlay)], timeout_s=60)  # a failure: ExecError naming the command
    return overlay
