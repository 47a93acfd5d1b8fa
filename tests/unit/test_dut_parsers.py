"""DUT parsers and drivers on real captured outputs (tests/data/bsd, tests/data/linux: the first
line of each file names its source and is not part of the output)."""

from pathlib import Path

import pytest

from linerate.dut import parsers
from linerate.dut.base import Snapshot, rx_packets, telemetry_delta
from linerate.dut.drivers import driver_for
from linerate.errors import ConfigError, ParseError
from linerate.exec import FakeExecutor
from tests.conftest import capture

DATA = Path(__file__).parent.parent / "data"


def test_every_capture_names_its_source():
    for path in list((DATA / "bsd").glob("*.txt")) + list((DATA / "linux").glob("*.txt")):
        assert path.read_text().startswith("# source: "), path


def test_pfctl_info_freebsd_with_interface_stats_block():
    doc = parsers.parse_pfctl_info(capture("bsd/freebsd_pfctl_si.txt"))
    assert doc["pf_states"] == 649
    assert doc["pf_state_searches"] == 18421725761 and doc["pf_state_removals"] == 156761859
    assert doc["pf_state_mismatch"] == 24393 and doc["pf_ip_option"] == 152301
    assert "pf_bytes_in" not in doc  # the Interface Stats block is not the state table


def test_pfctl_info_openbsd():
    doc = parsers.parse_pfctl_info(capture("bsd/openbsd_pfctl_si.txt"))
    assert doc["pf_states"] == 127 and doc["pf_match"] == 2847561


def test_pfctl_info_refuses_other_text():
    with pytest.raises(ParseError, match="current entries"):
        parsers.parse_pfctl_info("pfctl: /dev/pf: Permission denied\n")


def test_vmstat_i_names_nic_queues():
    irq = parsers.parse_vmstat_i(capture("bsd/freebsd_vmstat_i.txt"))
    assert irq["igb0:rxq0"] == 34 and irq["igb0:rxq3"] == 4 and irq["cpu7:timer"] == 4094
    assert irq["nvme0:io0"] == 861
    with pytest.raises(ParseError):
        parsers.parse_vmstat_i("no header here\n")


def test_netstat_i_reads_link_rows_by_header():
    counters = parsers.parse_netstat_i(capture("bsd/freebsd_netstat_ndi.txt"))
    assert counters["igb1_rx_packets"] == 28762392 and counters["igb2_tx_packets"] == 28762392
    assert counters["igb0_rx_errors"] == 0 and counters["igb2_tx_dropped"] == 0
    assert counters["enc0_rx_packets"] == 0  # 'enc0*' (down) is named without its star
    assert rx_packets(counters) == 7293 + 28762392 + 2 + 0  # lo0 left out


def test_netstat_i_with_byte_columns_still_parses_by_name():
    text = capture("bsd/freebsd_netstat_ndi.txt").splitlines()
    header = text[0].replace("Idrop", "Idrop     Ibytes").replace("Oerrs", "Oerrs     Obytes")
    row = text[5].split()  # igb1 <Link#2>
    row = row[:7] + ["900"] + row[7:9] + ["800"] + row[9:]
    counters = parsers.parse_netstat_i("\n".join([header, "  ".join(row)]))
    assert counters["igb1_rx_bytes"] == 900 and counters["igb1_tx_bytes"] == 800
    assert counters["igb1_rx_packets"] == 28762392


def test_netstat_q_workstream_drops():
    doc = parsers.parse_netstat_q(capture("bsd/freebsd_netstat_Q.txt"))
    assert doc["netisr_ip_qdrops"] == 181210251 and doc["netisr_ip_handled"] == 8685554
    assert doc["netisr_ether_dispatched"] == 47512660 and doc["netisr_ether_qdrops"] == 0


def test_cp_times_per_cpu():
    cpus = parsers.parse_freebsd_cp_times(capture("bsd/freebsd_cp_times.txt"))
    assert len(cpus) == 4
    assert cpus[0] == {"user": 37924, "system": 2593, "interrupt": 961, "softirq": 0, "idle": 9270910}
    with pytest.raises(ParseError, match="multiple of 5"):
        parsers.parse_freebsd_cp_times("kern.cp_times: 1 2 3")


def test_openbsd_cp_time_six_states():
    (cpu,) = parsers.parse_openbsd_cp_time(capture("bsd/openbsd_cp_time.txt"))
    assert cpu == {"user": 765981 + 576, "system": 193424 + 42002, "interrupt": 3534, "softirq": 0,
                   "idle": 3819889}


def test_ifconfig_capabilities():
    caps = parsers.parse_ifconfig_options(capture("bsd/freebsd_ifconfig_em0.txt"))
    assert {"RXCSUM", "TXCSUM", "LRO", "VLAN_HWTSO"} <= caps and "TSO4" not in caps
    assert "PERFORMNUD" not in caps  # nd6 options are not interface capabilities


def test_linux_proc_stat_and_interrupts():
    cpus = parsers.parse_proc_stat(capture("linux/proc_stat.txt"))
    assert len(cpus) == 2 and cpus[0]["interrupt"] == 0 and cpus[0]["softirq"] == 61931
    irq = parsers.parse_proc_interrupts(capture("linux/proc_interrupts.txt"))
    assert irq["virtio1-req.0"] == 106965


def _fake_freebsd(cp_times: str, netstat: str, pf_rc: int = 0) -> FakeExecutor:
    fake = FakeExecutor("dut")
    fake.respond(["netstat", "-i", "-n", "-b", "-d"], netstat)
    fake.respond(["sysctl", "-n", "kern.cp_times"], cp_times)
    fake.respond(["vmstat", "-i"], capture("bsd/freebsd_vmstat_i.txt"))
    fake.respond(["pfctl", "-s", "info"], capture("bsd/freebsd_pfctl_si.txt"), returncode=pf_rc)
    fake.respond(["netstat", "-Q"], capture("bsd/freebsd_netstat_Q.txt"))
    return fake


def test_freebsd_driver_snapshot_and_delta():
    driver = driver_for("freebsd")
    netstat = capture("bsd/freebsd_netstat_ndi.txt")
    before = driver.snapshot(_fake_freebsd("0 0 0 0 100 0 0 0 0 100", netstat))
    after = driver.snapshot(_fake_freebsd("0 0 50 50 100 0 0 0 0 200", netstat.replace("28762392", "28763392")))
    tele = telemetry_delta(before, after)
    assert tele["cpu"][0]["busy_pct"] == 100.0 and tele["cpu"][0]["interrupt_pct"] == 50.0
    assert tele["cpu"][1]["busy_pct"] == 0.0
    assert tele["counters"]["igb1_rx_packets"] == 1000 and tele["counters"]["pf_states"] == 0
    assert "unavailable" not in tele


def test_freebsd_driver_says_what_it_could_not_read():
    shot = driver_for("freebsd").snapshot(_fake_freebsd("0 0 0 0 1", capture("bsd/freebsd_netstat_ndi.txt"),
                                                        pf_rc=1))
    assert any("pf state count" in p for p in shot.problems) and "pf_states" not in shot.counters


def test_freebsd_offload_flags_are_ifconfig_capabilities():
    fake = FakeExecutor("dut").respond(["ifconfig", "em0"], capture("bsd/freebsd_ifconfig_em0.txt"))
    driver = driver_for("freebsd")
    assert driver.read_offloads(fake, "em0") == {"rx": "on", "tx": "on", "tso": "off", "lro": "on"}
    fake.respond(["ifconfig", "em0", "-rxcsum"], "")
    driver.set_offload(fake, "em0", "rx", "off")
    assert fake.calls[-1] == ("ifconfig", "em0", "-rxcsum", "-rxcsum6")
    with pytest.raises(ConfigError, match="gro"):
        driver.set_offload(fake, "em0", "gro", "off")


def test_freebsd_loader_tunable_is_never_set_live():
    driver = driver_for("freebsd")
    assert driver.boot_time_only(FakeExecutor(), "hw.igb.rx_process_limit")
    fake = FakeExecutor().respond(["sysctl", "hw.foo=1"], "", returncode=1,
                                  stderr="sysctl: oid 'hw.foo' is a read only tunable\n")
    with pytest.raises(ConfigError, match="reboot"):
        driver.set_sysctl(fake, "hw.foo", "1")


def test_openbsd_refuses_offload_knobs():
    with pytest.raises(ConfigError, match="OpenBSD"):
        driver_for("openbsd").set_offload(FakeExecutor(), "em0", "tso", "off")


def test_telemetry_delta_keeps_problems():
    tele = telemetry_delta(Snapshot(problems=["x"]), Snapshot())
    assert tele["unavailable"] == ["x"]


class LocalShellSession:
    """Stands in for an SSH session: the command string runs in a local sh, as sshd would run it."""

    target = "local"

    def run_command(self, command, *, stdin, timeout_s):
        import subprocess

        proc = subprocess.run(["sh", "-c", command], input=stdin, capture_output=True, text=True, timeout=10)
        return proc.returncode, proc.stdout, proc.stderr

    def run_in_shell(self, script, *, timeout_s):
        """The persistent remote shell: the script's stdout (the sentinel is the session's business)."""
        import subprocess

        return subprocess.run(["sh", "-c", script], capture_output=True, timeout=10).stdout


def test_run_many_splits_outputs_and_exit_codes_of_quoted_commands():
    from linerate.exec.ssh import SshExecutor

    host = SshExecutor(LocalShellSession())
    echo, failed, odd = host.run_many([["echo", "hi there"], ["sh", "-c", "echo oops >&2; exit 3"],
                                       ["printf", "%s", "a; rm -rf /tmp/x $(id)"]])
    assert echo.stdout == "hi there\n" and echo.returncode == 0
    assert failed.returncode == 3 and "not kept" in failed.stderr  # a batched read keeps statuses, not stderr
    assert odd.stdout == "a; rm -rf /tmp/x $(id)"  # an argument stays one argument, never shell code


def test_inventory_refuses_bad_values_naming_the_key(tmp_path):
    from linerate.testbed.inventory import parse_inventory

    good = ('[client]\nssh = "root@192.0.2.5"\ntest_address = "198.18.1.10"\n'
            '[server]\nssh = "bench@[2001:db8::6]:2222"\ntest_address6 = "2001:2:0:2::10"\n'
            '[dut]\nssh = "admin@fw.example"\nos = "opnsense"\ninterfaces = ["igb0"]\n')
    inventory = parse_inventory(good, "inv.toml")
    assert inventory.servers()["server"].target().port == 2222 and inventory.address(6) == "2001:2:0:2::10"
    assert inventory.address(4) is None and inventory.identity_key() == parse_inventory(good).identity_key()
    for bad, key in ((good.replace("root@192.0.2.5", "root@192.0.2.5;reboot"), "client.ssh"),
                     (good.replace('"198.18.1.10"', '"224.0.0.1"'), "client.test_address"),
                     (good.replace('"igb0"', '"igb0 up"'), "dut.interfaces"),
                     (good.replace('os = "opnsense"', 'os = "windows"'), "dut.os"),
                     (good + "[extra]\n", "extra")):
        with pytest.raises(ConfigError, match=key.replace(".", r"\.")):
            parse_inventory(bad, "inv.toml")


def test_line_rate_comes_from_the_inventory_or_the_dut_nic_speed_never_a_guess():
    from linerate.dut.bsd import FreeBsdDriver
    from linerate.testbed.inventory import parse_inventory
    from linerate.testbed.ssh import resolve_line_rate

    base = ('[client]\nssh = "root@192.0.2.5"\ntest_address = "198.18.1.10"\n'
            '[server]\nssh = "root@192.0.2.6"\ntest_address = "198.18.2.10"\n'
            '[dut]\nssh = "admin@fw.example"\nos = "freebsd"\ninterfaces = ["em0"]\n')
    assert resolve_line_rate(parse_inventory('link = "2.5g"\n' + base), None, None)["bps"] == 2.5e9
    with pytest.raises(ConfigError, match="link"):
        parse_inventory('link = "fast"\n' + base)
    dut = FakeExecutor("dut").respond(["ifconfig", "em0"], capture("bsd/freebsd_ifconfig_em0.txt"))
    rate = resolve_line_rate(parse_inventory(base), dut, FreeBsdDriver())
    assert rate["bps"] == 1e9 and "em0" in rate["source"]
    silent = FakeExecutor("dut").respond(["ifconfig", "em0"], "em0: flags=8843<UP> metric 0 mtu 1500\n")
    assert resolve_line_rate(parse_inventory(base), silent, FreeBsdDriver()) is None
    # a VM's vtnet says 10Gbase-T whatever its host gives it (vtnet(4)'s constant): no line rate from it
    vtnet = capture("bsd/freebsd_ifconfig_vtnet0_opnsense_pr8007.txt")
    assert parsers.parse_ifconfig_media(vtnet) == {"vtnet0": 10000}  # what the line says ...
    vm = FakeExecutor("dut").respond(["ifconfig", "vtnet0"], vtnet)
    assert resolve_line_rate(parse_inventory(base.replace('"em0"', '"vtnet0"')), vm, FreeBsdDriver()) is None  # ... is no rate
    assert parsers.fixed_media_driver("epair3a") and not parsers.fixed_media_driver("vtnetx")


# --- outputs as users paste them: no header row, filtered, cut, twice -------------------------------------

def corpus(name: str) -> str:
    return capture(f"diagnose/corpus/{name}")


def test_proc_interrupts_without_its_cpu_header_counts_cpus_from_the_columns():
    """`grep eth /proc/interrupts` drops the CPU0 ... row; the count columns still tell the CPUs."""
    [(ncpu, header, rows)] = parsers.parse_interrupt_displays(corpus("openwrt_nic_irqs_all_on_cpu0_headerless.txt"))
    per_cpu = parsers.interrupts_per_cpu(rows)
    assert ncpu == 8 and header is False and per_cpu["eth2-0"] == [16876872] + [0] * 7
    assert per_cpu["eth0"][0] == 27389481  # 'SiFive PLIC 131 Edge      eth0': a chip name with a space
    assert parsers.parse_proc_interrupts(corpus("debian_igb_all_on_cpu0_grep.txt")) == {
        "eth0": 1, "eth0-TxRx-0": 292512958}
    with pytest.raises(ParseError):
        parsers.parse_interrupt_displays("nothing like interrupts\n")


def test_proc_interrupts_with_a_header_still_parses_as_before():
    counts = parsers.parse_proc_interrupts(capture("linux/proc_interrupts.txt"))
    assert counts and all(isinstance(v, int) for v in counts.values())
    ncpu, header, _ = parsers.parse_interrupt_displays(corpus("openwrt_rtl8111_driver_regression.txt"))[0]
    assert (ncpu, header) == (4, True)


def test_the_same_irqs_pasted_twice_are_two_displays():
    displays = parsers.parse_interrupt_displays(corpus("openwrt_mwlwifi_grep_twice.txt"))
    assert [parsers.interrupts_per_cpu(rows)["mwlwifi"] for _, _, rows in displays] == [
        [1282535 + 124531322, 0], [1284531 + 124533305, 0]]


def test_freebsd_hw_intrs_names_the_cpu_of_each_queue():
    bindings = parsers.parse_freebsd_intr_bindings(corpus("freebsd_ixl_rx_one_queue_hw_intrs.txt"))
    assert bindings["ixl1:rxq3:85"] == (3, 817) and bindings["ixl1:aq:77"] == (0, 155) and len(bindings) == 9


def test_vmstat_i_filtered_by_grep_has_no_header_but_is_read():
    text = "\n".join(corpus("freebsd_igb_one_queue_shell_session.txt").splitlines()[1:5])
    assert parsers.parse_vmstat_i(text) == {"igb2:que 0": 8, "igb2:link": 2, "igb3:que 0": 48517905, "igb3:link": 2}
    with pytest.raises(ParseError):
        parsers.parse_vmstat_i("igb3 is busy\n")


def test_softnet_rows_per_cpu_use_the_cpu_column_when_there_is_one():
    rows = parsers.parse_softnet_rows(capture("linux/softnet_stat.txt"))
    assert [r["cpu"] for r in rows] == [0, 1] and rows[1]["time_squeeze"] == 3
    old = parsers.parse_softnet_rows("\n".join(corpus("esxi_vmxnet3_rx_on_cpu0.txt").splitlines()[2:]))
    assert len(old) == 9 and old[0] == {"cpu": 0, "processed": 0x4c97f841, "dropped": 0, "time_squeeze": 0x3124}


def test_top_cpu_line_cut_before_its_idle_figure_is_read_from_what_is_there():
    """A terminal narrower than the line cuts 'idle' off; the states shown still add up to busy."""
    screen = corpus("freebsd_router_all_cpus_interrupt.txt")
    cut = "\n".join(line.rsplit(",", 1)[0] if line.startswith("CPU 7") else line for line in screen.splitlines())
    assert "idle" not in [line for line in cut.splitlines() if line.startswith("CPU 7")][0]
    cpus, _ = parsers.parse_top(cut)
    assert cpus[7]["busy_pct"] == 88.6 and cpus[0]["busy_pct"] == 100.0


ETHTOOL = DATA / "diagnose" / "ethtool"


@pytest.mark.parametrize("name,expected", [
    ("ena_queue_rx_cnt.txt", {("rx", 5): 8291144458, ("rx", 7): 1832}),  # ena queue_N_rx_cnt
    ("i40e_rx_dot_packets.txt", {("rx", 0): 57112, ("rx", 1): 31256}),  # i40e rx-N.packets
    ("mlx5_rxN_packets.txt", {("rx", 1): 26170804, ("rx", 3): 13219784}),  # mlx5 rxN_packets
])
def test_ethtool_per_queue_packet_counters_of_each_driver_format(name, expected):
    text = (ETHTOOL / name).read_text()
    assert text.startswith("# source: ")
    queues = parsers.parse_ethtool_queue_packets(text)
    assert all(queues[key] == value for key, value in expected.items())
    assert all(direction == "rx" for direction, _ in queues)  # bytes lines are not packet counts


def test_ethtool_counters_that_are_not_queue_packets_are_left_out():
    # igb's other per-queue counters (pcengines/apu2-documentation#190) and totals are not queue packets
    for name in ("rx_queue_0_bytes", "rx_queue_0_drops", "rx_queue_0_csum_err", "rx_packets", "rx_queue_0_xdp_packets",
                 "rx0_bytes", "rx-0.bytes", "queue_0_rx_bytes"):
        assert parsers.ethtool_queue_counter(name) is None, name
    assert parsers.ethtool_queue_counter("rx_queue_1_packets") == ("rx", 1)
    with pytest.raises(ParseError):
        parsers.parse_ethtool_queue_packets("NIC statistics:\n     rx_packets: 5\n     tx_packets: 7\n")


def test_one_probe_that_breaks_the_batch_loses_only_its_own_figures():
    """A probe printing megabytes (or killing the shell) breaks the one-round-trip answer: the probes
    run again one by one and only the culprit is missing, named with why."""
    from linerate.dut.base import run_probes
    from linerate.errors import ExecBroken

    class Host(FakeExecutor):
        def run_many(self, argvs, *, timeout_s=None):
            if ["yes"] in [list(a) for a in argvs]:
                raise ExecBroken(["batch"], self.host, None, "printed more than 4,194,304 bytes")
            return super().run_many(argvs, timeout_s=timeout_s)

    host = Host("dut").respond(["cat", "/proc/loadavg"], "0.1 0.2 0.3 1/100 42\n")
    first, culprit, last = run_probes(host, [["cat", "/proc/loadavg"], ["yes"], ["cat", "/proc/loadavg"]], 5)
    assert first.returncode == 0 and last.stdout.startswith("0.1")
    assert culprit.returncode != 0 and "4,194,304 bytes" in culprit.stderr


def test_a_probe_slow_enough_to_time_out_the_batch_loses_only_its_own_figures():
    """A probe that floods slowly reaches the batch's deadline: the probes run again one by one and
    only the slow one is missing; a host where two probes in a row get no answer fails the read."""
    from linerate.dut.base import run_probes
    from linerate.errors import ExecError

    class Host(FakeExecutor):
        dead = False

        def run_many(self, argvs, *, timeout_s=None):
            if self.dead or ["yes"] in [list(a) for a in argvs]:
                raise ExecError(["batch"], self.host, None, f"no answer within {timeout_s:.0f} s")
            return super().run_many(argvs, timeout_s=timeout_s)

    host = Host("dut").respond(["cat", "/proc/loadavg"], "0.1 0.2 0.3 1/100 42\n")
    first, culprit, last = run_probes(host, [["cat", "/proc/loadavg"], ["yes"], ["cat", "/proc/loadavg"]], 5)
    assert first.returncode == 0 and last.stdout.startswith("0.1")
    assert culprit.returncode != 0 and "no answer within 5 s" in culprit.stderr
    host.dead = True
    with pytest.raises(ExecError, match="no answer"):
        run_probes(host, [["cat", "/proc/loadavg"], ["yes"], ["cat", "/proc/loadavg"]], 5)
