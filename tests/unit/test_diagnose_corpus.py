"""`linerate diagnose --after FILE --os OS` on real router/firewall outputs from public issue
threads and write-ups (tests/data/diagnose/corpus/, labels in cases.toml, each file's first line
naming its source and what the source concluded). The verdict that counts is the first `limit`
verdict ("none" when no limit verdict fires); agreement is measured and printed as k of n."""

import json
import tomllib

import pytest

from linerate.cli import main
from tests.conftest import DATA

CORPUS = DATA / "diagnose" / "corpus"
CASES = tomllib.loads((CORPUS / "cases.toml").read_text())["cases"]


def run(capsys, name: str, os_name: str) -> dict:
    code = main(["diagnose", "--after", str(CORPUS / name), "--os", os_name, "--json"])
    out = capsys.readouterr().out
    assert code == 0
    return json.loads(out)


def first_limit(doc: dict) -> str:
    return next((v["code"] for v in doc["verdicts"] if v["kind"] == "limit"), "none")


def test_every_corpus_file_is_labelled_and_names_its_source():
    files = {p.name for p in CORPUS.glob("*.txt")}
    assert files == set(CASES) and len(files) >= 12
    for name in files:
        first = (CORPUS / name).read_text().splitlines()[0]
        assert first.startswith("# source: ") and "conclusion" in first and ("http" in first or "file id" in first
                                                                            or "documentation" in first), name


def test_corpus_agreement(capsys):
    got = {name: first_limit(run(capsys, name, case["os"])) for name, case in CASES.items()}
    agree = [name for name, case in CASES.items() if got[name] == case["expected"]]
    with capsys.disabled():
        print(f"\ndiagnose agrees with the source's conclusion on {len(agree)} of {len(CASES)} corpus cases")
        for name, case in sorted(CASES.items()):
            print(f"  {'ok  ' if name in agree else 'MISS'} {name}: expected {case['expected']}, got {got[name]}")
    assert len(agree) == len(CASES), {n: (CASES[n]["expected"], got[n]) for n in CASES if n not in agree}


@pytest.mark.parametrize("name", sorted(n for n, c in CASES.items() if c["expected"].startswith("irq-")))
def test_interrupt_verdicts_say_whether_they_span_boot_or_a_window(capsys, name):
    doc = run(capsys, name, CASES[name]["os"])
    verdict = next(v for v in doc["verdicts"] if v["code"] == CASES[name]["expected"])
    if "packet counters per queue" in verdict["evidence"]:  # ethtool -S, read once: totals since boot
        assert "totals since boot (one reading" in verdict["evidence"]
        return
    assert ("since boot" in verdict["evidence"]) == doc["interrupts_since_boot"]
    if "grep_twice" in name:  # the same grep pasted twice, a second apart: a window, not since boot
        assert doc["interrupts_since_boot"] is False and "between two readings" in verdict["evidence"]
    else:
        assert doc["interrupts_since_boot"] is True


def test_a_grep_without_the_cpu_header_counts_cpus_from_its_columns(capsys):
    doc = run(capsys, "esxi_vmxnet3_rx_on_cpu0.txt", "linux")
    assert "no CPU header row: 46 CPUs counted from its columns" in doc["read"][0]
    evidence = doc["verdicts"][0]["evidence"]
    assert "CPU 0 took 100%" in evidence and "time_squeeze) 12,580 times" in evidence


def test_output_it_does_not_read_is_reported_not_dropped(capsys, tmp_path):
    doc = run(capsys, "freebsd_igb_one_queue_shell_session.txt", "freebsd")
    assert doc["not_understood"] == [] and "netstat -w ((Total), 7 intervals)" in doc["read"]  # netstat -iw 1 is read
    unread = tmp_path / "unread.txt"
    unread.write_text((CORPUS / "freebsd_igb_one_queue_shell_session.txt").read_text()
                      .replace("netstat -iw 1", "netstat -s -p tcp").replace("   packets  errs idrops", "   tcp: errs idrops"))
    code = main(["diagnose", "--after", str(unread), "--os", "freebsd"])
    out = capsys.readouterr().out
    assert code == 0 and "section present but not understood: [root@BSDRP]~# netstat -s -p tcp" in out


def test_a_driver_regression_gets_no_invented_limit(capsys):
    """Two busy single-queue NICs on two different CPUs: nothing piled on one CPU or queue."""
    doc = run(capsys, "openwrt_rtl8111_driver_regression.txt", "openwrt")
    assert [v for v in doc["verdicts"] if v["kind"] == "limit"] == []


def test_ethtool_per_queue_packet_counters_are_read_by_content(capsys):
    """pcengines/apu2-documentation#190: `ethtool -S enp1s0 | grep rx_queue` (igb on an i211 with RSS
    off) puts every packet on rx queue 0; a paste of packet counters, not interrupts, still shows it."""
    doc = run(capsys, "apu4_i211_one_rx_queue_ethtool.txt", "linux")
    verdict = doc["verdicts"][0]
    assert verdict["code"] == "irq-one-queue" and "enp1s0 rx queue 0 received 16,630,368,449" in verdict["evidence"]
    assert "ethtool -S enp1s0: packet counters per queue" in verdict["evidence"]
    assert doc["read"] == ["ethtool -S enp1s0 (2 rx queues with packet counters)"] and doc["not_understood"] == []


def test_a_command_echoed_without_a_prompt_names_the_screen_below_it(capsys):
    """opnsense/core#4003: 'top -aSH' on a line of its own above the top screen is the command, not an
    unread section."""
    doc = run(capsys, "opnsense_i386_top_aSH_all_busy.txt", "opnsense")
    assert doc["not_understood"] == [] and doc["read"][0].startswith("FreeBSD top")
