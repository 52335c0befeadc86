"""Write the man page seqdedup.1 from the command's own parser and the documentation's
examples (argparse-manpage draws the options); tests/test_manpage.py checks that the
shipped man/seqdedup.1 is what this writes.

    python tools/manpage.py > man/seqdedup.1
    python tools/manpage.py seqdedup-expand > man/seqdedup-expand.1
    python tools/manpage.py seqdedup-mcp > man/seqdedup-mcp.1
    python tools/manpage.py seqdedup-library > man/seqdedup-library.1
    python tools/manpage.py seqdedup-dask > man/seqdedup-dask.1
    python tools/manpage.py seqdedup-diff > man/seqdedup-diff.1
    python tools/manpage.py seqdedup-loops > man/seqdedup-loops.1
"""

from __future__ import annotations

import re
import sys
from functools import partial
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATE = "2026-12-06"  # of the options and texts below: change it when they change

RULE = (
    "With window size W (-w), a record is skipped when it lies inside W consecutive "
    "records whose keys equal those of W consecutive records that ended before these "
    "began and are still in the history (-m N: the later run of W starts at most N "
    "records after the earlier one; with --stream-by, its last record at most N after "
    "the earlier one's). A run of W never matches itself or a copy that overlaps it: "
    "on 50 lines 'a', -w 2 keeps 2. Everything else is written, unchanged, in order."
)

SECTIONS = {
    "FILES": [
        (
            "~/.config/seqdedup/config.toml",
            "Your settings ($XDG_CONFIG_HOME/seqdedup/config.toml when that is set): keys "
            "are the long option names; [profile.NAME] tables apply with --profile NAME.",
        ),
        (".seqdedup.toml", "A project's settings, in the current directory, over yours."),
    ],
    "ENVIRONMENT": [
        ("SEQDEDUP_ENGINE", "python: the pure-Python engine; c: the compiled kernel or exit 1."),
        ("NO_COLOR", "Set: no colour (--color auto)."),
        ("FORCE_COLOR", "Set: colour even in a pipe (--color auto)."),
        ("XDG_CONFIG_HOME", "Where your settings file is looked for."),
    ],
    "EXIT STATUS": [
        ("0", "Done (also when the reader of the output went away: seqdedup FILE | head)."),
        ("1", "An invalid argument or setting, an unreadable input, a failure to write."),
        ("130", "Ctrl-C; 128 + N for another signal N (SIGTERM: 143)."),
        ("seqdedup diff", "0: nothing changed, 1: something changed, 2: an error (as diff)."),
        ("seqdedup loops", "0: no loop, 1: a loop found, 2: an error."),
    ],
}
# seqdedup diff's, as diff(1), cmp(1) and grep(1) give theirs: its errors are 2, not 1
DIFF_EXIT = [
    ("0", "Nothing changed: BAD holds only what GOOD knows, about as often."),
    ("1", "Something changed: new records, rate changes, broken or gone sequences."),
    ("2", "An invalid argument, an unreadable input, a failure to write."),
    ("130", "Ctrl-C; 128 + N for another signal N (SIGTERM: 143)."),
]
LOOPS_EXIT = [
    ("0", "No transcript holds a loop (and --hook, whatever happened, unless it blocks)."),
    ("1", "A transcript holds a loop."),
    ("2", "An invalid argument, an unreadable transcript; --hook --block: a call refused."),
]


def readme_examples() -> list[tuple[str, str]]:
    """The documentation's first examples (docs/ci-logs.md, "Examples"): each comment
    block and the commands under it."""
    page = (ROOT / "docs" / "ci-logs.md").read_text()
    block = re.search(r"## Examples\n\n```sh\n(.*?)```", page, flags=re.DOTALL)
    assert block is not None, "docs/ci-logs.md has no Examples block"
    out = []
    for group in block.group(1).strip().split("\n\n"):
        lines = group.splitlines()
        comment = " ".join(line.lstrip("# ") for line in lines if line.startswith("#"))
        comment = re.sub(r'\(see "([^"]+)"(?: below)?\)', r"(docs: \1)", comment)
        commands = "\n".join(line for line in lines if not line.startswith("#"))
        out.append((comment, commands))
    return out


def escaped(text: str) -> str:
    """Text for roff: backslashes and dashes kept, no line starting with a dot."""
    text = text.replace("\\", "\\e").replace("-", "\\-")
    return "\n".join(
        "\\&" + line if line.startswith((".", "'")) else line for line in text.split("\n")
    )


def page() -> str:
    sys.path.insert(0, str(ROOT / "src"))
    from seqdedup.cli.options import build_parser

    text = drawn(build_parser(), "seqdedup", "remove repeated sequences of records from a stream")
    text += f".SH THE RULE\n{escaped(RULE)}\n"
    text += ".SH EXAMPLES\n"
    for comment, commands in readme_examples():
        text += f".PP\n{escaped(comment)}\n.PP\n.RS\n.nf\n{escaped(commands)}\n.fi\n.RE\n"
    text += roff_sections(SECTIONS)
    text += ".SH SEE ALSO\n\\fBuniq\\fR(1), \\fBseqdedup\\-diff\\fR(1), "
    text += "\\fBseqdedup\\-loops\\fR(1), "
    text += "\\fBseqdedup\\-dask\\fR and \\fBseqdedup\\-library\\fR "
    text += "(their \\-\\-help), and the documentation (docs/) for everything in detail.\n"
    return text


# The companion commands: the module and function that build each one's parser, and
# what the command does (the NAME line)
COMPANIONS = {
    "seqdedup-expand": (
        "seqdedup.cli.expand",
        "build_parser",
        "restore what seqdedup --budget removed, byte for byte",
    ),
    "seqdedup-mcp": (
        "seqdedup.cli.mcp",
        "build_parser",
        "seqdedup as a Model Context Protocol server (stdio)",
    ),
    "seqdedup-library": (
        "seqdedup.cli.library",
        "build_parser",
        "what a seqdedup library holds: info, show, prune",
    ),
    "seqdedup-dask": (
        "seqdedup.cli.dask",
        "cluster_parser",
        "seqdedup over many files on a Dask cluster",
    ),
    "seqdedup-diff": (  # (the page of `seqdedup diff`, named as git names its commands')
        "seqdedup.cli.diff",
        "build_diff_parser",
        "what changed in a log since the good runs",
    ),
    "seqdedup-loops": (  # (the page of `seqdedup loops`)
        "seqdedup.cli.loops",
        "build_loops_parser",
        "an agent repeating itself, found in its transcript",
    ),
}


def companion_page(name: str) -> str:
    """A companion command's page, from its own parser."""
    import importlib

    sys.path.insert(0, str(ROOT / "src"))
    module, function, description = COMPANIONS[name]
    parser = getattr(importlib.import_module(module), function)()
    return command_page(parser, name, description)


def roff_sections(sections: dict[str, list[tuple[str, str]]]) -> str:
    """Sections of tagged paragraphs (a name, then what it means)."""
    text = ""
    for heading, entries in sections.items():
        text += f".SH {heading}\n"
        for name, meaning in entries:
            text += f".TP\n\\fB{escaped(name)}\\fR\n{escaped(meaning)}\n"
    return text


def drawn(parser: object, name: str, description: str) -> str:
    """A command's page as argparse-manpage draws it from its parser."""
    from argparse_manpage.manpage import Manpage

    from seqdedup import __version__

    manpage = Manpage(
        parser,
        _data={
            "project_name": name,
            "version": __version__,
            "date": DATE,
            "description": description,
            "manual_title": "seqdedup manual",
            "manual_section": 1,
        },
    )
    return str(manpage).rstrip("\n") + "\n"


def command_page(parser: object, name: str, description: str) -> str:
    """A companion command's page: its options, exit statuses, where to read more."""
    text = drawn(parser, name, description)
    if name == "seqdedup-diff":  # (its program is two words: one title for man)
        text = text.replace(".TH SEQDEDUP DIFF ", ".TH SEQDEDUP\\-DIFF ", 1)
        text += roff_sections({"EXIT STATUS": DIFF_EXIT})
        text += ".SH SEE ALSO\n\\fBseqdedup\\fR(1), \\fBdiff\\fR(1), and the documentation "
        return text + "(docs/diff.md).\n"
    if name == "seqdedup-loops":
        text = text.replace(".TH SEQDEDUP LOOPS ", ".TH SEQDEDUP\\-LOOPS ", 1)
        text += roff_sections({"EXIT STATUS": LOOPS_EXIT})
        text += ".SH SEE ALSO\n\\fBseqdedup\\fR(1), \\fBseqdedup\\-mcp\\fR(1), and the "
        return text + "documentation (docs/loops.md).\n"
    text += roff_sections({"EXIT STATUS": SECTIONS["EXIT STATUS"][:2]})
    text += ".SH SEE ALSO\n\\fBseqdedup\\fR(1) (\\-\\-budget, \\-\\-keep\\-removed), and "
    text += "the documentation (docs/llm-context.md).\n"
    return text


PAGES = {"seqdedup": page, **{name: partial(companion_page, name) for name in COMPANIONS}}

if __name__ == "__main__":
    sys.stdout.write(PAGES[sys.argv[1] if len(sys.argv) > 1 else "seqdedup"]())
