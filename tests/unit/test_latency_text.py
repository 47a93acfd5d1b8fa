"""The RTT lines of a trial's text (cli/trial_cmds.py rtt_lines): the rise under load carries its own sign."""

from linerate.cli.trial_cmds import rtt_lines
from linerate.model import Trial, TrialParams


def trial_with(idle_p50: float, loaded_p50: float) -> Trial:
    figures = {f"rtt_{phase}_{name}_ms": p50 if name == "p50" else p50 * 2 for phase, p50 in
               (("idle", idle_p50), ("loaded", loaded_p50)) for name in ("p50", "p90", "p99", "max")}
    return Trial("ok", TrialParams(), ("iperf3",), rtt_idle_sent=20, rtt_idle_lost=0, rtt_loaded_sent=20,
                 rtt_loaded_lost=0, **figures)


def test_a_loaded_rtt_below_the_idle_one_is_a_fall_not_plus_minus():
    assert rtt_lines(trial_with(0.100, 0.058))[-1] == "RTT under load: p50 -0.042 ms"
    assert rtt_lines(trial_with(0.100, 5.1))[-1] == "RTT under load: p50 +5.0 ms"
