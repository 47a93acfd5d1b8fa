"""sysstat's sar -n DEV / -n EDEV pasted raw: rows read from their end whatever the locale's time
looks like, the loopback left out, rates kept as rates (a trickle of drops per second is a note);
and the lines around pasted outputs: a prompt running any program names the output under it."""

import json

from linerate.cli import main
from linerate.dut.sar import parse_sar_net
from tests.conftest import DATA, capture


def diagnosed(capsys, path) -> dict:
    assert main(["diagnose", "--after", str(path), "--os", "linux", "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_a_locale_whose_time_is_several_words_is_read_from_the_row_end():
    tables = parse_sar_net(capture("diagnose/sar_n_edev_zh_cn_locale.txt"))
    assert sorted(tables) == ["br0", "docker0", "eth0"]  # lo left out
    assert tables["eth0"] == [{"rx_errors": 0.0, "tx_errors": 0.0, "rx_dropped": 0.0, "tx_dropped": 0.0}]


def test_packet_rates_of_sar_n_dev():
    tables = parse_sar_net(capture("diagnose/corpus/geektime_synflood_sar_n_dev.txt"))
    assert tables["eth0"] == [{"rx_packets": 12607.0, "tx_packets": 6304.0}]


def test_a_trickle_of_drops_per_second_is_a_note_and_zero_drops_say_nothing(capsys):
    trickle = diagnosed(capsys, DATA / "diagnose" / "corpus" / "suse_sar_n_edev_storage_iowait.txt")
    [drops] = [v for v in trickle["verdicts"] if v["code"] == "nic-drops"]
    assert drops["kind"] == "note" and "0.4 per second" in drops["evidence"]
    assert trickle["not_understood"] == []  # the bare prompt line and sysstat's banner say nothing to read
    clean = diagnosed(capsys, DATA / "diagnose" / "sar_n_edev_zh_cn_locale.txt")
    assert clean["verdicts"] == [] and clean["not_understood"] == []
    assert clean["read"] == ["sar -n EDEV (br0, eth0, docker0; rates per second, 1 interval)"]


def test_a_prompt_running_a_script_names_its_output_and_repeated_readings_are_counted(capsys):
    from linerate.cli import main as cli

    path = DATA / "diagnose" / "corpus" / "lkml_shaper_rx_missed_polling_loop.txt"
    assert cli(["diagnose", "--after", str(path), "--os", "linux"]) == 0
    out = capsys.readouterr().out
    assert "not understood" not in out  # 'root@shaper:~# ./test' is the command of what follows
    assert "(1 NIC-wide drop counter) x7" in out
