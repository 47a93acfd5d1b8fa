"""Experiment files with test = "rfc2544" (and "latency"): validation, repeated searches in shuffled
rounds over simulated paths, every search stored, resume without measuring again, the per-frame-size
report (md/json/csv, plot) and `compare` of two firewall profiles by their NDRs."""

import contextlib
import csv
import io
import itertools
import json
import re

import pytest

from linerate.cli import main
from linerate.errors import ConfigError
from linerate.experiment.config import parse_experiment
from linerate.report.compare import compare_selections
from linerate.experiment.run import run_experiment
from linerate.kinds.rfc2544 import frame_sizes_for, search_plan
from linerate.kinds.rfc2544.plot import write_frame_size_png
from linerate.kinds.rfc2544.search import SearchSettings
from linerate.kinds.rfc2544.report import SERIALIZERS, summarize_searches
from linerate.store import Store
from linerate.testbed.fake import FakeTestbed, FakeTestbeds
from tests.unit.test_rfc2544 import SimulatedPath

FILE = '''name = "pktrate"
test = "rfc2544"
repetitions = 3
duration_s = 1
frame_sizes = [64, "imix", 1518]
link_rate = "1g"
seed = 7
[axes]
firewall = ["none", "rules:1000"]
'''
DUT_FPS = {"none": 300_000, "rules:1000": 20_000}


class Bench:
    """Labs are their params; each search gets a simulated path whose DUT rate wobbles by up to 1%
    from search to search (as a real one does), so the repetitions have a spread."""

    def __init__(self):
        self.wobble = itertools.cycle([1.0, 0.995, 1.01, 0.99, 1.005])
        self.sends = 0
        self.labs = []

    @contextlib.contextmanager
    def lab(self, params):
        self.labs.append(params["firewall"])
        yield BenchTestbed(self, params)

    @contextlib.contextmanager
    def path(self, lab, family):
        path = SimulatedPath(DUT_FPS[lab["firewall"]] * next(self.wobble), 900_000)
        yield path
        self.sends += path.sends


class BenchTestbed(FakeTestbed):
    def __init__(self, bench, params):
        super().__init__(params)
        self.bench = bench

    def packet_path(self, family, generator="auto"):
        return self.bench.path(self.params, family)


def run(store, bench, resume=False):
    experiment = parse_experiment(FILE)
    return run_experiment(experiment, store, FakeTestbeds(bench.lab), file_text=FILE, resume=resume,
                          settings=SearchSettings(1.0, 0.005, settle_s=0.0))


def test_rfc2544_experiment_file_is_validated():
    experiment = parse_experiment(FILE)
    assert [(p["firewall"], family, size) for p, family, size in search_plan(experiment)] == [
        ("none", 4, 64), ("none", 4, "imix"), ("none", 4, 1518), ("rules:1000", 4, 64), ("rules:1000", 4, "imix"),
        ("rules:1000", 4, 1518)]
    six = parse_experiment('name = "v6"\ntest = "rfc2544"\nfamily = 6\n')
    assert frame_sizes_for(six, 6)[0] == 66 and len(frame_sizes_for(six, 6)) == 7
    six_iperf3 = parse_experiment('name = "v6"\ntest = "rfc2544"\nfamily = 6\ngenerator = "iperf3"\n')
    assert frame_sizes_for(six_iperf3, 6)[:2] == [82, 128]  # iperf3's smallest UDP block makes 82-byte IPv6 frames
    for text, problem in (('test = "rfc2544"\nstreams = 4\n', "streams applies to throughput tests"),
                          ('test = "rfc2544"\nframe_sizes = [64]\nfamily = 6\n', "frame_sizes: 64 is not a frame size"),
                          ('frame_sizes = [64]\n', 'frame_sizes applies to test = "rfc2544"'),
                          ('test = "rfc2544"\nframe_sizes = [64, 64]\n', "lists a size twice"),
                          ('test = "rfc2544"\nframe_sizes = ["imox"]\n', "frame_sizes.0"),
                          ('test = "rfc2544"\nframe_sizes = ["imix"]\ngenerator = "iperf3"\n', "IMIX mixes frame sizes"),
                          ('generator = "iperf3"\n', 'generator applies to test = "rfc2544"'),
                          ('test = "rfc2544"\nprecision = 0.05\n', "precision applies to throughput tests"),
                          ('test = "latency"\nlatency = false\n', "drop latency = false"),
                          ('test = "pps"\n', "test: unknown test 'pps'"),
                          ('test = "rfc2544"\nrelative_width = 0.5\n', "relative_width"),
                          ('relative_width = 0.05\n', 'relative_width applies to test = "rfc2544"')):
        with pytest.raises(ConfigError, match=problem):
            parse_experiment('name = "bad"\n' + text)
    assert all(cell["latency"] for cell in parse_experiment('name = "l"\ntest = "latency"\n').cells())
    coarse = parse_experiment('name = "c"\ntest = "rfc2544"\nrelative_width = 0.05\n')
    assert {goal["relative_width"] for goal in SearchSettings(1.0, 0.005, coarse.relative_width).goals()} == {0.05}
    with pytest.raises(ConfigError, match="--relative-width"):
        SearchSettings(1.0, 0.005, 0.0)


def test_searches_repeat_in_shuffled_rounds_and_are_all_stored(tmp_path):
    store, bench = Store(tmp_path / "s.db"), Bench()
    result = run(store, bench)
    assert len(result.results) == 18 and sorted(bench.labs) == ["none", "rules:1000"]  # both labs up once
    searches = [json.loads(row["params"]) for row in store.searches(result.experiment_id)]
    assert len(searches) == 18 and {s["repetition"] for s in searches} == {1, 2, 3}
    rounds = [[(s["firewall"], s["frame_bytes"]) for s in searches if s["repetition"] == r] for r in (1, 2, 3)]
    assert all(sorted(r, key=str) == sorted(rounds[0], key=str) for r in rounds) and len({tuple(r) for r in rounds}) > 1  # shuffled
    assert store.experiment(result.experiment_id).status == "done"

    # resume of a finished run measures nothing and finds the same figures (replayed from the store)
    before = {(json.dumps(r.to_dict(), sort_keys=True)) for r in result.results}
    again_bench = Bench()
    again = run(store, again_bench, resume=True)
    assert again.resumed and again.experiment_id == result.experiment_id and again_bench.sends == 0
    assert {json.dumps(r.to_dict(), sort_keys=True) for r in again.results} == before
    assert len(store.searches(result.experiment_id)) == 18


def test_report_and_compare_by_ndr(tmp_path):
    store = Store(tmp_path / "s.db")
    result = run(store, Bench())
    summaries = summarize_searches(store, result.experiment_id)
    by = {(s.params["firewall"], s.frame_bytes): s for s in summaries}
    assert len(by) == 6 and all(s.ndr.n == 3 and s.pdr.n == 3 for s in summaries)
    none64, rules64 = by[("none", 64)], by[("rules:1000", 64)]
    assert 0.98 * 300_000 < none64.ndr.mean < 1.02 * 300_000 and none64.ndr.ci_low < none64.ndr.mean
    assert rules64.ndr.mean < 21_000 and rules64.configuration == "firewall rules:1000"
    assert by[("none", 1518)].limits == {"line rate": 3}
    experiment = store.experiment(result.experiment_id)
    md = SERIALIZERS["md"](experiment, summaries)
    assert "| 64 B (max 1,488,095) |" in md and "firewall rules:1000" in md and "n=3" in md
    # IMIX sits between 64 and 1518 B, at its mean frame's theoretical rate, with its mix spelled out
    rows = [line.split("|")[1].strip() for line in md.splitlines() if line.startswith("| ") and "max" in line]
    assert rows == ["64 B (max 1,488,095)", "IMIX (max 334,374)", "1518 B (max 81,274)"]
    assert "IMIX = 7 x 64 + 4 x 570 + 1 x 1518 B (mean 353.8 B)" in md
    assert by[("none", "imix")].limits == {"DUT": 3} and by[("rules:1000", "imix")].ndr.mean < 21_000
    doc = json.loads(SERIALIZERS["json"](experiment, summaries))
    assert len(doc["frame_sizes"]) == 6 and doc["frame_sizes"][0]["ndr"]["n"] == 3
    rows = list(csv.DictReader(io.StringIO(SERIALIZERS["csv"](experiment, summaries))))
    assert {row["firewall"] for row in rows} == {"none", "rules:1000"} and rows[0]["ndr_fps_n"] == "3"
    png = tmp_path / "f.png"
    write_frame_size_png(experiment, summaries, str(png))
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

    compared = compare_selections(store, "pktrate:firewall=none", "pktrate:firewall=rules:1000")
    pairs = {pair.label: pair for pair in compared.pairs}
    assert set(pairs) == {"IPv4 64 B NDR", "IPv4 IMIX NDR", "IPv4 1518 B NDR"}
    small = pairs["IPv4 64 B NDR"].comparison
    assert small.significant and small.relative < -0.9 and small.p_value < 0.001
    assert "frames/s" in compared.render() and "slower" in compared.render()


def test_cli_reports_rfc2544_experiments(tmp_path, capsys):
    store = Store(tmp_path / "s.db")
    run(store, Bench())
    page = tmp_path / "r.html"
    assert main(["report", "pktrate", "--db", str(tmp_path / "s.db"), "--format", "html", "-o", str(page)]) == 0
    html = page.read_text()
    cells = re.findall(r'data-ndr-fps="([\d.]+)" data-n="3"', html)
    assert len(cells) == 6 and 0.98 * 300_000 < float(cells[0]) < 1.02 * 300_000  # 64 B, firewall none first
    assert "IMIX = 7 x 64 + 4 x 570 + 1 x 1518 B (mean 353.8 B)" in html and "<svg" in html and "<script" not in html
    assert html.count("<details>") == 18 and html.count("<td>ceiling</td>") == 18  # every search, its ceiling probe
    assert "limit: line rate" in html and "limit: DUT" in html and 'name = &#34;pktrate&#34;' in html
    assert main(["report", "pktrate", "--db", str(tmp_path / "s.db")]) == 0
    assert "RFC 2544 throughput" in capsys.readouterr().out
    assert main(["list", "--db", str(tmp_path / "s.db")]) == 0
    assert "18 searches" in capsys.readouterr().out
    experiment = tmp_path / "p.toml"
    experiment.write_text(FILE)
    assert main(["run", str(experiment), "--dry-run", "--db", str(tmp_path / "s.db")]) == 0
    assert "6 searches per repetition x 3 = 18 searches" in capsys.readouterr().out
