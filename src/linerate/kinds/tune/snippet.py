"""The final configuration of a tune, written the way the DUT's OS keeps it: sysctl.conf (Linux,
OpenWrt, FreeBSD, OpenBSD), loader.conf for FreeBSD boot-time tunables, rc.conf ifconfig flags
(FreeBSD), ethtool commands (Linux), and for the VM DUT the qemu and libvirt NIC options.

Sources for the file formats: sysctl.conf(5) (Linux procps, FreeBSD, OpenBSD), loader.conf(5) and
rc.conf(5) (FreeBSD), ethtool(8), qemu's virtio-net-pci properties (`qemu-system-x86_64 -device
virtio-net-pci,help`) and libvirt's 'Domain XML format' (https://libvirt.org/formatdomain.html,
interface <driver queues=... name='vhost'>).
"""

from __future__ import annotations

from typing import Any

from linerate.topology.link import parse_any_sysctls, parse_dut_offloads
from linerate.tuning.catalog import load_catalog
from linerate.vm.qemu import parse_virtio_offloads

FREEBSD_FLAGS = {"rx": "rxcsum", "tx": "txcsum", "tso": "tso", "lro": "lro"}


def changed(start: dict[str, Any], final: dict[str, Any]) -> dict[str, Any]:
    return {name: final[name] for name in sorted(final) if final[name] != start.get(name)}


def snippet(start: dict[str, Any], final: dict[str, Any], dut_os: str) -> list[tuple[str, list[str]]]:
    """[(where, lines)] for what the final configuration changed; dut_os: linux, freebsd, openbsd
    (a VM DUT: the built-in Linux guest)."""
    knobs = changed(start, final)
    out: list[tuple[str, list[str]]] = []
    sysctls = parse_any_sysctls(str(knobs["dut_sysctls"])) if "dut_sysctls" in knobs else ()
    if sysctls:
        loader = [(n, v) for n, v in sysctls if dut_os == "freebsd" and _boot_time(n)]
        runtime = [(n, v) for n, v in sysctls if (n, v) not in loader]
        if runtime:
            out.append(("/etc/sysctl.conf", [f"{n} = {v}" if dut_os == "linux" else f"{n}={v}" for n, v in runtime]))
        if loader:
            out.append(("/boot/loader.conf.local", [f'{n}="{v}"' for n, v in loader]))
    if "dut_offloads" in knobs:
        settings = parse_dut_offloads(str(knobs["dut_offloads"]))
        if dut_os == "freebsd":
            by_if: dict[str, list[str]] = {}
            for ifname, feature, state in settings:
                flag = FREEBSD_FLAGS.get(feature, feature)
                by_if.setdefault(ifname, []).append(flag if state == "on" else f"-{flag}")
            out.append(("/etc/rc.conf", [f'ifconfig_{ifname}="<its addresses> {" ".join(flags)}"'
                                         for ifname, flags in by_if.items()]))
        else:
            out.append(("ethtool (at boot: /etc/network/interfaces post-up, or a udev/systemd-networkd link file)",
                        [f"ethtool -K {ifname} {feature} {state}" for ifname, feature, state in settings]))
    nic = _vm_nic(knobs, final)
    if nic:
        out += nic
    rest = [f"{name} = {value!r}" for name, value in knobs.items()
            if name not in ("dut_sysctls", "dut_offloads", "virtio_offloads", "virtio_queues", "vhost")]
    if rest:
        out.append(("linerate lab axes (the lab itself: keep them in the experiment file)", rest))
    return out


def _boot_time(name: str) -> bool:
    knob = load_catalog().find(name, "freebsd")
    return knob is not None and knob.location == "loader"


def _vm_nic(knobs: dict[str, Any], final: dict[str, Any]) -> list[tuple[str, list[str]]]:
    if not {"virtio_offloads", "virtio_queues", "vhost"} & set(knobs):
        return []
    queues = int(final.get("virtio_queues", 1))
    props = parse_virtio_offloads(str(final.get("virtio_offloads", "on")))
    device = ["virtio-net-pci", "netdev=lan"] + [f"{name}={state}" for name, state in sorted(props.items())]
    netdev = ["tap", "id=lan", "ifname=TAP"]
    if queues > 1:
        device += ["mq=on", f"vectors={2 * queues + 2}"]
        netdev.append(f"queues={queues}")
    if final.get("vhost") == "on":
        netdev.append("vhost=on")
    qemu = [f"-netdev {','.join(netdev)} -device {','.join(device)}"]
    driver = " ".join(filter(None, ["name='vhost'" if final.get("vhost") == "on" else "",
                                    f"queues='{queues}'" if queues > 1 else ""]))
    # libvirt spells the offloads as attributes of <host> (csum, gso, host_*) and <guest> (guest_*) in <driver>
    off = sorted(name for name, state in props.items() if state == "off")
    host = " ".join(f"{name.removeprefix('host_')}='off'" for name in off if not name.startswith("guest_")
                    and name != "mrg_rxbuf")
    guest = " ".join(f"{name.removeprefix('guest_')}='off'" for name in off if name.startswith("guest_"))
    inner = (f"<host {host}/>" if host else "") + (f"<guest {guest}/>" if guest else "")
    libvirt = [f"<driver{' ' + driver if driver else ''}>{inner}</driver>" if inner
               else (f"<driver {driver}/>" if driver else "(qemu's defaults: no <driver> element needed)")]
    out = [("qemu (each virtio NIC of the DUT)", qemu), ("libvirt <interface> (each NIC)", libvirt)]
    if queues > 1:
        out.append(("in the guest (each NIC)", [f"ethtool -L IF combined {queues}"]))
    return out
