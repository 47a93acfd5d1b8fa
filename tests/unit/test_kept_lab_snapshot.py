"""A kept lab's namespaces as `lab up` kept them, against how they read later (lab/snapshot.py), on the reads
of a real kept VM lab's host side (tests/data/lab/kept_vm_lab_snapshot.json): what linerate's own commands and
a capture change is not drift; each operator change is named with the setting it changed."""

import json
from pathlib import Path

import pytest

from linerate.lab import snapshot
from linerate.lab.registry import MAX_RECORD_BYTES, LabRecord, RecordError

CAPTURE = json.loads((Path(__file__).parent.parent / "data" / "lab" / "kept_vm_lab_snapshot.json").read_text())

# each change, labelled by hand from ethtool(8), ip-link(8), ip-addrlabel(8), ip-neighbour(8), tc(8): the namespace,
# the read that must show it, and a setting's name the phrase must give
EXPECTED = {
    "ethtool -K tap-lan tx off": ("lr-k6-dut", "offloads of tap-lan", "tx-checksumming was on, is off"),
    "ip link set wan0 group 5": ("lr-k6-dut", "links", "wan0.group was default, is 5"),
    "ip link set eth0 alias mine": ("lr-k6-client", "links", "eth0.ifalias was absent, is mine"),
    "ip link set lan0 promisc on": ("lr-k6-dut", "links", "PROMISC"),
    "ip addrlabel add prefix 2001:2::/48 label 99": ("lr-k6-dut", "address labels", '"label": 99'),
    "ip neigh add proxy 198.19.0.77 dev wan0": ("lr-k6-dut", "proxy neighbours", "198.19.0.77"),
    "ethtool -K wan0 tx-nocache-copy on": ("lr-k6-dut", "offloads of wan0", "tx-nocache-copy was off, is on"),
    "ethtool -L eth0 rx 2 tx 2": ("lr-k6-client", "channels of eth0", "Current hardware settings RX was 1, is 2"),
    "tc qdisc replace dev br-wan root pfifo limit 5": ("lr-k6-dut", "qdiscs", "br-wan root.kind was noqueue, is pfifo"),
    "ip link set br-lan type bridge mcast_snooping 0": ("lr-k6-dut", "links", "mcast_snooping was 1, is 0"),
}


def reads(changed: dict[str, str] | None = None):
    outputs = {**CAPTURE["outputs"], **(changed or {})}
    return lambda ns, argv: outputs.get(f"{ns} {' '.join(argv)}", "")


def test_the_lab_as_kept_has_no_drift_and_every_read_was_captured():
    asked, answer = [], reads()
    kept = snapshot.take(CAPTURE["namespaces"], lambda ns, argv: asked.append(f"{ns} {' '.join(argv)}") or answer(ns, argv))
    assert set(asked) == set(CAPTURE["outputs"]) and {"tap-lan", "br-wan", "lan0"} <= set(kept["lr-k6-dut"]["links"])
    assert snapshot.drift(snapshot.take(CAPTURE["namespaces"], reads()), snapshot.take(CAPTURE["namespaces"], reads())) == []


@pytest.mark.parametrize("use", CAPTURE["uses"], ids=lambda use: use["use"])
def test_what_linerate_and_a_capture_change_is_not_drift(use):
    assert use["outputs"], "the capture recorded no read that changed: nothing is tested"
    kept = snapshot.take(CAPTURE["namespaces"], reads())
    assert snapshot.drift(kept, snapshot.take(CAPTURE["namespaces"], reads(use["outputs"]))) == []


def test_the_changes_linerate_makes_itself_are_counters_and_states_it_leaves_out():
    """The uses' reads differ only in what snapshot.EXCLUDED and STATE_FLAGS leave out: compared whole, they
    would differ (so the test above can fail)."""
    use = CAPTURE["uses"][0]
    key = next(iter(use["outputs"]))
    before, after = json.loads(CAPTURE["outputs"][key]), json.loads(use["outputs"][key])
    assert before != after
    assert [snapshot._settings(link) for link in before] == [snapshot._settings(link) for link in after]


@pytest.mark.parametrize("change", CAPTURE["changes"], ids=lambda change: change["change"].split(" ", 4)[-1])
def test_an_operators_change_is_named_with_the_setting(change):
    command = change["change"].split(" ", 4)[-1]
    ns, what, phrase = EXPECTED[command]
    kept = snapshot.take(CAPTURE["namespaces"], reads())
    problems = snapshot.drift(kept, snapshot.take(CAPTURE["namespaces"], reads(change["outputs"])))
    named = [p for p in problems if p.startswith(f"{ns}'s {what} changed since the lab was kept")]
    assert named and phrase in named[0], problems


def test_every_change_of_the_capture_is_labelled():
    assert {change["change"].split(" ", 4)[-1] for change in CAPTURE["changes"]} == set(EXPECTED)


def test_a_snapshot_is_kept_in_the_record_and_a_malformed_one_refused():
    kept = snapshot.take(CAPTURE["namespaces"], reads())
    record = LabRecord("k6", snapshot=kept)
    text = record.to_json()
    assert LabRecord.from_json(text).snapshot == kept
    assert len(text.encode()) * 6 < MAX_RECORD_BYTES  # a 16-pair lab has ~6x as many namespaces per side
    for bad in ([], {"lr-k6-dut": []}, {"lr-k6-dut": "links"}):
        with pytest.raises(RecordError, match="snapshot"):
            LabRecord.from_json(json.dumps({**json.loads(text), "snapshot": bad}))


def test_a_read_that_is_not_json_or_that_failed_is_compared_whole():
    kept = snapshot.take(["ns"], lambda ns, argv: "garbled" if argv[0] == "tc" else "")
    now = snapshot.take(["ns"], lambda ns, argv: "other" if argv[0] == "tc" else "")
    assert snapshot.drift(kept, now) == ["ns's qdiscs changed since the lab was kept (the whole read was garbled, "
                                         "is other)"]
