"""VM DUT pure logic: qemu argv, virtio properties, tap ifreq, guest plan and commands, the
agent's framing (against a scripted peer), module dependency order, options and refusals."""

import hashlib
import json
import shutil
import socket
import struct
import subprocess
import threading
from pathlib import Path

import pytest

from linerate.errors import ConfigError, ExecError
from linerate.model import FirewallProfile
from linerate.topology.link import LinkSpec
from linerate.topology.plan import CreateTap, LabSpec, RunTool
from linerate.exec.agent import AgentExecutor, with_stdin
from linerate.vm.plan import build_vm_plan, guest_commands
from linerate.vm.qemu import VmSpec, negotiated_features, parse_virtio_offloads, qemu_argv
from linerate.vm.taps import IFF_MULTI_QUEUE, IFF_VNET_HDR, ifreq, tap_flags

SPEC = LabSpec("t1", FirewallProfile.parse("stateful"), 1500, link=LinkSpec(1e9), cpu_sides=((0,), (1,)))


def option(argv: list[str], flag: str, containing: str) -> str:
    values = [argv[i + 1] for i, a in enumerate(argv[:-1]) if a == flag and containing in argv[i + 1]]
    assert len(values) == 1, (flag, containing, values)
    return values[0]


def test_qemu_argv_nic_order_queues_offloads_and_escaping():
    spec = VmSpec("linerate-t1", vcpus=2, accel="tcg", queues=2, virtio={"csum": "off", "host_tso4": "off"},
                  kernel=Path("/k/vmlinuz"), initrd=Path("/k/initrd"), append="console=ttyS0",
                  agent_socket=Path("/run/a,b/agent.sock"), console_log=Path("/run/x/console.log"))
    argv = qemu_argv(spec, [5, 6], [7, 8])
    assert argv[argv.index("-accel") + 1] == "tcg,thread=multi" and argv[argv.index("-smp") + 1] == "2"
    lan = option(argv, "-device", "netdev=lan")
    assert "addr=0x3" in lan and "mac=52:54:00:4c:52:01" in lan and "mq=on,vectors=6" in lan
    assert "csum=off" in lan and "host_tso4=off" in lan
    assert "addr=0x4" in option(argv, "-device", "netdev=wan")
    assert option(argv, "-netdev", "id=lan") == "tap,id=lan,fds=5:6,vhost=off"
    # a comma in a path is doubled: it cannot start a new qemu option
    assert "path=/run/a,,b/agent.sock,server=on" in option(argv, "-chardev", "id=agent")
    kvm = qemu_argv(VmSpec("x", accel="kvm"), [3], [4])
    assert kvm[kvm.index("-accel") + 1] == "kvm" and option(kvm, "-netdev", "id=lan") == "tap,id=lan,fd=3,vhost=off"
    assert "-netdev" not in qemu_argv(VmSpec("probe"), [], [])  # the KVM probe boots without NICs


def test_own_image_gets_a_disk_and_a_management_nic_third():
    argv = qemu_argv(VmSpec("x", accel="kvm", disk=Path("/v/overlay.qcow2"), mgmt_ssh_port=2222), [3], [4])
    assert option(argv, "-drive", "overlay") == "file=/v/overlay.qcow2,format=qcow2,if=none,id=disk"
    mgmt = option(argv, "-device", "netdev=mgmt")
    assert "addr=0x5" in mgmt  # after LAN (0x3) and WAN (0x4): vtnet2
    assert "hostfwd=tcp:127.0.0.1:2222-:22" in option(argv, "-netdev", "id=mgmt")


def test_virtio_offloads_values():
    assert parse_virtio_offloads("on") == {}
    off = parse_virtio_offloads("off")
    assert off["csum"] == off["guest_tso4"] == "off" and "mrg_rxbuf" not in off
    assert parse_virtio_offloads("guest_tso4=off, guest_tso6=off") == {"guest_tso4": "off", "guest_tso6": "off"}
    with pytest.raises(ValueError, match="csum=off needs host_tso4=off too"):
        parse_virtio_offloads("csum=off")
    with pytest.raises(ValueError, match="property one of csum"):
        parse_virtio_offloads("tso=off")


def test_negotiated_features_from_the_guest():
    # /sys/class/net/lan0/device/features read in the built-in guest: qemu defaults, then 'off'
    defaults = negotiated_features("1110010111111111111101010000110010000000100000000000000000000000")
    assert defaults["csum"] == defaults["host_tso4"] == defaults["mrg_rxbuf"] == "on" and defaults["gso"] == "off"
    off = negotiated_features("0010010000000001111101010000110010000000100000000000000000000000")
    assert off["csum"] == off["guest_csum"] == off["host_tso4"] == off["guest_tso6"] == "off"
    assert off["mrg_rxbuf"] == "on"


def test_tap_ifreq_layout():
    data = ifreq("tap-lan", tap_flags(2))
    assert len(data) == 40 and data[:7] == b"tap-lan" and data[7:16] == bytes(9)
    flags = struct.unpack_from("H", data, 16)[0]
    assert flags & IFF_VNET_HDR and flags & IFF_MULTI_QUEUE and not tap_flags(1) & IFF_MULTI_QUEUE


def test_vm_plan_shapes_after_the_guest_and_configures_it_through_the_agent():
    plan = build_vm_plan(SPEC, queues=2)
    taps = [s for s in plan.steps if isinstance(s, CreateTap)]
    assert [(t.netns, t.ifname, t.queues) for t in taps] == [("lr-t1-dut", "tap-lan", 2), ("lr-t1-dut", "tap-wan", 2)]
    shaped = {s.argv[4] for s in plan.steps if isinstance(s, RunTool) and s.argv[:2] == ("tc", "qdisc")}
    assert shaped == {"lan0", "wan0"}  # the dut namespace's veth ends, never the taps
    bridged = [s.argv for s in plan.steps if isinstance(s, RunTool) and "master" in s.argv]
    assert ("ip", "link", "set", "tap-lan", "master", "br-lan") in bridged
    commands = guest_commands(SPEC)
    assert (["ip", "addr", "add", "198.18.0.1/24", "dev", "lan0"], None) in commands
    assert (["ip", "addr", "add", "2001:2:0:1::1/64", "dev", "lan0", "nodad"], None) in commands
    ruleset = [stdin for argv, stdin in commands if argv == ["nft", "-f", "-"]]
    assert len(ruleset) == 1 and "ct state established,related accept" in ruleset[0]


def test_stdin_goes_in_a_quoted_here_document():
    script = with_stdin(["nft", "-f", "-"], "table inet x { }\n$(reboot)\n")
    first, rest = script.split("\n", 1)
    assert first.startswith("nft -f - <<'LINERATE_EOF_") and "$(reboot)" in rest
    assert with_stdin(["echo", "a b;c"], None) == "echo 'a b;c'\n"


class ScriptedAgent:
    """A unix socket peer answering each LRQ with the given responses (as the guest agent does)."""

    def __init__(self, path: Path, answers):
        self.server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.server.bind(str(path))
        self.server.listen(1)
        self.answers, self.requests = list(answers), []
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    def serve(self):
        conn, _ = self.server.accept()
        buffer = b""
        while self.answers:
            while b"\n" not in buffer:
                buffer += conn.recv(4096)
            header, buffer = buffer.split(b"\n", 1)
            _, request_id, size, _ = header.split()
            while len(buffer) < int(size):
                buffer += conn.recv(4096)
            self.requests.append(buffer[:int(size)].decode())
            buffer = buffer[int(size):]
            conn.sendall(self.answers.pop(0)(int(request_id)))
        conn.close()


def framed(request_id: int, status: int, out: bytes, err: bytes = b"") -> bytes:
    return f"LRR {request_id} {status} {len(out)} {len(err)}\n".encode() + out + err


def test_agent_executor_framing_stale_answers_and_failures(tmp_path):
    path = tmp_path / "agent.sock"
    agent = ScriptedAgent(path, [
        lambda rid: framed(rid, 0, b"6.1.0\n"),
        lambda rid: framed(rid - 1, 0, b"late answer\n") + framed(rid, 3, b"", b"nft: no such table\n"),
        lambda rid: b"garbage\n",
    ])
    executor = AgentExecutor(path)
    assert executor.run(["uname", "-r"], timeout_s=5).stdout == "6.1.0\n"
    with pytest.raises(ExecError, match="exited 3: nft: no such table"):
        executor.run(["nft", "list", "table", "x"], timeout_s=5)
    with pytest.raises(ExecError, match="guest agent"):
        executor.run(["true"], timeout_s=5)
    assert agent.requests[0] == "uname -r\n"
    executor.close()


def test_module_dependency_order(tmp_path):
    from linerate.vm.guest_build import module_closure

    def module(name: str, depends: str) -> None:
        (tmp_path / f"{name}.ko").write_bytes(b"\x7fELF...\x00license=GPL\x00depends=" + depends.encode() + b"\x00name="
                                              + name.encode() + b"\x00")

    module("virtio_net", "net_failover,virtio,virtio_ring")
    module("net_failover", "failover")
    module("failover", "")
    module("virtio", "")
    module("virtio_ring", "")
    order = [p.stem for p in module_closure(tmp_path, ("virtio_net",))]
    assert order.index("failover") < order.index("net_failover") < order.index("virtio_net")
    assert set(order) == {"virtio_net", "net_failover", "failover", "virtio", "virtio_ring"}
    from linerate.errors import LabError

    with pytest.raises(LabError, match="no module nope"):
        module_closure(tmp_path, ("nope",))


def test_vm_axes_need_dut_vm_and_a_namespace_only_testbed_refuses_it():
    from linerate.axes import AXES
    from linerate.testbed.knobs import refuse_unsupported

    base = {name: axis.default for name, axis in AXES.items()}
    with pytest.raises(ConfigError, match="dut_vcpus: 2 sets the VM DUT; add dut"):
        refuse_unsupported([{**base, "dut_vcpus": 2}], "namespace")
    refuse_unsupported([{**base, "dut": "vm", "dut_vcpus": 2, "dut_sysctls": "kernel.sched_autogroup_enabled=0"}],
                       "namespace")
    with pytest.raises(ConfigError, match="dut: 'vm' needs a DUT built by linerate"):
        refuse_unsupported([{**base, "dut": "vm"}], "ssh")
    with pytest.raises(ValueError, match="is not one of auto, kvm, tcg"):
        AXES["dut_accel"].validate("xen")


def test_own_image_overlay_leaves_the_image_untouched(tmp_path):
    from linerate.vm.byo import create_overlay

    if shutil.which("qemu-img") is None:
        pytest.fail("qemu-img missing: make install installs qemu-utils")
    image = tmp_path / "own, image.qcow2"
    subprocess.run(["qemu-img", "create", "-q", "-f", "qcow2", str(image), "64M"], check=True)
    digest = hashlib.sha256(image.read_bytes()).hexdigest()
    (tmp_path / "vm").mkdir()
    overlay = create_overlay(image, tmp_path / "vm")
    info = subprocess.run(["qemu-img", "info", "--output=json", str(overlay)], capture_output=True, text=True,
                          check=True).stdout
    assert str(image) in info and '"backing-filename-format": "qcow2"' in info
    assert hashlib.sha256(image.read_bytes()).hexdigest() == digest
    with pytest.raises(ConfigError, match="is not a file"):
        create_overlay(tmp_path / "missing.qcow2", tmp_path / "vm")
    # the backing file a running lab's overlay names, read from its header (qemu holds the overlay's lock)
    from linerate.vm.byo import overlay_backing
    assert overlay_backing(overlay) == json.loads(info)["backing-filename"] == str(image.resolve())
    (tmp_path / "link.qcow2").symlink_to(overlay)
    assert overlay_backing(image) is None and overlay_backing(tmp_path / "link.qcow2") is None
    assert overlay_backing(tmp_path / "missing.qcow2") is None and overlay_backing(tmp_path) is None


def test_a_running_qemus_argv_is_compared_with_the_vm_options_a_record_gives():
    """A kept VM lab's record against the qemu it started (testbed/vm.py drift_from_record): every option
    that qemu_argv writes is read back from the argv; an own image's management NIC is not a knob."""
    from linerate.vm.qemu import argv_drift

    virtio = {"csum": "off", "host_tso4": "off"}
    argv = qemu_argv(VmSpec("k", vcpus=2, memory_mb=512, accel="tcg", queues=2, virtio=virtio, mgmt_ssh_port=2222),
                     [3, 4], [5, 6])
    same = dict(vcpus=2, memory_mb=512, accel="tcg", vhost=False, queues=2, virtio=virtio)
    assert argv_drift(argv, **same) == [] and argv_drift(argv, **{**same, "accel": "auto"}) == []
    assert argv_drift(argv, **{**same, "vcpus": 1}) == ["qemu runs with 2 vCPUs, the file says 1"]
    assert argv_drift(argv, **{**same, "memory_mb": 1024}) == ["qemu runs with 512 MiB of memory, the file says 1024"]
    assert argv_drift(argv, **{**same, "accel": "kvm"}) == ["qemu runs under tcg, the file says kvm"]
    assert len(argv_drift(argv, **{**same, "vhost": True})) == 2  # lan and wan
    assert len(argv_drift(argv, **{**same, "virtio": {}})) == 2 and len(argv_drift(argv, **{**same, "queues": 1})) == 2
