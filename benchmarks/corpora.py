"""The corpora the benchmarks run on, built at run time from what the machine has
(nothing of them is committed): the generated log (genlog.py) and real text, the
section-1 man pages and the Python standard library's sources (bench.py's
CORPUS_CODE), and Debian's changelogs and copyright files; up to ``lines`` lines each.
Also what the benchmarks share to measure on them: their command line (``--lines``,
``--runs``) and the CPU of one run of a command."""

from __future__ import annotations

import argparse
import gzip
import resource
import subprocess
import sys
from pathlib import Path

from bench import CORPORA, CORPUS_CODE  # type: ignore[import-not-found]

from genlog import log_lines  # type: ignore[import-not-found]

SHORT = {"man": "man pages", "stdlib": "stdlib"}


def text_corpus(folder: Path, name: str, files: list[Path], lines: int) -> Path:
    """The first ``lines`` lines of ``files`` (gzip ones decompressed), as one file."""
    target = folder / f"{name}.txt"
    written = 0
    with target.open("wb") as out:
        for path in files:
            try:
                data = path.read_bytes()
                data = gzip.decompress(data) if path.suffix == ".gz" else data
            except OSError:
                continue
            chunk = data.splitlines(keepends=True)[: lines - written]
            out.write(b"".join(chunk))
            written += len(chunk)
            if written >= lines:
                break
    return target


def build(folder: Path, lines: int, debian: bool = False) -> list[tuple[str, Path]]:
    """(name, file) of each corpus; ``debian``: the changelogs and copyright files too
    (those the machine has none of are left out)."""
    generated = folder / "generated.log"
    generated.write_text("".join(line + "\n" for line in log_lines(lines)))
    found = [("generated log", generated)]
    for kind, _, _ in CORPORA:
        target = folder / f"{kind}.txt"
        code = [sys.executable, "-c", CORPUS_CODE, kind, str(target), str(lines)]
        subprocess.run(code, check=True)
        found.append((SHORT[kind], target))
    if debian:
        docs = Path("/usr/share/doc")
        for name, pattern in (
            ("changelogs", "*/changelog.Debian.gz"),
            ("copyrights", "*/copyright"),
        ):
            found.append((name, text_corpus(folder, name, sorted(docs.glob(pattern)), lines)))
    return [(name, path) for name, path in found if path.stat().st_size]


def arguments(doc: str) -> argparse.Namespace:
    """``--lines N`` (per corpus, default 1,000,000) and ``--runs K`` (default 5)."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--lines", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=5)
    return parser.parse_args()


def child_cpu(command: list[str], out: Path | None = None) -> float:
    """The CPU seconds (user + system) of one run of ``command``, its output to
    ``out`` (None: discarded)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    if out is None:
        subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    else:
        with out.open("wb") as sink:
            subprocess.run(command, stdout=sink, check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
