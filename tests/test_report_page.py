"""--report's page in a real browser: the system's Chromium (installed by .ci/run), driven
by Playwright. Each page is made by the installed commands from the shipped examples, a
generated log, a library and hostile records; each must load with no console error and
no request of its own, fit a 390 px wide phone with no horizontal scroll, draw every
chart, show the run's own statistics, expand a sequence to its exact records, and name
a band's sequence on hover. With SEQDEDUP_SHOTS=1 a screenshot of each is kept in
build/report-pages/ (to look at: nothing is asserted on them, and they cost the suite
seconds)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import needs, user_env

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
BIN = Path(sys.executable).parent
SHOTS = ROOT / "build" / "report-pages" if os.environ.get("SEQDEDUP_SHOTS") == "1" else None
# Chromium's headless shell where it is installed (Debian's chromium-headless-shell: the
# same Blink and V8 without the desktop browser around them, which Playwright itself runs
# for headless pages): a page load costs a third of the full browser's CPU.
CHROMIUM = next(
    filter(None, map(shutil.which, ["chromium-headless-shell", "chromium", "chromium-browser"])),
    None,
)
BROWSER_FLAGS = [
    "--no-sandbox",  # (CI runs as root)
    "--disable-gpu",
    "--disable-background-networking",  # (the closed network refuses Chromium's own calls)
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]

pytestmark = needs(
    CHROMIUM is not None, "chromium-headless-shell or chromium (.ci/run installs the first)"
)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=BROWSER_FLAGS)
        yield launched
        launched.close()


def make_report(
    tmp_path: Path, name: str, args: list[str], stdin: bytes | None = None, cwd: Path | None = None
) -> tuple[Path, dict]:
    """The page of a run of the installed command, and the run's JSON statistics."""
    page = tmp_path / f"{name}.html"
    done = subprocess.run(
        [str(BIN / "seqdedup"), "--stats-format", "json", "--report", str(page), *args],
        input=stdin,
        capture_output=True,
        cwd=cwd,
        env=user_env(),
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr.decode()
    return page, json.loads(done.stderr)


class Opened:
    """A page loaded in the browser at a width, with what it logged and requested."""

    def __init__(self, browser: Any, path: Path, width: int) -> None:
        self.page = browser.new_page(viewport={"width": width, "height": 900})
        self.console: list[str] = []
        self.requests: list[str] = []
        self.dialogs: list[str] = []
        self.page.on("console", lambda m: self.console.append(f"{m.type}: {m.text}"))
        self.page.on("pageerror", lambda e: self.console.append(f"pageerror: {e}"))
        self.page.on("request", lambda r: self.requests.append(r.url))
        self.page.on("dialog", lambda d: (self.dialogs.append(d.message), d.dismiss()))
        self.url = path.as_uri()
        self.page.goto(self.url)
        self.page.wait_for_selector("body[data-drawn=yes]", timeout=30_000)

    def check_loaded(self, shot: str) -> None:
        """No console error, no request but the page, every chart drawn, no sideways
        scroll; a screenshot kept where SEQDEDUP_SHOTS=1."""
        page = self.page
        assert [line for line in self.console if line.startswith(("error", "pageerror"))] == []
        assert self.requests == [self.url]
        charts = json.loads(page.inner_text("#seqdedup-charts"))
        drawn = page.evaluate(
            """ids => ids.map(id => {
                const svg = document.querySelector('#' + id + ' svg');
                return svg ? svg.querySelectorAll('path, rect, text').length : 0;
            })""",
            list(charts),
        )
        assert charts and all(count > 10 for count in drawn), dict(zip(charts, drawn, strict=True))
        width = page.viewport_size["width"]
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        if SHOTS is not None:
            SHOTS.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(SHOTS / f"{shot}-{width}.png"), full_page=True)

    def figures(self) -> dict[str, str]:
        return self.page.evaluate(
            """() => Object.fromEntries(Array.from(document.querySelectorAll('dd[data-field]'))
                .map(dd => [dd.dataset.field, dd.dataset.value]))"""
        )

    def close(self) -> None:
        self.page.close()


RUNS = {
    "app": ["-w", "3", str(EXAMPLES / "app.log")],
    "ci": ["-w", "2", str(EXAMPLES / "ci.log")],
    "storm": ["-w", "2", str(EXAMPLES / "storm.log")],
    "requests": ["-w", "3", "--normalize", "all", str(EXAMPLES / "requests.log")],
    "pods": ["-w", "3", "--stream-by", r"^\S+", str(EXAMPLES / "pods.log")],
    "json": ["-w", "2", "--json-ignore", "ts", str(EXAMPLES / "app.jsonl")],
    "several": ["-w", "3", *(str(EXAMPLES / n) for n in ("app.log", "ci.log", "storm.log"))],
}


@pytest.mark.parametrize("name", list(RUNS))
def test_each_shipped_example_makes_a_page_that_loads_and_shows_its_run(browser, tmp_path, name):
    path, stats = make_report(tmp_path, name, RUNS[name])
    for width in (1100, 390):
        opened = Opened(browser, path, width)
        try:
            opened.check_loaded(name)
            shown = opened.figures()
            lines = stats["statistics"]["lines"]
            assert int(shown["records_read"]) == lines["total"]
            assert int(shown["records_written"]) == lines["emitted"]
            assert int(shown["records_removed"]) == lines["skipped"]
            assert float(shown["removed_pct"]) == stats["statistics"]["redundancy_pct"]
        finally:
            opened.close()


def test_a_sequence_expands_to_its_exact_records_and_a_band_names_it(browser, tmp_path):
    path, _ = make_report(tmp_path, "app-expand", RUNS["app"])
    opened = Opened(browser, path, 1100)
    try:
        page = opened.page
        first = page.locator("ol.sequences li").first
        assert not first.locator("pre.text").is_visible()
        first.locator("summary").click()
        text = first.locator("pre.text")
        assert text.is_visible()
        facts = first.locator(".facts").first.inner_text()
        start, end = (int(n) for n in re.search(r"lines (\d+)-(\d+)", facts).groups())  # type: ignore[union-attr]
        lines = (EXAMPLES / "app.log").read_text().split("\n")
        assert text.inner_text() == "\n".join(lines[start - 1 : end])
        kind = first.locator("code.kind")  # (the first record's kind of line)
        assert kind.is_visible() and kind.inner_text() == lines[start - 1]
        band = page.locator("#chart-timeline svg g.mark-rect").nth(1).locator("path").first
        band.scroll_into_view_if_needed()
        box = band.bounding_box()
        assert box is not None
        page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
        page.wait_for_selector("#vg-tooltip-element.visible", timeout=5000)
        tooltip = page.inner_text("#vg-tooltip-element")
        assert "Traceback (most recent call last):" in tooltip and "copies" in tooltip
    finally:
        opened.close()


def test_a_generated_log_makes_a_page(browser, tmp_path):
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from genlog import log_lines  # type: ignore[import-not-found]

    log = tmp_path / "generated.log"
    log.write_text("".join(line + "\n" for line in log_lines(20_000)))
    path, stats = make_report(tmp_path, "generated", ["-w", "5", str(log)])
    opened = Opened(browser, path, 1100)
    try:
        opened.check_loaded("generated")
        assert int(opened.figures()["records_removed"]) == stats["statistics"]["lines"]["skipped"]
        assert opened.page.locator("ol.sequences li").count() == 20
    finally:
        opened.close()


def test_standard_input_a_budget_and_a_library_make_pages(browser, tmp_path):
    storm = (EXAMPLES / "storm.log").read_bytes()
    piped, _ = make_report(tmp_path, "stdin", ["-w", "2"], stdin=storm)
    budget = tmp_path / "budget.html"
    library = tmp_path / "library"
    for args in (
        ["--budget", "150", "--report", str(budget), str(EXAMPLES / "app.log")],
        ["-q", "-w", "3", "-l", str(library), str(EXAMPLES / "app.log"), str(EXAMPLES / "ci.log")],
        [
            "-q",
            "-w",
            "3",
            "-l",
            str(library),
            "--report",
            str(tmp_path / "new.html"),
            str(EXAMPLES / "storm.log"),
            str(EXAMPLES / "app.log"),
        ],
    ):
        done = subprocess.run(
            [str(BIN / "seqdedup"), *args], capture_output=True, env=user_env(), check=False
        )
        assert done.returncode == 0, done.stderr.decode()
    shelf = tmp_path / "library.html"
    done = subprocess.run(
        [str(BIN / "seqdedup-library"), "report", str(library), str(shelf)],
        capture_output=True,
        env=user_env(),
        check=False,
    )
    assert done.returncode == 0 and b"report written" in done.stdout, done.stderr.decode()
    for path, sections in (
        (piped, ["#timeline", "#top", "#blocks"]),
        (budget, ["#timeline", "#top"]),
        (tmp_path / "new.html", ["#library"]),
        (shelf, ["#runs", "#top", "#blocks"]),
    ):
        opened = Opened(browser, path, 390)
        try:
            opened.check_loaded(path.stem)
            for section in sections:
                assert opened.page.locator(section).is_visible()
        finally:
            opened.close()


def test_hostile_records_show_as_text(browser, tmp_path):
    hostile = [
        b"<script>alert('x')</script>",
        b"</textarea><b id=bold>bold</b> \"quoted\" 'single' &amp;",
        b"\x1b[31mred\x1b[0m \xff\xfe invalid",
        b"<img src=x onerror=alert(1)>",
    ]
    log = tmp_path / "hostile.log"
    log.write_bytes(b"".join(record + b"\n" for record in hostile) * 3)
    path, _ = make_report(tmp_path, "hostile", ["-w", "2", str(log)])
    opened = Opened(browser, path, 390)
    try:
        opened.check_loaded("hostile")
        page = opened.page
        page.locator("ol.sequences summary").first.click()
        text = page.inner_text("ol.sequences pre.text")
        assert "<script>alert('x')</script>" in text
        assert "</textarea><b id=bold>bold</b> \"quoted\" 'single' &amp;" in text
        assert "\\x1b[31mred\\x1b[0m \\xff\\xfe invalid" in text
        assert "<img src=x onerror=alert(1)>" in text
        assert page.evaluate("document.scripts.length") == 4  # (the page's own)
        assert page.evaluate("document.querySelectorAll('#bold, img').length") == 0
        band = page.locator("#chart-timeline svg g.mark-rect").nth(1).locator("path").first
        band.scroll_into_view_if_needed()
        box = band.bounding_box()
        assert box is not None
        page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
        page.wait_for_selector("#vg-tooltip-element.visible", timeout=5000)
        assert "<script>alert('x')</script>" in page.inner_text("#vg-tooltip-element")
        assert opened.dialogs == []
    finally:
        opened.close()


def test_names_that_are_not_utf8_show_escaped(browser, tmp_path):
    """An input file name and a --stream-by stream name with bytes that are not UTF-8:
    the page is made and shows them as ``\\xNN`` (it was a traceback and no page)."""
    name = os.fsdecode(b"bad-\xff-name.log")
    log = tmp_path / name
    log.write_bytes(b"s\xfe1 a\ns\xfe1 b\ns\xfe1 a\ns\xfe1 b\nok c\n" * 2)
    other = tmp_path / "other.log"
    other.write_bytes(b"x\n")
    path, _ = make_report(  # (named as given, short whatever the test's folder)
        tmp_path, "names", ["-w", "2", "--stream-by", r"^\S+", log.name, other.name], cwd=tmp_path
    )
    opened = Opened(browser, path, 1200)
    try:
        text = opened.page.inner_text("body")
        assert "bad-\\xff-name.log" in text
        charts = opened.page.inner_text("#seqdedup-charts")
        assert "s\\\\xfe1" in charts or "s\\xfe1" in charts
    finally:
        opened.close()


def test_a_run_over_many_inputs_makes_a_page_of_capped_size(browser, tmp_path):
    """1,500 inputs with names of 205 characters: the page names the first 20 and says
    how many more; its size stays within the script and a few hundred kilobytes (it was
    2.98 MB, growing with the inputs)."""
    folder = tmp_path / "inputs"
    folder.mkdir()
    names = []
    for k in range(1500):
        path = folder / (f"{k:04d}-" + "x" * 200)
        path.write_text(f"line {k}\nshared\ncommon\n")
        names.append(str(path))
    page, _ = make_report(tmp_path, "many", ["-w", "1", *names])
    assert page.stat().st_size < 1_300_000
    opened = Opened(browser, page, 1200)
    try:
        opened.check_loaded("many")
        text = opened.page.inner_text("body")
        assert "and 1,480 more inputs" in text
        assert "1,500 inputs: the page names the first 20" in text
    finally:
        opened.close()


def test_only_the_pages_own_scripts_may_run(browser, tmp_path):
    """The policy allows the page's two scripts by their SHA-256, no other inline
    script ('unsafe-inline' is gone): a script element added to the page is refused."""
    path, _ = make_report(tmp_path, "policy", RUNS["app"])
    import html

    text = path.read_text()
    policy = text.split('http-equiv="Content-Security-Policy" content="', 1)[1].split('"', 1)[0]
    policy = html.unescape(policy)
    script_src = policy.split("script-src", 1)[1].split(";", 1)[0]
    assert "'unsafe-inline'" not in script_src and script_src.count("'sha256-") == 2
    opened = Opened(browser, path, 1200)
    try:
        opened.check_loaded("policy")
        ran = opened.page.evaluate(
            """() => { window.injected = false;
                const s = document.createElement('script');
                s.textContent = 'window.injected = true';
                document.body.appendChild(s);
                return window.injected; }"""
        )
        assert ran is False
    finally:
        opened.close()


AXIS_LABELS = """id => {
    // each axis's labels (Vega draws them as text in a group of role axis-label)
    const boxes = [];
    document.querySelectorAll('#' + id + ' svg g[role=graphics-object] g.role-axis').forEach(
        (axis, a) => axis.querySelectorAll('.role-axis-label text').forEach(t => {
            const r = t.getBoundingClientRect();
            const shown = t.getAttribute('opacity') !== '0' && getComputedStyle(t).opacity !== '0';
            if (t.textContent && r.width > 0 && shown)  // (labelOverlap hides, opacity 0)
                boxes.push([a, t.textContent, r.left, r.right, r.top, r.bottom]);
        }));
    return boxes;
}"""
LEGEND = """id => Array.from(document.querySelectorAll('#' + id + ' svg .role-legend-label text'))
    .map(t => t.textContent)"""


def overlapping(boxes: list) -> list:
    """Pairs of labels of one axis whose boxes overlap (a pixel of slack)."""
    found = []
    for i, a in enumerate(boxes):
        for b in boxes[i + 1 :]:
            if (
                a[0] == b[0]
                and a[2] < b[3] - 1
                and b[2] < a[3] - 1
                and a[4] < b[5] - 1
                and b[4] < a[5] - 1
            ):
                found.append((a[1], b[1]))
    return found


@pytest.mark.parametrize("width", [1100, 390])
def test_legends_name_what_is_drawn_and_axis_labels_never_overlap(browser, tmp_path, width):
    """On a busy generated log (timestamps) and on interleaved pods: the timeline's
    legend names exactly the series it draws, the top sequences' bars are labelled by
    their first lines, and no two labels of an axis overlap, on a desktop and a phone."""
    log = tmp_path / "service.log"
    subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "genlog.py"), str(log), "20000"], check=True
    )
    pages = [
        make_report(tmp_path, "service", ["-w", "5", "--normalize", "timestamp", str(log)]),
        make_report(tmp_path, "pods", RUNS["pods"]),
    ]
    for page, _ in pages:
        opened = Opened(browser, page, width)
        charts = json.loads(opened.page.inner_text("#seqdedup-charts"))
        layers = charts["chart-timeline"]["layer"]
        drawn = {layer["encoding"]["color"]["datum"] for layer in layers}
        assert sorted(opened.page.evaluate(LEGEND, "chart-timeline")) == sorted(drawn)
        assert all(
            not label.startswith("#") or " " in label
            for label in [v["rank"] for v in charts["chart-top"]["data"]["values"]]
        )
        for chart in charts:
            boxes = opened.page.evaluate(AXIS_LABELS, chart)
            assert boxes and not overlapping(boxes), (chart, width, overlapping(boxes))
        opened.check_loaded(f"{page.stem}-legend")
        opened.close()


def test_the_diff_page_loads_draws_its_changes_and_counts_them(browser, tmp_path):
    """seqdedup diff --report: the CI example's page (last green run against the failing
    one), at both widths: every change's bar on the timeline, the figures and the table
    of top changes as the JSON answer has them, a change opening to its records."""
    page_path = tmp_path / "diff.html"
    ci = EXAMPLES / "ci"
    args = ["diff", "--normalize", "all", str(ci / "green.log"), str(ci / "failed.log")]
    done = subprocess.run(
        [str(BIN / "seqdedup"), *args[:1], "--report", str(page_path), *args[1:]],
        capture_output=True,
        env=user_env(),
        timeout=120,
        check=False,
    )
    assert done.returncode == 1, done.stderr.decode()
    answer = json.loads(
        subprocess.run(
            [str(BIN / "seqdedup"), *args[:1], "--format", "json", *args[1:]],
            capture_output=True,
            env=user_env(),
            timeout=120,
            check=False,
        ).stdout
    )
    for width in (1100, 390):
        opened = Opened(browser, page_path, width)
        try:
            opened.check_loaded("diff")
            shown = opened.figures()
            assert int(shown["records"]) == answer["records"]
            for kind in ("new", "broken", "more", "less", "gone"):
                assert int(shown[kind]) == answer["counts"][kind]
            bars = opened.page.locator("#chart-timeline svg g.mark-rect path").count()
            drawn = ("new", "values", "broken", "more", "less")
            assert bars == sum(answer["counts"][k] for k in drawn)
            rows = opened.page.locator("#counts tbody tr")
            more = next(c for c in answer["changes"] if c["kind"] == "more")
            row = opened.page.locator('#counts tr[data-kind="more"] td')
            assert [row.nth(2).inner_text(), row.nth(3).inner_text()] == [
                f"{more['bad']:,}",
                f"{more['good']:,}",
            ]
            assert rows.count() == sum(1 for c in answer["changes"] if c["kind"] != "known")
        finally:
            opened.close()
    opened = Opened(browser, page_path, 1100)
    try:
        first = opened.page.locator("ol.sequences li").first  # (new changes come first)
        first.locator("summary").click()
        text = first.locator("pre.text").inner_text()
        assert "HEAD is now at 317017a" in text
    finally:
        opened.close()
