"""The one-file HTML report and comparison: contents in order, escaped, self-contained; the
evidence behind it (run order, typical trial, knob differences); Welch's interval of a difference."""

import json
import math
import re
from html.parser import HTMLParser

import numpy as np
import pytest
from scipy import stats as sps

from linerate.model import Trial, TrialParams
from linerate.report.compare import compare_selections
from linerate.report.data import build_report
from linerate.report.evidence import flatten, gather, knob_rows, typical_trial
from linerate.report.html import render_compare, render_report, spark
from linerate.stats import compare
from linerate.store import Store
from linerate.store.db import cell_key
from linerate.traffic.iperf3 import intervals
from tests.conftest import read_data

HOSTILE = '<img src="x.png" onerror="alert(1)">'  # as an experiment name: must stay text
STATE_A = {"offloads": {"dut:lan0": {"tso": "on", "gro": "off"}}, "rps": {"dut:lan0": "1"}}
STATE_B = {"offloads": {"dut:lan0": {"tso": "off", "gro": "off"}}, "rps": {"dut:lan0": "1"}}


def add_cell(store, exp_id, params, values, *, state=None, raw="", start=0.0, errors=()):
    cell_id = store.ensure_cells(exp_id, [params])[cell_key(params)]
    for rep, value in enumerate(values, 1):
        trial = Trial("ok", TrialParams(), ("iperf3",), throughput_bps=value, retransmits=3, raw=raw,
                      telemetry={"dut": {"cpu": [{"cpu": 0, "busy_pct": 80.0, "softirq_pct": 70.0},
                                                 {"cpu": 1, "busy_pct": 20.0, "softirq_pct": 5.0}]}})
        store.add_trial(cell_id, rep, 1, trial, final=True, started_at=start + 10 * rep, lab_state=state)
    for index, message in enumerate(errors, len(values) + 1):
        store.add_trial(cell_id, index, 1, Trial("failed", TrialParams(), ("iperf3",), error=message),
                        final=True, started_at=start + 10 * index + 5)
    return cell_id


@pytest.fixture
def store(tmp_path):
    store = Store(tmp_path / "h.db")
    raw = read_data("iperf3", "tcp_forward_p2_omit1.json")
    text = 'name = "fw"\n# a comment with <b>markup</b>\n[axes]\nfirewall = ["none", "stateful"]\n'
    exp = store.create_experiment(HOSTILE, "run", {"axes": {"firewall": ["none", "stateful"]}}, file_text=text,
                                  environment={"linerate_version": "0.1.0", "kernel": "6.1.0",
                                               "hosts": {"dut": {"os": "FreeBSD 14.0", "cpu": "J4125"}}})
    add_cell(store, exp, {"family": 4, "streams": 1, "firewall": "none"}, [940e6, 941e6, 939e6],
             state=STATE_A, raw=raw, start=0)
    add_cell(store, exp, {"family": 4, "streams": 1, "firewall": "stateful"}, [700e6, 720e6, 710e6],
             state=STATE_B, raw=raw, start=5, errors=["iperf3: <script>boom</script> connection refused"])
    add_cell(store, exp, {"family": 6, "streams": 1, "firewall": "none"}, [900e6], state=STATE_A, start=1)
    add_cell(store, exp, {"family": 6, "streams": 1, "firewall": "stateful"}, [], start=2, errors=["timeout"])
    return store


class Links(HTMLParser):
    def __init__(self):
        super().__init__()
        self.references, self.tables, self.cells, self.tags, self.handlers = [], 0, [], set(), []

    def handle_starttag(self, tag, attrs):
        self.tags.add(tag)
        self.handlers += [name for name, _ in attrs if name.startswith("on")]
        for name, value in attrs:
            if name in ("src", "href", "xlink:href", "action", "poster", "data") and value is not None:
                self.references.append(value)
        if tag == "table":
            self.tables += 1
        if tag == "td":
            self.cells.append(dict(attrs))


def test_report_is_self_contained_escaped_and_in_order(store):
    html = render_report(store, build_report(store, 1, detail=True))
    assert "http://" not in html and "https://" not in html
    links = Links()
    links.feed(html)
    assert links.references and all(ref.startswith(("#", "data:image/png;base64,")) for ref in links.references)
    assert not {"script", "img", "iframe", "link", "object"} & links.tags and not links.handlers
    assert "&lt;img src=" in html  # the hostile experiment name is shown, as text
    assert "&lt;script&gt;boom&lt;/script&gt;" in html  # the failure message, as text
    assert "&lt;b&gt;markup&lt;/b&gt;" in html  # the experiment file, verbatim and inert
    order = [html.index(f'id="{anchor}"') for anchor in ("table", "chart", "run-order", "intervals", "cpu",
                                                            "knobs", "environment", "experiment", "failures")]
    assert order == sorted(order)
    # the table: one <td> per cell with its mean; the all-failed cell says so
    means = {c.get("data-cell-id"): c.get("data-mean-mbps") for c in links.cells if c.get("data-cell-id")}
    assert sorted(float(v) for v in means.values() if v) == [710.0, 900.0, 940.0]
    assert "failed: every repetition (1)" in html
    assert html.count('class="badge warn">n &lt; 3') == 1  # the IPv6 "none" cell has one trial


def test_report_evidence_sections(store):
    html = render_report(store, build_report(store, 1, detail=True))
    # knobs: the firewall profile (declared) and the TSO read-back differ, GRO and RPS do not
    knobs = html[html.index('id="knob-differences"'):html.index("settings were the same")]
    assert "<code>firewall</code>" in knobs and "<code>offloads dut:lan0 tso</code>" in knobs
    assert "gro" not in knobs and "rps" not in knobs
    # intervals of the typical trial come from its stored iperf3 output (omitted warm-up marked)
    assert "omitted (warm-up)" in html and 'class="omitted"' in html
    assert "no iperf3 output stored" in html  # the IPv6 trials have none
    # per-CPU table, environment of the DUT host, versions, both failures in run order
    assert "CPU 0" in html and "80.0%" in html
    assert "host dut" in html and "FreeBSD 14.0" in html
    assert "Run by linerate 0.1.0" in html
    failures = html[html.index('id="failure-list"'):]
    assert failures.index("timeout") < failures.index("connection refused")  # started at 17 s, 50 s


def test_run_order_typical_trial_and_knob_rows(store):
    report = build_report(store, 1, detail=True)
    evidence = gather(store, report)
    positions = [p.position for p in evidence.run_order]
    starts = [p.trial.started_at for p in evidence.run_order]
    assert positions == list(range(1, 10)) and starts == sorted(starts)
    stateful = [c for c in report.cells if c.params["firewall"] == "stateful" and c.params["family"] == 4][0]
    assert typical_trial(stateful).throughput_bps == 710e6  # the median trial
    deviations = [p.deviation_pct for p in evidence.run_order if p.cell_id == stateful.cell_id and p.deviation_pct is not None]
    assert sorted(round(d, 3) for d in deviations) == [round(-10 / 7.1, 3), 0.0, round(10 / 7.1, 3)]
    assert flatten({"a": {"b": 1, "c": [1, 2]}, "d": None}) == {"a b": "1", "a c": "[1,2]", "d": ""}
    differ, same = knob_rows([(stateful, "x"), (stateful, "y")], ["x", "y"], {}, [])
    assert differ == [] and {k.name for k in same} >= {"firewall"}


def test_spark_coordinates():
    flat = spark([5.0, 5.0, 5.0])
    assert {y for _, y in flat.points} == {24.0}  # a flat series sits mid-height
    line = spark([1.0, None, 3.0])
    assert line.points[1] == (120.0, None) and line.points[0][1] > line.points[2][1]  # higher value, smaller y
    assert 'class="failed"' in line.marks() and line.polyline == "0.0,44.0 240.0,4.0"


def test_intervals_parser_reads_sums_and_the_bidir_reverse_half():
    forward = intervals(read_data("iperf3", "tcp_forward_p2_omit1.json"))
    assert forward[0].omitted and not forward[-1].omitted
    assert all(i.bits_per_second > 0 and not i.reverse for i in forward)
    doc = json.loads(read_data("iperf3", "tcp_bidir_p1.json"))
    both = intervals(read_data("iperf3", "tcp_bidir_p1.json"))
    assert [i.reverse for i in both] == [False, True]
    assert both[1].bits_per_second == doc["intervals"][0]["sum_bidir_reverse"]["bits_per_second"]


def test_welch_interval_of_difference_matches_the_formula():
    a, b = [940.0, 941.0, 939.0, 942.0], [700.0, 720.0, 710.0]
    result = compare(a, b)
    va, vb = np.var(a, ddof=1) / len(a), np.var(b, ddof=1) / len(b)
    dof = (va + vb) ** 2 / (va ** 2 / (len(a) - 1) + vb ** 2 / (len(b) - 1))  # Welch-Satterthwaite
    half = sps.t.ppf(0.975, dof) * math.sqrt(va + vb)
    diff = np.mean(b) - np.mean(a)
    assert result.difference_ci == pytest.approx((diff - half, diff + half))


def test_compare_html_per_cell_with_p_values_and_too_few_trials(store):
    result = compare_selections(store, f"{HOSTILE}:firewall=none", f"{HOSTILE}:firewall=stateful")
    html = render_compare(result, store)
    assert "http://" not in html and "<img" not in html
    sides = html[html.index('id="side-differences"'):html.index('id="pairs"')]
    assert "<code>firewall</code>" in sides and "stateful" in sides
    v4 = re.search(r'<tr data-pair="IPv4 1 stream">(.*?)</tr>', html, re.S).group(1)
    p_value = float(re.search(r'data-p="([^"]+)"', v4).group(1))
    assert p_value == pytest.approx(sps.ttest_ind([700e6, 720e6, 710e6], [940e6, 941e6, 939e6],
                                                  equal_var=False).pvalue)
    assert "significant: B slower" in v4 and "-230.0" in v4
    v6 = re.search(r'<tr data-pair="IPv6 1 stream">(.*?)</tr>', html, re.S).group(1)
    assert "too few trials" in v6 and "A n=1, B n=0" in v6


def test_two_experiments_differing_only_in_a_fixed_value_pair_cell_by_cell(tmp_path):
    store = Store(tmp_path / "two.db")
    for name, firewall, values in (("fwnone", "none", [940e6, 941e6]), ("fwrules", "rules:1000", [800e6, 810e6])):
        exp = store.create_experiment(name, "run", {"axes": {"family": [4, 6]}, "fixed": {"firewall": firewall}})
        for family in (4, 6):
            add_cell(store, exp, {"family": family, "streams": 1, "firewall": firewall}, values)
    result = compare_selections(store, "fwnone", "fwrules")
    assert [p.label for p in result.pairs] == ["IPv4 1 stream", "IPv6 1 stream"] and not result.unpaired
    assert result.side_differences() == [("firewall", "none", "rules:1000")]
    assert all(p.comparison.difference == pytest.approx(-135.5e6) for p in result.pairs)


def test_an_experiment_whose_trials_all_failed_still_renders(tmp_path):
    store = Store(tmp_path / "f.db")
    exp = store.create_experiment("all-failed", "run", {"axes": {}}, environment={})
    add_cell(store, exp, {"family": 4, "streams": 1, "firewall": "none"}, [], errors=["iperf3: connection refused"])
    html = render_report(store, build_report(store, exp, detail=True))
    assert "connection refused" in html and "mean throughput per cell" not in html.lower()
