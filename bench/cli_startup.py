"""CLI start-up: `linerate --version` against a bare venv interpreter, interleaved in one run.
Goal (issue #9): ratio <= 4. Run: .venv/bin/python bench/cli_startup.py [RUNS]"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from pathlib import Path

VENV_BIN = Path(sys.executable).parent
COMMANDS = {
    "bare interpreter": [sys.executable, "-c", "pass"],
    "linerate --version": [str(VENV_BIN / "linerate"), "--version"],
    "linerate calc": [str(VENV_BIN / "linerate"), "calc", "--link", "1g"],
    "linerate explain": [str(VENV_BIN / "linerate"), "explain", "net.inet.ip.intr_queue_maxlen"],
}


def timed(argv: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - start


def main(runs: int) -> None:
    samples: dict[str, list[float]] = {name: [] for name in COMMANDS}
    for name, argv in COMMANDS.items():
        timed(argv)  # warm the page cache once
    for _ in range(runs):  # interleaved: machine noise hits every command alike
        for name, argv in COMMANDS.items():
            samples[name].append(timed(argv))
    base = statistics.median(samples["bare interpreter"])
    for name, values in samples.items():
        median = statistics.median(values)
        print(f"{name:20} median {median * 1000:7.1f} ms  ratio to bare interpreter {median / base:5.2f}")
    ratio = statistics.median(samples["linerate --version"]) / base
    print(f"linerate --version / bare interpreter = {ratio:.2f} (goal <= 4: {'met' if ratio <= 4 else 'NOT met'})")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 15)
