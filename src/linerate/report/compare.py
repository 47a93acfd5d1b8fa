"""`linerate compare A B`, cell by cell. A selector is `EXPERIMENT` or `EXPERIMENT:key=value,...`.

Cells are paired by everything the selectors do not name (family, streams, direction, and any other
parameter), and Welch's t-test runs per pair: pooling IPv4 with IPv6 or 1 with 4 streams into one
sample would mix different quantities and hide the real differences (or invent them).

rfc2544 experiments compare the same way: a "cell" is a search (lab, family, frame size) and its
sample the NDRs of its repetitions, in frames/s. What a cell and its sample are is the kind's
(TestKind.samples, found through experiment/registry.py); nothing here names a kind.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from linerate.errors import ConfigError
from linerate.experiment.registry import kind_of
from linerate.report.layout import format_mbps, plain, row_label
from linerate.stats import compare, summarize
from linerate.store.db import Store
from linerate.traffic.frames import label as frame_label

MIN_PER_SIDE = 2


@dataclass(frozen=True)
class Selection:
    text: str
    experiment_id: int
    wanted: dict[str, str]
    cells: list[tuple[Any, dict[str, Any]]]
    values: Callable[[Any], list[float]]  # a cell's sample: throughputs of its ok trials, or NDRs of its searches
    unit: str = "Mbit/s"
    compared_as: str = "Mbit/s, mean"  # what the samples are (the kind says: TestKind.compared_as)
    bit_rates: bool = True  # samples in bit/s, shown as Mbit/s (TestKind.bit_rate_samples)


def parse_selector(store: Store, selector: str) -> Selection:
    ref, _, conditions = selector.partition(":")
    wanted = {}
    for item in filter(None, conditions.split(",")):
        key, sep, value = item.partition("=")
        if not sep:
            raise ConfigError("compare", f"{plain(item)!r} is not key=value")
        wanted[key.strip()] = value.strip()
    exp = store.experiment(ref or None)
    test = kind_of(exp)
    cells, values, unit = test.samples(store, exp)
    known = sorted({k for _, params in cells for k in params})
    for key in wanted:
        if key not in known:
            raise ConfigError("compare", f"{plain(key)!r} is not a parameter of experiment '{exp.name}'; "
                              f"known: {', '.join(known)}")
    chosen = [(cid, p) for cid, p in cells if all(str(p.get(k)) == v for k, v in wanted.items())]
    if not chosen:
        raise ConfigError("compare", f"{plain(selector)!r} matches no cell")
    return Selection(selector, exp.id, wanted, chosen, values, unit, test.compared_as, test.bit_rate_samples)


@dataclass
class PairResult:
    label: str
    n_a: int
    n_b: int
    comparison: Any = None  # stats.Comparison, or None with too few trials
    summary_a: Any = None  # stats.Summary of each side
    summary_b: Any = None
    unit: str = "Mbit/s"
    bit_rates: bool = True

    def render(self) -> str:
        if self.comparison is None:
            return f"{self.label}: too few trials to compare (A n={self.n_a}, B n={self.n_b}; need {MIN_PER_SIDE} each)"
        c = self.comparison
        if not self.bit_rates:  # a rate counted in whole things: frames/s (rfc2544), connections/s (cps)
            return (f"{self.label}: A {c.mean_a:,.0f} (n={self.n_a}), B {c.mean_b:,.0f} (n={self.n_b}) {self.unit}; "
                    f"B-A {c.difference:+,.0f} {self.unit} ({c.relative * 100:+.1f}%): {c.verdict()}")
        return (f"{self.label}: A {format_mbps(c.mean_a)} (n={self.n_a}), B {format_mbps(c.mean_b)} (n={self.n_b}) "
                f"Mbit/s; B-A {c.difference / 1e6:+,.1f} Mbit/s ({c.relative * 100:+.1f}%): {c.verdict()}")

    def to_dict(self) -> dict[str, Any]:
        """For `compare --json`; every figure in the samples' own unit (bit/s for throughput)."""
        c = self.comparison
        return {"cell": self.label, "unit": "bit/s" if self.bit_rates else self.unit,
                "n_a": self.n_a, "n_b": self.n_b,
                "a": self.summary_a.to_dict() if self.summary_a else None,
                "b": self.summary_b.to_dict() if self.summary_b else None,
                "welch": None if c is None else {**asdict(c), "verdict": c.verdict()}}


@dataclass
class CompareResult:
    a: Selection
    b: Selection
    pairs: list[PairResult] = field(default_factory=list)
    unpaired: list[str] = field(default_factory=list)

    def side_differences(self) -> list[tuple[str, str, str]]:
        """(parameter, A's values, B's values) for every parameter whose values differ between the
        two selections: what the comparison is a comparison of."""
        def values(side: Selection, key: str) -> str:
            return ", ".join(sorted({str(p.get(key, "–")) for _, p in side.cells}))

        keys = sorted({k for _, p in self.a.cells + self.b.cells for k in p})
        return [(key, values(self.a, key), values(self.b, key)) for key in keys
                if values(self.a, key) != values(self.b, key)]

    def render(self) -> str:
        lines = [f"A = {plain(self.a.text)}", f"B = {plain(self.b.text)}",
                 f"cell by cell ({self.a.compared_as}; Welch's t-test per cell):"]
        lines += ["  " + pair.render() for pair in self.pairs]
        lines += [f"  {label}: no partner cell on the other side" for label in self.unpaired]
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        """For `compare --json`: the two selections, what differs between them, and every pair."""
        return {"a": {"selector": self.a.text, "experiment_id": self.a.experiment_id},
                "b": {"selector": self.b.text, "experiment_id": self.b.experiment_id},
                "differences": [{"parameter": key, "a": a, "b": b} for key, a, b in self.side_differences()],
                "pairs": [pair.to_dict() for pair in self.pairs], "unpaired": list(self.unpaired)}


def _label(params: dict[str, Any], shown: list[str]) -> str:
    if "frame_bytes" in params:
        label = f"IPv{params.get('family', 4)} {frame_label(params['frame_bytes'])} NDR"
    elif "object_bytes" in params:
        label = f"IPv{params.get('family', 4)} {params['object_bytes']:,} B objects CPS"
    else:
        label = row_label(params.get("family", 4), params.get("streams", 1), params.get("direction", "forward"))
    extra = [f"{k}={params[k]}" for k in shown if k not in ("family", "streams", "direction", "frame_bytes",
                                                             "object_bytes") and k in params]
    return plain(" ".join([label, *extra]))


def compare_selections(store: Store, selector_a: str, selector_b: str) -> CompareResult:
    a, b = parse_selector(store, selector_a), parse_selector(store, selector_b)
    if a.unit != b.unit:
        raise ConfigError("compare", f"A and B measure different things ({a.unit} and {b.unit}); compare "
                          "experiments of one kind")
    named = set(a.wanted) | set(b.wanted)

    def pair_key(params: dict[str, Any], keys: list[str]) -> str:
        return json.dumps({k: params.get(k) for k in keys}, sort_keys=True)

    common = sorted((set.intersection(*(set(p) for _, p in a.cells + b.cells))) - named)
    # Pairing keys: what tells the cells of one side apart. A parameter that is constant on each
    # side but differs between them (two experiments run with different firewall profiles) is what
    # is being compared, not a pairing key.
    varying = [k for k in common if any(len({json.dumps(p.get(k)) for _, p in side.cells}) > 1 for side in (a, b))]
    keys = sorted(set(varying) | {"family", "streams", "direction", "frame_bytes"} & set(common))
    side_a = {pair_key(p, keys): (cid, p) for cid, p in a.cells}
    side_b = {pair_key(p, keys): (cid, p) for cid, p in b.cells}
    result = CompareResult(a, b)
    for key in sorted(set(side_a) | set(side_b)):
        if key not in side_a or key not in side_b:
            params = (side_a.get(key) or side_b.get(key))[1]
            result.unpaired.append(_label(params, varying))
            continue
        (cell_a, params), (cell_b, _) = side_a[key], side_b[key]
        values_a, values_b = a.values(cell_a), b.values(cell_b)
        pair = PairResult(_label(params, varying), len(values_a), len(values_b),
                          summary_a=summarize(values_a), summary_b=summarize(values_b), unit=a.unit,
                          bit_rates=a.bit_rates)
        if len(values_a) >= MIN_PER_SIDE and len(values_b) >= MIN_PER_SIDE:
            pair.comparison = compare(values_a, values_b, "A", "B")
        result.pairs.append(pair)
    if not result.pairs:
        raise ConfigError("compare", "no cell of A has a partner in B with the same traffic case; "
                          "select the same family/streams/direction on both sides")
    return result
