import json

import pytest

from linerate.errors import ConfigError
from linerate.lab.apply import read_sysctl
from linerate.testbed.base import new_lab_id
from linerate.testbed.namespace import NamespaceTestbed
from linerate.lab.registry import Registry
from linerate.model import FirewallProfile, TrialParams
from linerate.topology.plan import LabSpec
from tests.privileged.conftest import netns_names, pid_alive

SHORT = dict(duration_s=1, omit_s=0)


def test_lab_up_trial_down_leaves_nothing():
    spec = LabSpec(new_lab_id(), FirewallProfile("stateful"))
    with NamespaceTestbed(spec) as lab:
        assert set(spec.namespaces) <= netns_names()
        assert read_sysctl(spec.netns("dut"), "net.ipv4.ip_forward") == "1"
        servers = lab.server_pids()
        assert len(servers) == 1
        trial = lab.run_trial(TrialParams(**SHORT))
        assert trial.ok, trial.error
        assert trial.throughput_bps > 1e8
        assert trial.dut_counters["ipv4_forwarded"] > 1000  # the traffic really crossed the DUT
        assert Registry().load(spec.lab_id) is not None
    assert not set(spec.namespaces) & netns_names()
    assert not any(pid_alive(pid) for pid in servers)
    assert Registry().load(spec.lab_id) is None


@pytest.mark.parametrize("firewall", ["none", "nat", "rules:1000"])
def test_ipv6_and_profiles(firewall):
    with NamespaceTestbed(LabSpec(new_lab_id(), FirewallProfile.parse(firewall))) as lab:
        for family in (4, 6):
            trial = lab.run_trial(TrialParams(family=family, streams=2, **SHORT))
            assert trial.ok, trial.error
            key = "ipv4_forwarded" if family == 4 else "ipv6_forwarded"
            assert trial.dut_counters[key] > 1000


def _probe_closed_port(lab: NamespaceTestbed) -> str:
    """Connect to a port nothing listens on: the server answers with a RST ("refused") if the
    SYN crosses the DUT; a DUT that drops the SYN leaves the client to time out."""
    probe = lab.executor("client").run(
        ["iperf3", "--client", "198.19.0.2", "--port", "5202", "--json", "--time", "1",
         "--connect-timeout", "500"], check=False, timeout_s=20)
    return json.loads(probe.stdout)["error"]


def test_ruleset_blocks_what_it_does_not_pass():
    """The stateful profile must really filter: a port other than iperf3's never reaches the server."""
    with NamespaceTestbed(LabSpec(new_lab_id(), FirewallProfile("none"))) as open_lab:
        assert "refused" in _probe_closed_port(open_lab)
    with NamespaceTestbed(LabSpec(new_lab_id(), FirewallProfile("stateful"))) as lab:
        assert "policy drop" in lab.executor("dut").run(["nft", "list", "ruleset"]).stdout
        assert "refused" not in _probe_closed_port(lab)


def test_exception_inside_lab_removes_it():
    spec = LabSpec(new_lab_id())
    with pytest.raises(RuntimeError):
        with NamespaceTestbed(spec):
            raise RuntimeError("boom")
    assert not set(spec.namespaces) & netns_names()


def test_two_labs_coexist_and_a_name_clash_touches_neither():
    a, b = LabSpec(new_lab_id()), LabSpec(new_lab_id())
    with NamespaceTestbed(a) as lab_a, NamespaceTestbed(b) as lab_b:
        assert lab_a.run_trial(TrialParams(**SHORT)).ok
        assert lab_b.run_trial(TrialParams(family=6, **SHORT)).ok
        with pytest.raises(ConfigError, match="already exists"):
            with NamespaceTestbed(LabSpec(a.lab_id)):
                pass
        assert set(a.namespaces) <= netns_names()  # the clash did not remove the other lab
    assert not (set(a.namespaces) | set(b.namespaces)) & netns_names()


def test_mtu_9000_lab():
    with NamespaceTestbed(LabSpec(new_lab_id(), mtu=9000)) as lab:
        out = lab.executor("dut").run(["ip", "-j", "link", "show", "lan0"]).stdout
        assert '"mtu":9000' in out
        assert lab.run_trial(TrialParams(**SHORT)).ok
