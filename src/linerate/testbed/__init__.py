"""Testbeds: where the client, DUT and server of an experiment live.

A testbed, as the scheduler sees it, is a context manager yielding an object with
`run_trial(params) -> Trial` and `state` (the read-back knobs). Two implementations:
`namespace` — the built-in lab on this machine (lab/lab.py; one per combination of lab axes);
`ssh` — real hosts from an inventory file (ssh.py), reached with asyncssh, one DutDriver per OS.
"""
