"""A kept lab's neighbour entries against the links that hold their addresses (lab/routing.py link_owners), on
real `ip -j` output (tests/data/lab/neighbours_with_a_wrong_mac.txt): an entry of any state that resolves a lab
address to another MAC than its link's is named; the kernel's own entries are not."""

from pathlib import Path

from linerate.lab.routing import link_owners, routing_drift

TEXT = (Path(__file__).parent.parent / "data" / "lab" / "neighbours_with_a_wrong_mac.txt").read_text()
OUTPUTS = {head.split(" ", 1)[0]: {} for head in TEXT.split("== ")[1:]}
for block in TEXT.split("== ")[1:]:
    head, _, body = block.partition("\n")
    ns, command = head.split(" ", 1)
    OUTPUTS[ns][command.strip()] = body.strip()


def read(ns: str, argv: list[str]) -> str:
    return OUTPUTS.get(ns, {}).get(" ".join(argv), "")


def test_each_lab_address_is_owned_by_its_links_mac():
    owners = link_owners(["lrx-c", "lrx-d"], read)
    assert owners["198.18.0.1"] == "72:99:6e:85:b8:ba" and owners["198.18.0.2"] == "46:6c:e5:98:98:7d"
    assert "127.0.0.1" not in owners  # the loopback is no ethernet link


def test_a_neighbour_entry_with_another_mac_than_its_addresss_link_is_named_in_any_state():
    owners = link_owners(["lrx-c", "lrx-d"], read)
    wrong = routing_drift("lrx-c", [], [], read, owners=owners)
    assert any("resolves 198.18.0.1 to 02:00:00:00:00:01 (reachable), but the lab's link with that address is "
               f"{owners['198.18.0.1']}" in line for line in wrong), wrong
    right = routing_drift("lrx-d", [], [], read, owners=owners)
    assert not [line for line in right if "resolves" in line], right
