"""loader.conf(5) lines that name FreeBSD kernel modules, judged by the modules each release's base
system builds (names/freebsd-modules.tsv: KMOD= of sys/modules, tools/extract_freebsd_modules.py):

- `NAME_load="YES"` for a module the base system stopped building (or linking: em's Makefile installs
  if_igb.ko as a link to if_em.ko, so if_igb still loads; or declaring: a MODULE_VERSION compiled into
  the kernel is found there) before every release judged: renamed in base (fuse: fusefs since 12.1,
  whose fuse.ko link went in 13.0), a warning: the loader prints "can't find 'NAME'" and loads nothing;
  otherwise a note, since a port may install it into /boot/modules (drm2's radeonkms went to
  drm-kmod). A name no release ever built is left alone (ports' modules: nvidia, vboxdrv ...).
- `NAME="YES"` where NAME is a module of those releases and no loader variable: the loader keeps it as
  an environment variable and loads nothing; loader.conf(5) loads a module only through `NAME_load`.
"""

from __future__ import annotations

from linerate.tuning.sources import SourceList, freebsd_modules

YES = ("yes", "YES", "Yes")


def module_line(s, span: tuple, label: str, declared: SourceList | None) -> tuple[str, str, str, str] | None:
    """(code, severity, message, fix) for a module line that loads nothing, else None."""
    modules = freebsd_modules()
    value = s.value.strip().strip('"')
    if s.key.endswith("_load") and value in YES:
        module = s.key[:-len("_load")]
        presence = modules.presence(module, *span)
        if presence.state != "removed":
            return None
        # a module renamed by lengthening (fuse -> fusefs); a near spelling is not offered: if_igc is
        # another driver than if_igb, not its new name
        renamed = sorted(name for name in modules.rows if name.startswith(module) and name != module
                         and modules.presence(name, *span).state == "exists")
        gone = (f"{module} is no kernel module of {label}'s base system: it built it up to {presence.last} "
                f"({presence.origin}), not from {presence.gone}")
        if len(renamed) == 1:  # renamed in base: the old name loads nothing
            return ("LR001", "warning", f"{gone}, when it became {renamed[0]}; the loader prints \"can't find "
                    f"'{module}'\" and loads nothing", f'load {renamed[0]} instead ({renamed[0]}_load="YES")')
        return ("LR016", "info", f"{gone}; unless a port installs it into /boot/modules (drm-kmod's radeonkms, "
                "say), the loader prints \"can't find\" and loads nothing",
                f"check `ls /boot/modules/{module}.ko /boot/kernel/{module}.ko`; neither there: delete the line")
    if "." in s.key or value not in YES or s.key.endswith("_load"):
        return None
    if modules.presence(s.key, *span).state != "exists" or (declared is not None and declared.declared(s.key)):
        return None
    return ("LR002", "warning", f"{s.key}=\"{value}\" loads nothing: {s.key} is a kernel module of {label} "
            f"({modules.rows[s.key][0].origin}), and loader.conf(5) loads a module only through {s.key}_load; "
            "a bare name is kept as a loader variable no one reads", f'write {s.key}_load="YES"')
