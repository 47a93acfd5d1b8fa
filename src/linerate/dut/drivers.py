"""The driver of each OS family (dut/base.py declares the DutDriver protocol)."""

from __future__ import annotations

from linerate.dut.base import DutDriver
from linerate.dut.bsd import FreeBsdDriver, OpenBsdDriver
from linerate.dut.linux import LinuxDriver

DRIVERS = {"linux": LinuxDriver, "freebsd": FreeBsdDriver, "openbsd": OpenBsdDriver}
# the driver of each OS an own image may run (dut_os): OpenWrt is a Linux, OPNsense and pfSense FreeBSDs
OS_DRIVERS = {"linux": "linux", "openwrt": "linux", "opnsense": "freebsd", "pfsense": "freebsd",
              "freebsd": "freebsd", "openbsd": "openbsd"}


def driver_for(family: str) -> DutDriver:
    return DRIVERS[family]()


def driver_for_os(dut_os: str) -> DutDriver:
    return driver_for(OS_DRIVERS[dut_os])
