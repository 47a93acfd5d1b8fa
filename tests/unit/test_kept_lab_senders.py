"""What else sends through a kept lab from a generator's namespace (testbed/kept_sweep.py senders), on real `ss`
output (tests/data/lab/ss_sockets_across_a_lab.txt): each process with a socket connected across the lab is named
with its peer, a listening or idle one is not; and an iperf3 client is known by every form of its -c option."""

import subprocess
import time
from pathlib import Path

import pytest

from linerate.testbed.kept_sweep import is_leftover, senders

CAPTURE = (Path(__file__).parent.parent / "data" / "lab" / "ss_sockets_across_a_lab.txt").read_text()
CLIENT, SERVER = CAPTURE.split("== client\n", 1)[1].split("== server\n")


def test_a_sender_is_named_with_its_peer_and_an_idle_server_is_not():
    assert senders(CLIENT) == [(8748, "iperf3", "198.18.0.3:5301")]  # its TCP and its connected UDP socket
    served = senders(SERVER)
    assert {pid for pid, _, _ in served} == {8741}  # the serving one; 8743 only listens
    assert ("8743" not in str(served)) and len(served) == 2


def test_loopback_and_lines_that_are_not_sockets_are_not_senders():
    loop = 'tcp ESTAB 0 0 127.0.0.1:5201 127.0.0.1:40000 users:(("iperf3",pid=9,fd=4))\n'
    loop6 = 'tcp ESTAB 0 0 [::1]:5201 [::1]:40000 users:(("iperf3",pid=10,fd=4))\n'
    assert senders(loop + loop6 + "garbage\n\n") == []


def with_argv(tmp_path: Path, argv: list[str]) -> subprocess.Popen:
    """A process whose command line carries argv after a script's name (the shell reads none of it)."""
    script = tmp_path / "waits.sh"
    script.write_text("#!/bin/sh\nwhile :; do sleep 1; done\n")  # a loop: dash never execs its last command
    script.chmod(0o700)
    proc = subprocess.Popen([str(script), *argv], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 10  # Popen can return while the exec is still under way: cmdline reads empty
    while str(script).encode() not in Path(f"/proc/{proc.pid}/cmdline").read_bytes():
        assert time.monotonic() < deadline, "the stand-in never ran"
        time.sleep(0.01)
    return proc


@pytest.mark.parametrize("argv", [["-c", "198.19.0.2"], ["-c198.19.0.2"], ["--client", "198.19.0.2"],
                                  ["--client=198.19.0.2"], ["-p", "5301", "-c198.19.0.2", "-t", "60"]])
def test_an_iperf3_client_is_known_by_every_form_of_its_option(tmp_path, argv):
    proc = with_argv(tmp_path, argv)
    try:
        assert is_leftover(proc.pid, "iperf3", "")
    finally:
        proc.kill()
        proc.wait()


def test_an_iperf3_server_is_not_a_client(tmp_path):
    proc = with_argv(tmp_path, ["-s", "-p", "5301", "-C", "cubic", "--logfile", "/tmp/x-c"])
    try:
        assert not is_leftover(proc.pid, "iperf3", "")
    finally:
        proc.kill()
        proc.wait()


def test_an_unconnected_udp_or_raw_socket_can_send_and_is_named_but_loopback_and_listeners_are_not():
    """sendto() needs no connection: a blaster's socket stays UNCONN (5,000 datagrams/s of 1400 B sent through a
    kept lab this way were counted as the trial's own)."""
    text = (Path(__file__).parent.parent / "data" / "lab" / "ss_unconnected_senders.txt").read_text()
    assert senders(text) == [(1044, "python3", "any address (an unconnected socket)")]
