"""Files linerate makes on a host live in the run's own fresh directory (exec/scratch.py), and whole
numbers from outside are ASCII digits (numbers.py)."""

import os
import subprocess

import pytest

from linerate.exec import FakeExecutor, LocalExecutor
from linerate.exec.scratch import REMOVE_SCRIPT, is_scratch_path, make_argv, make_temp, new_scratch_path, remove_argv
from linerate.exec.ssh import DEADLINE_SCRIPT, SshExecutor
from linerate.lab.registry import LabRecord, RecordError
from linerate.numbers import ascii_int, is_ascii_int
from linerate.traffic.nginx_server import NginxServer, ServerSpec


def test_scratch_paths_are_unpredictable_and_checked():
    a, b = new_scratch_path("ab12cd"), new_scratch_path("ab12cd")
    assert a != b and is_scratch_path(a) and a.startswith("/tmp/linerate-ab12cd-")
    for bad in ("/tmp/linerate-ab12cd-nginx", "/tmp/x", "/tmp/linerate-ab12cd-" + "0" * 16 + "/..", "/etc"):
        assert not is_scratch_path(bad)
        with pytest.raises(ValueError):
            remove_argv(bad)
    assert make_argv(a) == ["mkdir", "-m", "0711", "--", a]  # mkdir, never -p: fails on anything planted


def test_a_lab_record_names_only_its_own_scratch_directory():
    record = LabRecord("ab12cd", scratch=new_scratch_path("ab12cd"))
    assert LabRecord.from_json(record.to_json()).scratch == record.scratch
    for planted in ("/etc", "/tmp/linerate-other1-" + "0" * 16, "/tmp/linerate-ab12cd-nginx"):
        with pytest.raises(RecordError):
            LabRecord.from_json(LabRecord("ab12cd", scratch=planted).to_json())


def test_temp_files_are_made_by_mktemp_inside_the_hosts_scratch_directory(tmp_path):
    host = FakeExecutor("client", scratch_dir="/tmp/linerate-ab12cd-" + "1" * 16)
    host.respond(["mktemp"], "/tmp/linerate-ab12cd-" + "1" * 16 + "/linerate-h2load.Ab3dE9\n")
    assert make_temp(host, "h2load").endswith("/linerate-h2load.Ab3dE9")
    assert host.calls[-1] == ("mktemp", "/tmp/linerate-ab12cd-" + "1" * 16 + "/linerate-h2load.XXXXXX")
    host.respond(["mktemp"], "/etc/passwd\n")  # a host answering with another path is refused
    with pytest.raises(Exception, match="mktemp on client answered"):
        make_temp(host, "h2load")


def test_remove_script_removes_a_real_directory_and_leaves_a_planted_link(tmp_path):
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "keep").write_text("x")
    link = tmp_path / "link"
    link.symlink_to(victim)
    real = tmp_path / "real"
    real.mkdir()
    (real / "file").write_text("x")
    run = lambda path: subprocess.run(["sh", "-c", REMOVE_SCRIPT, "t", str(path)]).returncode  # noqa: E731
    assert run(link) == 4 and (victim / "keep").exists() and link.is_symlink()
    assert run(real) == 0 and not real.exists()
    assert run(tmp_path / "absent") == 0


def test_nginx_never_starts_in_a_directory_it_did_not_just_make():
    host = FakeExecutor("server")
    with pytest.raises(ValueError):
        NginxServer(host, {}, ServerSpec((1024,)), workdir="/tmp/linerate-planted").start()
    assert host.calls == []


def alive(pid: int, wait_s: float = 2.0) -> bool:
    """Still running after wait_s (a killed process is a zombie until its new parent reaps it)."""
    import time

    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        try:
            state = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[0]
        except OSError:
            return False
        if state == "Z":
            return False
        time.sleep(0.05)
    return True


def test_a_remote_command_with_a_deadline_is_killed_on_the_host(tmp_path):
    """DEADLINE_SCRIPT, run here by sh as the host would: the command is gone once it is over time,
    its stdin still reaches it, and its exit status comes back."""
    marker = tmp_path / "alive"
    script = f"sleep 31 & echo $! > {marker}; exec sleep 30"  # a child of its own, killed with it
    done = subprocess.run(["sh", "-c", DEADLINE_SCRIPT, "d", "1", "sh", "-c", script], timeout=10)
    pid = int(marker.read_text())
    assert done.returncode == 137 and not alive(pid)
    echoed = subprocess.run(["sh", "-c", DEADLINE_SCRIPT, "d", "5", "cat"], input="hello", capture_output=True,
                            text=True, timeout=10)
    assert echoed.stdout == "hello" and echoed.returncode == 0
    assert subprocess.run(["sh", "-c", DEADLINE_SCRIPT, "d", "5", "sh", "-c", "exit 3"]).returncode == 3


def test_ssh_commands_with_a_timeout_carry_the_deadline():
    executor = SshExecutor.__new__(SshExecutor)
    executor.become = ("sudo", "-n")
    line = executor.command(["cat", "/proc/stat"], timeout_s=15)
    assert line.startswith("sudo -n sh -c ") and line.endswith(" linerate-deadline 15 cat /proc/stat")
    assert executor.command(["cat", "/proc/stat"]) == "sudo -n cat /proc/stat"


@pytest.mark.parametrize("text", ["٣", "²", "1e3", "", " ", "-1", "1_000", "9" * 21, "12a"])
def test_ascii_int_refuses_what_is_not_ascii_digits(text):
    assert ascii_int(text) is None and not is_ascii_int(text)


def test_ascii_int_reads_plain_numbers():
    assert ascii_int(" 1000\n") == 1000 and ascii_int("-5", signed=True) == -5


def test_no_isdigit_in_the_package():
    """str.isdigit() is true for '²' and '٣': every whole number from outside goes through numbers.py."""
    root = os.path.join(os.path.dirname(__file__), "..", "..", "src", "linerate")
    offenders = []
    for folder, _, files in os.walk(root):
        for name in files:
            if name.endswith(".py") and name != "numbers.py":
                text = open(os.path.join(folder, name), encoding="utf-8").read()
                offenders += [f"{name}:{n}" for n, line in enumerate(text.splitlines(), 1)
                              if ".isdigit()" in line and "b\"" not in line and "bytes" not in line]
    assert offenders == []


def test_local_executors_have_no_scratch_directory_unless_given():
    assert LocalExecutor().scratch_dir is None and LocalExecutor(scratch_dir="/x").scratch_dir == "/x"
