"""Odd input that once gave a traceback (or was taken as valid) is refused in one line, exit 2, with
nothing created: huge or non-ASCII numbers, names with a newline, a database of no schema linerate
writes, a database on a full disk."""

import sqlite3
import subprocess
import sys

import pytest

from linerate.cli import main
from linerate.dut.linux import LinuxDriver
from linerate.exec import FakeExecutor
from linerate.store.schema import APPLICATION_ID

INVENTORY = """name = "bed"
[client]
ssh = "root@198.18.0.2"
test_address = "198.18.1.10"
[server]
ssh = "{server_ssh}"
test_address = "198.18.2.10"
[dut]
ssh = "root@198.18.0.3"
os = "linux"
interfaces = [{interfaces}]
"""


def linerate(*argv: str, env_dir=None) -> subprocess.CompletedProcess:
    env = None
    if env_dir is not None:
        import os

        env = {**os.environ, "LINERATE_JOURNAL_DIR": str(env_dir / "journal")}
    return subprocess.run([sys.executable, "-m", "linerate", *argv], capture_output=True, text=True, timeout=60,
                          env=env)


def one_line(proc: subprocess.CompletedProcess, field: str) -> None:
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert field in proc.stderr


def inventory(tmp_path, server_ssh="root@198.18.0.4", interfaces='"lan0", "wan0"'):
    path = tmp_path / "bed.toml"
    path.write_text(INVENTORY.format(server_ssh=server_ssh, interfaces=interfaces))
    return path


def test_resolve_of_an_id_past_any_integer_is_one_line(tmp_path):
    one_line(linerate("testbed", "restore", str(inventory(tmp_path)), "--resolve", "9" * 23, env_dir=tmp_path),
             "--resolve")


@pytest.mark.parametrize("server_ssh, interfaces, field", [
    ("root\\n@198.18.0.4", '"lan0", "wan0"', "ssh"),
    ("root@198.18.0.4\\n", '"lan0", "wan0"', "ssh"),
    ("root@fe80::1%eth0\\n", '"lan0", "wan0"', "ssh"),
    ("root@198.18.0.4", '"lan0\\n", "wan0"', "interfaces"),
])
def test_inventory_values_with_a_newline_are_refused(tmp_path, server_ssh, interfaces, field):
    one_line(linerate("testbed", "check", str(inventory(tmp_path, server_ssh, interfaces)), env_dir=tmp_path), field)


@pytest.mark.parametrize("argv, option", [
    (["trial", "--repetitions", "٣"], "--repetitions"),
    (["cps", "--repetitions", "٣"], "--repetitions"),
    (["trial", "--duration", "²"], "--duration"),
    (["cps", "--latency-load", "nan"], "--latency-load"),
    (["cps", "--loss-target", "1e400"], "--loss-target"),
    (["calc", "--link", "١g"], "--link"),
    (["lab", "up", "--dry-run", "--link", "1g\n"], "--link"),  # never trimmed into something else
    (["lab", "up", "--dry-run", "--link", "1g "], "--link"),
    (["lab", "up", "--dry-run", "--mtu", "+1500"], "--mtu"),
    (["recommend", "--os", "freebsd", "--os-version", "14.0\nx", "--role", "router"], "--os-version"),
    (["audit", "/dev/null", "--os", "linux", "--os-version", "6.1 "], "--os-version"),
    (["recommend", "--os", "freebsd", "--os-version", "14.0", "--role", "router", "--pppoe", "--cores",
      "99999999999999999999"], "--cores"),
    (["recommend", "--os", "freebsd", "--os-version", "14.0", "--role", "router", "--cores", "-1"], "--cores"),
    (["recommend", "--os", "freebsd", "--os-version", "14.0", "--role", "router", "--nic", "igb\nx = 1"], "--nic"),
    (["calc", "--link", "1g", "--frame-size", "99999999999999999999"], "--frame-size"),
    (["calc", "--link", "1g", "--frame-size", "0"], "--frame-size"),
])
def test_numbers_are_ascii_digits(argv, option):
    one_line(linerate(*argv), option)


@pytest.mark.parametrize("version", [0, -1])
def test_a_database_at_no_schema_linerate_writes_is_refused(tmp_path, version):
    db = tmp_path / "odd.db"
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE experiments (id INTEGER)")
        conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
        conn.execute(f"PRAGMA user_version = {version}")
    before = db.read_bytes()
    one_line(linerate("list", "--db", str(db)), "--db")
    assert db.read_bytes() == before


@pytest.mark.parametrize("argv", [["list"], ["report", "1"], ["compare", "1", "2"]])
def test_a_command_that_only_looks_leaves_an_empty_file_empty(tmp_path, argv):
    """SQLite takes a 0-byte file for an empty database, and opening it to look made linerate's tables in it."""
    db = tmp_path / "empty.db"
    db.write_bytes(b"")
    one_line(linerate(*argv, "--db", str(db)), "--db")
    assert db.read_bytes() == b"" and sorted(path.name for path in tmp_path.iterdir()) == ["empty.db"]


def test_a_full_disk_under_the_database_is_one_line(monkeypatch, capsys):
    import linerate.cli as cli

    def full(args):
        raise sqlite3.OperationalError("database or disk is full")

    monkeypatch.setattr(cli, "build_parser", lambda words: _parser_calling(full))
    assert main(["list"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "database or disk is full" in err and "--db" in err


def test_a_bug_in_sqlite_use_keeps_its_traceback(monkeypatch):
    import linerate.cli as cli

    def broken(args):
        raise sqlite3.OperationalError("no such column: flux")

    monkeypatch.setattr(cli, "build_parser", lambda words: _parser_calling(broken))
    with pytest.raises(sqlite3.OperationalError):
        main(["list"])


def _parser_calling(handler):
    import argparse

    parser = argparse.ArgumentParser()
    parser.set_defaults(handler=handler)
    parser.add_argument("command")
    return parser


@pytest.mark.parametrize("printed", ["١٠٠٠", "1000²", "²", "99999999999999999999999", "-1"])
def test_a_link_speed_in_other_digits_is_unknown_not_a_crash(printed):
    host = FakeExecutor("dut").respond(["cat"], printed + "\n")
    assert LinuxDriver().link_speed_mbps(host, "lan0") is None


def test_an_output_name_with_a_newline_stays_on_one_printed_line(tmp_path):
    from linerate.cli.printing import shown

    assert shown(tmp_path / "a\nb.md") == f"{tmp_path}/a\\x0ab.md"
