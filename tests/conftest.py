import os
from pathlib import Path

import pytest

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
