"""An own image as the DUT: how linerate logs in (vm/image_access.py), what it runs in a Linux image
(vm/plan.py guest_commands by the image's own NIC names), the qemu line, and what a missing piece says."""

import subprocess

import pytest

from linerate.axes import AXES
from linerate.errors import ConfigError
from linerate.testbed.knobs import refuse_unsupported
from linerate.topology.plan import LabSpec
from linerate.model import FirewallProfile
from linerate.vm.image_access import MGMT_PORT, image_access, missing_pieces
from linerate.vm.plan import guest_commands
from linerate.vm.qemu import MGMT_MAC, VmSpec, qemu_argv


@pytest.fixture
def image(tmp_path):
    path = tmp_path / "router.qcow2"
    subprocess.run(["qemu-img", "create", "-q", "-f", "qcow2", str(path), "16M"], check=True)
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", f"{path}.key"], check=True)
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(tmp_path / "host")], check=True)
    return path


def test_the_files_beside_the_image_are_its_login_and_its_host_keys(image, tmp_path):
    host_pub = (tmp_path / "host.pub").read_text()
    image.with_name(image.name + ".host_keys").write_text(f"# written by linerate image build\n{host_pub}")
    access = image_access(str(image), "root", "", "", 0, "tcg")
    assert access.key == image.with_name(image.name + ".key") and access.boot_timeout_s == 300
    kind, blob = host_pub.split()[:2]
    assert access.host_keys == (f"{kind} {blob}",)
    assert access.known_hosts_text() == f"[127.0.0.1]:{MGMT_PORT} {kind} {blob}\n"
    # a known_hosts line (its host pattern dropped: the guest is reached at a lab-private address) works too
    known = tmp_path / "known_hosts"
    known.write_text(f"fw.example.net,192.0.2.1 {kind} {blob}\n")
    assert image_access(str(image), "admin", "", str(known), 60, "kvm").host_keys == (f"{kind} {blob}",)


def test_an_image_without_its_files_gets_no_host_key_and_every_problem_at_once(tmp_path):
    with pytest.raises(ConfigError) as caught:
        image_access(str(tmp_path / "missing.qcow2"), "root", "", str(tmp_path / "nokeys"), 0, "tcg")
    problem = caught.value.problem
    assert "is not a file" in problem and "no private key to log in with" in problem and "does not exist" in problem
    bad = tmp_path / "bad_keys"
    bad.write_text("this is not a key\n")
    (tmp_path / "img.qcow2").write_bytes(b"")
    (tmp_path / "img.qcow2.key").write_text("")
    with pytest.raises(ConfigError, match="a line is not a public host key"):
        image_access(str(tmp_path / "img.qcow2"), "root", "", str(bad), 0, "tcg")
    access = image_access(str(tmp_path / "img.qcow2"), "root", "", "", 0, "tcg")
    assert access.host_keys == ()  # none named and none beside it: the first key seen in the lab is trusted


def test_a_linux_image_is_configured_on_its_own_nic_names():
    spec = LabSpec("ab12cd", FirewallProfile.parse("stateful"), 1500,
                   offloads=(("dut", "lan0", "tso", "off"), ("dut", "wan0", "tso", "off")))
    commands = guest_commands(spec, "enp0s3", "enp0s4", (("enp0s4", "gso", "off"),))
    text = [" ".join(argv) for argv, _ in commands]
    assert "ip addr add 198.18.0.1/24 dev enp0s3" in text and "ip addr add 198.19.0.1/24 dev enp0s4" in text
    assert "ethtool -K enp0s3 tso off" in text and "ethtool -K enp0s4 tso off gso off" in text
    assert not any("lan0" in line or "wan0" in line for line in text)
    ruleset = next(stdin for argv, stdin in commands if argv[:2] == ["nft", "-f"])
    assert '"enp0s3"' in ruleset and '"lan0"' not in ruleset


def test_the_image_boots_from_its_overlay_with_ssh_on_the_management_nic(tmp_path):
    spec = VmSpec("linerate-ab12cd", disk=tmp_path / "overlay, one.qcow2", mgmt_ssh_port=MGMT_PORT)
    argv = qemu_argv(spec, [10], [11])
    assert "-kernel" not in argv
    drive = argv[argv.index("-drive") + 1]
    assert drive.startswith(f"file={tmp_path}/overlay,, one.qcow2,format=qcow2")  # qemu's comma escape
    user = argv[argv.index("-netdev", argv.index("-drive")) + 1]
    assert user == f"user,id=mgmt,restrict=on,hostfwd=tcp:127.0.0.1:{MGMT_PORT}-:22"
    assert any(MGMT_MAC in arg for arg in argv)


def test_missing_pieces_say_who_sets_the_addresses():
    product = missing_pieces("opnsense", {"lan": False, "wan": True, "through": False}, False)
    assert len(product) == 2 and "198.18.0.1/24" in product[0] and "config.xml" in product[0]
    assert "forwarding from LAN to WAN" in product[1]
    assert "rc.conf" in missing_pieces("freebsd", {"lan": False, "wan": True, "through": True}, False)[0]
    assert "set by linerate" in missing_pieces("linux", {"lan": False, "wan": True, "through": True}, True)[0]
    assert missing_pieces("freebsd", {"lan": True, "wan": True, "through": True}, False) == []


def test_image_axes_are_validated_and_dut_offloads_needs_a_real_dut_or_an_image():
    assert AXES["dut_os"].validate("openwrt") == "openwrt"
    assert AXES["dut_ssh_user"].validate("admin") == "admin"
    for name, bad in (("dut_ssh_user", "root; reboot"), ("dut_boot_timeout", 99999), ("dut_ssh_key", "a\x00b"),
                      ("dut_image", "router.vmdk")):
        with pytest.raises(ValueError):
            AXES[name].validate(bad)
    cell = {"dut": "vm", "dut_offloads": "enp0s3:tso=off"}
    with pytest.raises(ConfigError, match="dut_offloads"):
        refuse_unsupported([cell], "namespace")
    refuse_unsupported([{**cell, "dut_image": "/images/opnsense.qcow2"}], "namespace")


def test_the_vm_demo_runs_on_an_own_image_when_given_one():
    from linerate.experiment.builtin import demo_experiment

    cells = demo_experiment(3, None, 1, "vm", {"dut_image": "/images/my \"router\".qcow2", "dut_os": "openwrt",
                                               "dut_ssh_key": "", "dut_host_keys": ""}).cells()
    assert {cell["dut_image"] for cell in cells} == {'/images/my "router".qcow2'}
    assert {cell["dut_os"] for cell in cells} == {"openwrt"} and {cell["virtio_offloads"] for cell in cells} == {"on", "off"}


def test_demo_login_options_without_an_image_are_refused(capsys):
    from linerate.cli import main

    assert main(["demo", "--dut-key", "/root/.ssh/id_ed25519"]) == 2
    assert "--dut-key" in capsys.readouterr().err


def test_a_pipe_or_a_device_named_as_a_key_file_is_refused_not_read(image, tmp_path):
    import os
    from pathlib import Path

    from linerate.image.debian import read_public_key

    fifo = tmp_path / "keys.fifo"
    os.mkfifo(fifo)
    for named in (str(fifo), "/dev/zero"):
        with pytest.raises(ConfigError, match="not a regular file"):
            image_access(str(image), "root", "", named, 0, "tcg")
        with pytest.raises(ConfigError, match="--ssh-key"):
            read_public_key(Path(named))


def test_a_bsd_image_takes_runtime_knobs_but_not_linerates_ruleset():
    base = {"dut": "vm", "dut_image": "/images/opnsense.qcow2", "dut_os": "opnsense"}
    for name, value in (("firewall", "stateful"), ("dut_rps", "3")):
        with pytest.raises(ConfigError, match=f"^{name}: .*the opnsense image's own configuration decides it"):
            refuse_unsupported([{**base, name: value}], "namespace")
    refuse_unsupported([{**base, "offloads": "dut:tso=off", "dut_offloads": "vtnet1:lro=off",
                         "dut_sysctls": "net.inet.ip.redirect=0", "virtio_offloads": "off"}], "namespace")
    refuse_unsupported([{**base, "dut_os": "openwrt", "firewall": "stateful"}], "namespace")  # a Linux: set by linerate


def test_a_bsd_images_offloads_go_through_its_driver_by_role_and_are_read_back():
    """The guest level of the Netgate thread's matrix on a pfSense image: `dut:tso=off` reaches vtnet0 and
    vtnet1 as ifconfig flags (FreeBSD ifconfig(8)); what the guest then shows is what is stored."""
    from linerate.dut.bsd import FreeBsdDriver
    from linerate.errors import LabError
    from linerate.exec import FakeExecutor
    from linerate.testbed.vm_image import apply_driver_knobs
    from linerate.topology.link import parse_offloads
    from tests.conftest import capture

    shown = capture("bsd/freebsd_ifconfig_em0.txt")  # options=...<RXCSUM,TXCSUM,...,LRO,...>: no TSO4
    guest = FakeExecutor("pfsense")
    guest.respond(["ifconfig"], shown)
    guest.respond(["sysctl", "-n", "net.inet.ip.redirect"], "0\n")
    guest.respond(["sysctl", "net.inet.ip.redirect=0"])
    names = {"lan0": "vtnet0", "wan0": "vtnet1"}
    state = apply_driver_knobs(FreeBsdDriver(), guest, names, parse_offloads("dut:tso=off"), (),
                               (("net.inet.ip.redirect", "0"),))
    assert ("ifconfig", "vtnet0", "-tso") in guest.calls and ("ifconfig", "vtnet1", "-tso") in guest.calls
    assert state["dut_offloads"]["vtnet0"]["tso"] == "off" and state["dut_sysctls"] == {"net.inet.ip.redirect": "0"}
    with pytest.raises(LabError, match="vtnet1 lro=off: the guest reports on"):  # the flag did not stick
        apply_driver_knobs(FreeBsdDriver(), guest, names, (), (("vtnet1", "lro", "off"),), ())


def test_an_image_whose_backing_file_is_a_device_is_refused(tmp_path):
    from linerate.vm.byo import image_format

    base = tmp_path / "base.qcow2"
    subprocess.run(["qemu-img", "create", "-q", "-f", "qcow2", str(base), "16M"], check=True)
    linked = tmp_path / "linked-clone.qcow2"
    subprocess.run(["qemu-img", "create", "-q", "-f", "qcow2", "-F", "qcow2", "-b", str(base), str(linked)], check=True)
    assert image_format(linked) == "qcow2"  # a linked clone of a real base image is fine
    hostile = tmp_path / "hostile.qcow2"
    subprocess.run(["qemu-img", "create", "-q", "-f", "qcow2", "-F", "raw", "-b", "/dev/null", "-u", str(hostile),
                    "16M"], check=True)
    with pytest.raises(ConfigError, match="backing file '/dev/null' is not a regular file"):
        image_format(hostile)


def test_an_image_build_without_its_tools_names_every_missing_one_before_it_makes_anything(tmp_path, monkeypatch):
    from linerate.errors import PreflightError
    from linerate.image import debian

    monkeypatch.setattr(debian.shutil, "which", lambda name, path=None: None if name in ("extlinux", "sfdisk") else "/x")
    monkeypatch.setattr(debian.os, "geteuid", lambda: 1000)
    monkeypatch.setattr(debian, "MBR", tmp_path / "no-mbr.bin")
    with pytest.raises(PreflightError) as caught:
        debian.build(tmp_path / "router.qcow2")
    said = str(caught.value)
    assert "sfdisk" in said and "extlinux" in said and "no-mbr.bin" in said and "root" in said
    assert list(tmp_path.iterdir()) == []


def test_an_image_whose_backing_chain_is_missing_a_pipe_or_anothers_file_is_refused(tmp_path):
    import os

    from linerate.vm.byo import create_overlay, image_format

    missing = tmp_path / "missing-base.qcow2"
    subprocess.run(["qemu-img", "create", "-q", "-f", "qcow2", "-u", "-F", "raw", "-b", str(tmp_path / "gone.raw"),
                    str(missing), "16M"], check=True)
    fifo = tmp_path / "base.fifo"
    os.mkfifo(fifo)
    piped = tmp_path / "piped.qcow2"
    subprocess.run(["qemu-img", "create", "-q", "-f", "qcow2", "-u", "-F", "raw", "-b", str(fifo), str(piped), "16M"],
                   check=True)
    for image in (missing, piped):
        with pytest.raises(ConfigError, match="is not a regular file the image's owner may read"):
            image_format(image)
    (tmp_path / "vm").mkdir()
    with pytest.raises(ConfigError, match="^dut_image: "):
        create_overlay(missing, tmp_path / "vm")
    secret = tmp_path / "secret.raw"
    secret.write_bytes(b"\0" * 4096)
    secret.chmod(0o600)
    others = tmp_path / "theirs.qcow2"
    subprocess.run(["qemu-img", "create", "-q", "-f", "qcow2", "-u", "-F", "raw", "-b", str(secret), str(others),
                    "16M"], check=True)
    if os.geteuid() == 0:  # CI runs as root: the image another user made may not name root's file
        os.chown(others, 65534, 65534)
        with pytest.raises(ConfigError, match="the image's owner may read"):
            image_format(others)
        secret.chmod(0o644)  # readable by everyone: nothing to hide
        assert image_format(others) == "qcow2"
