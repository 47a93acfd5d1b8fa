"""The driver of each OS family (dut/base.py declares the DutDriver protocol)."""

from __future__ import annotations

from linerate.dut.base import DutDriver
from linerate.dut.bsd import FreeBsdDriver, OpenBsdDriver
from linerate.dut.linux import LinuxDriver

DRIVERS = {"linux": LinuxDriver, "freebsd": FreeBsdDriver, "openbsd": OpenBsdDriver}


def driver_for(family: str) -> DutDriver:
    return DRIVERS[family]()
