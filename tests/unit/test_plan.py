import ipaddress

from linerate.model import FirewallProfile
from linerate.topology.firewall import render_ruleset
from linerate.topology.plan import (ADDR, AddAddress, CreateNamespace, CreateVeth, LoadRuleset, SetLink,
                                    SetSysctls, LabSpec, build_plan)


def test_plan_builds_three_namespaces_two_veths_and_forwarding():
    plan = build_plan(LabSpec("abc123"))
    steps = plan.steps
    assert [s.netns for s in steps if isinstance(s, CreateNamespace)] == [
        "lr-abc123-client", "lr-abc123-dut", "lr-abc123-server"]
    veths = [s for s in steps if isinstance(s, CreateVeth)]
    assert {(v.netns, v.peer_netns) for v in veths} == {
        ("lr-abc123-client", "lr-abc123-dut"), ("lr-abc123-server", "lr-abc123-dut")}
    sysctls = {(s.netns, key): value for s in steps if isinstance(s, SetSysctls) for key, value in s.values}
    assert sysctls[("lr-abc123-dut", "net.ipv4.ip_forward")] == "1"
    assert sysctls[("lr-abc123-dut", "net.ipv6.conf.all.forwarding")] == "1"
    assert not any(isinstance(s, LoadRuleset) for s in steps)  # profile none: no ruleset at all
    # namespaces exist before anything is put into them
    first_use = min(i for i, s in enumerate(steps) if not isinstance(s, CreateNamespace))
    assert all(isinstance(s, CreateNamespace) for s in steps[:first_use])


def test_addresses_are_in_benchmarking_ranges():
    v4 = ipaddress.ip_network("198.18.0.0/15")
    v6 = ipaddress.ip_network("2001:2::/48")
    for (role, family), (address, _) in ADDR.items():
        assert ipaddress.ip_address(address) in (v4 if family == 4 else v6), role
    adds = [s for s in build_plan(LabSpec("x")).steps if isinstance(s, AddAddress)]
    assert len(adds) == 8


def test_mtu_is_applied_to_every_lab_link():
    links = [s for s in build_plan(LabSpec("x", mtu=9000)).steps if isinstance(s, SetLink) and s.ifname != "lo"]
    assert len(links) == 4 and all(s.mtu == 9000 for s in links)


def test_plan_describe_is_printable():
    text = build_plan(LabSpec("x", FirewallProfile("stateful"))).describe()
    assert "ip netns add lr-x-dut" in text and "nft -f -" in text


def test_rulesets():
    assert render_ruleset(FirewallProfile("none"), "lan0", "wan0", 5201) is None
    stateful = render_ruleset(FirewallProfile("stateful"), "lan0", "wan0", 5201)
    assert "ct state established,related accept" in stateful and "policy drop" in stateful
    assert "masquerade" not in stateful
    nat = render_ruleset(FirewallProfile("nat"), "lan0", "wan0", 5201)
    assert 'oifname "wan0" masquerade' in nat
    rules = render_ruleset(FirewallProfile("rules", 1000), "lan0", "wan0", 5201)
    fillers = [line for line in rules.splitlines() if " saddr " in line]
    v4 = [line for line in fillers if "ip saddr 198.18." in line]
    v6 = [line for line in fillers if "ip6 saddr 2001:2:0:ff::" in line]
    assert len(fillers) == 1000 and len(set(fillers)) == 1000 and len(v4) == len(v6) == 500
    # the pass rule comes after every filler, and no filler can match the lab's client
    assert rules.index("th dport 5201 accept") > rules.index(fillers[-1])
    assert not any("198.18.0.2 " in line or "2001:2:0:1::2 " in line for line in fillers)
    # stateful: established packets are accepted before the list; stateless: no conntrack at all,
    # every packet (both directions) meets the fillers first
    assert rules.index("ct state established") < rules.index(fillers[0])
    stateless = render_ruleset(FirewallProfile.parse("rules-stateless:10"), "lan0", "wan0", 5201)
    lines = stateless.splitlines()
    assert "ct state" not in stateless and sum(" saddr " in line for line in lines) == 10
    last_filler = max(i for i, line in enumerate(lines) if " saddr " in line)
    assert lines.index('        iifname "wan0" oifname "lan0" meta l4proto { tcp, udp } th sport 5201 accept') > last_filler
    assert str(FirewallProfile.parse("rules-stateless:10")) == "rules-stateless:10"
