"""How linerate reaches an own image's DUT: the key it logs in with, the host keys it trusts, the
user, how long a boot may take — from the lab's axes, else the files beside the image
(`IMG.key`, `IMG.host_keys`: what `linerate image build` writes). Pure but for reading those files.

The management path is qemu's user network inside the lab's own dut namespace: the guest's port 22
is forwarded to 127.0.0.1:MGMT_PORT there, where nothing but this lab listens. When no host key is
named, the key the guest presents at its first login in this lab is the one trusted for the rest of
it (stored in the lab's own known_hosts, said in the run's messages): no other host can answer on a
port inside a namespace only this lab uses.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from linerate.errors import ConfigError
from linerate.inputs import read_text

MAX_HOST_KEYS_BYTES = 64 * 1024
MGMT_PORT = 2222  # 127.0.0.1:2222 in the lab's dut namespace -> the guest's port 22
# One step of an SSH login to the guest (a key exchange; authentication): the guest's crypto runs emulated under
# TCG (the first login after boot: ~7.6 s for two exchanges, idle here), past the 10 s a real host gets (exec/ssh.py)
# when the host is loaded.
GUEST_CONNECT_TIMEOUT_S = 30.0
BOOT_TIMEOUT_S = {"kvm": 120.0, "tcg": 300.0}  # an own image: a full OS (the reference image: ~20 s under TCG here)
KEY_TYPES = ("ssh-ed25519", "ssh-rsa", "ecdsa-sha2-nistp256", "ecdsa-sha2-nistp384", "ecdsa-sha2-nistp521")
PRODUCTS = ("opnsense", "pfsense")  # their own config owns addresses and rules: checked, never set


@dataclass(frozen=True)
class ImageAccess:
    image: Path
    user: str
    key: Path
    host_keys: tuple[str, ...]  # "type base64" lines; () = trust the first key seen in this lab
    boot_timeout_s: float

    def known_hosts_text(self) -> str:
        return "".join(f"[127.0.0.1]:{MGMT_PORT} {line}\n" for line in self.host_keys)


def _host_key_lines(text: str, where: str) -> tuple[str, ...]:
    """`type base64` from each line of an OpenSSH .pub file or a known_hosts file (a leading host
    pattern is dropped: the guest is reached at a lab-private address, not by its name)."""
    lines = []
    for raw in text.splitlines():
        words = raw.split()
        if not words or words[0].startswith("#"):
            continue
        if words[0] not in KEY_TYPES and len(words) >= 3 and words[1] in KEY_TYPES:
            words = words[1:]
        if words[0] not in KEY_TYPES or len(words) < 2:
            raise ConfigError("dut_host_keys", f"{where}: a line is not a public host key ('ssh-ed25519 AAAA...' "
                              "as in the image's /etc/ssh/ssh_host_*_key.pub, or a known_hosts line)")
        lines.append(f"{words[0]} {words[1]}")
    if not lines:
        raise ConfigError("dut_host_keys", f"{where} holds no host key; give the image's /etc/ssh/ssh_host_*_key.pub")
    return tuple(lines)


def image_access(image: str, user: str, key: str, host_keys: str, boot_timeout_s: float,
                 accel: str) -> ImageAccess:
    """ConfigError naming every problem at once (a missing image, key or host-key file)."""
    path = Path(image).expanduser()
    problems = []
    if not path.is_file():
        problems.append(f"dut_image = {image[:200]!r} is not a file")
    key_path = Path(key).expanduser() if key else Path(f"{path}.key")
    if not key_path.is_file():
        what = "is not a regular file" if os.path.lexists(key_path) else "does not exist"
        problems.append(f"no private key to log in with: {'dut_ssh_key = ' + repr(key[:200]) if key else str(key_path)[:200]}"
                        f" {what}; name the key whose public half is in the image's authorized_keys "
                        "(--dut-key / dut_ssh_key)")
    keys: tuple[str, ...] = ()
    keys_path = Path(host_keys).expanduser() if host_keys else Path(f"{path}.host_keys")
    if host_keys or os.path.lexists(keys_path):
        try:  # a regular file of a sane size, opened without blocking (a FIFO, /dev/zero: refused)
            keys = _host_key_lines(read_text(keys_path, MAX_HOST_KEYS_BYTES, "host key file"), str(keys_path)[:200])
        except ConfigError as exc:
            problems.append(f"dut_host_keys: {str(keys_path)[:200]}: {exc.problem}")
    if problems:
        raise ConfigError("dut_image", "; ".join(problems))
    timeout = boot_timeout_s or BOOT_TIMEOUT_S[accel]
    return ImageAccess(path.resolve(), user, key_path, keys, timeout)


def missing_pieces(os_name: str, answers: dict[str, bool], configured_by_linerate: bool) -> list[str]:
    """What the image lacks, from the path checks made after login (`answers`: check -> passed),
    each said as what to put in the image (docs/own-image.md, per OS)."""
    owner = ("linerate" if configured_by_linerate else
             "the image's own configuration (its web UI or config.xml)" if os_name in PRODUCTS else
             "the image's own configuration (rc.conf or hostname.if, see docs/own-image.md)")
    wants = {
        "lan": f"the LAN NIC (the first, MAC 52:54:00:4c:52:01) answering at 198.18.0.1/24, set by {owner}",
        "wan": f"the WAN NIC (the second, MAC 52:54:00:4c:52:02) answering at 198.19.0.1/24, set by {owner}",
        "through": "forwarding from LAN to WAN with the firewall passing 198.18.0.0/24 -> 198.19.0.0/24 "
                   "(ICMP and TCP/UDP port 5201)",
    }
    return [wants[name] for name, passed in answers.items() if not passed]
