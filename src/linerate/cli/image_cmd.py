"""`linerate image build debian`: the reference router image for a VM DUT (image/debian.py)."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from linerate.cli.options import add_json_flag
from linerate.lab.signals import terminations_raise
from linerate.schema import dumps


def register(sub: argparse._SubParsersAction) -> None:
    image = sub.add_parser("image", help="build a DUT image: a Debian 12 router to boot with --dut-image",
                           description="Example: linerate image build debian --output debian-router.qcow2")
    image_sub = image.add_subparsers(dest="image_command", required=True, metavar="{build}")
    build = image_sub.add_parser("build", help="build (or find current) a DUT image from Debian packages",
                                 description="Example: linerate image build debian --output debian-router.qcow2 "
                                 "--json")
    build.add_argument("distribution", choices=("debian",), help="debian: Debian 12 with its kernel, systemd, "
                       "openssh-server, nftables, ethtool, conntrack")
    build.add_argument("--output", required=True, help="the image to write (.qcow2); IMG.key, IMG.host_keys and "
                       "IMG.json are written beside it")
    build.add_argument("--ssh-key", default=None, help="an OpenSSH public key for root's authorized_keys (default: "
                       "a new key pair, its private half written to IMG.key)")
    build.add_argument("--rebuild", action="store_true", help="build even when the image is current")
    add_json_flag(build)
    build.set_defaults(handler=cmd_image_build)


def cmd_image_build(args: argparse.Namespace) -> int:
    from linerate.image.debian import build

    started = time.monotonic()
    say = (lambda text: None) if args.json else (lambda text: print(f"  {text}", file=sys.stderr, flush=True))
    with terminations_raise():  # TERM/HUP unwind like Ctrl-C: the work tree and mmdebstrap go
        built = build(Path(args.output), public_key_file=Path(args.ssh_key) if args.ssh_key else None,
                      rebuild=args.rebuild, progress=say)
    seconds = round(time.monotonic() - started, 1)
    info = {"image": str(built.path), "sha256": built.sha256, "built_now": built.built_now, "seconds": seconds,
            "kernel": built.manifest.get("kernel"), "key": str(built.key) if built.key else None,
            "host_keys": str(built.host_keys),
            "boot": f"linerate trial --dut vm --dut-image {built.path} --dut-os linux"}
    if args.json:
        print(dumps(info))
        return 0
    print(f"{'built' if built.built_now else 'current (inputs unchanged)'}: {built.path} in {seconds} s, "
          f"sha256 {built.sha256[:16]}..., kernel {info['kernel']}")
    print(f"login: {built.key or 'your key (--ssh-key): name its private half with --dut-key'}, "
          f"host keys: {built.host_keys}")
    print(f"use it: {info['boot']}")
    return 0
