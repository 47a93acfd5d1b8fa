"""loader.conf lines that name kernel modules, judged by what each FreeBSD release's base system
builds (sys/modules KMOD=, the links its Makefiles install, MODULE_VERSION in sys/)."""

from linerate.tuning.audit import Context, audit
from linerate.tuning.catalog import load_catalog
from linerate.tuning.parsers import parse_file
from linerate.tuning.sources import freebsd_modules
from linerate.tuning.versions import base_version
from tests.conftest import DATA


def findings(path, version="13.2"):
    family, base = base_version("freebsd", version)
    settings = parse_file(str(path), "loader")
    return {f.key: f for f in audit(load_catalog(), settings, Context("freebsd", family, base, "server", False, version))}


def test_a_module_renamed_in_base_and_a_module_name_without_load_are_warnings():
    found = findings(DATA / "tuning" / "darkain_loader_modules.conf")
    fuse, video = found["fuse_load"], found["acpi_video"]
    assert (fuse.code, fuse.severity) == ("LR001", "warning") and "fusefs_load" in fuse.fix  # fuse.ko went in 13.0
    assert (video.code, video.severity) == ("LR002", "warning") and 'acpi_video_load="YES"' in video.fix
    assert "cuse4bsd_load" not in found or found["cuse4bsd_load"].severity == "info"  # a port's, never base's
    assert "amdtemp_load" not in found  # a base module of 13.2
    assert found["libiconv_load"].code == "LR012"  # only its repeat is said, never that it is no module
    assert "fuse_load" not in findings(DATA / "tuning" / "darkain_loader_modules.conf", "12.1")  # fuse.ko link then


def test_links_and_compiled_in_modules_count_as_modules():
    modules = freebsd_modules()
    assert modules.presence("if_igb", (14, 2), (14, 2)).state == "exists"  # em's Makefile links if_igb.ko
    assert modules.presence("random_harvestq", (12, 1), (12, 1)).state == "exists"  # MODULE_VERSION, no .ko
    assert modules.presence("fuse", (13, 2), (13, 2)).state == "removed"
