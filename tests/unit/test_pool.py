"""Generator pools: the pooled lab's topology (topology/pool.py) and the common-window sum (pool/window.py)."""

import json
from pathlib import Path

import pytest

from linerate.axes import lab_spec
from linerate.diagnose.facts import cell_facts
from linerate.diagnose.rules import diagnose
from linerate.errors import ConfigError
from linerate.kinds.throughput.calibration import flags_for
from linerate.model import LAB_ROLES, Trial, TrialParams
from linerate.pool.window import (REMOTE_START_TOLERANCE_S, Member, counted, measured, pair_summary, pool_trial,
                                  rate_bps)
from linerate.testbed.knobs import refuse_unsupported
from linerate.topology import lab_plan
from linerate.topology.link import link_bps, link_description
from linerate.topology.plan import AddAddress, AddDefaultRoute, CreateVeth, RunTool, build_plan
from linerate.traffic.iperf3 import Interval, parse, receiver_intervals, server_argv


def test_one_pair_without_a_pair_link_is_the_one_pair_lab():
    spec = lab_spec("x", {})
    assert not spec.pooled and lab_plan(spec) == build_plan(spec)
    assert spec.namespaces == ["lr-x-client", "lr-x-dut", "lr-x-server"]


def test_a_pool_has_a_client_and_server_per_pair_and_a_switch_per_side():
    spec = lab_spec("x", {"pairs": 3})
    assert spec.namespaces == ["lr-x-client", "lr-x-client2", "lr-x-client3", "lr-x-lansw", "lr-x-dut",
                               "lr-x-wansw", "lr-x-server", "lr-x-server2", "lr-x-server3"]
    assert set(spec.roles) <= set(LAB_ROLES)  # lab clean accepts exactly these names
    plan = lab_plan(spec)
    addresses = {(s.netns, s.address) for s in plan.steps if isinstance(s, AddAddress)}
    assert {("lr-x-client3", "198.18.0.4"), ("lr-x-server3", "198.19.0.4"), ("lr-x-client", "198.18.0.2"),
            ("lr-x-server2", "2001:2:0:2::3"), ("lr-x-dut", "198.18.0.1")} <= addresses
    routes = {(s.netns, s.gateway) for s in plan.steps if isinstance(s, AddDefaultRoute)}
    assert ("lr-x-client2", "198.18.0.1") in routes and ("lr-x-server3", "2001:2:0:2::1") in routes


def test_every_veth_is_made_before_its_namespace_batch_uses_it():
    """Netlink steps go out per namespace, whole, in order of first use (lab/apply.py): a veth must be
    made by a namespace whose batch comes before any batch that addresses either end."""
    plan = lab_plan(lab_spec("x", {"pairs": 2}))
    first_use: dict[str, int] = {}
    for index, step in enumerate(plan.steps):
        if isinstance(step, (CreateVeth, AddAddress)) or type(step).__name__ in ("SetLink", "AddDefaultRoute"):
            first_use.setdefault(step.netns, index)
    for step in plan.steps:
        if isinstance(step, CreateVeth):
            assert first_use[step.netns] <= first_use.get(step.peer_netns, 10**9)


def test_the_pair_link_shapes_both_ends_of_every_access_link_and_the_dut_link_stays():
    plan = lab_plan(lab_spec("x", {"pairs": 2, "pair_link_rate": "100m", "link_rate": "1g"}))
    shaped = {(s.netns, s.argv[4]) for s in plan.steps if isinstance(s, RunTool) and s.argv[:2] == ("tc", "qdisc")
              and "100000000bit" in s.argv}
    assert shaped == {("lr-x-client", "eth0"), ("lr-x-lansw", "p1"), ("lr-x-server", "eth0"), ("lr-x-wansw", "p1"),
                      ("lr-x-client2", "eth0"), ("lr-x-lansw", "p2"), ("lr-x-server2", "eth0"), ("lr-x-wansw", "p2")}
    dut = {s.argv[4] for s in plan.steps if isinstance(s, RunTool) and s.netns == "lr-x-dut" and "1000000000bit" in s.argv}
    assert dut == {"lan0", "wan0"}


def test_the_bottleneck_is_the_dut_link_or_the_sum_of_the_pair_links():
    assert link_bps({"link_rate": "1g", "pairs": 4, "pair_link_rate": "100m"}) == 400e6
    assert link_description({"link_rate": "1g", "pairs": 4, "pair_link_rate": "100m"}) == "4 x 100m pair links"
    assert link_bps({"link_rate": "1g", "pairs": 16, "pair_link_rate": "100m"}) == 1e9
    assert link_bps({"link_rate": "none", "pairs": 2, "pair_link_rate": "none"}) is None


def test_a_pools_servers_report_the_receivers_intervals():
    assert server_argv(5201, pool=True)[-3:] == ["--json", "--interval", "0.5"]
    assert "--json" not in server_argv(5201)


@pytest.mark.parametrize("cell, field", [({"pairs": 2, "dut": "vm"}, "pairs"),
                                         ({"pair_link_rate": "100m", "dut": "vm"}, "pair_link_rate"),
                                         ({"pairs": 2, "direction": "bidir"}, "direction")])
def test_what_a_pool_cannot_do_is_refused_before_anything_runs(cell, field):
    with pytest.raises(ConfigError) as caught:
        refuse_unsupported([cell], "namespace")
    assert caught.value.field == field


def test_a_testbed_of_real_hosts_takes_its_pool_from_the_inventory_not_the_pairs_axis():
    with pytest.raises(ConfigError) as caught:
        refuse_unsupported([{"pairs": 2}], "ssh")
    assert caught.value.field == "pairs" and "[[client]] and [[server]] tables" in caught.value.problem


# --- the common window --------------------------------------------------------------------------


def intervals(rates_mbps, step=0.5):
    return [Interval(i * step, (i + 1) * step, r * 1e6, False, False) for i, r in enumerate(rates_mbps)]


def run(rates_mbps, params=TrialParams(duration_s=3)):
    """A pair's iperf3 -J document as a --get-server-output client run prints it (the fields pool/window reads)."""
    server = {"intervals": [{"sum": {"start": i.start_s, "end": i.end_s, "seconds": i.end_s - i.start_s,
                                     "bytes": int(i.bits_per_second * (i.end_s - i.start_s) / 8),
                                     "bits_per_second": i.bits_per_second, "omitted": False, "sender": False}}
                            for i in intervals(rates_mbps)]}
    doc = {"start": {}, "end": {"sum_received": {"bits_per_second": sum(rates_mbps) / len(rates_mbps) * 1e6}},
           "server_output_json": server}
    return Trial(status="ok", params=params, argv=("iperf3",), throughput_bps=doc["end"]["sum_received"][
        "bits_per_second"], raw=json.dumps(doc), retransmits=1)


def test_the_aggregate_sums_each_pairs_figure_over_the_window_all_pairs_sent():
    params = TrialParams(duration_s=3)
    members = [Member("client", "server", "198.19.0.2", 10.0, run([100] * 6)),
               # launched 0.2 s later: its first interval began before the other's measuring did not; its last
               # ran after the first pair had stopped, when it had the DUT to itself (200 Mbit/s)
               Member("client2", "server2", "198.19.0.3", 10.2, run([100] * 5 + [200]))]
    trial = pool_trial(members, params)
    assert trial.ok
    pairs = trial.telemetry["pairs"]
    assert pairs[1]["throughput_bps"] == pytest.approx(100e6)  # the lone 200 Mbit/s interval is not counted
    assert pairs[1]["counted_s"] == pytest.approx(2.5) and pairs[0]["counted_s"] == pytest.approx(2.5)
    assert trial.throughput_bps == pytest.approx(200e6)
    assert trial.telemetry["pool"]["start_skew_ms"] == pytest.approx(200)
    assert trial.telemetry["pool"]["window_s"] == pytest.approx(2.8)
    assert trial.retransmits == 2 and "pair2" in trial.telemetry_raw


def test_a_pair_far_below_the_others_is_named():
    params = TrialParams(duration_s=3)
    members = [Member(f"client{i}", f"server{i}", "a", 0.0, run([100] * 6)) for i in range(3)]
    members.append(Member("client4", "server4", "198.19.0.5", 0.0, run([50] * 6)))
    slow = pool_trial(members, params).telemetry["pool"]["slow"]
    assert len(slow) == 1 and slow[0].startswith("pair 4 (client4 -> server4): 50.0 Mbit/s")


def test_a_failed_pair_fails_the_trial_and_names_it():
    params = TrialParams(duration_s=3)
    bad = Trial(status="failed", params=params, argv=("iperf3",), error="unable to connect to server")
    trial = pool_trial([Member("client", "server", "a", 0.0, run([100] * 6)),
                        Member("client2", "server2", "198.19.0.3", 0.0, bad)], params)
    assert not trial.ok and trial.error == "pair 2 of 2 (client2 -> server2): unable to connect to server"


def test_pairs_that_hardly_overlapped_fail_with_the_figure():
    params = TrialParams(duration_s=3)
    trial = pool_trial([Member("client", "server", "a", 0.0, run([100] * 6)),
                        Member("client2", "server2", "b", 2.0, run([100] * 6))], params)
    assert not trial.ok and "sent together for 1.00 s of 3 s" in trial.error and "2000 ms apart" in trial.error


def test_a_pair_without_receiver_intervals_is_said_not_summed():
    params = TrialParams(duration_s=3)
    plain = Trial(status="ok", params=params, argv=("iperf3",), throughput_bps=1e8, raw=json.dumps({"start": {}}))
    trial = pool_trial([Member("client", "server", "a", 0.0, run([100] * 6)),
                        Member("client2", "server2", "b", 0.0, plain)], params)
    assert not trial.ok and "no receiver intervals" in trial.error


def test_an_interval_counts_only_inside_the_window_give_or_take_its_tolerance():
    ivs = intervals([100, 100, 100])
    assert counted(ivs, 0.0, 0.0, 1.5) == ivs
    assert counted(ivs, 0.005, 0.0, 1.5) == ivs[:3]  # 5 ms of a 0.5 s interval past the end: within 2%
    assert counted(ivs, 0.05, 0.0, 1.5) == ivs[:2]
    assert rate_bps(intervals([100, 300])) == pytest.approx(200e6)


# --- on real iperf3 -J --get-server-output runs (tests/data/iperf3/pool/*.source.txt: where each is from) ---

POOL_DATA = Path(__file__).parent.parent / "data" / "iperf3" / "pool"


def real(name: str, direction: str = "forward") -> Trial:
    text = (POOL_DATA / f"{name}.json").read_text()
    params = TrialParams(duration_s=15, omit_s=2, direction=direction)
    return parse(text, params, ("iperf3",))


def test_the_receivers_intervals_come_from_the_server_forward_and_the_client_in_reverse():
    forward = receiver_intervals((POOL_DATA / "masq-tcp-up-1000m.json").read_text(), "forward")
    assert len(forward) == 16 and not any(i.omitted or i.sender for i in forward)  # 17 server intervals, 1 omitted
    reverse = receiver_intervals((POOL_DATA / "masq-tcp-reverse-100m.json").read_text(), "reverse")
    assert len(reverse) == 15  # the client received: 17 intervals, 2 omitted


def test_slivers_at_the_omit_boundary_and_the_tail_are_not_counted_and_each_clock_starts_at_0():
    # the 3.9 server's 2nd interval is start 1.0, end 1.0 ('seconds' 2.0); its last a 0.04 s tail
    kept = measured(receiver_intervals((POOL_DATA / "masq-tcp-up-1000m.json").read_text(), "forward"))
    assert len(kept) == 14 and kept[0].start_s == 0 and kept[-1].end_s == pytest.approx(14.0, abs=0.01)
    restarted = measured(receiver_intervals((POOL_DATA / "masq-tcp-up-10m.json").read_text(), "forward"))
    assert restarted[0].start_s == 0 and len(restarted) == 15


def test_two_real_runs_as_a_pool_sum_their_figures_over_the_common_window():
    up, slow = real("masq-tcp-up-1000m"), real("masq-tcp-up-10m")
    params = up.params
    trial = pool_trial([Member("client", "server", "a", 0.0, up), Member("client2", "server2", "b", 0.0, slow)], params)
    assert trial.ok
    fast_pair, slow_pair = trial.telemetry["pairs"]
    # each pair's window figure is its receiver's whole-run figure give or take the edges (919.6 and 10.04 Mbit/s)
    assert fast_pair["throughput_bps"] == pytest.approx(up.throughput_bps, rel=0.02)
    assert slow_pair["throughput_bps"] == pytest.approx(slow.throughput_bps, rel=0.02)
    assert trial.throughput_bps == pytest.approx(fast_pair["throughput_bps"] + slow_pair["throughput_bps"])
    assert trial.telemetry["pool"]["slow"][0].startswith("pair 2 (client2 -> server2)")


def test_the_pool_host_whose_sender_cpu_was_the_limit_is_named_in_the_verdict():
    # masq-tcp-up-10m's client reported host_total 100.02%, masq-tcp-up-1000m's 2.8% (their own end sections)
    fast, busy = real("masq-tcp-up-1000m"), real("masq-tcp-up-10m")
    trial = pool_trial([Member("client", "server", "a", 0.0, fast), Member("client2", "server2", "b", 0.0, busy)],
                       fast.params)
    assert flags_for(trial, None) == ["generator-bound"]  # the busiest pair's sender decides, as with one pair
    stored = [{"telemetry": json.loads(json.dumps(trial.telemetry))}]  # as a report reads it back
    facts = cell_facts({"direction": "forward", "pairs": 2}, stored, mean_bps=trial.throughput_bps, retransmits=None,
                       ceiling_bps=None, line_rate_source=None, flags=("generator-bound",))
    assert facts.busy_senders == [("client2", pytest.approx(100.02, abs=0.01))]
    [verdict] = [v for v in diagnose(facts) if v.code == "generator-bound"]
    assert verdict.evidence.startswith("client2's CPU at 100% (iperf3's figure for the sending host")
    # in reverse the servers send: their figures (0.5% and 0.01%) name no host, and the verdict stays the general one
    reverse = cell_facts({"direction": "reverse", "pairs": 2}, stored, mean_bps=None, retransmits=None,
                         ceiling_bps=None, line_rate_source=None, flags=("generator-bound",))
    assert reverse.busy_senders == []
    assert [v for v in diagnose(reverse) if v.code == "generator-bound"][0].evidence.startswith("the client/server")


def test_a_pools_packet_path_splits_the_load_and_sums_what_was_sent_and_counted():
    from linerate.search.measurer import SentBy
    from linerate.testbed.lab_path import PoolPath, shares

    class Member:
        family, mtu, sender, link_bps, shared_kernel, paced, description, generator = 4, 1500, None, 2e8, True, True, \
            "", "trafgen 0.6.8"

        def __init__(self, counted):
            self.sends, self.counted = [], counted

        def send(self, frame, rate_pps, count, *, to_dut=True):
            self.sends.append((rate_pps, count))
            return SentBy(count, count * 1514, 1.0 + len(self.sends) / 10, (f"trafgen {rate_pps}",))

        def forwarded(self):
            return self.counted

    members = [Member(10), Member(20), Member(30)]
    path = PoolPath(members)
    sent = path.send(1518, 1001, 2002)
    assert [m.sends for m in members] == [[(334, 668)], [(334, 667)], [(333, 667)]]
    assert sent.packets == 2002 and sent.cpu_s == pytest.approx(1.1) and path.forwarded() == 60
    assert shares(7, 3) == [3, 2, 2] and shares(1, 2) == [1, 0]
    assert path.generator == "trafgen 0.6.8 on 3 clients"


@pytest.mark.parametrize("argv", [["lab", "up", "--dry-run", "--pairs", "2", "--dut", "vm"],
                                  ["rfc2544", "--pairs", "2", "--dut", "vm", "--frame-sizes", "64"],
                                  ["cps", "--pairs", "2"], ["rfc9693", "--pairs", "3"],
                                  ["trial", "--pairs", "2", "--direction", "bidir"], ["trial", "--pairs", "17"]])
def test_a_pool_the_command_cannot_run_is_refused_with_exit_2_before_anything_is_built(argv, capsys, tmp_path,
                                                                                        monkeypatch):
    from linerate.cli import main

    monkeypatch.setenv("LINERATE_STATE_DIR", str(tmp_path / "labs"))
    try:
        code = main([*argv, "--db", str(tmp_path / "x.db")] if argv[0] in ("rfc2544", "cps", "rfc9693") else argv)
    except SystemExit as exc:
        code = exc.code
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "pair" in err
    assert not (tmp_path / "labs").exists() and not (tmp_path / "x.db").exists()


def test_a_pair_that_began_measuring_late_after_its_launch_fails_the_trial_with_the_figure():
    params = TrialParams(duration_s=3)
    # both launched together; pair 2's connect took a second longer (a retransmitted SYN), so it ended 1 s later
    on_time = Member("client", "server", "a", 10.0, run([100] * 6), ended=10.0 + 1.2 + 3.0)
    late = Member("client2", "server2", "b", 10.0, run([100] * 6), ended=10.0 + 2.2 + 3.0)
    trial = pool_trial([on_time, late], params)
    assert not trial.ok and trial.error.startswith("pair 2 (client2 -> server2) began measuring 1.00 s later")
    together = pool_trial([on_time, Member("client2", "server2", "b", 10.001, run([100] * 6), ended=14.22)], params)
    assert together.ok


def test_the_html_evidence_says_whose_intervals_a_pooled_trial_shows():
    from linerate.report.data import CellReport, TrialPoint
    from linerate.report.evidence import CellEvidence, _attach_intervals
    from linerate.stats import summarize

    raw = (POOL_DATA / "masq-tcp-up-10m.json").read_text()
    point = TrialPoint(7, 1, 1, "ok", True, 1e7, None, None, None)
    for pairs, said in ((4, "These are pair 1's intervals (client to server) of 4"), (1, "")):
        item = CellEvidence(CellReport(1, {"pairs": pairs}, summarize([1e7])), "row", "col", [], point)
        _attach_intervals(item, {7: raw})
        assert item.intervals and item.pool_note.startswith(said) and bool(item.pool_note) == bool(said)


def test_pairs_seen_through_ssh_channels_may_differ_in_set_up_by_the_remote_tolerance_and_it_is_stored():
    params = TrialParams(duration_s=3)
    # pair 2's SSH channel opened and closed 0.2 s slower (0.10-0.13 s seen between two sshd hosts here)
    on_time = Member("client", "server", "a", 10.0, run([100] * 6), ended=10.0 + 0.3 + 3.0)
    channel = Member("client2", "server2", "b", 10.0, run([100] * 6), ended=10.0 + 0.5 + 3.0)
    assert not pool_trial([on_time, channel], params).ok  # beside local processes: a slow connect
    trial = pool_trial([on_time, channel], params, REMOTE_START_TOLERANCE_S)
    assert trial.ok and trial.telemetry["pool"]["setup_spread_s"] == pytest.approx(0.2)
    assert "their set-ups 0.20 s apart" in pair_summary(trial)[0]
    late = Member("client2", "server2", "b", 10.0, run([100] * 6), ended=10.0 + 1.3 + 3.0)  # a retransmitted SYN
    assert not pool_trial([on_time, late], params, REMOTE_START_TOLERANCE_S).ok


def test_export_writes_each_pairs_own_iperf3_output_of_a_pooled_trial(tmp_path):
    from linerate.report.iperf3_files import export_iperf3_json
    from linerate.store.db import Store

    up, slow = real("masq-tcp-up-1000m"), real("masq-tcp-up-10m")
    trial = pool_trial([Member("client", "server", "a", 0.0, up), Member("client2", "server2", "b", 0.0, slow)],
                       up.params)
    store = Store(tmp_path / "r.db")
    experiment = store.create_experiment("pooled", "run", {})
    [cell] = store.ensure_cells(experiment, [{"family": 4, "pairs": 2}]).values()
    trial_id = store.add_trial(cell, 0, 1, trial, final=True)
    (tmp_path / "out").mkdir(mode=0o755)
    done = export_iperf3_json(store, "pooled", str(tmp_path / "out"))
    names = [Path(path).name for path in done.files]
    assert names == [f"trial-{trial_id}_cell-{cell}_rep-0_attempt-1_pair-{n}_ok.json" for n in (1, 2)]
    assert [Path(path).read_text() for path in done.files] == [up.raw, slow.raw]  # each as its iperf3 wrote it


def test_a_pooled_trial_is_read_against_its_pair_links_and_its_slow_pair_named_as_the_limit():
    from linerate.cli.trial_cmds import diagnosis_lines
    from linerate.report.data import trial_diagnosis

    up, slow = real("masq-tcp-up-1000m"), real("masq-tcp-up-10m")
    trial = pool_trial([Member("client", "server", "a", 0.0, up), Member("client2", "server2", "b", 0.0, slow)],
                       up.params)
    ceiling, source, verdicts = trial_diagnosis(trial, {"pairs": 2, "pair_link_rate": "1g"}, {}, [])
    assert source.startswith("2 x 1g pair links") and ceiling == pytest.approx(2 * 941.48e6, rel=1e-4)
    [limit] = [v for v in verdicts if v.kind == "limit"]
    assert limit.code == "slow-pair" and "pair 2 (client2 -> server2)" in limit.evidence, verdicts
    lines = diagnosis_lines(ceiling, source, verdicts, trial.throughput_bps / ceiling)
    assert lines[0].startswith("= 49.") and "% of line rate (1,883 Mbit/s: 2 x 1g pair links" in lines[0], lines
    # no link known: the trial says so and how to give one, once, not as a verdict line
    alone = diagnosis_lines(None, None, trial_diagnosis(up, {}, {}, [])[2], None)
    assert alone == ['line rate unknown: set link = "1g" (the path\'s rate) in the inventory, or link_rate in a '
                     'namespace lab, to get % of line rate'], alone
    # one real run alone at its 1g link: at line rate, nothing named; a failed trial: no verdict at all
    assert [v.code for v in trial_diagnosis(up, {"link_rate": "1g"}, {}, [])[2]] == ["at-line-rate"]
    failed = pool_trial([Member("client", "server", "a", 0.0, up),
                         Member("client2", "server2", "b", 0.0, Trial(params=up.params, argv=("iperf3",), status="failed",
                                                                       error="x"))],
                        up.params)
    assert not failed.ok and trial_diagnosis(failed, {"link_rate": "1g"}, {}, [])[2] == []
