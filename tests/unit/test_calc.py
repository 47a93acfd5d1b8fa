"""Line-rate figures against hand computation (to 0.01%)."""

import json
import subprocess
import sys

import pytest

from linerate.calc import LinkInput, frame_rate, goodput, parse_rate, rfc2544_table


def close(a, b):
    return abs(a - b) / b < 1e-4


@pytest.mark.parametrize("kwargs,payload,wire", [
    ({}, 1500 - 20 - 20 - 12, 1500 + 38),                               # IPv4, timestamps
    ({"family": 6}, 1500 - 40 - 20 - 12, 1538),                          # IPv6, timestamps
    ({"timestamps": False}, 1460, 1538),                                 # the APU2/OpenBSD article's assumptions
    ({"family": 6, "timestamps": False}, 1440, 1538),
    ({"mtu": 9000}, 9000 - 52, 9038),
    ({"mtu": 9000, "family": 6}, 9000 - 72, 9038),
    ({"vlan_tags": 1}, 1448, 1542),
    ({"vlan_tags": 2}, 1448, 1546),
    ({"protocol": "udp"}, 1500 - 28, 1538),
    ({"encap": "pppoe"}, 1492 - 52, 1538),
    ({"encap": "vxlan"}, 1450 - 52, 1538),
    ({"encap": "wireguard"}, 1440 - 52, 1538),
    ({"encap": "esp-aes-gcm"}, 1446 - 52, 1538),   # 1446 + 20 + 8 + 8 + pad 0 + 2 + 16 = 1500
])
def test_goodput_against_hand_computation(kwargs, payload, wire):
    result = goodput(LinkInput(1e9, **kwargs))
    assert result.payload_bytes == payload and result.wire_bytes == wire
    assert close(result.goodput_bps, 1e9 * payload / wire)
    assert close(result.frames_per_s, 1e9 / (8 * wire))


def test_well_known_figures():
    assert close(goodput(LinkInput(1e9)).goodput_bps, 941.482e6)
    assert round(frame_rate(1e9, 64).frames_per_s) == 1_488_095
    assert round(frame_rate(10e9, 64).frames_per_s) == 14_880_952
    assert round(frame_rate(1e9, 1518).frames_per_s) == 81_274


def test_ceilings_of_network_performance_tuning_on_pcengines_apu2():
    # 'Network performance tuning on pcengines APU2' (http://dtucker.freeshell.org/apu2/):
    # "(1500-40) / (38+1500) * 119.2 MByte/s = 113.24" and "(9000-40)/(38+9000) * 119.2 = 118" (MiB/s)
    mib = 1e9 / 8 / 1024 / 1024
    assert close(goodput(LinkInput(1e9, timestamps=False)).mebibytes_per_s, 1460 / 1538 * mib)
    assert round(goodput(LinkInput(1e9, timestamps=False)).mebibytes_per_s, 1) == 113.2
    assert round(goodput(LinkInput(1e9, mtu=9000, timestamps=False)).mebibytes_per_s, 1) == 118.2


def test_rfc2544_table_and_padding():
    sizes = [row.frame_bytes for row in rfc2544_table(1e9)]
    assert sizes == [64, 128, 256, 512, 1024, 1280, 1518, 9018]
    tiny = goodput(LinkInput(1e9, mtu=68, protocol="udp"))
    assert tiny.wire_bytes == 14 + 68 + 4 + 20 and tiny.overhead["padding"] == 0  # 86-byte frame: no pad
    with pytest.raises(ValueError):
        frame_rate(1e9, 63)


@pytest.mark.parametrize("text,bps", [("100m", 1e8), ("1g", 1e9), ("2.5g", 2.5e9), ("10G", 1e10),
                                      ("1000000000", 1e9), ("1gbit", 1e9)])
def test_parse_rate(text, bps):
    assert parse_rate(text) == bps


@pytest.mark.parametrize("text", ["fast", "1x", "-1g", "0"])
def test_parse_rate_rejects(text):
    with pytest.raises(ValueError):
        parse_rate(text)


def test_cli_json_contract():
    out = subprocess.run([sys.executable, "-m", "linerate", "calc", "--link", "1g", "--mtu", "1500", "--family",
                          "6", "--no-timestamps", "--vlan", "1", "--json"], capture_output=True, text=True, check=True)
    doc = json.loads(out.stdout)
    assert close(doc["goodput_bps"], 1e9 * 1440 / 1542) and close(doc["frames_per_s"], 1e9 / (8 * 1542))
    assert doc["schema_version"] == 1
    table = json.loads(subprocess.run([sys.executable, "-m", "linerate", "calc", "--rfc2544", "--json"],
                                      capture_output=True, text=True, check=True).stdout)
    assert table["schema_version"] == 1 and round(table["frames"][0]["frames_per_s"]) == 1_488_095
    bad = subprocess.run([sys.executable, "-m", "linerate", "calc", "--link", "fast"], capture_output=True, text=True)
    assert bad.returncode == 2 and "--link" in bad.stderr
