"""Time `linerate audit` on a ~5 MB sysctl.conf made by repeating a real corpus file (issue #27: the audit
must be linear; goal <= 5 s for 5 MB on the 2-core development VM).

    .venv/bin/python bench/audit_speed.py [MB]
"""

import sys
import tempfile
import time
from pathlib import Path

from linerate.tuning.audit import Context, audit
from linerate.tuning.catalog import load_catalog
from linerate.tuning.parsers import parse_file
from linerate.tuning.versions import base_version

ROOT = Path(__file__).resolve().parents[1]
REAL = ROOT / "tests" / "data" / "tuning" / "corpus" / "freebsd13_desktop_sysctl.conf"


def main(megabytes: float = 4.9) -> None:
    text = REAL.read_text()
    copies = int(megabytes * 1_000_000 // len(text.encode()))
    catalog = load_catalog()  # loaded once, as the CLI does before reading files
    family, base = base_version("freebsd", "13.0")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "sysctl.conf"
        path.write_text(text * copies)
        size_mb = path.stat().st_size / 1_000_000
        start = time.perf_counter()
        settings = parse_file(str(path))
        found = audit(catalog, settings, Context("freebsd", family, base, "router", False, "13.0"))
        seconds = time.perf_counter() - start
    print(f"{size_mb:.2f} MB ({copies} copies of {REAL.name}, {len(settings)} settings, {len(found)} findings): "
          f"{seconds:.2f} s, {size_mb / seconds:.2f} MB/s")


if __name__ == "__main__":
    main(float(sys.argv[1]) if len(sys.argv) > 1 else 4.9)
