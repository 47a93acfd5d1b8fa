"""Diagnosis: telemetry turned into verdicts. facts.py gathers what the rules read (from stored
trials or pasted snapshots), rules.py holds the registry of verdict rules, offline.py serves
`linerate diagnose --before/--after` for firewalls without SSH access."""
