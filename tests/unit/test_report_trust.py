"""Numbers a reader can trust: compare cell by cell, clipped intervals, marked small samples,
precision targets, formula-safe CSV, escaped Markdown, the above-ceiling flag."""

import csv
import io
import json

import pytest

from linerate.errors import ConfigError
from linerate.experiment.ceiling import ABOVE_CEILING, ceiling_bps, ceiling_flags
from linerate.model import Trial, TrialParams
from linerate.report.compare import compare_selections
from linerate.report.data import build_report
from linerate.report.exporters import serializer
from linerate.stats import summarize
from linerate.store import Store


def add_cell(store, exp_id, params, values):
    from linerate.store.db import cell_key

    key = cell_key(params)
    cell_id = store.ensure_cells(exp_id, [params])[key]
    for rep, value in enumerate(values, 1):
        store.add_trial(cell_id, rep, 1, Trial("ok", TrialParams(), ("iperf3",), throughput_bps=value), final=True)


@pytest.fixture
def store(tmp_path):
    store = Store(tmp_path / "r.db")
    exp = store.create_experiment("fw", "run", {"axes": {}, "precision": 0.01})
    # IPv4 is fast and unaffected by the firewall; IPv6 is slow and much slower with it
    add_cell(store, exp, {"family": 4, "streams": 1, "firewall": "none"}, [940e6, 941e6, 939e6])
    add_cell(store, exp, {"family": 4, "streams": 1, "firewall": "stateful"}, [940e6, 939e6, 941e6])
    add_cell(store, exp, {"family": 6, "streams": 1, "firewall": "none"}, [500e6, 505e6, 495e6])
    add_cell(store, exp, {"family": 6, "streams": 1, "firewall": "stateful"}, [300e6, 310e6, 290e6])
    add_cell(store, exp, {"family": 4, "streams": 4, "firewall": "=cmd|' /C calc'!A0"}, [1e8, 9e8])
    return store


def test_compare_pairs_cells_and_never_pools(store):
    result = compare_selections(store, "fw:firewall=none", "fw:firewall=stateful")
    by_label = {p.label: p for p in result.pairs}
    assert set(by_label) == {"IPv4 1 stream", "IPv6 1 stream"}
    assert not by_label["IPv4 1 stream"].comparison.significant
    v6 = by_label["IPv6 1 stream"].comparison
    assert v6.significant and v6.difference == pytest.approx(-200e6)
    # pooled, the two families would have shown a 100 Mbit/s "effect" with a huge variance instead
    assert "IPv6 1 stream" in result.render() and "slower" in result.render()


def test_compare_unknown_key_and_no_partner(store):
    with pytest.raises(ConfigError, match="'firewal' is not a parameter"):
        compare_selections(store, "fw:firewal=none", "fw:firewall=stateful")
    with pytest.raises(ConfigError, match="matches no cell"):
        compare_selections(store, "fw:firewall=pf", "fw:firewall=stateful")


def test_small_samples_clip_at_zero_and_are_marked(store):
    s = summarize([1e8, 9e8])  # t(0.975, 1) = 12.7: the raw interval reaches far below zero
    assert s.ci_low == 0.0 and s.ci_high > s.mean
    report = build_report(store, "fw")
    small = [c for c in report.cells if c.summary.n == 2][0]
    assert small.few_trials and small.summary.ci_low == 0.0
    assert "n=2 (under 3): CI unreliable" in serializer("md")(report)
    assert json.loads(serializer("json")(report))["cells"][-1]["few_trials"] is True


def test_precision_target_reported(store):
    report = build_report(store, "fw")
    reached = {c.params["family"]: c.precision_reached for c in report.cells if c.params["streams"] == 1}
    assert reached[4] is True and reached[6] is False  # 0.1% vs ~2-4% relative half-width
    assert "precision target ±1% of the mean reached in 2 of 5 cells" in serializer("md")(report)


def test_csv_formula_cells_are_neutralised_and_markdown_escaped(store):
    report = build_report(store, "fw")
    rows = list(csv.reader(io.StringIO(serializer("csv")(report))))
    firewall = rows[0].index("firewall")
    assert rows[-1][firewall] == "'=cmd|' /C calc'!A0"
    md = serializer("md")(report)
    assert "=cmd\\|' /C calc'!A0" in md  # the pipe cannot open a new column
    table = [line for line in md.splitlines() if line.startswith("|")]
    assert len({line.count("|") - line.count("\\|") for line in table}) == 1


def test_above_ceiling_flag():
    cell = {"link_rate": "1g", "mtu": 1500, "family": 4, "protocol": "tcp", "duration_s": 8}
    ceiling = ceiling_bps(cell)
    assert ceiling == pytest.approx(941.48e6, rel=1e-4)
    at = Trial("ok", TrialParams(), (), throughput_bps=ceiling * 0.999)
    above = Trial("ok", TrialParams(), (), throughput_bps=ceiling * 1.02)
    assert ceiling_flags(cell, at) == [] and ceiling_flags(cell, above) == [ABOVE_CEILING]
    assert ceiling_flags({**cell, "link_rate": "none"}, above) == []


def test_a_real_testbeds_csv_leaves_out_the_axes_its_hosts_decide(tmp_path):
    from linerate.report.data import build_report
    from linerate.report.exporters import serializer
    from linerate.store import Store
    from linerate.store.db import cell_key
    from linerate.testbed.knobs import NAMESPACE_ONLY
    from linerate.testbed.ssh import SshTestbeds
    from types import SimpleNamespace

    record = SshTestbeds.record(SimpleNamespace(inventory=SimpleNamespace(name="bed")))
    store = Store(tmp_path / "s.db")
    exp = store.create_experiment("ssh", "run", {"axes": {}}, environment=record)
    params = {"family": 4, "streams": 1, "firewall": "none", "mtu": 1500, "dut_sysctls": "default"}
    cell = store.ensure_cells(exp, [params])[cell_key(params)]
    store.add_trial(cell, 1, 1, Trial("ok", TrialParams(), ("iperf3",), throughput_bps=9e8), final=True)
    header = serializer("csv")(build_report(store, exp)).splitlines()[0].split(",")
    assert "dut_sysctls" in header and "streams" in header
    assert not set(header) & set(NAMESPACE_ONLY), header
