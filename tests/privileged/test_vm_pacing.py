"""rfc2544's frames through the VM DUT are spaced, not sent in trafgen's per-second bursts
(traffic/trafgen.py): at a rate the guest forwards when spaced (and loses ~60% of in bursts, as
measured here), a paced 1 s trial loses nothing, and the pacing bucket is gone from the client's
interface afterwards. The lab is removed and nothing of it remains."""

import json

from linerate.lab.registry import Registry
from linerate.search.measurer import measure
from linerate.testbed.base import find_lab
from linerate.testbed.lab_path import LabPath
from linerate.topology.plan import CLIENT_IF
from tests.privileged.conftest import linerate, unique_lab_name
from tests.privileged.test_vm_lab import assert_gone

# lab names no other run chose (a fixed one meets what a killed run on this machine left)
PACING = unique_lab_name("pace")

RATE = 5000  # frames/s: well below what the TCG guest forwards spaced here (NDR ~25,000 at 64 bytes)


def test_paced_frames_reach_the_server_through_the_guest():
    linerate("lab", "up", "--name", PACING, "--dut", "vm", "--firewall", "none", timeout=300)
    lab_id = None
    try:
        lab = find_lab(PACING, Registry())
        lab_id = lab.spec.lab_id
        path = LabPath(lab, 4)
        assert path.paced  # a VM DUT has queues of its own
        with path:
            # the guest loses none of the spaced frames in every trial; a trial whose sender was late (its worker
            # took 1.52 s for 1 s of frames once, beside the TCG guest) counts those frames unsent, as MLRsearch
            # does, and is measured again: three late senders in a row fail
            for _ in range(3):
                paced = measure(path, 64, 1.0, RATE)
                assert (paced.sent, paced.dut_loss, paced.forwarded) == (RATE, 0, RATE), paced  # unsent: lateness
                if paced.unsent == 0:
                    break
            qdiscs = json.loads(path.client.run(["tc", "-j", "qdisc", "show", "dev", CLIENT_IF]).stdout)
        assert paced.unsent == 0, paced
        assert paced.argv[-1] == "--qdisc-path"
        assert [q["kind"] for q in qdiscs] == ["noqueue"], qdiscs  # the bucket went with the trial
    finally:
        linerate("lab", "down", PACING, check=False)
    assert lab_id is not None
    assert_gone(lab_id)
