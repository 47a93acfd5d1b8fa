"""Attach and detach a trivial eBPF program (`r0 = VERDICT; exit`) where an operator's would act on a lab's packets,
with bpf(2) through lab/bpf_hooks.py's call: BPF_PROG_LOAD, BPF_PROG_ATTACH, BPF_PROG_DETACH and union bpf_attr's
layout from include/uapi/linux/bpf.h. Run inside a namespace for a link's tcx hooks:

    ip netns exec NS python bpf_programs.py attach-tcx LINK ingress|egress   # prints the program's id
    ip netns exec NS python bpf_programs.py detach-tcx LINK ingress|egress ID
    ip netns exec NS python bpf_programs.py hold-netfilter PRIORITY          # until killed
    ip netns exec NS python bpf_programs.py attach-flow-dissector            # prints its id
    ip netns exec NS python bpf_programs.py detach-flow-dissector ID
"""

import ctypes
import os
import signal
import socket
import struct
import sys

from linerate.lab.bpf_hooks import ATTR_BYTES, ON_CGROUPS, ON_LINKS, ON_NAMESPACE, _bpf

PROG_LOAD, PROG_ATTACH, PROG_DETACH, PROG_GET_FD_BY_ID, OBJ_GET_INFO_BY_FD, LINK_CREATE = 5, 8, 9, 13, 15, 28
SCHED_CLS, CGROUP_SKB, FLOW_DISSECTOR, NETFILTER = 3, 8, 22, 32  # enum bpf_prog_type
ATTACH_NETFILTER = 45  # enum bpf_attach_type BPF_NETFILTER
F_ALLOW_MULTI = 2


def load(program_type: int, verdict: int, name: str, expected_attach_type: int = 0) -> int:
    """A loaded program returning verdict (tcx: 0 passes; cgroup_skb and netfilter: 1 passes): its fd."""
    insns = struct.pack("<BBhi", 0xB7, 0, 0, verdict) + struct.pack("<BBhi", 0x95, 0, 0, 0)  # mov64 r0, imm; exit
    code = ctypes.create_string_buffer(insns, len(insns))
    license_text = ctypes.create_string_buffer(b"GPL")
    attr = ctypes.create_string_buffer(ATTR_BYTES)
    struct.pack_into("=IIQQ", attr, 0, program_type, 2, ctypes.addressof(code), ctypes.addressof(license_text))
    struct.pack_into("16s", attr, 48, name.encode())
    struct.pack_into("=I", attr, 68, expected_attach_type)
    return _bpf(PROG_LOAD, attr)


def program_id(fd: int) -> int:
    info = ctypes.create_string_buffer(80)
    attr = ctypes.create_string_buffer(ATTR_BYTES)
    struct.pack_into("=IIQ", attr, 0, fd, len(info), ctypes.addressof(info))
    _bpf(OBJ_GET_INFO_BY_FD, attr)
    return struct.unpack_from("=I", info, 4)[0]


def fd_of(program: int) -> int:
    attr = ctypes.create_string_buffer(ATTR_BYTES)
    struct.pack_into("=I", attr, 0, program)
    return _bpf(PROG_GET_FD_BY_ID, attr)


def attach(target: int, program_fd: int, attach_type: int, flags: int = 0) -> None:
    attr = ctypes.create_string_buffer(ATTR_BYTES)
    struct.pack_into("=IIII", attr, 0, target, program_fd, attach_type, flags)
    _bpf(PROG_ATTACH, attr)


def detach(target: int, program_fd: int, attach_type: int) -> None:
    attr = ctypes.create_string_buffer(ATTR_BYTES)
    struct.pack_into("=III", attr, 0, target, program_fd, attach_type)
    _bpf(PROG_DETACH, attr)


def attach_to_cgroup(directory: str, hook: str, name: str) -> int:
    """A passing cgroup_skb program on a cgroup v2 directory's hook ("inet egress"): its id."""
    program, cgroup = load(CGROUP_SKB, 1, name), os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        attach(cgroup, program, ON_CGROUPS[hook], F_ALLOW_MULTI)
        return program_id(program)
    finally:
        os.close(cgroup)
        os.close(program)


def hold_netfilter_link(priority: int) -> None:
    """A netfilter program on this namespace's IPv4 forward hook, through a BPF link (bpf_attr's link_create:
    prog_fd, target_fd, attach_type, flags, then netfilter's pf, hooknum, priority, flags) that lasts while this
    process holds it: prints "ready", then waits to be killed."""
    program = load(NETFILTER, 1, "lrt_nf_accept", ATTACH_NETFILTER)
    attr = ctypes.create_string_buffer(ATTR_BYTES)
    struct.pack_into("=IIIIIIiI", attr, 0, program, 0, ATTACH_NETFILTER, 0, 2, 2, priority, 0)  # NFPROTO_IPV4, FORWARD
    _bpf(LINK_CREATE, attr)
    print("ready", flush=True)
    while True:
        signal.pause()


def main(argv: list[str]) -> None:
    if argv[0] == "hold-netfilter":
        hold_netfilter_link(int(argv[1]))
        return
    if argv[0] == "attach-flow-dissector":  # this namespace's (target 0: the caller's, net/core/net_namespace.c)
        program = load(FLOW_DISSECTOR, 0, "lrt_dissect", ON_NAMESPACE["flow dissector"])
        attach(0, program, ON_NAMESPACE["flow dissector"])
        print(program_id(program))
        return
    if argv[0] == "detach-flow-dissector":
        detach(0, fd_of(int(argv[1])), ON_NAMESPACE["flow dissector"])
        return
    command, link, direction = argv[:3]
    index, hook = socket.if_nametoindex(link), ON_LINKS[f"tcx {direction}"]
    if command == "attach-tcx":
        program = load(SCHED_CLS, 0, "lrt_pass")
        attach(index, program, hook)
        print(program_id(program))
    elif command == "detach-tcx":
        detach(index, fd_of(int(argv[3])), hook)


if __name__ == "__main__":
    main(sys.argv[1:])
