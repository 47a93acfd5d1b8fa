from pathlib import Path

import pytest

from linerate.errors import ConfigError

from linerate.experiment.importer import check_label, parse_files, store_parsed
from linerate.report.data import build_report
from linerate.store import Store


def import_files(store, paths, label):
    """What `linerate import` does: every file parsed (all or nothing), then stored under the label."""
    return store_parsed(store, parse_files(paths), check_label(label))


def test_a_file_that_is_not_iperf3_json_refuses_the_whole_import(tmp_path, data_dir):
    files = sorted((data_dir / "iperf3").glob("*.json")) + [data_dir / "iperf3" / "error_bad_option.txt"]
    store = Store(tmp_path / "i.db")
    with pytest.raises(ConfigError, match="error_bad_option.txt: .*not JSON"):
        import_files(store, files, "hand-run")
    assert store.experiments() == []


def test_import_good_and_error_files(tmp_path, data_dir):
    files = sorted((data_dir / "iperf3").glob("*.json"))
    store = Store(tmp_path / "i.db")
    outcome = import_files(store, files, "hand-run")
    errors = {Path(p).name: m for p, m in outcome.errors}
    assert set(errors) == {"error_connection_refused_rc0.json", "error_server_busy.json"}
    assert "Connection refused" in errors["error_connection_refused_rc0.json"]
    assert outcome.stored_ok == len(files) - 2
    rows = store.conn.execute("SELECT throughput_bps, raw FROM trials WHERE status='ok'").fetchall()
    import json
    for bps, raw in rows:
        doc = json.loads(raw)
        assert bps == doc["end"]["sum_received"]["bits_per_second"]
    report = build_report(store, "hand-run")
    streams = {c.params["streams"] for c in report.cells if c.summary.n}
    directions = {c.params["direction"] for c in report.cells if c.summary.n}
    assert streams >= {1, 2, 4} and directions == {"forward", "reverse", "bidir"}
