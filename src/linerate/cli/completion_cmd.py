"""`linerate completion SHELL`: a shell completion script generated from linerate's own argparse
parser by shtab (the `completion` extra), so it never lags behind the options."""

from __future__ import annotations

import argparse

SHELLS = ("bash", "zsh", "tcsh")  # shtab's targets that read an argparse parser


def register(sub: argparse._SubParsersAction) -> None:
    cmd = sub.add_parser("completion", help="print a shell completion script (bash, zsh or tcsh), generated from "
                         "this parser with shtab",
                         description="Example: linerate completion bash > ~/.local/share/bash-completion/completions/"
                         "linerate")
    cmd.add_argument("shell", choices=SHELLS)
    cmd.set_defaults(handler=cmd_completion)


def cmd_completion(args: argparse.Namespace) -> int:
    from linerate.cli import build_parser
    from linerate.extras import require

    require("completion", "linerate completion")
    import shtab

    print(shtab.complete(build_parser(), shell=args.shell), end="")
    return 0
