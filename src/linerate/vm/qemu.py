"""The qemu command line of a VM DUT (pure), the virtio offload properties, and the KVM probe.

NIC order is fixed by PCI slot: LAN first, WAN second, the management NIC (bring-your-own images
only) third — so a FreeBSD guest sees vtnet0 = LAN, vtnet1 = WAN, vtnet2 = management, and the
built-in guest renames by MAC (guest/init). Values that reach qemu's option parser have their
commas doubled (qemu's escape), so a path with a comma cannot add an option.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from linerate.errors import ParseError

LAN_MAC, WAN_MAC, MGMT_MAC = "52:54:00:4c:52:01", "52:54:00:4c:52:02", "52:54:00:4c:52:03"
LAN_SLOT, WAN_SLOT, MGMT_SLOT, SERIAL_SLOT, DISK_SLOT = 3, 4, 5, 6, 7
ACCELS = ("auto", "kvm", "tcg")

# virtio-net device properties (the hypervisor level of Netgate forum, 'Performance Measurments with VirtIO + Offloading on Atom C2358' (https://forum.netgate.com/topic/108187/performance-measurments-with-virtio-offloading-on-atom-c2358-updated)), each with the virtio feature
# bit it offers (VIRTIO_NET_F_*, virtio spec 1.2 section 5.1.3), read back from the guest.
VIRTIO_PROPERTIES = {
    "csum": 0, "guest_csum": 1, "gso": 6, "guest_tso4": 7, "guest_tso6": 8, "guest_ecn": 9, "guest_ufo": 10,
    "host_tso4": 11, "host_tso6": 12, "host_ecn": 13, "host_ufo": 14, "mrg_rxbuf": 15,
}
# The Linux guest never negotiates VIRTIO_NET_F_GSO (a legacy bit): gso=on cannot be read back.
UNVERIFIABLE_ON = {"gso"}
# A feature the guest may only use with another one (Linux virtnet_validate_features refuses the
# device otherwise): switching the second off needs the first off too.
NEEDS = {"guest_tso4": "guest_csum", "guest_tso6": "guest_csum", "guest_ecn": "guest_csum",
         "guest_ufo": "guest_csum", "host_tso4": "csum", "host_tso6": "csum", "host_ecn": "csum",
         "host_ufo": "csum", "gso": "csum"}


def parse_virtio_offloads(text: str) -> dict[str, str]:
    """'on' (qemu's defaults: all offered), 'off' (all of VIRTIO_PROPERTIES off), or
    'csum=off,host_tso4=off,...' -> {property: on|off}. ValueError saying what is allowed."""
    text = text.strip()
    if text == "on":
        return {}
    if text == "off":  # every offload; mrg_rxbuf is a buffer layout, not an offload: set it by name
        return {name: "off" for name in VIRTIO_PROPERTIES if name != "mrg_rxbuf"}
    settings: dict[str, str] = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        name, eq, state = item.partition("=")
        if not eq or name not in VIRTIO_PROPERTIES or state not in ("on", "off"):
            raise ValueError(f"'{item}' needs property=on|off with property one of {', '.join(VIRTIO_PROPERTIES)}")
        settings[name] = state
    if not settings:
        raise ValueError("'' is empty; write 'on' for qemu's defaults or 'off' for all offloads off")
    for name, needed in NEEDS.items():
        if settings.get(needed) == "off" and settings.get(name, "on") == "on":
            raise ValueError(f"{needed}=off needs {name}=off too (a guest refuses {name} without {needed})")
    return settings


def escape(value: str | Path) -> str:
    return str(value).replace(",", ",,")


@dataclass(frozen=True)
class VmSpec:
    name: str
    vcpus: int = 1
    memory_mb: int = 256
    accel: str = "tcg"  # kvm | tcg: what to boot with (auto is resolved before)
    queues: int = 1
    vhost: bool = False
    virtio: dict[str, str] = field(default_factory=dict)
    kernel: Path | None = None  # the built-in guest
    initrd: Path | None = None
    append: str = ""
    disk: Path | None = None  # a bring-your-own image's throwaway overlay
    mgmt_ssh_port: int | None = None  # host port forwarded to the guest's port 22 (bring-your-own)
    agent_socket: Path | None = None
    console_log: Path | None = None
    mtu: int = 1500


def netdev(name: str, fds: list[int], vhost: bool) -> str:
    fd_list = f"fds={':'.join(map(str, fds))}" if len(fds) > 1 else f"fd={fds[0]}"
    return f"tap,id={name},{fd_list},vhost={'on' if vhost else 'off'}"


def nic(name: str, mac: str, slot: int, spec: VmSpec) -> str:
    props = [f"virtio-net-pci,netdev={name},mac={mac},addr={slot:#x}"]
    if spec.queues > 1:
        props.append(f"mq=on,vectors={2 * spec.queues + 2}")
    if spec.mtu != 1500:
        props.append(f"host_mtu={spec.mtu}")
    props += [f"{key}={value}" for key, value in sorted(spec.virtio.items())]
    return ",".join(props)


QEMU = "qemu-system-x86_64"


def qemu_argv(spec: VmSpec, lan_fds: list[int], wan_fds: list[int], binary: str = QEMU) -> list[str]:
    accel = ["-accel", "kvm", "-cpu", "host"] if spec.accel == "kvm" else ["-accel", "tcg,thread=multi", "-cpu", "max"]
    argv = [binary, "-name", f"{escape(spec.name)},debug-threads=on", "-M", "q35", *accel,
            "-smp", str(spec.vcpus), "-m", str(spec.memory_mb),
            "-nodefaults", "-no-user-config", "-display", "none", "-no-reboot"]
    if lan_fds and wan_fds:  # the KVM probe boots without NICs
        argv += ["-netdev", netdev("lan", lan_fds, spec.vhost), "-device", nic("lan", LAN_MAC, LAN_SLOT, spec),
                 "-netdev", netdev("wan", wan_fds, spec.vhost), "-device", nic("wan", WAN_MAC, WAN_SLOT, spec)]
    if spec.console_log is not None:
        argv += ["-chardev", f"file,id=console,path={escape(spec.console_log)}", "-serial", "chardev:console"]
    if spec.kernel is not None:
        argv += ["-kernel", escape(spec.kernel), "-initrd", escape(spec.initrd), "-append", spec.append]
    if spec.agent_socket is not None:
        argv += ["-device", f"virtio-serial-pci,id=serial,addr={SERIAL_SLOT:#x}",
                 "-chardev", f"socket,id=agent,path={escape(spec.agent_socket)},server=on,wait=off",
                 "-device", "virtserialport,bus=serial.0,chardev=agent,name=linerate.agent"]
    if spec.disk is not None:
        argv += ["-drive", f"file={escape(spec.disk)},format=qcow2,if=none,id=disk",
                 "-device", f"virtio-blk-pci,drive=disk,addr={DISK_SLOT:#x}"]
    if spec.mgmt_ssh_port is not None:
        argv += ["-netdev", f"user,id=mgmt,restrict=on,hostfwd=tcp:127.0.0.1:{spec.mgmt_ssh_port}-:22",
                 "-device", f"virtio-net-pci,netdev=mgmt,mac={MGMT_MAC},addr={MGMT_SLOT:#x}"]
    return argv


def negotiated_features(text: str) -> dict[str, str]:
    """/sys/bus/virtio/devices/virtioN/features (one '0'/'1' per feature bit, bit 0 first) ->
    {property: on|off} for the properties linerate sets."""
    bits = text.strip()
    if not bits or set(bits) - {"0", "1"}:
        raise ParseError(f"virtio features {bits[:40]!r} is not a bit string")
    return {name: "on" if bit < len(bits) and bits[bit] == "1" else "off" for name, bit in VIRTIO_PROPERTIES.items()}


def running_accel(argv: list[str]) -> str:
    """The accelerator a qemu argv (as qemu_argv made it) runs under: kvm or tcg."""
    index = argv.index("-accel") + 1 if "-accel" in argv else len(argv)
    return "kvm" if index < len(argv) and argv[index].startswith("kvm") else "tcg"


def argv_drift(argv: list[str], *, vcpus: int, memory_mb: int, accel: str, vhost: bool, queues: int,
               virtio: dict[str, str]) -> list[str]:
    """What a running qemu's argv (its /proc cmdline, as qemu_argv made it) says otherwise than these VM
    options, one phrase each: vCPUs, memory, accelerator (auto: either), vhost, and each NIC's queues and
    virtio offload properties."""
    def after(flag: str) -> str | None:
        return argv[argv.index(flag) + 1] if flag in argv and argv.index(flag) + 1 < len(argv) else None

    problems = []
    for flag, name, wanted in (("-smp", "vCPUs", str(vcpus)), ("-m", "MiB of memory", str(memory_mb))):
        if after(flag) != wanted:
            problems.append(f"qemu runs with {after(flag)} {name}, the file says {wanted}")
    running = running_accel(argv)
    if accel != "auto" and running != accel:
        problems.append(f"qemu runs under {running}, the file says {accel}")
    wanted_props = {f"{key}={value}" for key, value in virtio.items()}
    wanted_props |= {"mq=on", f"vectors={2 * queues + 2}"} if queues > 1 else set()
    for index, word in enumerate(argv[:-1]):
        value = argv[index + 1]
        if not any(f"{key}={name}" in value.split(",") for key in ("id", "netdev") for name in ("lan", "wan")):
            continue  # an own image's management NIC (user networking): no knob of the record's
        if word == "-netdev" and f"vhost={'on' if vhost else 'off'}" not in value.split(","):
            problems.append(f"qemu's {value.split(',')[1]} has {value.split(',')[-1]}, the file says "
                            f"vhost={'on' if vhost else 'off'}")
        elif word == "-device" and value.startswith("virtio-net-pci,"):
            props = {p for p in value.split(",")[1:] if p.split("=")[0] not in ("netdev", "mac", "addr", "host_mtu")}
            if props != wanted_props:
                problems.append(f"qemu's NIC has {','.join(sorted(props)) or 'no offload or queue properties'}, the "
                                f"file says {','.join(sorted(wanted_props)) or 'none'}")
    return problems
