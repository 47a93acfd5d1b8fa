"""An own image as the DUT, end to end on the reference image (`linerate image build debian`, built
by `make test`): booted under TCG on an overlay, reached only over SSH on its management NIC."""

import json
import os
import signal
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest

from linerate.image.debian import file_sha256 as sha256
from tests.privileged.conftest import put_back, LINERATE, linerate, missed_a_window_read, netns_names
from tests.privileged.test_rfc2544_lab import says_its_limit

IMAGE = Path(os.environ.get("LINERATE_TEST_IMAGE", "/var/cache/linerate/images/debian-router.qcow2"))


@pytest.fixture(scope="module")
def image():
    if not IMAGE.is_file():
        pytest.fail(f"{IMAGE} is missing: `make test` builds it (linerate image build debian --output {IMAGE})")
    return IMAGE, sha256(IMAGE)


def qemus_of(image: Path) -> list[str]:
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if argv and argv[0].endswith(b"qemu-system-x86_64") and any(str(image).encode() in a or b"overlay" in a
                                                                      for a in argv):
            found.append(pid)
    return found


def leaves_nothing(image: Path, digest: str, before: set[str]) -> None:
    assert sha256(image) == digest, "the image was written"
    assert not qemus_of(image), "qemu still runs"
    assert netns_names() <= before
    state = Path(os.environ["LINERATE_STATE_DIR"])
    assert not list(state.glob("*.vm")) and not list(state.rglob("overlay.qcow2")), "an overlay was left"


def test_the_reference_image_build_is_cached_by_its_inputs(image):
    path, digest = image
    started = time.monotonic()
    info = json.loads(linerate("image", "build", "debian", "--output", str(path), "--json").stdout)
    assert info["built_now"] is False and info["sha256"] == digest
    assert time.monotonic() - started < 30  # the bar is < 5 s; this only catches a rebuild (~40 s + download)
    assert Path(info["key"]).stat().st_mode & 0o077 == 0


def test_two_offload_cells_on_the_image_store_the_read_back_per_cell(image, tmp_path):
    path, digest = image
    before = netns_names()
    experiment = tmp_path / "image.toml"
    experiment.write_text(f'name = "image-offloads"\nduration_s = 2\nomit_s = 0\nrepetitions = 1\ncalibrate = false\n'
                          'dut = "vm"\n'
                          f'dut_image = "{path}"\ndut_os = "linux"\nlink_rate = "1g"\n'
                          'dut_offloads = "enp0s4:gso=off"\n'  # the image's own name of its WAN NIC
                          '[axes]\noffloads = ["default", "dut:tso=off,gro=off"]\n')
    db = tmp_path / "r.db"
    linerate("run", str(experiment), "--db", str(db), timeout=600)
    with sqlite3.connect(db) as conn:
        states = [json.loads(row[0]) for row in conn.execute("SELECT state FROM lab_states")]
        trials = conn.execute("SELECT count(*) FROM trials WHERE status = 'ok'").fetchone()[0]
    assert trials == 2 and len(states) == 2
    seen = set()
    for state in states:
        lan, wan = state["offloads"]["dut:lan0"], state["offloads"]["dut:wan0"]
        assert state["dut_offloads"]["enp0s4"]["gso"].split()[0] == "off" and wan["gso"].split()[0] == "off"
        seen.add((lan["tso"].split()[0], lan["gro"].split()[0], wan["tso"].split()[0]))
    assert seen == {("on", "on", "on"), ("off", "off", "off")}
    leaves_nothing(path, digest, before)


def test_an_image_missing_pieces_gets_one_error_naming_each(image, tmp_path):
    path, digest = image
    before = netns_names()
    other = tmp_path / "other"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(other)], check=True)
    # declared a product (its own config owns addresses: none here) and logged in with a key it does not know
    proc = linerate("trial", "--dut", "vm", "--dut-image", str(path), "--dut-os", "opnsense", "--dut-key", str(other),
                    "--duration", "2", check=False)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    errors = [line for line in proc.stderr.splitlines() if line.startswith("linerate:")]
    assert len(errors) == 1 and "Traceback" not in proc.stderr, proc.stderr  # progress lines, then one error
    line = errors[0]
    for piece in ("a login for root", "198.18.0.1/24", "198.19.0.1/24", "forwarding from LAN to WAN"):
        assert piece in line, line
    leaves_nothing(path, digest, before)


def test_a_kept_image_lab_reads_the_guest_over_ssh_runs_rfc2544_and_a_sigkill_leaves_nothing(image, tmp_path):
    path, digest = image
    before = netns_names()
    started = linerate("lab", "up", "--dut", "vm", "--dut-image", str(path), "--link", "100m", "--json")
    name = json.loads(started.stdout)["lab"]
    try:
        # 6 s: room for two reads over SSH of up to ~2.5 s each under load (TCG here: 0.7-1.2 s idle)
        trial = json.loads(linerate("trial", "--lab", name, "--duration", "6", "--json").stdout)
        assert trial["status"] == "ok" and trial["throughput_bps"] > 50e6
        dut = trial["telemetry"]["dut"]  # the guest read over SSH twice within the traffic ...
        assert dut["window_reads"] >= 1, dut
        if dut["window_reads"] == 2:  # the guest's CPU over the window between them
            assert dut["cpu"] and 0 < dut["cpu"][0]["busy_pct"] <= 100, dut
        else:  # ... unless a read under load took the time the second needed: then it says so, and gives no CPU
            # (CI runs 75 and 76 here, under CPU steal: the first read outlasted the trial's 6 s; run 82: the second
            # took 1.3 s and ran past the traffic's end)
            assert missed_a_window_read(dut), dut
        booted = json.loads(started.stdout)["vm"]["boot_to_ready_s"]
        if booted > 12:  # a progress line every 10 s while it boots (TCG here: 17-50 s)
            assert f"VM DUT: {path.name} booting (" in started.stderr, started.stderr
        vm = trial["testbed"]["vm"]  # a kept lab's guest as this command read it: no boot time (the record's alone)
        assert booted > 0 and "boot_to_ready_s" not in vm and vm["kernel"].startswith("Linux ")
        assert vm["image"] == str(path) and vm["host_key"].startswith("SHA256:")  # its overlay's backing file
        assert set(vm["guest_interfaces"].values()) == {"enp0s3", "enp0s4"}  # the image's own names, found by MAC
        # a state file that says another image, OS or NIC name than the guest's: refused before anything
        state = Path(os.environ["LINERATE_STATE_DIR"]) / f"{name}.json"
        true = state.read_text()
        record = json.loads(true)
        for said, named in (({"vm": {**record["vm"], "lan0_name": "eth9", "image": "/srv/other.qcow2"}},
                             ("the guest calls it 'enp0s3'", f"which has '{path}'")),  # both named in one refusal
                            ({"params": {**record["params"], "dut_os": "opnsense"}}, ("not the opnsense the file says",))):
            state.write_text(json.dumps({**record, **said}))
            proc = linerate("trial", "--lab", name, "--duration", "1", check=False)
            assert proc.returncode == 2 and all(named_ in proc.stderr for named_ in named), proc.stderr
        put_back(state, true)
        assert any(key.startswith("enp0s3_rx") for key in trial["dut_counters"])
        search = json.loads(linerate("rfc2544", "--lab", name, "--frame-sizes", "1518", "--trial-duration", "1",
                                     "--db", str(tmp_path / "r.db"), "--json", timeout=600).stdout)
        [result] = search["results"]
        assert result["theoretical_fps"] == pytest.approx(8127.4, rel=1e-4)  # 100 Mbit/s of 1518-byte frames
        # the NDR itself is the TCG guest's speed beside the generator (CI: 7,926 under load, 97.5%): held to the
        # limit it names, as every search on this shared machine is
        says_its_limit(result)
        assert result["ndr_fps"] > 0.5 * result["theoretical_fps"], result  # in bursts: ~1/20 of spaced (docs/packet-rate.md)
        killed = subprocess.Popen([*LINERATE, "trial", "--lab", name, "--duration", "20"], stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL)
        time.sleep(6)
        killed.send_signal(signal.SIGKILL)
        killed.wait(timeout=10)
        cleaned = linerate("lab", "clean", "--all").stdout  # the kept lab, its qemu and overlay included
        assert name in cleaned, cleaned
    finally:
        linerate("lab", "down", name, check=False)
    leaves_nothing(path, digest, before)
