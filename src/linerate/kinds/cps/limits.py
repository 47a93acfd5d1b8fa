"""What limits a connection-rate trial other than the DUT — the client's ports, the client's own
pace, the server — found from facts and never blamed on the DUT.

The trap: the side that closes first keeps the
connection in TIME_WAIT for 60 s on Linux (TCP_TIMEWAIT_LEN, include/net/tcp.h), holding its local
port for that (source address, destination address, destination port). In RFC 9411's shape the
client closes first, so one client address talking to one server port has only its ephemeral
range for 60 s: with the default net.ipv4.ip_local_port_range "32768 60999" (Documentation/
networking/ip-sysctl.rst) that is 28,232 ports, about 470 new connections/s sustained, and
connect() fails at once with EADDRNOTAVAIL when they are used up. The fixes are the client's:
net.ipv4.tcp_tw_reuse=1 (reuse a TIME_WAIT port for a new outgoing connection when timestamps make
it safe; per network namespace since Linux 4.11, and since 4.19 the default 2 means loopback only),
a wider port range, or more client source addresses (RFC 9411 gives the client 198.18.0.0/15).

The facts, read on the client before and after every trial in one round trip:

- /proc/net/sockstat, "TCP: inuse N orphan N tw N alloc N mem N": `tw` is the network
  namespace's TIME_WAIT count (net/ipv4/proc.c prints net->ipv4.tcp_death_row.tw_refcount - 1;
  "inuse" and "tw" are per namespace, orphan/alloc/mem are global: canonical/hotsos#446). TCP over
  IPv6 shares that death row, so the count covers both families;
- /proc/sys/net/ipv4/ip_local_port_range and tcp_tw_reuse (both per namespace);
- h2load's own "client could not connect to host" lines (traffic/h2load.py): connect() or
  socket() failing at once, i.e. on the client (no local port, no file descriptor);
- how long h2load took to open its connections against what the pacing asked for (fell_behind);
- nginx's error log, read by the server helper (traffic/nginx_server.py).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass

from linerate.errors import ExecError, ParseError
from linerate.exec import Executor
from linerate.numbers import is_ascii_int
from linerate.traffic.h2load import H2loadResult, Pacing

TIME_WAIT_S = 60  # Linux TCP_TIMEWAIT_LEN
DEFAULT_PORT_RANGE = (32768, 60999)
NEAR = 0.9  # of the local port range in TIME_WAIT: the client is at its limit
BEHIND_RELATIVE = 0.05  # h2load may open its connections 5% late (timer granularity) ...
BEHIND_ABSOLUTE_S = 0.25  # ... plus a quarter of a second, before the client counts as behind

SOCKSTAT = "/proc/net/sockstat"
PORT_RANGE = "/proc/sys/net/ipv4/ip_local_port_range"
TW_REUSE = "/proc/sys/net/ipv4/tcp_tw_reuse"
READ_ARGVS = (("cat", SOCKSTAT), ("cat", PORT_RANGE), ("cat", TW_REUSE))


@dataclass(frozen=True)
class Sockstat:
    sockets_used: int | None
    tcp_inuse: int
    tcp_orphan: int
    tcp_time_wait: int
    tcp_alloc: int
    tcp_mem_pages: int
    tcp6_inuse: int | None = None  # when /proc/net/sockstat6 was read with it


def _pairs(words: list[str], line: str) -> dict[str, int]:
    if len(words) % 2:
        raise ParseError(f"sockstat line {line[:80]!r} is not name/number pairs")
    try:
        return {words[i]: int(words[i + 1]) for i in range(0, len(words), 2)}
    except ValueError:
        raise ParseError(f"sockstat line {line[:80]!r} holds a value that is not a whole number") from None


def parse_sockstat(text: str) -> Sockstat:
    """/proc/net/sockstat (optionally followed by /proc/net/sockstat6). Fields are read as name/value
    pairs, so a kernel that appends one (a proposed "pressure N") still parses."""
    sections: dict[str, dict[str, int]] = {}
    for line in text.splitlines():
        name, sep, rest = line.partition(":")
        if sep and rest.split():
            sections[name.strip()] = _pairs(rest.split(), line)
    tcp = sections.get("TCP")
    if tcp is None or not {"inuse", "orphan", "tw", "alloc", "mem"} <= tcp.keys():
        raise ParseError("no 'TCP: inuse N orphan N tw N alloc N mem N' line: not /proc/net/sockstat")
    return Sockstat(sections.get("sockets", {}).get("used"), tcp["inuse"], tcp["orphan"], tcp["tw"], tcp["alloc"],
                    tcp["mem"], sections.get("TCP6", {}).get("inuse"))


def parse_port_range(text: str) -> tuple[int, int]:
    words = text.split()
    if len(words) != 2 or not all(is_ascii_int(w) for w in words):
        raise ParseError(f"ip_local_port_range {text.strip()[:40]!r} is not two port numbers")
    low, high = int(words[0]), int(words[1])
    if not 1 <= low <= high <= 65535:
        raise ParseError(f"ip_local_port_range {low} {high} is not a port range")
    return low, high


@dataclass(frozen=True)
class ClientState:
    """The client's port facts at one moment; None where a file could not be read (problems says why)."""

    time_wait: int | None
    port_range: tuple[int, int] | None
    tw_reuse: int | None
    problems: tuple[str, ...] = ()

    @property
    def ports(self) -> int | None:
        return None if self.port_range is None else self.port_range[1] - self.port_range[0] + 1

    def to_dict(self) -> dict:
        return {"time_wait": self.time_wait, "port_range": list(self.port_range) if self.port_range else None,
                "tw_reuse": self.tw_reuse, "problems": list(self.problems)}


def client_state_from(outputs: dict[str, str | None]) -> ClientState:
    """The facts from the three files' texts (None: not readable)."""
    problems, time_wait, port_range = [], None, None
    text = outputs.get(SOCKSTAT)
    try:
        time_wait = parse_sockstat(text).tcp_time_wait if text else None
    except ParseError as exc:
        problems.append(str(exc))
    text = outputs.get(PORT_RANGE)
    try:
        port_range = parse_port_range(text) if text else None
    except ParseError as exc:
        problems.append(str(exc))
    text = (outputs.get(TW_REUSE) or "").strip()
    reuse = int(text) if is_ascii_int(text) else None
    for path, value in ((SOCKSTAT, time_wait), (PORT_RANGE, port_range), (TW_REUSE, reuse)):
        if value is None and not outputs.get(path):
            problems.append(f"{path} could not be read on the client")
    return ClientState(time_wait, port_range, reuse, tuple(problems))


def read_client_state(client: Executor) -> ClientState:
    """One round trip; a client without /proc (not Linux) gives a state of unknowns, never an error."""
    try:
        results = client.run_many([list(argv) for argv in READ_ARGVS], timeout_s=15)
    except ExecError as exc:
        return ClientState(None, None, None, (f"the client's port facts could not be read: {exc}",))
    return client_state_from({argv[1]: (r.stdout if r.returncode == 0 else None)
                              for argv, r in zip(READ_ARGVS, results)})


def ports_to_spare(state: ClientState, connections: int) -> bool:
    """Can `connections` more close on the client without TIME_WAIT filling NEAR of its ports?"""
    if state.tw_reuse == 1 or state.ports is None or state.time_wait is None:
        return True
    return state.time_wait + connections <= NEAR * state.ports


def wait_for_ports(read: Callable[[], ClientState], connections: int, *,
                   sleep: Callable[[float], None] = time.sleep, budget_s: float = TIME_WAIT_S + 5,
                   step_s: float = 5.0) -> tuple[ClientState, float]:
    """Before a trial: wait (at most a TIME_WAIT lifetime) for earlier trials' TIME_WAIT sockets to
    expire until this trial's connections fit — not when they could never fit (more connections than
    ports: the trial will show the client's limit at once). (state read last, seconds waited)."""
    state, waited = read(), 0.0
    while (not ports_to_spare(state, connections) and state.time_wait and connections <= (state.ports or 0)
           and waited < budget_s):
        sleep(step_s)
        waited += step_s
        state = read()
    return state, waited


def fell_behind(result: H2loadResult, pace: Pacing, connections: int, timeout_s: float | None) -> float | None:
    """Seconds h2load took beyond the pacing to open its connections, when more than the tolerance
    (None: it kept up). h2load's "finished in" runs from the first connection to the last response,
    so the opening took at least that minus the longest a connection can have lasted (connect or
    first byte, then the request; the inactivity timeout when any request errored)."""
    periods = math.ceil(connections / max(1, pace.per_period))
    span = (periods - 1) * pace.period_ms / 1000
    lifetime = 0.0
    request, connect, ttfb = result.timing("request"), result.timing("connect"), result.timing("ttfb")
    if request or connect or ttfb:
        lifetime = max(connect.max if connect else 0.0, ttfb.max if ttfb else 0.0) + (request.max if request else 0.0)
    if result.errored and timeout_s:
        lifetime = max(lifetime, timeout_s)
    lag = result.duration_s - lifetime - span
    return lag if lag > BEHIND_RELATIVE * span + BEHIND_ABSOLUTE_S else None


@dataclass(frozen=True)
class Limit:
    """Something other than the DUT that bounded a trial. code: client-connect | client-rate |
    client-ports | server; blocking: the trial did not offer its load, whatever its failures."""

    code: str
    evidence: str
    advice: str
    blocking: bool = False

    @property
    def side(self) -> str:
        return "server" if self.code == "server" else "client"

    def to_dict(self) -> dict:
        return {"code": self.code, "evidence": self.evidence, "advice": self.advice, "blocking": self.blocking}


PORT_ADVICE = ("set net.ipv4.tcp_tw_reuse=1 on the client (TIME_WAIT ports are then reused for new outgoing "
               "connections), widen net.ipv4.ip_local_port_range, or spread the connections over more client "
               "source addresses; a client address sustains about (ports / 60 s) connections/s to one server port")


def trial_limits(before: ClientState, after: ClientState, result: H2loadResult, pace: Pacing, connections: int,
                 timeout_s: float | None, server_errors: list[str] = ()) -> list[Limit]:
    """Every non-DUT limit the facts of one trial show (the rule; pure)."""
    limits = []
    ports = after.ports or before.ports
    reuse_off = (after.tw_reuse if after.tw_reuse is not None else before.tw_reuse) != 1
    tw = after.time_wait
    near = reuse_off and ports is not None and tw is not None and tw >= NEAR * ports
    range_text = f"{after.port_range[0]}-{after.port_range[1]}" if after.port_range else "unknown range"
    if result.connect_failures:
        why = (f"no free local port: {tw:,} TIME_WAIT sockets hold {tw / ports:.0%} of {ports:,} ({range_text})"
               if near else "no free local port (EADDRNOTAVAIL) or no file descriptor left")
        limits.append(Limit("client-connect", f"h2load could not start {result.connect_failures:,} of {connections:,} "
                            f"connections: connect() or socket() failed on the client at once ({why})",
                            PORT_ADVICE if near else "check the client's ports (sockstat tw, ip_local_port_range) "
                            "and its open-file limit (ulimit -n)", blocking=True))
    if near:
        limits.append(Limit("client-ports", f"{tw:,} TIME_WAIT sockets on the client after the trial: {tw / ports:.0%} "
                            f"of its {ports:,} local ports ({range_text}), tcp_tw_reuse="
                            f"{after.tw_reuse if after.tw_reuse is not None else 'unknown'}", PORT_ADVICE))
    lag = fell_behind(result, pace, connections, timeout_s)
    if lag is not None:
        limits.append(Limit("client-rate", f"h2load opened its {connections:,} connections {lag:.2f} s later than "
                            f"{pace.rate_per_s:,.0f}/s allows: the client could not offer the rate (its CPU; in the "
                            "namespace lab the CPU it shares with the DUT)", "use more h2load threads (threads = N) "
                            "or a faster client; this rate was not offered, so it says nothing about the DUT",
                            blocking=True))
    if server_errors:
        shown = "; ".join(line.strip()[:160] for line in server_errors[:2])
        limits.append(Limit("server", f"nginx logged {len(server_errors)} error line(s) during the trial: {shown}",
                            "give nginx more workers or connections (server_workers), or the server host more CPU"))
    return limits
