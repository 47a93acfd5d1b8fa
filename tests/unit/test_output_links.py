"""report -o / compare -o / --plot follow a symbolic link only when no other user could have planted
it: a link another user made (or one in a folder others can write) is refused, nothing written."""

import os

import pytest

from linerate.errors import ConfigError
from linerate.report.output import check

NOBODY = 65534


@pytest.mark.skipif(os.geteuid() != 0, reason="making a link owned by another user needs root")
def test_a_link_another_user_made_is_refused_and_its_target_left_alone(tmp_path):
    victim = tmp_path / "private" / "victim"
    victim.parent.mkdir(mode=0o700)
    victim.write_text("root's own file\n")
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    os.chown(theirs, NOBODY, NOBODY)
    link = theirs / "report.md"
    link.symlink_to(victim)
    os.lchown(link, NOBODY, NOBODY)
    with pytest.raises(ConfigError, match="another user"):
        check(str(link), "-o")
    assert victim.read_text() == "root's own file\n"


def test_a_link_of_ours_in_a_folder_of_ours_is_followed_and_one_in_a_shared_folder_is_not(tmp_path):
    target = tmp_path / "real.md"
    target.write_text("old\n")
    (tmp_path / "ours").mkdir(mode=0o755)
    (tmp_path / "ours" / "report.md").symlink_to(target)
    assert check(str(tmp_path / "ours" / "report.md"), "-o").path == str(target)
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)  # not sticky: anyone could have replaced the link
    (shared / "report.md").symlink_to(target)
    with pytest.raises(ConfigError, match="others can write|written by other users"):
        check(str(shared / "report.md"), "-o")
    check("/dev/stdout", "-o")  # root's link in /dev: followed, whatever fd 1 is now
