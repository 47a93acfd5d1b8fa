"""The wheel as a user without root gets it: built from this checkout and installed into a fresh venv
with no extras, it is `linerate-lab`, pulls none of the lab's dependencies, and runs the commands that
only read files (as an unprivileged user when this runs as root); a lab command says in one line
which extra to install. Needs PyPI (the base dependencies); ~25 s with a warm pip cache."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data"
LAB_ONLY = ("pyroute2", "asyncssh", "mlrsearch", "dpkt", "matplotlib", "shtab")
NOBODY = 65534


def pypi_reachable() -> bool:
    try:
        socket.create_connection(("pypi.org", 443), timeout=5).close()
        return True
    except OSError:
        return False


def run(argv: list[str], **options) -> subprocess.CompletedProcess:
    # never this interpreter's PYTHONPATH: the fresh venv must get (and see) only what the wheel pulls
    options.setdefault("env", {key: value for key, value in os.environ.items() if key != "PYTHONPATH"})
    return subprocess.run(argv, capture_output=True, text=True, timeout=300, **options)


@pytest.fixture(scope="module")
def base_install():
    if not pypi_reachable():
        pytest.skip("needs PyPI for the base dependencies")
    work = Path(tempfile.mkdtemp(prefix="linerate-base-install-"))
    try:
        work.chmod(0o755)  # the unprivileged user reads the venv and the inputs
        source = work / "source"
        source.mkdir()
        shutil.copy(ROOT / "pyproject.toml", source)
        shutil.copy(ROOT / "README.md", source)
        shutil.copytree(ROOT / "src", source / "src", ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
        built = run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(work / "dist"), str(source)])
        assert built.returncode == 0, built.stderr
        wheel = next((work / "dist").glob("linerate_lab-*.whl"))
        venv = work / "venv"
        assert run([sys.executable, "-m", "venv", str(venv)]).returncode == 0
        installed = run([str(venv / "bin" / "pip"), "install", "-q", "--disable-pip-version-check", str(wheel)])
        assert installed.returncode == 0, installed.stderr
        inputs = work / "inputs"
        inputs.mkdir(mode=0o755)
        for name in ("tuning/pfsense_config.xml", "diagnose/corpus/freebsd_router_all_cpus_interrupt.txt",
                     "iperf3/tcp_forward_p1.json", "iperf3/tcp_forward_p2_omit1.json"):
            shutil.copy(DATA / name, inputs)
        if os.geteuid() == 0:  # the results database is written here by the unprivileged user: its folder
            os.chown(inputs, NOBODY, NOBODY)  # (a folder others could write would be refused)
        yield venv, inputs
    finally:
        shutil.rmtree(work, ignore_errors=True)


def linerate(venv: Path, inputs: Path, *argv: str) -> subprocess.CompletedProcess:
    """Run the installed command as an unprivileged user when this runs as root (it needs none)."""
    command = [str(venv / "bin" / "linerate"), *argv]
    if os.geteuid() == 0 and shutil.which("setpriv"):
        command = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", *command]
    env = {"PATH": "/usr/bin:/bin", "HOME": str(inputs), "LANG": "C.UTF-8"}
    return run(command, cwd=inputs, env=env)


def test_the_distribution_is_linerate_lab_without_the_lab_dependencies(base_install):
    venv, _ = base_install
    show = run([str(venv / "bin" / "pip"), "show", "linerate-lab"])
    assert "Name: linerate-lab" in show.stdout
    listed = run([str(venv / "bin" / "pip"), "list", "--format=freeze"]).stdout.lower()
    names = {line.split("==")[0] for line in listed.splitlines()}
    assert names.isdisjoint(LAB_ONLY), names & set(LAB_ONLY)
    site = next((venv / "lib").glob("python3*/site-packages"))
    size_mb = sum(f.stat().st_size for f in site.rglob("*") if f.is_file()) / 1e6
    print(f"\nbase install: {size_mb:.0f} MB in {site} (packages: {', '.join(sorted(names))})")


@pytest.mark.parametrize("argv,codes,expect", [
    (["--help"], (0,), "rfc9693"),
    (["calc", "--link", "1g"], (0,), "max goodput  941.48 Mbit/s"),
    (["audit", "pfsense_config.xml", "--os", "pfsense"], (0, 1), "settings checked against pfsense"),
    (["explain", "kern.ipc.nmbclusters"], (0,), "kern.ipc.nmbclusters"),
    (["diagnose", "--after", "freebsd_router_all_cpus_interrupt.txt", "--os", "freebsd"], (0,), "[cpu-bound]"),
    (["recommend", "--os", "pfsense", "--os-version", "2.6.0", "--role", "nat-firewall"], (0,), "pfsense 2.6.0"),
])
def test_read_only_commands_run_without_root_or_extras(base_install, argv, codes, expect):
    venv, inputs = base_install
    result = linerate(venv, inputs, *argv)
    assert result.returncode in codes, result.stderr
    assert expect in result.stdout


def test_a_results_database_is_stored_listed_reported_and_compared(base_install):
    venv, inputs = base_install
    db = str(inputs / "results.db")
    for label, names in (("a", ["tcp_forward_p1.json"]), ("b", ["tcp_forward_p1.json", "tcp_forward_p2_omit1.json"])):
        assert linerate(venv, inputs, "import", *names, "--label", label, "--db", db).returncode == 0
    listed = linerate(venv, inputs, "list", "--db", db, "--json")
    assert listed.returncode == 0 and '"schema_version"' in listed.stdout
    assert linerate(venv, inputs, "report", "a", "--db", db).returncode == 0
    assert linerate(venv, inputs, "compare", "a", "b", "--db", db).returncode == 0
    html = linerate(venv, inputs, "report", "a", "--db", db, "--format", "html")
    assert html.returncode == 2 and "pip install 'linerate-lab[plots]'" in html.stderr


def test_a_lab_command_names_the_extra_in_one_line(base_install):
    venv, inputs = base_install
    result = linerate(venv, inputs, "trial")
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.count("\n") == 1 and "pip install 'linerate-lab[lab]'" in result.stderr
    assert "make install" in result.stderr
