"""eBPF programs attached where they act on a lab's packets without showing in any read of `ip`, `tc` or `nft`: a
link's tcx hooks (Linux 6.6; a program there cut a kept lab from 30,636 to 7,266 Mbit/s), a namespace's flow
dissector and sk_lookup programs, and the programs of the cgroups a lab's processes run in (cgroup_skb and
cgroup_sock programs see every packet and socket of those processes). Each is listed with bpf(2)
BPF_PROG_QUERY (for a cgroup, BPF_F_QUERY_EFFECTIVE: those it inherits too) and each program named by what
BPF_OBJ_GET_INFO_BY_FD tells of it: its name, type and tag (a hash of its instructions), not its id, which
changes when the same program is loaded again. Attach types and commands: include/uapi/linux/bpf.h.

lab/snapshot.py takes a namespace's and its links' with the namespace's other reads (in_namespace, on a thread that
entered the namespace: lab/netns.py read_in; no process is started)."""

from __future__ import annotations

import ctypes
import errno
import os
import platform
import socket
import struct
from pathlib import Path

from linerate.lab.placement import cgroup_hierarchies

SYS_BPF = {"x86_64": 321, "aarch64": 280, "riscv64": 280, "loongarch64": 280, "ppc64le": 361, "s390x": 351,
           "i686": 357, "armv7l": 386}.get(platform.machine())
PROG_GET_FD_BY_ID, OBJ_GET_INFO_BY_FD, PROG_QUERY, LINK_GET_FD_BY_ID, LINK_GET_NEXT_ID = 13, 15, 16, 30, 31  # bpf_cmd
LINK_TYPE_NETFILTER = 10  # enum bpf_link_type (Linux 6.4)
FAMILIES = {1: "inet", 2: "ipv4", 3: "arp", 5: "netdev", 7: "bridge", 10: "ipv6"}  # NFPROTO_* (netfilter.h)
HOOKS = {0: "prerouting", 1: "input", 2: "forward", 3: "output", 4: "postrouting"}  # NF_INET_*
F_QUERY_EFFECTIVE = 1
ON_LINKS = {"tcx ingress": 46, "tcx egress": 47}  # enum bpf_attach_type BPF_TCX_INGRESS, BPF_TCX_EGRESS
ON_NAMESPACE = {"flow dissector": 17, "sk_lookup": 36}  # BPF_FLOW_DISSECTOR, BPF_SK_LOOKUP
ON_CGROUPS = {"inet ingress": 0, "inet egress": 1, "inet sock create": 2, "sock ops": 3, "inet4 bind": 8,
              "inet6 bind": 9, "inet4 connect": 10, "inet6 connect": 11, "inet4 post bind": 12,
              "inet6 post bind": 13, "udp4 sendmsg": 14, "udp6 sendmsg": 15, "sysctl": 18, "udp4 recvmsg": 19,
              "udp6 recvmsg": 20, "getsockopt": 21, "setsockopt": 22, "inet4 getpeername": 29,
              "inet6 getpeername": 30, "inet4 getsockname": 31, "inet6 getsockname": 32, "inet sock release": 34}
PROGRAM_TYPES = {1: "socket_filter", 3: "sched_cls", 4: "sched_act", 8: "cgroup_skb", 9: "cgroup_sock",
                 13: "sock_ops", 18: "cgroup_sock_addr", 22: "flow_dissector", 23: "cgroup_sysctl",
                 25: "cgroup_sockopt", 30: "sk_lookup", 32: "netfilter"}  # enum bpf_prog_type
MAX_PROGRAMS = 64
ATTR_BYTES = 128  # more than each command's part of union bpf_attr; the kernel takes zeroes past its own


LIBC = ctypes.CDLL(None, use_errno=True)


def _bpf(command: int, attr: ctypes.Array) -> int:
    if SYS_BPF is None:
        raise OSError(errno.ENOSYS, f"bpf(2) has no known number on {platform.machine()}")
    done = LIBC.syscall(ctypes.c_long(SYS_BPF), ctypes.c_int(command), attr, ctypes.c_uint(len(attr)))
    if done < 0:
        code = ctypes.get_errno()
        raise OSError(code, os.strerror(code))
    return done


def query(target: int, attach_type: int, flags: int = 0) -> list[int]:
    """The ids of the programs attached at (target: a link's ifindex, or the fd of a namespace or cgroup,
    attach_type): struct bpf_attr's query (target u32, attach_type u32, query_flags u32, attach_flags u32,
    prog_ids u64, prog_cnt u32). OSError as bpf(2) fails: EINVAL where this kernel has no such hook."""
    ids = (ctypes.c_uint32 * MAX_PROGRAMS)()
    attr = ctypes.create_string_buffer(ATTR_BYTES)
    struct.pack_into("=IIIIQI", attr, 0, target, attach_type, flags, 0, ctypes.addressof(ids), MAX_PROGRAMS)
    try:
        _bpf(PROG_QUERY, attr)
    except OSError as e:
        if e.errno != errno.ENOSPC:  # more than MAX_PROGRAMS: the first are listed, and the count below
            raise
    count = struct.unpack_from("=I", attr, 24)[0]
    return list(ids[:min(count, MAX_PROGRAMS)]) + [0] * max(0, count - MAX_PROGRAMS)


def describe(program_id: int) -> str:
    """"NAME (TYPE, tag HEX)" of a loaded program (struct bpf_prog_info: type u32, id u32, tag[8], ..., name[16]
    at byte 64); "a program" where it cannot be read (unloaded meanwhile, or an id beyond MAX_PROGRAMS)."""
    info = _object_info(PROG_GET_FD_BY_ID, program_id, 80) if program_id else None
    if info is None:
        return "a program"
    kind, tag = struct.unpack_from("=I", info, 0)[0], info.raw[8:16].hex()
    name = info.raw[64:80].split(b"\0", 1)[0].decode("ascii", "replace") or "(no name)"
    return f"{name} ({PROGRAM_TYPES.get(kind, f'type {kind}')}, tag {tag})"


def listed(target: int, attach_type: int, flags: int = 0) -> list[str] | str:
    """The programs at one hook, described and sorted; "no such hook here" where the kernel has none, or why
    they could not be listed."""
    try:
        return sorted(describe(program) for program in query(target, attach_type, flags))
    except OSError as e:
        return "no such hook here" if e.errno == errno.EINVAL else f"unreadable: {e.strerror}"


def in_namespace(links: list[str]) -> dict[str, list[str] | str]:
    """The calling thread's network namespace's programs and those of each of its links (by name)."""
    found: dict[str, list[str] | str] = {}
    fd = os.open("/proc/thread-self/ns/net", os.O_RDONLY)
    try:
        for what, attach_type in ON_NAMESPACE.items():
            found[what] = listed(fd, attach_type)
    finally:
        os.close(fd)
    for link in links:
        try:
            index = socket.if_nametoindex(link)
        except OSError:
            continue  # a link that went meanwhile: the namespace's links read says so
        for what, attach_type in ON_LINKS.items():
            found[f"{what} of {link}"] = listed(index, attach_type)
    return found


def host_flow_dissector() -> list[str] | str:
    """The flow dissector program of the host's own namespace (init_net): where one is attached there, the kernel
    runs it for the packets of every namespace and ignores theirs (net/core/flow_dissector.c)."""
    try:
        fd = os.open("/proc/1/ns/net", os.O_RDONLY)
    except OSError as e:
        return f"unreadable: {e.strerror}"
    try:
        return listed(fd, ON_NAMESPACE["flow dissector"])
    finally:
        os.close(fd)


def of_cgroups(directories: list[str]) -> dict[str, list[str] | str]:
    """The programs that act on the processes of each cgroup v2 directory (its own and those it inherits), by
    hook, each hook listed with none too (a program attached later is a change, not a new key):
    {"inet egress of /sys/fs/cgroup/unified/a": [...]}."""
    found: dict[str, list[str] | str] = {}
    for directory in sorted(set(directories)):
        try:
            fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
        except OSError as e:
            found[f"programs of {directory}"] = f"unreadable: {e.strerror}"
            continue
        try:
            for what, attach_type in ON_CGROUPS.items():
                found[f"{what} of {directory}"] = listed(fd, attach_type, F_QUERY_EFFECTIVE)
        finally:
            os.close(fd)
    return found


def netfilter_programs() -> list[str] | str:
    """Every eBPF program on a netfilter hook, in any namespace of the host (its BPF link names the family, hook
    and priority, not the namespace: struct bpf_link_info's netfilter pf, hooknum, priority after type, id and
    prog_id): "ipv4 forward priority -100: NAME (netfilter, tag HEX)", sorted; why not, as text."""
    found, link_id = [], 0
    try:
        while True:
            attr = ctypes.create_string_buffer(ATTR_BYTES)
            struct.pack_into("=I", attr, 0, link_id)
            try:
                _bpf(LINK_GET_NEXT_ID, attr)
            except OSError as e:
                if e.errno == errno.ENOENT:  # no link after link_id
                    return sorted(found)
                raise
            link_id = struct.unpack_from("=I", attr, 4)[0]
            info = _object_info(LINK_GET_FD_BY_ID, link_id, 64)
            if info is not None and struct.unpack_from("=I", info, 0)[0] == LINK_TYPE_NETFILTER:
                program, family, hook, priority = struct.unpack_from("=I4xIIi", info, 8)
                found.append(f"{FAMILIES.get(family, family)} {HOOKS.get(hook, hook)} priority {priority}: "
                             f"{describe(program)}")
    except OSError as e:
        return f"unreadable: {e.strerror}"


def _object_info(get_fd: int, object_id: int, size: int) -> ctypes.Array | None:
    """What BPF_OBJ_GET_INFO_BY_FD tells of a program or link by its id (get_fd: BPF_PROG_GET_FD_BY_ID or
    BPF_LINK_GET_FD_BY_ID; its struct's first size bytes); None where it cannot be read (gone meanwhile)."""
    attr = ctypes.create_string_buffer(ATTR_BYTES)
    struct.pack_into("=I", attr, 0, object_id)
    try:
        fd = _bpf(get_fd, attr)
    except OSError:
        return None
    try:
        info = ctypes.create_string_buffer(size)
        attr = ctypes.create_string_buffer(ATTR_BYTES)
        struct.pack_into("=IIQ", attr, 0, fd, len(info), ctypes.addressof(info))
        _bpf(OBJ_GET_INFO_BY_FD, attr)
        return info
    except OSError:
        return None
    finally:
        os.close(fd)


def of_processes(pids: list[int]) -> dict[str, list[str] | str]:
    """of_cgroups for the cgroup v2 directory each process is in (cgroup programs attach to v2 cgroups only:
    bpf(2) BPF_PROG_ATTACH); a process that is gone is left out (the processes read says so)."""
    directories = []
    mounts = Path("/proc/self/mounts").read_text()
    for pid in pids:
        try:
            cgroups = Path(f"/proc/{pid}/cgroup").read_text()
        except OSError:
            continue
        directories += [f"{mount}{path.rstrip('/')}" for controllers, mount, path
                        in cgroup_hierarchies(cgroups, mounts) if not controllers]
    return of_cgroups(directories)
