"""Audit failure classes from the second independent check (heldout 2), on the real files it used
(tests/data/tuning/heldout2/, first line = source): a role-harm rule (LR005) fired on a value that is
the OS default, and OPNsense releases before 20.1 were refused."""

from pathlib import Path

from linerate.tuning.audit import Context, audit
from linerate.tuning.catalog import load_catalog
from linerate.tuning.parsers import parse_file
from linerate.tuning.versions import resolve_release

HELDOUT = Path(__file__).resolve().parents[2] / "tests" / "data" / "tuning" / "heldout2"


def run(path: Path, os_name: str, version: str, role: str | None = None, virtual: bool = False):
    release = resolve_release(os_name, version)
    ctx = Context(os_name, release.family, release.version, role, virtual, version, release.high)
    return audit(load_catalog(), parse_file(str(path), None), ctx)


def codes(findings, key: str) -> set[str]:
    return {f.code for f in findings if f.key == key}


def test_role_harm_does_not_fire_on_the_os_default():
    """net.inet.tcp.tso=1 on FreeBSD 13.1 is the default (explain: 12.1: 1): the line changes nothing."""
    findings = run(HELDOUT / "freebsd131_bsdgw2_sysctl.conf", "freebsd", "13.1", "nat-firewall")
    assert "LR005" not in codes(findings, "net.inet.tcp.tso")
    assert "LR006" in codes(findings, "net.inet.tcp.syncookies")  # the real trade-off on the same file stays


def test_role_harm_still_fires_on_the_default_when_the_catalog_says_the_default_is_the_harm(tmp_path):
    """hw.vtnet.csum_disable=0 is FreeBSD's default and the virtio + pf problem itself (default_is_harm)."""
    conf = tmp_path / "loader.conf"
    conf.write_text('hw.vtnet.csum_disable="0"\n')
    findings = run(conf, "freebsd", "13.1", virtual=True)
    assert "LR005" in codes(findings, "hw.vtnet.csum_disable")


def test_opnsense_before_20_1_is_judged_on_its_own_base():
    """OPNsense 19.1 ("The migration to HardenedBSD 11.2 has been completed") and 17.1 (FreeBSD 11.0)."""
    assert resolve_release("opnsense", "19.1").version == (11, 2)
    assert resolve_release("opnsense", "17.1.4").version == (11, 0)
    assert resolve_release("opnsense", "18.7").version == (11, 1)
    findings = run(HELDOUT / "opnsense_linuxmuster_config.xml", "opnsense", "19.1")
    assert "LR001" in codes(findings, "net.inet.ip.fastforwarding")  # removed in FreeBSD 11.0
