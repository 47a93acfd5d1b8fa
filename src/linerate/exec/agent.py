"""AgentExecutor: run argv inside the built-in guest through its virtio-serial agent (guest/agent.c).

The guest has no network path to the host (its NICs are the DUT's ports), so commands travel on a
virtio-serial port that qemu exposes as a unix socket here. Each request is a shell script made
of shlex-quoted argv (never a string built from user values), framed with its length:

    host -> guest   LRQ <id> <bytes> <timeout_s>\\n<script>
    guest -> host   LRR <id> <status> <stdout bytes> <stderr bytes>\\n<stdout><stderr>

A batch of `cat FILE` commands (the DUT telemetry: /proc/stat, /proc/interrupts ...) goes as one
LRF request instead, whose body is the paths, one a line: the agent reads them itself, with no
fork, and answers "<errno> <length>\\n<bytes>" per path. Under TCG a fork+exec costs ~10 ms of
a vCPU the saturated guest needs for forwarding (the issue-25 measurement: 7 forks a read, 42.9%
user time in a router guest); the LRF read costs none.

One request at a time (a lock); a response whose id is not the one awaited (left by a request
that timed out here) is read and dropped. stdin is passed as a quoted here-document.
"""

from __future__ import annotations

import re
import secrets
import shlex
import socket
import threading
import time
from collections.abc import Sequence
from pathlib import Path

from linerate.errors import ExecError, failure_text
from linerate.exec.base import Batch, CommandResult, SpawnedProcess

GUEST_TIMEOUT_MARGIN_S = 5.0
MAX_ANSWER_BYTES = 6 * 4 * 1024 * 1024  # a stream of an answer: the agent caps each file/stream at 4 MiB (LRF: several)


def request(request_id: int, script: str, timeout_s: float, tag: str = "LRQ") -> bytes:
    body = script.encode()
    return f"{tag} {request_id} {len(body)} {max(1, int(timeout_s + 0.999))}\n".encode() + body


def file_argv(argv: Sequence[str]) -> str | None:
    """The path of a plain `cat PATH` command (one absolute path without a newline), else None."""
    parts = [str(a) for a in argv]
    if len(parts) == 2 and parts[0] == "cat" and parts[1].startswith("/") and "\n" not in parts[1]:
        return parts[1]
    return None


_DIGITS = re.compile(r"[0-9]{1,20}")  # the agent's framing: ASCII digits, bounded

def split_files(paths: Sequence[str], stdout: bytes, host: str) -> list[CommandResult]:
    """An LRF answer -> one CommandResult per path, as `cat PATH` would have given it."""
    import os

    results, rest = [], stdout
    for path in paths:
        head, newline, rest = rest.partition(b"\n")
        fields = head.split()
        if not newline or len(fields) != 2 or not all(re.fullmatch(rb"[0-9]{1,20}", f) for f in fields) or int(fields[1]) > len(rest):
            raise ExecError(["cat", path], host, None, f"guest agent: malformed file record {head[:40]!r}")
        errno, size = int(fields[0]), int(fields[1])
        body, rest = rest[:size].decode(errors="replace"), rest[size:]
        error = "" if errno == 0 else f"cat: {path}: {os.strerror(errno)}\n"
        results.append(CommandResult(("cat", path), 1 if errno else 0, body, error, host))
    return results


def with_stdin(argv: Sequence[str], stdin: str | None) -> str:
    command = shlex.join(str(a) for a in argv)
    if stdin is None:
        return command + "\n"
    marker = f"LINERATE_EOF_{secrets.token_hex(6)}"
    return f"{command} <<'{marker}'\n{stdin}{'' if stdin.endswith(chr(10)) else chr(10)}{marker}\n"


class AgentExecutor:
    def __init__(self, socket_path: Path, host: str = "vm"):
        self.socket_path = socket_path
        self.host = host
        self.scratch_dir: str | None = None  # the guest's /tmp (mktemp): the guest goes with its lab
        self._sock: socket.socket | None = None
        self._buffer = b""
        self._next_id = 1
        self._lock = threading.Lock()

    # --- connection -------------------------------------------------------------------------

    def connect(self, timeout_s: float) -> None:
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                sock.connect(str(self.socket_path))
                self._sock, self._buffer = sock, b""
                return
            except OSError:
                sock.close()
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)

    def close(self) -> None:
        if self._sock is not None:
            self._sock.close()
            self._sock = None

    def _fill(self, deadline: float) -> None:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError("no answer from the guest agent in time")
        self._sock.settimeout(remaining)
        chunk = self._sock.recv(65536)
        if not chunk:
            raise ConnectionError("the guest agent closed the connection")
        self._buffer += chunk

    def _read_exactly(self, size: int, deadline: float) -> bytes:
        while len(self._buffer) < size:
            self._fill(deadline)
        data, self._buffer = self._buffer[:size], self._buffer[size:]
        return data

    def _read_line(self, deadline: float) -> str:
        while b"\n" not in self._buffer:
            self._fill(deadline)
        line, _, self._buffer = self._buffer.partition(b"\n")
        return line.decode(errors="replace")

    # --- Executor ---------------------------------------------------------------------------

    def exchange(self, script: str, timeout_s: float, tag: str = "LRQ") -> tuple[int, bytes, bytes]:
        """Send one request, return (status, stdout, stderr). OSError/TimeoutError on a broken channel."""
        with self._lock:
            if self._sock is None:
                self.connect(timeout_s)
            request_id, self._next_id = self._next_id, self._next_id + 1
            deadline = time.monotonic() + timeout_s + GUEST_TIMEOUT_MARGIN_S
            self._sock.sendall(request(request_id, script, timeout_s, tag))
            while True:
                header = self._read_line(deadline).split()
                if len(header) != 5 or header[0] != "LRR" or not all(_DIGITS.fullmatch(h) for h in header[1:]):
                    raise ConnectionError(f"the guest agent answered {' '.join(header)[:60]!r}")
                got, status, out_size, err_size = (int(h) for h in header[1:])
                if out_size > MAX_ANSWER_BYTES or err_size > MAX_ANSWER_BYTES:
                    raise ConnectionError(f"the guest agent announced {max(out_size, err_size):,} bytes (at most "
                                          f"{MAX_ANSWER_BYTES:,} are read)")
                out = self._read_exactly(out_size, deadline)
                err = self._read_exactly(err_size, deadline)
                if got == request_id:
                    return status, out, err

    def run(self, argv: Sequence[str], *, stdin: str | None = None, timeout_s: float | None = None,
            check: bool = True) -> CommandResult:
        limit = timeout_s or 60.0
        try:
            status, out_bytes, err_bytes = self.exchange(with_stdin(argv, stdin), limit)
            out, err = out_bytes.decode(errors="replace"), err_bytes.decode(errors="replace")
        except (OSError, TimeoutError) as exc:
            self.close()  # the next command reconnects; a late answer is dropped by its id
            raise ExecError(argv, self.host, None, f"guest agent: {failure_text(exc, limit)}") from None
        if status == 124:  # the agent killed the command at its timeout (as timeout(1) reports it)
            err = err or f"timed out after {limit:g} s in the guest"
        elif status == 125:  # the agent cut an output over its 4 MiB cap: none of it is used
            raise ExecError(argv, self.host, status, "printed more than 4 MiB; linerate uses none of it")
        result = CommandResult(tuple(str(a) for a in argv), status, out, err, self.host)
        if check and status != 0:
            raise ExecError(argv, self.host, status, err)
        return result

    def run_many(self, argvs: Sequence[Sequence[str]], *, timeout_s: float | None = None) -> list[CommandResult]:
        """File reads (`cat PATH`) in one LRF request, the other commands in one script."""
        paths = [file_argv(argv) for argv in argvs]
        files = self.read_files([p for p in paths if p is not None], timeout_s=timeout_s)
        others = [argv for argv, path in zip(argvs, paths) if path is None]
        ran: list[CommandResult] = []
        if others:
            batch = Batch(others)
            result = self.run(["sh", "-c", batch.script], timeout_s=timeout_s, check=False)
            ran = batch.split(self.host, result.returncode, result.stdout, result.stderr)
        files_iter, ran_iter = iter(files), iter(ran)
        return [next(files_iter) if path is not None else next(ran_iter) for path in paths]

    def read_files(self, paths: Sequence[str], *, timeout_s: float | None = None) -> list[CommandResult]:
        if not paths:
            return []
        try:
            _, out, _ = self.exchange("".join(f"{p}\n" for p in paths), timeout_s or 60.0, tag="LRF")
        except (OSError, TimeoutError) as exc:
            self.close()
            raise ExecError(["cat", *paths], self.host, None, f"guest agent: {failure_text(exc, timeout_s or 60.0)}") from None
        return split_files(paths, out, self.host)

    def spawn(self, argv: Sequence[str]) -> SpawnedProcess:
        raise ExecError(argv, self.host, None, "the guest agent runs commands to completion; it starts no servers")
