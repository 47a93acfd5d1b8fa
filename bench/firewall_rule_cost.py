"""What a firewall rule list costs, measured side by side in one run on the namespace lab, each
through the commands a user runs (`linerate run`, then `linerate compare`, Welch's test):

- RFC 2544 NDR of 64-byte IPv4 frames over an emulated 1 Gbit/s link, no firewall against 300
  stateful rules every frame walks (unanswered UDP stays conntrack NEW), 2 searches each;
- TCP throughput, no firewall against 1,000 stateless rules, 6 x 2 s trials each.

Prints each comparison and the ratio rules/none. These were privileged tests; an effect size on a
shared 2-CPU machine is a measurement (it varies by tens of percent between trials), so it lives
here. 300 rules, not 1,000, for the NDR: in the namespace lab the DUT walks them in softirq on
trafgen's own CPU, and 1,000 starved trafgen past its timeout on one kernel build.
Needs root. Run: .venv/bin/python bench/firewall_rule_cost.py"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

LINERATE = [sys.executable, "-m", "linerate"]
NDR = ('name = "ndr"\ntest = "rfc2544"\nrepetitions = 2\nduration_s = 1\nframe_sizes = [64]\nrelative_width = 0.05\n'
       'link_rate = "1g"\n[axes]\nfirewall = ["none", "rules:300"]\n')
TCP = ('name = "tcp"\nrepetitions = 6\nduration_s = 2\nomit_s = 1\ncalibrate = false\n'
       '[axes]\nfirewall = ["none", "rules-stateless:1000"]\n')


def linerate(*argv: str, env: dict) -> str:
    return subprocess.run([*LINERATE, *argv], capture_output=True, text=True, check=True, env=env).stdout


def compare(directory: Path, text: str, name: str, rules: str, line_start: str, env: dict) -> None:
    path, db = directory / f"{name}.toml", str(directory / f"{name}.db")
    path.write_text(text)
    linerate("run", str(path), "--db", db, env=env)
    out = linerate("compare", f"{name}:firewall=none", f"{name}:firewall={rules}", "--db", db, env=env)
    line = next(l for l in out.splitlines() if l.strip().startswith(line_start))
    a, b = (float(v.replace(",", "")) for v in re.search(r"A ([\d,.]+) \(n=\d+\), B ([\d,.]+)", line).groups())
    print(f"{line.strip()}\n    ratio {rules}/none: {b / a:.3f}")


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="linerate-bench-") as tmp:
        directory = Path(tmp)
        env = {**os.environ, "LINERATE_STATE_DIR": str(directory / "labs"),
               "LINERATE_JOURNAL_DIR": str(directory / "journal")}
        compare(directory, NDR, "ndr", "rules:300", "IPv4 64 B NDR", env)
        compare(directory, TCP, "tcp", "rules-stateless:1000", "IPv4 1 stream", env)


if __name__ == "__main__":
    main()
