"""The report page (``--report FILE.html``, ``seqdedup-library report``): one HTML file
that works offline, written from the page's data (``page.data``) with a Jinja2 template
(``templates/report.html.jinja``) and the charts of ``page.charts``, drawn by the
Vega-Lite script embedded in the page.

That script (Vega, Vega-Lite and Vega-Embed, about 0.9 MB) comes from the installed
``vl-convert-python`` package, which bundles it on request (about 1.5 s); the bundle is
kept in the user's cache folder under the package's version, so later pages take it as
it is. Both packages are the extra ``seqdedup[report]``; :func:`check_report_extra`
refuses ``--report`` in one line before the run when either is missing.
"""

from __future__ import annotations

import json
import os
import tempfile
from importlib.util import find_spec
from pathlib import Path
from typing import TYPE_CHECKING

from seqdedup.base.errors import SeqdedupError, UsageError
from seqdedup.config.settings import Config
from seqdedup.page.picture import RunPicture

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from seqdedup.api import Deduplicator
    from seqdedup.budget.reduce import Reduction
    from seqdedup.page.types import Page
    from seqdedup.run.stats import Stats

EXTRA = "pip install 'seqdedup[report]'"
# A page without a network: only the page's own two scripts run, allowed by their
# SHA-256 (so a script that escaping missed would not run: no 'unsafe-inline'); Vega
# needs eval for its expressions; styles only from the page, images only as data.
POLICY = (
    "default-src 'none'; script-src {hashes} 'unsafe-eval'; "
    "style-src 'unsafe-inline'; img-src data:"
)
# The page's own script: every chart drawn from the embedded specifications.
DRAW = """
(function () {
  var charts = JSON.parse(document.getElementById("seqdedup-charts").textContent);
  var pending = Object.keys(charts).map(function (id) {
    var options = { actions: false, renderer: "svg" };
    return vegaEmbed("#" + id, charts[id], options).catch(function (error) {
      document.getElementById(id).textContent = "This chart could not be drawn: " + error;
      console.error(error);
    });
  });
  Promise.all(pending).then(function () { document.body.setAttribute("data-drawn", "yes"); });
})();
"""


def script_hash(script: str) -> str:
    """A CSP source that allows exactly this inline script."""
    import base64
    import hashlib

    digest = hashlib.sha256(script.encode("utf-8")).digest()
    return f"'sha256-{base64.b64encode(digest).decode('ascii')}'"


SNIPPET = "window.vegaEmbed = vegaEmbed;"  # (the bundle's only global: the page calls it)


def check_report_extra(option: str = "--report") -> None:
    """One line, before anything runs, when the report's packages are not installed."""
    missing = [name for name in ("jinja2", "vl_convert") if find_spec(name) is None]
    if missing:
        raise UsageError(f"{option} needs the report extra ({', '.join(missing)} missing): {EXTRA}")


def check_report_path(path: str, option: str = "--report") -> Path:
    """The page's path, refused before the run when its folder cannot take it."""
    target = Path(path)
    folder = target.parent if str(target.parent) else Path(".")
    if target.is_dir():
        raise UsageError(f"{option} {path}: is a directory")
    if not folder.is_dir():
        raise UsageError(f"{option} {path}: no such directory: {folder}")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise UsageError(f"{option} {path}: cannot write in {folder}")
    return target


def vega_script() -> str:
    """Vega, Vega-Lite and Vega-Embed as one script, from the cache or the package."""
    import vl_convert

    from seqdedup.base.settings_paths import cache_folder

    version = getattr(vl_convert, "__version__", "unknown")
    cached = Path(cache_folder()) / f"vega-embed-{version}.js"
    try:
        return cached.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        pass
    script: str = vl_convert.javascript_bundle(SNIPPET)
    try:
        cached.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        _replace(cached, script.encode("utf-8"))
    except OSError:
        pass  # (no cache: the next page bundles it again)
    return script


def _replace(path: Path, data: bytes) -> None:
    """Write ``path`` whole or not at all (a temporary file renamed over it)."""
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
        os.chmod(temporary, 0o644)
        os.replace(temporary, path)
    except BaseException:
        os.unlink(temporary)
        raise


def script_json(value: object) -> str:
    """JSON that is safe inside a ``<script>`` element (no ``<``, ``>`` or ``&``)."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def render(data: Page) -> str:
    """The page's HTML for ``data`` (a run's or a library's)."""
    from seqdedup.page.charts import charts_of

    summary: dict[str, object] = {key: value for key, value in data.items() if key != "top"}
    summary["top"] = [
        {key: value for key, value in row.items() if key != "text"} for row in data.get("top", [])
    ]
    return render_template("report.html.jinja", charts_of(data), data=data, summary=summary)


def render_template(name: str, charts: Mapping[str, object], **context: object) -> str:
    """A page from the template ``name``, its charts (Vega-Lite specifications by the
    id of the element each is drawn in) and its context; ``summary`` (if given)
    embedded as JSON."""
    from importlib.resources import files

    import jinja2
    from markupsafe import Markup

    template_text = (files("seqdedup") / "templates" / name).read_text("utf-8")
    environment = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined)
    environment.filters["count"] = lambda n: f"{n:,}" if isinstance(n, int) else n
    script = vega_script()
    if "</script" in script.lower() or "<!--" in script:  # (never so far: checked)
        raise SeqdedupError("the Vega-Lite script cannot be embedded: it holds </script")
    hashes = " ".join(script_hash(text) for text in (script, DRAW))
    if "summary" in context:
        context["summary"] = Markup(script_json(context["summary"]))
    return environment.from_string(template_text).render(
        policy=POLICY.format(hashes=hashes),
        vega=Markup(script),
        draw=Markup(DRAW),
        charts=Markup(script_json(charts)),
        **context,
    )


def write_html(path: Path, html: str) -> int:
    """A page's HTML written whole (or not at all) to ``path``; its size in bytes."""
    # (a text that still holds a lone surrogate shows it escaped, never ends the run)
    page = html.encode("utf-8", "backslashreplace")
    try:
        _replace(path, page)
    except OSError as exc:
        raise SeqdedupError(f"cannot write the report {path}: {exc.strerror or exc}") from None
    return len(page)


def write_page(path: Path, data: Page) -> int:
    """The page written whole (or not at all) to ``path``; its size in bytes (every
    name is made displayable where the data is made)."""
    return write_html(path, render(data))


class ReportPage:
    """One run's page: checked before the run (:func:`check_report_extra`, the path),
    its :class:`~seqdedup.page.picture.RunPicture` fed by the run, written at its end."""

    def __init__(self, path: str, config: Config, in_place: bool = True) -> None:
        """``in_place``: the named inputs stay as they are while the run reads them
        (not --follow), so the page reads their texts back from them."""
        import time

        check_report_extra()
        self.path = check_report_path(path)
        self.config = config
        self.picture = RunPicture(config.delimiter, config.inputs if in_place else ())
        self._clock = time.monotonic
        self._started = time.monotonic()

    def run(self, on_explain: Callable[[str], None] | None) -> Deduplicator[bytes]:
        """The run this page watches."""
        from seqdedup.api import Deduplicator

        return Deduplicator(self.config, on_explain, observer=self.picture)

    def write(self, stats: Stats, bytes_written: int) -> int:
        """The page of a run that ended (or was stopped); its size in bytes."""
        from seqdedup.page.data import TOP, page_data

        picture = self.picture
        ranked = picture.ranking.ranked(TOP) if picture.ranking is not None else []
        names = list(self.config.inputs)
        seconds = self._clock() - self._started
        data = page_data(picture, stats, self.config, ranked, names, bytes_written, seconds)
        try:
            return write_page(self.path, data)
        finally:
            picture.close()

    def write_reduction(self, data: bytes, reduction: Reduction, bytes_written: int) -> int:
        """The page of a ``--budget`` reduction: its folds and elisions as the pieces."""
        from seqdedup.page.reduction import reduction_data

        seconds = self._clock() - self._started
        document = reduction_data(
            self.picture, self.config, data, reduction, bytes_written, seconds
        )
        try:
            return write_page(self.path, document)
        finally:
            self.picture.close()
