"""--accept-new-host-keys stores a host key as the user linerate runs as (often root): never through a
link planted at the inventory's known_hosts path, never into a folder another user can write."""

import os
import stat

import pytest

from linerate.exec.ssh import HostKeyError, append_known_host

LINE = "[198.19.250.6]:22 ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHk1j3zGzY7p0m2cQ0bq1x0n1l9yK8e0Y3kXgk2y2q1a\n"


def test_a_link_at_the_known_hosts_path_is_never_followed(tmp_path):
    victim = tmp_path / "victim"
    victim.write_text("# root's own file\n")
    (tmp_path / "ssh").mkdir(mode=0o700)
    (tmp_path / "ssh" / "known_hosts").symlink_to(victim)
    with pytest.raises(HostKeyError, match="a link is never followed"):
        append_known_host(tmp_path / "ssh" / "known_hosts", LINE)
    assert victim.read_text() == "# root's own file\n"


def test_a_folder_others_can_write_is_refused(tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o1777)  # like /tmp: anyone could have planted the file's name there
    with pytest.raises(HostKeyError, match="writable by others"):
        append_known_host(shared / "known_hosts", LINE)
    assert not (shared / "known_hosts").exists()


def test_a_new_file_in_a_new_folder_is_this_users_alone(tmp_path):
    path = tmp_path / "ssh" / "known_hosts"
    append_known_host(path, LINE)
    append_known_host(path, LINE.replace("250.6", "250.2"))
    assert path.read_text().count("ssh-ed25519") == 2
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600 and stat.S_IMODE(os.stat(path.parent).st_mode) == 0o700
    with pytest.raises(HostKeyError, match="cannot make"):  # only the last folder is made, never a chain
        append_known_host(tmp_path / "a" / "b" / "known_hosts", LINE)
