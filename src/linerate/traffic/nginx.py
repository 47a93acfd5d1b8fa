"""nginx (Debian/Ubuntu `nginx-light`): the server side of the `cps` test — fixed objects of the
RFC 9411 section 7.2 sizes (1, 16, 64 KB by default) served from files, one request per connection.

Pure builders only: the configuration text, the argv that starts, checks and stops nginx, and the
argv that makes the object files. Running them is the caller's (traffic/nginx_server.py, through an
Executor); nothing here touches a host.

Why a daemon with a pid file, not `-g 'daemon off;'` under a spawned process: nginx parses its
configuration and binds its listening sockets (ngx_init_cycle) *before* it daemonizes, so the
exit status of `nginx -c FILE` says whether the server is up and listening, with nginx's own
`[emerg]` line on stderr when it is not (a port in use, a bad path). A spawned foreground nginx
would fail silently. The pid file names the master so it is stopped by pid, never by name, and
the same two commands work in a namespace lab and on a real host over SSH (as iperf3 --daemon
--pidfile does there, testbed/ssh.py). Sources: nginx.org "Command-line parameters" (-c, -p, -t,
-q, -g) and "Controlling nginx" (QUIT = graceful shutdown), https://nginx.org/en/docs/switches.html
and https://nginx.org/en/docs/control.html; directives from the ngx_core_module, ngx_http_core_module
and ngx_http_log_module pages (daemon, pid, error_log, worker_processes, worker_connections,
worker_rlimit_nofile, listen ... backlog=, keepalive_timeout, keepalive_requests, access_log off,
open_file_cache, *_temp_path).

Who closes the connection: RFC 9411 section 7.2 has the client close with FIN right after its
one transaction, so nginx keeps the connection open (keepalive_timeout > 0) and h2load, done with
its one request, closes first: TIME_WAIT lands on the client, whose ephemeral ports then bound the
rate (kinds/cps/limits.py). `server_closes=True` sets keepalive_timeout 0 (nginx answers with
"Connection: close" and closes first) — not RFC 9411's shape, but TIME_WAIT then stays on the
server, which has no ephemeral ports to run out of.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from linerate.errors import ConfigError

NGINX = "nginx"
DEFAULT_OBJECT_BYTES = (1024, 16 * 1024, 64 * 1024)  # RFC 9411 section 7.2 (7.4 uses the same three)
MAX_OBJECT_BYTES = 64 * 1024 * 1024
DEFAULT_PORT = 8080
LISTEN_BACKLOG = 4096  # h2load -r opens each period's connections at once: a burst of SYNs per tick
# the temporary directories of the standard http modules, kept inside the server's own directory so
# that nginx writes nothing outside it (the Debian build's defaults are /var/lib/nginx/*)
TEMP_PATHS = ("client_body_temp_path", "proxy_temp_path", "fastcgi_temp_path", "uwsgi_temp_path", "scgi_temp_path")
_SAFE_PATH = re.compile(r"^/[A-Za-z0-9._/-]+$")


def object_name(size_bytes: int) -> str:
    """obj1k.bin, obj16k.bin, obj64k.bin for whole KiB; obj1500b.bin otherwise."""
    check_object_bytes(size_bytes)
    return f"obj{size_bytes // 1024}k.bin" if size_bytes % 1024 == 0 else f"obj{size_bytes}b.bin"


def check_object_bytes(size_bytes: int, field: str = "object_sizes") -> int:
    if isinstance(size_bytes, bool) or not isinstance(size_bytes, int) or not 1 <= size_bytes <= MAX_OBJECT_BYTES:
        raise ConfigError(field, f"{size_bytes!r} is not an object size; use 1 to {MAX_OBJECT_BYTES} bytes "
                          "(RFC 9411 section 7.2 uses 1, 16 and 64 KB)")
    return size_bytes


def _path(path: str, what: str) -> str:
    """A path nginx and the shell-free argv can both take as it is: absolute, no spaces, no quotes,
    no ';' or braces that would end a directive, no '..'."""
    if not _SAFE_PATH.fullmatch(path) or ".." in path.split("/"):
        raise ConfigError(what, f"{path[:80]!r} is not a path linerate writes into an nginx configuration "
                          "(absolute, letters, digits, '.', '_', '-', '/')")
    return path


def config_text(root_dir: str, port: int = DEFAULT_PORT, *, pid_file: str | None = None,
                error_log: str | None = None, worker_processes: int = 1, worker_connections: int = 16384,
                families: Iterable[int] = (4,), server_closes: bool = False,
                backlog: int = LISTEN_BACKLOG) -> str:
    """The whole nginx.conf: files of root_dir served at /NAME, no access log (a log line per
    connection would cost the server more than the request), errors (warn and worse) to a file
    read after every trial, the object files' descriptors cached (open_file_cache) so a request
    costs no open(). families: which of IPv4 and IPv6 to listen on ([::] listens IPv6-only, nginx's
    default, so both can share the port)."""
    root = _path(root_dir.rstrip("/") or "/", "root_dir")
    pid_file = _path(pid_file or f"{root}/nginx.pid", "pid_file")
    error_log = _path(error_log or f"{root}/error.log", "error_log")
    if isinstance(port, bool) or not isinstance(port, int) or not 1 <= port <= 65535:
        raise ConfigError("http_port", f"{port!r} is not a TCP port; use 1 to 65535")
    if not isinstance(worker_processes, int) or not 1 <= worker_processes <= 256:
        raise ConfigError("worker_processes", f"{worker_processes!r}: use 1 to 256")
    if not isinstance(worker_connections, int) or not 64 <= worker_connections <= 1_000_000:
        raise ConfigError("worker_connections", f"{worker_connections!r}: use 64 to 1000000")
    families = tuple(dict.fromkeys(families))
    if not families or set(families) - {4, 6}:
        raise ConfigError("family", f"{families!r}: listen on IP family 4 and/or 6")
    listens = [f"        listen {port} backlog={backlog};" if family == 4 else
               f"        listen [::]:{port} backlog={backlog};" for family in families]
    temp = [f"    {directive} {root}/{directive.removesuffix('_temp_path')};" for directive in TEMP_PATHS]
    keepalive = "0" if server_closes else "65s"
    return "\n".join([
        "# linerate cps: fixed objects, one request per connection (RFC 9411 section 7.2)",
        "daemon on;",
        "master_process on;",
        f"worker_processes {worker_processes};",
        f"worker_rlimit_nofile {2 * worker_connections};",
        f"pid {pid_file};",
        f"error_log {error_log} warn;",
        "",
        "events {",
        f"    worker_connections {worker_connections};",
        "}",
        "",
        "http {",
        "    access_log off;",
        "    server_tokens off;",
        "    sendfile on;",
        "    tcp_nopush on;",
        "    tcp_nodelay on;",
        f"    keepalive_timeout {keepalive};",
        "    keepalive_requests 1000;",
        "    open_file_cache max=64 inactive=600s;",
        "    open_file_cache_valid 600s;",
        "    types {}",
        "    default_type application/octet-stream;",
        *temp,
        "",
        "    server {",
        *listens,
        f"        root {root};",
        "        location / {",
        "        }",
        "    }",
        "}",
        "",
    ])


def prefix_of(config_path: str) -> str:
    """The directory of the configuration file, as nginx's -p prefix (with its trailing '/')."""
    _path(config_path, "config_path")
    return config_path.rsplit("/", 1)[0] + "/"


def server_argv(config_path: str) -> list[str]:
    """Start nginx with this configuration (daemon on, pid file in it); returns once it listens."""
    return [NGINX, "-c", _path(config_path, "config_path"), "-p", prefix_of(config_path)]


def stop_argv(pid: int) -> list[str]:
    """Graceful shutdown of the master named by its pid file (nginx: QUIT)."""
    if isinstance(pid, bool) or not isinstance(pid, int) or pid <= 1:
        raise ValueError(f"{pid!r} is not the pid of an nginx master")
    return ["kill", "-QUIT", str(pid)]


def version_argv() -> list[str]:
    return [NGINX, "-v"]  # prints "nginx version: nginx/1.22.1" on stderr


def object_argvs(root_dir: str, sizes: Sequence[int]) -> list[list[str]]:
    """The object files, zero-filled to their exact size (truncate -s: a sparse file, no shell
    redirection), then readable by nginx's workers (they run as an unprivileged user)."""
    root = _path(root_dir.rstrip("/"), "root_dir")
    paths = [f"{root}/{object_name(size)}" for size in sizes]
    return ([["truncate", "-s", str(size), path] for size, path in zip(sizes, paths)]
            + [["chmod", "0644", *paths], ["chmod", "0755", root]])


def parse_version(text: str) -> str | None:
    match = re.search(r"nginx/(\d+(?:\.\d+)+)", text)
    return match.group(1) if match else None
