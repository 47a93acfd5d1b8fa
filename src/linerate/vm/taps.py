"""The client and server ends of the guest's NICs: TAP devices created inside the client and
server namespaces, so each side's `eth0` *is* the wire to the guest — no bridge, no extra hop.

A tap is opened on a thread inside the namespace (lab/netns.run_in) with TUNSETIFF; its index is
fixed first with TUNSETIFINDEX so later netlink steps need no lookup, as with the lab's veths.
IFF_VNET_HDR lets qemu pass offloaded (checksum-less, GSO) frames through, which is what the
virtio offload properties switch on and off; with several queues every queue is one more open of
the same name with IFF_MULTI_QUEUE. The taps are not persistent: they vanish with the last open
file (qemu's copies), or with their namespace.
"""

from __future__ import annotations

import fcntl
import os
import struct

from linerate.errors import LabError
from linerate.lab import netns

TUNSETIFF = 0x400454CA
TUNSETIFINDEX = 0x400454DA
IFF_TAP, IFF_NO_PI, IFF_VNET_HDR, IFF_MULTI_QUEUE = 0x0002, 0x1000, 0x4000, 0x0100


def tap_flags(queues: int) -> int:
    return IFF_TAP | IFF_NO_PI | IFF_VNET_HDR | (IFF_MULTI_QUEUE if queues > 1 else 0)


def ifreq(ifname: str, flags: int) -> bytes:
    """struct ifreq with ifr_name and ifr_flags, as TUNSETIFF takes it (40 bytes on x86_64)."""
    return struct.pack("16sH22x", ifname.encode(), flags)


def open_tap(ns: str, ifname: str, index: int, queues: int) -> list[int]:
    """Create tap `ifname` (index `index`) in namespace ns with `queues` queues; returns one open
    file descriptor per queue, for qemu's `-netdev tap,fds=...`."""
    def create() -> list[int]:
        fds: list[int] = []
        try:
            for queue in range(queues):
                fd = os.open("/dev/net/tun", os.O_RDWR | os.O_CLOEXEC)
                fds.append(fd)
                if queue == 0:
                    fcntl.ioctl(fd, TUNSETIFINDEX, struct.pack("I", index))
                fcntl.ioctl(fd, TUNSETIFF, ifreq(ifname, tap_flags(queues)))
        except OSError as exc:
            for fd in fds:
                os.close(fd)
            raise LabError(f"cannot create tap {ifname} with {queues} queue(s) in {ns}: {exc.strerror}") from None
        return fds

    return netns.run_in(ns, create)
