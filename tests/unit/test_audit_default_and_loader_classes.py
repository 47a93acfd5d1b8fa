"""Failure classes an independent held-out evaluation found in `linerate audit`, each fixed as a general
mechanism and tested on the real files it used (now in tests/data/tuning/corpus, first line = source):
a security trade-off that is the OS's own default, loader.conf lines the loader rejects whatever their
name, releases outside the version maps, no-op knobs that still exist, loader advice that is no sysctl."""

import subprocess
import sys
from pathlib import Path

import pytest

from linerate.errors import ConfigError
from linerate.tuning.audit import Context, audit
from linerate.tuning.catalog import load_catalog
from linerate.tuning.parsers import parse_file
from linerate.tuning.sources import Presence, describe
from linerate.tuning.syntax import loader_line_problem
from linerate.tuning.versions import OS_FAMILIES, resolve_release

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "tests" / "data" / "tuning" / "corpus"
MYBBUILD = CORPUS / "freebsd_mybbuild_loader.conf"


def audit_path(path: Path, os_name: str, version: str | None, kind: str | None = None):
    release = resolve_release(os_name, version) if version else None
    family, base = (release.family, release.version) if release else (OS_FAMILIES[os_name], None)
    ctx = Context(os_name, family, base, None, False, version, release.high if release else None)
    return audit(load_catalog(), parse_file(str(path), kind), ctx)


def on(found, key):
    return {f.code for f in found if f.key == key}


def line_of(path: Path, text: str) -> int:
    return next(n for n, line in enumerate(path.read_text().splitlines(), 1) if line.startswith(text))


# --- class 1: a security trade-off is judged against the OS's (or product's) own default ---------

def test_a_value_that_is_the_os_default_gets_no_security_warning():
    # hw.ibrs_disable="1" is FreeBSD's default (cpu_machdep.c 'int hw_ibrs_disable = 1;')
    found = audit_path(MYBBUILD, "freebsd", "14.2")
    assert on(found, "hw.ibrs_disable") == {"LR010"}
    note = next(f for f in found if f.key == "hw.ibrs_disable")
    assert note.severity == "info" and "changes nothing" in note.message
    assert on(audit_path(MYBBUILD, "freebsd", None), "hw.ibrs_disable") == {"LR010"}  # 1 on every release known


@pytest.mark.parametrize("version,codes", [("24.7", {"LR006"}), ("25.7", {"LR010"}), (None, {"LR006"})])
def test_a_product_with_its_own_default_is_judged_by_it(tmp_path, version, codes):
    # OPNsense set hw.ibrs_disable=0 (opnsense/core system_sysctl_defaults) until 25.7 dropped it:
    # "1" turns the mitigation off there on 24.7, and is the stock value on 25.7
    path = tmp_path / "loader.conf"
    path.write_text(f'{MYBBUILD.read_text().splitlines()[line_of(MYBBUILD, "hw.ibrs_disable") - 1]}\n')
    assert on(audit_path(path, "opnsense", version, "loader"), "hw.ibrs_disable") == codes


def test_a_value_that_weakens_the_default_still_warns():
    found = audit_path(MYBBUILD, "freebsd", "14.2")
    assert on(found, "vm.pmap.pti") == {"LR006"}  # vm.pmap.pti="0": PTI is on by default on affected CPUs
    steroids = audit_path(CORPUS / "freebsd_steroids_sysctl.conf", "freebsd", None)
    assert on(steroids, "net.inet.tcp.syncookies") == {"LR006"}  # default 1, the line sets 0


# --- class 2: every loader.conf line gets the loader's syntax check -----------------------------

def test_a_module_line_with_an_unclosed_quote_is_malformed():
    found = audit_path(MYBBUILD, "freebsd", "14.2")
    bad = [f for f in found if f.line == line_of(MYBBUILD, 'fib_dxr_load="YES')]
    assert [(f.code, f.severity) for f in bad] == [("LR014", "error")] and "Malformed line" in bad[0].message
    # every other line of the real file is well formed for the loader
    assert [f.line for f in found if f.code == "LR014"] == [bad[0].line]


@pytest.mark.parametrize("line,ok", [
    ('fib_dxr_load="YES', False),  # the real line: QVALEXPR needs the closing quote, WORDEXPR no quote
    ('if_igb_load="YES"', True),
    ('hw.vmm.amdvi.enable=1', True),  # a word value (WORDEXPR [-%w%d][-%w%d_.]*)
    ('hw.em.rx_process_limit="-1"', True),
    ('kern.ipc.nmbclusters="1000000" # remark', True),  # trailing text must be a '#' comment
    ('kern.ipc.nmbclusters="1000000" remark', False),
    ('net.isr.maxthreads=4 8', False),
    ('module_path=/boot/kernel;/boot/modules', False),  # unquoted, not one word
    ('intel-isa-aes_load=YES', True),  # MODULEEXPR allows '-'
])
def test_loader_grammar_of_stand_lua_config(line, ok):
    assert (loader_line_problem(line) is None) == ok


def test_a_rejected_loader_line_does_not_count_as_a_duplicate(tmp_path):
    path = tmp_path / "loader.conf"
    path.write_text('fib_dxr_load="YES"\nfib_dxr_load="YES\n')
    assert {f.code for f in audit_path(path, "freebsd", "14.2")} == {"LR014"}


# --- class 3: version maps; a no-op knob that still exists ---------------------------------------

@pytest.mark.parametrize("version,base,high", [("17.01", (4, 4), None), ("17.01.4", (4, 4), None),
                                               ("18.06", (4, 9), (4, 14))])
def test_older_openwrt_releases_are_known(version, base, high):
    release = resolve_release("openwrt", version)
    assert (release.family, release.version, release.high, release.note) == ("linux", base, high, None)


def test_a_newer_release_falls_back_with_a_note_and_nonsense_is_refused():
    release = resolve_release("openwrt", "25.12")
    assert release.version == (6, 6) and "judged as openwrt 24.10" in release.note
    for os_name, version in [("openwrt", "23.7"), ("openwrt", "15.04"), ("openwrt", "99.1"), ("pfsense", "9.9")]:
        with pytest.raises(ConfigError, match="not a release linerate knows"):
            resolve_release(os_name, version)
    cli = subprocess.run([sys.executable, "-m", "linerate", "audit", str(CORPUS / "openwrt_archer_c7_sysctl.conf"),
                          "--os", "openwrt", "--os-version", "25.12"], capture_output=True, text=True, timeout=60)
    assert cli.returncode in (0, 1) and "newer than the releases linerate knows" in cli.stderr


def test_lede_17_01_is_judged_on_its_own_kernel():
    path = CORPUS / "openwrt_archer_c7_sysctl.conf"
    # tcp_tw_recycle was removed in 4.12: LR001 on 19.07+, but it exists on 17.01's 4.4 (here at its default 0)
    assert "LR001" in on(audit_path(path, "openwrt", None), "net.ipv4.tcp_tw_recycle")
    assert on(audit_path(path, "openwrt", "17.01"), "net.ipv4.tcp_tw_recycle") == {"LR010"}
    straddle = [f for f in audit_path(path, "openwrt", "18.06") if f.key == "net.ipv4.tcp_tw_recycle"]
    assert straddle[0].severity == "info" and "uname -r" in straddle[0].message


def test_a_knob_kept_as_a_no_op_is_not_called_removed():
    found = audit_path(CORPUS / "linux_wireguard_gw_sysctl.conf", "linux", None)
    low_latency = next(f for f in found if f.key == "net.ipv4.tcp_low_latency")
    assert low_latency.code == "LR001" and "does nothing since linux 4.14 (kept as a no-op" in low_latency.message
    assert "removed" not in low_latency.message
    fack = next(f for f in audit_path(CORPUS / "linux_wireguard_gw_sysctl.conf", "linux", "6.1")
                if f.key == "net.ipv4.tcp_fack")
    assert fack.code == "LR001" and "kept as a no-op" in fack.message


# --- class 6: messages -------------------------------------------------------------------------

def test_loader_variables_and_module_lines_get_a_check_that_works():
    found = audit_path(MYBBUILD, "freebsd", "14.2")
    title = next(f for f in found if f.key == "loader_menu_title")
    assert "kenv loader_menu_title" in title.fix and "sysctl" not in title.fix.split("(")[0]
    assert not [f for f in found if f.key.endswith("_load") and "sysctl -d" in f.fix]


def test_declared_in_the_newest_source_does_not_read_as_removed():
    text = describe(Presence("unsure", "boot", "amd64/amd64/machdep.c", "14.2-BETA1", None))
    assert text == "declared in the 14.2-BETA1 source tree, the newest linerate has; newer releases not checked"
