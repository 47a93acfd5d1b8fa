"""Which interrupt sources belong to a network device, and which of those are NIC queues.

Built from the formats real drivers give their interrupt vectors (the name request_irq() or
bus_describe_intr() receives, shown by Linux /proc/interrupts and FreeBSD `vmstat -i`), not from
guesses. Each row cites where the format comes from: a driver source file (torvalds/linux or
freebsd-src path) or, where the driver source was not read, a real output that shows it.

A queue name is split into the NIC, a direction ("rx", "tx" or "rxtx") and a queue index, so the
rules can compare the queues of one NIC (irq-one-queue) and count a NIC's interrupts per CPU
(irq-one-cpu). A single-vector network device (an OpenWrt SoC MAC, a Wi-Fi radio) is network but
not a queue.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

# (pattern, direction, where the format comes from). Tried in order; the first match wins.
QUEUE_FORMATS: list[tuple[str, str, str]] = [
    (r"^(?P<nic>.+?)-TxRx-(?P<q>\d+)$", "rxtx",
     'igb "%s-TxRx-%u" (drivers/net/ethernet/intel/igb/igb_main.c), ixgbe (intel/ixgbe/ixgbe_main.c), '
     'amd-xgbe (amd/xgbe/xgbe-drv.c); i40e/ice "%s-%s-%d" with basename "<driver>-<netdev>" and "TxRx" '
     '(intel/i40e/i40e_main.c, intel/ice/ice_lib.c): i40e-eth0-TxRx-5'),
    (r"^(?P<nic>.+?)-Tx-Rx-(?P<q>\d+)$", "rxtx",
     'ena "%s-Tx-Rx-%d" (seen as eth0-Tx-Rx-0 on AWS, scylladb/scylladb#2611)'),
    (r"^(?P<nic>.+?)-(?:rx|Rx|RX)-(?P<q>\d+)$", "rx", 'igb/ixgbe/i40e "%s-rx-%u" (same files as TxRx)'),
    (r"^(?P<nic>.+?)-(?:tx|Tx|TX)-(?P<q>\d+)$", "tx", 'igb/ixgbe/i40e "%s-tx-%u" (same files as TxRx)'),
    (r"^(?P<nic>.+?)-rxtx-(?P<q>\d+)$", "rxtx",
     'vmxnet3 "%s-rxtx-%d" (drivers/net/vmxnet3/vmxnet3_drv.c); nfp (netronome/nfp/nfp_net_common.c), '
     'octeontx2 (marvell/octeontx2/nic/otx2_pf.c)'),
    (r"^(?P<nic>.+?)-fp-(?P<q>\d+)$", "rxtx",
     'qede fastpath "%s-fp-%d" (drivers/net/ethernet/qlogic/qede/qede_main.c)'),
    (r"^(?P<nic>virtio\d+)-input\.(?P<q>\d+)$", "rx",
     'virtio_net "input.%u" (drivers/net/virtio_net.c) behind the device name: virtio_pci "%s-%s"'),
    (r"^(?P<nic>virtio\d+)-output\.(?P<q>\d+)$", "tx", 'virtio_net "output.%u" (drivers/net/virtio_net.c)'),
    (r"^(?P<nic>mlx[45])_comp(?P<q>\d+)(?P<pci>@pci:\S+)?$", "rxtx",
     'mlx5 completion EQs "mlx5_comp%d" (drivers/net/ethernet/mellanox/mlx5/core/pci_irq.c; newer kernels '
     'append @pci:<address>)'),
    (r"^(?P<nic>.+?) \(queue (?P<q>\d+)\)$", "rxtx", 'cxgb4 "%s (queue %d)" (seen in Irqbalance/irqbalance#202)'),
    (r"^(?P<nic>.+?):(?P<dir>rx|tx)q ?(?P<q>\d+)(?::\d+)?$", "",
     'FreeBSD iflib "rxq%d"/"txq%d" (sys/dev/e1000/if_em.c, sys/dev/igc/if_igc.c, sys/dev/ixgbe/if_ix.c, '
     'sys/dev/ixl/if_ixl.c, sys/dev/axgbe/if_axgbe_pci.c): igb0:rxq0; OpenWrt ipq40xx essedma '
     'c080000.ethernet:txq0 (openwrt/openwrt#16818)'),
    (r"^(?P<nic>[a-z]+\d+):que ?(?P<q>\d+)$", "rxtx",
     'FreeBSD igb/ixgbe before iflib bus_describe_intr "que %d" (sys/dev/e1000/if_igb.c): igb0:que 2'),
    (r"^(?P<nic>(?:eth|en[a-z0-9]*|lan|wan)\d*[a-z0-9]*)-(?P<q>\d+)$", "rxtx",
     'r8125/r8169 multi-vector and tg3 "%s-%d" (seen as eth2-0 in orangepi-xunlong/openwrt#46)'),
]
_COMPILED = [(re.compile(p), d, s) for p, d, s in QUEUE_FORMATS]

# Single-vector network devices: interface names and Linux/FreeBSD network driver names seen in
# real /proc/interrupts and vmstat -i outputs (OpenWrt SoC MACs are named by their device-tree
# node, "19000000.eth", "15100000.ethernet").
NETWORK_DEVICE = re.compile(
    r"(^|[\s,])("
    r"(eth|en[opsx]\w*|ens\d|wlan|wl\w*|lan|wan)\d*\b"
    r"|(igb|igc|em|re|ix|ixl|ixv|ice|vtnet|vmx|bge|bxe|cxl|cc|mlx\w*|ax|hn|axgbe)\d+\b"
    r"|[0-9a-f]+\.(eth|ethernet|gmac|mac)\b"
    r"|mvneta|mvpp2|mwlwifi|iwlwifi|ath\d+k\w*|mt76\w*|mt79\w*|mt7\d{3}\w*|rtw\w*|rtl8\w*|brcmf\w*"
    r"|ag71xx|mtk_eth|mtk-eth|gmac\d*|edma\w*|stmmac\w*|fec\w*|bcmgenet|virtio\d+-(input|output)"
    r"|mlx5_\w+|i40e\w*|ice-\w+|ixgbe\w*|igb\w*|vmxnet3\w*|hv_netvsc|gve-\w+|bnxt\w*|qede\w*"
    # ath11k/ath12k Wi-Fi data-path rings, the names OpenWrt's qualcommax smp_affinity script pins
    # (openwrt/openwrt#14370)
    r"|reo2host\S*|wbm2host\S*|rxdma2host\S*|host2rxdma\S*|tcl2host\S*|ppdu-end\S*)",
    re.IGNORECASE)
# Vendor SoC MAC drivers name their vectors after the driver with a network word as one part of the
# name: Lantiq's "xrx200_net_rx"/"xrx200_net_tx" (drivers/net/ethernet/lantiq_xrx200.c; seen in
# openwrt/openwrt PR#4339), MediaTek "mtk_eth", device-tree nodes "1e100000.ethernet". One part of
# the name (split at _ - . : , @ and spaces) must be such a word: a bare rx/tx part is not enough,
# since UARTs ("asc_rx", Lantiq's serial port in the same file) and virtio-vsock ("virtio3-rx",
# "virtio3-tx", "virtio3-event") use them too.
NETWORK_WORDS = {"net", "eth", "ethernet", "enet", "emac", "gmac", "xgmac", "wlan", "wifi"}


# A network interface renamed by udev/systemd or the admin (systemd.link(5) Name=, NamePolicy=) is free-form:
# "net0", "lan0", "wan1", "uplink0". Its driver names a single-vector interrupt after the interface
# (netdev->name: e1000e, r8169, tg3, alx), so an action name that is one lowercase word and an index is
# read as an interface, unless the stem is one the kernel numbers other devices with: the RTC ("rtc0",
# drivers/rtc/class.c), SD/MMC hosts ("mmc0", mmc_hostname()), IOMMUs ("dmar0", intel/iommu),
# HPET timers ("hpet2", arch/x86/kernel/hpet.c), AHCI per-port vectors ("ahci0", ata/libahci.c),
# TPM ("tpm0"), DesignWare USB ("dwc3"), legacy virtio ("virtio0": a disk or a NIC), USB gadget/bus
# names ("usb1"), PHYs, DMA engines, I2C/SPI/UART controllers.
INTERFACE_SHAPE = re.compile(r"^(?P<stem>[a-z]{2,})[0-9]+$")
NUMBERED_NON_NETWORK = frozenset({
    "rtc", "mmc", "dmar", "hpet", "ahci", "tpm", "dwc", "virtio", "usb", "phy", "dma", "dmac", "edma", "i2c",
    "spi", "uart", "serial", "ttys", "card", "hd", "sd", "sr", "nvme", "ata", "ipmi", "mei", "gpio", "timer",
    "pmu", "cpu", "vpu", "gpu", "npu", "ipu", "mdss", "dsi", "hdmi", "sdhci", "ehci", "ohci", "xhci", "musb",
})


def is_interface_name(name: str, interfaces: Iterable[str] = ()) -> bool:
    """An interrupt action name that is a network interface's own name: one named elsewhere in the
    paste (ifconfig, ethtool -S IF, ...), or one lowercase word and an index ("net0", "lan0") whose
    stem the kernel does not give other devices."""
    text = name.strip()
    if text in set(interfaces):
        return True
    match = INTERFACE_SHAPE.match(text)
    return match is not None and match.group("stem") not in NUMBERED_NON_NETWORK


def _has_network_word(name: str) -> bool:
    return any(part in NETWORK_WORDS for part in re.split(r"[_\-.:,@\s\[\]()]+", name.lower()))


@dataclass(frozen=True)
class Queue:
    nic: str
    direction: str  # "rx" | "tx" | "rxtx"
    index: int
    source: str  # where the name format comes from


def queue_of(name: str) -> Queue | None:
    """'eth2-TxRx-6' -> Queue('eth2', 'rxtx', 6); 'igb0:que 2' -> Queue('igb0', 'rxtx', 2)."""
    text = name.strip()
    for pattern, direction, source in _COMPILED:
        match = pattern.match(text)
        if match:
            groups = match.groupdict()
            nic = match.group("nic") + (groups.get("pci") or "")  # two mlx5 ports: two NICs
            return Queue(nic, groups.get("dir") or direction, int(match.group("q")), source)
    return None


def is_network(name: str, interfaces: Iterable[str] = ()) -> bool:
    """A NIC queue, or an interrupt source of a network device (a shared line counts: 'ehci_hcd:usb1, eth0');
    `interfaces`: the interface names the paste shows elsewhere."""
    known = set(interfaces)
    return (queue_of(name) is not None or NETWORK_DEVICE.search(name.strip()) is not None
            or _has_network_word(name) or is_interface_name(name, known)
            or any(part.strip() in known for part in name.split(",")))


USB_HOST = re.compile(r"^(?:[xeo]hci[-_]hcd|dwc_otg|dwc[23])\b", re.IGNORECASE)  # xhci-hcd:usb5, ehci_hcd:usb1


def is_usb_host(name: str) -> bool:
    """A USB host controller's interrupt (a USB NIC's packets arrive on it)."""
    return USB_HOST.match(name.strip()) is not None


def rx_groups(interrupts: dict[str, int]) -> dict[str, dict[str, int]]:
    """NIC -> {queue source: interrupts} for the receive side of every NIC with >= 2 queues. A
    transmit-only queue is left out: the sending CPU picks it (XPS), not RSS."""
    groups: dict[str, dict[str, int]] = {}
    for source, count in interrupts.items():
        queue = queue_of(source)
        if queue is None or queue.direction == "tx":
            continue
        label = queue.nic if queue.direction == "rxtx" else f"{queue.nic} rx"
        groups.setdefault(label, {})[source] = count
    return {nic: queues for nic, queues in groups.items() if len(queues) >= 2}
