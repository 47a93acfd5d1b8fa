"""The cps test's HTTP server on the testbed's server host: nginx serving the object files, started
and stopped through that host's Executor only (argv from traffic/nginx.py), so a testbed needs a
thin method around it (see `http_server` below and the kind's docstring):

- start: a new directory of its own (mktemp -d inside the host's scratch directory, exec/scratch.py:
  never a predictable path that a local user could have planted as a link), handed to
  `on_workdir` (a testbed journals it there) before anything is written into it, the object files
  (truncate -s), nginx.conf (written with `tee`, argv only), then `nginx -c FILE -p DIR` — a
  daemon that returns once it listens (traffic/nginx.py says why), and its pid file;
- while trials run: the error log's new lines after each trial (a worker out of connections or
  files is the server's limit, not the DUT's);
- stop: by the pid in its pid file, after checking that pid is an nginx (never by name), QUIT
  (graceful; TERM if it is still there after 5 s), then the directory goes — only ever one under
  /tmp/linerate-.

In the namespace lab the server namespace's processes also go with the lab; on real hosts the
testbed journals the server's directory before start (testbed/ssh.py does the same for iperf3's
pid file), so `linerate testbed restore` can stop a server a killed run left behind: a fresh
NginxServer on that directory, stop().
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from linerate.errors import ExecError, LinerateError
from linerate.exec import Executor
from linerate.exec.scratch import make_temp
from linerate.lab.signals import terminations_deferred
from linerate.numbers import ascii_int
from linerate.traffic import h2load, nginx

TIMEOUT_S = 15
READY_S = 5.0
REMOVABLE = "/tmp/linerate-"  # only a directory under this prefix is ever removed


@dataclass(frozen=True)
class ServerSpec:
    """What the kind asks of the server: the objects, the port, the families to listen on."""

    object_bytes: tuple[int, ...]
    port: int = nginx.DEFAULT_PORT
    families: tuple[int, ...] = (4,)
    worker_processes: int = 1
    server_closes: bool = False  # keepalive_timeout 0: nginx closes first (not RFC 9411's shape)


@dataclass
class NginxServer:
    """nginx on one host, through its executor. addresses: family -> the server's test address
    (what the client connects to). Use as a context manager, or start()/stop()."""

    executor: Executor
    addresses: dict[int, str]
    spec: ServerSpec
    workdir: str | None = None  # None: a new directory (start); given: a server to stop (a restore)
    on_workdir: Callable[[str], None] = lambda path: None  # told the new directory before it is used
    sleep: Callable[[float], None] = time.sleep
    clock: Callable[[], float] = time.monotonic
    pid: int | None = None
    version: str | None = None
    startup_errors: list[str] = field(default_factory=list)
    stopped: bool = False  # stop() ran to its end: nothing of this server is left on the host
    _error_lines: int = field(default=0, repr=False)

    # --- what the kind reads --------------------------------------------------------------------

    def url(self, object_bytes: int, family: int) -> str:
        return h2load.url(self.addresses[family], self.spec.port, nginx.object_name(object_bytes))

    @property
    def config_path(self) -> str:
        return f"{self.workdir}/nginx.conf"

    @property
    def pid_file(self) -> str:
        return f"{self.workdir}/nginx.pid"

    @property
    def error_log(self) -> str:
        return f"{self.workdir}/error.log"

    def new_errors(self) -> list[str]:
        """Error log lines written since the last call (warn and worse: nginx.conf's error_log)."""
        result = self.executor.run(["cat", self.error_log], timeout_s=TIMEOUT_S, check=False)
        lines = [line for line in result.stdout.splitlines() if line.strip()] if result.returncode == 0 else []
        new, self._error_lines = lines[self._error_lines:], len(lines)
        return new

    # --- lifetime -------------------------------------------------------------------------------

    def _run(self, argv: Sequence[str], what: str, stdin: str | None = None) -> str:
        try:
            return self.executor.run(list(argv), stdin=stdin, timeout_s=TIMEOUT_S).stdout
        except ExecError as exc:
            # nginx repeats a failed bind() and ends with "still could not bind()": its first [emerg] says why
            lines = exc.stderr.strip().splitlines() or [str(exc)]
            detail = next((line for line in lines if "[emerg]" in line), lines[-1])[:200]
            raise LinerateError(f"nginx on {self.executor.host}: {what} failed: {detail}") from None

    def start(self) -> "NginxServer":
        if self.workdir is not None:
            raise ValueError("an NginxServer with a workdir is one to stop, not to start")
        try:
            self.workdir = make_temp(self.executor, "nginx", directory=True)
        except ExecError as exc:
            raise LinerateError(f"nginx on {self.executor.host}: making its directory failed: {exc}") from None
        self.on_workdir(self.workdir)
        text = nginx.config_text(self.workdir, self.spec.port, pid_file=self.pid_file, error_log=self.error_log,
                                 worker_processes=self.spec.worker_processes, families=self.spec.families,
                                 server_closes=self.spec.server_closes)
        for argv in nginx.object_argvs(self.workdir, self.spec.object_bytes):
            self._run(argv, f"making {argv[-1]}")
        self._run(["tee", self.config_path], "writing nginx.conf", stdin=text)
        version = self.executor.run(nginx.version_argv(), timeout_s=TIMEOUT_S, check=False)
        if version.returncode == 127:
            raise LinerateError(f"nginx is not installed on {self.executor.host}: apt-get install nginx-light")
        self.version = nginx.parse_version(version.stdout + version.stderr)
        self._run(nginx.server_argv(self.config_path), f"starting (port {self.spec.port})")
        self.pid = self._wait_for_pid()
        # what it logged while starting (a non-root master cannot raise its file limit, say) is no trial's
        self.startup_errors = self.new_errors()
        return self

    def _wait_for_pid(self) -> int:
        """nginx writes its pid file just after it daemonizes, a moment after `nginx` returns."""
        deadline = self.clock() + READY_S
        while True:
            text = self.executor.run(["cat", self.pid_file], timeout_s=TIMEOUT_S, check=False).stdout.strip()
            pid = ascii_int(text)
            if pid is not None and pid > 1:
                return pid
            if self.clock() >= deadline:
                raise LinerateError(f"nginx on {self.executor.host} started but wrote no pid to {self.pid_file} "
                                    f"within {READY_S:.0f} s; see {self.error_log}")
            self.sleep(0.1)

    def stop(self) -> str:
        """Stop the master named by the pid file (an nginx, checked), then remove the directory; a
        signal meanwhile waits until both are done (lab/signals.py). `stopped` says it got that far."""
        with terminations_deferred():
            said = self._stop()
            self.stopped = True
        return said

    def _stop(self) -> str:
        said = "not running"
        if self.workdir is not None:
            text = self.executor.run(["cat", self.pid_file], timeout_s=TIMEOUT_S, check=False).stdout.strip()
            pid = ascii_int(text)
            pid = pid if pid is not None and pid > 1 else None
            comm = self.executor.run(["ps", "-p", str(pid), "-o", "comm="], timeout_s=TIMEOUT_S,
                                     check=False).stdout.strip() if pid else ""
            if pid and comm.rsplit("/", 1)[-1] == "nginx":
                self.executor.run(nginx.stop_argv(pid), timeout_s=TIMEOUT_S, check=False)
                said = f"stopped pid {pid}"
                # a graceful stop took about 1.2 s with nginx 1.22.1 and no connections left; TERM (fast) after 5
                deadline = self.clock() + READY_S
                while self.executor.run(["ps", "-p", str(pid), "-o", "comm="], timeout_s=TIMEOUT_S,
                                        check=False).returncode == 0:
                    if self.clock() >= deadline:
                        self.executor.run(["kill", "-TERM", str(pid)], timeout_s=TIMEOUT_S, check=False)
                        said = f"stopped pid {pid} (TERM after {READY_S:.0f} s of QUIT)"
                        break
                    self.sleep(0.1)
            elif pid:
                said = f"not running (pid {pid} is {comm or 'gone'})"
            # also a directory a killed run left (a testbed's restore stops it with a fresh NginxServer)
            if self.workdir.startswith(REMOVABLE) and ".." not in self.workdir:
                self.executor.run(["rm", "-rf", "--", self.workdir], timeout_s=TIMEOUT_S, check=False)
        self.pid = None
        return said

    def __enter__(self) -> "NginxServer":
        try:
            return self.start()
        except BaseException:
            self.stop()
            raise

    def __exit__(self, *exc_info) -> None:
        self.stop()


def http_server(server: Executor, addresses: dict[int, str], spec: ServerSpec, *,
                on_workdir: Callable[[str], None] = lambda path: None) -> NginxServer:
    """What a testbed's `http_server(spec)` returns (a context manager): see the module docstring."""
    return NginxServer(server, {f: a for f, a in addresses.items() if f in spec.families}, spec,
                       on_workdir=on_workdir)
