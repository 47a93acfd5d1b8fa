"""Verdict rules one by one (each with a case where it must fire and one where it must not), the
offline `diagnose --before/--after` on recorded real FreeBSD outputs, and the snapshot format."""

import json
import subprocess

import pytest

from linerate.cli import main
from linerate.diagnose.facts import Facts, cell_facts
from linerate.diagnose.rules import RULES, diagnose
from linerate.dut import sections
from linerate.dut.parsers import parse_softnet_stat, parse_top
from linerate.errors import ParseError
from tests.conftest import DATA, capture

GBIT_CEILING = 941.48e6


def cpus(*busy, interrupt=None):
    return [{"cpu": i, "busy_pct": b, "interrupt_pct": b if interrupt else 0.0, "idle_pct": 100 - b}
            for i, b in enumerate(busy)]


def fired(facts: Facts) -> set[str]:
    return {code for code, check in RULES.items() if check(facts) is not None}


CASES = {  # code: (facts where it must fire, facts where it must not)
    "at-line-rate": (Facts(throughput_bps=935e6, ceiling_bps=GBIT_CEILING, line_rate_source="1g"),
                     Facts(throughput_bps=590e6, ceiling_bps=GBIT_CEILING, line_rate_source="1g")),
    "line-rate-unknown": (Facts(throughput_bps=590e6), Facts(throughput_bps=590e6, ceiling_bps=GBIT_CEILING)),
    "generator-bound": (Facts(generator_bound=True), Facts()),
    "shared-kernel": (Facts(shared_kernel=True), Facts()),
    # pool/window.py's own line for a slow pair; at line rate a pool's slow pair held nothing back
    "slow-pair": (Facts(pool_slow=[["pair 2 (client2 -> server2): 10.0 Mbit/s, the others' median 919.6"], []]),
                  Facts(throughput_bps=935e6, ceiling_bps=GBIT_CEILING, line_rate_source="1g",
                        pool_slow=[["pair 2 (client2 -> server2): 40.0 Mbit/s, the others' median 60.0"]])),
    "single-core-bound": (Facts(cpus=cpus(100, 3, 5, 2), os_family="freebsd", streams=1),
                          Facts(cpus=cpus(100, 3, 5, 2), shared_kernel=True)),
    "cpu-bound": (Facts(cpus=cpus(97, 93, 95, 99)), Facts(cpus=cpus(97, 93, 95, 40))),
    "partial-cpu-bound": (Facts(cpus=cpus(100, 100, 100, 100, 100, 100, 20, 15), os_family="freebsd"),
                          Facts(cpus=cpus(91, 76, 95, 78))),  # evenly spread (redis/redis#5825): no k-of-n split
    "irq-one-cpu": (Facts(irq_cpu={"eth0": [900000, 0], "mwlwifi": [3792826, 0]}, irq_since_boot=True),
                    Facts(irq_cpu={"eth0": [58130886, 0], "eth3": [0, 54094149]})),
    "irq-one-cpu-per-nic": (Facts(irq_cpu={"eth0": [58130886, 0], "eth3": [0, 54094149]}),  # coolsnowwolf/lede#10394
                            Facts(irq_cpu={"eth0": [29065443, 29065443], "eth3": [0, 54094149]})),
    "irq-one-cpu-no-harm": (Facts(softnet_cpu=[{"cpu": 0, "processed": 2245, "dropped": 0, "time_squeeze": 6},
                                               {"cpu": 1, "processed": 44242, "dropped": 0, "time_squeeze": 6}],
                                  irq_since_boot=True),  # netdata/netdata#1076
                            Facts(irq_cpu={"eth0": [900000, 0], "mwlwifi": [3792826, 0]}, irq_since_boot=True)),
    "irq-storm": (Facts(os_family="linux", cpu_total={"busy_pct": 25.7, "interrupt_pct": 24.8, "idle_pct": 74.3},
                        threads=[{"name": "ksoftirqd/0", "pct": 100.0, "cpu": 0}]),  # tobiasBora/MT7630E_3.16#1
                  Facts(os_family="freebsd", cpus=cpus(100, 100, 100, 100, interrupt=True))),  # BSD: the stack itself
    "irq-time-accounting-only": (Facts(os_family="linux", cpu_total={"busy_pct": 50.0, "interrupt_pct": 49.8,
                                                                      "idle_pct": 50.0}),  # MIPS/CI20_linux#35
                                 Facts(os_family="linux", cpu_total={"busy_pct": 25.7, "interrupt_pct": 24.8,
                                                                     "idle_pct": 74.3},
                                       threads=[{"name": "ksoftirqd/0", "pct": 100.0, "cpu": 0}])),
    "rx-dropped-not-nic": (Facts(rx_dropped={"enp3s0": 11723}, rx_packets={"enp3s0": 22328419}),  # netdata#4536
                           Facts(nic_drops={"eth2 rx_missed_errors": 7142467})),
    "irq-one-queue": (Facts(interrupts={"igb0:rxq0": 90000, "igb0:rxq1": 12, "igb0:rxq2": 9, "igb0:aq": 2}),
                      Facts(interrupts={"igb0:rxq0": 25000, "igb0:rxq1": 24000, "igb0:rxq2": 26000})),
    "nic-drops": (Facts(nic_drops={"igb0 rx errors": 797962}),
                  Facts(nic_drops={"eth0 rx_missed_errors": 4954}, nic_packets=7_399_285_071)),  # negligible
    "nic-drops-negligible": (Facts(nic_drops={"eth0 rx_missed_errors": 4954}, nic_packets=7_399_285_071),
                             Facts(nic_drops={"eth7 rx_missed_errors": 22637793})),
    "no-network-irq": (Facts(irq_cpu={"xhci-hcd:usb5": [1145, 0, 0, 0, 1867342]}),
                       Facts(irq_cpu={"xhci-hcd:usb5": [1145, 0, 0, 0, 1867342]}, usb_nic_driver="r8152")),
    "stack-queue-drops": (Facts(stack_drops={"netisr ip queue": 3651}), Facts(drops_known=True)),
    "retransmits-path-loss": (Facts(retransmits=120, drops_known=True),
                              Facts(retransmits=120, drops_known=True, shaper_drops=4000)),
    "retransmits-dut-drops": (Facts(retransmits=120, shaper_drops=4000), Facts(retransmits=120, drops_known=True)),
    "offload-pathology": (Facts(throughput_bps=5e6, ceiling_bps=GBIT_CEILING, nic_names=["vtnet0", "vtnet1"],
                                os_family="freebsd"),
                          Facts(throughput_bps=5e6, ceiling_bps=GBIT_CEILING, nic_names=["vtnet0"],
                                checksum_offload="off")),
    "queue-under-load": (Facts(throughput_bps=941e6, rtt_idle_p50_ms=0.05, rtt_loaded_p50_ms=25.1),
                         Facts(throughput_bps=928e6, rtt_idle_p50_ms=0.065, rtt_loaded_p50_ms=1.9)),
}


def test_queue_under_load_says_how_much_is_queued():
    verdict = RULES["queue-under-load"](Facts(throughput_bps=941e6, rtt_idle_p50_ms=0.05, rtt_loaded_p50_ms=25.05))
    assert "+25.0 ms" in verdict.evidence and "2.9 MB" in verdict.evidence  # 25 ms x 941 Mbit/s / 8
    assert verdict.kind == "note"


def test_every_rule_has_a_case():
    assert set(CASES) == set(RULES)


@pytest.mark.parametrize("code", sorted(CASES))
def test_rule_fires_and_stays_silent(code):
    fires, silent = CASES[code]
    verdict = RULES[code](fires)
    assert verdict is not None and verdict.code == code and verdict.evidence and verdict.advice
    assert RULES[code](silent) is None


def test_single_core_verdict_names_what_spreads_it_and_when_it_cannot():
    verdict = RULES["single-core-bound"](Facts(cpus=cpus(100, 3, 5, 2, interrupt=True), os_family="freebsd",
                                               streams=1))
    assert "CPU 0 100% busy (100% interrupt)" in verdict.evidence and "average 3%" in verdict.evidence
    assert "net.isr.dispatch=deferred" in verdict.advice and "PPPoE" in verdict.advice
    assert "RPS" in RULES["single-core-bound"](Facts(cpus=cpus(100, 3), os_family="linux")).advice
    # balanced load is not single-core
    assert RULES["single-core-bound"](Facts(cpus=cpus(100, 90, 95, 92))) is None


def test_at_line_rate_keeps_only_notes():
    facts = Facts(throughput_bps=940e6, ceiling_bps=GBIT_CEILING, line_rate_source="emulated 1g link",
                  retransmits=40, shaper_drops=900, shared_kernel=True)
    assert [v.code for v in diagnose(facts)] == ["at-line-rate", "shared-kernel"]


def test_namespace_lab_cell_makes_no_dut_cpu_claim():
    trials = [{"telemetry": {"dut": {"cpu": cpus(100, 100), "shared_kernel": True}}, "retransmits": 0,
               "dut_counters": {"veth0_rx_dropped": 0}}]
    facts = cell_facts({"streams": 1, "link_rate": "none"}, trials, mean_bps=30e9, retransmits=0, ceiling_bps=None,
                       line_rate_source=None, flags=("generator-bound",))
    codes = [v.code for v in diagnose(facts)]
    assert "generator-bound" in codes and "shared-kernel" in codes
    assert not {"cpu-bound", "single-core-bound"} & set(codes)


def test_cell_facts_reads_stored_telemetry():
    trials = [{"telemetry": {"dut": {"cpu": cpus(96, 4), "interrupts": {"virtio1-input.0": 900}}},
               "dut_counters": {"eth1_rx_dropped": 5, "softnet_dropped": 2, "shaper_dropped": 0}},
              {"telemetry": {"dut": {"cpu": cpus(98, 6)}}, "dut_counters": {"eth1_rx_dropped": 0}}]
    facts = cell_facts({"streams": 1, "dut_offloads": "eth1:tx=off"}, trials, mean_bps=500e6, retransmits=20,
                       ceiling_bps=GBIT_CEILING, line_rate_source="x", flags=(), os_family="linux")
    assert facts.cpus[0]["busy_pct"] == 97.0 and facts.cpus[1]["busy_pct"] == 5.0 and facts.nic_names == ["eth1"]
    assert facts.nic_drops == {"eth1 rx drops": 5} and facts.stack_drops == {
        "Linux input backlog (softnet_stat dropped)": 2}
    assert facts.checksum_offload == "off" and facts.interrupts == {"virtio1-input.0": 900}
    assert {"single-core-bound", "nic-drops", "stack-queue-drops", "retransmits-dut-drops"} <= fired(facts)


# --- offline: pasted snapshots of real FreeBSD routers ----------------------------------------------------

def diagnose_cli(capsys, *args):
    code = main(["diagnose", *args])
    out = capsys.readouterr()
    return code, out.out, out.err


def snap(name: str) -> str:
    return str(DATA / "bsd" / name)


def test_one_igb_queue_at_100_percent_is_single_queue_bound(capsys):
    code, out, _ = diagnose_cli(capsys, "--after", snap("snapshot_single_queue_after.txt"), "--os", "pfsense")
    assert code == 0
    assert "[single-core-bound]" in out and "CPU 2 100% busy" in out
    assert "intr{irq272: igb2:que} at 100%" in out
    assert "more streams" in out and "net.isr.dispatch=deferred" in out and "PPPoE" in out
    assert "[cpu-bound]" not in out


@pytest.mark.parametrize("name", ["snapshot_balanced_queues_after.txt", "snapshot_all_cpus_interrupt_after.txt"])
def test_balanced_queues_at_high_load_are_cpu_bound(capsys, name):
    code, out, _ = diagnose_cli(capsys, "--after", snap(name), "--os", "freebsd", "--json")
    codes = [v["code"] for v in json.loads(out)["verdicts"]]
    assert code == 0 and "cpu-bound" in codes and "single-core-bound" not in codes


def test_netisr_drops_name_the_queue(capsys):
    code, out, _ = diagnose_cli(capsys, "--after", snap("snapshot_netisr_drops_after.txt"), "--os", "opnsense")
    assert code == 0 and "[stack-queue-drops]" in out and "netisr ip queue 181,210,251" in out
    assert "since boot" in out and "net.inet.ip.intr_queue_maxlen" in out


def test_before_and_after_give_deltas(capsys):
    code, out, _ = diagnose_cli(capsys, "--before", snap("snapshot_forwarding_during.txt"), "--after",
                                snap("snapshot_forwarding_after.txt"), "--os", "freebsd", "--json")
    doc = json.loads(out)
    assert code == 0 and doc["since_boot"] is False
    assert not {"nic-drops", "stack-queue-drops"} & {v["code"] for v in doc["verdicts"]}


@pytest.mark.parametrize("args, field", [
    (["--after", "X"], "--os"),
    (["--before", "X", "--os", "freebsd"], "--after"),
    (["--snapshot-script"], "--os"),
])
def test_bad_offline_input_is_one_line_exit_2(capsys, args, field):
    code, out, err = diagnose_cli(capsys, *[snap("snapshot_single_queue_after.txt") if a == "X" else a for a in args])
    assert code == 2 and err.startswith(f"linerate: {field}") and len(err.strip().splitlines()) == 1


def test_snapshot_of_another_os_or_not_a_snapshot_is_refused(capsys, tmp_path):
    code, _, err = diagnose_cli(capsys, "--after", snap("snapshot_single_queue_after.txt"), "--os", "linux")
    assert code == 2 and "freebsd host, not linux" in err
    other = tmp_path / "notes.txt"
    other.write_text("netstat output I typed by hand\n")
    code, _, err = diagnose_cli(capsys, "--after", str(other), "--os", "freebsd")
    assert code == 2 and "no snapshot sections" in err


def test_snapshot_script_is_one_line_of_sh_that_reads_back(capsys, tmp_path):
    """Two snapshots taken in the same second land in two files, and the line says where."""
    code, out, _ = diagnose_cli(capsys, "--snapshot-script", "--os", "linux")
    line = out.strip()
    assert code == 0 and "\n" not in line
    paths = []
    for _ in ("before", "after"):
        done = subprocess.run(["sh", "-c", line], capture_output=True, text=True, env={"TMPDIR": str(tmp_path),
                                                                                    "PATH": "/usr/bin:/bin"})
        assert done.stdout == "" and done.stderr.startswith("linerate snapshot written to ")
        paths.append(done.stderr.strip().rsplit(" ", 1)[1])
    assert paths[0] != paths[1] and all(p.startswith(str(tmp_path)) for p in paths)
    code, out, _ = diagnose_cli(capsys, "--before", paths[0], "--after", paths[1], "--os", "linux", "--json")
    doc = json.loads(out)
    assert code == 0 and doc["since_boot"] is False and doc["cpu_source"].startswith("CPU counters")


def test_sections_round_trip_and_failed_commands():
    text = sections.render([(["cat", "/proc/stat"], 0, "cpu0 1 2 3\n"), (["pfctl", "-s", "info"], 1, "")], "linux")
    assert sections.split(text) == {"cat /proc/stat": "cpu0 1 2 3\n"}  # the failed pfctl has no section
    assert sections.family_of(text) == "linux"


def test_top_parser_takes_the_last_display_and_rejects_garbage():
    cpus_, threads = parse_top(capture("bsd/snapshot_all_cpus_interrupt_after.txt").split("40\n", 1)[1])
    assert len(cpus_) == 8 and cpus_[0]["interrupt_pct"] == 97.3 and cpus_[7]["busy_pct"] == 88.6
    assert threads[0] == {"name": "intr", "pct": 686.23, "cpu": 0}
    with pytest.raises(ParseError):
        parse_top("nothing like top\n")


def test_softnet_stat_parser_on_a_real_capture():
    counts = parse_softnet_stat(capture("linux/softnet_stat.txt"))
    # two CPUs: 0x0d1a1d6a + 0x0df75baa processed, no drops, 2 + 3 time squeezes
    assert counts == {"softnet_processed": 454129940, "softnet_dropped": 0, "softnet_time_squeeze": 5}
    with pytest.raises(ParseError):
        parse_softnet_stat("cpu0 xyz\n")


def test_cpus_are_averaged_by_rank_so_a_wandering_hot_cpu_still_shows():
    """The VM demo's 1-stream cells: one guest CPU ~96% busy in every trial, but not always the
    same one (values from a stored run). By CPU number they average ~60/60 and no verdict fires."""
    from linerate.diagnose.facts import mean_cpus

    windows = [[{"cpu": 0, "busy_pct": 95.7}, {"cpu": 1, "busy_pct": 24.3}],
               [{"cpu": 0, "busy_pct": 27.1}, {"cpu": 1, "busy_pct": 99.1}],
               [{"cpu": 0, "busy_pct": 95.6}, {"cpu": 1, "busy_pct": 26.1}]]
    averaged = mean_cpus(windows)
    assert [c["busy_pct"] for c in averaged] == [96.8, 25.8]
    assert averaged[0]["cpu"] == 0 and "changed between trials" in averaged[0]["cpu_label"]
    verdict = RULES["single-core-bound"](Facts(cpus=averaged, streams=1))
    assert verdict is not None and verdict.evidence.startswith("CPU 0/1 (the busiest one changed")
    same = mean_cpus([[{"cpu": 0, "busy_pct": 10.0}, {"cpu": 1, "busy_pct": 97.0}]] * 2)
    assert same[0]["cpu_label"] == "CPU 1"


def test_transmit_queues_are_not_an_rss_problem():
    """virtio0-output.N are transmit completions: the sending CPU picks the queue (XPS)."""
    tx_only = {"virtio0-output.0": 3, "virtio0-output.1": 613, "virtio0-input.0": 50, "virtio0-input.1": 61}
    assert RULES["irq-one-queue"](Facts(interrupts=tx_only)) is None
    rx_skewed = {"virtio0-input.0": 3, "virtio0-input.1": 613}
    assert "virtio0 rx" in RULES["irq-one-queue"](Facts(interrupts=rx_skewed)).title


# --- raw pastes and partly understood snapshots ------------------------------------------------------------

def test_partial_saturation_names_k_of_n_and_the_lever():
    verdict = RULES["partial-cpu-bound"](Facts(cpus=cpus(100, 100, 100, 100, 100, 100, 20, 15), os_family="freebsd",
                                               cpu_source="top"))
    assert verdict.evidence.startswith("6 of 8 CPUs >= 90% busy (CPU 0, 1, 2, 3, 4, 5); the other 2 average 18%")
    assert "net.inet.rss.enabled=1" in verdict.advice and "override_nrxqs" in verdict.advice
    assert RULES["partial-cpu-bound"](Facts(cpus=cpus(97, 93, 95, 99))) is None  # every CPU: cpu-bound


def test_irq_one_cpu_leaves_a_single_hot_queue_to_irq_one_queue():
    """ixl1:rxq3 took every interrupt and is bound to CPU 3: that is RSS, not IRQ placement."""
    facts = Facts(irq_cpu={"ixl1:rxq0": [0, 0, 0, 0], "ixl1:rxq3": [0, 0, 0, 817]},
                  interrupts={"ixl1:rxq0": 0, "ixl1:rxq3": 817})
    assert RULES["irq-one-cpu"](facts) is None and RULES["irq-one-queue"](facts) is not None


def test_irq_one_queue_sees_a_skew_short_of_80_percent():
    """openwrt/openwrt#13493: eth2-TxRx-6 took 64% of 4 queues, 5x the median of the others."""
    skewed = {"eth2-TxRx-4": 1866673, "eth2-TxRx-5": 2194143, "eth2-TxRx-6": 10098006, "eth2-TxRx-7": 1592225}
    verdict = RULES["irq-one-queue"](Facts(interrupts=skewed, irq_since_boot=True))
    assert "eth2-TxRx-6 took 10,098,006 of 15,751,047 interrupts (64%)" in verdict.evidence
    assert "since boot" in verdict.evidence
    balanced = {"igb2:que 0": 2759545998, "igb2:que 1": 2587966938, "igb2:que 2": 2589102074, "igb2:que 3": 2598239184}
    assert RULES["irq-one-queue"](Facts(interrupts=balanced)) is None  # BSDRP 82580, correctly load-balanced


def test_softnet_time_squeeze_on_one_cpu_is_evidence_on_its_own():
    rows = [{"cpu": 0, "processed": 500000, "dropped": 0, "time_squeeze": 3000},
            {"cpu": 1, "processed": 480000, "dropped": 0, "time_squeeze": 4}]
    verdict = RULES["irq-one-cpu"](Facts(softnet_cpu=rows, irq_since_boot=True))
    assert "CPU 0 ran out of budget (time_squeeze) 3,000 times against 4" in verdict.evidence
    assert "since boot" in verdict.evidence


def test_a_headered_section_linerate_cannot_read_is_named(capsys, tmp_path):
    after = tmp_path / "after.txt"
    after.write_text("### linerate-snapshot 1 freebsd\n### linerate: vmstat -i\nvmstat: kvm_open: no such file\n")
    code, out, _ = diagnose_cli(capsys, "--after", str(after), "--os", "freebsd")
    assert code == 0 and "section present but not understood: vmstat -i: vmstat: kvm_open: no such file" in out
    assert "not in the after snapshot: " in out and "interrupts per queue (vmstat -i)" not in out.split(
        "not in the after snapshot: ")[1]


def test_a_raw_paste_of_the_other_os_is_refused(capsys):
    code, _, err = diagnose_cli(capsys, "--after", str(DATA / "diagnose" / "corpus" / "openwrt_r76s_grep_eth_cpu0.txt"),
                                "--os", "pfsense")
    assert code == 2 and "holds linux output, not pfsense" in err and len(err.strip().splitlines()) == 1


def test_raw_before_and_after_files_give_a_window(capsys, tmp_path):
    """The same `grep mwl /proc/interrupts` as two files: the difference, not totals since boot."""
    lines = (DATA / "diagnose" / "corpus" / "openwrt_mwlwifi_grep_twice.txt").read_text().splitlines()
    (tmp_path / "b").write_text("\n".join(lines[2:4]) + "\n")
    (tmp_path / "a").write_text("\n".join(lines[4:6]) + "\n")
    code, out, _ = diagnose_cli(capsys, "--before", str(tmp_path / "b"), "--after", str(tmp_path / "a"), "--os",
                                "openwrt", "--json")
    doc = json.loads(out)
    assert code == 0 and doc["interrupts_since_boot"] is False
    assert "3,979 network interrupts" in doc["verdicts"][0]["evidence"]


def test_path_loss_advice_on_an_emulated_path_names_the_host_not_cabling():
    from linerate.diagnose.facts import Facts
    from linerate.diagnose.rules import retransmits_path_loss

    real = Facts(retransmits=120.0, drops_known=True, line_rate_source="negotiated speed of igb0 on the DUT")
    lab = Facts(retransmits=120.0, drops_known=True, shared_kernel=True)
    vm = Facts(retransmits=120.0, drops_known=True, line_rate_source="emulated link 1g")
    assert "cabling" in retransmits_path_loss(real).advice
    for facts in (lab, vm):
        advice = retransmits_path_loss(facts).advice
        assert "cabling" not in advice and "switch" not in advice and "shaper" in advice and "qemu" in advice
