"""Command line: argument parsing and printing only. Library code raises; this turns domain
errors into one line on stderr and an exit code (2 for bad input, 1 for failures)."""

from __future__ import annotations

import argparse
import contextlib
import math
import re
import sqlite3
import sys
from collections.abc import Sequence

from linerate import __version__
from linerate.errors import Interrupted, LinerateError, PreflightError
from linerate.extras import missing_module_error, require

# command -> the module that registers it: a run of one command imports only that module
# (bench/cli_startup.py); help, errors and unknown commands still see every command.
COMMANDS = {"lab": "lab_cmds", "doctor": "lab_cmds", "trial": "trial_cmds", "demo": "trial_cmds",
            "run": "experiment_cmds", "tune": "experiment_cmds", "report": "experiment_cmds", "list": "experiment_cmds",
            "compare": "experiment_cmds", "import": "experiment_cmds", "export": "experiment_cmds", "calc": "calc_cmd",
            "audit": "tuning_cmds", "explain": "tuning_cmds", "recommend": "tuning_cmds",
            "testbed": "testbed_cmds", "diagnose": "diagnose_cmd", "rfc2544": "search_cmds", "cps": "cps_cmd",
            "rfc9693": "rfc9693_cmd", "completion": "completion_cmd", "image": "image_cmd"}
COMMAND_MODULES = tuple(dict.fromkeys(COMMANDS.values()))
# commands that build labs, reach hosts or search: they need the `lab` extra (linerate/extras.py);
# the others read files and run from the base install
LAB_COMMANDS = frozenset({"lab", "doctor", "trial", "demo", "run", "tune", "testbed", "rfc2544", "cps",
                          "rfc9693", "image"})


def ascii_int(text: str) -> int:
    """argparse's `type=int`, in ASCII: int() takes '٣' (an Arabic-Indic three) and '1_000'."""
    if not re.fullmatch(r"-?[0-9]{1,20}", text):
        raise argparse.ArgumentTypeError(f"{text[:30]!r} is not a whole number (ASCII digits)")
    return int(text)


def ascii_float(text: str) -> float:
    """argparse's `type=float`, in ASCII and finite: float() takes '٣', 'nan', 'inf' and '1e400'."""
    if not re.fullmatch(r"-?([0-9]{1,20}(\.[0-9]{0,20})?|\.[0-9]{1,20})([eE][-+]?[0-9]{1,3})?", text):
        raise argparse.ArgumentTypeError(f"{text[:30]!r} is not a number (ASCII digits)")
    value = float(text)
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"{text[:30]!r} is out of range")
    return value


class OneLineParser(argparse.ArgumentParser):
    """argparse prints usage plus the error; we print one line naming the option, exit 2. Every
    `type=int` / `type=float` of every command reads ASCII digits only (ascii_int, ascii_float):
    argparse looks a type up in the parser's registry before calling it."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.register("type", int, ascii_int)
        self.register("type", float, ascii_float)

    def error(self, message: str) -> None:  # type: ignore[override]
        sys.stderr.write(f"linerate: {_one_line(message.replace('argument ', ''))}\n")
        sys.exit(2)


def _one_line(text: str) -> str:
    from linerate.report.layout import plain

    return plain(text)


def modules_for(argv: Sequence[str] | None) -> tuple[str, ...]:
    """Which command modules a parse of argv needs: the named command's, none for a bare
    --version, all otherwise (help, mistakes, no command)."""
    if argv is None:
        return COMMAND_MODULES
    words = [a for a in argv if not a.startswith("-")]
    if words and words[0] in COMMANDS and "-h" not in argv[:1] and "--help" not in argv[:1]:
        return (COMMANDS[words[0]],)
    if list(argv) == ["--version"]:
        return ()
    return COMMAND_MODULES


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    import importlib

    parser = OneLineParser(
        prog="linerate",
        description="Firewall/router throughput lab and tuning workbench.",
        epilog="Example: linerate trial --family 6 --streams 4 --firewall stateful",
    )
    parser.add_argument("--version", action="version", version=f"linerate {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=OneLineParser)
    for name in modules_for(argv):
        importlib.import_module(f"linerate.cli.{name}").register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; everything it prints goes through the one printing path (cli/printing.py),
    which shows control characters from outside (a DUT's output, a file, a name) as \\xNN."""
    from linerate.cli.printing import guarded

    with guarded():
        return _main(argv)


# Commands that only print what is stored or computed: a reader that stops reading (`| head`) loses nothing
PRINT_ONLY = {"report", "list", "compare", "calc", "audit", "explain", "recommend", "diagnose", "doctor", "completion"}


def _main(argv: Sequence[str] | None) -> int:
    args = None
    try:  # Ctrl-C during start-up (imports, parsing) is an interruption too, not a traceback
        words = sys.argv[1:] if argv is None else list(argv)
        args = build_parser(words).parse_args(words)
        if args.command in LAB_COMMANDS:
            require("lab", f"linerate {args.command}")
        return int(args.handler(args) or 0)
    except ModuleNotFoundError as exc:  # an optional module (html's matplotlib ...): one line naming its extra
        error = missing_module_error(exc, "linerate " + next((w for w in words if not w.startswith("-")), ""))
        if error is None:
            raise
        sys.stderr.write(f"linerate: {_one_line(str(error))}\n")
        return error.exit_code
    except LinerateError as exc:
        # One line per message (control characters escaped); a preflight failure lists its problems.
        lines = str(exc).split("\n") if isinstance(exc, PreflightError) else [str(exc)]
        sys.stderr.write("".join(f"linerate: {_one_line(line)}\n" if i == 0 else f"{_one_line(line)}\n"
                                 for i, line in enumerate(lines)))
        return exc.exit_code
    except sqlite3.OperationalError as exc:
        from linerate.store.db import unwritable

        if not unwritable(exc):
            raise  # a bug: keep its traceback
        sys.stderr.write(f"linerate: --db: the results database cannot be written ({_one_line(str(exc))[:120]}); "
                         "free space or give --db a file linerate may write\n")
        return 2
    except BrokenPipeError:
        # The reader of our output left. `linerate report | head` loses nothing; a command that measures or
        # changes something stopped there (its trials are stored, its changes put back on the way out) and
        # must not look finished: 141, as a shell reports a SIGPIPE.
        command = getattr(args, "command", None)
        with contextlib.suppress(OSError, ValueError):
            if command not in PRINT_ONLY:
                sys.stderr.write(f"linerate: {command}: its output was closed (the reader of the pipe left): stopped; "
                                 "what was measured is stored, continue with --resume\n")
                sys.stderr.flush()
        sys.stderr.close()
        return 0 if command in PRINT_ONLY else 141
    except KeyboardInterrupt:
        sys.stderr.write("linerate: interrupted\n")
        return 130
    except Interrupted as exc:  # SIGTERM/SIGHUP: unwound and restored on the way here
        sys.stderr.write(f"linerate: {_one_line(str(exc))}\n")
        return exc.exit_code


if __name__ == "__main__":
    sys.exit(main())
