"""Every file linerate writes goes through folders and links no other user could have steered — at any
depth of the path, not only its last folder: a link another user planted in the middle of a results
database, report, export, known_hosts or state-directory path is refused and nothing is written."""

import os
import stat

import pytest

from linerate import statedir
from linerate.errors import ConfigError
from linerate.exec.ssh import HostKeyError, append_known_host
from linerate.report import output
from linerate.report.iperf3_files import check_directory
from linerate.safepath import untrusted_component
from linerate.store.db import check_db

NOBODY = 65534
needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="a folder or link of another user needs root to make")


@pytest.fixture
def planted(tmp_path):
    """A root-only folder, and a link to it that another user made in a folder of theirs: the path
    `theirs/x/...` reaches the root-only folder only through the planted link."""
    private = tmp_path / "private"
    private.mkdir(mode=0o700)
    (private / "victim").write_text("root's own file\n")
    theirs = tmp_path / "theirs"
    theirs.mkdir(mode=0o755)
    os.chown(theirs, NOBODY, NOBODY)
    (theirs / "x").symlink_to(private)
    os.lchown(theirs / "x", NOBODY, NOBODY)
    return private, theirs / "x"


@needs_root
def test_a_link_another_user_planted_in_the_middle_of_any_output_path_is_refused(planted):
    private, through = planted
    before = sorted(os.listdir(private))
    with pytest.raises(ConfigError, match="--db.*another user"):
        check_db(str(through / "results.db"))
    with pytest.raises(ConfigError, match="-o.*another user"):
        output.write(str(through / "report.md"), "report\n", "-o")
    with pytest.raises(ConfigError, match="another user"):
        output.write(str(through / "victim"), "report\n", "-o")
    with pytest.raises(ConfigError, match="another user"):
        check_directory(str(through / "export"))
    with pytest.raises(HostKeyError, match="another user"):
        append_known_host(through / "known_hosts", "host ssh-ed25519 AAAA\n")
    with pytest.raises(HostKeyError, match="another user"):
        append_known_host(through / "newdir" / "known_hosts", "host ssh-ed25519 AAAA\n")
    with pytest.raises(ConfigError, match="another user"):
        statedir.ensure(through / "labs")
    assert sorted(os.listdir(private)) == before
    assert (private / "victim").read_text() == "root's own file\n"


@needs_root
def test_a_folder_of_another_user_on_the_way_is_refused_even_without_a_link(tmp_path):
    theirs = tmp_path / "theirs"
    (theirs / "inner").mkdir(parents=True)
    os.chown(theirs, NOBODY, NOBODY)
    assert "belongs to another user" in untrusted_component(str(theirs / "inner" / "report.md"))


def test_a_folder_others_may_write_on_the_way_is_refused_and_a_sticky_one_is_not(tmp_path):
    shared = tmp_path / "shared"
    (shared / "mine").mkdir(parents=True)
    shared.chmod(0o777)  # anyone could rename `mine` away and put a link in its place
    assert "may be written by other users" in untrusted_component(str(shared / "mine" / "r.md"))
    shared.chmod(0o1777)  # sticky, as /tmp: others may add names, not replace ours
    assert untrusted_component(str(shared / "mine" / "r.md")) is None


def test_links_of_ours_on_the_way_are_followed_and_walked_in_turn(tmp_path):
    (tmp_path / "real" / "deep").mkdir(parents=True)
    (tmp_path / "ours").symlink_to("real")  # relative, made by this user in a folder of ours
    assert untrusted_component(str(tmp_path / "ours" / "deep" / "new" / "r.md")) is None
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    (tmp_path / "via").symlink_to(shared)  # our link, but it leads through a folder anyone can write
    assert "may be written by other users" in untrusted_component(str(tmp_path / "via" / "r.md"))
    (tmp_path / "loop").symlink_to("loop")
    assert "too many symbolic links" in untrusted_component(str(tmp_path / "loop" / "r.md"))


def test_the_usual_places_pass(tmp_path):
    assert untrusted_component(str(tmp_path / "results.db")) is None
    assert untrusted_component("/dev/stdout") is None
    assert untrusted_component("/tmp/linerate-no-such-folder/report.md") is None  # sticky /tmp, nothing yet


@needs_root
def test_dot_dot_after_a_planted_link_is_where_the_kernel_goes_not_where_the_text_says(tmp_path, monkeypatch):
    """`/tmp/L/../x` is beside L's target (the kernel follows L, then goes up), not /tmp/x: a link
    another user planted before a `..` is refused like any other on the way, nothing made."""
    private = tmp_path / "private"
    (private / "sub").mkdir(parents=True, mode=0o700)
    private.chmod(0o700)
    (private / "victim").write_text("root's own file\n")
    sticky = tmp_path / "sticky"
    sticky.mkdir()
    sticky.chmod(0o1777)
    (sticky / "L").symlink_to(private / "sub")
    os.lchown(sticky / "L", NOBODY, NOBODY)
    through = str(sticky / "L" / "..")
    assert "another user made" in untrusted_component(through + "/report.md")
    with pytest.raises(ConfigError, match="another user made"):
        output.write(through + "/victim", "report\n", "-o")
    with pytest.raises(ConfigError, match="another user made"):
        check_db(through + "/r.db")
    with pytest.raises(ConfigError, match="another user made"):
        check_directory(through + "/export")
    monkeypatch.chdir(sticky)
    assert "another user made" in untrusted_component("L/../report.md")  # relative, from the working directory
    assert sorted(os.listdir(private)) == ["sub", "victim"] and (private / "victim").read_text() == "root's own file\n"
    (tmp_path / "mine").symlink_to(private / "sub")  # a link of ours: `..` is its target's parent
    assert untrusted_component(str(tmp_path / "mine" / ".." / "report.md")) is None
    assert output.check(str(tmp_path / "mine" / ".." / "victim"), "-o").path.endswith("mine/../victim")


@needs_root
def test_a_named_pipe_another_user_made_is_never_written_into(tmp_path):
    sticky = tmp_path / "sticky"
    sticky.mkdir()
    sticky.chmod(0o1777)
    theirs = sticky / "report.md"
    os.mkfifo(theirs, 0o622)
    os.chown(theirs, NOBODY, NOBODY)
    with pytest.raises(ConfigError, match="another user .* made in a folder others can write: a named pipe"):
        output.check(str(theirs), "-o")
    ours = tmp_path / "pipe.md"
    os.mkfifo(ours, 0o600)
    assert output.check(str(ours), "-o").how == "stream"  # this user's own pipe: written into, as `>` would


def test_missing_folders_are_made_one_at_a_time_and_checked(tmp_path):
    deep = tmp_path / "a" / "b" / "c"
    assert untrusted_component(str(deep), make=0o755) is None and deep.is_dir()
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    assert "may be written by other users" in untrusted_component(str(shared / "x" / "y"), make=0o755)
    assert not (shared / "x").exists()  # refused before anything was made there


@needs_root
def test_a_file_another_user_made_in_a_shared_folder_is_never_taken_over(tmp_path):
    """fs.protected_regular's rule in every folder: root's report or results never go into (or take the
    mode of) a file another user planted in /tmp; set-id bits are never kept."""
    sticky = tmp_path / "sticky"
    sticky.mkdir()
    sticky.chmod(0o1777)
    theirs = sticky / "report.md"
    theirs.write_text("x\n")
    os.chown(theirs, NOBODY, NOBODY)
    theirs.chmod(0o6777)
    with pytest.raises(ConfigError, match="another user .* made in a folder others can write"):
        output.check(str(theirs), "-o")
    with pytest.raises(ConfigError, match="in a folder other users can write"):
        check_db(str(theirs))
    assert theirs.stat().st_uid == NOBODY and theirs.read_text() == "x\n"
    ours = tmp_path / "ours.md"
    ours.write_text("old\n")
    ours.chmod(0o4755)
    output.write(str(ours), "new\n", "-o")
    assert ours.read_text() == "new\n" and stat.S_IMODE(ours.stat().st_mode) == 0o755  # no set-id bit kept


def test_a_dot_dot_after_a_missing_folder_is_refused_and_nothing_is_made(tmp_path):
    path = str(tmp_path / "new" / "a" / ".." / ".." / "elsewhere")
    assert "does not exist, and a '..' follows it" in untrusted_component(path)
    assert "does not exist, and a '..' follows it" in untrusted_component(path, make=0o755)
    assert not (tmp_path / "new").exists()


def test_a_removed_working_directory_is_one_line(tmp_path, monkeypatch):
    gone = tmp_path / "gone"
    gone.mkdir()
    monkeypatch.chdir(gone)
    gone.rmdir()
    with pytest.raises(ConfigError, match="working directory: it was removed"):
        check_db("rel.db")


@needs_root
def test_a_refused_journal_directory_stops_a_run_before_its_database_is_made(tmp_path, monkeypatch, capsys):
    from linerate.cli import main

    theirs = tmp_path / "theirs"
    theirs.mkdir()
    os.chown(theirs, NOBODY, NOBODY)
    monkeypatch.setenv("LINERATE_JOURNAL_DIR", str(theirs / "journal"))
    inventory = tmp_path / "bed.toml"
    inventory.write_text('name = "bed"\n[client]\nssh = "root@192.0.2.5"\n[server]\nssh = "root@192.0.2.6"\n'
                         'test_address = "198.18.2.10"\n[dut]\nssh = "root@192.0.2.7"\nos = "linux"\n')
    experiment = tmp_path / "e.toml"
    experiment.write_text('name = "e"\nrepetitions = 1\nduration_s = 1\n')
    db = tmp_path / "r.db"
    assert main(["run", str(experiment), "--testbed", str(inventory), "--db", str(db)]) == 2
    assert "belongs to another user" in capsys.readouterr().err
    assert not db.exists() and os.listdir(theirs) == []


@needs_root
def test_a_database_is_never_kept_in_a_shared_folder_and_a_second_name_is_not_written_over(tmp_path):
    sticky = tmp_path / "sticky"
    sticky.mkdir()
    sticky.chmod(0o1777)
    wal = sticky / "r.db-wal"  # SQLite would read it into r.db, and write root's pages into it
    wal.write_bytes(b"")
    os.chown(wal, NOBODY, NOBODY)
    with pytest.raises(ConfigError, match="in a folder other users can write .* SQLite's files beside the database"):
        check_db(str(sticky / "r.db"))  # in /tmp itself, never: SQLite makes those files later, by name
    wal.unlink()
    (sticky / "r.db").write_bytes(b"")
    (tmp_path / "link.db").symlink_to(sticky / "r.db")  # our own link to it: SQLite works beside the target
    with pytest.raises(ConfigError, match="in a folder other users can write"):
        check_db(str(tmp_path / "link.db"))
    ours = sticky / "mine.md"
    ours.write_text("old\n")
    os.link(ours, sticky / "second-name")  # what another user could do to a file of ours in /tmp
    with pytest.raises(ConfigError, match="has another name"):
        output.check(str(ours), "-o")
