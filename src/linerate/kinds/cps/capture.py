"""A cps trial's packet capture on the client (traffic/tcp_timings.py): set up around the h2load
command, read back and summarised after it, removed in any case. A client without tcpdump, or
where it may not capture, still runs its trial: the trial says why it has no percentiles."""

from __future__ import annotations

import base64
import binascii
from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit

from linerate.errors import ParseError
from linerate.exec import Executor
from linerate.exec.scratch import make_temp
from linerate.traffic import tcp_timings


@dataclass(frozen=True)
class Capture:
    path: str
    server: str
    port: int
    mask: int

    def argv(self, h2load_argv: Sequence[str], limit_s: float) -> list[str]:
        return tcp_timings.wrap_argv(h2load_argv, self.path, tcp_timings.capture_filter(self.server, self.port,
                                                                                          self.mask), limit_s)


def start(client: Executor, url: str, connections: int) -> Capture:
    """A capture file on the client for a trial of `connections` to the server of `url`."""
    parts = urlsplit(url)
    path = make_temp(client, "capture")  # in the run's scratch directory: swept even after a SIGKILL
    return Capture(path, parts.hostname or "", parts.port or 80, tcp_timings.sample_mask(connections))


def finish(client: Executor, capture: Capture) -> tuple[dict, str | None]:
    """(the capture's summary, a note when there is none or it is incomplete); the files removed."""
    try:
        log_text, data_b64 = (r.stdout for r in client.run_many(
            [["cat", "--", capture.path + ".log"], ["base64", "-w", "0", "--", capture.path]], timeout_s=120))
    finally:
        client.run(["rm", "-f", "--", capture.path, capture.path + ".log"], timeout_s=15, check=False)
    log = tcp_timings.parse_capture_log(log_text)
    if not log.listening:
        hint = " (apt-get install tcpdump)" if "tcpdump" in log.problem and "No such file" in log.problem else ""
        return {}, f"no connect/first-byte percentiles: tcpdump did not capture on {client.host}: {log.problem}{hint}"
    try:
        connections = tcp_timings.parse_capture(base64.b64decode(data_b64), capture.server, capture.port)
    except (ParseError, binascii.Error, ValueError) as exc:
        return {}, f"no connect/first-byte percentiles: the capture could not be read ({exc})"
    summary = tcp_timings.summarize(connections, log, capture.mask)
    if log.dropped:
        return summary, (f"the capture is incomplete: tcpdump reported {log.dropped} packets dropped by the kernel; "
                         "its percentiles are over the connections it saw whole")
    return summary, None
