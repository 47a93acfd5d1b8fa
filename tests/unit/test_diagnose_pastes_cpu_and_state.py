"""Diagnose of pasted outputs: top's all-CPUs line read and used, a process above 100% counted as several CPUs,
one verdict per CPU cause, raw pfctl/conntrack pastes recognised and judged, a UTF-8 byte order mark
named. Pastes are real (each data file's first line names its source and what it concluded); the
k-of-n CPU cases are Facts built in the test, not output formats."""

import json

import pytest

from linerate.cli import main
from linerate.diagnose import raw, screens
from linerate.diagnose.facts import Facts
from linerate.diagnose.rules import diagnose
from tests.conftest import DATA


def run(capsys, path, os_name: str) -> dict:
    assert main(["diagnose", "--after", str(path), "--os", os_name, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def limits(doc: dict) -> list[str]:
    return [v["code"] for v in doc["verdicts"] if v["kind"] == "limit"]


def test_aggregate_only_top_with_no_idle_is_cpu_bound(capsys):
    # WireGuard/wireguard-vyatta-ubnt#43: 2-core E100, '%Cpu(s): ... 3.3 id ... 61.3 si', "100% cpu load"
    doc = run(capsys, DATA / "diagnose" / "edgerouter_e100_top_aggregate_si.txt", "linux")
    assert limits(doc) == ["cpu-bound"]
    evidence = doc["verdicts"][0]["evidence"]
    assert "3.3% idle" in evidence and "61% softirq" in evidence and "all-CPUs line" in evidence


def test_busybox_aggregate_lines_are_read():
    # the BusyBox aggregate line as the project's issue tracker quotes it, and kaloz/mwlwifi#43's idle one ("top (during idle)")
    busy = screens.parse_busybox_cpu_line("CPU:   0% usr   2% sys   0% nic   1% idle   0% io   0% irq  97% sirq")
    idle = screens.parse_busybox_cpu_line("CPU:   0% usr   0% sys   0% nic  98% idle   0% io   0% irq   1% sirq")
    assert busy["cpu"] == -1 and busy["busy_pct"] == 99.0 and busy["softirq_pct"] == 97.0
    assert idle["busy_pct"] == 2.0
    assert [v.code for v in diagnose(Facts(cpu_total=busy)) if v.kind == "limit"] == ["cpu-bound"]
    assert [v.code for v in diagnose(Facts(cpu_total=idle)) if v.kind == "limit"] == []


def test_a_process_above_100_percent_is_several_cpus():
    facts = Facts(threads=[{"name": "nginx", "pct": 198.0, "cpu": None}])
    assert not [v for v in diagnose(facts) if v.code == "single-core-bound"]
    one = Facts(threads=[{"name": "ksoftirqd/0", "pct": 99.0, "cpu": None}],
                cpu_total={"cpu": -1, "busy_pct": 30.0, "idle_pct": 70.0})
    assert [v.code for v in diagnose(one) if v.kind == "limit"] == ["single-core-bound"]
    cpus = [{"cpu": 0, "busy_pct": 100.0}, {"cpu": 1, "busy_pct": 100.0}, {"cpu": 2, "busy_pct": 5.0},
            {"cpu": 3, "busy_pct": 5.0}]
    verdict = next(v for v in diagnose(Facts(cpus=cpus, threads=[{"name": "nginx", "pct": 198.0, "cpu": None}]))
                   if v.code == "partial-cpu-bound")
    assert "about 2.0 CPUs" in verdict.evidence and "of one CPU" not in verdict.evidence


def _cpus(*busy: float) -> list[dict]:
    return [{"cpu": i, "busy_pct": b} for i, b in enumerate(busy)]


@pytest.mark.parametrize("busy, expected", [
    ((100.0,) * 8 + (0.0,) * 56, ["partial-cpu-bound"]),  # 8 of 64 saturated: not also single-core-bound
    ((100.0, 60.0), ["single-core-bound"]),  # 1 of 2: never partial-cpu-bound
    ((100.0, 10.0, 10.0, 10.0), ["single-core-bound"]),
    ((100.0, 100.0), ["cpu-bound"]),
    ((100.0, 100.0, 10.0), ["partial-cpu-bound"]),
    ((95.0, 80.0, 78.0, 76.0), []),  # spread evenly (redis/redis#5825): no k-of-n split
])
def test_one_verdict_per_cpu_cause(busy, expected):
    assert [v.code for v in diagnose(Facts(cpus=_cpus(*busy))) if v.kind == "limit"] == expected


@pytest.mark.parametrize("name, os_name, expected", [
    ("state/pf_openbsd_packetmischief_grep_memory.txt", "openbsd", "state-table-full"),
    ("state/pf_openbsd_serverfault247714_grep_memory.txt", "openbsd", "state-table-full"),
    ("diagnose/openbsd_pfctl_sm_si_prompts_serverfault247714.txt", "openbsd", "state-table-ok"),
    ("state/pf_macos_pfctl_sa.txt", "freebsd", "state-table-ok"),
    ("state/pf_freebsd_monitorix_pfctl_si.txt", "freebsd", "state-table-fill"),
    ("state/pf_openbsd_serverfault247714_pfctl_sm.txt", "openbsd", "state-table-fill"),
    ("state/ct_S_rke2_3924.txt", "linux", "state-table-fill"),
    ("state/ct_S_k8s56903_old_format.txt", "linux", "state-table-fill"),
    ("state/proc_ct_stat_beats46138.txt", "linux", "state-table-fill"),
    ("state/ct_sysctl_geektime_nat_lab.txt", "linux", "state-table-ok"),
    ("state/ct_dmesg_k8s18604.txt", "linux", "state-table-full"),
])
def test_raw_state_pastes_are_recognised_and_judged(capsys, name, os_name, expected):
    doc = run(capsys, DATA / name, os_name)
    codes = [v["code"] for v in doc["verdicts"] if v["code"].startswith("state-")]
    assert codes[:1] == [expected], (name, codes)
    assert doc["read"]


def test_conntrack_count_and_max_after_their_commands():
    text = ("root@gw:~# cat /proc/sys/net/netfilter/nf_conntrack_count /proc/sys/net/netfilter/nf_conntrack_max\n"
            "180\n1000\nroot@gw:~# conntrack -C\n180\n")
    reading = raw.recognise(text)
    assert reading.state["conntrack-number"] == [{"state_count": 180, "state_max": 1000}, {"state_count": 180}]
    assert not reading.not_understood


def test_a_byte_order_mark_is_skipped_or_named(tmp_path, capsys):
    pasted = (DATA / "diagnose" / "openbsd_pfctl_sm_si_prompts_serverfault247714.txt").read_text()
    with_bom = tmp_path / "notepad.txt"
    with_bom.write_text("\ufeff" + pasted.split("\n", 1)[1], encoding="utf-8")
    assert [v["code"] for v in run(capsys, with_bom, "openbsd")["verdicts"]][:1] == ["state-table-ok"]
    unreadable = tmp_path / "other.txt"
    unreadable.write_text("\ufeffhello\n", encoding="utf-8")
    assert main(["diagnose", "--after", str(unreadable), "--os", "openbsd"]) != 0
    assert "UTF-8 byte order mark" in capsys.readouterr().err


def test_indented_top_with_decimal_commas_is_read(capsys):
    # ntop/PF_RING#24: top in a comma-decimal locale, indented: "system interrupts still in first core"
    doc = run(capsys, DATA / "diagnose" / "pfring24_top_comma_decimals_si_on_cpu0.txt", "linux")
    assert limits(doc) == ["single-core-bound"]
    evidence = doc["verdicts"][0]["evidence"]
    assert "CPU 0 100% busy (53% softirq" in evidence


@pytest.mark.parametrize("line, softirq, idle", [
    ("    %Cpu0  : 46,3 us,  0,3 sy,  0,0 ni,  0,0 id,  0,0 wa,  0,0 hi, 53,3 si,  0,0 st", 53.3, 0.0),
    ("%Cpu0  : 46.3 us,  0.3 sy,  0.0 ni,  0.0 id,  0.0 wa,  0.0 hi, 53.3 si,  0.0 st", 53.3, 0.0),
    ("%Cpu(s):  1,5 us,  0,5 sy,  0,0 ni, 97,9 id,  0,0 wa,  0,0 hi,  0,1 si,  0,0 st", 0.1, 97.9),
    ("%Cpu1  :  1.0 us,2.0 sy,0.0 ni,97.0 id,0.0 wa,0.0 hi,0.0 si,0.0 st", 0.0, 97.0),  # squeezed English list
])
def test_top_cpu_lines_take_a_decimal_comma_and_keep_the_field_list(line, softirq, idle):
    row = screens.parse_procps_cpu_line(line)
    assert row is not None and row["softirq_pct"] == softirq and row["idle_pct"] == idle
    assert raw.recognise(line).top_cpu or raw.recognise(line).cpu_total


def test_pf_state_count_by_wc_beside_the_limits_of_a_real_pfctl_sm():
    """`pfctl -ss | wc -l` (one line per state, pfctl(8); wc(1) prints the count, BSD's with leading blanks)
    beside the `pfctl -sm` of serverfault 247714 (limit 10000): the table's fill is judged."""
    sm = (DATA / "diagnose" / "openbsd_pfctl_sm_si_prompts_serverfault247714.txt").read_text()
    limit_lines = "\n".join(line for line in sm.splitlines() if "hard limit" in line)
    reading = raw.recognise(f"# pfctl -ss | wc -l\n    9950\n# pfctl -sm\n{limit_lines}\n")
    assert reading.state["pf-count"] == [{"state_count": 9950}] and not reading.not_understood
    assert not raw.recognise("# pfctl -sr | wc -l\n    42\n").state  # rules, not states


def test_output_lines_labelled_by_a_runner_are_read():
    """scylladb/scylladb#2611 pasted `/proc/interrupts` through a test runner that puts '[stdout] ' in front
    of every line: the rows are read as the table they are."""
    reading = raw.recognise((DATA / "diagnose" / "scylla2611_i3_16xlarge_eth_irqs_cpu0.txt").read_text())
    assert reading.irq_tables and reading.irq_tables[0][0] == 64
