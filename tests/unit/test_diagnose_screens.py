"""Linux CPU screens (procps top in any locale, BusyBox top, mpstat) and the raw-paste recogniser, on
real outputs (tests/data/diagnose, each naming its source)."""

import pytest

from linerate.diagnose import raw, screens
from linerate.errors import ParseError
from tests.conftest import capture


def test_procps_top_in_a_french_locale_is_read_by_position():
    cpus, _ = screens.parse_linux_top(capture("diagnose/corpus/i40e_top_4_of_8_cpus_softirq.txt"))
    assert [c["busy_pct"] for c in cpus] == [100.0, 100.0, 100.0, 100.0, 20.5, 16.4, 15.1, 18.3]
    assert cpus[0]["softirq_pct"] == 97.7


def test_busybox_top_gives_its_aggregate_and_napi_threads():
    text = capture("diagnose/busybox_top_mt7621.txt")
    cpus, threads = screens.parse_linux_top(text)
    assert cpus == [] and threads[0] == {"name": "napi/mtk_eth-6", "pct": 25.0, "cpu": None, "of_all_cpus": True}
    assert screens.aggregate_cpu(text)["softirq_pct"] == 33.0 and screens.aggregate_cpu(text)["busy_pct"] == 69.0


def test_mpstat_takes_the_last_interval():
    rows = screens.parse_mpstat(capture("diagnose/mpstat_two_intervals.txt"))
    assert [(r["cpu"], r["busy_pct"]) for r in rows] == [(0, 24.0), (1, 76.0)]
    with pytest.raises(ParseError):
        screens.parse_mpstat("CPU %idle\n")


def test_ksoftirqd_is_placed_on_its_cpu():
    """raspberrypi/Raspberry-Pi-OS-64bit#182's top: ksoftirqd/0 at 93.2% (its header and that row, verbatim)."""
    header = "  PID USER      PR  NI    VIRT    RES    SHR S  %CPU  %MEM     TIME+ COMMAND"
    threads = screens._thread_table([header, "   12 root      20   0       0      0      0 R  93.2   0.0  43:47.43 ksoftirqd/0"])
    assert threads == [{"name": "ksoftirqd/0", "pct": 93.2, "cpu": 0}]


def test_recogniser_cuts_a_shell_session_into_its_outputs():
    blocks = raw.blocks(capture("diagnose/corpus/freebsd_igb_one_queue_shell_session.txt"))
    assert [(b.kind, b.command) for b in blocks] == [
        ("vmstat", "[root@BSDRP]~# vmstat -i | grep igb"), ("netstat-w", "[root@BSDRP]~# netstat -iw 1"),
        ("freebsd-top", "[root@bsdrp2]~# top -nCHSIzs1")]


def test_recogniser_reports_what_it_cannot_read():
    reading = raw.recognise("Some text I typed\nmore text\n\n 56:  271490338          0   PCI-MSI 1-edge  eth0\n")
    assert reading.not_understood == ["Some text I typed"] and reading.irq_tables[0][2] == {"eth0": [271490338, 0]}
