"""SshExecutor: run argv on a remote host over one persistent asyncssh connection.

A remote shell takes a string, so every argv element is quoted (shlex.join) — user values are
never formatted into a command. One connection per host is kept open for the whole run (each
command is a channel on it, ~ms instead of a new handshake), driven by an asyncio loop on a
background thread so that callers stay synchronous. A command that outlives its timeout, or a
dropped connection, raises ExecError (the trial fails, is stored and retried); the next command
reconnects.

Host keys are verified against known_hosts, strictly: an unknown host is refused unless
accept_new is set (then its key is stored and its fingerprint printed); a changed key is always
refused, naming both fingerprints (HostKeyError, exit 2).
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import os
import secrets
import shlex
import stat
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from linerate.errors import ConfigError, ExecBroken, ExecError, LinerateError, failure_text
from linerate.exec.base import Batch, CommandResult, SpawnedProcess
from linerate.inputs import read_text
from linerate.safepath import untrusted_component

CONNECT_TIMEOUT_S = 10.0
# A command with a timeout runs under this fixed script on the host ($1 = seconds, then the argv):
# dropping an SSH channel does not end what runs in it (a hung `sysctl` or `cat` of a stuck device
# would stay, with its shell, after every trial), so the host kills it at the deadline itself.
# The command runs in a process group of its own (setsid(1): util-linux, busybox), so the kill takes
# its children too. A command that ended is left alone with whatever it started: a daemon linerate
# starts (iperf3 -D, nginx) forks and only then leaves the group by its own setsid(), and a kill at
# its parent's exit could catch it in between. Where the host has no setsid(1) (FreeBSD, OpenBSD)
# only the command itself is killed. Portable sh (dash, FreeBSD and OpenBSD sh, busybox ash): no timeout(1), no job control.
# The command keeps linerate's stdin (an asynchronous list would get /dev/null); the watchdog polls
# once a second, so it ends within a second of the command and holds no output.
# The command runs in its own process group, killed at its deadline — or within a second once the SSH
# session that started it is gone: a controller stopped by a signal closes its connections, and sshd does not
# signal a session without a terminal, so a sender such as trafgen would outlive the run that started it. The
# session is the nearest ancestor named sshd* (OpenSSH's "sshd: user@notty", or sshd-session since 9.8),
# found past whatever sits between (sudo or doas waiting, a login shell that forks for -c), and watched with
# kill -0 (dropbear's too: OpenWrt). The watchdog looks for it once the command has run a second, so the many
# short commands (a batch of telemetry reads: ten ps forks each made an own image's reads take 1.9 s under
# TCG) cost nothing. With no sshd* or dropbear* in the chain, its top (the ancestor below PID 1) tells why:
# nothing, or what sits between (a shell, sudo, doas, su, timeout) orphaned to PID 1, means the session is gone
# already; anything else is an SSH server of another name (Teleport, Tailscale SSH), and the command's parent
# is watched instead, so such a host's long commands run their time (a parent that was PID 1 from the start
# is such a server: a container's entrypoint; only the deadline applies then). Without `ps -o comm=,ppid= -p`
# (busybox) only the deadline applies.
DEADLINE_SCRIPT = ('t=$1; shift; exec 3<&0; '
                   'if command -v setsid >/dev/null 2>&1; then setsid "$@" <&3 3<&- & c=$!; g=-$c; '
                   'else "$@" <&3 3<&- & c=$!; g=$c; fi; exec 3<&-; '
                   '( i=0; s=; while [ "$i" -lt "$t" ]; do sleep 1; kill -0 "$c" 2>/dev/null || exit 0; '
                   'if [ "$i" -eq 0 ] && [ -n "$(ps -o comm= -p $$ 2>/dev/null)" ]; then '
                   'a=$PPID; n=0; p=-; '
                   'while [ -n "$a" ] && [ "$a" -gt 1 ] 2>/dev/null && [ "$n" -lt 8 ]; do '
                   'm=$(ps -o comm= -p "$a" 2>/dev/null); case "$m" in sshd*|dropbear*) s=$a; break;; esac; p=$m; '
                   'a=$(ps -o ppid= -p "$a" 2>/dev/null | tr -d " "); n=$((n+1)); done; '
                   'if [ -z "$s" ]; then '
                   'case "$p" in ""|sudo|doas|su|timeout|sh|bash|dash|ash|ksh|mksh|zsh|fish|csh|tcsh|busybox) break;; esac; '
                   's=$PPID; fi; fi; '
                   'if [ -n "$s" ]; then kill -0 "$s" 2>/dev/null || break; fi; i=$((i+1)); '
                   'done; kill -s KILL -- "$g" 2>/dev/null || kill -s KILL "$c" ) </dev/null >/dev/null 2>&1 & '
                   'wait "$c"')
MAX_OUTPUT_BYTES = 4 * 1024 * 1024  # per stream of one command: the largest telemetry read is ~100 KB


class OutputTooLarge(Exception):
    """A remote command printed more than MAX_OUTPUT_BYTES on one stream (the read stopped there)."""


class OutputLimitError(ExecBroken):
    """The ExecError of a command whose output passed MAX_OUTPUT_BYTES: the host answered (unlike a
    timeout or a lost connection), with more than any command linerate runs prints."""


HOST_KEYS_WAIT_S = 3  # for OpenSSH's list of its host keys after login (it comes within ~50 ms here)
# one probe per kind of host key a server may hold (an RSA key answers any of its three signature names)
HOST_KEY_TYPES = (("ssh-ed25519",), ("ecdsa-sha2-nistp256",), ("ecdsa-sha2-nistp384",), ("ecdsa-sha2-nistp521",),
                  ("rsa-sha2-512", "rsa-sha2-256", "ssh-rsa"), ("ssh-dss",), ("ssh-ed448",))


def _key_type(algorithm: str | None) -> tuple[str, ...] | None:
    """The HOST_KEY_TYPES entry a key or signature algorithm belongs to (None: none of them)."""
    return next((group for group in HOST_KEY_TYPES if algorithm in group), None)


class HostKeyError(LinerateError):
    """A host key that is unknown (without --accept-new-host-keys) or changed."""

    exit_code = 2


class SshError(LinerateError):
    """Cannot reach or log in to a host."""


class SshUnreachable(SshError):
    """No SSH session came up: the connection was refused or reset, or no answer came in time (a host
    still booting may answer later; a refused login or a wrong host key is another error)."""


def _cannot_connect(target, exc: BaseException, seconds: float) -> SshError:
    """Refused, reset, lost or silent: a host still booting may answer later (SshUnreachable); any other
    failure of the handshake (no common key type or algorithm, a protocol error) will not."""
    import asyncssh

    kind = SshUnreachable if isinstance(exc, (OSError, TimeoutError, asyncssh.ConnectionLost)) else SshError
    return kind(f"{target}: cannot connect ({failure_text(exc, seconds)})")


@dataclass(frozen=True)
class SshTarget:
    user: str
    host: str
    port: int = 22
    identity: str | None = None
    jump: "SshTarget | None" = None

    def __str__(self) -> str:
        return f"{self.user}@{self.host}" + (f":{self.port}" if self.port != 22 else "")


class _Loop:
    """One event loop thread for all SSH sessions of this process."""

    _instance: "_Loop | None" = None
    _lock = threading.Lock()

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="linerate-ssh", daemon=True)
        self.thread.start()

    @classmethod
    def get(cls) -> "_Loop":
        with cls._lock:
            if cls._instance is None:
                cls._instance = _Loop()
            return cls._instance

    def call(self, coro, timeout_s: float | None):
        future = asyncio.run_coroutine_threadsafe(coro, self.loop)
        try:
            return future.result(timeout_s)
        except TimeoutError:
            future.cancel()
            raise


def _known_host_pattern(target: SshTarget) -> str:
    return target.host if target.port == 22 else f"[{target.host}]:{target.port}"


MAX_KEY_FILE_BYTES = 1_000_000


def _read_private(path: Path, field: str, what: str) -> str | None:
    """A file of ours to parse (known_hosts, an identity): regular, bounded, UTF-8; None when it
    does not exist. Errors never quote its content (it may be /etc/shadow)."""
    if str(path) in ("", ".") or path.is_dir():
        raise ConfigError(field, f"{str(path)[:200]!r} is a directory, not a {what}; give a file path")
    if not os.path.lexists(path):
        return None
    try:
        return read_text(path, MAX_KEY_FILE_BYTES, what)
    except ConfigError as exc:
        raise ConfigError(field, f"{str(path)[:200]}: {exc.problem}") from None


def load_known_hosts(path: Path):
    """The parsed known_hosts file (an empty one when it does not exist yet); ConfigError, naming
    only the file, when it is not a known_hosts file."""
    import asyncssh

    text = _read_private(path, "known_hosts", "known_hosts file")
    try:
        return asyncssh.import_known_hosts(text or "")
    except (ValueError, asyncssh.Error, UnicodeError):  # its message would quote the offending line
        raise ConfigError("known_hosts", f"{str(path)[:200]} is not a known_hosts file (a line does not parse); "
                          "give the file ssh keeps host keys in, e.g. ~/.ssh/known_hosts") from None


def load_identity(identity: str):
    """The private key in the inventory's `identity` file; ConfigError (never quoting the file)
    when it is not an unencrypted private key asyncssh can use."""
    import asyncssh

    path = Path(os.path.expanduser(identity))
    text = _read_private(path, "identity", "private key file")
    if text is None:
        raise ConfigError("identity", f"{identity[:200]} does not exist; give the private key file")
    try:
        return asyncssh.import_private_key(text)
    except (ValueError, asyncssh.Error, UnicodeError, IndexError, TypeError):
        raise ConfigError("identity", f"{identity[:200]} is not a private key linerate can use (an unencrypted "
                          "OpenSSH or PEM private key, such as ~/.ssh/id_ed25519)") from None


def append_known_host(path: Path, line: str) -> None:
    """Add a host key line to known_hosts, as the user linerate runs as (often root), never through a
    link or into a place another user controls (no folder or link on the way another user could have
    steered: safepath.py): the file's folder must be this user's and writable by
    no one else (made now, 0700, when missing — only that last folder), the file a regular file of this
    user's (made 0600), opened without following a link. HostKeyError, nothing written, otherwise."""
    folder = path.parent
    steered = untrusted_component(str(folder))
    if steered is not None:
        raise HostKeyError(f"known_hosts: {steered}; keep known_hosts in a folder of yours, such as ~/.ssh")
    if not os.path.lexists(folder):
        try:
            folder.mkdir(mode=0o700)
        except OSError as exc:
            raise HostKeyError(f"known_hosts: cannot make {folder} ({exc.strerror}); create it, or name a "
                               "known_hosts file in a folder of yours") from None
    info = os.lstat(folder)
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.geteuid() or info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        raise HostKeyError(f"known_hosts: {folder} is a link, another user's, or writable by others (a link planted "
                           "there would be followed); keep known_hosts in a folder of yours, such as ~/.ssh")
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK,
                     0o600)
    except OSError as exc:
        raise HostKeyError(f"known_hosts: {path} cannot be written ({exc.strerror}; a link is never followed)") from None
    with os.fdopen(fd, "a", encoding="ascii") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode) or info.st_uid != os.geteuid():
            raise HostKeyError(f"known_hosts: {path} is not a regular file of this user's; nothing was written")
        handle.write(line)


class SshSession:
    """A verified, persistent connection to one host (through an optional jump host)."""

    def __init__(self, target: SshTarget, known_hosts: Path, *, accept_new: bool = False,
                 on_message=lambda text: None, connect_timeout_s: float = CONNECT_TIMEOUT_S, via=None):
        self.target = target
        self.via = via  # an asyncssh tunnel object (exec/netns_tunnel.py) instead of a direct TCP connection
        self.known_hosts = known_hosts
        self.accept_new = accept_new
        self.on_message = on_message
        self.connect_timeout_s = connect_timeout_s
        self._conn = None
        self._shell = None  # a persistent remote `sh` for batched telemetry reads (run_in_shell)
        self._connect_lock = threading.Lock()
        self._shell_lock: asyncio.Lock | None = None
        self._jump: SshSession | None = None
        self.host_key_fingerprint: str | None = None  # of the key verified at connect
        self._machine: tuple[str, ...] | None = None  # machine_fingerprints(), once asked
        self._host_keys: set[str] | None = None  # every host key the server listed after login (hostkeys-00)
        self._host_keys_listed: asyncio.Event | None = None
        self._verified_algorithm: str | None = None  # the key type of host_key_fingerprint

    # --- connecting -------------------------------------------------------------------------------

    def connect(self) -> "SshSession":
        with self._connect_lock:  # the generator's thread and the window reads' threads may race here
            if self._conn is None:
                try:
                    self._conn = _Loop.get().call(self._connect(), self.connect_timeout_s * 3)
                except TimeoutError:
                    self.close()
                    raise SshUnreachable(f"{self.target}: no SSH session within {self.connect_timeout_s * 3:g} s") from None
        return self

    async def _connect(self):
        import asyncssh

        tunnel = self.via
        if self.target.jump is not None:
            self._jump = SshSession(self.target.jump, self.known_hosts, accept_new=self.accept_new,
                                    on_message=self.on_message, connect_timeout_s=self.connect_timeout_s)
            tunnel = await self._jump._connect_conn()
        return await self._open(asyncssh, tunnel)

    async def _connect_conn(self):
        import asyncssh

        if self._conn is None:
            self._conn = await self._open(asyncssh, None)
        return self._conn

    def _known_keys(self) -> list:
        return list(load_known_hosts(self.known_hosts).match(self.target.host, self.target.host, self.target.port)[0])

    async def _open(self, asyncssh, tunnel):
        """One key exchange when the host's key is known: asyncssh checks it against known_hosts before it
        authenticates (offering only the known keys' types). At first contact the key is fetched and checked
        (or stored, with accept_new) first, and a key that differs from the stored one is fetched again to name
        it: both cost an exchange more (a warm TCG guest here: 0.62-0.94 s a connect with one, 1.06-1.22 s with two)."""
        known = self._known_keys()
        if not known:
            await self._verify_host_key(asyncssh, tunnel)
        keys = {"client_keys": [load_identity(self.target.identity)], "agent_path": None} \
            if self.target.identity else {}
        try:
            self._host_keys_listed = asyncio.Event()
            conn = await asyncssh.connect(
                self.target.host, self.target.port, username=self.target.user, known_hosts=str(self.known_hosts),
                tunnel=tunnel, config=None, connect_timeout=self.connect_timeout_s, keepalive_interval=5,
                keepalive_count_max=3, server_host_keys_handler=self._on_host_keys, **keys)
        except asyncssh.HostKeyNotVerifiable:
            await self._verify_host_key(asyncssh, tunnel)  # raises HostKeyError naming the key it presents now
            raise HostKeyError(f"host key of {self.target} is not the one {self.known_hosts} has") from None
        except asyncssh.PermissionDenied:
            raise SshError(f"{self.target}: authentication refused; check the user and the identity file") from None
        except (OSError, asyncssh.Error, asyncio.TimeoutError) as exc:
            raise _cannot_connect(self.target, exc, self.connect_timeout_s) from None
        if known:
            presented = conn.get_server_host_key()
            self.host_key_fingerprint = presented.get_fingerprint()
            self._verified_algorithm = presented.algorithm.decode()
        return conn

    async def _verify_host_key(self, asyncssh, tunnel) -> None:
        known = self._known_keys()
        algs = sorted({key.algorithm.decode() for key in known}) or ()
        try:
            presented = await asyncio.wait_for(asyncssh.get_server_host_key(
                self.target.host, self.target.port, tunnel=tunnel, server_host_key_algs=algs),
                self.connect_timeout_s)
        except (OSError, asyncssh.Error, asyncio.TimeoutError) as exc:
            raise _cannot_connect(self.target, exc, self.connect_timeout_s) from None
        if presented is None:
            raise SshError(f"{self.target}: the server offered no host key")
        fingerprint = presented.get_fingerprint()
        self._verified_algorithm = presented.algorithm.decode()
        if known:
            if any(key.public_data == presented.public_data for key in known):
                self.host_key_fingerprint = fingerprint
                return
            stored = ", ".join(key.get_fingerprint() for key in known)
            raise HostKeyError(f"host key of {self.target} changed: {self.known_hosts} has {stored}, the host "
                               f"presents {fingerprint}; if the change is expected, remove the old entry with "
                               f"ssh-keygen -R '{_known_host_pattern(self.target)}' -f {self.known_hosts}")
        if not self.accept_new:
            raise HostKeyError(f"host key of {self.target} is not in {self.known_hosts} (it presents {fingerprint}); "
                               "check it, then run again with --accept-new-host-keys to store it")
        line = f"{_known_host_pattern(self.target)} {presented.export_public_key('openssh').decode().strip()}\n"
        append_known_host(self.known_hosts, line)
        self.host_key_fingerprint = fingerprint
        self.on_message(f"stored host key of {self.target} in {self.known_hosts}: {fingerprint}")

    def _on_host_keys(self, added, removed, retained, revoked) -> None:
        """OpenSSH lists every host key it holds right after login (hostkeys-00@openssh.com); asyncssh
        has the new ones proven by the server's signature before it calls this. A key this inventory's
        known_hosts marks @revoked is still one of the machine's: it names the machine like the rest."""
        self._host_keys = {key.get_fingerprint() for key in (*added, *retained, *revoked)}  # every key listed
        if self._host_keys_listed is not None:
            self._host_keys_listed.set()

    def machine_fingerprints(self) -> tuple[str, ...]:
        """What names this machine for locks, whichever of its host keys an inventory's known_hosts
        holds: the fingerprints of *every* host key the server has, smallest first — the list OpenSSH
        sends after login, or (a server that sends none, such as dropbear) one key exchange per key type.
        A lock is taken on each, so two inventories share one as soon as their sets share a key.
        Never a partial set: a probe that cannot connect (a firewall limiting new SSH connections)
        stops the run with SshError rather than naming the machine by fewer keys, which another
        inventory holding another key would not share."""
        self.connect()
        if self._machine is None:
            try:
                keys = _Loop.get().call(self._all_host_keys(), HOST_KEYS_WAIT_S + self.connect_timeout_s *
                                        (len(HOST_KEY_TYPES) + 1))
            except TimeoutError:
                raise SshError(f"{self.target}: its host keys could not be read in time (one key exchange per key "
                               "type); linerate names a machine by all of them: let this controller open several "
                               "SSH connections in a row") from None
            self._machine = tuple(sorted(keys | {self.host_key_fingerprint} - {None}))
        return self._machine

    async def _all_host_keys(self) -> set[str]:
        import asyncssh

        if self._host_keys is None and self._host_keys_listed is not None:
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._host_keys_listed.wait(), HOST_KEYS_WAIT_S)
        if self._host_keys is not None:
            return set(self._host_keys)
        tunnel = self._jump._conn if self._jump is not None else self.via
        # Each key exchange offers the key types not seen yet and, last, one the server is known to have (the
        # verified key's): the server answers with the first it holds, so every exchange succeeds, and one that
        # answers with the known type says there are no more. Any failure is then a real one.
        known = _key_type(self._verified_algorithm)
        remaining = [group for group in HOST_KEY_TYPES if group != known]
        found = set()
        while remaining:
            offered = [alg for group in remaining for alg in group] + list(known or ())
            try:
                key = await asyncio.wait_for(asyncssh.get_server_host_key(
                    self.target.host, self.target.port, tunnel=tunnel, server_host_key_algs=offered),
                    self.connect_timeout_s)
            except (OSError, asyncssh.Error, asyncio.TimeoutError) as exc:
                raise SshError(f"{self.target}: could not read all its host keys ({failure_text(exc, self.connect_timeout_s)}); "
                               "linerate names a machine by all its host keys (so that two inventories reaching it "
                               "by different keys share one lock): let this controller open several SSH "
                               "connections in a row") from None
            group = _key_type(key.algorithm.decode()) if key is not None else None
            if group is None or group not in remaining:
                break  # the known type again: the server holds no other
            found.add(key.get_fingerprint())
            remaining.remove(group)
            known = known or group
        return found

    # --- running ------------------------------------------------------------------------------------

    def run_command(self, command: str, *, stdin: str | None, timeout_s: float | None) -> tuple[int | None, str, str]:
        self.connect()
        try:
            result = _Loop.get().call(self._run(command, stdin, timeout_s), None if timeout_s is None
                                      else timeout_s + 5)
        except Exception as exc:
            # a broken connection is reopened by the next command; a command that printed too much or took
            # too long closed only its own channel: other threads' commands on this connection go on
            if not isinstance(exc, (OutputTooLarge, TimeoutError)):
                self.close()
            raise
        return result

    async def _run(self, command: str, stdin: str | None, timeout_s: float | None):
        """Run one command, reading at most MAX_OUTPUT_BYTES of each stream: what a host prints is
        bounded before it is kept, parsed or stored (OutputTooLarge past it)."""
        process = await self._conn.create_process(command, encoding=None)
        try:
            if stdin is not None:
                process.stdin.write(stdin.encode())
            process.stdin.write_eof()
            out, err = await asyncio.wait_for(asyncio.gather(_drain(process.stdout), _drain(process.stderr)),
                                              timeout_s)
            await asyncio.wait_for(process.wait_closed(), 5 if timeout_s is None else timeout_s)
        except BaseException:
            process.close()
            raise
        return process.exit_status, out.decode(errors="replace"), err.decode(errors="replace")

    def run_in_shell(self, script: str, *, timeout_s: float | None) -> bytes:
        """Run `script` in this session's persistent remote shell (started on first use) and return
        its stdout up to the sentinel the script ends with. One round trip, no new channel or remote
        shell start (~0.1 s an exec on a small host, serialized by sshd here). The shell is dropped
        on any failure; the next call starts a new one."""
        self.connect()
        try:
            return _Loop.get().call(self._shell_exchange(script, timeout_s), None if timeout_s is None
                                    else timeout_s + 5)
        except Exception as exc:
            self._drop_shell()
            if not isinstance(exc, (OutputTooLarge, TimeoutError)):
                self.close()  # the connection itself failed: the next command opens a new one
            raise

    async def _shell_exchange(self, script: str, timeout_s: float | None) -> bytes:
        if self._shell_lock is None:
            self._shell_lock = asyncio.Lock()  # one exchange at a time: two would interleave on the shell
        async with self._shell_lock:
            if self._shell is None:
                self._shell = await self._conn.create_process("exec sh", encoding=None)
            sentinel = f"@@linerate-end-{secrets.token_hex(8)}@@"
            self._shell.stdin.write(f"{script}\nprintf '\\n{sentinel}\\n'\n".encode())
            return await asyncio.wait_for(_read_until(self._shell.stdout, f"\n{sentinel}\n".encode()), timeout_s)

    def _drop_shell(self) -> None:
        shell, self._shell = self._shell, None
        if shell is not None:
            shell.close()

    def close(self) -> None:
        self._drop_shell()
        conn, self._conn = self._conn, None
        if conn is not None:
            conn.close()
        if self._jump is not None:
            self._jump.close()
            self._jump = None


async def _read_until(stream, sentinel: bytes) -> bytes:
    """stdout of a persistent shell up to (without) the sentinel line, at most MAX_OUTPUT_BYTES."""
    data = bytearray()
    while True:
        chunk = await stream.read(65536)
        if not chunk:
            raise OSError("the remote shell ended")
        start = max(0, len(data) - len(sentinel))  # only the new bytes can complete the sentinel
        data += chunk
        end = data.find(sentinel, start)
        if end >= 0:
            return bytes(data[:end])
        if len(data) > MAX_OUTPUT_BYTES + len(sentinel):
            raise OutputTooLarge()


async def _drain(stream) -> bytes:
    chunks, size = [], 0
    while True:
        chunk = await stream.read(65536)
        if not chunk:
            return b"".join(chunks)
        size += len(chunk)
        if size > MAX_OUTPUT_BYTES:
            raise OutputTooLarge()
        chunks.append(chunk)


class SshExecutor:
    """Executor over an SshSession. `become` prefixes every argv (['sudo', '-n'] or ['doas', '-n'])
    for a non-root login; -n makes a missing NOPASSWD rule fail at once instead of hanging."""

    def __init__(self, session: SshSession, become: Sequence[str] = ()):
        self.session = session
        self.become = tuple(become)
        self.host = f"ssh:{session.target}"
        self.scratch_dir: str | None = None  # made and journaled by the testbed (exec/scratch.py)

    def command(self, argv: Sequence[str], timeout_s: float | None = None) -> str:
        """The remote command line: every element quoted; with a timeout, run under DEADLINE_SCRIPT
        so that the host kills it when linerate has stopped waiting."""
        words = [str(a) for a in argv]
        if timeout_s is not None:  # the host's kill comes as linerate stops waiting
            limit = max(1, math.ceil(timeout_s))
            words = ["sh", "-c", DEADLINE_SCRIPT, "linerate-deadline", str(limit), *words]
        return shlex.join([*self.become, *words])

    def _exchange(self, command: str, key: tuple[str, ...], stdin: str | None,
                  timeout_s: float | None) -> tuple[int | None, str, str]:
        """One remote command; a timeout or a lost connection becomes an ExecError naming `key`."""
        import asyncssh

        try:
            return self.session.run_command(command, stdin=stdin, timeout_s=timeout_s)
        except (asyncssh.TimeoutError, TimeoutError):
            raise ExecError(key, self.host, None, f"no answer within {timeout_s:.0f} s") from None
        except OutputTooLarge:
            raise OutputLimitError(key, self.host, None, f"printed more than {MAX_OUTPUT_BYTES:,} bytes; linerate "
                                   "stops reading there and uses none of it") from None
        except (OSError, asyncssh.Error) as exc:
            raise ExecError(key, self.host, None, f"connection lost: {failure_text(exc, timeout_s or 0)}") from None

    def run(self, argv: Sequence[str], *, stdin: str | None = None, timeout_s: float | None = None,
            check: bool = True) -> CommandResult:
        key = tuple(str(a) for a in argv)
        rc, out, err = self._exchange(self.command(argv, timeout_s), key, stdin, timeout_s)
        if rc is None:
            raise ExecError(key, self.host, None, err or "the remote command was killed by a signal")
        if check and rc != 0:
            raise ExecError(key, self.host, rc, err)
        return CommandResult(key, rc, out, err, self.host)

    def run_many(self, argvs: Sequence[Sequence[str]], *, timeout_s: float | None = None) -> list[CommandResult]:
        """Several fixed commands (telemetry reads) in one round trip through the session's persistent
        shell: an SSH exec costs a channel and a remote shell start (~0.1 s on a small host, and
        sshd ran them one at a time here), too much for a read inside a 1 s trial's window. Each
        command's stdin is /dev/null (it must not eat the shell's input); stderr is not kept: a
        failed command is told by its status. See exec.base.Batch."""
        import asyncssh

        # each command gets half the batch's time: one that hangs is killed on the host and fails alone
        each_s = None if timeout_s is None else max(1.0, timeout_s / 2)
        batch = Batch(argvs, lambda argv: f"{self.command(argv, each_s)} </dev/null 2>/dev/null")
        key = (f"{len(argvs)} batched commands ({' '.join(batch.keys[0][:3])} ...)",) if len(argvs) > 1 \
            else batch.keys[0]
        try:
            out = self.session.run_in_shell(batch.script, timeout_s=timeout_s)
        except (asyncssh.TimeoutError, TimeoutError):
            raise ExecError(key, self.host, None, f"no answer within {timeout_s:.0f} s") from None
        except OutputTooLarge:
            raise OutputLimitError(key, self.host, None, f"printed more than {MAX_OUTPUT_BYTES:,} bytes; "
                                   "linerate stops reading there and uses none of it") from None
        except (OSError, asyncssh.Error) as exc:
            raise ExecBroken(key, self.host, None, f"connection lost: {failure_text(exc, timeout_s or 0)}") from None
        results = batch.split(self.host, 0, out.decode(errors="replace"), "")
        return [r if r.returncode == 0 else CommandResult(r.argv, r.returncode, r.stdout, "(stderr not kept in a "
                                                          "batched read)", r.host) for r in results]

    def spawn(self, argv: Sequence[str]) -> SpawnedProcess:
        raise NotImplementedError("remote servers are started as daemons with a pid file (testbed/ssh.py)")
