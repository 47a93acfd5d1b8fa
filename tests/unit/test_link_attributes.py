"""A namespace's links read from the kernel's own RTM_GETLINK dump (lab/link_attributes.py), on a real dump
(tests/data/lab/rtm_getlink_dump_bridge_and_veth.hex): every attribute by number, including those iproute2 6.1
cannot print, without the counters, timers and states the kernel moves by itself."""

from pathlib import Path

import pytest

from linerate.lab.link_attributes import links_from, messages

DUMP = Path(__file__).parent.parent / "data" / "lab" / "rtm_getlink_dump_bridge_and_veth.hex"
DATAGRAMS = [bytes.fromhex(line) for line in DUMP.read_text().splitlines() if not line.startswith("#")]


def test_every_link_of_the_dump_is_read_with_the_kernel_defaults_it_was_made_with():
    links = links_from(DATAGRAMS)
    assert sorted(links) == ["br0", "eth0", "lo", "p1"]
    for name in ("br0", "eth0", "p1"):
        assert links[name]["IFLA_MTU"] == 1500
        # newer than iproute2 6.1: the kernel's defaults (GSO_LEGACY_MAX_SIZE, include/linux/netdevice.h)
        assert links[name]["IFLA_GSO_IPV4_MAX_SIZE"] == 65536 and links[name]["IFLA_GRO_IPV4_MAX_SIZE"] == 65536
    bridge = links["br0"]["IFLA_INFO_DATA"]
    assert bridge["attribute 4"] == 30000  # IFLA_BR_AGEING_TIME, centiseconds (ip-link(8): ageing_time 300 s)
    assert bridge["attribute 49"] == 0  # IFLA_BR_FDB_MAX_LEARNED: no limit
    assert links["p1"]["IFLA_INFO_SLAVE_DATA"]["attribute 8"] == 1  # IFLA_BRPORT_LEARNING on


def test_what_the_kernel_moves_by_itself_is_left_out():
    links = links_from(DATAGRAMS)
    for link in links.values():
        assert not {"IFLA_STATS", "IFLA_STATS64", "IFLA_AF_SPEC", "IFLA_CARRIER_CHANGES", "IFLA_OPERSTATE",
                    "IFLA_PROMISCUITY", "IFLA_QDISC", "IFLA_XDP"} & set(link)
    bridge = links["br0"]["IFLA_INFO_DATA"]
    assert not {"attribute 16", "attribute 19", "attribute 48"} & set(bridge)  # hello and gc timers, learnt count
    assert "attribute 21" not in links["p1"]["IFLA_INFO_SLAVE_DATA"]  # IFLA_BRPORT_MESSAGE_AGE_TIMER


def test_a_cut_or_failed_dump_is_an_error_not_an_empty_lab():
    with pytest.raises(ValueError, match="before its NLMSG_DONE"):
        links_from(DATAGRAMS[:-1])
    with pytest.raises(ValueError, match="netlink message"):
        messages(DATAGRAMS[0][:100])
    error = bytes.fromhex("24000000020000000100000000000000") + (-1).to_bytes(4, "little", signed=True) + bytes(16)
    with pytest.raises(OSError):
        links_from([error])
