"""Failure classes found by the second independent check (heldout 2), each on its real artefact in
tests/data/diagnose/ (the file's first line names its source): ethtool -S NIC-wide drop counters
(with the `NIC statistics:` header, a `> ` quote prefix, an ifconfig block or a prompt before them),
partial-cpu-bound on evenly spread load, htop screens, and USB NICs behind xhci-hcd."""

import json

from linerate.cli import main
from linerate.diagnose.facts import Facts
from linerate.diagnose.raw import recognise, strip_quote
from linerate.diagnose.rules import RULES
from tests.conftest import DATA

CORPUS = DATA / "diagnose" / "corpus"


def diagnose(capsys, path, os_name="linux") -> dict:
    assert main(["diagnose", "--after", str(path), "--os", os_name, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def limits(doc: dict) -> list[str]:
    return [v["code"] for v in doc["verdicts"] if v["kind"] == "limit"]


def test_a_quoted_single_ethtool_drop_counter_gives_nic_drops_since_boot(capsys):
    """ntop/PF_RING#235: the maintainer quotes `> rx_missed_errors: 22637793` (NIC-level drops)."""
    doc = diagnose(capsys, CORPUS / "pfring_ethtool_rx_missed.txt")
    assert limits(doc) == ["nic-drops"] and doc["not_understood"] == []
    assert "rx_missed_errors 22,637,793 since boot" in doc["verdicts"][0]["evidence"]


def test_nic_statistics_after_an_ifconfig_block_is_read_and_tiny_drops_are_only_a_note(capsys):
    """netdata/netdata#988: ifconfig, then e1000e `ethtool -S` starting with `NIC statistics:` and no
    per-queue counters; 5,481 drops of 7.4 G packets is negligible (the maintainer's conclusion)."""
    doc = diagnose(capsys, CORPUS / "netdata_ethtool_small_nic_drops.txt")
    assert limits(doc) == []
    note = next(v for v in doc["verdicts"] if v["code"] == "nic-drops-negligible")
    assert "rx_missed_errors 4,954" in note["evidence"] and "rx_no_buffer_count 527" in note["evidence"]
    assert doc["read"] == ["ifconfig eth0 (RX/TX counters)", "ethtool -S the NIC (5 NIC-wide drop counters)"]
    # ifconfig's dropped 7,183 is rx_dropped + rx_missed_errors (/proc/net/dev): 2,229 are the kernel's
    assert "eth0 rx_dropped 2,229" in next(v for v in doc["verdicts"] if v["code"] == "rx-dropped-not-nic")["evidence"]


def test_the_same_ethtool_counters_with_a_prompt_and_many_drops_are_a_limit(tmp_path, capsys):
    """The `NIC statistics:` form under a shell prompt, with drops that matter (1% of the packets)."""
    real = (CORPUS / "netdata_ethtool_small_nic_drops.txt").read_text().split("NIC statistics:")[1]
    real = real.replace("rx_missed_errors: 4954", "rx_missed_errors: 74000000")
    paste = tmp_path / "p.txt"
    paste.write_text("> root@box:~# ethtool -S eth0\n" + "".join(f"> {line}\n" for line in
                                                                 ("NIC statistics:" + real).splitlines()))
    doc = diagnose(capsys, paste)
    assert limits(doc) == ["nic-drops"] and "eth0 rx_missed_errors 74,000,000" in doc["verdicts"][0]["evidence"]
    assert doc["read"] == ["ethtool -S eth0 (5 NIC-wide drop counters)"]


def test_quote_prefix_is_stripped_but_other_lines_are_kept():
    assert strip_quote("> > rx_missed_errors: 1") == "rx_missed_errors: 1"
    assert strip_quote("     rx_packets: 5") == "     rx_packets: 5"
    assert recognise("> NIC statistics:\n>      rx_dropped: 9\n").nic_counters == [{"the NIC": {"rx_dropped": 9}}]


def test_evenly_spread_softirq_is_not_partial_cpu_bound(capsys):
    """redis/redis#5825: mpstat with 46-52% softirq on every CPU (busy 91, 76, 95, 78%)."""
    doc = diagnose(capsys, CORPUS / "redis_mpstat_softirq_spread.txt")
    assert limits(doc) == [] and doc["read"] == ["mpstat (4 CPU lines, 0 threads)"]


def test_k_of_n_still_fires_when_the_others_are_clearly_below_and_one_hot_cpu_is_single_core():
    assert RULES["partial-cpu-bound"](Facts(cpus=[{"cpu": i, "busy_pct": b} for i, b in
                                                  enumerate((95, 97, 60, 55))])) is not None
    assert RULES["partial-cpu-bound"](Facts(cpus=[{"cpu": i, "busy_pct": b} for i, b in
                                                  enumerate((100, 3, 5, 2))])) is None


def test_htop_is_refused_with_a_hint_not_a_verdict(capsys):
    """openwrt/openwrt#15820: htop's header (CPU meters) is not read; the refusal says what to paste."""
    assert main(["diagnose", "--after", str(DATA / "diagnose" / "wrt3200acm_htop_balanced.txt"), "--os",
                 "openwrt"]) == 2
    message = capsys.readouterr().err
    assert "0[||||" in message and "top -b -n 2 -d 1" in message and "mpstat -P ALL 1 1" in message


def test_usb_host_controller_irq_is_network_only_when_the_paste_names_a_usb_nic_driver(tmp_path, capsys):
    """Irqbalance#338: the Odroid XU4's LAN is on xhci-hcd:usb5. Alone, the paste names no NIC driver:
    no network source is recognised and the output says so, listing what it saw."""
    doc = diagnose(capsys, CORPUS / "odroid_xu4_irqbalance_usb_nic_cpu4.txt")
    note = next(v for v in doc["verdicts"] if v["code"] == "no-network-irq")
    assert "xhci-hcd:usb5" in note["evidence"] and limits(doc) == []
    with_driver = tmp_path / "usb.txt"
    with_driver.write_text((CORPUS / "odroid_xu4_irqbalance_usb_nic_cpu4.txt").read_text()
                           + "$ ethtool -i eth0\ndriver: r8152\n")
    doc = diagnose(capsys, with_driver)
    assert limits(doc) == ["irq-one-cpu"] and "xhci-hcd:usb5" in doc["verdicts"][0]["evidence"]
    assert not any(v["code"] == "no-network-irq" for v in doc["verdicts"])


def test_every_corpus_case_quoted_with_a_markdown_prefix_gets_the_same_verdict(tmp_path, capsys):
    """A `> ` quote prefix on every pasted line (a forum reply quoting the output) changes nothing."""
    import tomllib

    cases = tomllib.loads((CORPUS / "cases.toml").read_text())["cases"]
    for name, case in cases.items():
        lines = (CORPUS / name).read_text().splitlines()
        quoted = tmp_path / name
        quoted.write_text("\n".join([lines[0]] + [f"> {line}" for line in lines[1:]]) + "\n")
        got = limits(diagnose(capsys, quoted, case["os"]))
        assert (got[0] if got else "none") == case["expected"], name
