"""Failure classes of the second held-out check, each on its real paste in tests/data/diagnose/ (the file's
first line names its source and what the source concluded): conntrack insert failures since boot, ifconfig /
sysfs statistics / ethtool -g, markdown emphasis inside a paste, and hardware-interrupt time that only the
CPU accounting shows."""

import json

from linerate.cli import main
from linerate.diagnose.raw import recognise, strip_quote
from linerate.dut import nic_statistics
from tests.conftest import DATA

PASTES = DATA / "diagnose"


def run(capsys, name: str) -> dict:
    assert main(["diagnose", "--after", str(PASTES / name), "--os", "linux", "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def codes(doc: dict, kind: str | None = None) -> list[str]:
    return [v["code"] for v in doc["verdicts"] if kind is None or v["kind"] == kind]


def verdict(doc: dict, code: str) -> dict:
    return next(v for v in doc["verdicts"] if v["code"] == code)


def test_insert_failed_since_boot_is_named_as_the_race_never_no_failures(capsys):
    # weaveworks/weave#3287: insert_failed 92 + 107 = the conntrack insertion race dropping packets
    doc = run(capsys, "weave3287_conntrack_S_insert_failed.txt")
    note = verdict(doc, "state-failures-since-boot")
    assert note["kind"] == "note" and "199 packets dropped by conntrack" in note["title"]
    assert "insert_failed 199" in note["evidence"] and "insertion race" in note["evidence"]
    assert "since boot" in note["evidence"] and "--random-fully" in note["advice"]
    assert not any("no failures" in v["title"] + v["evidence"] for v in doc["verdicts"])
    assert doc["not_understood"] == []


def test_rx_missed_with_a_small_ring_is_nic_drops_with_the_ring_advice(capsys):
    # serverdevworker: rx_missed_errors 7,142,467, RX ring 512 of 4096 -> ethtool -G eth2 rx 4096
    doc = run(capsys, "serverdevworker_ixgbe_rx_missed_ring_512.txt")
    assert codes(doc, "limit") == ["nic-drops"] and doc["not_understood"] == []
    nic = verdict(doc, "nic-drops")
    assert "eth2 rx_missed_errors 7,142,467" in nic["evidence"] and "RX ring 512 of a possible 4,096" in nic["evidence"]
    assert "`ethtool -G eth2 rx 4096`" in nic["advice"] and "ethtool.8" in nic["advice"]
    assert "rx-dropped-not-nic" not in codes(doc)  # ifconfig's dropped is the missed frames (/proc/net/dev adds them)


def test_ifconfig_dropped_with_clean_nic_counters_is_not_a_nic_drop(capsys):
    # netdata/netdata#4536: ifconfig dropped 11723 = sysfs rx_dropped, ethtool rx_missed 0: not NIC drops
    doc = run(capsys, "netdata4536_ifconfig_dropped_ethtool_clean.txt")
    assert codes(doc, "limit") == [] and doc["not_understood"] == []
    note = verdict(doc, "rx-dropped-not-nic")
    assert "enp3s0 rx_dropped 11,723" in note["evidence"] and "NIC's own drop counters are 0" in note["evidence"]


def test_markdown_emphasis_inside_an_ethtool_paste_is_one_block(capsys):
    # netdata/netdata#3579: `**tx_dropped: 0**` in the middle of `ethtool -S enp0s31f6`; no NIC drops
    doc = run(capsys, "netdata3579_ethtool_S_e1000e_bold_counter.txt")
    assert doc["read"] == ["ethtool -S enp0s31f6 (5 NIC-wide drop counters)"] and doc["not_understood"] == []
    assert codes(doc, "limit") == []
    assert strip_quote("     **tx_dropped: 0**") == "     tx_dropped: 0"
    assert strip_quote("- rx_missed_errors: 5") == "rx_missed_errors: 5"
    assert strip_quote("     rx_packets: 5") == "     rx_packets: 5"


def test_irq_time_from_accounting_alone_is_not_a_storm(capsys):
    # MIPS/CI20_linux#35: 49.8% hi on an idle 2-CPU box was a 3.18 accounting bug
    doc = run(capsys, "ci20_proc_stat_top_irq_accounting_bug.txt")
    assert "irq-storm" not in codes(doc) and codes(doc, "limit") == []
    note = verdict(doc, "irq-time-accounting-only")
    assert "accounting alone" in note["evidence"] and "/proc/interrupts" in note["advice"]
    assert doc["not_understood"] == []


def test_interface_statistics_formats():
    # net-tools ifconfig, both styles (lib/interface.c); ethtool -g (ethtool.c dump_ring); sysfs grep lines
    new = ("enp3s0: flags=4163<UP,BROADCAST,RUNNING,MULTICAST>  mtu 9000\n"
           "        RX packets 22328419  bytes 9474224607 (8.8 GiB)\n"
           "        RX errors 0  dropped 11723  overruns 0  frame 0\n"
           "        TX errors 0  dropped 0 overruns 0  carrier 0  collisions 0\n")
    stats = nic_statistics.parse_ifconfig(new)["enp3s0"]
    assert stats["rx_packets"] == 22328419 and stats["rx_dropped_missed"] == 11723 and stats["tx_dropped"] == 0
    old = "          RX packets:2059646370 errors:0 dropped:7142467 overruns:3 frame:0\n"
    assert nic_statistics.parse_ifconfig(old, "eth2")["eth2"]["rx_fifo_errors"] == 3
    lines = "/sys/class/net/eth0/statistics/rx_missed_errors:12\n/sys/class/net/eth0/statistics/rx_dropped:0\n"
    assert recognise(lines).link_stats == [{"eth0": {"rx_missed_errors": 12, "rx_dropped": 0}}]
