"""A lab link's sysfs settings that no netlink dump carries (lab/links.py sysfs_drift), on real output
(tests/data/lab/sysfs_threaded_napi.txt)."""

from pathlib import Path

from linerate.lab.links import SYSFS_MORE, sysfs_drift


def test_threaded_napi_on_a_lab_link_is_named_and_the_defaults_are_not():
    """`threaded` moves a link's NAPI from softirq into a kernel thread of its own (which can be pinned or
    deprioritised apart from everything the plan placed): named like a changed NAPI deferral."""
    shown = (Path(__file__).parent.parent / "data" / "lab" / "sysfs_threaded_napi.txt").read_text()
    lines = "".join(line + "\n" for line in shown.splitlines() if not line.startswith("#"))
    found = sysfs_drift("lr-x-dut", None, set(), lambda ns, argv: lines if argv == SYSFS_MORE else "")
    assert found == ["threaded of wan0 in lr-x-dut is 1, the kernel's default is 0"]
