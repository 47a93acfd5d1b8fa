"""trafgen (netsniff-ng): fixed-size UDP frames at a fixed rate, for RFC 2544 packet-rate tests.

Frame size is the RFC 2544 one: MAC header to FCS. The kernel adds the FCS on a real NIC (and a
veth has none), so trafgen is given frame − 4 bytes: Ethernet 14 + IPv4 20 / IPv6 40 + UDP 8 +
zero padding. trafgen computes the IP and UDP checksums itself (its ipv4()/ipv6()/udp() header
functions), reads the packet description from stdin (`--conf -`), sends `--num` frames on one
worker (`--cpus 1`) and prints, on exit, how many it sent and how long its worker took.

Pacing. trafgen's `--rate <n>pps` does not space frames: it sends n frames as fast as it can, then
sleeps out the rest of the second (trafgen.c shaper_delay, netsniff-ng): a "1 s trial at n fps" is
one burst at the sender's own speed. Measured through the VM DUT here, 2 s at 5,000 frames/s: 3,843
of 10,000 frames arrived in bursts, all 10,000 when spaced. So a paced send (`pace`, where the
sender may change its own interface: the lab's namespaces) puts a token bucket (tbf, PACE_BUCKET_S
deep) at the trial's rate on the sender's interface for the trial and has trafgen go through it
(`--qdisc-path`; by default trafgen bypasses the qdisc layer): each second's burst waits in the
bucket's queue and leaves evenly, in groups of at most PACE_BUCKET_S. What the bucket dropped, or
still held when trafgen exited (then held still, counted, and removed with the bucket: hold_argv), was
not offered in time: *unsent*.
Without `pace` (real client hosts, whose qdisc linerate does not journal) trafgen bursts as above.

The worker's time is the sending time: when the worker keeps up it is the intended duration (it
sleeps out each second), and when it cannot (its CPU, or a device that pushes back) it is longer —
the frames were offered late: *unsent* at the intended rate, which is not a loss of the DUT.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass

from linerate.calc.linerate import RFC2544_SIZES
from linerate.errors import ConfigError, ParseError
from linerate.traffic import frames
from linerate.traffic.base import run_sender

FCS_BYTES = 4
HEADERS = {4: 14 + 20 + 8, 6: 14 + 40 + 8}
MAX_FRAME = 9018  # jumbo, as calc/ knows it
DISCARD_PORT = 9  # RFC 863 discard: the default destination port
PACE_BUCKET_S = 0.002  # the pacing bucket: frames leave in groups of at most 2 ms at the trial's rate
PACE_GRACE_S = 5  # a paced trafgen is stopped after twice the trial's time plus this
NOBODY_MAC = "02:00:00:00:00:01"  # locally administered, unused: frames for the generator's ceiling probe


def min_frame(family: int) -> int:
    """The smallest frame that carries the headers: 64 for IPv4 (Ethernet's minimum), 66 for IPv6."""
    return max(64, HEADERS[family] + FCS_BYTES)


def default_frame_sizes(family: int, smallest: int | None = None) -> list[int]:
    """RFC 2544's seven sizes, the smallest raised to what the family's headers need (IPv6: 66) or
    to what the sender can make (`smallest`: iperf3 UDP's 82 for IPv6)."""
    return sorted({max(size, smallest or min_frame(family)) for size in RFC2544_SIZES})


def check_frame_size(frame: frames.FrameSize, family: int, field: str = "--frame-sizes") -> frames.FrameSize:
    """A fixed size the family's headers fit in, or the name of a mix (traffic/frames.py)."""
    if frames.is_mix(frame):
        return frame
    if isinstance(frame, bool) or not isinstance(frame, int) or not min_frame(family) <= frame <= MAX_FRAME:
        raise ConfigError(field, f"{frame!r} is not a frame size for IPv{family}: use {min_frame(family)} to "
                          f"{MAX_FRAME} bytes (MAC header to FCS) or {' / '.join(frames.MIXES)}")
    return frame


@dataclass(frozen=True)
class FlowSpec:
    """One UDP flow through the DUT: the client's frames to the server's discard port."""

    family: int
    src_mac: str
    dst_mac: str  # the DUT's client-side interface: the next hop
    src_ip: str
    dst_ip: str
    src_port: int = 49152
    dst_port: int = DISCARD_PORT


_MAC = re.compile(r"^[0-9a-f]{2}(:[0-9a-f]{2}){5}$")
_IP = re.compile(r"^[0-9a-f.:]+$")


def packet_config(flow: FlowSpec, frame: frames.FrameSize) -> str:
    """trafgen's packet description (its own config language): one packet per frame of the size's
    cycle (one for a fixed size, the 12 of IMIX), which trafgen sends round-robin."""
    check_frame_size(frame, flow.family)
    for value in (flow.src_mac, flow.dst_mac):
        if not _MAC.fullmatch(value):
            raise ConfigError("mac", f"{value!r} is not a MAC address")
    for value in (flow.src_ip, flow.dst_ip):
        if not _IP.fullmatch(value):
            raise ConfigError("address", f"{value!r} is not an IP address")
    ip = (f"ipv4(saddr={flow.src_ip}, daddr={flow.dst_ip}, ttl=64)" if flow.family == 4 else
          f"ipv6(saddr={flow.src_ip}, daddr={flow.dst_ip}, hoplimit=64)")
    return "".join(f"{{\n  eth(da={flow.dst_mac}, sa={flow.src_mac}),\n  {ip},\n"
                   f"  udp(sp={flow.src_port}, dp={flow.dst_port}),\n"
                   f"  fill(0x00, {size - FCS_BYTES - HEADERS[flow.family]})\n}}\n"
                   for size in frames.cycle(frame, flow.family))


def send_argv(device: str, rate_pps: int | None, count: int) -> list[str]:
    """rate None: as fast as the worker can (the generator's own ceiling)."""
    if not re.fullmatch(r"[A-Za-z0-9_.-]{1,15}", device):
        raise ConfigError("device", f"{device!r} is not an interface name")
    argv = ["trafgen", "--dev", device, "--conf", "-", "--num", str(int(count)), "--cpus", "1"]
    if rate_pps is not None:
        argv[5:5] = ["--rate", f"{int(rate_pps)}pps"]
    return argv


PACING_HANDLE = "5ace:"  # the pacing bucket's own handle: what a killed send left is found by it (lab clean)


def pace_argvs(device: str, rate_pps: int, frame: frames.FrameSize, family: int) -> list[list[str]]:
    """tc argv that paces `rate_pps` frames/s of `frame` leaving `device` (the module docstring): a
    tbf at the frames' bytes/s as the kernel counts them (skb->len: the frame without its FCS), a
    bucket of PACE_BUCKET_S (at least one frame) and a queue that holds one second of frames, under
    PACING_HANDLE."""
    sizes = [size - FCS_BYTES for size in frames.cycle(frame, family)]
    bytes_per_s = rate_pps * sum(sizes) / len(sizes)
    bucket = max(max(sizes), math.ceil(bytes_per_s * PACE_BUCKET_S))
    return [["tc", "qdisc", "replace", "dev", device, "root", "handle", PACING_HANDLE, "tbf", "rate", f"{math.ceil(bytes_per_s * 8)}bit",
             "burst", str(bucket), "limit", str(math.ceil(bytes_per_s * 1.25) + 2 * bucket)]]


HOLD_REFILL_S = 60  # the held bucket refills one frame a minute: none leaves in the moment before its removal


def hold_argv(device: str, rate_pps: int, frame: frames.FrameSize, family: int) -> list[str]:
    """The pacing bucket, held: the same tbf changed to a bucket of the largest frame sent that refills in
    HOLD_REFILL_S (tbf_change fills it, so at most that one frame leaves, at once; the queue and its limit are
    kept). Read after this, its counters stay as they are until the bucket is removed: what it still queues
    then never leaves. Read while it still paced, frames counted as queued kept leaving until the removal, and
    the server counted more than were sent (local CI run 75: 4,962 counted of 4,884 "sent" at 5,000 frames/s
    through the VM DUT)."""
    [pace] = pace_argvs(device, rate_pps, frame, family)
    largest = max(size - FCS_BYTES for size in frames.cycle(frame, family))
    held = ["tc", "qdisc", "change", *pace[3:]]
    held[held.index("rate") + 1] = f"{math.ceil(largest * 8 / HOLD_REFILL_S)}bit"
    held[held.index("burst") + 1] = str(largest)
    return held


def unpace_argv(device: str) -> list[str]:
    return ["tc", "qdisc", "del", "dev", device, "root"]


@dataclass(frozen=True)
class QueueStats:
    sent: int
    dropped: int
    backlog: int  # frames still queued


def parse_queue_stats(text: str) -> QueueStats:
    """`tc -s -j qdisc show dev IF`: the root qdisc's packets, drops and qlen (iproute2's JSON)."""
    try:
        entries = json.loads(text)
        root = next(e for e in entries if e.get("root"))
        return QueueStats(int(root["packets"]), int(root["drops"]), int(root.get("qlen", 0)))
    except (json.JSONDecodeError, StopIteration, KeyError, TypeError, ValueError, AttributeError):
        raise ParseError(f"tc -s -j qdisc: no root qdisc statistics ({text.strip()[:120]!r})") from None


@dataclass(frozen=True)
class Sent:
    packets: int
    bytes: int
    cpu_s: float  # the worker's time on the CPU: the sending time (see the module docstring)


_PACKETS = re.compile(r"^\s*(\d+) packets outgoing\s*$", re.M)
_BYTES = re.compile(r"^\s*(\d+) bytes outgoing\s*$", re.M)
_CPU = re.compile(r"^\s*(\d+) sec, (\d+) usec on CPU\d+ \((\d+) packets\)\s*$", re.M)


def parse(text: str) -> Sent:
    """trafgen's exit summary. ParseError when it is missing (trafgen failed or was cut off)."""
    packets, octets, cpus = _PACKETS.search(text), _BYTES.search(text), _CPU.findall(text)
    if not packets or not octets or not cpus:
        error = next((line.strip() for line in text.splitlines()
                      if line.strip() and "socket memory" not in line), "no output")
        raise ParseError(f"trafgen printed no send summary ({error[:200]})")
    busiest = max(int(sec) + int(usec) / 1e6 for sec, usec, _ in cpus)
    return Sent(int(packets.group(1)), int(octets.group(1)), busiest)


def version_argv() -> list[str]:
    return ["trafgen", "--version"]


def parse_version(text: str) -> str:
    match = re.search(r"^trafgen (\d[\w.]*)", text, re.M)
    return match.group(1) if match else "unknown"


class TrafgenSender:
    """trafgen behind search/frame_path.py: its frames go to the next hop's MAC, counted and dropped
    at the server (nothing there listens for them)."""

    count_verdict = "drop"

    def __init__(self, version: str):
        self.name = f"trafgen {version}"

    def check(self, frame: frames.FrameSize, family: int) -> None:
        check_frame_size(frame, family)

    def min_frame(self, family: int) -> int:
        return min_frame(family)

    def send(self, client, device: str, flow: FlowSpec, frame: frames.FrameSize, rate_pps: int | None,
             count: int, *, to_dut: bool = True, pace: bool = False, qdisc=()) -> Sent:
        """to_dut False: to an unused MAC (the generator's ceiling, without the DUT's work). pace: the
        frames spaced by a tbf on `device` (the module docstring), removed again before returning, and
        `qdisc` (tc argv) applied again: what the device holds when not pacing (a pool's pair link)."""
        if not to_dut:
            flow = FlowSpec(**{**flow.__dict__, "dst_mac": NOBODY_MAC})
        argv = send_argv(device, rate_pps, count)
        if frames.largest(frame, flow.family) > 2048:
            argv.append("--jumbo-support")
        if not pace or rate_pps is None:
            return run_sender(client, argv, parse, count, rate_pps, stdin=packet_config(flow, frame), with_stderr=True)
        for step in pace_argvs(device, rate_pps, frame, flow.family):
            client.run(step, timeout_s=15)
        try:
            # a bucket the host drains slowly holds trafgen back (its socket's send buffer): stopped
            # with SIGINT after twice the trial's time, trafgen still prints what it sent; the rest is unsent
            limit_s = math.ceil(2 * count / rate_pps) + PACE_GRACE_S
            sent = run_sender(client, ["timeout", "-s", "INT", str(limit_s), *argv, "--qdisc-path"], parse, count,
                              rate_pps, stdin=packet_config(flow, frame), with_stderr=True)
            client.run(hold_argv(device, rate_pps, frame, flow.family), timeout_s=15)
            queue = parse_queue_stats(client.run(["tc", "-s", "-j", "qdisc", "show", "dev", device],
                                                 timeout_s=15).stdout)
        finally:
            client.run(unpace_argv(device), timeout_s=15, check=False)  # what it still held goes with it
            for argv in qdisc:
                client.run(list(argv), timeout_s=15)
        late = min(sent.packets, queue.dropped + queue.backlog)
        return Sent(sent.packets - late, round(sent.bytes * (sent.packets - late) / max(1, sent.packets)), sent.cpu_s)
