"""Make the README's picture of a report page: the installed ``seqdedup`` writes the page
for three shipped examples, the system's Chromium (driven by Playwright) draws it, and
the top of it is kept as docs/images/report.png.

    python tools/report_screenshot.py    # (needs '.[report]', playwright and chromium)
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
IMAGE = ROOT / "docs" / "images" / "report.png"
LOGS = ["examples/app.log", "examples/ci.log", "examples/storm.log"]


def main() -> int:
    from playwright.sync_api import sync_playwright

    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        sys.stderr.write("report_screenshot: chromium is not installed\n")
        return 1
    with tempfile.TemporaryDirectory() as folder:
        page_path = Path(folder) / "report.html"
        command = [sys.executable, "-m", "seqdedup", "-q", "-w", "3", "--report", str(page_path)]
        subprocess.run([*command, *LOGS], cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(
                executable_path=chromium, args=["--no-sandbox", "--disable-gpu"]
            )
            page = browser.new_page(viewport={"width": 1000, "height": 1200})
            page.goto(page_path.as_uri())
            page.wait_for_selector("body[data-drawn=yes]")
            page.locator("ol.sequences summary").first.click()
            page.screenshot(path=str(IMAGE), clip={"x": 0, "y": 0, "width": 1000, "height": 1200})
            browser.close()
    sys.stdout.write(f"{IMAGE.relative_to(ROOT)}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
