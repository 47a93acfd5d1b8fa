"""Two testbeds that name one machine (two inventories on one DUT, differing in their server, in
the login they use, or in the route: a mapped address, a jump host): their runs never change it at
once, and what a killed run of one left on it is put back by the other before the other reads
anything as "original". Before connecting, hosts are compared by address; once connected, by the
SSH host key each presented (claim_machines), which names the machine whatever the route."""

import sqlite3
from types import SimpleNamespace

import pytest

from linerate.cli import main
from linerate.errors import ConfigError
from linerate.store.journal import changes_left_elsewhere
from linerate.testbed.inventory import parse_inventory
from linerate.testbed.journal import Journal
from linerate.testbed.ssh_restore import claim_machines, held_journal

KEYS = {"client": "SHA256:client-key", "dut": "SHA256:dut-key", "server": "SHA256:server-key"}


def connected(**keys):
    """role -> a connection whose host has these host keys (a key, or a tuple of all it showed)."""
    return {role: SimpleNamespace(host=f"root@{role}", session=SimpleNamespace(
                machine_fingerprints=lambda key=key: tuple(sorted(key)) if isinstance(key, tuple) else (key,)))
            for role, key in {**KEYS, **keys}.items()}


def claimed(inv, **keys):
    journal = held_journal(inv)
    try:
        claim_machines(journal, inv, connected(**keys))
    except BaseException:
        journal.close()
        raise
    return journal


def inventory(server="root@192.0.2.6", dut="root@192.0.2.7", client="root@192.0.2.5", jump=None):
    via = f'jump = "{jump}"\n' if jump else ""
    return parse_inventory(f'name = "bed"\n[client]\nssh = "{client}"\n[server]\nssh = "{server}"\n'
                           f'test_address = "198.18.2.10"\n[dut]\nssh = "{dut}"\n{via}os = "linux"\n')


def test_a_run_of_another_testbed_on_the_same_dut_is_refused_while_one_holds_it():
    first = held_journal(inventory())
    try:
        with pytest.raises(ConfigError, match="shares its client 192.0.2.5:22 with another linerate's testbed"):
            held_journal(inventory(server="root@192.0.2.8"))
        second = held_journal(inventory(dut="root@192.0.2.9", server="root@192.0.2.8", client="root@192.0.2.10"))
        second.close()  # no machine in common: both run
    finally:
        first.close()
    held_journal(inventory(server="root@192.0.2.8")).close()  # the first ended: free again


def test_a_refused_hold_keeps_no_lock():
    first = held_journal(inventory())
    with pytest.raises(ConfigError):
        held_journal(inventory(server="root@192.0.2.8"))  # took its testbed lock, then met the DUT's
    first.close()
    held_journal(inventory(server="root@192.0.2.8")).close()


@pytest.mark.parametrize("one, other, same", [
    ("root@192.0.2.7", "admin@192.0.2.7", True),  # the login is not the machine
    ("root@[2001:2::7]", "root@[2001:2:0:0::7]", True),  # one address, two spellings
    ("root@DUT.example", "root@dut.example", True),
    ("root@192.0.2.7", "root@192.0.2.7:2222", False),  # another port: another sshd, may be another machine
])
def test_a_machine_is_its_address_and_port(one, other, same):
    assert (inventory(dut=one).host_keys()["dut"] == inventory(dut=other).host_keys()["dut"]) is same


def test_a_private_address_behind_two_jump_hosts_is_two_machines():
    keys = [inventory(jump=jump).host_keys()["dut"] for jump in ("root@192.0.2.50", "root@192.0.2.51")]
    assert keys[0] != keys[1]


def test_one_machine_in_two_roles_is_locked_once():
    held_journal(inventory(server="root@192.0.2.5")).close()  # client and server on one host


def test_the_same_dut_by_another_route_is_refused_once_its_host_key_is_seen():
    """Another address form (::ffff:198.19.250.6), a jump host, an alias: the address locks differ, the
    host key is the same machine's."""
    first = claimed(inventory())
    try:
        with pytest.raises(ConfigError, match="reaches its dut root@dut .SHA256:dut-key. as another linerate's"):
            claimed(inventory(dut="root@[::ffff:192.0.2.7]", client="root@192.0.2.10", server="root@192.0.2.8"),
                    client="SHA256:another-client", server="SHA256:another-server")
    finally:
        first.close()
    claimed(inventory(dut="root@[::ffff:192.0.2.7]", client="root@192.0.2.10", server="root@192.0.2.8"),
            client="SHA256:another-client", server="SHA256:another-server").close()


def test_changes_a_killed_run_left_on_the_dut_move_to_the_testbed_that_holds_it_next(tmp_path):
    killed = claimed(inventory())
    ttl = killed.add("dut", "sysctl", "net.ipv4.ip_default_ttl", "64", "50")
    killed.add("server", "process", "/tmp/linerate-0123456789abcdef-0123456789abcdef/iperf3-5201.pid", "", None)
    killed.close()  # the run died here: its entries stay open
    other = inventory(dut="root@[::ffff:192.0.2.7]", server="root@192.0.2.8")  # the DUT by another name
    assert changes_left_elsewhere(besides=f"{other.identity_key()}.db") == 2
    journal = claimed(other, server="SHA256:another-server")
    try:
        [moved] = journal.open_entries()  # the DUT's only, not the first testbed's server's
        assert (moved["role"], moved["name"], moved["original"]) == ("dut", "net.ipv4.ip_default_ttl", "64")
    finally:
        journal.close()
    before = Journal(inventory().identity_key(), create=False)
    rows = {row["id"]: row for row in before.conn.execute("SELECT * FROM entries")}
    assert rows[ttl]["status"] == "moved" and "moved to journal" in rows[ttl]["problem"]
    assert [row["kind"] for row in before.open_entries()] == ["process"]  # its own server stays its own


def test_restore_of_the_other_testbed_connects_to_find_out_what_is_on_its_machines(tmp_path, capsys):
    """Every host on this machine's loopback, at ports nothing listens on: restore cannot connect, so
    it cannot tell which machines are its own; the killed run's change stays where it is, open."""
    hosts = {"client": "root@127.0.0.1:9", "dut": "root@127.0.0.1:13", "server": "root@127.0.0.1:17"}
    killed = claimed(inventory(**hosts))
    killed.add("dut", "sysctl", "net.ipv4.ip_default_ttl", "64", "50")
    killed.close()
    path = tmp_path / "other.toml"
    path.write_text(f'name = "other"\nknown_hosts = "{tmp_path / "known_hosts"}"\n[client]\nssh = "{hosts["client"]}"\n'
                    '[server]\nssh = "root@127.0.0.1:19"\ntest_address = "198.18.2.10"\n'
                    f'[dut]\nssh = "{hosts["dut"]}"\nos = "linux"\n')
    (tmp_path / "known_hosts").write_text("")
    assert main(["testbed", "restore", str(path)]) != 0
    printed = capsys.readouterr()
    assert "nothing to restore" not in printed.out and "127.0.0.1" in printed.err, printed
    left = Journal(inventory(**hosts).identity_key(), create=False)
    assert [row["name"] for row in left.open_entries()] == ["net.ipv4.ip_default_ttl"]


def test_a_change_made_in_another_role_is_refused_not_restored_with_the_wrong_driver():
    killed = claimed(inventory())
    killed.add("server", "sysctl", "net.core.rmem_max", "212992", "4194304")
    killed.close()
    with pytest.raises(ConfigError, match="was the server of another testbed"):
        claimed(inventory(dut="root@192.0.2.6", server="root@192.0.2.8"), dut="SHA256:server-key",
                server="SHA256:another-server")


def test_a_damaged_journal_of_another_testbed_is_passed_over(tmp_path):
    killed = claimed(inventory())
    killed.add("dut", "sysctl", "net.ipv4.ip_default_ttl", "64", "50")
    killed.close()
    damaged = tmp_path / "journal" / "00000000000000aa.db"
    with sqlite3.connect(damaged) as conn:
        conn.execute("CREATE TABLE entries (id INTEGER PRIMARY KEY, role TEXT, kind TEXT, name TEXT, original TEXT, "
                     "applied TEXT, created_at REAL, status TEXT, problem TEXT, manual TEXT, closed_at REAL, host TEXT)")
        conn.executemany("INSERT INTO entries (role, kind, name, original, created_at, status) VALUES "
                         "('dut', 'sysctl', 'x', '1', 0, 'done')", [()] * 3000)
    with open(damaged, "r+b") as handle:  # pages past the header overwritten, as a torn write leaves them
        handle.seek(4096 * 3)
        handle.write(bytes(range(256)) * 16 * 50)
    damaged.chmod(0o600)
    journal = claimed(inventory(server="root@192.0.2.8"), server="SHA256:another-server")
    try:
        assert [row["name"] for row in journal.open_entries()] == ["net.ipv4.ip_default_ttl"]
    finally:
        journal.close()


def test_an_older_journal_without_machines_is_read_and_never_taken_over(tmp_path):
    key = inventory().identity_key()
    (tmp_path / "journal").mkdir(mode=0o700)
    with sqlite3.connect(tmp_path / "journal" / f"{key}.db") as conn:
        conn.execute("CREATE TABLE entries (id INTEGER PRIMARY KEY, role TEXT NOT NULL, kind TEXT NOT NULL, "
                     "name TEXT NOT NULL, original TEXT NOT NULL, applied TEXT, created_at REAL NOT NULL, "
                     "status TEXT NOT NULL DEFAULT 'open', problem TEXT, manual TEXT, closed_at REAL)")
        conn.execute("INSERT INTO entries (role, kind, name, original, applied, created_at) "
                     "VALUES ('dut', 'sysctl', 'net.ipv4.ip_default_ttl', '64', '50', 0)")
    (tmp_path / "journal" / f"{key}.db").chmod(0o600)
    journal = claimed(inventory())  # its own testbed reads it, as before
    assert [row["name"] for row in journal.open_entries()] == ["net.ipv4.ip_default_ttl"]
    journal.close()
    other = claimed(inventory(server="root@192.0.2.8"), server="SHA256:another-server")
    assert other.open_entries() == []  # an entry without its machine cannot be attributed
    other.close()


def test_two_key_sets_of_one_machine_that_share_a_key_share_its_lock():
    """One inventory saw the DUT's ed25519 and ecdsa keys, another (its list cut short) only the ecdsa
    one: a lock per key, so the second is refused rather than named apart."""
    first = claimed(inventory(), dut=("SHA256:dut-ed25519", "SHA256:dut-ecdsa"))
    try:
        with pytest.raises(ConfigError, match="as another linerate's testbed does"):
            claimed(inventory(dut="root@[::ffff:192.0.2.7]", client="root@192.0.2.10", server="root@192.0.2.8"),
                    client="SHA256:other-client", server="SHA256:other-server", dut="SHA256:dut-ecdsa")
    finally:
        first.close()
