"""What scripts and new users rely on at the CLI's edge: every JSON document carries "schema_version"
(list, compare, import, export, lab clean/status, testbed restore, calc, audit ...), `export
--iperf3-json` writes the stored iperf3 -J text unchanged, shell completion comes from the parser,
`demo --help` says what the demo runs, and a command whose extra is missing says in one line what to
install (exit 2)."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from linerate import extras
from linerate.cli import main
from linerate.schema import SCHEMA_VERSION

ROOT = Path(__file__).resolve().parents[2]
IPERF3 = ROOT / "tests" / "data" / "iperf3"


def run_json(capsys, argv: list[str]) -> tuple[int, dict]:
    code = main(argv)
    out = capsys.readouterr().out
    doc = json.loads(out)
    assert doc["schema_version"] == SCHEMA_VERSION and next(iter(doc)) == "schema_version"
    return code, doc


@pytest.fixture
def store_with_imports(tmp_path, capsys):
    db = str(tmp_path / "results.db")
    assert main(["import", str(IPERF3 / "tcp_forward_p1.json"), str(IPERF3 / "tcp_ipv6_p4.json"),
                 "--label", "before", "--db", db]) == 0
    assert main(["import", str(IPERF3 / "tcp_forward_p1.json"), str(IPERF3 / "tcp_reverse_p1.json"),
                 "--label", "after", "--db", db]) == 0
    capsys.readouterr()
    return db


def test_import_json_names_the_experiment_and_counts(tmp_path, capsys):
    code, doc = run_json(capsys, ["import", str(IPERF3 / "tcp_forward_p1.json"), "--label", "one",
                                  "--db", str(tmp_path / "r.db"), "--json"])
    assert code == 0 and doc["experiment"] == "one" and doc["imported"] == 1 and doc["errors"] == []


def test_list_json_lists_every_experiment(store_with_imports, capsys):
    code, doc = run_json(capsys, ["list", "--db", store_with_imports, "--json"])
    assert code == 0 and [e["name"] for e in doc["experiments"]] == ["before", "after"]
    assert doc["experiments"][0]["cells"] == 2 and doc["experiments"][0]["kind"] == "import"


def test_compare_json_has_the_pairs_and_their_samples(store_with_imports, capsys):
    code, doc = run_json(capsys, ["compare", "before", "after", "--db", store_with_imports, "--json"])
    assert code == 0 and doc["a"]["selector"] == "before" and doc["b"]["selector"] == "after"
    pair = next(p for p in doc["pairs"] if p["cell"].startswith("IPv4 1 stream"))
    assert pair["unit"] == "bit/s" and pair["n_a"] == 1 and pair["a"]["mean"] > 1e9 and pair["welch"] is None


def test_compare_json_with_html_is_refused(store_with_imports, capsys):
    assert main(["compare", "before", "after", "--db", store_with_imports, "--json", "--format", "html"]) == 2
    assert "--json" in capsys.readouterr().err


def test_report_json_carries_the_schema_version(store_with_imports, capsys):
    code, doc = run_json(capsys, ["report", "before", "--db", store_with_imports, "--format", "json"])
    assert code == 0 and doc["experiment"]["name"] == "before"


def test_export_writes_each_trials_iperf3_json_as_stored(store_with_imports, tmp_path, capsys):
    target = tmp_path / "out" / "iperf3"
    target.parent.mkdir()
    code, doc = run_json(capsys, ["export", "before", "--iperf3-json", str(target), "--db", store_with_imports,
                                  "--json"])
    assert code == 0 and len(doc["files"]) == 2 and doc["trials_without_output"] == []
    written = sorted(Path(path).read_text() for path in doc["files"])
    originals = sorted((IPERF3 / name).read_text() for name in ("tcp_forward_p1.json", "tcp_ipv6_p4.json"))
    assert written == originals
    assert all(Path(path).name.startswith("trial-") and path.endswith("_ok.json") for path in doc["files"])


def test_export_into_a_file_is_refused_before_any_work(store_with_imports, tmp_path, capsys):
    (tmp_path / "plain").write_text("x")
    assert main(["export", "--iperf3-json", str(tmp_path / "plain"), "--db", store_with_imports]) == 2
    assert "--iperf3-json" in capsys.readouterr().err


@pytest.mark.parametrize("where", ["another user's directory", "a directory others may write",
                                   "a link at a trial's name in my directory"])
def test_export_never_writes_through_a_link_someone_planted(store_with_imports, tmp_path, capsys, where):
    """The export's file names are linerate's: in a directory another user controls, a link at one of them
    would have root overwrite whatever it points at. Refused in one line, before any file is written."""
    import os

    victim = tmp_path / "victim"
    victim.write_text("keep")
    target = tmp_path / "exp"
    target.mkdir(mode=0o755)
    if where == "another user's directory":
        os.chown(target, 65534, 65534) if os.geteuid() == 0 else pytest.skip("needs root to give a directory away")
    elif where == "a directory others may write":
        target.chmod(0o777)
    first = ["export", "before", "--iperf3-json", str(target), "--db", store_with_imports, "--json"]
    if where == "a link at a trial's name in my directory":
        code, doc = run_json(capsys, first)  # learn the names, then plant a link at the last one
        assert code == 0
        for path in doc["files"]:
            Path(path).unlink()
        Path(doc["files"][-1]).symlink_to(victim)
    else:
        (target / "trial-1_cell-1_rep-0_attempt-1_ok.json").symlink_to(victim)
    assert main(first[:-1]) == 2
    assert "--iperf3-json" in capsys.readouterr().err
    assert victim.read_text() == "keep" and [p.name for p in target.iterdir() if not p.is_symlink()] == []


@pytest.mark.parametrize("argv,key", [
    (["calc", "--link", "1g", "--json"], "goodput_bps"),
    (["calc", "--rfc2544", "--json"], "frames"),
    (["lab", "status", "--json"], "labs"),
    (["lab", "clean", "--json"], "removed"),
    (["audit", str(ROOT / "tests" / "data" / "tuning" / "pfsense_config.xml"), "--os", "pfsense", "--json"],
     "findings"),
])
def test_json_documents_carry_the_schema_version(argv, key, capsys):
    _, doc = run_json(capsys, argv)
    assert key in doc


def test_testbed_restore_json_with_nothing_to_restore(tmp_path, capsys):
    inventory = tmp_path / "lab.toml"
    inventory.write_text('[client]\nssh = "root@192.0.2.5"\n[server]\nssh = "root@192.0.2.6"\n'
                         'test_address = "198.18.2.10"\n')
    code, doc = run_json(capsys, ["testbed", "restore", str(inventory), "--json"])
    assert code == 0 and doc["restored"] == [] and doc["still_open"] == 0 and doc["looked_in"]


def test_the_cli_prints_json_only_through_the_schema_helper():
    """json.dumps in cli/ would print a document without "schema_version"; schema.dumps adds it."""
    offenders = []
    for path in sorted((ROOT / "src" / "linerate" / "cli").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr in ("dumps", "dump", "model_dump_json")
                    and not (isinstance(node.func.value, ast.Name) and node.func.value.id == "schema")):
                offenders.append(f"{path.name}:{node.lineno}")
    assert offenders == []


def test_demo_help_says_what_each_demo_runs(capsys):
    from linerate.experiment.builtin import DESCRIPTIONS

    with pytest.raises(SystemExit):
        main(["--help"])
    listing = " ".join(capsys.readouterr().out.split())
    for description in DESCRIPTIONS.values():
        assert description.removeprefix("built-in demo: ").split(", ")[-1] in listing
    assert "1/8 streams" in listing and "1/4 streams x firewall" in listing


def test_completion_script_is_generated_from_the_parser(capsys):
    pytest.importorskip("shtab")
    assert main(["completion", "bash"]) == 0
    script = capsys.readouterr().out
    assert "--iperf3-json" in script and "rfc9693" in script and "--virtio-offloads" in script


def test_a_lab_command_without_the_lab_extra_names_what_to_install(monkeypatch, capsys):
    monkeypatch.setattr(extras, "missing", lambda extra: ["pyroute2"] if extra == "lab" else [])
    assert main(["trial"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "pip install 'linerate-lab[lab]'" in err and "make install" in err


def test_a_read_only_command_does_not_ask_for_the_lab_extra(monkeypatch, capsys):
    monkeypatch.setattr(extras, "missing", lambda extra: list(extras.EXTRAS[extra]))
    assert main(["calc", "--link", "1g"]) == 0


def test_a_missing_optional_module_anywhere_becomes_one_line(monkeypatch, capsys):
    import linerate.cli.calc_cmd as calc_cmd

    def needs_matplotlib(args):
        raise ModuleNotFoundError("No module named 'matplotlib'", name="matplotlib")

    monkeypatch.setattr(calc_cmd, "cmd_calc", needs_matplotlib)
    assert main(["calc"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "pip install 'linerate-lab[plots]'" in err


def test_a_missing_module_that_is_no_extra_keeps_its_traceback(monkeypatch):
    import linerate.cli.calc_cmd as calc_cmd

    def broken(args):
        raise ModuleNotFoundError("No module named 'linerate.gone'", name="linerate.gone")

    monkeypatch.setattr(calc_cmd, "cmd_calc", broken)
    with pytest.raises(ModuleNotFoundError):
        main(["calc"])
