"""What to tell a user to run on the box, per OS and kind of line, and how linerate cites the articles its
advice comes from.

`sysctl -d NAME` prints a sysctl's description on FreeBSD only: procps' sysctl on Linux takes -d as an
alias of -h (procps sysctl(8)), OpenBSD's sysctl(8) has no -d. A loader variable that is no sysctl
(module directives such as if_igb_load, device hints, console) is seen with kenv(1) after boot.
"""

from __future__ import annotations

import re

# The articles linerate's catalog and messages draw on: title and address, never an internal label.
ARTICLES = {
    "teklager": "TekLager, 'How to fine-tune pfSense for 1Gbit throughput on APU2/APU3/APU4' "
                "(https://teklager.se/en/knowledge-base/apu2-1-gigabit-throughput-pfsense/)",
    "mayrhofer": "René Mayrhofer, 'Firewall throughput measurements: OPNsense on APU4d4, OPNsense in a Proxmox VM, "
                "and OpenWRT on Turris Omnia' (https://www.mayrhofer.eu.org/post/firewall-throughput-opnsense-openwrt/)",
    "tucker": "Darren Tucker, 'Network performance tuning on pcengines APU2' (http://dtucker.freeshell.org/apu2/)",
    "calomel": "Calomel.org, 'FreeBSD Tuning and Optimization' (https://calomel.org/freebsd_network_tuning.html)",
    "netgate-virtio": "Netgate forum, 'Performance Measurments with VirtIO + Offloading on Atom C2358' "
                "(https://forum.netgate.com/topic/108187/performance-measurments-with-virtio-offloading-on-atom-c2358-updated)",
}
# loader.conf(5) module directives; the module part is MODULEEXPR '([-%w_]+)' of FreeBSD's Lua loader
# (stand/lua/config.lua, pattern_table), so intel-isa-aes_load is one too
LOADER_DIRECTIVE = re.compile(r"^[-A-Za-z0-9_]+_(load|name|type|flags|before|after|error)$")


# the numbers the articles had in linerate's research notes, should one reach a message from old data
NOTE_NUMBERS = {"000": "teklager", "001": "mayrhofer", "002": "tucker", "003": "calomel", "004": "netgate-virtio"}


def cites(text: str) -> str:
    """Text with every research-note number replaced by the article's title and address."""
    return re.sub(r"[Ss]eed (00\d)", lambda m: ARTICLES[NOTE_NUMBERS[m.group(1)]] if m.group(1) in NOTE_NUMBERS
                  else m.group(0), text)


def is_loader_directive(name: str) -> bool:
    """loader.conf(5) module directives (NAME_load, NAME_name, ...) and device hints (hint.DRIVER.N.KEY):
    loader(8) acts on them itself; they are not kernel tunables."""
    return bool(LOADER_DIRECTIVE.match(name)) or name.startswith("hint.")


def check_advice(family: str, kind: str, name: str) -> str:
    """The command that shows, on the box, whether NAME is accepted there. A *_load line loads a kernel
    module: kldstat(8) lists what is loaded. A loader.conf name without a dot is a loader(8) variable
    (loader_menu_title, autoboot_delay, console): kernel sysctl names always have a dot, so `sysctl -d`
    cannot show it; kenv(1) shows what the loader passed to the kernel."""
    if family == "freebsd" and kind == "loader" and name.endswith("_load") and is_loader_directive(name):
        module = name[:-len("_load")]
        return (f"check after boot with `kldstat -n {module}` (or `kldstat -v`, which lists the modules inside "
                "each loaded file; loader.conf(5): a module directive, not a sysctl)")
    if family == "freebsd" and kind == "loader" and (is_loader_directive(name) or "." not in name):
        return f"check after boot with `kenv {name}` (loader.conf(5): a loader variable, not a sysctl)"
    if family == "freebsd" and kind == "loader":
        return f"check with `sysctl -d {name}` after boot; if it is no sysctl, `kenv {name}` shows what the loader passed"
    if family == "freebsd":
        return f"check with `sysctl -d {name}` on the box"
    if family == "linux":
        return f"check with `sysctl {name}` on the box (procps' -d is only an alias of -h)"
    return f"check with `sysctl {name}` on the box"
