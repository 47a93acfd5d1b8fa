"""Issue #26, "Nothing linerate touches is damaged", without root: output targets, values read
from a host, the printing path, tracebacks, the state directory, lab clean, lab up's record, the
journal's place, and the smaller items. The root-only cases (device nodes, a hostile DUT behind
a real sshd, an immutable --db, real namespaces, a VM killed while booting) are in
tests/privileged/test_testbed_hostile.py."""

import json
import os
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from linerate.cli import main
from linerate.errors import ConfigError, ExecError, ParseError
from linerate.exec.fake import FakeExecutor
from linerate.lab.registry import LabRecord, Registry
from linerate.process import ProcessRef
from linerate.store import Store
from linerate.testbed.journal import HostValueError, Journal, value_problem
from tests.conftest import DATA

OK_RUN = DATA / "iperf3" / "tcp_forward_p1.json"
KEY = "0123456789abcdef"
ESCAPES = "\x1b]0;title\x07\x1b[31m64"


def one_line_exit_2(argv, capsys) -> str:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    return err


@pytest.fixture
def db(tmp_path):
    path = tmp_path / "r.db"
    assert main(["import", str(OK_RUN), "--label", "exp", "--db", str(path)]) == 0
    return path


# --- 1. output targets -------------------------------------------------------------------------------

def read_fifo(path: Path, into: list) -> threading.Thread:
    """A reader of the FIFO that is there before the writer comes (its read end opened here, not in the
    thread, which a loaded host may start late): everything the writer sends, up to its close."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    os.set_blocking(fd, True)

    def reader():
        chunks, deadline = [], time.monotonic() + 30
        try:
            while time.monotonic() < deadline:
                chunk = os.read(fd, 65536)
                if chunk:
                    chunks.append(chunk)
                elif chunks:
                    break  # the writer closed
                else:
                    time.sleep(0.01)  # no writer yet: a FIFO without one reads as empty
        finally:
            os.close(fd)
            into.append(b"".join(chunks))
    thread = threading.Thread(target=reader, daemon=True)
    thread.start()
    return thread


@pytest.mark.parametrize("option", [["-o"], ["--plot"]])
def test_a_fifo_is_written_into_never_replaced(db, tmp_path, capsys, option):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got: list = []
    thread = read_fifo(fifo, got)
    assert main(["report", "exp", "--db", str(db), "--format", "json", *option, str(fifo)]) == 0
    thread.join(10)
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert got and (got[0].startswith(b"\x89PNG") if option == ["--plot"] else json.loads(got[0]))


def test_a_fifo_nobody_reads_is_refused_not_hung_on(db, tmp_path, capsys):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    err = one_line_exit_2(["compare", "exp", "exp", "--db", str(db), "-o", str(fifo)], capsys)
    assert "FIFO nobody reads" in err and stat.S_ISFIFO(os.lstat(fifo).st_mode)


@pytest.mark.parametrize("command", [["report", "exp", "-o"], ["report", "exp", "--plot"],
                                     ["compare", "exp", "exp", "-o"]])
@pytest.mark.parametrize("name", ["the file", "a link to it", "a hard link to it", "its -wal", "the journal dir"])
def test_an_output_is_never_written_over_the_database_it_reads_or_linerates_state(db, tmp_path, capsys, monkeypatch,
                                                                                   command, name):
    monkeypatch.setenv("LINERATE_JOURNAL_DIR", str(tmp_path / "journal"))
    (tmp_path / "journal").mkdir()
    target = {"the file": db, "a link to it": tmp_path / "link.db", "a hard link to it": tmp_path / "hard.db",
              "its -wal": Path(f"{db}-wal"), "the journal dir": tmp_path / "journal" / "x.db"}[name]
    if name == "a link to it":
        target.symlink_to(db)
    elif name == "a hard link to it":
        os.link(db, target)
    import sqlite3

    dump = lambda: list(sqlite3.connect(db).iterdump())  # noqa: E731 - tables, columns and rows
    before = dump()
    err = one_line_exit_2([*command, str(target), "--db", str(db)], capsys)
    assert "results database" in err or "state directory" in err, err
    assert dump() == before


def test_a_symlink_is_followed_and_stays_a_link(db, tmp_path, capsys):
    target = tmp_path / "real.json"
    target.write_text("old")
    target.chmod(0o640)
    link = tmp_path / "link.json"
    link.symlink_to(target)
    assert main(["report", "exp", "--db", str(db), "--format", "json", "-o", str(link)]) == 0
    assert link.is_symlink() and json.loads(target.read_text())["experiment"]
    assert stat.S_IMODE(target.stat().st_mode) == 0o640  # replaced whole, its mode kept


def test_a_link_to_nothing_and_a_directory_are_refused(db, tmp_path, capsys):
    dangling = tmp_path / "dangling.md"
    dangling.symlink_to(tmp_path / "missing" / "x.md")
    assert "does not exist" in one_line_exit_2(["report", "exp", "--db", str(db), "-o", str(dangling)], capsys)
    assert not (tmp_path / "missing").exists()
    assert "directory" in one_line_exit_2(["report", "exp", "--db", str(db), "--plot", str(tmp_path)], capsys)


def test_dev_null_is_written_into(db, capsys):
    assert main(["report", "exp", "--db", str(db), "--format", "json", "-o", "/dev/null"]) == 0
    assert stat.S_ISCHR(os.lstat("/dev/null").st_mode)


# --- 2. / 3. values read from a host -------------------------------------------------------------------

def ssh_testbed(tmp_path, dut: FakeExecutor):
    from linerate.dut.linux import LinuxDriver
    from linerate.testbed.inventory import parse_inventory
    from linerate.testbed.ssh import SshTestbed

    inventory = parse_inventory('[client]\nssh = "root@192.0.2.5"\ntest_address = "198.18.1.10"\n'
                                '[server]\nssh = "root@192.0.2.6"\ntest_address = "198.18.2.10"\n'
                                '[dut]\nssh = "root@192.0.2.1"\nos = "linux"\n')
    bed = SshTestbed(inventory, None)
    bed.executors, bed.driver, bed.journal = {"dut": dut}, LinuxDriver(), Journal(bed.key)
    return bed


@pytest.mark.parametrize("printed", [ESCAPES, "7" * 300, "\x00\x01binary\xff"])
def test_a_hostile_original_value_refuses_the_change_before_it_is_made(tmp_path, printed):
    dut = FakeExecutor("dut").respond(["sysctl", "-n", "net.ipv4.ip_default_ttl"], printed + "\n")
    bed = ssh_testbed(tmp_path, dut)
    with pytest.raises(HostValueError, match="not a value linerate could put back") as caught:
        bed.activate({"dut_sysctls": "net.ipv4.ip_default_ttl=50"})
    assert "\x1b" not in str(caught.value) and printed[:50] not in str(caught.value)
    assert not any(call[:2] == ("sysctl", "-w") for call in dut.calls)  # never changed
    assert bed.journal.open_entries() == []  # never journaled


def test_a_poisoned_older_journal_is_never_written_back_and_blocks_nothing(tmp_path, capsys):
    """An older linerate journaled 30 MB (or terminal escapes) as the original value in the results
    database: restore moves it out as needs-hand with the command to run, restores the rest, and
    the journal stays small; --resolve closes it."""
    from linerate.testbed.ssh_restore import restore_journal

    store = Store(tmp_path / "old.db")
    with store.transaction():  # what an older linerate journaled in the results database
        store.conn.executemany(
            "INSERT INTO dut_journal (testbed, role, kind, name, original, applied, created_at) VALUES "
            "(?, 'dut', 'sysctl', ?, ?, ?, 0)", [(KEY, "net.ipv4.ip_default_ttl", "7" * 3_000_000, "50"),
                                                 (KEY, "net.ipv4.tcp_ecn", ESCAPES, "0"),
                                                 (KEY, "net.ipv4.ip_forward", "1", "0")])
    journal = Journal(KEY)
    assert journal.adopt(store, "linux") == 3 and store.journal_open(KEY) == []
    dut = FakeExecutor("dut").respond(["sysctl", "-n", "net.ipv4.ip_forward"], "1\n").respond(["sysctl", "-w"])
    from linerate.dut.linux import LinuxDriver

    done = restore_journal(None, journal, {"dut": dut}, LinuxDriver())
    assert done == ["dut: sysctl net.ipv4.ip_forward back to 1"]
    assert [c for c in dut.calls if c[:2] == ("sysctl", "-w")] == [("sysctl", "-w", "net.ipv4.ip_forward=1")]
    hand = journal.hand_entries()
    assert [h["name"] for h in hand] == ["net.ipv4.ip_default_ttl", "net.ipv4.tcp_ecn"]
    assert all("sysctl -w" in h["manual"] and h["original"] == "" for h in hand)
    assert journal.path.stat().st_size < 100_000
    assert journal.resolve() == 2 and journal.hand_entries() == []


def test_value_checks():
    assert value_problem("sysctl", "4096 131072 6291456") is None
    assert value_problem("sysctl", "7" * 257) and value_problem("sysctl", ESCAPES) and value_problem("sysctl", "")
    assert value_problem("offload", "on") is None and value_problem("offload", "unknown")


def test_exec_errors_are_bounded():
    exc = ExecError(["sysctl", "-w", "x=" + "7" * 30_000_000], "ssh:dut", 255, "E" * 30_000_131)
    assert len(str(exc)) < 600


def test_ssh_output_is_capped(monkeypatch):
    import asyncio

    from linerate.exec import ssh

    class Stream:
        def __init__(self, size):
            self.left = size

        async def read(self, n):
            chunk = min(n, self.left)
            self.left -= chunk
            return b"7" * chunk

    assert len(asyncio.run(ssh._drain(Stream(1000)))) == 1000
    with pytest.raises(ssh.OutputTooLarge):
        asyncio.run(ssh._drain(Stream(ssh.MAX_OUTPUT_BYTES + 1)))


def test_control_characters_from_outside_are_escaped_on_every_print(tmp_path, monkeypatch, capsys):
    labs = tmp_path / "labs"
    Registry().create(LabRecord("ok1", owner=ProcessRef.me()))  # our directory, made by linerate
    (labs / f"{ESCAPES}.json").write_text("{}")  # a name from outside
    assert main(["lab", "status"]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\x07" not in out and "\\x1b]0;title\\x07" in out


# --- 4. one-line errors, not tracebacks ----------------------------------------------------------------

def test_a_counter_of_1e400_is_a_parse_error():
    from linerate import counters

    text = json.dumps([{"ifname": "lan0", "stats64": {"rx": {"packets": 1}}}]).replace(": 1}", ": 1e400}")
    with pytest.raises(ParseError, match="lan0 rx_packets"):
        counters.parse_link_stats(text)
    with pytest.raises(ParseError):
        counters.parse_nstat('{"kernel": {"IpForwDatagrams": 1e400}}')


def iperf3_file(tmp_path, edit) -> Path:
    doc = json.loads(OK_RUN.read_text())
    edit(doc)
    path = tmp_path / "run.json"
    path.write_text(json.dumps(doc))
    return path


@pytest.mark.parametrize("edit, says", [
    (lambda d: d["end"]["sum_received"].update(bits_per_second=10**400), "401-digit"),
    (lambda d: d["end"]["sum_received"].update(bits_per_second=1e15,
                                               bytes=int(1e15 / 8 * d["end"]["sum_received"]["seconds"])), "twice"),
    (lambda d: d["end"]["sum_received"].update(bytes=0), "does not match its bytes"),
])
def test_implausible_imports_are_refused(tmp_path, capsys, edit, says):
    path = iperf3_file(tmp_path, edit)
    err = one_line_exit_2(["import", str(path), "--label", "x", "--db", str(tmp_path / "i.db")], capsys)
    assert says in err and not (tmp_path / "i.db").exists()


def test_known_hosts_that_is_not_one_never_shows_its_content(tmp_path):
    from linerate.exec.ssh import load_identity, load_known_hosts

    secret = tmp_path / "shadow"
    secret.write_text("root:$6$supersecrethash:19000:0:99999:7:::\n")
    with pytest.raises(ConfigError) as caught:
        load_known_hosts(secret)
    assert "supersecret" not in str(caught.value) and "known_hosts" in str(caught.value)
    with pytest.raises(ConfigError) as caught:
        load_identity(str(secret))
    assert "supersecret" not in str(caught.value) and "private key" in str(caught.value)
    with pytest.raises(ConfigError, match="directory"):
        load_known_hosts(Path(""))


@pytest.mark.parametrize("line, says", [('known_hosts = ""', "known_hosts"), ('link = "10t"', "out of range")])
def test_inventory_values(tmp_path, line, says):
    from linerate.testbed.inventory import parse_inventory

    with pytest.raises(ConfigError, match=says):
        parse_inventory(f'{line}\n[client]\nssh = "root@192.0.2.5"\n[server]\nssh = "root@192.0.2.6"\n'
                        'test_address = "198.18.2.10"\n')


# --- 5. the state directory --------------------------------------------------------------------------

def test_a_shared_state_directory_is_refused_never_chmodded(tmp_path, monkeypatch, capsys):
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o1777)
    monkeypatch.setenv("LINERATE_STATE_DIR", str(shared))
    with pytest.raises(ConfigError, match="mode 1777"):
        Registry().create(LabRecord("a1", owner=ProcessRef.me()))
    assert stat.S_IMODE(shared.stat().st_mode) == 0o1777 and list(shared.iterdir()) == []
    assert "mode 1777" in one_line_exit_2(["lab", "status"], capsys)


def test_lab_status_deletes_nothing(tmp_path, capsys):
    registry = Registry()
    registry.create(LabRecord("s1", owner=ProcessRef.me()))
    foreign = registry.state_dir / ".foo.4000000.abcdef12.tmp"
    ours_stale = registry.state_dir / ".linerate-s1.4000000.abcdef12.tmp"
    foreign.write_text("x")
    ours_stale.write_text("x")
    assert main(["lab", "status"]) == 0
    assert foreign.exists() and ours_stale.exists()


# --- 6. / 7. lab clean past a bad record; lab up recorded as incomplete ---------------------------

def dead_owner() -> ProcessRef:
    child = subprocess.Popen(["true"])
    child.wait()
    return ProcessRef(child.pid, 1)


def test_lab_clean_continues_past_a_planted_vm_link(tmp_path, capsys):
    registry = Registry()
    for name in ("a1", "b1", "c1"):
        registry.create(LabRecord(name, owner=dead_owner()))
    (registry.state_dir / "a1.vm").symlink_to(tmp_path)
    assert main(["lab", "clean"]) == 1
    out = capsys.readouterr().out
    assert "left lab a1 untouched" in out and "removed lab b1" in out and "removed lab c1" in out
    assert [r.lab_id for r in registry.all()] == ["a1"] and tmp_path.is_dir()


def test_lab_up_is_owned_until_it_finishes(monkeypatch, capsys):
    """A kill during `lab up` must leave an orphan (removed by `lab clean`), not a kept lab."""
    from linerate import preflight
    from linerate.testbed.namespace import NamespaceTestbed

    seen = {}

    def up(self):
        self.registry.create(LabRecord(self.spec.lab_id, owner=None if self.keep else ProcessRef.me()))
        self.record, self.record_is_ours = self.registry.load(self.spec.lab_id), True
        seen["owner during up"] = self.record.owner
        return self

    monkeypatch.setattr(NamespaceTestbed, "up", up)
    monkeypatch.setattr(preflight, "require", lambda *a, **k: None)
    monkeypatch.setattr(preflight, "run_checks", lambda *a, **k: [])
    assert main(["lab", "up", "--name", "up1"]) == 0
    assert seen["owner during up"] is not None and seen["owner during up"].pid == os.getpid()
    assert Registry().load("up1").owner is None  # kept once complete


def test_a_record_without_created_has_no_age(capsys):
    registry = Registry()
    registry.create(LabRecord("n1", owner=ProcessRef.me()))
    doc = json.loads(registry.path("n1").read_text())
    del doc["created"]
    registry.path("n1").write_text(json.dumps(doc))
    assert main(["lab", "status"]) == 0
    assert "age=unknown" in capsys.readouterr().out


# --- 8. the journal is found without --db ------------------------------------------------------------

def test_restore_without_a_journal_says_where_it_looked_and_creates_nothing(tmp_path, monkeypatch, capsys):
    inventory = tmp_path / "lab.toml"
    inventory.write_text('[client]\nssh = "root@192.0.2.5"\n[server]\nssh = "root@192.0.2.6"\n'
                         'test_address = "198.18.2.10"\n')
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("LINERATE_DB")
    assert main(["testbed", "restore", str(inventory)]) == 0
    out = capsys.readouterr().out
    assert "nothing to restore (looked in " in out and str(tmp_path / "journal") in out
    assert not (tmp_path / "linerate.db").exists() and not (tmp_path / "journal").exists()


def test_the_journal_is_keyed_by_the_testbed_not_the_results_db(tmp_path):
    journal = Journal(KEY)
    entry = journal.add("dut", "sysctl", "net.ipv4.ip_default_ttl", "64", "50")
    again = Journal(KEY, create=False)
    assert again.path == tmp_path / "journal" / f"{KEY}.db" and [e["id"] for e in again.open_entries()] == [entry]
    assert stat.S_IMODE((tmp_path / "journal").stat().st_mode) == 0o700


# --- 9. the smaller items --------------------------------------------------------------------------

EXPERIMENT = 'name = "x"\nduration_s = 1\n'


@pytest.mark.parametrize("kind", ["directory", "fifo", "devnull", "foreign", "newer", "dangling"])
def test_run_dry_run_checks_the_db(tmp_path, capsys, kind):
    import sqlite3

    exp = tmp_path / "x.toml"
    exp.write_text(EXPERIMENT)
    path = tmp_path / "x.db"
    if kind == "directory":
        path.mkdir()
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "devnull":
        path = Path("/dev/null")
    elif kind in ("foreign", "newer"):
        conn = sqlite3.connect(path)
        conn.execute("CREATE TABLE other (x)" if kind == "foreign" else "CREATE TABLE experiments (x)")
        if kind == "newer":
            conn.execute("PRAGMA application_id = 1279346276")
            conn.execute("PRAGMA user_version = 999")
        conn.commit()
        conn.close()
    else:
        path.symlink_to(tmp_path / "target.db")
    one_line_exit_2(["run", str(exp), "--dry-run", "--db", str(path)], capsys)
    assert not (tmp_path / "target.db").exists()


def test_a_dangling_db_link_never_creates_its_target(tmp_path):
    link = tmp_path / "r.db"
    link.symlink_to(tmp_path / "elsewhere.db")
    with pytest.raises(ConfigError, match="symbolic link"):
        Store(link)
    assert not (tmp_path / "elsewhere.db").exists()


@pytest.mark.parametrize("text, says", [
    ('retry_backoff_s = "0"', "retry_backoff_s"),
    ('firewall = "stateful "', "spaces"),
    ('[axes]\ncongestion = ["nat\\n"]', "control character"),
])
def test_lenient_toml_is_refused(tmp_path, capsys, text, says):
    exp = tmp_path / "x.toml"
    exp.write_text(EXPERIMENT + text + "\n")
    assert says in one_line_exit_2(["run", str(exp), "--dry-run"], capsys)


def test_a_congestion_control_the_kernel_lacks_fails_preflight(tmp_path, capsys):
    exp = tmp_path / "x.toml"
    exp.write_text(EXPERIMENT + '[axes]\ncongestion = ["bogus"]\n')
    assert main(["run", str(exp), "--dry-run"]) == 2
    err = capsys.readouterr().err
    assert "preflight failed" in err and "bogus" in err and "Traceback" not in err


@pytest.mark.parametrize("image", ["text", "fifo", "missing"])
def test_own_image_dry_run_checks_the_file(tmp_path, capsys, image):
    path = tmp_path / "fw.qcow2"
    if image == "text":
        path.write_text("not a disk\n" * 100)
    elif image == "fifo":
        os.mkfifo(path)
    exp = tmp_path / "x.toml"
    exp.write_text(EXPERIMENT + f'dut = "vm"\ndut_image = "{path}"\ndut_os = "opnsense"\n')
    assert main(["run", str(exp), "--dry-run"]) == 2
    err = capsys.readouterr().err
    assert "dut_image" in err and "Traceback" not in err


def test_rfc2544_name_is_a_name_and_markdown_names_are_inert(tmp_path, capsys):
    assert "--name" in one_line_exit_2(["rfc2544", "--name", "<img src=x onerror=alert(1)>"], capsys)
    from linerate.report.layout import md_name

    assert md_name("<img src=x onerror=alert(1)>") == "&lt;img src=x onerror=alert(1)&gt;"


def test_cli_subprocess_no_traceback_on_counter_overflow_in_import(tmp_path):
    path = iperf3_file(tmp_path, lambda d: d["end"]["sum_sent"].update(retransmits=123456789))
    path.write_text(path.read_text().replace("123456789", "9" * 5000))  # past Python's 4,300-digit limit
    proc = subprocess.run([sys.executable, "-m", "linerate", "import", str(path), "--label", "x",
                           "--db", str(tmp_path / "i.db")], capture_output=True, text=True)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr and len(proc.stderr.splitlines()) == 1


def test_a_malformed_scratch_entry_is_set_aside_and_the_rest_restored(tmp_path):
    """A journal row naming a scratch directory linerate never makes (a hand-edited or damaged journal)
    goes to needs-hand with nothing to run (no rm -rf of someone else's path); the change journaled
    before it is still put back."""
    from linerate.dut.linux import LinuxDriver
    from linerate.testbed.ssh_restore import restore_journal

    journal = Journal(KEY)
    journal.add("dut", "sysctl", "net.ipv4.ip_forward", "1", "0")
    journal.add("client", "scratch", "/tmp/linerate-abc-ZZZZ", "", "")
    dut = FakeExecutor("dut").respond(["sysctl", "-n", "net.ipv4.ip_forward"], "1\n").respond(["sysctl", "-w"])
    client = FakeExecutor("client")
    done = restore_journal(None, journal, {"dut": dut, "client": client}, LinuxDriver())
    assert done == ["dut: sysctl net.ipv4.ip_forward back to 1"] and client.calls == []
    [hand] = journal.hand_entries()
    assert hand["kind"] == "scratch" and "rm" not in hand["manual"]


@pytest.mark.parametrize("damage,said", [
    ("DROP TABLE trials", "no trials table"),
    ("ALTER TABLE experiments RENAME COLUMN name TO nm", "lacks the column(s) name"),
    ("UPDATE trials SET throughput_bps = 'abc'", "trials.throughput_bps hold text or an infinite value where it stores numbers"),
    ("UPDATE trials SET telemetry = '['", "trials.telemetry hold text that is not the JSON"),
    ("UPDATE trials SET flags = '{{'", "trials.flags hold text that is not the JSON"),
    ("ALTER TABLE trials RENAME COLUMN throughput_bps TO tput", "lacks the column(s) throughput_bps"),
    ("UPDATE cells SET params = '\"x\"'", "cells.params hold text that is not the JSON object"),
    ("UPDATE trials SET telemetry = '[]'", "trials.telemetry hold text that is not the JSON object"),
    ("CREATE TRIGGER t BEFORE INSERT ON trials BEGIN SELECT RAISE(ABORT, 'no'); END", "trigger t"),
    ("CREATE VIEW v AS SELECT 1", "view v"),
    ("UPDATE trials SET throughput_bps = 1e999", "trials.throughput_bps hold text or an infinite value"),
])
@pytest.mark.parametrize("command", [["list"], ["report", "exp", "--format", "html"], ["diagnose", "exp"],
                                     ["compare", "exp", "exp"]])
def test_a_database_damaged_at_the_current_schema_is_one_line_and_left_alone(db, tmp_path, capsys, damage, said,
                                                                           command):
    """A file at linerate's schema version whose tables, columns or values were changed by something else:
    every command refuses it in one line naming what is wrong, and the file is not altered."""
    import sqlite3

    conn = sqlite3.connect(db)
    conn.execute(damage)
    conn.commit()
    conn.close()
    dump = lambda: list(sqlite3.connect(db).iterdump())  # noqa: E731 - tables, columns and rows
    before = dump()
    err = one_line_exit_2([*command, "--db", str(db)], capsys)
    assert "is damaged" in err and said in err, err
    assert dump() == before


def test_a_stored_terminal_escape_is_never_written_raw_into_an_html_report(db, tmp_path):
    """A DUT's name or error text with an ESC sequence: the HTML file shows it as \\x1b, text a terminal
    that prints the file cannot act on."""
    import sqlite3

    conn = sqlite3.connect(db)
    conn.execute("UPDATE trials SET status = 'failed', error = ? WHERE id = (SELECT MIN(id) FROM trials)",
                 (f"iperf3 on the DUT printed {ESCAPES}",))
    conn.commit()
    conn.close()
    out = tmp_path / "r.html"
    assert main(["report", "exp", "--db", str(db), "--format", "html", "-o", str(out)]) == 0
    text = out.read_text()
    assert "\x1b" not in text and "\x07" not in text


def test_process_and_nginx_rows_outside_a_run_directory_are_never_acted_on(tmp_path):
    """Journal rows naming a pid file or an nginx directory that is not inside a scratch directory linerate
    made (a planted link /tmp/linerate-x -> elsewhere, a file holding an integer): set aside, nothing run."""
    from linerate.testbed.ssh_restore import restore_journal

    journal = Journal(KEY)
    journal.add("server", "nginx", "/tmp/linerate-advvictim/", "", "")
    journal.add("server", "process", str(tmp_path / "num"), "", "")
    server = FakeExecutor("server")
    assert restore_journal(None, journal, {"server": server}, None) == [] and server.calls == []
    assert {h["kind"] for h in journal.hand_entries()} == {"nginx", "process"}


def test_lab_down_leaves_a_lab_in_use_by_a_live_process_alone(monkeypatch, capsys):
    """`lab down` of a lab a running `run` holds removed it under the run: its remaining trials failed and it
    still ended 'done' with exit 0. A record whose owner is alive is left alone (lab/registry.py)."""
    from types import SimpleNamespace

    from linerate.process import ProcessRef

    removed = []
    lab = SimpleNamespace(record=SimpleNamespace(owner=ProcessRef.me()), down=lambda: removed.append("lab") or [])
    monkeypatch.setattr("linerate.testbed.base.find_lab", lambda name, registry: lab)
    err = one_line_exit_2(["lab", "down", "busy1"], capsys)
    assert "in use by pid" in err and removed == []
    lab.record.owner = None  # kept on purpose (`lab up`): lab down removes it
    assert main(["lab", "down", "busy1"]) == 0 and removed == ["lab"]


@pytest.mark.parametrize("host", ["198.19.250.06", "3323197958", "0xc613fa06", "198.19.64006"])
def test_an_ipv4_address_in_a_form_other_than_dotted_quad_is_refused_before_anything(tmp_path, capsys, host):
    """inet_aton reads these as 198.19.250.6 (ssh reaches it), ipaddress and asyncssh's known_hosts
    matching do not: a run recorded an experiment, then died with a traceback."""
    inventory = tmp_path / "lab.toml"
    inventory.write_text(f'[client]\nssh = "root@198.19.250.2"\n[server]\nssh = "root@198.19.250.10"\n'
                         f'test_address = "198.18.2.10"\n[dut]\nssh = "root@{host}"\nos = "linux"\n')
    err = one_line_exit_2(["testbed", "check", str(inventory)], capsys)
    assert "dut.ssh" in err and "write it as a.b.c.d" in err
    assert not (tmp_path / "journal").exists()
