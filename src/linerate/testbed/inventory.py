"""Inventory files (TOML): the hosts of a real testbed, validated like experiment files — one
ConfigError naming the file, the key and what is allowed; nothing is contacted before it passes.

    [client]
    ssh = "root@192.0.2.5"            # management address; traffic goes to test_address
    identity = "~/.ssh/id_ed25519"
    test_address = "198.18.1.10"
    [server]
    ssh = "bench@192.0.2.6"
    become = "sudo"                   # or "doas"; for a login that is not root
    test_address = "198.18.2.10"
    test_address6 = "2001:2:0:2::10"
    [dut]                             # optional: without it, measure only
    ssh = "admin@192.0.2.1"
    os = "opnsense"
    interfaces = ["igb0", "igb1"]     # the DUT ports whose offload flags the experiment may set

A generator pool (docs/generator-pools.md): `[[client]]` and `[[server]]` arrays of the same tables,
paired in order (client 1 with server 1 ...) or by `pairs = [[1, 2], [2, 1]]` (1-based: client,
server). Their roles are client, client2 ... and server, server2 ..., as in a pooled namespace lab.
A single `[client]` table is a pool of one.

Every value that reaches a remote command is checked against a strict pattern here (user names,
host names, interface names), and every argv element is quoted again by the SshExecutor.
"""

from __future__ import annotations

import hashlib
import ipaddress
import re
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictInt, ValidationError, field_validator, model_validator

from linerate.calc.linerate import parse_rate
from linerate.errors import ConfigError
from linerate.exec.ssh import SshTarget
from linerate.inputs import parse_toml, read_text
from linerate.model import MAX_BITRATE_BPS, MAX_PAIRS, MIN_BITRATE_BPS, pair_roles
from linerate.numbers import is_ascii_int
from linerate.testbed.knobs import IFNAME_RE

MAX_FILE_BYTES = 100_000
USER_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]{0,31}$")
HOST_RE = re.compile(r"^(?=.{1,253}$)[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$")
# an all-numeric last label is never a DNS name (RFC 3696 section 2): 198.19.250.06, 3323197958, 0xc613fa06
NUMERIC_HOST_RE = re.compile(r"^(?:[0-9A-Za-z]+\.)*(?:[0-9]+|0[xX][0-9A-Fa-f]+)$")
HOST_CHARS_RE = re.compile(r"[A-Za-z0-9.:%_-]{1,253}")
OS_NAMES = ("linux", "openwrt", "freebsd", "pfsense", "opnsense", "openbsd")


def parse_ssh(text: str, port: int = 22) -> tuple[str, str, int]:
    """'user@host', 'user@host:port', 'user@[v6addr]:port' -> (user, host, port)."""
    user, at, rest = text.partition("@")
    if not at or not USER_RE.fullmatch(user):
        raise ValueError(f"{text[:60]!r} is not user@host (user: letters, digits, _ . -)")
    host = rest
    if rest.startswith("["):
        host, _, after = rest[1:].partition("]")
        if after:
            if not after.startswith(":") or not is_ascii_int(after[1:]):
                raise ValueError(f"{text[:60]!r}: expected [address]:port")
            port = int(after[1:])
    elif rest.count(":") == 1:
        host, _, port_text = rest.partition(":")
        if not is_ascii_int(port_text):
            raise ValueError(f"{text[:60]!r}: the port after ':' is not a number")
        port = int(port_text)
    if not HOST_CHARS_RE.fullmatch(host):  # ipaddress takes "fe80::1%eth0\n" (a scope id may hold anything)
        raise ValueError(f"{host[:60]!r} is not a host name or IP address")
    try:
        ipaddress.ip_address(host)
    except ValueError:
        if not HOST_RE.fullmatch(host):
            raise ValueError(f"{host[:60]!r} is not a host name or IP address") from None
        if NUMERIC_HOST_RE.fullmatch(host):  # inet_aton reads it as an address; ipaddress and asyncssh do not
            raise ValueError(f"{host[:60]!r} is an IPv4 address in a form other than four decimal numbers "
                             "(a leading zero, fewer parts, hex); write it as a.b.c.d") from None
    if not 1 <= port <= 65535:
        raise ValueError(f"port {port} is out of range (1-65535)")
    return user, host, port


def _test_address(value: str | None, version: int) -> str | None:
    if value is None:
        return None
    try:
        address = ipaddress.ip_address(value)
    except ValueError:
        raise ValueError(f"{str(value)[:60]!r} is not an IPv{version} address") from None
    if address.version != version:
        raise ValueError(f"{value} is not an IPv{version} address")
    if address.is_multicast or address.is_unspecified or address.is_loopback or str(address).endswith(".255"):
        raise ValueError(f"{value} is not a unicast host address; traffic goes only to declared test hosts")
    return str(address)


class HostEntry(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    ssh: str
    port: int = Field(22, ge=1, le=65535, strict=True)
    identity: str | None = None
    jump: str | None = None
    become: Literal["none", "sudo", "doas"] = "none"
    test_address: str | None = None
    test_address6: str | None = None
    os: Literal[OS_NAMES] | None = None  # type: ignore[valid-type]
    interfaces: list[str] = Field(default_factory=list, max_length=16)

    @field_validator("ssh", "jump")
    @classmethod
    def _ssh(cls, value: str | None) -> str | None:
        if value is not None:
            parse_ssh(value)
        return value

    @field_validator("identity")
    @classmethod
    def _identity(cls, value: str | None) -> str | None:
        if value is None:
            return None
        if "\x00" in value or not value.strip() or value != value.strip():
            raise ValueError("is not a file path")
        if not Path(value).expanduser().is_file():
            raise ValueError(f"{value[:80]!r} does not exist or is not a file")
        return value

    @field_validator("test_address")
    @classmethod
    def _v4(cls, value: str | None) -> str | None:
        return _test_address(value, 4)

    @field_validator("test_address6")
    @classmethod
    def _v6(cls, value: str | None) -> str | None:
        return _test_address(value, 6)

    @field_validator("interfaces")
    @classmethod
    def _interfaces(cls, value: list[str]) -> list[str]:
        for name in value:
            if not IFNAME_RE.fullmatch(name):
                raise ValueError(f"{name[:30]!r} is not an interface name (letters, digits, _ . -; up to 15)")
        return value

    def target(self) -> SshTarget:
        user, host, port = parse_ssh(self.ssh, self.port)
        jump = None
        if self.jump:
            juser, jhost, jport = parse_ssh(self.jump)
            jump = SshTarget(juser, jhost, jport, self.identity)
        return SshTarget(user, host, port, self.identity, jump)

    def become_argv(self) -> list[str]:
        return [] if self.become == "none" else [self.become, "-n"]


class Inventory(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field("testbed", pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
    known_hosts: str = "~/.ssh/known_hosts"
    client: list[HostEntry]  # a [client] table, or a pool's [[client]] tables
    server: list[HostEntry]
    dut: HostEntry | None = None
    pairs: list[tuple[StrictInt, StrictInt]] | None = Field(None, min_length=1, max_length=MAX_PAIRS)  # 1-based (client, server)
    link: str | None = None  # the path's line rate ("1g"); else the DUT NICs' negotiated speed

    @field_validator("link")
    @classmethod
    def _link(cls, value: str | None) -> str | None:
        if value is not None:
            bps = parse_rate(value)  # ValueError names what is allowed
            if not MIN_BITRATE_BPS <= bps <= MAX_BITRATE_BPS:
                raise ValueError(f"{value[:20]!r} is out of range for a link (1k to 400g, e.g. 1g or 10g)")
        return value

    @field_validator("known_hosts")
    @classmethod
    def _known_hosts(cls, value: str) -> str:
        if not value.strip() or "\x00" in value or value != value.strip():
            raise ValueError(f"{value[:60]!r} is not a file path; give the known_hosts file, e.g. ~/.ssh/known_hosts")
        return value

    @field_validator("client", "server", mode="before")
    @classmethod
    def _pool(cls, value: Any) -> Any:
        if isinstance(value, dict):
            return [value]  # one table: a pool of one
        if not isinstance(value, list):
            raise ValueError("is not a table: write [client] / [server] (or [[client]] tables for a generator pool)")
        if not 1 <= len(value) <= MAX_PAIRS:
            raise ValueError(f"a pool holds 1 to {MAX_PAIRS} hosts ([[client]] / [[server]] tables), not {len(value)}")
        return value

    @model_validator(mode="after")
    def _addresses(self) -> "Inventory":
        for role, entry in self.generator_hosts().items():
            if entry.os is not None or entry.interfaces:
                raise ValueError(f"{role}: os and interfaces are DUT keys; put them under [dut]")
        for role, entry in self.servers().items():
            if entry.test_address is None and entry.test_address6 is None:
                raise ValueError(f"{role} needs test_address and/or test_address6: the address traffic is sent to")
        clients, servers = list(self.clients()), list(self.servers())
        if self.pairs is None and len(clients) != len(servers):
            raise ValueError(f"{len(clients)} client(s) and {len(servers)} server(s): pair them with pairs = [[1, 1], ...] "
                             "(client, server; 1-based) or list as many of each")
        for client, server in self.pairs or ():
            if not 1 <= client <= len(clients) or not 1 <= server <= len(servers):
                raise ValueError(f"pairs: [{client}, {server}] names a host the inventory does not have "
                                 f"({len(clients)} clients, {len(servers)} servers; 1-based)")
        paired = self.pair_roles()
        for role in (*clients, *servers):
            if not any(role in pair for pair in paired):
                raise ValueError(f"{role} is in no pair (pairs); remove it or pair it")
        used = [server for _, server in paired]
        if len(set(used)) != len(used):
            twice = next(server for server in used if used.count(server) > 1)
            raise ValueError(f"pairs: {twice} is in two pairs; a server's iperf3 takes one client at a time")
        keys = self.host_keys()
        machines = [keys[role][0] for role in servers]
        if len(set(machines)) != len(machines):
            raise ValueError("two servers are one host (the same ssh host, port and jump host): their iperf3 servers would "
                             "share one port; list each server host once")
        return self

    def clients(self) -> dict[str, HostEntry]:
        """role -> host of every client: client, client2 ... (a pool's; one [client] is a pool of one)."""
        return _roles(self.client, 0)

    def servers(self) -> dict[str, HostEntry]:
        return _roles(self.server, 1)

    def generator_hosts(self) -> dict[str, HostEntry]:
        return {**self.clients(), **self.servers()}

    @property
    def pooled(self) -> bool:
        return len(self.pair_roles()) > 1

    def pair_roles(self) -> list[tuple[str, str]]:
        """(client role, server role) of every pair, in order."""
        clients, servers = list(self.clients()), list(self.servers())
        if self.pairs is None:
            return list(zip(clients, servers))
        return [(clients[c - 1], servers[s - 1]) for c, s in self.pairs]  # in range: _addresses checked it first

    def hosts(self) -> dict[str, HostEntry]:
        dut = {"dut": self.dut} if self.dut is not None else {}
        return {**self.clients(), **dut, **self.servers()}

    def address(self, family: int, server: str = "server") -> str | None:
        """The test address of a server (the first one's by default) for this family."""
        entry = self.servers()[server]
        return entry.test_address if family == 4 else entry.test_address6

    def known_hosts_path(self) -> Path:
        return Path(self.known_hosts).expanduser()

    def host_keys(self) -> dict[str, tuple[str, str]]:
        """role -> (key, name) of the machine it names: its host and port, and the jump host it is
        reached through, but not the login (two inventories that reach one DUT as different users
        still share it). Keys the machine's lock and its journal entries (store/journal.py), so runs of
        two inventories naming one DUT never change it at once. Two names for one address (an alias,
        a DNS name) are not recognised as one machine."""
        keys = {}
        for role, entry in self.hosts().items():
            _, host, port = parse_ssh(entry.ssh, entry.port)
            host = _canonical_host(host)
            via = ""
            if entry.jump is not None:
                _, jump_host, jump_port = parse_ssh(entry.jump)
                via = f"{_canonical_host(jump_host)}:{jump_port}>"
            text = f"{via}{host}:{port}"
            keys[role] = (hashlib.sha256(text.encode()).hexdigest()[:16], text)
        return keys

    def identity_key(self) -> str:
        """Stable id of this testbed (its hosts), keying the knob journal in the store."""
        text = "|".join(f"{role}={entry.ssh}:{entry.port}" for role, entry in self.hosts().items())
        return hashlib.sha256(text.encode()).hexdigest()[:16]


def _roles(entries: list[HostEntry], side: int) -> dict[str, HostEntry]:
    return {pair_roles(index)[side]: entry for index, entry in enumerate(entries)}


def _canonical_host(host: str) -> str:
    """One spelling per address (2001:2::1 and 2001:0002:0:0::1 are one host), names in lower case."""
    try:
        return str(ipaddress.ip_address(host))
    except ValueError:
        return host.lower()


def _describe(exc: ValidationError) -> str:
    problems = []
    for error in exc.errors():
        parts = list(error["loc"])
        if len(parts) > 1 and parts[0] in ("client", "server") and isinstance(parts[1], int):
            parts[:2] = [pair_roles(parts[1])[0 if parts[0] == "client" else 1]]  # [[client]] 2 is client2
        loc = ".".join(str(part) for part in parts) or "(file)"
        if error["type"] == "extra_forbidden":
            problems.append(f"unknown key '{loc}'; allowed: {', '.join(HostEntry.model_fields)} in [client], "
                            f"[server], [dut], and {', '.join(('name', 'known_hosts', 'link', 'pairs'))} at the top")
        elif error["type"] == "missing":
            problems.append(f"{loc} is missing")
        else:
            problems.append(f"{loc}: {error['msg'].removeprefix('Value error, ')}")
    return "; ".join(problems)


def parse_inventory(text: str, source: str = "<inventory>") -> Inventory:
    doc = parse_toml(text, source, "an inventory file")
    try:
        return Inventory.model_validate(doc)
    except ValidationError as exc:
        raise ConfigError(source, "invalid inventory: " + _describe(exc)) from None


def load_inventory(path: str | Path) -> Inventory:
    return parse_inventory(read_text(path, MAX_FILE_BYTES, "inventory file (TOML)"), str(path))
