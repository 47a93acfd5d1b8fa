"""State-table telemetry (dut/state_parsers.py) and verdicts (diagnose/state_rules.py) on real
captured outputs in tests/data/state: the first line of each file names its source, and
cases.toml labels each case with the verdict its source concluded."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from linerate.diagnose.rules import Verdict
from linerate.diagnose.state_rules import MIN_SINCE_BOOT, state_verdicts
from linerate.dut import parsers, state_parsers as sp
from linerate.dut.state_table import firewall, linger_seconds, littles_law_bound, state_deltas
from linerate.errors import ParseError
from tests.conftest import capture

STATE = Path(__file__).parent.parent / "data" / "state"
CASES = tomllib.loads((STATE / "cases.toml").read_text())["case"]


def parsed(name: str, parser: str) -> dict[str, int]:
    table = sp.TIMEOUT_PARSERS if parser in sp.TIMEOUT_PARSERS else sp.PARSERS
    return table[parser](capture(f"state/{name}"))


def reading(case: dict) -> tuple[dict[str, int], dict[str, int] | None]:
    """A case's files merged into one snapshot (and its timeouts, if any were read)."""
    snapshot: dict[str, int] = {}
    timeouts: dict[str, int] = {}
    for entry in case["files"]:
        for parser in entry["parse"]:
            (timeouts if parser in sp.TIMEOUT_PARSERS else snapshot).update(parsed(entry["name"], parser))
    return snapshot, timeouts or None


def codes(verdicts: list[Verdict]) -> list[str]:
    return [v.code for v in verdicts]


# --- the corpus itself ------------------------------------------------------------------------------

def test_every_capture_names_its_source_and_is_used():
    used = {entry["name"] for case in CASES for entry in case["files"]}
    on_disk = {p.name for p in STATE.glob("*.txt")}
    assert used == on_disk, (used ^ on_disk)
    for name in on_disk:
        first = (STATE / name).read_text().splitlines()[0]
        assert first.startswith("# source: ") and ("https://" in first or "file id" in first), name
        assert " — " in first, f"{name}: the source line must say what the source concluded"


def test_cases_are_labelled_with_known_codes():
    assert len(CASES) == len({case["id"] for case in CASES})
    for case in CASES:
        assert case["expect"] in {"none", "state-table-full", "state-insert-failures", "state-evictions"}, case["id"]
        assert not ("missing" in case and "disagrees" in case), case["id"]


# --- parsers: exact figures read by hand from the files ----------------------------------------------

def test_pfctl_sa_macos_all_three_sections():
    text = capture("state/pf_macos_pfctl_sa.txt")
    info = sp.parse_pfctl_state_info(text)
    assert info["state_count"] == 40 and info["searches"] == 21967266
    assert info["inserts"] == 128013 and info["removals"] == 127973
    assert info["memory_failures"] == 0 and info["state_limit_hits"] == 0 and info["pf_state_mismatch"] == 753
    assert sp.parse_pfctl_memory(text) == {"state_max": 10000, "app_states_max": 10000, "src_nodes_max": 10000,
                                           "frags_max": 5000, "tables_max": 1000, "table_entries_max": 200000}
    timeouts = sp.parse_pfctl_timeouts(text)
    assert timeouts["tcp.closed"] == 90 and timeouts["tcp.finwait"] == 45 and timeouts["tcp.established"] == 86400
    assert timeouts["grev1.estblished"] == 1800 and "adaptive.start" not in timeouts
    assert sp.parse_pfctl_adaptive(text) == {"adaptive_start": 6000, "adaptive_end": 12000}


def test_pfctl_state_info_reuses_the_dut_parser():
    assert sp.parse_pfctl_info is parsers.parse_pfctl_info
    text = capture("state/pf_freebsd11_fail2ban_pfctl_s_all.txt")  # `pfctl -s all`: FILTER RULES first
    assert sp.parse_pfctl_state_info(text)["state_insert_failures"] == 0
    assert parsers.parse_pfctl_info(text)["pf_state_searches"] == 3277


def test_pfctl_full_table_figures():
    assert sp.parse_pfctl_state_info(capture("state/pf_pfsense_netgate65584_pfctl_si.txt"))["state_count"] == 1400004
    mischief = sp.parse_pfctl_state_info(capture("state/pf_openbsd_packetmischief_grep_memory.txt"))
    assert mischief == {"pf_memory": 423433, "memory_failures": 423433}  # a grep'd counter line
    assert sp.parse_pfctl_state_info(capture("state/pf_openbsd_packetmischief_pfctl_si.txt"))["state_count"] == 3134
    # the author's "<<<< state limit <<<<" marker after the number is not part of it
    assert sp.parse_pfctl_memory(capture("state/pf_openbsd_packetmischief_pfctl_sm.txt"))["state_max"] == 10000
    six_sites = sp.parse_pfctl_state_info(capture("state/pf_openbsd_serverfault247714_grep_memory.txt"))
    assert six_sites["memory_failures"] == 209230


def test_conntrack_S_sums_cpus_generically():
    telegraf = sp.parse_conntrack_stats(capture("state/ct_S_telegraf8955.txt"))
    assert telegraf["cpus"] == 8 and telegraf["insert_failed"] == 1 and telegraf["drop"] == 1
    assert telegraf["invalid"] == 516 + 583 + 9632 + 1025 + 1718 + 837 + 514 + 9927
    assert telegraf["ignore"] == 1362472446 and telegraf["early_drop"] == 0
    assert "inserts" not in telegraf  # insert=0 on current kernels means "not counted", not "none"
    concourse = sp.parse_conntrack_stats(capture("state/ct_S_concourse4153.txt"))  # 'cpu=0   \tfound=96'
    assert concourse["found"] == 96 + 93 + 62 + 81 + 82 + 96 + 77 + 109 and concourse["invalid"] == 338
    nft = sp.parse_conntrack_stats(capture("state/ct_S_nftables138.txt"))  # no ignore= field on 5.10
    assert nft["cpus"] == 4 and nft["invalid"] == 112 and "ignore" not in nft


def test_conntrack_S_old_one_table_format():
    old = sp.parse_conntrack_stats(capture("state/ct_S_k8s56903_old_format.txt"))
    assert old["state_count"] == 90 and old["found"] == 3774748 and old["delete_list"] == 327481
    assert old["inserts"] == 132421 and old["searches"] == 2228 and old["insert_failed"] == 0
    assert "cpus" not in old


def test_proc_nf_conntrack_entries_is_not_summed():
    beats = sp.parse_proc_nf_conntrack(capture("state/proc_ct_stat_beats46138.txt"))
    assert beats["state_count"] == 0xAB == 171 and beats["cpus"] == 4  # the metricbeat bug would say 684
    assert beats["clashres"] == 0 and beats["chainlength"] == 0
    netdata = sp.parse_conntrack_stats(capture("state/proc_ct_stat_netdata161.txt"))  # dispatched by header
    assert netdata["state_count"] == 0x71E and netdata["cpus"] == 3
    assert netdata["drop"] == 0x53A + 0x8 == 1346 and netdata["insert_failed"] == 0
    assert netdata["icmp_error"] == 0x21251 and netdata["inserts"] == 0x3FE1DF + 0x239697 + 0x19DF0E


def test_conntrack_sysctl_log_and_timeouts():
    text = capture("state/ct_sysctl_geektime_nat_lab.txt")
    assert sp.parse_conntrack_sysctl(text) == {"state_count": 180, "state_max": 1000, "buckets": 65536}
    assert sp.parse_conntrack_timeouts(text) == {"tcp_timeout_syn_recv": 60, "tcp_timeout_syn_sent": 120,
                                                 "tcp_timeout_time_wait": 120}
    assert sp.parse_conntrack_count(text) == {"state_count": 180}
    assert sp.parse_conntrack_max(text) == {"state_max": 1000}
    assert sp.parse_conntrack_count("262139\n") == {"state_count": 262139}  # /proc/sys/.../nf_conntrack_count
    chion = sp.parse_conntrack_timeouts(capture("state/ct_sysctl_chion82_fullcone7.txt"))
    assert chion == {"tcp_timeout_established": 600, "generic_timeout": 600}
    assert sp.parse_state_log(capture("state/ct_dmesg_geektime_nat_lab.txt")) == {
        "table_full_events": 3, "suppressed_log_messages": 3939}
    assert sp.parse_state_log(capture("state/ct_syslog_starphleet352.txt"))["table_full_events"] == 5  # wrapped
    assert sp.parse_state_log(capture("state/ct_dmesg_k8s18604.txt"))["table_full_events"] == 14


def test_ipfw_sysctls():
    text = capture("state/ipfw_macos_ohai_sysctl.txt")
    dyn = sp.parse_ipfw_dyn_sysctl(text)
    assert dyn["state_count"] == 0 and dyn["state_max"] == 4096 and dyn["buckets"] == 256
    timeouts = sp.parse_ipfw_timeouts(text)
    assert timeouts["dyn_fin_lifetime"] == 1 and timeouts["dyn_ack_lifetime"] == 300 and len(timeouts) == 6
    assert firewall("freebsd", dyn) == "ipfw" and firewall("freebsd", {"pf_states": 1}) == "pf"


GARBAGE = "pfctl: /dev/pf: Permission denied\nconntrack v1.4.6 (conntrack-tools): Operation failed: not permitted\n"


@pytest.mark.parametrize("parser", sorted(set(sp.PARSERS) - {"state_log"}) + sorted(sp.TIMEOUT_PARSERS))
def test_parse_error_on_garbage(parser):
    function = sp.PARSERS.get(parser) or sp.TIMEOUT_PARSERS[parser]
    with pytest.raises(ParseError):
        function(GARBAGE)
    with pytest.raises(ParseError):
        function("")


def test_parse_error_names_the_command_and_bad_rows():
    with pytest.raises(ParseError, match="conntrack -S"):
        sp.parse_conntrack_stats(GARBAGE)
    with pytest.raises(ParseError, match="pfctl -s memory"):
        sp.parse_pfctl_memory(GARBAGE)
    header = capture("state/proc_ct_stat_beats46138.txt").splitlines()[0]
    with pytest.raises(ParseError, match="no CPU rows"):
        sp.parse_proc_nf_conntrack(header + "\n")
    with pytest.raises(ParseError, match="hex counters"):
        sp.parse_proc_nf_conntrack(header + "\n000000ab  zz\n")
    with pytest.raises(ParseError, match="not a counter"):
        sp.parse_conntrack_stats("cpu=0 found=12 drop=x\n")
    assert sp.parse_state_log(GARBAGE) == {"table_full_events": 0, "suppressed_log_messages": 0}


# --- verdicts on the labelled corpus -----------------------------------------------------------------

@pytest.mark.parametrize("case", CASES, ids=[case["id"] for case in CASES])
def test_case_verdict(case):
    snapshot, timeouts = reading(case)
    got = codes(state_verdicts(None, snapshot, case["os"], timeouts))
    if "missing" in case:
        assert got == [], f"{case['id']}: nothing in the capture shows it, so no rule may guess"
    elif "disagrees" in case:
        assert got != ([] if case["expect"] == "none" else [case["expect"]]), \
            f"{case['id']} now agrees with its label: remove its `disagrees` marker"
    elif case["expect"] == "none":
        assert got == [], f"{case['id']}: no state verdict expected, got {got}"
    else:
        assert got == [case["expect"]], f"{case['id']}: expected {case['expect']}, got {got}"


def test_corpus_precision(capsys):
    matched = fired = correct = positives = found = 0
    for case in CASES:
        snapshot, timeouts = reading(case)
        got = codes(state_verdicts(None, snapshot, case["os"], timeouts))
        expected = [] if case["expect"] == "none" else [case["expect"]]
        matched += got == expected
        fired += len(got)
        correct += sum(code in expected for code in got)
        positives += bool(expected)
        found += bool(expected) and expected[0] in got
    with capsys.disabled():
        print(f"\nstate corpus: {matched}/{len(CASES)} cases matched their label; precision {correct}/{fired} "
              f"verdicts = {correct / fired:.0%}; recall {found}/{positives} labelled problems = "
              f"{found / positives:.0%}")
    misses = sum("missing" in case for case in CASES)
    disagreements = sum("disagrees" in case for case in CASES)
    assert matched == len(CASES) - misses - disagreements  # every other case agrees with its source
    assert (matched, correct, fired, found, positives) == (17, 6, 7, 6, 8)


def test_full_table_advice_carries_the_dut_bound():
    snapshot, _ = reading(next(c for c in CASES if c["id"] == "pf-openbsd-packetmischief"))
    verdict = state_verdicts(None, snapshot, "openbsd", None)[0]
    assert verdict.kind == "limit" and "423,433" in verdict.evidence and "since boot" in verdict.evidence
    assert "set limit states" in verdict.advice and "pfctl -sm" in verdict.advice
    assert "Maximum States" in verdict.advice
    assert "10,000 states" in verdict.advice and "lingering 90 s" in verdict.advice and "~111 new" in verdict.advice
    lab = next(c for c in CASES if c["id"] == "ct-geektime-nat-lab")
    snapshot, timeouts = reading(lab)
    advice = state_verdicts(None, snapshot, "linux", timeouts)[0].advice
    assert "net.netfilter.nf_conntrack_max" in advice and "nf_conntrack_buckets" in advice
    assert "1,000 states" in advice and "120 s" in advice and "as read" in advice and "~8 new" in advice


# --- before/after deltas -----------------------------------------------------------------------------

def test_flat_counters_give_no_verdict():
    for name, parser in (("ct_S_telegraf8955.txt", "conntrack_stats"),
                         ("proc_ct_stat_netdata161.txt", "proc_nf_conntrack")):
        snap = parsed(name, parser)
        assert state_verdicts(snap, dict(snap), "linux", None) == []  # since boot it may fire; a flat trial never


def test_rising_insert_failed_is_a_clash_during_the_test():
    before = parsed("ct_S_telegraf8955.txt", "conntrack_stats")
    after = dict(before, insert_failed=before["insert_failed"] + 57, drop=before["drop"] + 57,
                 state_count=4100, state_max=262144)
    (verdict,) = state_verdicts(before, after, "linux", None)
    assert verdict.code == "state-insert-failures" and verdict.kind == "limit"
    assert "insert_failed 57" in verdict.evidence and "during the test" in verdict.evidence
    assert "--random-fully" in verdict.advice and "4,100 of 262,144" in verdict.evidence


def test_rising_drop_and_early_drop_at_max_is_a_full_table():
    before = dict(parsed("ct_S_nftables138.txt", "conntrack_stats"), state_count=2000, state_max=262144)
    after = dict(before, early_drop=900, drop=35, state_count=262141)
    got = state_verdicts(before, after, "linux", {"tcp_timeout_time_wait": 120})
    assert codes(got) == ["state-table-full", "state-evictions"]
    assert "262,141 of 262,144" in got[0].evidence and "early_drop 900 and drop 35" in got[0].evidence
    assert "~2,185 new connections/s" in got[0].advice
    assert got[1].kind == "note"


def test_early_drop_alone_is_pressure_not_failure():
    before = dict(parsed("ct_S_rke2_3924.txt", "conntrack_stats"), state_count=1000, state_max=65536)
    after = dict(before, early_drop=before["early_drop"] + 4000, state_count=60000)
    (verdict,) = state_verdicts(before, after, "linux", None)
    assert verdict.code == "state-evictions" and verdict.kind == "note" and "early_drop 4,000" in verdict.evidence


def test_pf_rising_memory_and_rule_limit():
    text = capture("state/pf_macos_pfctl_sa.txt")
    before = sp.parse_pfctl_state_info(text) | sp.parse_pfctl_memory(text) | sp.parse_pfctl_adaptive(text)
    timeouts = sp.parse_pfctl_timeouts(text)
    full = dict(before, memory_failures=120, state_count=10000)
    verdicts = state_verdicts(before, full, "macos", timeouts)
    assert codes(verdicts) == ["state-table-full", "state-evictions"]
    assert "pf 'memory' 120" in verdicts[0].evidence and "during the test" in verdicts[0].evidence
    # adaptive timeouts: at 10000 of start 6000 / end 12000 pf scales by 1/3 -> ~333/s instead of ~111/s
    assert "~111 new connections/s" in verdicts[0].advice and "~333/s" in verdicts[0].advice
    rule = dict(before, state_limit_hits=7, state_count=900)
    (verdict,) = state_verdicts(before, rule, "macos", timeouts)
    assert verdict.title.startswith("a rule's state limit") and "keep state (max N)" in verdict.advice
    clash = dict(before, state_insert_failures=3)
    assert codes(state_verdicts(before, clash, "macos", timeouts)) == ["state-insert-failures"]


def test_pf_adaptive_timeouts_note():
    snap = {"state_count": 7500, "state_max": 10000, "adaptive_start": 6000, "adaptive_end": 12000}
    (verdict,) = state_verdicts(None, snap, "openbsd", None)
    assert verdict.code == "state-evictions" and "by 0.75" in verdict.evidence  # (12000-7500)/(12000-6000)


def test_since_boot_thresholds_and_deltas():
    assert MIN_SINCE_BOOT == 100
    clash = {"insert_failed": 150, "drop": 150}
    assert codes(state_verdicts(None, clash, "linux", None)) == ["state-insert-failures"]
    # the same 150 against 10 M inserted entries is below NEGLIGIBLE_DROP_SHARE (1e-4): not a limit
    assert state_verdicts(None, dict(clash, insert=10_000_000, inserts=10_000_000), "linux", None) == []
    # ... but 150 during one trial is
    assert codes(state_verdicts({"insert_failed": 0, "drop": 0}, clash, "linux", None)) == ["state-insert-failures"]
    assert state_deltas({"drop": 500, "state_count": 9}, {"drop": 20, "state_count": 3, "early_drop": 4}) == \
        {"drop": 20, "state_count": 3}  # a reset counter's after value; a key not read before is left out
    assert state_verdicts(None, {"state_count": 9800, "state_max": 10000}, "openbsd", None)[0].code == \
        "state-table-full"  # 98% of the limit is at the limit
    assert state_verdicts(None, {"state_count": 9700, "state_max": 10000}, "openbsd", None) == []


# --- Little's law ----------------------------------------------------------------------------------------

def test_littles_law_bound():
    assert littles_law_bound(10000, 90) == pytest.approx(111.111, rel=1e-4)  # pf default limit, tcp.closed
    assert littles_law_bound(262144, 120) == pytest.approx(2184.533, rel=1e-4)  # 4 GiB Linux, TIME_WAIT
    assert littles_law_bound(16384, 1) == 16384  # FreeBSD ipfw dyn_max default, dyn_fin_lifetime 1 s
    assert littles_law_bound(10000, 90 / 3) == pytest.approx(333.333, rel=1e-4)
    for bad in ((10000, 0), (10000, -1), (-1, 90)):
        with pytest.raises(ValueError):
            littles_law_bound(*bad)


def test_linger_seconds_per_os():
    assert linger_seconds("linux", None) == 120  # nf_conntrack_tcp_timeout_time_wait default
    assert linger_seconds("linux", {"tcp_timeout_time_wait": 30, "tcp_timeout_close": 10}) == 30
    assert linger_seconds("openbsd", None) == 90  # tcp.closed: both FINs acknowledged (pf_tcp_track_full)
    assert linger_seconds("freebsd", {"tcp.closed": 60, "tcp.finwait": 45}) == 60
    assert linger_seconds("freebsd", {"dyn_fin_lifetime": 1, "dyn_ack_lifetime": 300}) == 1  # ipfw
    assert linger_seconds("ipfw", None) == 1
    timeouts = sp.parse_pfctl_timeouts(capture("state/pf_macos_pfctl_sa.txt"))
    assert linger_seconds("macos", timeouts) == 90


# --- the drivers read them from a live DUT (FakeExecutor answering with the real captures) ----------

def test_linux_driver_reads_the_conntrack_table_through_one_round_trip():
    from linerate.dut.drivers import driver_for
    from linerate.exec.fake import FakeExecutor
    from tests.conftest import capture

    # count and max are single integers (their format); the stat table is a real capture
    dut = (FakeExecutor("dut").respond(["cat", "/proc/sys/net/netfilter/nf_conntrack_count"], "4093\n")
           .respond(["cat", "/proc/sys/net/netfilter/nf_conntrack_max"], "4096\n")
           .respond(["cat", "/proc/net/stat/nf_conntrack"], capture("state/proc_ct_stat_beats46138.txt"))
           .respond(["cat", "/proc/sys/net/netfilter/nf_conntrack_tcp_timeout_time_wait"], "120\n"))
    state = driver_for("linux").state_counters(dut)
    assert state["state_count"] == 4093 and state["state_max"] == 4096 and state["insert_failed"] == 0
    assert driver_for("linux").state_timeouts(dut) == {"tcp_timeout_time_wait": 120}
    missing = FakeExecutor("dut").respond(["cat"], returncode=1, stderr="No such file or directory")
    assert driver_for("linux").state_counters(missing) == {}  # nf_conntrack not loaded: nothing, never zeros


def test_openbsd_driver_reads_pf_and_a_full_table_gives_its_verdict():
    from linerate.dut.drivers import driver_for
    from linerate.exec.fake import FakeExecutor
    from tests.conftest import capture

    # the author's `pfctl -si | grep memory` stands for -si's output: its counter line, as pfctl prints it
    dut = (FakeExecutor("dut").respond(["pfctl", "-si"], capture("state/pf_openbsd_packetmischief_grep_memory.txt"))
           .respond(["pfctl", "-sm"], capture("state/pf_openbsd_packetmischief_pfctl_sm.txt"))
           .respond(["pfctl", "-st"], returncode=1))
    state = driver_for("openbsd").state_counters(dut)
    assert state["state_max"] > 0 and state["memory_failures"] == 423433
    codes = [v.code for v in state_verdicts(None, state, "openbsd", None)]
    assert "state-table-full" in codes  # pf's memory counter: state allocations refused at the limit
