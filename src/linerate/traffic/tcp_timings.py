"""Connect time and time to first byte of each connection, from a packet capture taken on the
client while h2load runs: the percentiles h2load 1.52 does not print (its summary has min, max,
mean and sd of those times, computed over its clients; tcpdump(8), Debian `tcpdump`).

What is captured (capture_filter): SYNs, SYN-ACKs and the segments that carry data, of the test's
connections only (server address and port), headers only
(snapshot length 128: Linux cooked v2 20 + IPv6 40 + TCP 60 bytes at most; the TCP payload length
comes from the IP header, not from what was captured). Above SAMPLE_ABOVE connections in a trial,
only the connections whose client port has some low bits zero are captured (a sample spread over
the whole trial: the kernel picks ports independently of when a connection starts; bit 0 is left
out, since Linux gives connect() even ports first: __inet_hash_connect in net/ipv4/inet_hashtables.c).

Per connection (parse_capture), measured at the client's interface the way h2load measures from
its socket calls (src/h2load.cc: connect time = connect start to connected, "time to 1st byte" =
connect start to the first byte read):

- connect: the client's first SYN to the SYN-ACK that acknowledges it (ack = ISN + 1); a SYN the
  DUT or the server dropped shows as a retransmitted SYN (same ISN), and the time includes the
  kernel's retransmission timeout (1 s, then doubling: RFC 6298 section 2);
- first byte (TTFB): the first SYN to the server's first segment with data;
- response: the client's first data (its request) to the server's first data: the DUT's and the
  server's share of TTFB;
- client delay: the SYN-ACK to the client's request: the client's own share. A busy generator
  shows here first (h2load notices a connection only when its event loop comes round to it), and
  in h2load's own connect and first-byte times, which include it.

A client port used again in the same capture (TIME_WAIT reuse) starts a new connection when a SYN
with another ISN appears.

The capture runs around the h2load command on the client (wrap_argv): a fixed sh script starts
tcpdump under `timeout` (it never outlives the trial's own time limit), waits until tcpdump says it
is listening, runs h2load — whose exit status and output are the command's — then waits
BLOCK_FLUSH_S for libpcap's last buffer block (TPACKET_V3 hands a block to tcpdump when it is full or
after its 1 s timeout; an interrupted tcpdump drops the block not yet handed over) and stops
tcpdump with SIGINT. tcpdump's own report ("N packets dropped by kernel") is read from its stderr
(parse_capture_log): a capture that dropped packets is said to be incomplete."""

from __future__ import annotations

import io
import ipaddress
import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import dpkt

from linerate.errors import ParseError
from linerate.stats import percentiles

TCPDUMP = "tcpdump"
SNAPLEN = 128
BUFFER_KIB = 16384  # tcpdump -B: the kernel's capture buffer
BLOCK_FLUSH_S = 1.2  # libpcap's TPACKET_V3 block timeout (tcpdump opens the device with 1000 ms) and a margin
SAMPLE_ABOVE = 16384  # connections per trial captured whole; above, a sample by client port
PERCENTILES = (50, 90, 99)
SYN, ACK = 0x02, 0x10

# Positional parameters, never interpolated: $1 capture file, $2 filter, $3 time limit (s), then h2load's argv.
# GNU timeout runs in a process group of its own unless --foreground: a stop that kills the script's group
# would leave it and tcpdump running (BusyBox's timeout has no such option, nor a group of its own).
CAPTURE_SCRIPT = f"""cap=$1; filter=$2; limit=$3; shift 3
fg=; timeout --foreground 1 true 2>/dev/null && fg=--foreground
timeout $fg -s INT "$limit" {TCPDUMP} -Z root -n -i any -s {SNAPLEN} -B {BUFFER_KIB} -w "$cap" "$filter" 2>"$cap.log" &
capture=$!
i=0
while [ $i -lt 500 ] && kill -0 $capture 2>/dev/null && ! grep -q 'listening on' "$cap.log" 2>/dev/null; do
  sleep 0.01; i=$((i + 1))
done
"$@"
status=$?
if kill -0 $capture 2>/dev/null; then sleep {BLOCK_FLUSH_S}; kill -INT $capture 2>/dev/null; fi
wait $capture
exit $status
"""


def sample_mask(connections: int) -> int:
    """The client-port mask of the sample: 0 (every connection) up to SAMPLE_ABOVE connections,
    then bits 1.. so that about 1 in 2**k connections is kept."""
    if connections <= SAMPLE_ABOVE:
        return 0
    return ((1 << math.ceil(math.log2(connections / SAMPLE_ABOVE))) - 1) << 1


def capture_filter(server: str, port: int, mask: int = 0) -> str:
    """A pcap-filter(7) expression for the SYNs, SYN-ACKs and data segments of the connections to
    server:port. IPv6 fields are read at fixed offsets (`tcp[]` is IPv4-only in libpcap), which
    holds for the test's own packets: no extension headers (`ip6 proto 6` requires that)."""
    address = ipaddress.ip_address(server)
    if not 0 < port < 65536:
        raise ValueError(f"port {port} is not a TCP port")
    if address.version == 4:
        base, syn = "ip proto 6", "tcp[13] & 2 != 0"
        data = "ip[2:2] - ((ip[0] & 15) << 2) - ((tcp[12] & 240) >> 2) > 0"
        client_port_out, client_port_in = "tcp[0:2]", "tcp[2:2]"
    else:
        base, syn = "ip6 proto 6", "ip6[53] & 2 != 0"
        data = "ip6[4:2] - ((ip6[52] & 240) >> 2) > 0"
        client_port_out, client_port_in = "ip6[40:2]", "ip6[42:2]"
    expression = f"{base} and host {address} and port {port} and ({syn} or {data})"
    if mask:
        expression += (f" and ((dst host {address} and {client_port_out} & {mask} = 0) or "
                       f"(src host {address} and {client_port_in} & {mask} = 0))")
    return expression


def wrap_argv(argv: Sequence[str], capture_path: str, expression: str, limit_s: float) -> list[str]:
    """argv run with the capture around it (CAPTURE_SCRIPT): every value a separate argument."""
    return ["sh", "-c", CAPTURE_SCRIPT, "linerate-capture", capture_path, expression,
            str(max(1, math.ceil(limit_s))), *argv]


@dataclass(frozen=True)
class CaptureLog:
    listening: bool
    captured: int | None = None
    dropped: int | None = None  # "dropped by kernel": the buffer overflowed
    problem: str = ""  # what tcpdump said when it did not capture


def parse_capture_log(text: str) -> CaptureLog:
    """tcpdump's stderr: "listening on any, link-type ...", then at exit "N packets captured",
    "N packets received by filter", "N packets dropped by kernel" (tcpdump.c info())."""
    captured = re.search(r"^(\d+) packets? captured", text, re.M)
    dropped = re.search(r"^(\d+) packets? dropped by kernel", text, re.M)
    listening = bool(re.search(r"^(tcpdump: )?listening on ", text, re.M))
    problem = ""
    if not listening:
        lines = [line.strip() for line in text.splitlines() if line.strip()]
        problem = " ".join(lines)[:200] if lines else "tcpdump printed nothing"
    return CaptureLog(listening, int(captured.group(1)) if captured else None,
                      int(dropped.group(1)) if dropped else None, problem)


@dataclass
class Connection:
    client: tuple[str, int]
    isn: int
    syn_at: float
    synack_at: float | None = None
    request_at: float | None = None
    first_byte_at: float | None = None
    syn_retransmits: int = 0

    @property
    def connect_s(self) -> float | None:
        return None if self.synack_at is None else self.synack_at - self.syn_at

    @property
    def first_byte_s(self) -> float | None:
        return None if self.first_byte_at is None else self.first_byte_at - self.syn_at

    @property
    def response_s(self) -> float | None:
        if self.request_at is None or self.first_byte_at is None or self.first_byte_at < self.request_at:
            return None
        return self.first_byte_at - self.request_at

    @property
    def client_delay_s(self) -> float | None:
        if self.request_at is None or self.synack_at is None or self.request_at < self.synack_at:
            return None
        return self.request_at - self.synack_at


def _ip_layer(linktype: int, frame: bytes):
    if linktype == dpkt.pcap.DLT_EN10MB:
        return dpkt.ethernet.Ethernet(frame).data
    if linktype == dpkt.pcap.DLT_LINUX_SLL:
        return dpkt.sll.SLL(frame).data
    if linktype == 276:  # LINKTYPE_LINUX_SLL2 (tcpdump -i any from libpcap 1.10)
        return dpkt.sll2.SLL2(frame).data
    if linktype in (dpkt.pcap.DLT_NULL, dpkt.pcap.DLT_LOOP):
        return dpkt.loopback.Loopback(frame).data
    if linktype in (12, 14, 101):  # DLT_RAW on Linux/OpenBSD, LINKTYPE_RAW
        return (dpkt.ip6.IP6 if frame[:1] and frame[0] >> 4 == 6 else dpkt.ip.IP)(frame)
    raise ParseError(f"capture has link type {linktype}; linerate reads Ethernet, Linux cooked (v1, v2), "
                     "BSD loopback and raw IP")


def _segments(data: bytes) -> Iterable[tuple[float, str, int, str, int, int, int, int, int]]:
    """(time, src, sport, dst, dport, flags, seq, ack, payload bytes) of each TCP segment."""
    try:
        reader = (dpkt.pcapng.Reader if data[:4] == b"\x0a\x0d\x0d\x0a" else dpkt.pcap.Reader)(io.BytesIO(data))
    except (ValueError, dpkt.dpkt.Error) as exc:
        raise ParseError(f"not a pcap capture: {exc}") from None
    linktype = reader.datalink()
    for ts, frame in reader:
        try:
            ip = _ip_layer(linktype, frame)
        except (dpkt.dpkt.Error, IndexError, ValueError):
            continue
        tcp = getattr(ip, "data", None)
        if not isinstance(tcp, dpkt.tcp.TCP):
            continue
        if isinstance(ip, dpkt.ip.IP):
            payload = ip.len - ip.hl * 4 - tcp.off * 4
            src, dst = ipaddress.IPv4Address(ip.src), ipaddress.IPv4Address(ip.dst)
        elif isinstance(ip, dpkt.ip6.IP6) and ip.nxt == 6:
            payload = ip.plen - tcp.off * 4
            src, dst = ipaddress.IPv6Address(ip.src), ipaddress.IPv6Address(ip.dst)
        else:
            continue
        yield float(ts), str(src), tcp.sport, str(dst), tcp.dport, tcp.flags, tcp.seq, tcp.ack, max(payload, 0)


def parse_capture(data: bytes, server: str, port: int) -> list[Connection]:
    """The connections to server:port seen in a capture, in the order of their first SYN."""
    server = str(ipaddress.ip_address(server))
    open_: dict[tuple[str, int], Connection] = {}
    connections: list[Connection] = []
    for ts, src, sport, dst, dport, flags, seq, ack, payload in _segments(data):
        if dst == server and dport == port:
            client = (src, sport)
            current = open_.get(client)
            if not flags & SYN:
                if payload and current is not None and current.request_at is None:
                    current.request_at = ts
            elif flags & ACK:
                continue
            elif current is not None and current.isn == seq:
                current.syn_retransmits += 1
            else:
                open_[client] = Connection(client, seq, ts)
                connections.append(open_[client])
        elif src == server and sport == port:
            current = open_.get((dst, dport))
            if current is None:
                continue
            if flags & SYN and flags & ACK:
                if current.synack_at is None and ack == (current.isn + 1) % 2**32:
                    current.synack_at = ts
            elif payload and current.first_byte_at is None:
                current.first_byte_at = ts
    return connections


def summarize(connections: Sequence[Connection], log: CaptureLog | None = None, mask: int = 0) -> dict:
    """What a trial stores of its capture: percentiles of connect, first-byte, response and client
    delay times (seconds), the connections they are over, those the capture saw start but not
    finish, SYN retransmissions, and whether the capture was complete."""
    def over(name: str) -> dict[str, float]:
        return percentiles([v for c in connections if (v := getattr(c, name)) is not None], PERCENTILES)

    out = {"connections": len(connections), "connect": over("connect_s"), "ttfb": over("first_byte_s"),
           "response": over("response_s"), "client_delay": over("client_delay_s"),
           "without_synack": sum(1 for c in connections if c.synack_at is None),
           "without_first_byte": sum(1 for c in connections if c.first_byte_at is None),
           "syn_retransmits": sum(c.syn_retransmits for c in connections),
           "connections_with_syn_retransmits": sum(1 for c in connections if c.syn_retransmits)}
    if mask:
        out["sample"] = f"client ports with port & {mask} = 0"
    if log is not None and log.dropped:
        out["dropped_by_kernel"] = log.dropped
    return out
