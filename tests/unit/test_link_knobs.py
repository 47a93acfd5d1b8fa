import pytest

from linerate.axes import lab_spec
from linerate.errors import ConfigError
from linerate.testbed.requirements import required_features
from linerate.kinds.throughput.calibration import GENERATOR_BOUND, flags_for
from linerate.experiment.config import parse_experiment
from linerate.lab.state import verify
from linerate.model import Trial, TrialParams
from linerate.topology.link import (LinkSpec, burst_allowance_bps, parse_ethtool_features, parse_offloads, parse_sysctls, qdisc_argvs, segmenter_burst,
                                    shaper_burst)
from linerate.exec import NetnsExecutor
from linerate.topology.plan import LabSpec, RunTool, SetSysctls, WriteSysfs, build_plan, cpu_mask, split_cpus


def test_segmenter_then_per_frame_shaper():
    segmenter, shaper = qdisc_argvs(LinkSpec(rate_bps=1e9), "wan0", 1500)
    assert segmenter[segmenter.index("root") + 1:segmenter.index("tbf")] == ["handle", "1:"]
    assert segmenter[segmenter.index("rate") + 1] == "100000000000bit"
    # one 1514-byte frame fits the segmenter's burst, a two-segment GSO packet (>= 2 * 1448 + 66) does not
    assert 1514 <= segmenter_burst(1500) < 2 * 1448 + 66
    assert 9014 <= segmenter_burst(9000) < 2 * 8948 + 66
    assert shaper[shaper.index("parent") + 1] == "1:1"
    assert shaper[shaper.index("overhead") + 1] == "24" and shaper[shaper.index("mpu") + 1] == "84"
    assert shaper[shaper.index("rate") + 1] == "1000000000bit"
    assert shaper_burst(1e6, 1500) == 2 * 1538  # 4 ms at 1 Mbit/s is less than two frames
    assert shaper[shaper.index("burst") + 1] == str(shaper_burst(1e9, 1500)) == "500000"  # 4 ms at 1 Gbit/s
    assert shaper_burst(10e9, 9000) == 5_000_000


def test_burst_allowance_is_one_bucket_per_window():
    assert burst_allowance_bps(1e9, 1500, 8) == pytest.approx(500_000 * 8 / 8)  # 0.5 Mbit/s, 0.05%
    assert burst_allowance_bps(1e9, 1500, 2) == 4 * burst_allowance_bps(1e9, 1500, 8)


def test_netem_as_child_of_tbf_or_alone():
    both = qdisc_argvs(LinkSpec(rate_bps=1e9, delay_ms=10, loss_pct=0.5), "wan0", 1500)
    assert both[2][:9] == ["tc", "qdisc", "add", "dev", "wan0", "parent", "2:1", "handle", "10:"]
    assert "delay" in both[2] and "loss" in both[2]
    alone = qdisc_argvs(LinkSpec(delay_ms=5), "lan0", 1500)
    assert alone == [["tc", "qdisc", "replace", "dev", "lan0", "root", "netem", "delay", "5ms"]]
    assert qdisc_argvs(LinkSpec(), "wan0", 1500) == []


def test_offload_and_sysctl_specs():
    assert parse_offloads("default") == ()
    spec = parse_offloads("all:tso=off,gso=off;dut_in:gro=on")
    assert ("dut", "lan0", "gro", "on") in spec and ("client", "eth0", "tso", "off") in spec
    assert len(spec) == 9
    for bad in ("tso=off", "nowhere:tso=off", "dut:tso=maybe", "dut:warp=on"):
        with pytest.raises(ValueError):
            parse_offloads(bad)
    assert parse_sysctls("net.core.somaxconn=1024;net.ipv4.tcp_rmem=4096 131072 6291456") == (
        ("net.core.somaxconn", "1024"), ("net.ipv4.tcp_rmem", "4096 131072 6291456"))
    for bad in ("kernel.panic=1", "net.core.x=1;rm -rf /", "net.core.x"):
        with pytest.raises(ValueError):
            parse_sysctls(bad)


def test_knobs_become_plan_steps():
    spec = lab_spec("k1", {"link_rate": "1g", "offloads": "dut:tso=off", "dut_sysctls": "net.core.somaxconn=512",
                           "dut_rps": "3"})
    steps = build_plan(spec).steps
    tools = [s.argv for s in steps if isinstance(s, RunTool)]
    assert sum(1 for argv in tools if argv[0] == "tc") == 4  # segmenter + shaper on both DUT ports
    assert ("ethtool", "-K", "lan0", "tso", "off") in tools and ("ethtool", "-K", "wan0", "tso", "off") in tools
    assert any(isinstance(s, SetSysctls) and ("net.core.somaxconn", "512") in s.values for s in steps)
    rps = {(s.netns, s.path.split("/")[4]): s.value for s in steps if isinstance(s, WriteSysfs)}
    assert rps[("lr-k1-dut", "lan0")] == rps[("lr-k1-dut", "wan0")] == "3"  # the user's dut_rps wins on the DUT
    assert set(rps) == {("lr-k1-client", "eth0"), ("lr-k1-server", "eth0"), ("lr-k1-dut", "lan0"), ("lr-k1-dut", "wan0")}


def test_lab_sides_get_their_own_cpus():
    assert split_cpus([0, 1]) == ((0,), (1,))
    assert split_cpus([3, 0, 2, 1]) == ((0, 1), (2, 3))
    assert split_cpus([5]) == ((5,), (5,))  # one CPU serves both sides
    assert cpu_mask((0,)) == "1" and cpu_mask((2, 3)) == "c" and cpu_mask((0, 1, 2, 3, 4, 5, 6, 7, 8)) == "1ff"
    spec = LabSpec("k3", cpu_sides=((0, 1), (2, 3)))
    assert spec.rps_masks() == {("client", "eth0"): "3", ("dut", "lan0"): "3", ("dut", "wan0"): "c", ("server", "eth0"): "c"}
    assert spec.cpus("client") == (0, 1) and spec.cpus("server") == (2, 3) and spec.cpus("dut") == ()
    assert NetnsExecutor("lr-k3-client", spec.cpus("client")).wrap(["iperf3", "-c", "x"]) == [
        "ip", "netns", "exec", "lr-k3-client", "taskset", "--cpu-list", "0,1", "iperf3", "-c", "x"]
    assert NetnsExecutor("lr-k3-dut", spec.cpus("dut")).wrap(["tc"]) == ["ip", "netns", "exec", "lr-k3-dut", "tc"]


def test_experiment_axes_for_links_and_preflight_needs():
    exp = parse_experiment('name = "x"\n[axes]\nlink_rate = ["none", "1g"]\ndelay_ms = [0, 10]\n'
                           'offloads = ["default", "all:tso=off,gso=off,gro=off"]\n')
    assert exp.n_cells == 8
    assert required_features(exp.cells()) == {"qdisc netem", "qdisc tbf"}
    with pytest.raises(ConfigError, match="link_rate"):
        parse_experiment('name = "x"\n[axes]\nlink_rate = ["fast"]\n')
    # any sysctl name parses (a real DUT takes kern.* or net.inet.*); the namespace lab refuses non-net.*
    from linerate.testbed.knobs import refuse_unsupported

    exp = parse_experiment('name = "x"\n[axes]\ndut_sysctls = ["kernel.panic=1"]\n')
    with pytest.raises(ConfigError, match="dut_sysctls.*real DUT"):
        refuse_unsupported(exp.cells(), "namespace")
    with pytest.raises(ConfigError, match="dut_sysctls"):
        parse_experiment('name = "x"\n[axes]\ndut_sysctls = ["kernel.panic=$(reboot)"]\n')


def test_read_back_mismatch_names_the_knob():
    spec = lab_spec("k2", {"offloads": "dut_in:lro=on"})
    rps = {f"{role}:{ifname}": mask for (role, ifname), mask in spec.rps_masks().items()}
    state = {"offloads": {"dut:lan0": {"lro": "off [fixed]"}}, "dut_sysctls": {}, "rps": rps}
    with pytest.raises(Exception, match=r"lro=on on dut lan0.*\[fixed\]"):
        verify(spec, state)
    state = {"offloads": {"dut:lan0": {"lro": "on"}}, "dut_sysctls": {}, "rps": rps | {"server:eth0": "0"}}
    with pytest.raises(Exception, match=r"rps_cpus=\w+ on server eth0: kernel reports '0'"):
        verify(spec, state)
    verify(spec, state | {"rps": rps})


def test_ethtool_parse(data_dir):
    features = parse_ethtool_features("Features for eth0:\nrx-checksumming: on\ntcp-segmentation-offload: off\n"
                                      "large-receive-offload: off [fixed]\n\ttx-tcp-segmentation: off\n")
    assert features == {"rx-checksumming": "on", "tcp-segmentation-offload": "off",
                        "large-receive-offload": "off [fixed]", "tx-tcp-segmentation": "off"}


def _trial(bps, cpu_local=20.0, direction="forward"):
    return Trial(status="ok", params=TrialParams(direction=direction), argv=(), throughput_bps=bps,
                 cpu_local_pct=cpu_local, cpu_remote_pct=30.0)


def test_generator_bound_flags():
    assert flags_for(_trial(13e9), baseline_bps=14e9) == [GENERATOR_BOUND]      # >= 90% of the rig
    assert flags_for(_trial(0.94e9), baseline_bps=14e9) == []                   # shaped link: the DUT limits
    assert flags_for(_trial(0.94e9, cpu_local=97), baseline_bps=14e9) == [GENERATOR_BOUND]
    assert flags_for(_trial(0.94e9, cpu_local=97, direction="reverse"), baseline_bps=14e9) == []
    failed = Trial(status="failed", params=TrialParams(), argv=(), error="x")
    assert flags_for(failed, 1e9) == []
