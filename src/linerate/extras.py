"""Optional dependencies: which pip extra brings which module, and the one-line message when one is
missing.

The base install (`pip install linerate-lab`, `pipx install linerate-lab`) reads files only: calc,
audit, explain, recommend, diagnose of pasted outputs, report/list/compare of a results database.
The lab (netlink, nftables, qemu), SSH testbeds, the searches and the tcpdump timings need the `lab`
extra and the apt packages `make install` installs; charts (html reports, --plot) need matplotlib
(`plots`, also in `lab`); shell completion needs shtab (`completion`, also in `lab`).

Two places use this table: a command that needs an extra checks it before doing anything
(`require`), and the CLI's edge turns a ModuleNotFoundError of a module listed here, raised
anywhere, into the same one line (`missing_module_error`), so no command needs a try/except of its
own.
"""

from __future__ import annotations

import importlib.util

from linerate.errors import LinerateError

DISTRIBUTION = "linerate-lab"

# extra -> the top-level modules it installs (import names, as in `import X`)
EXTRAS: dict[str, tuple[str, ...]] = {
    "lab": ("pyroute2", "asyncssh", "MLRsearch", "dpkt", "matplotlib"),
    "plots": ("matplotlib",),
    "completion": ("shtab",),
}

# what the lab needs beyond Python packages; `make install` installs the full list (Makefile APT_PACKAGES)
LAB_SYSTEM_HINT = ("and the lab's apt packages (iperf3, nftables, iproute2, netsniff-ng, qemu-system-x86, ...: "
                   "`make install` as root in a linerate checkout installs all of them)")


class MissingExtraError(LinerateError):
    """A command needs modules the installed extras do not bring. Exit 2: the user's to fix."""

    exit_code = 2


def missing(extra: str) -> list[str]:
    """The modules of `extra` that cannot be imported here (found without importing them)."""
    return [name for name in EXTRAS[extra] if importlib.util.find_spec(name) is None]


def install_hint(extra: str) -> str:
    hint = f"pip install '{DISTRIBUTION}[{extra}]'"
    return f"{hint} {LAB_SYSTEM_HINT}" if extra == "lab" else hint


def require(extra: str, what: str) -> None:
    """Raise MissingExtraError (one line: what needs it, what is missing, what to install) unless
    every module of `extra` is installed."""
    absent = missing(extra)
    if absent:
        raise MissingExtraError(f"{what} needs the '{extra}' extra ({', '.join(absent)} not installed): "
                                f"{install_hint(extra)}")


def extra_for(module_name: str | None) -> str | None:
    """The smallest extra that brings the top-level module of `module_name`, or None (not ours)."""
    top = (module_name or "").split(".")[0]
    holders = [extra for extra, modules in EXTRAS.items() if top in modules]
    return min(holders, key=lambda extra: len(EXTRAS[extra])) if holders else None


def missing_module_error(exc: ModuleNotFoundError, what: str) -> MissingExtraError | None:
    """The one-line error for an import of an optional module that failed, or None when the module
    is none of the extras' (a real bug: keep the traceback)."""
    extra = extra_for(exc.name)
    if extra is None:
        return None
    return MissingExtraError(f"{what} needs {exc.name.split('.')[0]}, from the '{extra}' extra: "
                             f"{install_hint(extra)}")
