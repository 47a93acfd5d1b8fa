"""Generator pools: several client/server pairs sending through the DUT at once, summed over the window
in which all of them sent (window.py). The lab's pool topology is topology/pool.py; trial.py runs the
pairs' generators together."""
