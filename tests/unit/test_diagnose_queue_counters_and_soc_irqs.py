"""Input kinds and names an independent held-out evaluation found linerate did not read: ethtool -S
per-queue packet counters (diagnose/raw.py, dut/parsers.py), SoC Ethernet interrupts named by their
driver (diagnose/queues.py). Each test runs on a real output whose first line names its source."""

import json

import pytest

from linerate.cli import main
from linerate.diagnose.offline import read_snapshot, snapshot_facts
from linerate.diagnose.queues import is_network
from linerate.diagnose.raw import recognise
from linerate.diagnose.rules import diagnose
from linerate.dut import parsers
from tests.conftest import DATA

ETHTOOL = DATA / "diagnose" / "ethtool"


def _verdicts(capsys, path, os_name="linux", before=None):
    argv = ["diagnose", "--after", str(path), "--os", os_name, "--json"] + (["--before", str(before)] if before else [])
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)


def test_ena_counters_with_one_hot_queue_give_irq_one_queue(capsys):
    doc = _verdicts(capsys, ETHTOOL / "ena_queue_rx_cnt.txt")
    verdict = doc["verdicts"][0]
    assert verdict["code"] == "irq-one-queue" and "ens5 rx queue 5 received 8,291,144,458" in verdict["evidence"]
    assert "packet counters per queue, totals since boot" in verdict["evidence"]


def test_spread_queues_give_no_queue_verdict(capsys):
    # mlx5 with four busy queues (10.8 M .. 26.2 M packets): spread, nothing to say about one queue
    doc = _verdicts(capsys, ETHTOOL / "mlx5_rxN_packets.txt")
    assert not [v for v in doc["verdicts"] if v["code"] == "irq-one-queue"], doc["verdicts"]
    assert doc["read"] == ["ethtool -S eth0 (4 rx queues with packet counters)"]


def test_two_readings_of_the_counters_give_a_window(tmp_path):
    """The same ethtool -S as --before and --after: the verdict is on the difference. The after file
    is the real ENA reading with queue 0 grown by 5,000,000 packets, so the window puts the traffic
    on queue 0 while the totals since boot would blame queue 5."""
    before = (ETHTOOL / "ena_queue_rx_cnt.txt").read_text()
    after = before.replace("queue_0_rx_cnt: 143976", "queue_0_rx_cnt: 5143976")
    facts = snapshot_facts(read_snapshot(before, "linux", "b"), read_snapshot(after, "linux", "a"), "linux")
    assert facts.queue_packets["ens5"]["rx queue 0"] == 5_000_000 and facts.queue_packets["ens5"]["rx queue 5"] == 0
    verdict = next(v for v in diagnose(facts) if v.code == "irq-one-queue")
    assert "rx queue 0 received 5,000,000 of 5,000,000" in verdict.evidence and "between two readings" in verdict.evidence


def test_soc_ethernet_interrupts_named_by_their_driver_count_as_network():
    """openwrt/openwrt PR#4339 (Lantiq xrx200): its Ethernet IRQs xrx200_net_rx/_tx are network; the
    UART (asc_rx/asc_tx), timer, USB and the DSL mailbox on the same box are not."""
    reading = recognise((DATA / "diagnose" / "lantiq_xrx200_interrupts.txt").read_text())
    names = set(reading.irq_tables[0][2])
    network = {name for name in names if is_network(name)}
    assert network == {"ath9k", "xrx200_net_rx", "xrx200_net_tx"}, network


def test_rx_tx_words_alone_do_not_make_a_network_interrupt():
    # virtio-vsock's queues (virtio3-rx/-tx/-event in tests/data/linux/proc_interrupts.txt) and UARTs
    for name in ("virtio3-rx", "virtio3-tx", "virtio3-event", "asc_rx", "asc_tx", "ahci[0000:00:11.0]", "xhci-hcd:usb1",
                 "11016000.spi", "i2c-0", "arch_timer"):
        assert not is_network(name), name
    for name in ("xrx200_net_rx", "1e100000.ethernet", "mtk_eth", "eth0"):
        assert is_network(name), name


def test_the_lantiq_verdict_counts_the_ethernet_interrupts(capsys):
    doc = _verdicts(capsys, DATA / "diagnose" / "lantiq_xrx200_interrupts.txt", "openwrt")
    verdict = doc["verdicts"][0]
    assert verdict["code"] == "irq-one-cpu" and "xrx200_net_rx 4,149,916" in verdict["evidence"]
    assert "23,808,588 network interrupts" in verdict["evidence"]


def test_parser_and_reader_agree_on_every_ethtool_capture():
    for path in sorted(ETHTOOL.glob("*.txt")):
        reading = recognise(path.read_text())
        assert reading.not_understood == [] and len(reading.queue_packets) == 1, path.name
        (queues,) = reading.queue_packets[0].values()
        assert queues == parsers.parse_ethtool_queue_packets(path.read_text()), path.name


def test_renamed_interfaces_count_as_network_interrupts(capsys):
    # rigacci.org "ksoftirqd": net0's IRQ 125 on CPU1 keeps ksoftirqd/1 busy; lan0 on CPU2
    doc = _verdicts(capsys, DATA / "diagnose" / "rigacci_renamed_net0_irq_on_cpu1.txt")
    verdict = next(v for v in doc["verdicts"] if v["code"] == "irq-one-cpu-per-nic")
    assert "net0 on CPU 1" in verdict["title"] and "lan0 on CPU 2" in verdict["title"]
    assert "net0: 4,289,304 interrupts, 100% on CPU 1" in verdict["evidence"]
    assert not any(v["code"] == "irq-one-cpu" for v in doc["verdicts"])  # no single CPU takes them all


def test_single_space_interrupts_keep_every_name_of_a_shared_line():
    rows = parsers.parse_interrupt_displays(
        (DATA / "diagnose" / "rigacci_renamed_net0_irq_on_cpu1.txt").read_text())[-1][2]
    names = {label: name for label, name, _ in rows}
    assert names["125"] == "net0" and names["127"] == "ahci[0000:00:17.0]"
    assert names["16"] == "mmc0, idma64.0, i801_smbus, ttyS0"


@pytest.mark.parametrize("name", ["net0", "lan0", "wan1", "uplink0", "eth0", "enp3s0", "net0-rx-0", "net0-TxRx-3"])
def test_interface_shaped_action_names_are_network(name):
    assert is_network(name)


@pytest.mark.parametrize("name", ["rtc0", "mmc0", "dmar0", "hpet2", "ahci0", "dwc3", "virtio0", "ttyS0", "i915",
                                  "nvme0q1", "mmc0, idma64.0, i801_smbus, ttyS0", "snd_hda_intel:card0"])
def test_numbered_devices_of_other_kinds_are_not_network(name):
    assert not is_network(name)


def test_a_name_the_paste_shows_as_an_interface_is_network():
    assert is_network("dmz", interfaces={"dmz"}) and not is_network("dmz")
