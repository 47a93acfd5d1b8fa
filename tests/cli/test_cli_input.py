import argparse
import os
import re
import subprocess
import sys

import pytest

from linerate.cli import build_parser, main
from linerate.model import lab_namespace
from linerate.topology.plan import ROLES

# The names a lab linerate builds gets (model.lab_namespace: lr-<id>-client|dut|server, the id 1-8
# lower-case letters/digits). Not preflight's short-lived lr-probe-<hex>: no lab.
LAB_NAMESPACE_RE = re.compile(rf"lr-[a-z0-9]{{1,8}}-({'|'.join(ROLES)})")
assert all(LAB_NAMESPACE_RE.fullmatch(lab_namespace("ab12", role)) for role in ROLES)


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
    (["rfc2544", "--frame-sizes", "64,12x"], "--frame-sizes"),
    (["rfc2544", "--family", "6", "--frame-sizes", "64"], "--frame-sizes"),
    (["rfc2544", "--pdr-loss", "0.9"], "--pdr-loss"),
    (["rfc2544", "--firewall", "rules:0"], "--firewall"),
])
def test_bad_input_one_line_exit_2_nothing_created(argv, option, tmp_path):
    before = set(netns_list())
    proc = subprocess.run([sys.executable, "-m", "linerate", *argv], capture_output=True, text=True,
                          env={**os.environ, "LINERATE_STATE_DIR": str(tmp_path / "labs")})
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and option in lines[0] and "Traceback" not in proc.stderr
    # Nothing created. The authoritative check: linerate registers a lab (or a probe namespace) in
    # LINERATE_STATE_DIR before it makes any namespace, so a lab this command built would have created
    # this fresh directory; unrelated processes never touch it.
    assert not (tmp_path / "labs").exists()
    # The backstop, for a namespace made without its record: no new namespace named like a lab. The
    # machine-wide list is shared (other tools, other linerate runs make and remove namespaces
    # meanwhile), and lab ids are random, so only new names of the lab scheme count; vanished ones and
    # other names are someone else's. (Another linerate run building a lab in this same second would
    # still trip it: no kernel record says which process made a namespace.)
    new = {name for name in set(netns_list()) - before if LAB_NAMESPACE_RE.fullmatch(name)}
    assert not new, f"new lab namespaces: {sorted(new)}"


def test_unknown_lab_is_a_clean_error(capsys):
    assert main(["trial", "--lab", "nosuch"]) == 2
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


@pytest.mark.parametrize("argv", [["report", "--format", "html", "-o", "{tmp}/missing/r.html"],
                                  ["report", "--format", "md", "-o", "{tmp}"],
                                  ["compare", "a", "b", "--format", "html", "-o", "{tmp}/missing/c.html"]])
def test_report_output_path_checked_before_any_work(argv, tmp_path):
    db = tmp_path / "none.db"  # never created: the output check comes first
    proc = subprocess.run([sys.executable, "-m", "linerate", *[a.format(tmp=tmp_path) for a in argv], "--db", str(db)],
                          capture_output=True, text=True)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "--output" in proc.stderr, proc.stderr
    assert not db.exists() and sorted(p.name for p in tmp_path.iterdir()) == []


def test_html_report_written_to_file(tmp_path):
    from linerate.model import Trial, TrialParams
    from linerate.store import Store

    store = Store(tmp_path / "r.db")
    exp = store.create_experiment("one", "run", {})
    cell = store.ensure_cells(exp, [{"family": 4, "streams": 1}])
    store.add_trial(next(iter(cell.values())), 1, 1, Trial("ok", TrialParams(), ("iperf3",), throughput_bps=9e8),
                    final=True)
    store.close()
    out = tmp_path / "one.html"
    proc = subprocess.run([sys.executable, "-m", "linerate", "report", "one", "--db", str(tmp_path / "r.db"),
                           "--format", "html", "-o", str(out)], capture_output=True, text=True)
    assert proc.returncode == 0 and proc.stdout == "" and f"written to {out}" in proc.stderr
    assert out.read_text().startswith("<!DOCTYPE html>") and "900" in out.read_text()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["one.html", "r.db"]  # no scratch file left


@pytest.mark.parametrize("argv", [["trial", "--lab", ""], ["run", "{exp}", "--testbed", ""]])
def test_an_empty_lab_or_testbed_is_refused_not_taken_as_none(argv, capsys, tmp_path):
    exp = tmp_path / "e.toml"
    exp.write_text('name = "e"\nrepetitions = 1\nduration_s = 1\n')
    assert main([a.format(exp=exp) for a in argv]) == 2  # an unset shell variable must not measure a fresh lab
    assert "is empty" in capsys.readouterr().err
