"""The remote deadline wrapper (exec/ssh.py DEADLINE_SCRIPT) in a PID namespace of its own, so that its
ancestors are exactly what the test makes: under an SSH server that is not named sshd* or dropbear*
(Teleport, Tailscale SSH), a long command runs its time; an orphaned chain (its session gone, what sat
between left under PID 1) or a parent gone is killed within seconds."""

import shutil
import subprocess
import time

import pytest

from linerate.exec.ssh import DEADLINE_SCRIPT


def in_pid_namespace(top: str, tmp_path, command: list[str], *,
                     top_is_pid1: bool = False) -> subprocess.CompletedProcess:
    """`command` under DEADLINE_SCRIPT (10 s), started by a process named `top` (a copy of dash), itself
    started by PID 1 of a new PID namespace (or PID 1 itself)."""
    named = tmp_path / top
    shutil.copy("/bin/dash", named)
    if top_is_pid1:
        return subprocess.run(["unshare", "--pid", "--fork", "--mount-proc", str(named), "-c",
                               'sh -c "$0" d 10 "$@"; exit $?', DEADLINE_SCRIPT, *command],
                              capture_output=True, text=True, timeout=30)
    top_script = 'sh -c "$0" d 10 "$@"; exit $?'  # `; exit`: no shell execs its last command in its own place
    pid1_script = 'top=$1; shift; "$top" -c "$0" "$@"; exit $?'
    argv = ["unshare", "--pid", "--fork", "--mount-proc", "/bin/dash", "-c", pid1_script, top_script, str(named),
            DEADLINE_SCRIPT, *command]
    return subprocess.run(argv, capture_output=True, text=True, timeout=30)


@pytest.mark.parametrize("server, top_is_pid1", [("teleport", False), ("gossh", False), ("teleport", True)])
def test_a_long_command_under_an_ssh_server_of_another_name_runs_its_time(tmp_path, server, top_is_pid1):
    """Also a server whose name ends in "sh", and one that is PID 1 (a container's entrypoint)."""
    started = time.monotonic()
    ran = in_pid_namespace(server, tmp_path, ["sh", "-c", "sleep 2.5; exit 4"], top_is_pid1=top_is_pid1)
    assert ran.returncode == 4 and time.monotonic() - started >= 2.5, ran.stderr  # not killed after a second


def test_a_command_whose_chain_is_orphaned_is_killed_within_seconds(tmp_path):
    """What sat between the session and the command (sudo, a shell, timeout) now under PID 1: the session is gone."""
    for between in ("sudo", "bash", "timeout"):
        started = time.monotonic()
        ran = in_pid_namespace(between, tmp_path, ["sleep", "20"])
        assert ran.returncode == 137 and time.monotonic() - started < 5, (between, ran.returncode, ran.stderr)
