"""Diagnose by the kind of busy time and with evidence of harm: a receive skew since boot with no
harm is a note (netdata/netdata#1076), hardware-interrupt time worth a CPU is an interrupt storm
(tobiasBora/MT7630E_3.16#1), a CPU filled by a program's user/system time gets program advice and
not NIC-queue advice (luigirizzo/netmap-ipfw#3), and FreeBSD `netstat -w` tables are read per
interval. The pastes are real; each data file's first line names its source and its conclusion."""

import json

from linerate.cli import main
from linerate.dut.parsers import parse_netstat_w
from tests.conftest import DATA

PASTES = DATA / "diagnose"


def run(capsys, path, os_name: str) -> dict:
    assert main(["diagnose", "--after", str(path), "--os", os_name, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def limits(doc: dict) -> list[str]:
    return [v["code"] for v in doc["verdicts"] if v["kind"] == "limit"]


def test_a_benign_softnet_skew_since_boot_is_a_note_not_a_limit(capsys):
    # the source: tiny time_squeeze counts (6 each), no drops: nothing wrong, no limit
    doc = run(capsys, PASTES / "netdata1076_softnet_stat_benign.txt", "linux")
    assert limits(doc) == []
    note = next(v for v in doc["verdicts"] if v["code"] == "irq-one-cpu-no-harm")
    assert note["kind"] == "note" and "no drops" in note["evidence"] and "time_squeeze at most 6" in note["evidence"]
    assert "since boot" in note["evidence"]


def test_the_same_skew_with_time_squeeze_or_volume_stays_a_limit(capsys):
    # coreos/bugs#2135: time_squeeze 12,580 on CPU0 is harm; a /proc/interrupts grep has no harm counters to
    # judge by, so a skew of hundreds of millions of interrupts stays a limit and says what is missing
    doc = run(capsys, PASTES / "corpus" / "esxi_vmxnet3_rx_on_cpu0.txt", "linux")
    assert limits(doc)[0] == "irq-one-cpu" and "harm: time_squeeze" in doc["verdicts"][0]["evidence"]
    doc = run(capsys, PASTES / "corpus" / "debian_igb_all_on_cpu0_grep.txt", "linux")
    assert limits(doc)[0] == "irq-one-cpu" and "whether it hurt is not in the paste" in doc["verdicts"][0]["evidence"]


def test_hardware_interrupt_time_worth_a_cpu_is_an_interrupt_storm(capsys):
    # the source: ksoftirqd/0 at 100%, 24.8% hi overall, a driver bug and not traffic
    doc = run(capsys, PASTES / "mt7630e_top_ksoftirqd0_hi.txt", "linux")
    assert limits(doc) == ["irq-storm"]  # one verdict per cause: not also single-core-bound
    verdict = doc["verdicts"][0]
    assert "24.8% hi" in verdict["evidence"] and "ksoftirqd/0 at 100%" in verdict["evidence"]
    assert "driver" in verdict["advice"] and "rps_cpus" not in verdict["advice"]


def test_a_cpu_filled_by_a_program_gets_program_advice_not_queue_advice(capsys):
    # the source: kipfw keeps CPU 0 at 90-100% (31% user, 56% system), the other three >90% idle, no drops
    doc = run(capsys, PASTES / "netmap_ipfw3_freebsd_cpu0_saturated.txt", "freebsd")
    assert limits(doc) == ["single-core-bound"]
    verdict = doc["verdicts"][0]
    assert "single-threaded" in verdict["title"] and "31% user, 56% system" in verdict["evidence"]
    for queue_advice in ("vmstat -i", "override_nrxqs", "net.isr.dispatch=deferred", "RSS queues"):
        assert queue_advice not in verdict["advice"]
    assert "top -SH" in verdict["advice"]
    assert doc["not_understood"] == [] and "netstat -w (ix1, 4 intervals)" in doc["read"]
    assert doc["since_boot"] is False  # netstat -w rows are per-interval differences


def test_freebsd_netstat_w_rows_are_read_per_interval():
    text = (PASTES / "netmap_ipfw3_freebsd_cpu0_saturated.txt").read_text()
    interface, rows = parse_netstat_w(text.split("all traffic:")[0])
    assert interface == "ix1" and len(rows) == 4
    assert rows[0] == {"rx_packets": 607 * 1024, "rx_errors": 0, "rx_dropped": 0, "rx_bytes": 753 * 1024 ** 2,
                       "tx_packets": 452 * 1024, "tx_errors": 0, "tx_bytes": 88 * 1024 ** 2, "collisions": 0}
    interface, rows = parse_netstat_w(text.split("all traffic:")[1])
    assert interface == "(Total)" and rows[0]["rx_bytes"] == int(1.6 * 1024 ** 3)


def test_netstat_w_errors_per_interval_are_nic_drops(capsys):
    # BSDRP's igb box (corpus): `netstat -iw 1` with ~798k input errors a second beside one saturated queue CPU
    doc = run(capsys, PASTES / "corpus" / "freebsd_igb_one_queue_shell_session.txt", "freebsd")
    assert limits(doc) == ["single-core-bound", "nic-drops"]
    drops = next(v for v in doc["verdicts"] if v["code"] == "nic-drops")
    assert "rx errors 5,585,426" in drops["evidence"]  # 7 intervals summed


def test_busybox_top_shares_bound_the_cpu_count_and_say_when_one_cpu_is_full():
    """BusyBox top's %CPU is a share of all CPUs together (procps/top.c: "CPU% = s->pcpu/sum(s->pcpu) *
    busy_cpu_ticks/total_cpu_ticks"): a thread at X% bounds the CPU count at 100/X, and at that count it
    is one whole CPU; with per-CPU lines pasted the share becomes a share of one CPU."""
    from linerate.diagnose.facts import Facts
    from linerate.diagnose.offline import _per_cpu_shares
    from linerate.diagnose.rules import diagnose

    def verdicts(pct, cpus=()):
        facts = Facts(os_family="linux", threads=[{"name": "ksoftirqd/0", "pct": pct, "cpu": 0, "of_all_cpus": True}],
                      cpus=list(cpus))
        _per_cpu_shares(facts)
        return facts, [v for v in diagnose(facts) if v.code == "single-core-bound"]

    _, [full] = verdicts(25.0)
    assert "if the box has 4 CPUs" in full.title and "at most 4 CPUs" in full.evidence
    assert verdicts(40.0)[1] == []  # at most 2 CPUs: 80% of one at the most, not full
    facts, _ = verdicts(25.0, [{"cpu": i, "busy_pct": 30.0} for i in range(2)])
    assert facts.threads[0]["pct"] == 50.0 and "of_all_cpus" not in facts.threads[0]
