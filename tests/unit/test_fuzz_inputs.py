"""Property-based fuzzing of everything a user hands linerate: experiment TOML, iperf3 -J files,
lab state files and lab options. Each must end in success or in exit 2 with exactly one line on
stderr, no traceback, and nothing created (no database, no state directory, no namespace)."""

import copy
import json
import math
import os
import uuid

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from linerate.cli import main
from linerate.errors import ConfigError
from linerate.experiment.config import parse_experiment
from tests.conftest import read_data

# deadline None and too_slow suppressed: on a loaded 2-CPU machine example generation is slow, not wrong
FUZZ = settings(max_examples=60, deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


def netns() -> set[str]:
    return set(os.listdir("/run/netns")) if os.path.isdir("/run/netns") else set()


def run_cli(capsys, argv):
    before = netns()
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse's own refusals (OneLineParser.error) exit from inside
        code = exc.code
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    assert netns() == before
    return code, captured


def assert_refused(code, captured, *absent):
    assert code == 2, captured.err
    assert captured.err.count("\n") == 1 and captured.err.startswith("linerate: ")
    for path in absent:
        assert not os.path.exists(path), path


# --- experiment files -------------------------------------------------------------------------

toml_scalar = st.one_of(st.integers(min_value=-2**70, max_value=2**70), st.text(max_size=12),
                        st.floats(allow_nan=True, allow_infinity=True), st.booleans())
keys = st.sampled_from(["name", "repetitions", "seed", "duration_s", "omit_s", "precision", "family", "streams",
                        "firewall", "link_rate", "offloads", "mtu", "bogus", "max_retries", "dut_rps"])


def toml_literal(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return "nan" if math.isnan(value) else ("inf" if value == math.inf else "-inf" if value == -math.inf
                                                else repr(value))
    if isinstance(value, str):
        return json.dumps(value)
    return str(value)


@FUZZ
@given(top=st.dictionaries(keys, toml_scalar, max_size=5), axes=st.dictionaries(keys, st.lists(toml_scalar, max_size=3),
                                                                              max_size=3))
def test_experiment_files_exit_2_one_line_and_create_nothing(tmp_path, capsys, top, axes):
    text = "\n".join(f"{k} = {toml_literal(v)}" for k, v in top.items())
    text += "\n[axes]\n" + "\n".join(f"{k} = [{', '.join(map(toml_literal, v))}]" for k, v in axes.items())
    path = tmp_path / "fuzz.toml"
    path.write_text(text)
    try:
        parse_experiment(text, str(path))
    except ConfigError:
        db = tmp_path / "never.db"
        assert_refused(*run_cli(capsys, ["run", str(path), "--db", str(db)]), db, tmp_path / "labs")


@pytest.mark.parametrize("text", [
    "name = 'x'\nseed = 9223372036854775808",  # 2**63: SQLite cannot hold it
    "name = 'x'\nseed = -1",
    "name = 'x'\nx = " + "[" * 5000 + "]" * 5000,
    "name = 'x'\n" + "a." * 3000 + "b = 1",
    "name = 'x'\n[axes]\nlink_rate = ['10t']",
    "name = 'x'\n[axes]\noffloads = ['']",
    "name = 'x'\n[axes]\nfirewall = ['rules:\u00b2']",
    "name = 'x\u001b[31m'",
    "",
])
def test_known_bad_experiment_files(tmp_path, capsys, text):
    path = tmp_path / "bad.toml"
    path.write_text(text)
    db = tmp_path / "never.db"
    code, captured = run_cli(capsys, ["run", str(path), "--db", str(db)])
    assert_refused(code, captured, db)
    assert "\x1b" not in captured.err


@pytest.mark.parametrize("kind", ["devzero", "fifo", "dir"])
def test_special_files_as_input(tmp_path, capsys, kind):
    target = {"devzero": "/dev/zero", "fifo": str(tmp_path / "f"), "dir": str(tmp_path)}[kind]
    if kind == "fifo":
        os.mkfifo(target)
    for argv in (["run", target, "--db", str(tmp_path / "n.db")], ["import", target, "--label", "x",
                                                                     "--db", str(tmp_path / "n.db")],
                 ["audit", target, "--os", "linux"]):
        assert_refused(*run_cli(capsys, argv), tmp_path / "n.db")


# --- iperf3 -J files --------------------------------------------------------------------------

NUMERIC_PATHS = [("end", "sum_received", "bits_per_second"), ("end", "sum_sent", "retransmits"),
                 ("end", "cpu_utilization_percent", "host_total"), ("end", "sum_sent", "bits_per_second"),
                 ("start", "test_start", "num_streams"), ("start", "test_start", "duration"),
                 ("end", "sum_received", "bytes"), ("end", "sum_sent", "packets"), ("start", "timestamp", "timesecs"),
                 ("end", "sum_received", "jitter_ms"), ("start", "connecting_to", "port"), ("end",), ("start",)]
weird = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(min_value=-2**80, max_value=2**80),
                  st.text(max_size=5), st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
                  st.lists(st.integers(), max_size=2), st.booleans(), st.none(), st.just(1e40))


@FUZZ
@given(source=st.sampled_from(["tcp_forward_p1.json", "udp_overload_loss.json", "tcp_bidir_p1.json"]),
       path=st.sampled_from(NUMERIC_PATHS), value=weird)
def test_iperf3_json_fields_validated(tmp_path, capsys, source, path, value):
    doc = json.loads(read_data("iperf3", source))
    node = doc
    for part in path[:-1]:
        node = node.setdefault(part, {})
    node[path[-1]] = copy.deepcopy(value)
    file = tmp_path / "hand.json"
    file.write_text(json.dumps(doc))  # Infinity/NaN are written as JSON's non-standard literals
    db = tmp_path / f"{uuid.uuid4().hex}.db"  # tmp_path is shared by all examples of one test
    code, captured = run_cli(capsys, ["import", str(file), "--label", "fz", "--db", str(db)])
    if code == 2:
        assert_refused(code, captured, db)
        assert str(file) in captured.err
        return
    assert code in (0, 1), captured.err
    report = json.loads(run_cli(capsys, ["report", "fz", "--db", str(db), "--format", "json"])[1].out)
    for cell in report["cells"]:
        for key, figure in cell["stats"].items():
            assert figure is None or (math.isfinite(figure) and figure >= 0), (key, figure)
        assert cell["stats"]["lost_percent_mean"] is None or cell["stats"]["lost_percent_mean"] <= 100


# --- lab state files --------------------------------------------------------------------------

json_value = st.recursive(st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=20)),
                          lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                  st.dictionaries(st.text(max_size=8), inner, max_size=4)),
                          max_leaves=12)
record_like = st.fixed_dictionaries({"lab_id": st.one_of(st.just("ok1"), st.text(max_size=10))},
                                    optional={"namespaces": json_value, "owner": json_value, "servers": json_value,
                                              "mtu": json_value, "kind": json_value, "params": json_value})


@FUZZ
@given(doc=st.one_of(record_like, json_value), raw=st.binary(max_size=64))
def test_state_files_never_traceback_or_get_touched(tmp_path, capsys, monkeypatch, doc, raw):
    state = tmp_path / "labs"
    state.mkdir(exist_ok=True, mode=0o700)
    monkeypatch.setenv("LINERATE_STATE_DIR", str(state))
    (state / "ok1.json").write_text(json.dumps(doc))
    (state / "raw2.json").write_bytes(raw)
    before = {p.name: p.read_bytes() for p in state.iterdir()}
    for argv in (["lab", "status", "--json"], ["lab", "clean"], ["lab", "down", "ok1"]):
        code, captured = run_cli(capsys, argv)
        assert code in (0, 1, 2), captured.err
        if argv[1] == "status":
            json.loads(captured.out)
    after = {p.name: p.read_bytes() for p in state.iterdir()}
    # nothing a crafted file names can exist, so nothing may be removed but a record of a dead
    # owner whose namespaces are all absent (what clean is for) — and never a malformed file
    assert set(after) <= set(before)
    assert after.get("raw2.json", b"") == before["raw2.json"] or "raw2.json" not in after and raw.startswith(b"{")


# --- lab options (the inventory-like input of `lab up` and `trial`) -------------------------------

option_text = st.one_of(st.text(max_size=12), st.sampled_from(["", "10t", "none", "1g", "rules:99999", "all:tso=maybe",
                                                               "default", "$(reboot)", "a;b", "-1"]))


@FUZZ
@given(name=option_text, firewall=option_text, link=option_text, offloads=option_text, mtu=option_text)
def test_lab_options_exit_2_one_line_and_create_nothing(tmp_path, capsys, monkeypatch, name, firewall, link,
                                                        offloads, mtu):
    state = tmp_path / "labs"
    monkeypatch.setenv("LINERATE_STATE_DIR", str(state))
    argv = ["lab", "up", "--dry-run", f"--name={name}", f"--firewall={firewall}", f"--link={link}",
            f"--offloads={offloads}", f"--mtu={mtu}"]
    code, captured = run_cli(capsys, argv)
    if code != 0:
        assert_refused(code, captured, state)
    assert not state.exists()
