"""`linerate recommend`: a ready snippet for one system, a reason per line — or the plain answer
that no tweaks are needed, or that a limit is structural and no knob will lift it."""

from __future__ import annotations

from dataclasses import dataclass, field

from linerate.tuning.versions import base_version, fmt

MULTIQUEUE_NICS = {"igb": 4, "ix": 64, "ixl": 64, "em": 1, "re": 1, "vtnet": 1, "bge": 1}


@dataclass
class Advice:
    title: str
    notes: list[str] = field(default_factory=list)
    files: dict[str, list[tuple[str, str]]] = field(default_factory=dict)  # file -> [(line, reason)]

    def add(self, file: str, line: str, reason: str) -> None:
        self.files.setdefault(file, []).append((line, reason))

    def render(self) -> str:
        out = [f"# {self.title}"] + [f"# {note}" for note in self.notes]
        if not self.files:
            out.append("# no tweaks needed")
        for file, lines in self.files.items():
            out.append(f"\n# --- {file} ---")
            for line, reason in lines:
                out.append(f"{line:<44} # {reason}")
        return "\n".join(out) + "\n"

    def to_dict(self) -> dict:
        return {"title": self.title, "notes": self.notes, "no_tweaks_needed": not self.files,
                "files": {f: [{"line": line, "reason": why} for line, why in lines] for f, lines in self.files.items()}}


def recommend(os_name: str, version: str, role: str, nic: str | None = None, cores: int | None = None,
              pppoe: bool = False, virtual: bool = False) -> Advice:
    family, base = base_version(os_name, version)
    advice = Advice(f"{os_name} {version} ({family} {fmt(base)}), role {role}"
                    + (f", NIC {nic}" if nic else "") + (f", {cores} cores" if cores else ""))
    if family == "freebsd":
        _freebsd(advice, os_name, base, role, nic, cores, pppoe, virtual)
    elif family == "linux":
        _linux(advice, role, nic, cores, pppoe, virtual)
    else:
        _openbsd(advice, role)
    return advice


def _freebsd(advice: Advice, os_name: str, base, role, nic, cores, pppoe, virtual) -> None:
    loader = "/boot/loader.conf.local"
    tunables = "System > Advanced > System Tunables" if os_name in ("pfsense", "opnsense") else "/etc/sysctl.conf"
    if nic == "igb" and base >= (12, 0):
        advice.notes.append("igb on FreeBSD 12+ (pfSense >= 2.5.0) uses all NIC queues by default: no loader "
                            "tweaks are needed (TekLager, 'How to fine-tune pfSense for 1Gbit throughput on APU2/APU3/APU4' (https://teklager.se/en/knowledge-base/apu2-1-gigabit-throughput-pfsense/): 'pfSense 2.5.0 does not need any special tweaks'; "
                            "2.6.0 behaves the same). Do NOT apply the old 2.4.5 lines: their hw.igb.* "
                            "tunables were removed in FreeBSD 12.")
    elif nic == "igb":
        advice.add(loader, 'legal.intel_igb.license_ack="1"', "TekLager, 'How to fine-tune pfSense for 1Gbit throughput on APU2/APU3/APU4' (https://teklager.se/en/knowledge-base/apu2-1-gigabit-throughput-pfsense/): agree with the Intel licence terms")
        advice.add(loader, 'hw.igb.rx_process_limit="-1"', "TekLager, 'How to fine-tune pfSense for 1Gbit throughput on APU2/APU3/APU4' (https://teklager.se/en/knowledge-base/apu2-1-gigabit-throughput-pfsense/): lets all igb queues process traffic "
                   "(pre-FreeBSD 12 driver); 750-800 Mbit/s single stream, 1 Gbit/s with several")
        advice.add(loader, 'hw.igb.tx_process_limit="-1"', "TekLager, 'How to fine-tune pfSense for 1Gbit throughput on APU2/APU3/APU4' (https://teklager.se/en/knowledge-base/apu2-1-gigabit-throughput-pfsense/): same, transmit side")
        advice.add(tunables, "net.inet.ip.redirect=0", "TekLager, 'How to fine-tune pfSense for 1Gbit throughput on APU2/APU3/APU4' (https://teklager.se/en/knowledge-base/apu2-1-gigabit-throughput-pfsense/): change between pfSense 2.4.4 and 2.4.5 "
                   "(redmine.pfsense.org/issues/10465)")
        advice.add(tunables, "net.inet6.ip6.redirect=0", "TekLager, 'How to fine-tune pfSense for 1Gbit throughput on APU2/APU3/APU4' (https://teklager.se/en/knowledge-base/apu2-1-gigabit-throughput-pfsense/): same, IPv6")
    if pppoe:
        advice.notes.append("PPPoE is structural: RSS cannot hash PPPoE, so the NIC delivers all WAN traffic "
                            "to one queue and one core (TekLager, 'How to fine-tune pfSense for 1Gbit throughput on APU2/APU3/APU4' (https://teklager.se/en/knowledge-base/apu2-1-gigabit-throughput-pfsense/): one APU2 core at 100%, three idle). "
                            "No tweak reaches gigabit on APU2/3/4 with BSD; expect ~450 Mbit/s at best.")
        advice.add(tunables, "net.isr.dispatch=deferred", "TekLager, 'How to fine-tune pfSense for 1Gbit throughput on APU2/APU3/APU4' (https://teklager.se/en/knowledge-base/apu2-1-gigabit-throughput-pfsense/): PPPoE 340 -> 420 Mbit/s (pfSense 2.4.5-p1)")
        advice.add(tunables, "net.inet.ip.intr_queue_maxlen=3000", "TekLager, 'How to fine-tune pfSense for 1Gbit throughput on APU2/APU3/APU4' (https://teklager.se/en/knowledge-base/apu2-1-gigabit-throughput-pfsense/): with deferred dispatch ~450 Mbit/s")
    if virtual or nic == "vtnet":
        advice.add("pfSense/OPNsense: System > Advanced > Networking", "[x] Disable hardware checksum offload",
                   "Netgate forum, 'Performance Measurments with VirtIO + Offloading on Atom C2358' (https://forum.netgate.com/topic/108187/performance-measurments-with-virtio-offloading-on-atom-c2358-updated): virtio + pf forwarded 5.18 ± 3.26 Mbit/s with it on, ~300 with it off")
        advice.add("/etc/rc.conf (plain FreeBSD)", 'ifconfig_vtnet0="... -rxcsum -txcsum"', "Netgate forum, 'Performance Measurments with VirtIO + Offloading on Atom C2358' (https://forum.netgate.com/topic/108187/performance-measurments-with-virtio-offloading-on-atom-c2358-updated), same reason")
    if role == "nat-firewall" and not virtual and nic != "vtnet":
        advice.notes.append("TSO/LRO on a NAT firewall: Calomel.org, 'FreeBSD Tuning and Optimization' (https://calomel.org/freebsd_network_tuning.html) disables them (-tso -lro); TekLager, 'How to fine-tune pfSense for 1Gbit throughput on APU2/APU3/APU4' (https://teklager.se/en/knowledge-base/apu2-1-gigabit-throughput-pfsense/) saw no "
                            "loss with them on pfSense. Measure both with `linerate run` and an offloads axis.")
    if cores and cores > 1 and nic in MULTIQUEUE_NICS and MULTIQUEUE_NICS[nic] == 1:
        advice.notes.append(f"{nic} has a single queue: one core receives everything; more cores help only "
                            "with several flows after netisr (net.isr.maxthreads=-1, Calomel.org, 'FreeBSD Tuning and Optimization' (https://calomel.org/freebsd_network_tuning.html)).")


def _linux(advice: Advice, role, nic, cores, pppoe, virtual) -> None:
    sysctl = "/etc/sysctl.d/90-router.conf"
    if role in ("router", "nat-firewall"):
        advice.add(sysctl, "net.ipv4.ip_forward = 1", "forward IPv4")
        advice.add(sysctl, "net.ipv6.conf.all.forwarding = 1", "forward IPv6")
    if role == "nat-firewall":
        advice.add(sysctl, "net.netfilter.nf_conntrack_max = 262144", "room for every flow; a full table drops new ones")
    if pppoe or (cores and cores > 1 and nic in ("vtnet", "virtio", "re", "em")):
        mask = format((1 << cores) - 1, "x") if cores else "f"
        advice.add("/sys/class/net/IF/queues/rx-0/rps_cpus", mask,
                   "RPS spreads one receive queue (or a PPPoE stream) over cores in software")
        if pppoe:
            advice.notes.append("PPPoE hides flows from the NIC's RSS hash; on Linux, RPS can still spread "
                                "them after decapsulation (OpenWRT reaches 1 Gbit/s on APU2, TekLager, 'How to fine-tune pfSense for 1Gbit throughput on APU2/APU3/APU4' (https://teklager.se/en/knowledge-base/apu2-1-gigabit-throughput-pfsense/)).")
    advice.add("ethtool -K IF", "gro on", "GRO is resegmented exactly on forward; keep it on")


def _openbsd(advice: Advice, role) -> None:
    advice.add("/etc/sysctl.conf", "hw.perfpolicy=high", "Darren Tucker, 'Network performance tuning on pcengines APU2' (http://dtucker.freeshell.org/apu2/): full CPU speed (hw.setperf 100): "
               "30.0 -> 46.8 MB/s at MTU 1500 on APU2 (pass in quick)")
    advice.add("/etc/pf.conf", "set skip on <trusted internal interface>", "Darren Tucker, 'Network performance tuning on pcengines APU2' (http://dtucker.freeshell.org/apu2/): 46.8 -> 55.7 MB/s; only "
               "where you do not need filtering")
    advice.notes.append("Per-packet cost dominates: MTU 9000 reached 107-111 MB/s on the same APU2 (Darren Tucker, 'Network performance tuning on pcengines APU2' (http://dtucker.freeshell.org/apu2/)); "
                        "also enable Core Performance Boost and disable PCIe power management in the BIOS.")
