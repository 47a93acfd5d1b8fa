"""Read back what a lab really has — offloads, qdiscs, MTU/txqueuelen, DUT sysctls, RPS masks —
so every trial stores the applied values, and verify that each requested knob took effect."""

from __future__ import annotations

import json
from collections.abc import Callable

from linerate.errors import LabError
from linerate.exec import Executor
from linerate.topology.link import OFFLOAD_FEATURES, parse_ethtool_features
from linerate.topology.plan import CLIENT_IF, DUT_LAN_IF, DUT_WAN_IF, SERVER_IF, LabSpec, rps_path

INTERFACES = (("client", CLIENT_IF), ("dut", DUT_LAN_IF), ("dut", DUT_WAN_IF), ("server", SERVER_IF))


def read_offloads(host: Executor, ifname: str) -> dict[str, str]:
    """ethtool -k IF -> {offload long name: 'on' | 'off [fixed]' ...} for the features linerate sets."""
    features = parse_ethtool_features(host.run(["ethtool", "-k", ifname], timeout_s=10).stdout)
    long_names = {long: short for short, (_, long) in OFFLOAD_FEATURES.items()}
    return {long_names[k]: v for k, v in features.items() if k in long_names}


def read_lab_state(spec: LabSpec, executor: Callable[[str], Executor],
                   sysctl_reader: Callable[[str, str], str], rps_masks: dict | None = None) -> dict:
    state: dict = {"offloads": {}, "links": {}, "qdiscs": {}, "dut_sysctls": {}, "rps": {}}
    for role, ifname in INTERFACES:
        host = executor(role)
        state["offloads"][f"{role}:{ifname}"] = read_offloads(host, ifname)
        link = json.loads(host.run(["ip", "-j", "link", "show", ifname], timeout_s=10).stdout)[0]
        state["links"][f"{role}:{ifname}"] = {"mtu": link.get("mtu"), "txqlen": link.get("txqlen")}
    dut = executor("dut")
    for ifname in (DUT_LAN_IF, DUT_WAN_IF):
        qdiscs = json.loads(dut.run(["tc", "-j", "qdisc", "show", "dev", ifname], timeout_s=10).stdout or "[]")
        state["qdiscs"][ifname] = [{k: q.get(k) for k in ("kind", "handle", "parent", "options")} for q in qdiscs]
    for role, ifname in (spec.rps_masks() if rps_masks is None else rps_masks):
        state["rps"][f"{role}:{ifname}"] = executor(role).run(["cat", rps_path(ifname)], timeout_s=10).stdout.strip()
    for key, _ in spec.dut_sysctls:
        state["dut_sysctls"][key] = sysctl_reader(spec.netns("dut"), key)
    state["cpus"] = {"client_side": list(spec.cpu_sides[0]), "server_side": list(spec.cpu_sides[1])}
    state["tcp_congestion_control"] = sysctl_reader(spec.netns("client"), "net.ipv4.tcp_congestion_control")
    return state


def verify(spec: LabSpec, state: dict, rps_masks: dict | None = None) -> None:
    """LabError naming each knob whose read-back value is not what was asked."""
    problems = []
    for role, ifname, feature, wanted in spec.offloads:
        got = state["offloads"].get(f"{role}:{ifname}", {}).get(feature)
        if got is None or got.split()[0] != wanted:
            fixed = " (ethtool marks it [fixed]: the driver cannot change it)" if got and "fixed" in got else ""
            problems.append(f"offload {feature}={wanted} on {role} {ifname}: kernel reports '{got}'{fixed}")
    for key, wanted in spec.dut_sysctls:
        got = state["dut_sysctls"].get(key)
        if " ".join(str(got).split()) != " ".join(wanted.split()):
            problems.append(f"sysctl {key}={wanted} on the DUT: kernel reports '{got}'")
    for (role, ifname), wanted in (spec.rps_masks() if rps_masks is None else rps_masks).items():
        got = state["rps"].get(f"{role}:{ifname}", "")
        if int(got.replace(",", "") or "0", 16) != int(wanted, 16):
            problems.append(f"rps_cpus={wanted} on {role} {ifname}: kernel reports '{got}'")
    if problems:
        raise LabError("a knob did not take effect: " + "; ".join(problems))
