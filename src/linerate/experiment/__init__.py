"""Experiments: declared matrices of trial parameters, run and persisted one trial at a time."""
