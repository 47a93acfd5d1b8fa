"""`test = "tune"` without labs: the sequential paired test (accepts a real gain, never a placebo,
rejects a harmful or failing knob, stops at its share of the budget), the tuning loop (stacking,
the final confirmation, the budget never exceeded), replay (the report and a resumed run make the
same decisions from the stored trials), the final configuration per OS, and the file's checks."""

import contextlib
import json
import random

import pytest

from linerate.cli import main
from linerate.errors import ConfigError
from linerate.experiment.config import parse_experiment
from linerate.experiment.registry import kind
from linerate.experiment.run import run_experiment
from linerate.kinds.tune.decide import Plan, judge
from linerate.kinds.tune.engine import Outcome, Tuner
from linerate.kinds.tune.options import Candidate
from linerate.kinds.tune.proposals import merge, propose
from linerate.kinds.tune.snippet import snippet
from linerate.model import Trial
from linerate.store import Store
from linerate.testbed.fake import FakeTestbed, FakeTestbeds

TUNE = """
name = "tune-sim"
test = "tune"
duration_s = 1
omit_s = 0
budget_trials = 40
retry_backoff_s = 0
[start]
dut = "vm"
link_rate = "1g"
virtio_offloads = "off"
[candidates]
virtio_offloads = ["on"]
dut_sysctls = ["net.core.somaxconn=4095"]
"""


def noisy(mean: float, noise: float, rng: random.Random):
    return lambda: mean * (1 + rng.gauss(0, noise))


def pairs_of(effect: float, noise: float, n: int, rng: random.Random) -> list[tuple[float, float]]:
    return [(300e6 * (1 + rng.gauss(0, noise)), 300e6 * (1 + effect) * (1 + rng.gauss(0, noise))) for _ in range(n)]


def sequential(effect: float, noise: float, plan: Plan, rng: random.Random):
    pairs = []
    while True:
        pairs += pairs_of(effect, noise, 1, rng)
        judgement = judge(pairs, plan)
        if judgement.decision:
            return judgement


def test_a_real_gain_is_accepted_in_few_pairs_and_a_placebo_never():
    rng = random.Random(7)
    plan = Plan(decisions=3, max_pairs=12)
    big = [sequential(2.0, 0.10, plan, rng) for _ in range(50)]  # offloads on: ~3x, 10% noise per trial
    assert all(j.decision == "accepted" for j in big) and max(j.pairs for j in big) <= 6
    placebo = [sequential(0.0, 0.10, plan, rng) for _ in range(400)]
    accepted = sum(j.decision == "accepted" for j in placebo)
    print(f"\nplacebo accepted in {accepted} of 400 sequential decisions (family-wise bound 5%)")
    assert accepted <= 400 * 0.05 / 3  # Bonferroni: each decision's share of the 5% (seen: 3 of 400)
    biased = sum(judge(pairs_of(0.0, 0.10, 12, rng), Plan(1, 12, alpha=0.5)).p_better < 0.5 for _ in range(2000))
    assert 0.45 < biased / 2000 < 0.55  # the log ratio has no upward bias under noise (the plain ratio has +1%)


def test_worse_and_failing_knobs_are_rejected():
    rng = random.Random(3)
    plan = Plan(decisions=2, max_pairs=10)
    assert sequential(-0.3, 0.05, plan, rng).decision == "rejected"
    failed = judge([(3e8, 3e8)], plan, failed="iperf3: the server is busy")
    assert failed.decision == "rejected" and "failed" in failed.why
    tiny = sequential(0.002, 0.001, Plan(decisions=2, max_pairs=40), rng)  # real but below min_effect
    assert tiny.decision == "rejected" and "worth" in tiny.why


def test_the_loop_stacks_confirms_and_keeps_to_its_budget():
    rng = random.Random(11)
    calls = []

    def measure(cell):
        calls.append(dict(cell))
        mean = 300e6 * (3 if cell["virtio_offloads"] == "on" else 1) * (1.2 if cell.get("virtio_queues") == 2 else 1)
        return Outcome(mean * (1 + rng.gauss(0, 0.05)))

    start = {"virtio_offloads": "off", "virtio_queues": 1, "dut_sysctls": "default"}
    candidates = (Candidate("dut_sysctls", "net.core.somaxconn=4095"), Candidate("virtio_offloads", "on"),
                  Candidate("virtio_queues", 2))
    outcome = Tuner(start, candidates, 80, measure, min_effect=0.01,
                    levers_of=lambda cell: {"virtio_offloads"} if cell["virtio_offloads"] == "off" else set()).run()
    decisions = {s.candidate.knob: s.judgement.decision for s in outcome.steps}
    assert decisions["virtio_offloads"] == "accepted" and decisions["dut_sysctls"] != "accepted"
    assert outcome.steps[0].candidate.knob == "virtio_offloads"  # the lever of the start's verdict went first
    assert outcome.final["virtio_offloads"] == "on" and len(calls) == outcome.trials <= 80
    assert outcome.confirmation is not None and outcome.confirmation.judgement.effect > 1.5
    queues = next(s for s in outcome.steps if s.candidate.knob == "virtio_queues")
    assert queues.best["virtio_offloads"] == "on"  # measured against the new best, not the start


def test_stacked_sysctls_merge_and_proposals_skip_what_is_held():
    assert merge("dut_sysctls", "a.b=1", "c.d=2") == "a.b=1;c.d=2"
    assert merge("dut_sysctls", "a.b=1;c.d=2", "a.b=3") == "a.b=3;c.d=2"
    assert merge("dut_offloads", "igb0:tso=off", "igb0:lro=off") == "igb0:lro=off,tso=off"
    assert merge("virtio_queues", 1, 2) == 2
    found = propose({"virtio_offloads": "on", "dut_sysctls": "default"},
                    {"virtio_offloads": [("on", "")], "dut_sysctls": [("net.core.netdev_budget=600", "catalog")],
                     "virtio_queues": [(2, "per vCPU")]}, {"virtio_queues"})
    assert [c.knob for c in found] == ["virtio_queues", "dut_sysctls"]


class SimTestbed(FakeTestbed):
    """Throughput from the configuration: offloads on ~940, off ~300 Mbit/s, 5% noise; somaxconn: nothing."""

    def __init__(self, params, rng, log, stop_after=None):
        super().__init__(params)
        self.rng, self.log, self.stop_after = rng, log, stop_after

    def run_trial(self, params):
        if self.stop_after is not None and len(self.log) >= self.stop_after:
            raise KeyboardInterrupt
        self.log.append(dict(self.params))
        mean = 940e6 if self.params["virtio_offloads"] == "on" else 300e6
        return Trial(status="ok", params=params, argv=("iperf3",), throughput_bps=mean * (1 + self.rng.gauss(0, 0.05)))


def beds(log, stop_after=None, seed=5):
    rng = random.Random(seed)

    @contextlib.contextmanager
    def open_bed(params):
        yield SimTestbed(params, rng, log, stop_after)
    return FakeTestbeds(open_bed)


def test_a_tune_run_stores_every_trial_and_the_report_replays_its_decisions(tmp_path):
    store, log = Store(tmp_path / "t.db"), []
    outcome = run_experiment(parse_experiment(TUNE), store, beds(log), file_text=TUNE)
    assert outcome.trials == len(log) <= 40
    decisions = {s.candidate.knob: s.judgement.decision for s in outcome.steps}
    assert decisions["virtio_offloads"] == "accepted" and decisions["dut_sysctls"] != "accepted"
    doc = json.loads(kind("tune").render(store, store.experiment("tune-sim"), "json"))
    assert [d["decision"] for d in doc["decisions"]] == [s.judgement.decision for s in outcome.steps]
    from linerate.kinds.tune import storage
    recorded = storage.decisions(store, outcome.experiment_id)  # each decision as it was made, in its own table
    made = outcome.steps + [c for c in [outcome.confirmation] if c is not None and c not in outcome.steps]
    assert [(r["knob"], r["value"], r["decision"], r["trials"]) for r in recorded] == [
        (s.candidate.knob, s.candidate.value, s.judgement.decision, s.trials) for s in made]
    assert storage.state(store, outcome.experiment_id)["axes"] and "tune_axes" not in \
        store.experiment("tune-sim").environment
    assert {"knob", "value", "effect_pct", "ci_low_pct", "ci_high_pct", "p", "trials", "decision"} <= set(doc["decisions"][0])
    assert doc["final"]["changed"]["virtio_offloads"] == "on" and doc["trials"] == len(log)
    assert any("qemu" in part["where"] for part in doc["final"]["snippet"])
    md = kind("tune").render(store, store.experiment("tune-sim"), "md")
    assert "| virtio_offloads | on |" in md and "Before/after" in md and "-netdev tap" in md
    final = md.split("## Final configuration", 1)[1]
    assert final.count("```") % 2 == 0 and final.count("```") >= 2  # each snippet in a fence: shown, not rendered
    from linerate.kinds.tune.report import markdown
    hostile = markdown({**doc, "experiment": "<img src=x onerror=alert(1)>"})
    assert "<img" not in hostile and "&lt;img" in hostile


def test_a_killed_tune_resumes_without_measuring_stored_trials_again(tmp_path):
    store, log = Store(tmp_path / "t.db"), []
    with pytest.raises(KeyboardInterrupt):
        run_experiment(parse_experiment(TUNE), store, beds(log, stop_after=5), file_text=TUNE)
    assert len(log) == 5 and store.experiment("tune-sim").status == "interrupted"
    partial = json.loads(kind("tune").render(store, store.experiment("tune-sim"), "json"))
    assert partial["complete"] is False and partial["trials"] == 5
    more = []
    outcome = run_experiment(parse_experiment(TUNE), Store(tmp_path / "t.db"), beds(more, seed=9), file_text=TUNE,
                             resume=True)
    assert outcome.trials == 5 + len(more) <= 40  # the five stored trials replayed, not measured again
    assert store.conn.execute("SELECT COUNT(*) FROM trials").fetchone()[0] == outcome.trials
    from linerate.kinds.tune import storage
    made = outcome.steps + [c for c in [outcome.confirmation] if c is not None and c not in outcome.steps]
    assert [r["decision"] for r in storage.decisions(store, outcome.experiment_id)] == [
        s.judgement.decision for s in made]  # the decisions made before the kill recorded once, not twice


def test_final_configuration_snippets_per_os():
    start = {"dut_sysctls": "default", "dut_offloads": "default", "virtio_offloads": "off", "virtio_queues": 1}
    linux = dict(snippet(start, {**start, "dut_sysctls": "net.core.netdev_budget=600", "dut_offloads": "eth1:gro=on"},
                         "linux"))
    assert linux["/etc/sysctl.conf"] == ["net.core.netdev_budget = 600"]
    assert next(v for k, v in linux.items() if k.startswith("ethtool")) == ["ethtool -K eth1 gro on"]
    bsd = dict(snippet(start, {**start, "dut_sysctls": "net.inet.ip.redirect=0;hw.igb.rx_process_limit=-1",
                               "dut_offloads": "igb0:tso=off,lro=off"}, "freebsd"))
    assert bsd["/etc/sysctl.conf"] == ["net.inet.ip.redirect=0"]
    assert bsd["/boot/loader.conf.local"] == ['hw.igb.rx_process_limit="-1"']  # a boot-time tunable (catalog)
    assert bsd["/etc/rc.conf"] == ['ifconfig_igb0="<its addresses> -lro -tso"']
    vm = dict(snippet(start, {**start, "virtio_offloads": "on", "virtio_queues": 2}, "linux"))
    assert vm["qemu (each virtio NIC of the DUT)"] == [
        "-netdev tap,id=lan,ifname=TAP,queues=2 -device virtio-net-pci,netdev=lan,mq=on,vectors=6"]
    assert vm["libvirt <interface> (each NIC)"] == ["<driver queues='2'/>"]
    assert vm["in the guest (each NIC)"] == ["ethtool -L IF combined 2"]


@pytest.mark.parametrize("body, problem", [
    ("budget_trials = 48\n[start]\nstreams = 1\n[candidates]\nstreams = [4]\n", "changes the traffic, not the box"),
    ("[start]\nstreams = 1\n", "needs a budget"),
    ("budget_trials = 4\n", "budget_trials = 4: use a whole number from 6"),
    ('budget_trials = 48\nobjective = "latency"\n', "objective = 'latency'"),
    ("budget_trials = 48\n[candidates]\nvirtio_offloads = []\n", "give a list of values"),
    ("budget_trials = 48\n[candidates]\nvirtio_offloads = [\"sideways\"]\n", "virtio_offloads = 'sideways'"),
    ("budget_trials = 48\n[axes]\nstreams = [1, 4]\n", r"a tune has no \[axes\]"),
])
def test_a_bad_tune_file_names_its_key(body, problem):
    with pytest.raises(ConfigError, match=problem):
        parse_experiment('name = "t"\ntest = "tune"\n' + body)


def test_tune_keys_belong_to_tune_files_only(tmp_path, capsys):
    with pytest.raises(ConfigError, match="unknown key 'budget_trials'"):
        parse_experiment('name = "t"\nbudget_trials = 5\n')
    path = tmp_path / "t.toml"
    path.write_text(TUNE)
    assert main(["tune", str(path), "--dry-run", "--db", str(tmp_path / "d.db")]) == 0
    out = capsys.readouterr().out
    assert "tune 'tune-sim'" in out and "candidate virtio_offloads = 'on'" in out


def test_recommend_says_what_a_tune_confirmed_or_refuted(tmp_path, capsys):
    text = TUNE.replace('dut_sysctls = ["net.core.somaxconn=4095"]', 'dut_sysctls = ["net.netfilter.nf_conntrack_max=262144"]')
    store = Store(tmp_path / "t.db")
    outcome = run_experiment(parse_experiment(text), store, beds([]), file_text=text)
    decided = {s.candidate.knob: s.judgement.decision for s in outcome.steps}["dut_sysctls"]
    assert decided in ("rejected", "inconclusive")  # the simulated box does not care about it
    assert main(["recommend", "--os", "linux", "--os-version", "6.1", "--role", "nat-firewall", "--tune", "tune-sim",
                 "--db", str(tmp_path / "t.db")]) == 0
    out = capsys.readouterr().out
    line = next(l for l in out.splitlines() if l.startswith("net.netfilter.nf_conntrack_max = 262144") and "box" in l)
    assert ("refuted on this box" if decided == "rejected" else "not settled on this box") in line
    assert "net.ipv4.ip_forward = 1" in out and "not tried by the tune" in out
    assert main(["recommend", "--os", "linux", "--os-version", "6.1", "--role", "router", "--tune", "1",
                 "--db", str(tmp_path / "t.db"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["tune"]
