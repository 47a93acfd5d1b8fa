"""A kept lab is compared with the plan its state file gives before a command measures on it
(lab/conform.py): on the reads of a real lab (tests/data/lab), the record that made it conforms, and a
record that says another link rate, MTU, firewall or pair count does not, each difference named."""

import json
from pathlib import Path

from linerate.axes import lab_spec
from linerate.lab.conform import (foreign_filters, held_tbf_rates, plan_drift, planned_rates, ruleset_shape,
                                  ruleset_tables)
from linerate.topology import lab_plan

CAPTURE = json.loads((Path(__file__).parent.parent / "data" / "lab" / "kept_lab_stateful_100m.json").read_text())
MADE_WITH = {"firewall": "stateful", "link_rate": "100m", "mtu": 1500, "offloads": "dut:tso=off"}


def drift(changed: dict[str, str] | None = None, **said) -> list[str]:
    """plan_drift of a record with `said` over the captured lab, whose reads answer as `changed` says where it
    says anything (an operator's change: CAPTURE["changes"])."""
    spec = lab_spec("k3", {**MADE_WITH, **said})
    outputs = {**CAPTURE["outputs"], **(changed or {})}
    made = {key.split()[0] for key in outputs}
    return plan_drift(lab_plan(spec), spec.netns("dut"), lambda ns: ns in made,
                      lambda ns, argv: outputs.get(f"{ns} {' '.join(argv)}", ""),
                      lambda ns, key: CAPTURE["sysctls"].get(f"{ns} {key}", "(none)"),
                      lambda: CAPTURE["namespaces"], lambda: CAPTURE["new_veth"],
                      new_sysctls=lambda values: CAPTURE["new_sysctls"].get(json.dumps(values)),
                      new_links=lambda: CAPTURE["new_links"],
                      qdiscs=lambda mtu, argvs: CAPTURE["qdiscs"].get(json.dumps([mtu, argvs])))


def test_the_record_that_made_the_lab_conforms():
    assert drift() == []


def test_another_link_rate_is_named_on_both_dut_ports():
    problems = drift(link_rate="10m")
    assert problems == ["lan0 in lr-k3-dut is shaped at 100 Mbit/s, the file says shaped at 10 Mbit/s",
                        "wan0 in lr-k3-dut is shaped at 100 Mbit/s, the file says shaped at 10 Mbit/s"]
    assert drift(link_rate="none")[0] == "lan0 in lr-k3-dut is shaped at 100 Mbit/s, the file says not shaped"


def test_another_mtu_or_firewall_is_named():
    mtu = drift(mtu=9000)
    assert "lan0 in lr-k3-dut has MTU 1500, the file says 9000" in mtu and "eth0 in lr-k3-client has MTU 1500, " \
        "the file says 9000" in mtu
    assert drift(firewall="none") == ["the DUT lr-k3-dut filters with 4 rules in chain forward (2 on ct state); "
                                      "policy drop in forward, the file says no table of linerate's"]
    # every other profile has another shape of the same table: its chains, its rules, those on ct state
    for other in ("nat", "rules:1", "rules:2", "rules-stateless:1"):
        [problem] = drift(firewall=other)
        assert problem.startswith("the DUT lr-k3-dut filters with 4 rules in chain forward (2 on ct state); "
                                  "policy drop in forward, the file says "), problem


def test_profiles_that_differ_have_different_shapes():
    from linerate.model import FirewallProfile
    from linerate.topology.firewall import render_ruleset

    profiles = ("none", "stateful", "nat", "rules:1", "rules:2", "rules:40", "rules-stateless:1", "rules-stateless:2")
    shapes = [str(ruleset_shape(render_ruleset(FirewallProfile.parse(p), "lan0", "wan0", 5201, 8080) or ""))
              for p in profiles]
    assert len(set(shapes)) == len(profiles), dict(zip(profiles, shapes))


def test_knobs_the_lab_does_not_hold_are_named():
    """Each lab value a file could claim: netem (delay, loss), offloads, DUT sysctls, queue length, RPS."""
    assert drift(delay_ms=50.0) == ["lan0 in lr-k3-dut has tbf (1:1) and tbf (root), the file says tbf (1:1) and "
                                    "netem (2:1) and tbf (root)", "wan0 in lr-k3-dut has tbf (1:1) and tbf (root), "
                                    "the file says tbf (1:1) and netem (2:1) and tbf (root)"]
    assert drift(loss_pct=5.0) == drift(delay_ms=50.0)
    assert drift(offloads="dut:tso=off,gso=off") == ["gso on lan0 in lr-k3-dut is on, the file says off",
                                                     "gso on wan0 in lr-k3-dut is on, the file says off"]
    assert drift(offloads="dut:tso=on")[0] == "tso on lan0 in lr-k3-dut is off, the file says on"
    assert drift(dut_sysctls="net.ipv4.ip_default_ttl=77") == ["net.ipv4.ip_default_ttl in lr-k3-dut is '(none)', "
                                                               "the file says '77'"]
    assert "lan0 in lr-k3-dut has queue length 1000, the file says 5000" in drift(txqueuelen=5000)
    assert "/sys/class/net/lan0/queues/rx-0/rps_cpus in lr-k3-dut is '1', the file says '3'" in drift(dut_rps="3")


def test_a_pair_the_lab_does_not_have_is_missing():
    problems = drift(pairs=2)
    assert "namespace lr-k3-client2 is missing" in problems and "namespace lr-k3-lansw is missing" in problems


def test_planned_rates_are_what_tc_reports_back():
    spec = lab_spec("k3", MADE_WITH)
    tc = CAPTURE["outputs"]["lr-k3-dut tc -j -d qdisc show dev lan0"]
    assert planned_rates(lab_plan(spec))[("lr-k3-dut", "lan0")] == held_tbf_rates(tc) == {"root": 10_000_000_000,
                                                                                          "1:1": 100_000_000}


def test_a_record_whose_params_contradict_its_own_firewall_or_mtu_is_malformed(tmp_path):
    import pytest

    from linerate.errors import LabError
    from linerate.lab.registry import LabRecord, Registry
    from linerate.testbed.base import lab_from_record

    params = {"firewall": "none", "mtu": 1500, "link_rate": "none", "pairs": 1}
    registry = Registry(tmp_path)
    assert lab_from_record(LabRecord("k3", "none", 1500, params=params), registry).spec.mtu == 1500
    for record in (LabRecord("k3", "none", 1500, params={**params, "firewall": "stateful"}),
                   LabRecord("k3", "none", 1500, params={**params, "mtu": 9000}),
                   LabRecord("k3", "stateful", 9000, params=params)):
        with pytest.raises(LabError, match="is malformed .*its params say firewall"):
            lab_from_record(record, registry)


GUEST_CAPTURE = json.loads((Path(__file__).parent.parent / "data" / "lab" / "kept_vm_guest_stateful.json").read_text())


SYSCTL_MANY = json.loads((Path(__file__).parent.parent / "data" / "lab" / "sysctl_n_many_debian_guest.json").read_text())


def with_joined_sysctls(answers: dict) -> dict:
    """The captured answers and, as a guest answers `sysctl -n` of all their sysctl keys at once, that too: each
    key's output in order (a real guest's, tests/data/lab/sysctl_n_many_debian_guest.json)."""
    keys = [argv[2] for argv in answers if argv[:2] == ("sysctl", "-n") and len(argv) == 3]
    if all(answers[("sysctl", "-n", key)]["returncode"] == 0 for key in keys):
        answers[("sysctl", "-n", *keys)] = {"returncode": 0, "stdout": "".join(answers[("sysctl", "-n", key)]["stdout"]
                                                                             for key in keys)}
    return answers


def test_the_sysctls_a_plan_reads_are_one_command_and_one_by_one_when_that_one_fails():
    """~0.3 s a command in a TCG guest: the keys are read by one `sysctl -n`; a key the guest lacks fails it (exit
    1, one line fewer), and then every key is read alone, so each gets its own answer."""
    from linerate.exec.base import CommandResult
    from linerate.lab.conform import _answered

    # what the fakes here rest on, as the real guest printed it: each key's value in order, a missing one left out
    assert SYSCTL_MANY["stdout"] == "".join(single["stdout"] for single in SYSCTL_MANY["singles"])
    missing = SYSCTL_MANY["missing_key"]
    assert missing["returncode"] != 0 and missing["stdout"].count("\n") == len(missing["argv"]) - 3
    keys = SYSCTL_MANY["argv"][2:]
    singles = {tuple(one["argv"]): one for one in SYSCTL_MANY["singles"]}
    link = {"returncode": 0, "stdout": "[]"}
    for joined, rounds in ((SYSCTL_MANY, 1), ({**SYSCTL_MANY["missing_key"], "argv": SYSCTL_MANY["argv"]}, 2)):
        outputs = {("ip", "-j", "link"): link, tuple(joined["argv"]): joined, **singles}
        batches = []

        def run_many(argvs):
            batches.append(argvs)
            return [CommandResult(tuple(argv), outputs[tuple(argv)]["returncode"], outputs[tuple(argv)]["stdout"], "",
                                  "guest") for argv in argvs]

        answers = _answered([["ip", "-j", "link"], *(["sysctl", "-n", key] for key in keys)], run_many)
        assert len(batches) == rounds and batches[0] == [["ip", "-j", "link"], ["sysctl", "-n", *keys]]
        assert answers == {("ip", "-j", "link"): "[]", **{argv: one["stdout"] for argv, one in singles.items()}}
    batches = []
    first = ("sysctl", "-n", keys[0])
    assert _answered([list(first)], run_many) == {first: singles[first]["stdout"]} and batches == [[list(first)]]


def guest_drift(**said) -> tuple[list[str], list[list[list[str]]]]:
    """A kept VM lab's guest read-back (vm/plan.py guest_plan) on a real guest's answers: (problems, the batches
    asked of the guest)."""
    from linerate.exec.base import CommandResult
    from linerate.lab.conform import prefetched_drift
    from linerate.vm.plan import GUEST, guest_plan

    answers = with_joined_sysctls({tuple(out["argv"]): out for out in GUEST_CAPTURE["outputs"]})
    batches = []

    def run_many(argvs):
        batches.append(argvs)
        return [CommandResult(tuple(argv), answers[tuple(argv)]["returncode"] if tuple(argv) in answers else 1,
                              answers.get(tuple(argv), {}).get("stdout", ""), "", "guest") for argv in argvs]

    params = {**GUEST_CAPTURE["params"], **said}
    return prefetched_drift(guest_plan(lab_spec("k4", params), rx_queues=1), GUEST, run_many), batches


def test_a_kept_vm_guest_is_read_back_in_one_batch_and_conforms_to_the_record_that_made_it():
    problems, batches = guest_drift()
    assert problems == [] and len(batches) == 1
    sysctls = [out for out in GUEST_CAPTURE["outputs"] if out["argv"][:2] == ["sysctl", "-n"]]
    assert len(sysctls) > 1  # ... asked by one command (each costs ~0.3 s in a TCG guest)
    assert len(batches[0]) == len({tuple(argv) for argv in batches[0]}) == len(GUEST_CAPTURE["outputs"]) - len(sysctls) + 1


def test_a_record_that_says_another_guest_ruleset_offload_or_sysctl_is_named():
    assert guest_drift(firewall="none")[0] == ["the DUT guest filters with 4 rules in chain forward (2 on ct state); policy drop in forward, "
                                               "the file says no table of linerate's"]
    assert guest_drift(offloads="default")[0] == []  # a value left at the default is not compared (docs)
    assert guest_drift(offloads="dut:gro=off")[0] == ["gro on lan0 in guest is on, the file says off",
                                                       "gro on wan0 in guest is on, the file says off"]
    sysctl = guest_drift(dut_sysctls="net.netfilter.nf_conntrack_max=1048576")[0]
    assert sysctl == ["net.netfilter.nf_conntrack_max in guest is '', the file says '1048576'"]


def test_a_lab_record_holds_lab_axes_only():
    """A kept lab's params are merged over a command's own options: a trial axis there would override them."""
    import pytest

    from linerate.testbed.base import recorded_params

    assert recorded_params({"firewall": "none", "mtu": 1500}) == {"firewall": "none", "mtu": 1500}
    for params in ({"family": 6}, {"firewall": "none", "streams": 4}, {"no_such_axis": 1}):
        with pytest.raises(ValueError, match="which is no lab axis"):
            recorded_params(params)


def test_what_the_lab_holds_beyond_its_record_is_named():
    """A lab built with more than its file says: a pool's namespaces under a one-pair record, offloads turned
    off under a record that leaves them at the default, another table filtering on the DUT's forward hook."""
    spec = lab_spec("k3", MADE_WITH)
    outputs = CAPTURE["outputs"]
    read = lambda ns, argv: outputs.get(f"{ns} {' '.join(argv)}", "")  # noqa: E731
    sysctl = lambda ns, key: CAPTURE["sysctls"].get(f"{ns} {key}", "(none)")  # noqa: E731
    extra = plan_drift(lab_plan(spec), spec.netns("dut"), lambda ns: True, read, sysctl,
                       lambda: [*CAPTURE["namespaces"], "lr-k3-client2", "lr-k3-lansw"], lambda: CAPTURE["new_veth"])
    assert extra == ["namespace lr-k3-client2 is there, and the file's lab has none such",
                     "namespace lr-k3-lansw is there, and the file's lab has none such"]
    assert drift(offloads="default") == ["tso on lan0 in lr-k3-dut is off, the file says on (a new veth's)",
                                         "tso on wan0 in lr-k3-dut is off, the file says on (a new veth's)"]
    text = (Path(__file__).parent.parent / "data" / "lab" / "nft_ruleset_foreign_tables.txt").read_text()
    tables = ruleset_tables(text)
    assert foreign_filters(tables) == ["table ip x (f)"]  # the empty accepting inet filter acts on nothing
    assert tables["inet linerate"] == ruleset_shape(text) == {"forward": (4, 2), "forward hook": (1, 1)}


# What each operator's change (tests/data/lab/recapture.py) must be named as, labelled from ip-route(8),
# ip-rule(8), ip-neighbour(8) and the kernel's sysctl documentation (Documentation/networking/ip-sysctl.rst).
NAMED = {
    "ip netns exec lr-k3-dut ip route add 198.19.0.2/32 dev wan0 mtu lock 576":
        ["lr-k3-dut has a route the file's lab has not: 198.19.0.2 dev wan0 mtu 576"],
    "ip netns exec lr-k3-dut ip route add local 198.19.0.9 dev wan0 proto kernel table local":
        ["lr-k3-dut has a route the file's lab has not: local 198.19.0.9 dev wan0 table local protocol kernel"],
    "ip netns exec lr-k3-client ip -6 route change default via 2001:2:0:1::1 mtu 1280":
        ["lr-k3-client has a route the file's lab has not: default gateway 2001:2:0:1::1 dev eth0 mtu 1280",
         "lr-k3-client lacks the file's default route via 2001:2:0:1::1"],
    "ip netns exec lr-k3-server ip addr add 198.19.0.3/24 dev eth0":
        ["eth0 in lr-k3-server also has the address 198.19.0.3/24, which the file's lab has not"],
    "ip netns exec lr-k3-dut ip rule add to 198.19.0.2 prohibit":
        ["lr-k3-dut has a routing rule the file's lab has not: priority 32765 src all dst 198.19.0.2 action prohibit"],
    "ip netns exec lr-k3-dut ip neigh replace 198.19.0.2 lladdr 02:00:00:00:00:01 nud permanent dev wan0":
        ["lr-k3-dut has a permanent neighbour entry the file's lab has not: 198.19.0.2 lladdr 02:00:00:00:00:01 dev wan0"],
    "ip netns exec lr-k3-client ip addr add 198.19.0.2/32 dev lo scope host":  # the client would answer itself
        ["lo in lr-k3-client also has the address 198.19.0.2/32, which the file's lab has not"],
    "ip netns exec lr-k3-client tc qdisc replace dev eth0 root tbf rate 50mbit burst 32k latency 50ms":
        ["eth0 in lr-k3-client is shaped at 50 Mbit/s, the file says not shaped"],
    "ip netns exec lr-k3-client ip link set eth0 gso_max_size 3000 gso_max_segs 2":
        ["gso_max_size of eth0 in lr-k3-client is 3000, a new veth's is 65536",
         "gso_max_segs of eth0 in lr-k3-client is 2, a new veth's is 65535"],
    "ip netns exec lr-k3-client sysctl -q -w net.ipv6.conf.eth0.mtu=1280":
        ["net.ipv6.conf.eth0.mtu in lr-k3-client is '1280', its link's MTU is 1500"],
    "ip netns exec lr-k3-dut sh -c echo 20000 > /sys/class/net/lan0/gro_flush_timeout":
        ["gro_flush_timeout of lan0 in lr-k3-dut is 20000, the kernel's default is 0"],
    "ip netns exec lr-k3-dut ip neigh replace 198.19.0.2 lladdr 02:00:00:00:00:99 dev wan0 nud noarp":
        ["lr-k3-dut has a noarp neighbour entry the file's lab has not: 198.19.0.2 lladdr 02:00:00:00:00:99 dev wan0"],
    "ip netns exec lr-k3-client ip neigh replace 198.18.0.1 lladdr 02:00:00:00:00:01 dev eth0 nud reachable extern_learn":
        ["lr-k3-client has a reachable/extern_learn neighbour entry the file's lab has not: 198.18.0.1 lladdr "
         "02:00:00:00:00:01 dev eth0"],
    "ip netns exec lr-k3-client sh -c ip -n lr-k3-dut link set wan0 mtu 1300 && ping -c1 -W1 -M do -s 1472 198.19.0.2; "
    "ip -n lr-k3-dut link set wan0 mtu 1500":  # the MTU is put back, the path MTU learnt stays (ip-route(8) get)
        ["lr-k3-client has a cached route the file's lab has not (a learnt path MTU or redirect, for ten minutes): "
         "198.19.0.2 gateway 198.18.0.1 dev eth0 mtu 1300"],
    "ip netns exec lr-k3-dut tc qdisc change dev wan0 parent 1:1 handle 2: tbf rate 100000000bit burst 50000 "
    "latency 200ms overhead 0 mpu 84":  # the shaper without its per-frame overhead (tc-tbf(8) overhead)
        ["wan0 in lr-k3-dut has its qdiscs with other options than the file's (tbf 2: {\"burst\": \"50000b/1\", "
         "\"lat\": 200000, \"linklayer\": \"ethernet\", \"mpu\": 84, \"rate\": 12500000})"],
    "ip netns exec lr-k3-dut sh -c ethtool -L lan0 rx 2 tx 2 && echo 1 > /sys/class/net/lan0/queues/rx-1/rps_cpus":
        ["rx-1/rps_cpus of lan0 in lr-k3-dut is 1, the kernel's default is 0"],
    "ip netns exec lr-k3-client sysctl -q -w net.ipv4.tcp_congestion_control=reno":
        ["net.ipv4.tcp_congestion_control in lr-k3-client is 'reno', a new namespace's is 'bbr' (the file sets no value for it)"],
    "ip netns exec lr-k3-dut sysctl -q -w net.ipv4.conf.wan0.rp_filter=1":
        ["net.ipv4.conf.wan0.rp_filter in lr-k3-dut is '1', a new namespace's is '0' (the file sets no value for it)"],
    "ip netns exec lr-k3-server sysctl -q -w net.ipv4.tcp_rmem=4096 8192 16384":
        ["net.ipv4.tcp_rmem in lr-k3-server is '4096 8192 16384', a new namespace's is '4096 131072 33554432' (the "
         "file sets no value for it)"],
}


def test_an_operators_route_address_rule_neighbour_or_sysctl_is_named():
    """Each change made to the real lab behind linerate's back, replayed from the reads that then answered
    otherwise: named, and only that."""
    assert sorted(change["change"] for change in CAPTURE["changes"]) == sorted(NAMED)
    for change in CAPTURE["changes"]:
        assert drift(change["outputs"]) == NAMED[change["change"]], change["change"]
        assert change["problems"] == NAMED[change["change"]]  # what the live lab gave when it was captured


def test_a_guests_route_rule_address_or_port_size_touching_the_lab_is_named():
    from linerate.exec.base import CommandResult
    from linerate.lab.conform import prefetched_drift
    from linerate.vm.plan import GUEST, guest_plan

    named = {"ip link set lan0 gso_max_size 3000": ["gso_max_size of lan0 in guest is 3000, the kernel's default is 65536"],
             # a lookup rule into a table of blackholes wider than the lab's ranges: both named
             "sh -c ip route add blackhole 198.0.0.0/8 table 100 && ip rule add from all lookup 100 pref 100":
             ["guest has a route the file's lab has not: blackhole 198.0.0.0/8 table 100",
              "guest has a routing rule the file's lab has not: priority 100 src all table 100"],
             "ip addr add 198.19.0.2/32 dev lo scope host":
             ["lo in guest also has the address 198.19.0.2/32, which the file's lab has not"],
             "ip route add 198.19.0.2/32 dev wan0 mtu lock 576":
             ["guest has a route the file's lab has not: 198.19.0.2 dev wan0 mtu 576"],
             "ip addr add 198.18.0.77/24 dev lan0":
             ["lan0 in guest also has the address 198.18.0.77/24, which the file's lab has not"]}
    assert sorted(change["change"] for change in GUEST_CAPTURE["changes"]) == sorted(named)
    for change in GUEST_CAPTURE["changes"]:
        answers = with_joined_sysctls({tuple(out["argv"]): out for out in [*GUEST_CAPTURE["outputs"], *change["outputs"]]})

        def run_many(argvs):
            return [CommandResult(tuple(argv), answers[tuple(argv)]["returncode"], answers[tuple(argv)]["stdout"], "",
                                  "guest") for argv in argvs]

        plan = guest_plan(lab_spec("k4", GUEST_CAPTURE["params"]), rx_queues=1)
        assert prefetched_drift(plan, GUEST, run_many) == named[change["change"]] == change["problems"]


POOL_CAPTURE = json.loads((Path(__file__).parent.parent / "data" / "lab" / "kept_lab_pool2.json").read_text())

# labelled from ip-link(8) (gso_max_size), bridge(8) (learning, fdb static), ip-link(8) bridge ageing_time and
# ip-xfrm(8): what each change to a pooled lab's links must be named as
POOL_NAMED = {
    "ip netns exec lr-k5-dut ip link set wan0 gso_max_size 1500":
        ["gso_max_size of wan0 in lr-k5-dut is 1500, a new veth's is 65536"],
    "ip netns exec lr-k5-lansw bridge link set dev p2 learning off":
        ["learning of bridge port p2 in lr-k5-lansw is False, a new bridge port's is True"],
    "ip netns exec lr-k5-wansw ip link set br0 type bridge ageing_time 0":
        ["ageing_time of bridge br0 in lr-k5-wansw is 0, the file's is 8640000"],
    "ip netns exec lr-k5-lansw bridge fdb add 02:00:00:00:00:09 dev p1 master static":
        ["bridge br0 in lr-k5-lansw has a static entry 02:00:00:00:00:09 on p1, which the file's lab has not"],
    "ip netns exec lr-k5-dut ip link add lrx0 type veth peer name lrx1":
        ["a link lrx0 (veth) is in lr-k5-dut, and the file's lab has none such",
         "a link lrx1 (veth) is in lr-k5-dut, and the file's lab has none such"],
    "ip netns exec lr-k5-lansw bridge fdb del 02:00:00:00:00:01 dev uplink master":
        ["uplink in lr-k5-lansw lacks the file's static forwarding entry 02:00:00:00:00:01"],
    "ip netns exec lr-k5-dut ip xfrm policy add dir fwd src 198.18.0.0/24 dst 198.19.0.0/24 action block":
        ["lr-k5-dut has IPsec policy entries (`ip xfrm policy list`), which the file's lab has not"],
    "ip netns exec lr-k5-wansw bridge fdb replace 02:00:00:00:00:0a dev p1 master dynamic extern_learn":
        ["bridge br0 in lr-k5-wansw has a dynamic entry 02:00:00:00:00:0a on p1 marked extern_learn, which the "
         "file's lab has not"],
}


def pool_drift(changed: dict[str, str] | None = None, new_links=None) -> list[str]:
    spec = lab_spec("k5", POOL_CAPTURE["made_with"])
    outputs = {**POOL_CAPTURE["outputs"], **(changed or {})}
    return plan_drift(lab_plan(spec), spec.netns("dut"), lambda ns: True,
                      lambda ns, argv: outputs.get(f"{ns} {' '.join(argv)}", ""),
                      lambda ns, key: POOL_CAPTURE["sysctls"].get(f"{ns} {key}", "(none)"),
                      lambda: POOL_CAPTURE["namespaces"], lambda: POOL_CAPTURE["new_veth"],
                      new_sysctls=lambda values: POOL_CAPTURE["new_sysctls"].get(json.dumps(values)),
                      new_links=lambda: POOL_CAPTURE["new_links"] if new_links is None else new_links,
                      qdiscs=lambda mtu, argvs: POOL_CAPTURE["qdiscs"].get(json.dumps([mtu, argvs])))


def test_a_pooled_labs_links_bridges_and_ipsec_are_read_back():
    """A pooled lab (two switches) conforms to the record that made it; each change to its links, a switch's
    settings or forwarding entries, or an IPsec policy on the DUT is named, and only that."""
    assert pool_drift() == []
    assert sorted(change["change"] for change in POOL_CAPTURE["changes"]) == sorted(POOL_NAMED)
    for change in POOL_CAPTURE["changes"]:
        assert pool_drift(change["outputs"]) == POOL_NAMED[change["change"]] == change["problems"], change["change"]
    # without a fresh veth and bridge to compare with, the defaults are not compared (the links and entries are)
    learning = next(c for c in POOL_CAPTURE["changes"] if "learning off" in c["change"])
    assert pool_drift(learning["outputs"], new_links={}) == []
