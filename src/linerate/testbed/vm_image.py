"""ImageVmTestbed: the user's own firewall image as the DUT — booted on a throwaway overlay, reached
only as the user reaches it: over SSH on its management NIC (no linerate agent in it).

    client ==[br-lan]== guest NIC 1 (LAN) | guest NIC 2 (WAN) ==[br-wan]== server
                         guest NIC 3 (management): qemu user network, port 22 -> 127.0.0.1:2222
                         inside the lab's dut namespace, where linerate's SSH session connects

The host side is the VM lab's (vm/plan.py); the image is never written (qemu opens a backing file
read-only; the overlay lives in the lab's VM directory and goes with the lab, `lab clean` included).
A Linux-family image (linux, openwrt) is configured by linerate over that SSH session with the same
commands as the built-in guest, on the NICs found by MAC whatever the image calls them; an image
whose product owns its configuration (OPNsense, pfSense) and the BSDs are checked, not changed.
Either way the path is checked before the first trial and every missing piece named at once.
Knobs (dut_sysctls, dut_offloads, offloads, the ruleset) are set on the running guest, whose disk
is the overlay: they end with the lab, and the image's own configuration is never touched.
"""

from __future__ import annotations

import json
import os
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from linerate.dut.base import detect_family
from linerate.dut.drivers import OS_DRIVERS, driver_for_os
from linerate.errors import ConfigError, ExecError, LabError
from linerate.exec import NetnsExecutor
from linerate.exec.netns_tunnel import NetnsTunnel
from linerate.exec.ssh import HostKeyError, SshError, SshExecutor, SshSession, SshTarget, SshUnreachable
from linerate.lab.apply import apply_plan
from linerate.lab.registry import LabRecord
from linerate.process import ProcessRef, process_start_time
from linerate.testbed.vm import VmTestbed
from linerate.topology.link import parse_dut_offloads
from linerate.topology.plan import ADDR, DUT_LAN_IF, DUT_WAN_IF
from linerate.trial import measure_read_cost_or_none
from linerate.vm.accel import choose_accel
from linerate.vm.byo import OVERLAY_NAME, create_overlay, overlay_backing
from linerate.vm.image_access import GUEST_CONNECT_TIMEOUT_S, MGMT_PORT, ImageAccess, image_access, missing_pieces
from linerate.lab.conform import prefetched_drift
from linerate.vm.plan import GUEST, guest_commands, guest_plan
from linerate.vm.qemu import LAN_MAC, WAN_MAC, VmSpec
from linerate.vm.state import read_vm_state, verify_vm


BOOT_PROGRESS_S = 10.0  # a line while it boots: an OPNsense image under TCG takes minutes
LOGIN_RETRY_S = 2.0  # between login attempts to a guest whose sshd answers but gives no session yet


class ImageVmTestbed(VmTestbed):
    """A VM lab whose DUT is an own image (dut_image), driven over SSH."""

    def __init__(self, *args, on_message=lambda message: None, **kwargs):
        super().__init__(*args, **kwargs)
        self.on_message = on_message  # progress while the image boots
        self.access: ImageAccess | None = None
        self.session: SshSession | None = None
        self.names = {DUT_LAN_IF: DUT_LAN_IF, DUT_WAN_IF: DUT_WAN_IF}  # role name -> the guest's own name
        self.knob_state: dict = {}  # a BSD image's knobs as read back (apply_driver_knobs)
        self.driver = driver_for_os(self.vm.os)

    def describe_plan(self) -> str:
        host = self.host_plan().describe()
        return (f"{host}\nip netns exec {self.spec.netns('dut')} qemu-system-x86_64 ... (accel {self.vm.accel}, "
                f"{self.vm.vcpus} vCPU, {self.vm.memory_mb} MiB) on an overlay of {self.vm.image}\n"
                f"ssh {self.vm.ssh_user}@127.0.0.1:{MGMT_PORT} (in {self.spec.netns('dut')}): addresses, ruleset and "
                f"knobs ({self.vm.os})")

    def up(self) -> "ImageVmTestbed":
        accel = choose_accel(self.vm.accel)
        self.access = image_access(self.vm.image, self.vm.ssh_user, self.vm.ssh_key, self.vm.host_keys,
                                   self.vm.boot_timeout_s, accel)
        owner = None if self.keep else ProcessRef.of(os.getpid())
        record = LabRecord(self.spec.lab_id, str(self.spec.firewall), self.spec.mtu, owner, params=self.params,
                           cpus=sorted(os.sched_getaffinity(0)))
        self.registry.create(record)
        self.record, self.record_is_ours = record, True
        self.make_scratch()
        self.directory.mkdir(mode=0o700)
        overlay = create_overlay(self.access.image, self.directory)
        # an absolute path, for commands that log in to this lab later from another directory (--lab)
        self.record.vm["key_path"] = str(self.access.key.absolute())

        def remember(ns: str) -> None:
            self.record.namespaces.append(ns)
            self.registry.save(self.record)

        try:
            apply_plan(self.host_plan(), on_namespace=remember, on_tap=self._open_tap)
            pid, started = self._start_qemu(overlay, accel)
        finally:
            for fd in (fd for fds in self.taps.values() for fd in fds):
                os.close(fd)
            self.taps.clear()
        boot_s = self._wait_for_sshd(pid, started)
        problems = [] if boot_s is not None else [
            f"an SSH server answering on the management NIC within {self.access.boot_timeout_s:.0f} s (sshd started "
            "at boot, DHCP on the third NIC: virtio, MAC 52:54:00:4c:52:03; or more time: --boot-timeout); "
            f"console: {self._console_tail()}"]
        if boot_s is not None:
            problems += self._login(deadline=started + self.access.boot_timeout_s)
        if not problems:
            self.vm_info.update({"boot_to_ready_s": round(boot_s, 2), "kernel": self._guest_release(),
                                 "image": str(self.access.image), "os": self.vm.os})
            self.record.vm.update({k: self.vm_info[k] for k in ("boot_to_ready_s", "kernel", "image", "os")})
            self.registry.save(self.record)
        configures = self.driver.configures_guest
        if configures and not problems:
            self._configure()
        elif not configures:
            self._keep_names(dict(zip((DUT_LAN_IF, DUT_WAN_IF), self.driver.virtio_nics)))
            if not problems:  # its runtime knobs (ifconfig flags, sysctls) through the OS's driver
                self.knob_state = apply_driver_knobs(self.driver, self.executor("dut"), self.names, self.spec.offloads,
                                                     parse_dut_offloads(self.params.get("dut_offloads", "default")),
                                                     self.spec.dut_sysctls)
        if not (configures and problems):  # an image that sets its own addresses is checked even without a login
            problems += self._path_problems()
        if problems:
            raise ConfigError("dut_image", f"{self.access.image.name} ({self.vm.os}) is missing: " + "; ".join(problems))
        if configures:
            self.state = read_vm_state(self.spec, self.vm, self.executor("dut"), self.vm_info, guest_names=self.names)
            verify_vm(self.spec, self.vm, self.state)
            self._verify_dut_offloads()
        else:
            self.state = {"vm": {k: v for k, v in self.vm_info.items() if k not in ("argv", "qemu_pid")},
                          **self.knob_state}
        self.start_server()
        self.read_cost_s = measure_read_cost_or_none(self.driver, self.executor("dut"))
        self.state["vm"]["placement"] = self.placement.summary()
        self.state["vm"]["telemetry_read_ms"] = None if self.read_cost_s is None else round(self.read_cost_s * 1000, 1)
        return self

    # --- booting --------------------------------------------------------------------------------

    def _start_qemu(self, overlay: Path, accel: str) -> tuple[int, float]:
        console = self.directory / "console.log"
        spec = VmSpec(f"linerate-{self.spec.lab_id}", vcpus=self.vm.vcpus, memory_mb=self.vm.memory_mb, accel=accel,
                      queues=self.vm.queues, vhost=self.vm.vhost, virtio=self.vm.virtio, disk=overlay,
                      mgmt_ssh_port=MGMT_PORT, console_log=console, mtu=self.spec.mtu)
        pid, started, argv = self._spawn_qemu(spec)
        self.vm_info = {"accel": accel, "vcpus": self.vm.vcpus, "memory_mb": self.vm.memory_mb, "qemu_pid": pid,
                        "argv": argv}
        self.record.vm.update({"accel": accel, "vcpus": self.vm.vcpus, "memory_mb": self.vm.memory_mb,
                               "queues": self.vm.queues, "virtio_offloads": self.vm.virtio_text})
        return pid, started

    def _console_tail(self) -> str:
        path = self.directory / "console.log"
        lines = [line.strip() for line in path.read_text(errors="replace").splitlines() if line.strip()] \
            if path.exists() else []
        return " | ".join(lines[-4:])[-400:] or "(nothing on the serial console)"

    def _wait_for_sshd(self, pid: int, started: float) -> float | None:
        """Seconds until the guest's sshd sends its banner through the forward; None when it never
        does within the boot timeout (the image lacks a piece); LabError when qemu dies."""
        tunnel = NetnsTunnel(self.spec.netns("dut"))
        timeout = self.access.boot_timeout_s
        said = started
        while True:
            if time.monotonic() - said >= BOOT_PROGRESS_S:
                said = time.monotonic()
                accel, last = self.vm_info.get("accel", self.vm.accel), self._console_tail().rsplit(" | ", 1)[-1]
                self.on_message(f"VM DUT: {self.access.image.name} booting ({accel}), {said - started:.0f} s of "
                                f"{timeout:.0f}; console: {last[-120:]}")
            if _banner(tunnel):
                self._pin_threads(pid)
                return time.monotonic() - started
            if process_start_time(pid) is None:
                raise LabError(f"VM DUT: qemu exited while {self.access.image.name} booted; console: "
                               f"{self._console_tail()}; qemu: {self._qemu_log()}")
            if time.monotonic() - started > timeout:
                return None
            time.sleep(1.0)

    def _qemu_log(self) -> str:
        path = self.directory / "qemu.log"
        return (path.read_text(errors="replace").strip()[-300:] if path.exists() else "") or "(no message)"

    def _login(self, deadline: float) -> list[str]:
        """Log in to the guest; what the image lacks for it (a key it accepts, the host key named). A guest
        that sends its banner may still be booting (under TCG, loaded: a key exchange outlasting the connect
        timeout, CI here): no session is tried again until the boot's deadline; a refused key is not."""
        known_hosts = self.directory / "known_hosts"
        fd = os.open(known_hosts, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        with os.fdopen(fd, "w") as handle:
            handle.write(self.access.known_hosts_text())
        target = SshTarget(self.access.user, "127.0.0.1", MGMT_PORT, identity=str(self.access.key))
        self.session = SshSession(target, known_hosts, accept_new=not self.access.host_keys,
                                  on_message=self.on_message, via=NetnsTunnel(self.spec.netns("dut")),
                                  connect_timeout_s=GUEST_CONNECT_TIMEOUT_S)
        try:
            self._connect_until(deadline)
        except SshUnreachable as exc:
            self.session = None
            return [f"an SSH session with it before the boot timeout ({self.access.boot_timeout_s:.0f} s; its sshd "
                    f"sent its banner, and then: {str(exc)[-120:]}; or more time: --boot-timeout)"]
        except ConfigError as exc:  # the key file itself (not a private key linerate can use)
            self.session = None
            return [f"a private key linerate can use: --dut-key {exc.problem}"]
        except HostKeyError:
            self.session = None
            return [f"the host key named ({self.vm.host_keys or str(self.access.image) + '.host_keys'}) on its sshd: it "
                    "presents another; name the image's own host keys (its /etc/ssh/ssh_host_*_key.pub)"]
        except SshError as exc:
            self.session = None
            return [f"a login for {self.access.user} with {self.access.key} (the public half in that user's "
                    f"authorized_keys; sshd said: {str(exc)[-120:]})"]
        self.vm_info["host_key"] = self.session.host_key_fingerprint
        self.vm_info["host_key_source"] = "named" if self.access.host_keys else "first seen in this lab"
        return []

    def _connect_until(self, deadline: float) -> None:
        """The session, tried again while the guest is unreachable and the deadline allows. An attempt has up to
        three steps' timeouts (SshSession.connect), each at most a third of the time left: the last attempt ends
        by the deadline, not a connect timeout past it."""
        said = 0.0
        while True:
            left = deadline - time.monotonic()
            self.session.connect_timeout_s = max(1.0, min(GUEST_CONNECT_TIMEOUT_S, left / 3))
            try:
                self.session.connect()
                self.session.connect_timeout_s = GUEST_CONNECT_TIMEOUT_S  # for a reconnect later in this command
                return
            except SshUnreachable as exc:
                if time.monotonic() + LOGIN_RETRY_S >= deadline:
                    raise
                if time.monotonic() - said >= BOOT_PROGRESS_S:
                    said = time.monotonic()
                    self.on_message(f"VM DUT: {self.access.image.name} sent its SSH banner but gives no session yet "
                                    f"({str(exc)[-80:]}); trying again until the boot timeout")
            time.sleep(LOGIN_RETRY_S)

    def _guest_release(self) -> str:
        return self.executor("dut").run(["uname", "-sr"], timeout_s=15).stdout.strip()

    def _guest_now(self) -> tuple[dict, list[str]]:
        """The kept image lab's guest as read now: its kernel (and from `uname -s` the OS family, which
        must be its dut_os's), the image its qemu's overlay is backed by, the host key its sshd showed this
        login, and its LAN and WAN NICs' names (a Linux image's found by MAC again, a BSD's its driver's)."""
        kernel = self._guest_release()  # logs in first: the session's host key is known after
        problems = []
        family = detect_family(kernel.split(" ", 1)[0])
        if family != OS_DRIVERS[self.vm.os]:
            problems.append(f"its guest runs {kernel[:60]!r}, not the {self.vm.os} the file says")
        image = overlay_backing(self.directory / OVERLAY_NAME)
        if image is None:
            problems.append(f"its overlay ({self.directory / OVERLAY_NAME}) names no backing image")
        names = self._nic_names() if self.driver.configures_guest else \
            dict(zip((DUT_LAN_IF, DUT_WAN_IF), self.driver.virtio_nics))
        recorded = {port: (self.record.vm or {}).get(f"{port}_name") for port in names}
        problems += [f"its record says the guest calls {port} {said!r}; the guest calls it {names[port]!r}"
                     for port, said in recorded.items() if said != names[port]]
        self.names = names
        return {"kernel": kernel, "image": image, "os": self.vm.os, "host_key": self.session.host_key_fingerprint,
                "guest_interfaces": names}, problems

    def _guest_knob_drift(self) -> list[str]:
        """A Linux image: the built-in guest's plan on its own NIC names (its dut_offloads included); a BSD
        image: the knobs its driver set at boot, read back through it again."""
        dut = self.executor("dut")
        dut_offloads = parse_dut_offloads(self.params.get("dut_offloads", "default"))
        if not self.driver.configures_guest:
            wanted = driver_knobs(self.names, self.spec.offloads, dut_offloads)
            return read_driver_knobs(self.driver, dut, wanted, self.spec.dut_sysctls)[1]
        plan = guest_plan(self.spec, self.names[DUT_LAN_IF], self.names[DUT_WAN_IF], dut_offloads,
                          rx_queues=min(self.vm.queues, self.vm.vcpus))
        return prefetched_drift(plan, GUEST, lambda argvs: dut.run_many(argvs, timeout_s=30))

    def guest_snapshot(self, ports: tuple[str, ...] = (), processes: bool = False) -> dict:
        """A Linux image's qdiscs, net sysctls and lab ports' offloads (not its processes: a full OS starts
        timers and daemons by itself); a BSD image's knobs are read back through its driver alone."""
        if not self.driver.configures_guest:
            return {}
        said = self.record.vm if self.record is not None and isinstance(self.record.vm, dict) else {}
        names = [said.get(f"{port}_name") or self.names[port] for port in (DUT_LAN_IF, DUT_WAN_IF)]
        return super().guest_snapshot(tuple(names), processes=False)  # a kept lab's: the names its record holds

    def _nic_names(self, by_mac: dict | None = None) -> dict[str, str]:
        """lan0/wan0 -> a Linux image's own names of its LAN and WAN NICs, found by MAC."""
        by_mac = self._links_by_mac() if by_mac is None else by_mac
        missing = [f"{role} NIC (MAC {mac})" for role, mac in (("LAN", LAN_MAC), ("WAN", WAN_MAC))
                   if not isinstance(by_mac.get(mac), str)]
        if missing:
            raise ConfigError("dut_image", f"the guest has no {' and no '.join(missing)}: its kernel needs virtio-net")
        return {DUT_LAN_IF: by_mac[LAN_MAC], DUT_WAN_IF: by_mac[WAN_MAC]}

    def _links_by_mac(self) -> dict:
        """A Linux image's links, MAC -> name (`ip -j link show`)."""
        try:
            links = json.loads(self.executor("dut").run(["ip", "-j", "link", "show"], timeout_s=15).stdout or "[]")
        except (ExecError, ValueError):
            raise ConfigError("dut_image", f"{self.vm.image[:200]} ({self.vm.os}) is missing: iproute2's `ip` with "
                              "JSON output (`ip -j link show`; OpenWrt: package ip-full)") from None
        if not isinstance(links, list) or not all(isinstance(link, dict) for link in links):
            raise ConfigError("dut_image", f"{self.vm.image[:200]}: `ip -j link show` printed no list of links")
        return {link.get("address"): link.get("ifname") for link in links}

    # --- configuring and checking -------------------------------------------------------------------

    def _configure(self) -> None:
        """A Linux image: addresses, forwarding, ruleset and knobs with the built-in guest's commands,
        on the NICs found by MAC (a BSD image's own configuration owns these: it is checked, not changed)."""
        dut = self.executor("dut")
        by_mac = self._links_by_mac()
        self._keep_names(self._nic_names(by_mac))
        offloads = parse_dut_offloads(self.params.get("dut_offloads", "default"))
        unknown = sorted({ifname for ifname, _, _ in offloads} - set(by_mac.values()))
        if unknown:
            raise ConfigError("dut_offloads", f"the guest has no interface {', '.join(unknown)} (it has "
                              f"{', '.join(sorted(n for n in by_mac.values() if n))})")
        script = []
        for argv, stdin in guest_commands(self.spec, self.names[DUT_LAN_IF], self.names[DUT_WAN_IF], offloads):
            script.append((argv, stdin))
        for argv, stdin in script:
            try:
                dut.run(argv, stdin=stdin, timeout_s=30)
            except ExecError as exc:
                raise LabError(f"VM DUT {self.access.image.name}: {' '.join(argv[:4])} refused: "
                               f"{exc.stderr.strip()[-200:]}") from None

    def _verify_dut_offloads(self) -> None:
        problems = []
        for ifname, feature, wanted in parse_dut_offloads(self.params.get("dut_offloads", "default")):
            got = self.driver.read_offloads(self.executor("dut"), ifname).get(feature)
            self.state.setdefault("dut_offloads", {}).setdefault(ifname, {})[feature] = got
            if got is None or got.split()[0] != wanted:
                problems.append(f"{ifname} {feature}={wanted}: the guest reports '{got}'")
        if problems:
            raise LabError("a DUT offload did not take effect: " + "; ".join(problems))

    def _path_problems(self) -> list[str]:
        """Ping the DUT's LAN address from the client, its WAN address from the server, and the
        server through it: every failure is a missing piece."""
        checks = {"lan": ("client", ADDR[("dut_lan", 4)][0]), "wan": ("server", ADDR[("dut_wan", 4)][0]),
                  "through": ("client", ADDR[("server", 4)][0])}
        with ThreadPoolExecutor(len(checks)) as pool:  # a missing piece costs its ping's 2 s once, not thrice
            results = {name: pool.submit(NetnsExecutor(self.spec.netns(role)).run,
                                         ["ping", "-n", "-q", "-c", "2", "-i", "0.3", "-W", "2", address],
                                         timeout_s=15, check=False) for name, (role, address) in checks.items()}
        return missing_pieces(self.vm.os, {name: result.result().returncode == 0 for name, result in results.items()},
                              self.driver.configures_guest)

    # --- the Testbed protocol -----------------------------------------------------------------------

    def executor(self, role: str):
        if role != "dut":
            return super().executor(role)
        if self.session is None:  # a kept lab another command brought up: its record names the key it logged in with
            key = (self.record.vm or {}).get("key_path") if self.record is not None else None
            if not isinstance(key, str) or not key.startswith("/"):
                raise LabError(f"lab {self.spec.lab_id}: its record names no key for its image's SSH; remove the lab "
                               f"(`linerate lab down {self.spec.lab_id}`) and bring it up again")
            target = SshTarget(self.vm.ssh_user, "127.0.0.1", MGMT_PORT, identity=key)
            self.session = SshSession(target, self.directory / "known_hosts",  # the host key its first login saw
                                      via=NetnsTunnel(self.spec.netns("dut")), connect_timeout_s=GUEST_CONNECT_TIMEOUT_S)
        return SshExecutor(self.session)

    def _keep_names(self, names: dict[str, str]) -> None:
        """The guest's names of lan0/wan0, in the lab's record too: for commands that use it later (--lab)."""
        self.names = names
        self.record.vm.update({f"{port}_name": name for port, name in names.items()})
        self.registry.save(self.record)

    def dut_ifname(self, port: str) -> str:
        """The guest's own name of lan0/wan0: found when it booted, or read again by a kept lab's command."""
        return self.names.get(port, port)

    def knob_choices(self) -> dict[str, list[tuple]]:
        choices = super().knob_choices()
        if not self.driver.configures_guest:
            choices.pop("dut_sysctls", None)
        return choices

    def down(self) -> list[str]:
        if self.session is not None:
            self.session.close()
            self.session = None
        return super().down()


def apply_driver_knobs(driver, dut, names: dict[str, str], offloads, dut_offloads, sysctls) -> dict:
    """A BSD image's runtime knobs, set through its OS's driver (ifconfig capabilities, sysctl) as on an
    SSH testbed, then read back: `offloads` on the DUT's side by role (lan0/wan0 -> the image's NICs, so
    "dut:tso=off" is the guest level of the Netgate thread's matrix), `dut_offloads` by the image's own
    names. LabError naming each knob the guest does not show as asked. Nothing is journaled: the guest
    runs on a throwaway overlay and every knob ends with the lab."""
    wanted = driver_knobs(names, offloads, dut_offloads)
    for ifname, feature, state in wanted:
        driver.set_offload(dut, ifname, feature, state)
    for name, value in sysctls:
        driver.set_sysctl(dut, name, value)
    state, problems = read_driver_knobs(driver, dut, wanted, sysctls)
    if problems:
        raise LabError("a DUT knob did not take effect: " + "; ".join(problems))
    return state


def driver_knobs(names: dict[str, str], offloads, dut_offloads) -> list[tuple[str, str, str]]:
    """(the image's interface, feature, state) of every offload asked of a BSD image's driver."""
    return [(names.get(ifname, ifname), feature, state) for role, ifname, feature, state in offloads
            if role == "dut"] + list(dut_offloads)


def read_driver_knobs(driver, dut, wanted, sysctls) -> tuple[dict, list[str]]:
    """The knobs as the guest shows them through its driver, and each that is not as asked."""
    state: dict = {"dut_offloads": {}, "dut_sysctls": {}}
    problems = []
    for ifname, feature, want in wanted:
        got = state["dut_offloads"].setdefault(ifname, driver.read_offloads(dut, ifname)).get(feature)
        if got != want:
            problems.append(f"{ifname} {feature}={want}: the guest reports {got or 'nothing'}")
    for name, value in sysctls:
        state["dut_sysctls"][name] = got = driver.read_sysctl(dut, name)
        if got != value:
            problems.append(f"{name}={value}: the guest reports {got}")
    return state, problems


def _banner(tunnel: NetnsTunnel) -> bool:
    """True when an SSH server answers at 127.0.0.1:MGMT_PORT in the tunnel's namespace (qemu's
    forward accepts at once and closes when the guest does not listen yet)."""
    try:
        sock = tunnel.open_socket()
    except OSError:
        return False
    try:
        sock.setblocking(True)
        sock.settimeout(3.0)
        sock.connect(("127.0.0.1", MGMT_PORT))
        return sock.recv(64).startswith(b"SSH-")
    except OSError:
        return False
    finally:
        sock.close()
