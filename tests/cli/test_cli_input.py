import argparse
import os
import subprocess
import sys

import pytest

from linerate.cli import build_parser, main


def netns_list() -> list[str]:
    return sorted(os.listdir("/run/netns")) if os.path.isdir("/run/netns") else []


@pytest.mark.parametrize("argv,option", [
    (["trial", "--streams", "0"], "--streams"),
    (["trial", "--family", "5"], "--family"),
    (["trial", "--duration", "-1"], "--duration"),
    (["trial", "--firewall", "rules:abc"], "--firewall"),
    (["trial", "--streams", "many"], "--streams"),
    (["trial", "--direction", "sideways"], "--direction"),
    (["lab", "up", "--name", "Bad Name"], "--name"),
    (["lab", "up", "--mtu", "20000"], "--mtu"),
    (["demo", "--repetitions", "0"], "--repetitions"),
    (["lab", "up", "--vcpus", "2"], "--vcpus"),  # a VM option without --dut vm
    (["lab", "up", "--dut", "vm", "--accel", "xen"], "--accel"),
    (["trial", "--dut", "vm", "--virtio-offloads", "csum=off"], "--virtio-offloads"),
    (["lab", "up", "--dut", "container"], "--dut"),
])
def test_bad_input_one_line_exit_2_nothing_created(argv, option, tmp_path):
    before = netns_list()
    proc = subprocess.run([sys.executable, "-m", "linerate", *argv], capture_output=True, text=True,
                          env={**os.environ, "LINERATE_STATE_DIR": str(tmp_path / "labs")})
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and option in lines[0] and "Traceback" not in proc.stderr
    assert not (tmp_path / "labs").exists()
    assert netns_list() == before


def test_unknown_lab_is_a_clean_error(capsys):
    assert main(["trial", "--lab", "nosuch"]) == 1
    assert "no lab named 'nosuch'" in capsys.readouterr().err


def test_dry_run_prints_plan_and_creates_nothing(capsys, tmp_path):
    assert main(["lab", "up", "--name", "dry", "--firewall", "rules:10", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "ip netns add lr-dry-client" in out
    assert "lr-dry-dut" not in netns_list()


def test_vm_dry_run_shows_taps_bridges_qemu_and_guest_commands(capsys):
    assert main(["lab", "up", "--name", "dryvm", "--dut", "vm", "--queues", "2", "--vcpus", "2",
                 "--firewall", "stateful", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "tuntap add tap-lan mode tap vnet_hdr multi_queue" in out and "master br-lan" in out
    assert "qemu-system-x86_64 ... (accel auto, 2 vCPU" in out and "guest: nft -f - <<< ruleset" in out
    assert "lr-dryvm-dut" not in netns_list()


def _subcommands(parser: argparse.ArgumentParser, prefix=()):
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield (*prefix, name), sub
                yield from _subcommands(sub, (*prefix, name))


def test_every_command_has_help_and_an_example():
    for path, sub in _subcommands(build_parser()):
        has_children = any(isinstance(a, argparse._SubParsersAction) for a in sub._actions)
        if has_children:
            continue
        text = sub.format_help()
        assert "Example: linerate" in text, f"{' '.join(path)} has no example in its help"


def test_command_table_names_every_command():
    from linerate.cli import COMMANDS

    parser = build_parser()
    top = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    assert set(top.choices) == set(COMMANDS)


@pytest.mark.parametrize("argv", [["--version"], ["calc", "--link", "1g"], ["explain", "net.inet.tcp.tso"],
                                  ["audit", "/dev/null", "--os", "linux"]])
def test_light_commands_load_no_heavy_library(argv):
    probe = ("import sys\nfrom linerate.cli import main\n"
             f"try:\n    main({argv!r})\nexcept SystemExit:\n    pass\n"
             "print(sorted(m for m in ('scipy', 'matplotlib', 'pyroute2', 'numpy', 'rich') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True).stdout
    assert out.strip().splitlines()[-1] == "[]"
