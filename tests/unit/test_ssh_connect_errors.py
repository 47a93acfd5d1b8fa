"""What an SSH connection that never comes up says: the unreachable kind (a booting guest is tried again),
and a reason a user can act on even when the exception carries no text (a timeout's has none)."""

import errno
import socket
import threading

import pytest

from linerate.exec.ssh import SshError, SshSession, SshTarget, SshUnreachable


def _session(port: int, tmp_path) -> SshSession:
    return SshSession(SshTarget("root", "127.0.0.1", port), tmp_path / "known_hosts", accept_new=True,
                      connect_timeout_s=0.5)


def test_a_listener_that_sends_no_banner_is_unreachable_with_the_wait_named(tmp_path):
    with socket.socket() as silent:  # accepts (the kernel's backlog) and never speaks: a guest still booting
        silent.bind(("127.0.0.1", 0))
        silent.listen(4)
        with pytest.raises(SshUnreachable, match=r"cannot connect \(no answer within 0.5 s\)|no SSH session within 1.5 s"):
            _session(silent.getsockname()[1], tmp_path).connect()


def test_a_closed_port_is_unreachable_with_the_systems_reason(tmp_path):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # bound, never listening: the connection is refused
        with pytest.raises(SshUnreachable) as raised:
            _session(port, tmp_path).connect()
    assert isinstance(raised.value, SshError) and "cannot connect ()" not in str(raised.value)
    assert f"[Errno {errno.ECONNREFUSED}]" in str(raised.value), raised.value


def test_a_server_speaking_another_protocol_is_not_unreachable(tmp_path):
    """Trying again cannot help a server that answers with an SSH-1 banner: a plain SshError, said at once."""
    with socket.socket() as old:
        old.bind(("127.0.0.1", 0))
        old.listen(4)

        def answer() -> None:
            conn, _ = old.accept()
            with conn:
                conn.sendall(b"SSH-1.5-OldServer\r\n")
                conn.recv(4096)

        threading.Thread(target=answer, daemon=True).start()
        with pytest.raises(SshError) as raised:
            _session(old.getsockname()[1], tmp_path).connect()
    assert not isinstance(raised.value, SshUnreachable), raised.value
    assert "cannot connect (" in str(raised.value) and "cannot connect ()" not in str(raised.value)
