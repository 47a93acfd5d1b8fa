"""Open a local HTML file in headless Chromium (Debian's `chromium`) the way a reader would, and
report what it did: the DOM after loading, a screenshot, and every network request the *page*
started (from Chromium's own NetLog).

Chromium runs in a fresh network namespace (`unshare --net`: loopback only, gone with the process),
so nothing it tries can leave this machine — neither the page's requests nor the browser's own
background calls (component updates, time sync) that a headless Chromium still makes. Page
requests are told apart from those by their network isolation key, which names the page's site
(file://) for the page's own subresources and is "null null" for browser-internal requests.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-extensions",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-default-apps", "--hide-scrollbars"]


@dataclass
class PageVisit:
    dom: str
    screenshot: Path
    page_requests: list[str]  # URLs the page asked the network stack for


def chromium() -> str:
    found = shutil.which("chromium")
    assert found, "chromium is missing: `make install` installs Debian's chromium package"
    return found


def page_requests(net_log: Path) -> list[str]:
    doc = json.loads(net_log.read_text())
    names = {number: name for name, number in doc["constants"]["logEventTypes"].items()}
    urls = []
    for event in doc["events"]:
        params = event.get("params") or {}
        if names.get(event["type"]) == "URL_REQUEST_START_JOB" and "url" in params:
            if str(params.get("network_isolation_key", "")).startswith("file://"):
                urls.append(params["url"])
    return urls


def visit(page: Path, work: Path, *, dark: bool = False, size: str = "1280,2400") -> PageVisit:
    work.mkdir(parents=True, exist_ok=True)
    url = page.resolve().as_uri()
    base = ["unshare", "--net", chromium(), *FLAGS, f"--user-data-dir={work / 'profile'}",
            f"--window-size={size}"] + (["--force-dark-mode"] if dark else [])
    log = work / "net.json"
    dom = subprocess.run([*base, f"--log-net-log={log}", "--dump-dom", url], capture_output=True, text=True,
                         timeout=120, check=True).stdout
    shot = work / ("dark.png" if dark else "light.png")
    subprocess.run([*base, f"--screenshot={shot}", url], capture_output=True, timeout=120, check=True)
    return PageVisit(dom, shot, page_requests(log))
