"""Issue #25: the VM DUT's telemetry costs no measurement — the agent reads files itself (LRF),
the host sees qemu's threads, placement says where the generator and the DUT run."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from linerate.errors import ExecError
from linerate.exec.agent import file_argv, split_files
from linerate.vm.observe import ThreadSample, parse_last_cpu, parse_schedstat, thread_role, threads_delta
from linerate.vm.placement import cpu_list, place

DATA = Path(__file__).resolve().parents[1] / "data" / "proc" / "qemu_threads.txt"


def captured_threads() -> list[tuple[int, str, str, str]]:
    """(tid, comm, schedstat, stat) of the captured qemu process."""
    out, tid, fields = [], None, {}
    for line in DATA.read_text().splitlines()[1:]:
        if line.startswith("== tid "):
            if tid is not None:
                out.append((tid, fields["comm"], fields["schedstat"], fields["stat"]))
            tid, fields = int(line.split()[2]), {}
        else:
            key, _, value = line.partition(": ")
            fields[key] = value
    out.append((tid, fields["comm"], fields["schedstat"], fields["stat"]))
    return out


def test_captured_qemu_threads_are_named_and_parsed():
    threads = captured_threads()
    pid = threads[0][0]
    roles = [thread_role(comm, tid, pid) for tid, comm, _, _ in threads]
    assert roles == ["io", None, "vcpu0", "vcpu1"], "the main thread is the I/O loop; other helpers are skipped"
    run_ns, wait_ns = parse_schedstat(threads[2][2])
    assert run_ns == 1217541738 and wait_ns == 44584831
    assert parse_last_cpu(threads[0][3]) == 0
    with pytest.raises(ValueError):
        parse_schedstat("garbage")


def test_a_name_with_spaces_and_parentheses_does_not_shift_the_cpu_field():
    stat = captured_threads()[2][3]
    assert parse_last_cpu(stat) == parse_last_cpu(stat.replace("(CPU 0/TCG)", "(CPU 0) (TCG)"))


def test_thread_delta_is_busy_and_wait_share_of_the_window():
    before = [ThreadSample("vcpu0", "CPU 0/TCG", 0, 0, 0), ThreadSample("io", "qemu", 0, 0, 1)]
    after = [ThreadSample("vcpu0", "CPU 0/TCG", 800_000_000, 400_000_000, 1), ThreadSample("io", "qemu", 500_000_000, 0, 1)]
    delta = threads_delta(before, after, 2.0)
    vcpu = next(t for t in delta["threads"] if t["thread"] == "vcpu0")
    assert vcpu["busy_pct"] == 40.0 and vcpu["wait_pct"] == 20.0 and vcpu["host_cpu"] == 1
    assert delta["vcpu_wait_pct_max"] == 20.0 and "vcpu_busy_pct_max" in delta
    assert threads_delta(before, after, 0) == {}


def test_placement_keeps_vm_and_generator_apart_only_with_enough_cpus():
    roomy = place(range(8), 2)
    assert roomy.disjoint and roomy.vcpu_cpus == ((5,), (6,)) and roomy.io_cpus == (7,)
    assert set(roomy.client_cpus + roomy.server_cpus) == {0, 1, 2, 3, 4}
    assert not set(roomy.client_cpus) & set(roomy.server_cpus)
    tight = place((0, 1), 2)
    assert not tight.disjoint and tight.vcpu_cpus == ((0, 1), (0, 1))
    assert tight.note == "generator and DUT share host CPU 0-1" and "5 wanted" in tight.detail
    assert place((0, 1, 2), 1).disjoint is False and place((0, 1, 2, 3), 1).disjoint is True
    assert cpu_list((0, 1, 2, 5)) == "0-2,5" and cpu_list((3,)) == "3"


def test_file_reads_are_recognised_and_split():
    assert file_argv(["cat", "/proc/stat"]) == "/proc/stat"
    assert file_argv(["cat", "-A", "/proc/stat"]) is None and file_argv(["cat", "relative"]) is None
    assert file_argv(["ip", "-j", "link"]) is None and file_argv(["cat", "/a\nb"]) is None
    answer = b"0 5\ncpu0\n2 0\n0 3\nx\xffy"
    stat, missing, binary = split_files(["/proc/stat", "/nope", "/bin"], answer, "vm")
    assert stat.returncode == 0 and stat.stdout == "cpu0\n"
    assert missing.returncode == 1 and "No such file or directory" in missing.stderr
    assert binary.stdout == "x\ufffdy", "lengths are bytes; undecodable bytes are replaced after cutting"
    with pytest.raises(ExecError):
        split_files(["/proc/stat"], b"0 99\nshort", "vm")


@pytest.mark.skipif(shutil.which("gcc") is None, reason="the guest agent is built with gcc (make install adds it)")
def test_the_guest_agent_reads_files_and_runs_scripts(tmp_path):
    """The agent binary itself, on a raw pty standing in for the virtio-serial port (scripts run by /bin/sh
    here; in the guest by /usr/sbin/dash)."""
    import os
    import pty
    import tty

    from linerate.vm.guest_build import SCRIPTS

    binary = tmp_path / "agent"
    subprocess.run(["gcc", "-O2", "-Wall", "-Werror", "-o", str(binary), str(SCRIPTS / "agent.c")], check=True)
    master, slave = pty.openpty()  # a character device, as the virtio-serial port is; raw: bytes as sent
    tty.setraw(slave)
    proc = subprocess.Popen([str(binary), os.ttyname(slave), "/bin/sh"], env={"LINERATE_AGENT_DIR": str(tmp_path)})
    try:
        (tmp_path / "a.txt").write_text("alpha\n")
        body = f"{tmp_path / 'a.txt'}\n/nonexistent\n".encode()
        os.write(master, b"LRF 7 %d 5\n" % len(body) + body)
        head, out, _ = _reply(master)
        assert head.split()[:3] == [b"LRR", b"7", b"0"]
        files = split_files([str(tmp_path / "a.txt"), "/nonexistent"], out, "test")
        assert files[0].stdout == "alpha\n" and files[1].returncode == 1
        script = b"echo out; echo err >&2; exit 3\n"
        os.write(master, b"LRQ 8 %d 5\n" % len(script) + script)
        head, out, err = _reply(master)
        assert head.split()[:3] == [b"LRR", b"8", b"3"] and out == b"out\n" and err == b"err\n"
        # a FIFO (or /dev/kmsg) is refused at once instead of wedging the agent; an unknown request's
        # body is skipped, never parsed as requests (this one would otherwise run `touch`)
        os.mkfifo(tmp_path / "fifo")
        body = f"{tmp_path / 'fifo'}\n".encode()
        os.write(master, b"LRF 9 %d 5\n" % len(body) + body)
        head, out, _ = _reply(master)
        assert split_files([str(tmp_path / "fifo")], out, "test")[0].returncode == 1
        hidden = f"LRQ 10 20 5\ntouch {tmp_path / 'ran'}\n".encode()
        os.write(master, b"XYZ 11 %d 5\n" % len(hidden) + hidden + b"LRQ 12 5 5\ntrue\n")
        head, _, _ = _reply(master)
        assert head.split()[:3] == [b"LRR", b"12", b"0"] and not (tmp_path / "ran").exists()
    finally:
        proc.kill()
        proc.wait()
        os.close(master)
        os.close(slave)


def _reply(fd: int) -> tuple[bytes, bytes, bytes]:
    import os
    import select

    data = b""

    def more() -> bytes:
        ready, _, _ = select.select([fd], [], [], 10)
        chunk = os.read(fd, 65536) if ready else b""
        assert chunk, "no answer from the agent"
        return chunk

    while b"\n" not in data:
        data += more()
    head, _, rest = data.partition(b"\n")
    _, _, _, out_size, err_size = head.split()
    while len(rest) < int(out_size) + int(err_size):
        rest += more()
    return head, rest[:int(out_size)], rest[int(out_size):]


def _vm_trial(busy: float, softirq: float, user: float, wait: float, window_reads: int = 2) -> dict:
    """A stored VM trial's telemetry, in the shape trial.py and vm/observe.py store it."""
    cpu = [{"cpu": 0, "busy_pct": busy, "softirq_pct": softirq, "user_pct": user, "system_pct": 0.0,
            "interrupt_pct": 0.0, "idle_pct": 100 - busy}, {"cpu": 1, "busy_pct": 2.0, "idle_pct": 98.0}]
    dut = {"shared_kernel": False, "window_reads": window_reads, **({"cpu": cpu} if window_reads == 2 else
                                                                      {"partial": "iperf3 ended before window read 2"})}
    host = {"threads": [], "vcpu_wait_pct_max": wait,
            "placement": {"disjoint": False, "note": "generator and DUT share host CPU 0-1: ..."}}
    return {"telemetry": {"dut": dut, "vm_host": host}, "dut_counters": {"lan0_rx_dropped": 0}}


def _verdicts(trials: list[dict], mbps: float, params: dict | None = None):
    from linerate.diagnose.facts import cell_facts
    from linerate.diagnose.rules import diagnose

    facts = cell_facts(params or {"streams": 4}, trials, mean_bps=mbps * 1e6, retransmits=0.0, ceiling_bps=941e6,
                       line_rate_source="emulated 1g link", flags=())
    return {v.code: v for v in diagnose(facts)}


def test_a_slow_cell_near_a_threshold_is_never_silent():
    """The issue's cell: 8% of line rate, busiest guest CPU at 89.1% softirq (just under 90%). With the
    other vCPU idle it is the one CPU that holds the cell back (single-core-bound, saying why under 90%
    counts); with the other vCPU busy too, no rule names it, and the fallback says what was seen."""
    alone = _verdicts([_vm_trial(89.1, 89.1, 0.0, 5.0)] * 3, 74.9)
    assert "single-core-bound" in alone and "under 90%, but alone" in alone["single-core-bound"].evidence, alone
    shared = _vm_trial(89.1, 89.1, 0.0, 5.0)
    shared["telemetry"]["dut"]["cpu"][1].update(busy_pct=35.0, idle_pct=65.0)
    shared["telemetry"]["dut"]["cpu"][0].update(softirq_pct=88.8, user_pct=0.3)  # a share that rounds to 0%
    verdicts = _verdicts([shared] * 3, 74.9)
    assert "unexplained" in verdicts, verdicts
    evidence = verdicts["unexplained"].evidence
    assert "busiest DUT CPU: CPU 0, 89.1% busy (89% softirq)" in evidence, evidence  # no "0% user" beside it
    assert "just under the 90% saturation threshold" in evidence
    assert "8.0% of line rate" in evidence and "vCPU threads waited for the host 5%" in evidence
    assert "measure next" in verdicts["unexplained"].advice


def test_host_contention_is_a_verdict_and_shared_cpus_a_note_even_at_line_rate():
    slow = _verdicts([_vm_trial(60.0, 60.0, 0.0, 37.6)] * 3, 300)
    assert "host-contended" in slow and "37.6%" not in slow["host-contended"].evidence
    assert "waiting for a host CPU 38%" in slow["host-contended"].evidence
    assert "unexplained" not in slow, "a named limit needs no fallback"
    fast = _verdicts([_vm_trial(40.0, 40.0, 0.0, 40.0)] * 3, 935)
    assert set(fast) == {"at-line-rate", "shared-host-cpus"}


def test_partial_telemetry_is_counted_per_cell():
    trials = [_vm_trial(95.0, 95.0, 0.0, 3.0), _vm_trial(0, 0, 0, 3.0, window_reads=1), _vm_trial(96.0, 96.0, 0.0, 3.0)]
    verdicts = _verdicts(trials, 330, {"streams": 1})
    assert "1 of 3 trial(s) lack the DUT's window reads" in verdicts["telemetry-partial"].evidence
    assert "single-core-bound" in verdicts


def test_the_persistent_ssh_shell_reader_stops_at_the_sentinel_and_is_bounded():
    import asyncio

    from linerate.exec.ssh import MAX_OUTPUT_BYTES, OutputTooLarge, _read_until

    class Stream:
        def __init__(self, chunks):
            self.chunks = list(chunks)

        async def read(self, size):
            return self.chunks.pop(0) if self.chunks else b""

    end = b"\n@@end@@\n"
    assert asyncio.run(_read_until(Stream([b"cpu0 1\n", b"cpu1 2", end + b"next"]), end)) == b"cpu0 1\ncpu1 2"
    with pytest.raises(OSError):
        asyncio.run(_read_until(Stream([b"half"]), end))
    with pytest.raises(OutputTooLarge):
        asyncio.run(_read_until(Stream([b"x" * 65536] * (MAX_OUTPUT_BYTES // 65536 + 2)), end))


def test_the_kvm_probe_cache_lives_in_our_own_state_directory(tmp_path, monkeypatch):
    """Issue #26 leftover: it was written to the state directory's parent (/tmp with LINERATE_STATE_DIR=/tmp/x)."""
    import os

    from linerate.vm import accel

    monkeypatch.setenv("LINERATE_STATE_DIR", str(tmp_path / "labs"))
    path = accel.cache_path()
    assert path.parent == tmp_path / "labs" and not path.name.endswith(".json")  # never read as a lab record
    accel.write_cache(path, '{"usable": false}')
    assert path.read_text() == '{"usable": false}' and oct(os.stat(path.parent).st_mode & 0o777) == "0o700"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["labs"], "nothing beside the state directory"


def test_output_errors_and_hand_restore_commands_are_one_line_and_quoted(tmp_path):
    """Review findings on issue #26's paths: /dev/full or a pseudo filesystem is a one-line error; a
    hand-restore command never tells the user the wrong state and quotes every value."""
    import os

    from linerate.errors import ConfigError
    from linerate.report.output import write
    from linerate.testbed.journal import manual_command

    if os.path.exists("/dev/full"):
        with pytest.raises(ConfigError, match="No space left"):
            write("/dev/full", "x" * 10, "-o")
    with pytest.raises(ConfigError):
        write("/proc/version", "x", "-o")
    assert "or -tso" in manual_command("freebsd", "offload", "igb0:tso", None)
    assert manual_command("linux", "sysctl", "a;b", None).startswith("sysctl -w 'a;b=VALUE'")
    assert manual_command("freebsd", "offload", "igb0:tso", "off") == "ifconfig igb0 -tso"
    assert manual_command(None, "process", "/run/x y.pid", None) == "kill \"$(cat '/run/x y.pid')\""
    assert manual_command("linux", "nft-table", "linerate_count", "") == "nft delete table inet linerate_count"
    assert manual_command("linux", "frob", "whatever", "").startswith("nothing to run: linerate journals no change")


def test_a_testbed_journal_held_by_a_live_run_refuses_a_second_holder(tmp_path):
    """Review finding on issue #26: `testbed restore` or a second run must not put back a live run's knobs."""
    from linerate.errors import ConfigError
    from linerate.store.journal import JournalFile

    first = JournalFile("0123456789abcdef", tmp_path / "journal")
    first.hold("testbed lab")
    second = JournalFile("0123456789abcdef", tmp_path / "journal")
    with pytest.raises(ConfigError, match=r"in use by another linerate \(pid \d+\)"):
        second.hold("testbed lab")
    first.close()
    second.hold("testbed lab")  # free again once the run ends
    second.close()
