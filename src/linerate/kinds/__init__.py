"""Test kinds: what a run measures and how it reports it. Each kind is a folder here whose package
exposes `KIND`, an experiment.plugins.TestKind: it checks its experiment file, runs under the one
runner in experiment/run.py, and renders its reports. Adding a kind is its folder plus one line in
experiment/registry.py's KINDS, by which everyone else finds it (nothing outside kinds/ and cli/
imports a kind: the kinds sit above the runner that hosts them).

Shared helpers of several kinds: kinds/base.py. A kind may import anything below it (experiment/,
search/, report/'s shared pieces, testbed/, dut/, traffic/ ...) but not diagnose/ and not another kind.
"""
