"""Which driver an interface has (`ethtool -i`), and a speed that is the driver's constant, not negotiated: on
real outputs (each file's first line names its source)."""

from linerate.dut import parsers
from linerate.dut.linux import LinuxDriver
from linerate.exec.fake import FakeExecutor
from tests.conftest import capture


def section(name: str, command: str) -> str:
    """The output printed under `$ command` in a capture (tests/data), up to the next prompt."""
    lines = capture(name).splitlines()
    start = lines.index(f"$ {command}") + 1
    end = next((i for i in range(start, len(lines)) if lines[i].startswith("$ ")), len(lines))
    return "\n".join(lines[start:end]) + "\n"


VETH = "linux/veth_speed_and_ethtool_i.txt"
IXGBE = "diagnose/serverdevworker_ixgbe_rx_missed_ring_512.txt"


def test_the_driver_line_of_real_ethtool_i_outputs():
    assert parsers.ethtool_driver(section(VETH, "ethtool -i lrtv0")) == "veth"
    assert parsers.ethtool_driver(section(VETH, "ethtool -i lrtt0")) == "tun"
    assert parsers.ethtool_driver(section(IXGBE, "ethtool -i eth2")) == "ixgbe"
    assert parsers.ethtool_driver("") is None and parsers.ethtool_driver("bash: ethtool: not found\n") is None


def dut(speed: str, ethtool_i: str | None) -> FakeExecutor:
    host = FakeExecutor("dut").respond(["cat", "/sys/class/net/eth2/speed"], speed)
    if ethtool_i is not None:
        host.respond(["ethtool", "-i", "eth2"], ethtool_i)
    return host


def test_a_software_drivers_constant_speed_is_no_line_rate_and_a_nics_is():
    veth_speed = section(VETH, "cat /sys/class/net/lrtv0/speed")
    assert veth_speed.strip() == "10000"
    assert LinuxDriver().link_speed_mbps(dut(veth_speed, section(VETH, "ethtool -i lrtv0")), "eth2") is None
    assert LinuxDriver().link_speed_mbps(dut(veth_speed, section(VETH, "ethtool -i lrtt0")), "eth2") is None
    assert LinuxDriver().link_speed_mbps(dut("10000\n", section(IXGBE, "ethtool -i eth2")), "eth2") == 10000
    # no ethtool on the DUT: its speed file is all there is (as before the driver was asked)
    assert LinuxDriver().link_speed_mbps(dut("1000\n", None), "eth2") == 1000
    assert LinuxDriver().link_speed_mbps(dut("-1\n", None), "eth2") is None
