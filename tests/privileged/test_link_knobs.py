import json

from linerate.axes import lab_spec
from linerate.calc import LinkInput, goodput
from linerate.experiment.config import parse_experiment
from linerate.experiment.run import run_experiment
from linerate.testbed.base import LabTestbeds
from linerate.testbed.base import new_lab_id
from linerate.testbed.namespace import NamespaceTestbed
from linerate.lab.wire import WireMeter, measure_during
from linerate.model import TrialParams
from linerate.report.data import build_report
from linerate.report.exporters import serializer
from linerate.store import Store
from linerate.topology.link import burst_allowance_bps


def test_shaped_link_never_beats_the_wire():
    ceiling = goodput(LinkInput(1e9)).goodput_bps
    window = (1.5, 4.5)  # seconds into a 5 s run (1 s omitted): the steady, measured part
    # a token bucket may carry one bucket more than rate x T in any window; the shapers this
    # replaced put 1.6% (plain tbf: no preamble/FCS/gap) and 6% (tc stab) above the wire
    limit = 1e9 + burst_allowance_bps(1e9, 1500, window[1] - window[0])
    with NamespaceTestbed(lab_spec(new_lab_id(), {"link_rate": "1g"})) as lab:
        assert [q["kind"] for q in lab.state["qdiscs"]["wan0"]] == ["tbf", "tbf"]  # segmenter, shaper
        meter = WireMeter(lab.executor("dut"), "wan0")
        for streams in (1, 4, 8):  # several flows: small GSO packets must still be charged per frame
            params = TrialParams(streams=streams, duration_s=4, omit_s=1, congestion="cubic")
            trial, wire = measure_during(lambda: lab.run_trial(params), meter, window)
            assert trial.ok, trial.error
            assert trial.congestion == "cubic"
            assert wire.low_bps <= limit, f"{streams} streams: the link carried {wire.low_bps / 1e6:.2f} Mbit/s"
            assert wire.high_bps > 0.9e9, f"{streams} streams: the link carried only {wire.high_bps / 1e6:.2f} Mbit/s"
            # goodput is an application's count between timer ticks: +-0.4% in a 4 s trial here
            assert 0.5 * ceiling < trial.throughput_bps <= 1.005 * ceiling


def test_offload_axis_stores_read_back_and_flags(tmp_path):
    exp = parse_experiment("""
name = "offloads"
repetitions = 2
duration_s = 1
omit_s = 1
[axes]
offloads = ["default", "all:tso=off,gso=off,gro=off"]
link_rate = ["none", "1g"]
""")
    store = Store(tmp_path / "o.db")
    run_experiment(exp, store, LabTestbeds())
    rows = store.conn.execute("SELECT c.params, s.state, t.flags, t.throughput_bps FROM trials t "
                              "JOIN cells c ON c.id = t.cell_id JOIN lab_states s ON s.id = t.lab_state_id "
                              "WHERE t.status='ok'").fetchall()
    assert len(rows) == 8
    assert store.conn.execute("SELECT COUNT(*) FROM lab_states").fetchone()[0] == 4  # one per lab, not per trial
    by_cell: dict = {}
    for params, lab_state, flags, bps in rows:
        params, lab_state, flags = json.loads(params), json.loads(lab_state), json.loads(flags)
        off = params["offloads"] != "default"
        assert lab_state["offloads"]["dut:lan0"]["tso"] == ("off" if off else "on")
        assert lab_state["offloads"]["client:eth0"]["gso"] == ("off" if off else "on")
        by_cell.setdefault((params["link_rate"], off), []).append((bps, flags))
    # unshaped: the rig is the limit -> the cell is flagged (the report shows the union of its trials'
    # flags); shaped 1 Gbit/s: the link is the limit -> no trial is flagged
    assert any("generator-bound" in flags for _, flags in by_cell[("none", False)])
    assert all("generator-bound" not in flags for _, flags in by_cell[("1g", False)])
    # TSO/GSO/GRO off on the unshaped lab costs throughput, as the articles describe
    mean = {key: sum(b for b, _ in v) / len(v) for key, v in by_cell.items()}
    assert mean[("none", True)] < 0.8 * mean[("none", False)]
    md = serializer("md")(build_report(store, "offloads"))
    assert "[generator-bound]" in md and "offloads all:tso=off,gso=off,gro=off" in md
