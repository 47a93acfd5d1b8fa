import os
import signal
from pathlib import Path

import pytest


def pytest_configure(config):
    """The suite asserts what linerate does with SIGHUP and SIGINT as a terminal starts it. A run started with
    them ignored (nohup, a background job of a script) would hand that on to every command the tests start, and
    linerate keeps an ignored SIGHUP/SIGINT ignored (lab/signals.py): reset them, here and for those commands."""
    if signal.getsignal(signal.SIGHUP) == signal.SIG_IGN:
        signal.signal(signal.SIGHUP, signal.SIG_DFL)
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    if not hasattr(config, "workerinput"):  # once, in the process that prints the summary (not each xdist worker)
        config.linerate_found_before = found_before_this_run()


def netns_names() -> set[str]:
    return set(os.listdir("/run/netns")) if os.path.isdir("/run/netns") else set()


def found_before_this_run() -> str:
    """What this run shares the machine with: labs and guests another (killed) run left here. They take CPU
    from the timing-sensitive tests and their names from fixed-name ones; the tests never remove them (each
    removes exactly what it created), so the summary says they were there."""
    names = sorted(name for name in netns_names() if name.startswith(("lr-", "lrt-")))
    guests = []
    for entry in Path("/proc").iterdir():
        if not (entry.name.isascii() and entry.name.isdecimal()):
            continue
        try:
            program = (entry / "cmdline").read_bytes().split(b"\0")[0]
        except OSError:
            continue
        if program.endswith(b"qemu-system-x86_64"):
            guests.append(entry.name)
    if not (names or guests):
        return ""
    shown = " ".join(names[:6]) + (" ..." if len(names) > 6 else "")
    return (f"found before this run: {len(names)} lab namespaces ({shown or 'none'}), {len(guests)} qemu processes"
            + (f" (pids {' '.join(guests[:6])})" if guests else ""))


def pytest_terminal_summary(terminalreporter, config):
    found = getattr(config, "linerate_found_before", "")
    if found:
        terminalreporter.write_line(found)


DATA = Path(__file__).parent / "data"


@pytest.fixture
def data_dir() -> Path:
    return DATA


def read_data(*parts: str) -> str:
    return DATA.joinpath(*parts).read_text()


def capture(name: str) -> str:
    """A recorded real output under tests/data, without its first line (which names the source)."""
    lines = DATA.joinpath(name).read_text().splitlines(keepends=True)
    assert lines[0].startswith("# source: "), f"{name} must name its source on line 1"
    return "".join(lines[1:])


@pytest.fixture(autouse=True)
def _state_dir(tmp_path, monkeypatch):
    # Every test gets its own lab registry, so tests never see (or clean) each other's labs.
    monkeypatch.setenv("LINERATE_STATE_DIR", str(tmp_path / "labs"))
    monkeypatch.setenv("LINERATE_DB", str(tmp_path / "linerate.db"))


def is_root() -> bool:
    return os.geteuid() == 0


@pytest.fixture(autouse=True)
def _journal_dir(tmp_path, monkeypatch):
    # The DUT journal of every test lives in that test's own directory, never in /var/lib/linerate.
    monkeypatch.setenv("LINERATE_JOURNAL_DIR", str(tmp_path / "journal"))
