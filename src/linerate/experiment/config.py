"""Experiment files (TOML) -> a validated Experiment. Unknown keys, wrong types and impossible
values become one ConfigError naming the file, the key and what is allowed — never a traceback.

What is a kind's to decide (its own keys, what it refuses, what every cell of it carries) the
Experiment asks the kind, found by name in experiment/registry.py: nothing here names a kind."""

from __future__ import annotations

import difflib
import hashlib
import itertools
import json
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictInt, ValidationError, field_validator, model_validator

from linerate.axes import AXES
from linerate.errors import ConfigError
from linerate.inputs import parse_toml, read_text
from linerate.experiment.registry import KINDS, kind

MAX_FILE_BYTES = 1_000_000
MAX_CELLS = 10_000
MAX_DEPTH = 8
MAX_SEED = 2**63 - 1  # SQLite INTEGER is signed 64-bit
# Experiment fields that one kind reads (it lists them in its experiment_fields); in any other
# kind's file they are a mistake
KIND_FIELDS = ("frame_sizes", "pdr_loss", "relative_width", "generator")


class Experiment(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(min_length=1, max_length=100, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
    description: str = ""
    repetitions: StrictInt = Field(3, ge=1, le=10_000)
    duration_s: StrictInt = Field(5, ge=1, le=86_400)
    omit_s: StrictInt = Field(1, ge=0, le=600)
    precision: float | None = Field(None, gt=0, lt=1, strict=True)
    min_repetitions: StrictInt = Field(3, ge=2, le=10_000)
    max_repetitions: StrictInt = Field(30, ge=2, le=10_000)
    max_retries: StrictInt = Field(2, ge=0, le=10)
    retry_backoff_s: float = Field(1.0, ge=0, le=60, strict=True)
    seed: StrictInt | None = Field(None, ge=0, le=MAX_SEED)
    calibrate: bool = Field(True, strict=True)
    test: str = "throughput"  # a test kind (kinds/): throughput, latency, rfc2544 ...
    frame_sizes: list[StrictInt | Literal["imix"]] | None = Field(None, min_length=1, max_length=64)
    pdr_loss: float = Field(0.005, gt=0, lt=0.5, strict=True)
    relative_width: float = Field(0.005, ge=0.001, le=0.2, strict=True)  # rfc2544: bounds this close end a search
    generator: Literal["auto", "trafgen", "iperf3"] = "auto"  # the packet generator (search/frame_path.py)
    fixed: dict[str, Any] = Field(default_factory=dict)
    axes: dict[str, list[Any]] = Field(default_factory=dict)
    options: dict[str, Any] = Field(default_factory=dict)  # a kind's own keys (its OPTION_KEYS), checked by it

    @field_validator("test")
    @classmethod
    def _test_known(cls, test: str) -> str:
        if test not in KINDS:
            raise ValueError(f"unknown test {test[:40]!r}; use one of {', '.join(KINDS)}")
        return test

    @field_validator("fixed")
    @classmethod
    def _fixed_known(cls, fixed: dict[str, Any]) -> dict[str, Any]:
        return {name: axis_value(name, value, "fixed") for name, value in fixed.items()}

    @field_validator("axes")
    @classmethod
    def _axes_known(cls, axes: dict[str, list[Any]]) -> dict[str, list[Any]]:
        out = {}
        for name, values in axes.items():
            if not values:
                raise ValueError(f"axis '{name}' has no values; give at least one")
            canon = [axis_value(name, v, "axes") for v in values]
            if len(set(map(repr, canon))) != len(canon):
                raise ValueError(f"axis '{name}' repeats a value")
            out[name] = canon
        return out

    @model_validator(mode="after")
    def _consistent(self) -> "Experiment":
        both = set(self.fixed) & set(self.axes)
        if both:
            raise ValueError(f"{', '.join(sorted(both))} is both fixed and an axis; keep one")
        if self.min_repetitions > self.max_repetitions:
            raise ValueError("min_repetitions is larger than max_repetitions")
        if self.n_cells > MAX_CELLS:
            raise ValueError(f"the axes give {self.n_cells} cells; at most {MAX_CELLS} are allowed")
        self._test_consistent()
        return self

    def _test_consistent(self) -> None:
        """Keys of one kind in another kind's file are mistakes; the rest is the kind's to check."""
        test = kind(self.test)
        if self.options and not test.option_keys:
            raise ValueError(f"options applies to a kind with keys of its own; test = \"{self.test}\" has none")
        for name in KIND_FIELDS:
            if name in self.model_fields_set and name not in test.experiment_fields:
                owner = next(other for other in KINDS if name in kind(other).experiment_fields)
                raise ValueError(f"{name} applies to test = \"{owner}\"; drop it or set test = \"{owner}\"")
        test.check(self)

    @property
    def n_cells(self) -> int:
        count = 1
        for values in self.axes.values():
            count *= len(values)
        return count

    def cells(self) -> list[dict[str, Any]]:
        """The cartesian product of the axes; every registered axis gets a value (fixed or default)."""
        base = {name: axis.default for name, axis in AXES.items()}
        base.update(self.fixed)
        base.update(duration_s=self.duration_s, omit_s=self.omit_s)
        base.update(kind(self.test).cell_settings(self))
        names = list(self.axes)
        return [{**base, **dict(zip(names, combo))} for combo in itertools.product(*self.axes.values())]

    def declared_axes(self) -> list[str]:
        """The axes this file names (varied or fixed): the identity of its cells in the store."""
        return sorted(set(self.axes) | set(self.fixed))

    def config_hash(self) -> str:
        """Hash of what the file sets (not of defaults), so an upgrade that adds an option with a
        default does not make an unfinished run unresumable."""
        return hashlib.sha256(self.model_dump_json(exclude_unset=True).encode()).hexdigest()[:16]


def axis_value(name: str, value: Any, where: str) -> Any:
    axis = AXES.get(name)
    if axis is None:
        hint = difflib.get_close_matches(name, list(AXES), n=1)
        did_you_mean = f"; did you mean '{hint[0]}'?" if hint else ""
        raise ValueError(f"unknown axis '{name}'{did_you_mean} (known: {', '.join(sorted(AXES))})")
    try:
        return axis.validate(value)
    except (ValueError, TypeError) as exc:
        raise ValueError(f"{name} = {value!r}: {exc}; allowed: {axis.allowed}") from None


def _describe(exc: ValidationError) -> str:
    problems = []
    for error in exc.errors():
        loc = ".".join(str(part) for part in error["loc"]) or "(file)"
        if error["type"] == "extra_forbidden":
            key = str(error["loc"][-1])
            known = list(Experiment.model_fields) + list(AXES)
            hint = difflib.get_close_matches(key, known, n=1)
            extra = f"did you mean '{hint[0]}'? " if hint else ""
            problems.append(f"unknown key '{loc}'; {extra}"
                            f"allowed: {', '.join(Experiment.model_fields)} (axes go under [axes])")
        else:
            message = error["msg"].removeprefix("Value error, ")
            got = repr(error.get("input"))
            got = got if len(got) <= 60 else got[:57] + "..."
            problems.append(f"{loc}: {message} (got {got})" if error["type"] != "value_error" else f"{loc}: {message}")
    return "; ".join(problems)


def _depth(value: Any, limit: int) -> bool:
    """Is the structure nested no deeper than `limit`? (An experiment needs 3: [axes] name [values].)"""
    if limit < 0:
        return False
    if isinstance(value, dict):
        return all(_depth(v, limit - 1) for v in value.values())
    if isinstance(value, list):
        return all(_depth(v, limit - 1) for v in value)
    return True


def parse_experiment(text: str, source: str = "<experiment>") -> Experiment:
    doc = parse_toml(text, source, f"an experiment file (more than {MAX_DEPTH} levels)")
    if not _depth(doc, MAX_DEPTH):
        raise ConfigError(source, f"nested more than {MAX_DEPTH} levels deep; not an experiment file")
    # Known axis names may also be fixed at top level (`family = 6`), as users write them.
    fixed = dict(doc.get("fixed", {})) if isinstance(doc.get("fixed", {}), dict) else doc.get("fixed")
    for name in list(doc):
        if name in AXES:
            if isinstance(fixed, dict):
                fixed[name] = doc.pop(name)
    if fixed:
        doc["fixed"] = fixed
    test = doc.get("test", "throughput")
    own = kind(test).option_keys if isinstance(test, str) and test in KINDS else ()
    options = {name: doc.pop(name) for name in own if name in doc}
    if options:
        doc["options"] = options
    return experiment_from_dict(doc, source)


def experiment_from_dict(doc: dict[str, Any], source: str) -> Experiment:
    """A validated Experiment from a parsed file (or one a command builds from its options)."""
    try:
        return Experiment.model_validate(doc)
    except ValidationError as exc:
        raise ConfigError(source, "invalid experiment: " + _describe(exc)) from None


def load_experiment(path: str | Path) -> tuple[Experiment, str]:
    text = read_text(path, MAX_FILE_BYTES, "experiment file (TOML)")
    return parse_experiment(text, str(path)), text


def experiment_to_json(experiment: Experiment) -> dict:
    return json.loads(experiment.model_dump_json())
