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
import os
import shlex
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from linerate.errors import ExecError, LinerateError
from linerate.exec.base import Batch, CommandResult, SpawnedProcess

CONNECT_TIMEOUT_S = 10.0


class HostKeyError(LinerateError):
    """A host key that is unknown (without --accept-new-host-keys) or changed."""

    exit_code = 2


class SshError(LinerateError):
    """Cannot reach or log in to a host."""


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


class SshSession:
    """A verified, persistent connection to one host (through an optional jump host)."""

    def __init__(self, target: SshTarget, known_hosts: Path, *, accept_new: bool = False,
                 on_message=lambda text: None, connect_timeout_s: float = CONNECT_TIMEOUT_S):
        self.target = target
        self.known_hosts = known_hosts
        self.accept_new = accept_new
        self.on_message = on_message
        self.connect_timeout_s = connect_timeout_s
        self._conn = None
        self._jump: SshSession | None = None

    # --- connecting -------------------------------------------------------------------------------

    def connect(self) -> "SshSession":
        if self._conn is None:
            try:
                self._conn = _Loop.get().call(self._connect(), self.connect_timeout_s * 3)
            except TimeoutError:
                self.close()
                raise SshError(f"{self.target}: no SSH session within {self.connect_timeout_s * 3:.0f} s") from None
        return self

    async def _connect(self):
        import asyncssh

        tunnel = None
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

    async def _open(self, asyncssh, tunnel):
        await self._verify_host_key(asyncssh, tunnel)
        keys = {"client_keys": [os.path.expanduser(self.target.identity)], "agent_path": None} \
            if self.target.identity else {}
        try:
            return await asyncssh.connect(
                self.target.host, self.target.port, username=self.target.user, known_hosts=str(self.known_hosts),
                tunnel=tunnel, config=None, connect_timeout=self.connect_timeout_s, keepalive_interval=5,
                keepalive_count_max=3, **keys)
        except asyncssh.PermissionDenied:
            raise SshError(f"{self.target}: authentication refused; check the user and the identity file") from None
        except (OSError, asyncssh.Error, asyncio.TimeoutError) as exc:
            raise SshError(f"{self.target}: cannot connect ({exc or type(exc).__name__})") from None

    async def _verify_host_key(self, asyncssh, tunnel) -> None:
        known: list = []
        if self.known_hosts.exists():
            known = list(asyncssh.read_known_hosts(str(self.known_hosts)).match(
                self.target.host, self.target.host, self.target.port)[0])
        algs = sorted({key.algorithm.decode() for key in known}) or ()
        try:
            presented = await asyncio.wait_for(asyncssh.get_server_host_key(
                self.target.host, self.target.port, tunnel=tunnel, server_host_key_algs=algs),
                self.connect_timeout_s)
        except (OSError, asyncssh.Error, asyncio.TimeoutError) as exc:
            raise SshError(f"{self.target}: cannot connect ({exc or type(exc).__name__})") from None
        if presented is None:
            raise SshError(f"{self.target}: the server offered no host key")
        fingerprint = presented.get_fingerprint()
        if known:
            if any(key.public_data == presented.public_data for key in known):
                return
            stored = ", ".join(key.get_fingerprint() for key in known)
            raise HostKeyError(f"host key of {self.target} changed: {self.known_hosts} has {stored}, the host "
                               f"presents {fingerprint}; if the change is expected, remove the old entry with "
                               f"ssh-keygen -R '{_known_host_pattern(self.target)}' -f {self.known_hosts}")
        if not self.accept_new:
            raise HostKeyError(f"host key of {self.target} is not in {self.known_hosts} (it presents {fingerprint}); "
                               "check it, then run again with --accept-new-host-keys to store it")
        line = f"{_known_host_pattern(self.target)} {presented.export_public_key('openssh').decode().strip()}\n"
        self.known_hosts.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        with open(self.known_hosts, "a", encoding="ascii") as handle:
            handle.write(line)
        self.on_message(f"stored host key of {self.target} in {self.known_hosts}: {fingerprint}")

    # --- running ------------------------------------------------------------------------------------

    def run_command(self, command: str, *, stdin: str | None, timeout_s: float | None) -> tuple[int | None, str, str]:
        self.connect()
        try:
            result = _Loop.get().call(self._run(command, stdin, timeout_s), None if timeout_s is None
                                      else timeout_s + 5)
        except Exception:
            self.close()  # a broken or stuck connection is reopened by the next command
            raise
        return result

    async def _run(self, command: str, stdin: str | None, timeout_s: float | None):
        result = await self._conn.run(command, input=stdin, check=False, timeout=timeout_s)
        out = result.stdout if isinstance(result.stdout, str) else (result.stdout or b"").decode(errors="replace")
        err = result.stderr if isinstance(result.stderr, str) else (result.stderr or b"").decode(errors="replace")
        return result.exit_status, out, err

    def close(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            conn.close()
        if self._jump is not None:
            self._jump.close()
            self._jump = None


class SshExecutor:
    """Executor over an SshSession. `become` prefixes every argv (['sudo', '-n'] or ['doas', '-n'])
    for a non-root login; -n makes a missing NOPASSWD rule fail at once instead of hanging."""

    def __init__(self, session: SshSession, become: Sequence[str] = ()):
        self.session = session
        self.become = tuple(become)
        self.host = f"ssh:{session.target}"

    def command(self, argv: Sequence[str]) -> str:
        return shlex.join([*self.become, *[str(a) for a in argv]])

    def _exchange(self, command: str, key: tuple[str, ...], stdin: str | None,
                  timeout_s: float | None) -> tuple[int | None, str, str]:
        """One remote command; a timeout or a lost connection becomes an ExecError naming `key`."""
        import asyncssh

        try:
            return self.session.run_command(command, stdin=stdin, timeout_s=timeout_s)
        except (asyncssh.TimeoutError, TimeoutError):
            raise ExecError(key, self.host, None, f"no answer within {timeout_s:.0f} s") from None
        except (OSError, asyncssh.Error) as exc:
            raise ExecError(key, self.host, None, f"connection lost: {exc or type(exc).__name__}") from None

    def run(self, argv: Sequence[str], *, stdin: str | None = None, timeout_s: float | None = None,
            check: bool = True) -> CommandResult:
        key = tuple(str(a) for a in argv)
        rc, out, err = self._exchange(self.command(argv), key, stdin, timeout_s)
        if rc is None:
            raise ExecError(key, self.host, None, err or "the remote command was killed by a signal")
        if check and rc != 0:
            raise ExecError(key, self.host, rc, err)
        return CommandResult(key, rc, out, err, self.host)

    def run_many(self, argvs: Sequence[Sequence[str]], *, timeout_s: float | None = None) -> list[CommandResult]:
        """Several fixed commands in one round trip (each SSH exec costs a channel and a remote
        shell, ~0.1 s on a small host); see exec.base.Batch."""
        batch = Batch(argvs, self.command)
        rc, out, err = self._exchange(batch.script, batch.keys[0], None, timeout_s)
        return batch.split(self.host, rc, out, err)

    def spawn(self, argv: Sequence[str]) -> SpawnedProcess:
        raise NotImplementedError("remote servers are started as daemons with a pid file (testbed/ssh.py)")
