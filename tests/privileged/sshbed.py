"""A testbed of real OpenSSH servers: three namespaces act as the client, DUT and server hosts,
each running sshd with its own host key, reachable from the root namespace (the controller) only
over a management veth. Test traffic flows client -> DUT -> server on the benchmarking ranges; a
fourth link client <-> server exists only to build a testbed that bypasses the DUT.

    controller (root ns) --mgmt 198.19.250.0/30,4/30,8/30 (or the next free /28)--> client, dut, server (sshd on each)
    client 198.18.1.10 -- 198.18.1.1 lan0 [dut, forwarding] wan0 198.18.2.1 -- 198.18.2.10 server
    client 198.18.3.10 ------------------------------------------------------ 198.18.3.20 server (bypass)

Everything created is recorded as it is made and removed in reverse order, even on failure:
sshd processes by pid, namespaces by name (their veths go with them).

`pairs=2` makes a generator pool: client2 and server2 hosts joined to the DUT by ports of their own
(lan1 198.18.4.1 -- 198.18.4.10 client2, wan1 198.18.5.1 -- 198.18.5.10 server2), each with sshd.

`overlays` gives a host other binaries than this machine's (a hostile DUT): {role: {real path:
replacement}} is bind-mounted in a private mount namespace of that host's sshd only (the mounts
go away with it; the machine's own /usr/sbin/sysctl is never touched).
"""

from __future__ import annotations

import os
import secrets
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

MGMT_SUBNETS = range(250, 256)  # 198.19.N.0/28: the first N no link of the root namespace holds an address in


ROLES = ("client", "dut", "server")


def management_addresses(third: int, roles: tuple[str, ...] = ROLES) -> dict[str, tuple[str, str]]:
    """Each role's (controller side, host side) management address in 198.19.third.0/24, a /30 each."""
    return {role: (f"198.19.{third}.{4 * i + 1}", f"198.19.{third}.{4 * i + 2}") for i, role in enumerate(roles)}


def free_management_subnet(roles: tuple[str, ...] = ROLES) -> dict[str, tuple[str, str]]:
    """The management addresses of the first subnet nothing on this machine uses: a bed another run left
    behind (its namespaces kept alive by a process) answers on its own addresses, never on ours."""
    held = subprocess.run(["ip", "-4", "-o", "addr", "show"], capture_output=True, text=True, check=True).stdout
    for third in MGMT_SUBNETS:
        if f" 198.19.{third}." not in held:
            return management_addresses(third, roles)
    raise RuntimeError(f"198.19.{MGMT_SUBNETS[0]}-{MGMT_SUBNETS[-1]}.0/28 are all in use: remove the lrt-* leftovers")


def sh(*argv: str, ns: str | None = None) -> str:
    full = (["ip", "netns", "exec", ns] if ns else []) + list(argv)
    return subprocess.run(full, check=True, capture_output=True, text=True, timeout=30).stdout


@dataclass
class SshBed:
    root: Path
    tag: str = field(default_factory=lambda: secrets.token_hex(2))
    namespaces: list[str] = field(default_factory=list)
    sshd: list[subprocess.Popen] = field(default_factory=list)
    user_key: Path | None = None
    known_hosts: Path | None = None
    overlays: dict[str, dict[str, Path]] = field(default_factory=dict)
    mgmt: dict[str, tuple[str, str]] = field(default_factory=dict)
    pairs: int = 1

    @property
    def roles(self) -> tuple[str, ...]:
        return ROLES + tuple(f"{side}{i + 1}" for i in range(1, self.pairs) for side in ("client", "server"))

    def ns(self, role: str) -> str:
        return f"lrt-{self.tag}-{role}"

    def build(self) -> "SshBed":
        os.makedirs("/run/sshd", exist_ok=True)
        self.mgmt = free_management_subnet(self.roles)
        self.user_key = self.root / "id_ed25519"
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(self.user_key)], check=True)
        self.known_hosts = self.root / "known_hosts"
        for role in self.roles:
            ns = self.ns(role)
            self.namespaces.append(ns)
            sh("ip", "netns", "add", ns)
            sh("ip", "link", "set", "lo", "up", ns=ns)
            outer, inner = self.mgmt[role]
            root_if = f"lrt{self.tag}{role[0]}{role[-1] if role[-1].isdigit() else ''}"  # lrtTAGc, lrtTAGc2
            sh("ip", "link", "add", root_if, "type", "veth", "peer", "name", "mgmt0", "netns", ns)
            sh("ip", "addr", "add", f"{outer}/30", "dev", root_if)
            sh("ip", "link", "set", root_if, "up")
            sh("ip", "addr", "add", f"{inner}/30", "dev", "mgmt0", ns=ns)
            sh("ip", "link", "set", "mgmt0", "up", ns=ns)
        c, d, s = self.ns("client"), self.ns("dut"), self.ns("server")
        sh("ip", "link", "add", "eth0", "netns", c, "type", "veth", "peer", "name", "lan0", "netns", d)
        sh("ip", "link", "add", "eth0", "netns", s, "type", "veth", "peer", "name", "wan0", "netns", d)
        sh("ip", "link", "add", "byp0", "netns", c, "type", "veth", "peer", "name", "byp0", "netns", s)
        for ns, ifname, address in ((c, "eth0", "198.18.1.10/24"), (d, "lan0", "198.18.1.1/24"),
                                    (d, "wan0", "198.18.2.1/24"), (s, "eth0", "198.18.2.10/24"),
                                    (c, "byp0", "198.18.3.10/24"), (s, "byp0", "198.18.3.20/24")):
            sh("ip", "addr", "add", address, "dev", ifname, ns=ns)
            sh("ip", "link", "set", ifname, "up", ns=ns)
        sh("ip", "route", "add", "198.18.2.0/24", "via", "198.18.1.1", ns=c)
        sh("ip", "route", "add", "198.18.1.0/24", "via", "198.18.2.1", ns=s)
        for i in range(1, self.pairs):  # pair i+1: its own DUT ports and subnets
            c, s, lan, wan = self.ns(f"client{i + 1}"), self.ns(f"server{i + 1}"), f"lan{i}", f"wan{i}"
            near, far = 1 + 3 * i, 2 + 3 * i  # 198.18.4.0/24 and 198.18.5.0/24 for pair 2 (3: the bypass)
            sh("ip", "link", "add", "eth0", "netns", c, "type", "veth", "peer", "name", lan, "netns", d)
            sh("ip", "link", "add", "eth0", "netns", s, "type", "veth", "peer", "name", wan, "netns", d)
            for ns, ifname, address in ((c, "eth0", f"198.18.{near}.10/24"), (d, lan, f"198.18.{near}.1/24"),
                                        (d, wan, f"198.18.{far}.1/24"), (s, "eth0", f"198.18.{far}.10/24")):
                sh("ip", "addr", "add", address, "dev", ifname, ns=ns)
                sh("ip", "link", "set", ifname, "up", ns=ns)
            sh("ip", "route", "add", f"198.18.{far}.0/24", "via", f"198.18.{near}.1", ns=c)
            sh("ip", "route", "add", f"198.18.{near}.0/24", "via", f"198.18.{far}.1", ns=s)
        sh("sysctl", "-qw", "net.ipv4.ip_forward=1", ns=d)
        for role in self.roles:
            self._start_sshd(role)
        return self

    def _start_sshd(self, role: str) -> None:
        host_key = self.root / f"host_{role}"
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(host_key)], check=True)
        ecdsa_key = self.root / f"host_{role}_ecdsa"  # a second host key, as real servers have several
        subprocess.run(["ssh-keygen", "-q", "-t", "ecdsa", "-N", "", "-f", str(ecdsa_key)], check=True)
        authorized = self.root / "authorized_keys"
        authorized.write_text(Path(str(self.user_key) + ".pub").read_text())
        config = self.root / f"sshd_{role}.conf"
        config.write_text(f"ListenAddress {self.mgmt[role][1]}\nHostKey {host_key}\nHostKey {ecdsa_key}\nPidFile {self.root}/sshd_{role}.pid\n"
                          f"AuthorizedKeysFile {authorized}\nPermitRootLogin prohibit-password\nStrictModes no\n"
                          "UsePAM no\nPasswordAuthentication no\nKbdInteractiveAuthentication no\n"
                          "MaxSessions 50\nMaxStartups 50\n")
        command = ["/usr/sbin/sshd", "-D", "-e", "-f", str(config)]
        if self.overlays.get(role):
            binds = [str(p) for real, fake in self.overlays[role].items() for p in (fake, real)]
            script = ('conf=$1; shift; while [ $# -gt 1 ]; do mount --bind "$1" "$2" || exit 1; shift 2; done; '
                      'exec /usr/sbin/sshd -D -e -f "$conf"')
            command = ["unshare", "-m", "--propagation", "private", "sh", "-c", script, "sh", str(config), *binds]
        proc = subprocess.Popen(["ip", "netns", "exec", self.ns(role), *command],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        self.sshd.append(proc)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            probe = subprocess.run(["ip", "netns", "exec", self.ns(role), "ss", "-ltn", "sport = :22"],
                                   capture_output=True, text=True)
            if self.mgmt[role][1] in probe.stdout:
                return
            time.sleep(0.05)
        raise RuntimeError(f"sshd in {self.ns(role)} did not listen")

    def host_key_line(self, role: str, kind: str = "", host: str = "") -> str:
        """A known_hosts line for role's sshd: its ed25519 key, or with kind="_ecdsa" its ecdsa one."""
        public = (self.root / f"host_{role}{kind}.pub").read_text().split()
        return f"{host or self.mgmt[role][1]} {public[0]} {public[1]}\n"

    def inventory(self, *, bypass: bool = False, known_hosts: Path | None = None, extra_dut: str = "") -> Path:
        server_address = "198.18.3.20" if bypass else "198.18.2.10"
        path = self.root / ("inventory_bypass.toml" if bypass else "inventory.toml")
        path.write_text(
            f'name = "sshbed"\nknown_hosts = "{known_hosts or self.known_hosts}"\n'
            f'[client]\nssh = "root@{self.mgmt["client"][1]}"\nidentity = "{self.user_key}"\ntest_address = "198.18.1.10"\n'
            f'[server]\nssh = "root@{self.mgmt["server"][1]}"\nidentity = "{self.user_key}"\n'
            f'test_address = "{server_address}"\n'
            f'[dut]\nssh = "root@{self.mgmt["dut"][1]}"\nidentity = "{self.user_key}"\nos = "linux"\n'
            f'interfaces = ["lan0", "wan0"]\n{extra_dut}')
        return path

    def pool_inventory(self) -> Path:
        """The pool's inventory: [[client]] and [[server]] tables paired in order, the DUT's every port."""
        def host(role: str, address: str = "") -> str:
            return (f'ssh = "root@{self.mgmt[role][1]}"\nidentity = "{self.user_key}"\n'
                    + (f'test_address = "{address}"\n' if address else ""))
        names = [("client", "server")] + [(f"client{i + 1}", f"server{i + 1}") for i in range(1, self.pairs)]
        clients = [(c, f"198.18.{1 + 3 * i}.10") for i, (c, _) in enumerate(names)]
        servers = [(s, f"198.18.{2 + 3 * i}.10") for i, (_, s) in enumerate(names)]
        ports = ", ".join(f'"{side}{i}"' for i in range(self.pairs) for side in ("lan", "wan"))
        path = self.root / "inventory_pool.toml"
        path.write_text(f'name = "sshpool"\nknown_hosts = "{self.known_hosts}"\n'
                        + "".join(f"[[client]]\n{host(r, a)}" for r, a in clients)
                        + "".join(f"[[server]]\n{host(r, a)}" for r, a in servers)
                        + f'[dut]\n{host("dut")}os = "linux"\ninterfaces = [{ports}]\n')
        return path

    def trust_all(self) -> None:
        self.known_hosts.write_text("".join(self.host_key_line(r) for r in self.roles))

    def pids_in(self, role: str) -> list[int]:
        return self.pids_in_ns(self.ns(role))

    def comm(self, pid: int) -> str:
        try:
            return Path(f"/proc/{pid}/comm").read_text().strip()
        except OSError:
            return ""

    def daemons(self, role: str, comm: str) -> list[int]:
        """The processes named comm in role's namespace that have become daemons (session leaders:
        daemon(3) and nginx's ngx_daemon() call setsid() in the child they fork). Before that, the
        launching process is still in the SSH session, and a run killed then takes it along."""
        found = []
        for pid in self.pids_in(role):
            try:
                stat = Path(f"/proc/{pid}/stat").read_text()
            except OSError:
                continue
            if self.comm(pid) == comm and int(stat.rpartition(")")[2].split()[3]) == pid:
                found.append(pid)
        return found

    def teardown(self) -> None:
        for proc in self.sshd:
            try:
                os.killpg(proc.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=5)
        for ns in reversed(self.namespaces):
            for pid in self.pids_in_ns(ns):  # sessions and servers the tests started there
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            subprocess.run(["ip", "netns", "delete", ns], check=False)

    @staticmethod
    def pids_in_ns(ns: str) -> list[int]:
        out = subprocess.run(["ip", "netns", "pids", ns], capture_output=True, text=True).stdout
        return [int(p) for p in out.split()]
