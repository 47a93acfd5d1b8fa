"""Option helpers shared by several commands: validated conversion of CLI values."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import TypeVar

from linerate.errors import ConfigError
from linerate.model import FirewallProfile

T = TypeVar("T")


def as_option(build: Callable[[], T]) -> T:
    """Run a validating constructor; re-raise its ConfigError with the field as a --option."""
    try:
        return build()
    except ConfigError as exc:
        raise ConfigError(f"--{exc.field}", exc.problem) from None


def firewall_type(text: str) -> FirewallProfile:
    try:
        return FirewallProfile.parse(text)
    except ConfigError as exc:
        raise argparse.ArgumentTypeError(exc.problem) from None


def add_json_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print machine-readable JSON")
