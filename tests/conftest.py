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
