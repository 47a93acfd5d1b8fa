"""A kept lab (`lab up`) that a command runs on with --lab is in use for as long as that command
lives: `lab down` and `lab clean --all` leave it alone meanwhile (they removed it under a running
trial, which then failed), and a command is refused the lab while it is being removed."""

import os
import subprocess
import sys
from types import SimpleNamespace

import pytest

from linerate.cli import main
from linerate.errors import ConfigError
from linerate.lab.registry import LabRecord, Registry

HOLDER = """import sys, time
from linerate.lab.registry import Registry
Registry(sys.argv[1]).hold_use(sys.argv[2])
print("held", flush=True)
time.sleep(60)
"""


@pytest.fixture
def kept(tmp_path):
    registry = Registry(tmp_path / "labs")
    registry.create(LabRecord("kept1", owner=None, namespaces=["lrt-kept1-client"]))
    return registry


@pytest.fixture
def user(kept):
    """Another process running on the lab (as `run --lab kept1` does), until the test ends; killed
    with SIGKILL, as a run can be."""
    proc = subprocess.Popen([sys.executable, "-c", HOLDER, str(kept.state_dir), "kept1"], stdout=subprocess.PIPE,
                            text=True, env={**os.environ})
    assert proc.stdout.readline().strip() == "held"
    yield proc
    proc.kill()
    proc.wait()


def test_lab_down_leaves_a_kept_lab_a_command_runs_on_alone(kept, user, monkeypatch, capsys):
    removed = []
    lab = SimpleNamespace(record=kept.load("kept1"), down=lambda: kept.remove("kept1") or removed.append("kept1") or [])
    monkeypatch.setattr("linerate.testbed.base.find_lab", lambda name, registry: lab)
    assert main(["lab", "down", "kept1"]) == 2
    err = capsys.readouterr().err
    assert "in use by a linerate command running on it (--lab)" in err and len(err.strip().splitlines()) == 1
    assert removed == []
    user.kill()  # SIGKILL: the kernel lets go of its use, nothing is left to clean up
    user.wait()
    assert main(["lab", "down", "kept1"]) == 0 and removed == ["kept1"]
    assert not kept.path("kept1").exists() and not kept.use_lock_path("kept1").exists()  # its lock file went with it


def test_lab_clean_all_leaves_a_kept_lab_in_use_and_says_why(kept, user, monkeypatch, capsys):
    removed = []
    monkeypatch.setattr("linerate.lab.registry.vet", lambda record, state_dir=None: [])
    monkeypatch.setattr("linerate.testbed.namespace.remove_record",
                        lambda record, registry: removed.append(record.lab_id) or [])
    assert main(["lab", "clean", "--all"]) == 1
    assert "left lab kept1 untouched: in use by a linerate command" in capsys.readouterr().out
    assert removed == []
    user.kill()
    user.wait()
    assert main(["lab", "clean", "--all"]) == 0 and removed == ["kept1"]


def test_lab_status_says_in_use(kept, user, capsys):
    assert main(["lab", "status", "--json"]) == 0
    assert '"state": "in use"' in capsys.readouterr().out


def test_a_command_is_refused_a_lab_being_removed(kept):
    with kept.removing("kept1"):
        with pytest.raises(ConfigError, match="is being removed"):
            Registry(kept.state_dir).hold_use("kept1")


def test_several_commands_may_use_one_kept_lab(kept, user):
    probe = subprocess.run([sys.executable, "-c", HOLDER.replace("time.sleep(60)", ""), str(kept.state_dir), "kept1"],
                           capture_output=True, text=True, timeout=60)
    assert probe.returncode == 0 and probe.stdout.strip() == "held", probe.stderr
    assert kept.in_use("kept1")
