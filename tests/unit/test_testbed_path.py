"""rfc2544 on an SSH testbed without the hosts: the client's route and gateway MAC from real
iproute2 captures, the server's counting table journaled before it exists and closed only once it
is gone, restore removing a table a killed run left, and the refusals (on-link server, non-Linux
ends, no trafgen, namespace-lab options with --testbed)."""

import json
from types import SimpleNamespace

import pytest

from linerate.cli import main
from linerate.errors import ConfigError, LinerateError
from linerate.exec.fake import FakeExecutor
from linerate.search.frame_path import COUNT_TABLE
from linerate.store import Store
from linerate.testbed.inventory import parse_inventory
from linerate.testbed.journal import Journal
from linerate.testbed.ssh import SshView
from linerate.testbed.ssh_restore import restore_journal
from linerate.testbed.ssh_path import JOURNAL_KIND, TestbedPath, parse_neighbour, parse_route
from tests.conftest import DATA, capture

INVENTORY = parse_inventory('[client]\nssh = "root@192.0.2.5"\ntest_address = "198.18.1.10"\n'
                            '[server]\nssh = "root@192.0.2.6"\ntest_address = "198.18.2.10"\n')
KEY = "0123456789abcdef"
LAN0 = [entry for entry in json.loads((DATA / "ip" / "dut_link_stats.json").read_text()) if entry["ifname"] == "lan0"]


def test_route_and_neighbour_from_real_captures():
    four, six = parse_route(capture("ip/route4.txt")), parse_route(capture("ip/route6.txt"))
    assert (four.dev, four.gateway, four.prefsrc) == ("eth0", "198.18.1.1", "198.18.1.10")
    assert (six.gateway, six.prefsrc) == ("2001:2:0:1::1", "2001:2:0:1::10")
    assert parse_route(capture("ip/route_onlink.txt")).gateway is None
    assert parse_neighbour(capture("ip/neigh4.txt")) == "ea:83:44:7c:30:86" == parse_neighbour(capture("ip/neigh6.txt"))
    assert parse_neighbour(capture("ip/neigh_empty.txt")) is None and parse_neighbour(capture("ip/neigh_failed.txt")) is None


def client(resolved_after_ping=True, route="ip/route4.txt", trafgen_rc=1):
    state = {"pinged": False}

    def neigh(argv):
        known = state["pinged"] and resolved_after_ping
        return 0, capture("ip/neigh4.txt" if known else "ip/neigh_empty.txt"), ""

    def ping(argv):
        state["pinged"] = True
        return 0, "", ""

    fake = FakeExecutor("client")
    # trafgen 0.6.8 prints its version and exits 1; a missing binary: the shell's 127
    fake.respond(["trafgen", "--version"], "trafgen 0.6.8 (Flutternozzle), Git id: (none)\n" if trafgen_rc == 1 else "",
                 returncode=trafgen_rc, stderr="bash: line 1: trafgen: command not found\n" if trafgen_rc == 127 else "")
    fake.respond(["ip", "-j", "-4", "route", "get"], capture(route))
    fake.respond_with(["ip", "-j", "neigh", "show"], neigh)
    fake.respond_with(["ping"], ping)
    fake.respond(["ip", "-j", "link", "show", "dev", "eth0"], json.dumps(LAN0))
    return fake


def make_testbed(tmp_path, client_host, server_os="Linux", server_rc=0):
    server = FakeExecutor("server")
    server.respond(["nft"], returncode=server_rc, stderr="" if server_rc == 0 else "Error: No such file or directory")
    activated = []
    bed = SimpleNamespace(executors={"client": client_host, "server": server}, inventory=INVENTORY, port=5201,
                          environment={"client": {"os": "Linux"}, "server": {"os": server_os}},
                          line_rate={"bps": 1e9, "source": "inventory link = 1g"}, store=Store(tmp_path / "s.db"),
                          journal=Journal(KEY, tmp_path / "journal"), key=KEY, driver=None,
                          activate=activated.append)
    return SshView(bed, {"dut_sysctls": "default"}), activated


def test_path_finds_gateway_mac_and_journals_the_counting_table(tmp_path):
    view, activated = make_testbed(tmp_path, client())
    path = TestbedPath(view, 4)
    assert (path.device, path.mtu, path.link_bps, path.shared_kernel) == ("eth0", 1500, 1e9, False)
    assert path.description == "testbed testbed, line rate 1 Gbit/s (inventory link = 1g)"
    assert (path.flow.dst_mac, path.flow.src_mac) == ("ea:83:44:7c:30:86", "fe:41:72:6e:6a:98")
    assert (path.flow.src_ip, path.flow.dst_ip, path.flow.dst_port) == ("198.18.1.10", "198.18.2.10", 5201)
    assert ("ping", "-4", "-c", "1", "-W", "1", "198.18.1.1") in view.testbed.executors["client"].calls
    journal, server = view.testbed.journal, view.testbed.executors["server"]
    with path:
        assert activated == [{"dut_sysctls": "default"}]  # the cell's knobs before its frames
        [entry] = journal.open_entries()
        assert (entry["role"], entry["kind"], entry["name"]) == ("server", JOURNAL_KIND, COUNT_TABLE)
        assert server.calls[0] == ("nft", "create", "table", "inet", COUNT_TABLE)
    assert server.calls[-1] == ("nft", "delete", "table", "inet", COUNT_TABLE) and journal.open_entries() == []


def test_without_trafgen_iperf3_sends_and_the_server_lets_its_datagrams_through(tmp_path):
    host = client(trafgen_rc=127).respond(["iperf3", "--version"], "iperf 3.12 (cJSON 1.7.15)\n")
    view, _ = make_testbed(tmp_path, host)
    path = TestbedPath(view, 4)
    assert path.generator == "iperf3 3.12 (UDP)"
    with pytest.raises(ConfigError, match="IMIX mixes frame sizes"):
        path.check("imix")
    with path:
        pass
    server = view.testbed.executors["server"]
    [ruleset] = [text for call, text in zip(server.calls, server.inputs) if call[:2] == ("nft", "-f")]
    assert "ip saddr 198.18.1.10 udp dport 5201 udp length >= 24 counter accept" in ruleset


def test_a_table_that_could_not_be_removed_stays_journaled_and_restore_removes_it(tmp_path):
    view, _ = make_testbed(tmp_path, client())
    path = TestbedPath(view, 4)
    server, journal = view.testbed.executors["server"], view.testbed.journal
    with path:
        server.respond(["nft", "delete"], returncode=1, stderr="Error: Could not process rule")
    assert len(journal.open_entries()) == 1  # kept for the next run or `testbed restore`
    inventory = SimpleNamespace(identity_key=lambda: KEY)
    server.respond(["nft", "delete"])  # the host answers again: the next run (or testbed restore) cleans up
    server.respond(["nft", "list", "table"], returncode=1, stderr="Error: No such file or directory")
    done = restore_journal(inventory, journal, {"server": server}, None)
    assert done == [f"server: nftables table inet {COUNT_TABLE} removed"] and journal.open_entries() == []


def test_a_restore_that_fails_blocks_nothing_stays_open_and_is_tried_again(tmp_path):
    journal = Journal(KEY, tmp_path / "journal")
    first = journal.add("server", JOURNAL_KIND, COUNT_TABLE, "", None)
    journal.add("server", "process", "/tmp/linerate-k-0123456789abcdef/iperf3.pid", "", None)
    server = FakeExecutor("server")
    server.respond(["nft", "delete"], returncode=1, stderr="Error: Could not process rule")
    server.respond(["nft", "list", "table"], "table inet linerate_rfc2544 {\n}\n")  # still there
    server.respond(["cat"], returncode=1)
    inventory = SimpleNamespace(identity_key=lambda: KEY)
    problems: list[str] = []
    done = restore_journal(inventory, journal, {"server": server}, None, problems=problems)
    assert done == ["server: iperf3 server not running (no pid file)"]  # the other entry was not blocked
    assert len(problems) == 1 and f"nft delete table inet {COUNT_TABLE}" in problems[0]
    assert f"--resolve {first}" in problems[0] and "tries it again" in problems[0]
    assert [e["id"] for e in journal.open_entries()] == [first]  # still open: the next restore retries it
    again: list[str] = []
    assert restore_journal(inventory, journal, {"server": server}, None, problems=again) == [] and len(again) == 1
    server.respond(["nft", "list", "table"], returncode=1)  # the host now lets it go
    assert restore_journal(inventory, journal, {"server": server}, None) == [
        f"server: nftables table inet {COUNT_TABLE} already gone"]
    assert journal.open_entries() == []


def test_a_failed_restore_fixed_by_hand_is_resolved(tmp_path):
    journal = Journal(KEY, tmp_path / "journal")
    first = journal.add("server", JOURNAL_KIND, COUNT_TABLE, "", None)
    journal.failed(first, "nft refused", "nft delete table inet x")
    assert journal.resolve(first) == 1 and journal.open_entries() == []


def test_an_existing_table_is_not_merged_into(tmp_path):
    view, _ = make_testbed(tmp_path, client(), server_rc=1)
    with pytest.raises(LinerateError, match="another linerate rfc2544 run may be counting there"):
        with TestbedPath(view, 4):
            pass
    assert view.testbed.store.journal_open("bed1") == []  # not ours: nothing to undo


def test_refusals_name_what_to_fix(tmp_path):
    with pytest.raises(ConfigError, match="server.test_address: the client reaches 198.18.2.10 directly"):
        TestbedPath(make_testbed(tmp_path, client(route="ip/route_onlink.txt"))[0], 4)
    with pytest.raises(ConfigError, match="both must run Linux; server runs FreeBSD"):
        TestbedPath(make_testbed(tmp_path, client(), server_os="FreeBSD")[0], 4)
    with pytest.raises(LinerateError, match="trafgen is not installed on the client"):
        TestbedPath(make_testbed(tmp_path, client(trafgen_rc=127))[0], 4, "trafgen")
    with pytest.raises(LinerateError, match="neither trafgen nor iperf3 runs on the client"):
        TestbedPath(make_testbed(tmp_path, client(trafgen_rc=127))[0], 4)
    with pytest.raises(LinerateError, match="no MAC address for its gateway 198.18.1.1"):
        TestbedPath(make_testbed(tmp_path, client(resolved_after_ping=False))[0], 4)
    with pytest.raises(ConfigError, match="server.test_address6: the inventory's server has no IPv6"):
        TestbedPath(make_testbed(tmp_path, client())[0], 6)


def test_cli_refuses_lab_options_with_a_testbed(tmp_path, capsys):
    inventory = tmp_path / "bed.toml"
    inventory.write_text('[client]\nssh = "root@192.0.2.5"\n[server]\nssh = "root@192.0.2.6"\ntest_address = "198.18.2.10"\n')
    db = tmp_path / "r.db"
    assert main(["rfc2544", "--testbed", str(inventory), "--link", "1g", "--db", str(db)]) == 2
    assert "--link" in capsys.readouterr().err and not db.exists()
