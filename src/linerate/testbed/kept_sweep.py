"""What commands killed on a kept lab leave there, found and swept (`lab clean`, and each command that takes
the lab before it measures and once it ended): their generators, a pool's pair link a killed rfc2544 left
its pacing in, a one-pair lab's pacing bucket, the counting tables of an rfc2544 or rfc9693 run and their
temp files in the lab's scratch directory."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import stat
from pathlib import Path

from linerate.axes import AXES
from linerate.exec import NetnsExecutor
from linerate.exec.scratch import is_scratch_path
from linerate.lab.apply import NETNS_DIR, programs_in_netns
from linerate.lab.conform import held_tbf_rates
from linerate.lab.registry import LabRecord
from linerate.lab.signals import terminations_deferred
from linerate.model import SWITCH_ROLES, lab_namespace
from linerate.numbers import ascii_int
from linerate.search.frame_path import COUNT_TABLE as FRAME_TABLE
from linerate.search.state_path import COUNT_TABLE as STATE_TABLE
from linerate.topology.link import SEGMENTER_SPEEDUP, LinkSpec, parse_link_rate, qdisc_argvs
from linerate.topology.plan import CLIENT_IF, switch_port
from linerate.traffic.trafgen import PACING_HANDLE


def own_scratch(path: str | None, *, make: bool = False) -> str | None:
    """Why a kept lab's scratch directory is not its own any more (None: it is) — a link or anything
    else put at its name (its name shows in /tmp), another user's, or writable by others. With make,
    one that is gone (a /tmp cleaner) is made again, exclusively (mkdir fails on anything there)."""
    if not path or not is_scratch_path(path):
        return None if not path else f"its scratch directory {path[:200]} is not a linerate scratch path"
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        if not make:
            return None  # nothing there: nothing of it to sweep
        try:
            os.mkdir(path, 0o700)
        except OSError as exc:
            return f"its scratch directory {path[:200]} cannot be made again ({exc.strerror})"
        os.chmod(path, 0o711)  # as the lab made it: nginx's workers (user nobody) pass through it
        return None
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.geteuid() or info.st_mode & 0o022:
        return (f"its scratch directory {path[:200]} is not the lab's own any more (a link, another user's, or "
                "writable by others)")
    return None


RUN_TABLES = (FRAME_TABLE, STATE_TABLE)  # what an rfc2544 or rfc9693 run on a kept lab makes and removes
# what a command on a kept lab runs in its client and server namespaces besides the lab's own iperf3
# server (the nginx of cps: stop_stale_nginx): generators, captures and their time limits
RUN_PROGRAMS = ("trafgen", "iperf3", "h2load", "tcpdump", "timeout")


def is_generator_namespace(ns: str) -> bool:
    """A client's or a server's namespace (not the DUT's, not a pool's switch)."""
    return re.search(r"-(client|server)[0-9]*$", ns) is not None


def is_leftover(pid: int, program: str, scratch: str) -> bool:
    """Whether a process found in the lab is one a linerate command runs there: a generator that would
    disturb a measurement (trafgen, h2load, an iperf3 *client*; an iperf3 server someone else started
    is left alone), or a capture or time limit writing into the lab's scratch directory (linerate's own
    tcpdump; an operator's capture elsewhere is theirs)."""
    if program in ("trafgen", "h2load"):
        return True
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return False  # gone meanwhile
    if program == "iperf3":  # -c HOST, -cHOST, --client HOST, --client=HOST (getopt_long)
        return any(arg in (b"-c", b"--client") or arg.startswith(b"--client=") or
                   (arg.startswith(b"-c") and not arg.startswith(b"--")) for arg in argv)
    return bool(scratch) and any(scratch.encode() in arg for arg in argv)


def is_swept(pid: int, program: str, scratch: str) -> bool:
    """Whether stop_leftover_programs stops this process of a generator's namespace (a killed command's)."""
    return program in RUN_PROGRAMS and is_leftover(pid, program, scratch)


SOCKETS = ["ss", "-Htuwanp"]  # every TCP, UDP and raw socket of a namespace with its processes (ss(8))


def senders(ss_output: str) -> list[tuple[int, str, str]]:
    """`ss -Htuwanp` -> (pid, program, peer) of each process that can send through the lab: a socket connected
    to a peer other than loopback (state ESTAB: a TCP connection or a connected UDP socket), or an unconnected
    UDP or raw socket not bound to loopback (it sends to any address with sendto()). A listening
    TCP socket is a server's, and a packet socket (a capture's) is not listed by these options."""
    found = set()
    for line in ss_output.splitlines():
        fields = line.split()
        if len(fields) < 6:
            continue
        if fields[1] == "ESTAB":
            peer = fields[5]
            host = peer.rpartition(":")[0].strip("[]").removeprefix("::ffff:")
        elif fields[0] in ("udp", "raw") and fields[1] == "UNCONN":
            peer = "any address (an unconnected socket)"
            host = fields[4].rpartition(":")[0].strip("[]").removeprefix("::ffff:")
        else:
            continue
        if host.startswith("127.") or host == "::1":
            continue
        for program, pid in re.findall(r'\("((?:[^"\\]|\\.)*)",pid=([0-9]+)', line.partition("users:(")[2]):
            found.add((int(pid), program, peer))
    return sorted(found)


def iperf3_port(pid: int) -> int | None:
    """The port an iperf3 process serves on, from its argv (-p/--port N, --port=N; 5201 when none)."""
    try:
        argv = [a.decode(errors="replace") for a in Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")]
    except OSError:
        return None
    port = "5201"
    for index, word in enumerate(argv):
        if word in ("-p", "--port") and index + 1 < len(argv):
            port = argv[index + 1]
        elif word.startswith("--port="):
            port = word.split("=", 1)[1]
    return ascii_int(port)


def stop_leftover_programs(record: LabRecord, *, remove: bool = True) -> list[str]:
    """SIGKILL the generators and captures running in a kept lab's client and server namespaces (not the
    lab's own iperf3 server): called by a command that holds the lab's measure lock, or by `lab clean`
    on an idle lab, so whatever runs there is a killed command's — or its own, cut short by a signal.
    One line per process (with remove=False, only found)."""
    found = []
    own_servers = record.live_server_pids()
    for ns in record.namespaces:
        if not is_generator_namespace(ns):
            continue  # the DUT's namespace runs the lab itself (a VM DUT's qemu); a pool's switches run nothing
        for pid, program in programs_in_netns(ns):
            if pid not in own_servers and is_swept(pid, program, record.scratch):
                if remove:
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(pid, 9)
                found.append(f"{program} (pid {pid}) in {ns}")
    return found


def restore_port(host, argvs: list[list[str]]) -> None:
    """A client's port back to its pair link (tc argv), whatever it holds now; a signal meanwhile waits until
    it is whole again (between the two steps the port would be unshaped)."""
    with terminations_deferred():
        host.run(["tc", "qdisc", "del", "dev", CLIENT_IF, "root"], timeout_s=15, check=False)
        for argv in argvs:
            host.run(argv, timeout_s=15)


def pacing_left(record: LabRecord) -> list[str]:
    """The client namespaces of a kept lab without pair links whose port still holds a killed rfc2544's pacing
    bucket (a root qdisc under trafgen.PACING_HANDLE: no plan step makes one). Looks only."""
    try:
        if recorded_pair_link(record) is not None:
            return []  # pair_link_drift puts the pair link back in its place
    except (ValueError, TypeError):
        return []  # a record that does not say its pair link validly: vet and lab_from_record judge it
    left = []
    for ns in record.namespaces:
        if re.search(r"-client[0-9]*$", ns) and (NETNS_DIR / ns).exists():
            shown = NetnsExecutor(ns).run(["tc", "-j", "qdisc", "show", "dev", CLIENT_IF], timeout_s=15, check=False)
            try:
                roots = [q for q in json.loads(shown.stdout or "[]") if q.get("root")]
            except (ValueError, AttributeError):
                continue
            if any(q.get("handle") == PACING_HANDLE and q.get("kind") == "tbf" for q in roots):
                left.append(ns)
    return left


def remove_pacing(host) -> bool:
    """Delete the port's root qdisc only while it is the pacing bucket (tc refuses another handle)."""
    return host.run(["tc", "qdisc", "del", "dev", CLIENT_IF, "root", "handle", PACING_HANDLE], timeout_s=15,
                    check=False).returncode == 0


def recorded_pair_link(record: LabRecord) -> int | None:
    """The pair link rate a record gives (bit/s), None for none; ValueError/TypeError when it says none validly."""
    params = record.params if isinstance(record.params, dict) else {}
    return parse_link_rate(AXES["pair_link_rate"].validate(params.get("pair_link_rate", "none")))


def pair_link_drift(record: LabRecord) -> list[tuple[str, list[list[str]]]]:
    """(client namespace, the tc argv of its pair link) for each client port of a kept pool whose qdiscs are not
    its pair link any more (a killed rfc2544's pacing bucket, or none). Looks only; [] for a lab without pair
    links, or whose record does not say them validly (vet and lab_from_record judge such a record)."""
    params = record.params if isinstance(record.params, dict) else {}
    try:
        rate = recorded_pair_link(record)
        mtu = AXES["mtu"].validate(params.get("mtu", record.mtu))
    except (ValueError, TypeError):
        return []
    if rate is None:
        return []
    argvs = qdisc_argvs(LinkSpec(rate), CLIENT_IF, mtu)
    drifted = []
    for ns in record.namespaces:
        if not re.search(r"-client[0-9]*$", ns):
            continue
        if not (NETNS_DIR / ns).exists():
            continue  # gone already (or never made): nothing of it to put back
        shown = NetnsExecutor(ns).run(["tc", "-j", "qdisc", "show", "dev", CLIENT_IF], timeout_s=15, check=False)
        if shown.returncode != 0:
            continue  # no such port (not a pool's client): nothing linerate shaped
        wanted = {"root": round(rate * SEGMENTER_SPEEDUP), "1:1": round(rate)}
        if held_tbf_rates(shown.stdout) != wanted:  # the pacing bucket (it takes the root's place) or nothing at all
            if not _holds_pair_link(record, ns, wanted, mtu):
                return []  # the record's pair link is not the lab's: nothing is put back from it
            drifted.append((ns, argvs))
    return drifted


def _holds_pair_link(record: LabRecord, client_ns: str, rates: dict[str, int], mtu: int) -> bool:
    """Whether the pair whose client is `client_ns` has the record's pair link where no command changes it:
    the client's MTU, and the rates at the switch's end of its access link (lab/conform.py checks the
    whole lab the same way before a command measures)."""
    suffix = re.search(r"-client([0-9]*)$", client_ns).group(1)
    switch = NetnsExecutor(lab_namespace(record.lab_id, SWITCH_ROLES[0]))
    port = switch_port(int(suffix) - 1 if suffix else 0)
    held = held_tbf_rates(switch.run(["tc", "-j", "qdisc", "show", "dev", port], timeout_s=15, check=False).stdout)
    link = NetnsExecutor(client_ns).run(["ip", "-j", "link", "show", "dev", CLIENT_IF], timeout_s=15, check=False)
    try:
        held_mtu = json.loads(link.stdout or "[]")[0].get("mtu")
    except (ValueError, IndexError, AttributeError):
        held_mtu = None
    return held == rates and held_mtu == mtu


def sweep_kept_lab(record: LabRecord, *, remove: bool = True) -> list[str]:
    """What killed commands left in a kept lab that no command uses now (call it holding the lab:
    Registry.unused): their generators still sending (trafgen, an iperf3 client, h2load: they would
    disturb every later trial), the counting tables of an rfc2544 or rfc9693 run (one drops its UDP
    port) and their temp files in the lab's scratch directory (`linerate-*`, made by
    exec/scratch.make_temp; only in the lab's own directory, never through a link). What was removed
    (or, with remove=False, only found), one line each."""
    swept = stop_leftover_programs(record, remove=remove)
    for ns, argvs in pair_link_drift(record):
        if remove:
            restore_port(NetnsExecutor(ns), argvs)
        swept.append(f"the pair link of {ns} (put back)" if remove else f"the pair link of {ns}")
    for ns in pacing_left(record):
        done = remove and remove_pacing(NetnsExecutor(ns))
        swept.append(f"the pacing qdisc on {CLIENT_IF} in {ns}" + (" (removed)" if done else " (tc refused to remove it)"
                                                                    if remove else ""))
    for ns in record.namespaces:
        host = NetnsExecutor(ns)
        listing = host.run(["nft", "list", "tables"], timeout_s=15, check=False).stdout.splitlines()
        for table in RUN_TABLES:
            if f"table inet {table}" in listing:
                if remove:
                    host.run(["nft", "delete", "table", "inet", table], timeout_s=15, check=False)
                swept.append(f"nftables table inet {table} in {ns}")
    if record.scratch and os.path.lexists(record.scratch) and own_scratch(record.scratch) is None:
        with contextlib.suppress(OSError):
            for entry in os.scandir(record.scratch):
                info = entry.stat(follow_symlinks=False)
                if not entry.name.startswith("linerate-") or info.st_uid != os.geteuid():
                    continue
                if not (stat.S_ISDIR(info.st_mode) or stat.S_ISREG(info.st_mode)):
                    continue
                if remove and stat.S_ISDIR(info.st_mode):
                    shutil.rmtree(entry.path, ignore_errors=True)
                elif remove:
                    os.unlink(entry.path)
                swept.append(f"{entry.path}")
    return swept
