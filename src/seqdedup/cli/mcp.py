"""``seqdedup-mcp``: seqdedup as a Model Context Protocol server (stdio), on the official
SDK (extra ``seqdedup[mcp]``, major version 2). Tools: reduce a file or a text within a
token budget, expand a reference exactly, the top repeated sequences of a file, the
window and keys to use (docs/llm-context.md), what changed in a file since good ones
(docs/diff.md).

It reads files only under its roots (the folders named on its command line, else the
current folder), takes no settings file (its tools take their options, none of which
runs a command or names a file to write), and keeps what reductions removed in one
store under the user's cache folder (mode 0600, a size cap, a tool that clears it), so
a reference expands across calls and sessions until the cap pushes it out.
"""

from __future__ import annotations

import argparse
import base64
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from seqdedup.base.errors import SeqdedupError, UsageError, exit_status

if TYPE_CHECKING:
    from mcp.types import CallToolResult

PROG = "seqdedup-mcp"
T = TypeVar("T")
DEFAULT_CAP = 256 << 20  # bytes of removed text the store keeps (then the oldest go)
READ_CAP = 64 << 20  # bytes of a file or a text the reduce tool takes (no byte read past)


def default_store() -> Path:
    """The store under the user's cache folder ($XDG_CACHE_HOME, else ~/.cache)."""
    from seqdedup.base.settings_paths import cache_folder

    return Path(cache_folder()) / "mcp-removed.db"


def open_store(path: Path) -> Any:
    """The store, its folder 0700 and its file 0600 (created so before SQLite opens it)."""
    from seqdedup.budget.removed import RemovedStore

    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    os.close(os.open(path, os.O_CREAT | os.O_WRONLY, 0o600))
    os.chmod(path, 0o600)
    return RemovedStore(path)


class Roots:
    """The folders whose files the tools may read."""

    def __init__(self, folders: Sequence[Path]) -> None:
        self.folders = [folder.resolve() for folder in folders]

    def file(self, name: str) -> Path:
        path = Path(name)
        resolved = (path if path.is_absolute() else self.folders[0] / path).resolve()
        if not any(resolved.is_relative_to(folder) for folder in self.folders):
            raise SeqdedupError(f"'{name}' lies outside the server's roots")
        if not resolved.is_file():
            raise SeqdedupError(f"'{name}' is not a file")
        return resolved


def read_capped(path: Path, cap: int = READ_CAP) -> bytes:
    """A file's bytes, no more than one past ``cap`` read (a larger file is refused by
    the caller: a 10 GB sparse file costs 64 MiB, not a MemoryError)."""
    try:
        with path.open("rb") as file:
            return file.read(cap + 1)
    except OSError as exc:
        raise SeqdedupError(f"cannot read {path}: {exc.strerror or exc}") from None


def reduce_tool(
    roots: Roots,
    store_path: Path,
    cap: int,
    budget: int,
    path: str | None,
    text: str | None,
    window: int,
    normalize: str | None,
    keep: Sequence[str],
) -> dict[str, Any]:
    """The ``reduce`` tool: see :func:`build_server`."""
    from seqdedup.budget.reduce import reduce_input
    from seqdedup.budget.removed import digest_of
    from seqdedup.config.settings import Config
    from seqdedup.engine.choice import chosen_engine

    if (path is None) == (text is None):
        raise SeqdedupError("give either path or text")
    data = read_capped(roots.file(path)) if path is not None else (text or "").encode()
    if len(data) > READ_CAP:
        raise SeqdedupError(
            f"the {'file' if path is not None else 'text'} holds more than {READ_CAP:,} bytes: "
            "reduce a part of it (its head or tail), or run seqdedup --budget on it"
        )
    steps = (("normalize", normalize),) if normalize else ()
    config = Config(
        window_size=window, max_history=None, key_steps=steps, budget=budget, keep=tuple(keep)
    )
    engine = chosen_engine()
    reduction = reduce_input(data, config.budget_options, config.key_options, engine=engine)
    store = open_store(store_path)
    try:
        store.save(
            reduction.pieces,
            reduction.text,
            b"\n",
            digest_of(data),
            reduction.markers,
            reduction.marker_bytes,
        )
        store.prune(cap)
    finally:
        store.close()
    return {
        "text": reduction.text.decode("utf-8", "replace"),
        "references": [
            {"reference": reduction.references[d], "lines": list(reduction.lines[d])}
            for d in reduction.pieces
        ],
        "tokens_in": reduction.tokens_in,
        "tokens_out": reduction.tokens_out,
        "within_budget": reduction.met,
        "lines_kept_verbatim": reduction.verbatim_lines,
    }


def expand_tool(store_path: Path, reference: str) -> dict[str, Any]:
    """The ``expand`` tool: see :func:`build_server`."""
    if not store_path.exists():
        raise SeqdedupError(f"{reference} is not in the store (it is empty)")
    store = open_store(store_path)
    try:
        data = store.data(store.resolve(reference))
    finally:
        store.close()
    try:
        text, exact = data.decode("utf-8"), True
    except UnicodeDecodeError:
        text, exact = data.decode("utf-8", "replace"), False
    return {
        "reference": reference,
        "text": text,
        "text_is_exact": exact,
        "base64": base64.b64encode(data).decode("ascii"),
        "bytes": len(data),
    }


def top_tool(
    roots: Roots, path: str, window: int, count: int, normalize: str | None = "all"
) -> list[dict[str, Any]]:
    """The ``top`` tool: see :func:`build_server`."""
    from seqdedup.api import Deduplicator
    from seqdedup.run.top import fill_first_records

    steps = (("normalize", normalize),) if normalize else ()
    dedup = Deduplicator(window_size=window, max_history=None, top=count, key_steps=steps)
    data = roots.file(path).read_bytes()
    dedup.feed_bytes(data)
    dedup.flush_bytes()
    rows = dedup.stats.top_sequences or []
    fill_first_records(rows, lambda _: [data], b"\n", "-")  # (every row names its text)
    return [dict(row) for row in rows]


def suggest_tool(roots: Roots, path: str) -> dict[str, Any]:
    """The ``suggest`` tool: see :func:`build_server`; the document as it is made."""
    from seqdedup.config.settings import Config
    from seqdedup.run.suggest import sample_records, suggest

    records = sample_records([roots.file(path).read_bytes()], b"\n", 1_000_000)
    return {"suggest_window": suggest(records, Config(max_history=None))}


def diff_tool(
    roots: Roots,
    good: Sequence[str],
    bad: str,
    budget: int,
    normalize: str | None,
    factor: float,
    min_count: int,
) -> dict[str, object]:
    """The ``diff`` tool: see :func:`_add_lookups`."""
    from seqdedup.base.records import split_records
    from seqdedup.base.tokens import estimate_tokens
    from seqdedup.config.settings import Config
    from seqdedup.diff.compare import DiffOptions
    from seqdedup.diff.inputs import diff_records
    from seqdedup.diff.text import as_text, utf8

    if not good:
        raise SeqdedupError("give at least one good file")
    if budget < 1:  # (factor and min_count: DiffOptions checks them, in the same words)
        raise SeqdedupError("budget must be at least 1")
    options = DiffOptions(factor=factor, min_count=min_count)
    inputs, left = [], READ_CAP  # (the cap is the call's: one file named 40 times counts 40)
    for name in [*good, bad]:
        data = read_capped(roots.file(name), left)
        if len(data) > left:
            raise SeqdedupError(
                f"the files named hold more than {READ_CAP:,} bytes together: run seqdedup diff"
            )
        left -= len(data)
        inputs.append(split_records(data, b"\n"))
    steps = (("normalize", normalize),) if normalize else ()
    config = Config(key_steps=steps)
    found = diff_records(inputs[:-1], inputs[-1], config, options)
    return {
        "text": utf8(as_text(found, bad, list(good), budget, estimate_tokens)),
        "changed": found.changed,
        "records": found.records,
        "counts": {
            kind: found.number_of(kind)
            for kind in ("new", "values", "broken", "more", "less", "gone")
        },
    }


def loops_tool(roots: Roots, path: str, normalize: str) -> dict[str, object]:
    """The ``loops`` tool: see :func:`_add_lookups`; ``seqdedup loops --format json``'s
    answer for one transcript."""
    from seqdedup.cli.loops import answer_of, loops_of
    from seqdedup.loops.calls import mask_bits

    bits = mask_bits(normalize)
    data = read_capped(roots.file(path))
    if len(data) > READ_CAP:
        raise SeqdedupError(f"'{path}' holds more than {READ_CAP:,} bytes: run seqdedup loops")
    return answer_of(path, *loops_of(data, path, bits))


def guarded(call: Callable[..., T], *args: Any) -> T:
    """A tool's work; what ends it with an error is the tool's error (one line)."""
    from mcp.server.mcpserver.exceptions import ToolError

    try:
        return call(*args)
    except SeqdedupError as exc:
        raise ToolError(str(exc)) from None


def _tool_of(server: Any) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """A decorator that makes a function one of the server's tools, described by its
    docstring without the source's indentation."""
    import inspect

    def register(function: Callable[..., Any]) -> Callable[..., Any]:
        registered: Callable[..., Any] = server.tool(
            description=inspect.cleandoc(function.__doc__ or "")
        )(function)
        return registered

    return register


def text_result(found: dict[str, Any]) -> CallToolResult:
    """A tool's result whose text is ``found["text"]`` itself (nothing around it), the
    rest of ``found`` its structured content."""
    from mcp.types import CallToolResult, TextContent

    text = found.pop("text")
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=found)


def build_server(roots: Roots, store_path: Path, cap: int) -> Any:
    """The server and its tools (errors become tool errors, one line each)."""
    from mcp.server.mcpserver import MCPServer
    from mcp.types import CallToolResult

    # (the SDK reads a tool's annotations in this module's namespace, where the SDK's
    # own types are bound only once it is imported, here)
    globals().update(CallToolResult=CallToolResult)
    from seqdedup.base.version import __version__

    server = MCPServer(
        "seqdedup",
        version=__version__,
        instructions="Reduce logs and tool output to a token budget, exactly: every fold "
        "and elision carries a reference (sd:...) that the expand tool restores.",
    )

    tool = _tool_of(server)

    # (async, so that it runs in the main thread, whose timer limits the time a `keep`
    # pattern may take on one line: the SDK runs a plain function on a worker thread)
    @tool
    async def reduce(
        budget: int = 8000,
        path: str | None = None,
        text: str | None = None,
        window: int = 10,
        normalize: str | None = None,
        keep: list[str] | None = None,
    ) -> CallToolResult:
        """Reduce a file (path, under the server's roots) or a text to fit in `budget`
        tokens: errors, warnings and tracebacks stay verbatim, repeats are folded and
        the rest elided; each fold or elision line names a reference (sd:...) that
        `expand` restores byte for byte. `normalize`: classes (timestamp,uuid,ip,hex,
        number or all, path, quoted, space) masked before comparing; `keep`: patterns of lines
        kept verbatim. The result is the reduced text itself; its references (and the lines each
        replaced) and the tokens in and out come as structured content."""
        found = guarded(
            reduce_tool, roots, store_path, cap, budget, path, text, window, normalize, keep or []
        )
        return text_result(found)

    @tool
    def expand(reference: str) -> dict[str, Any]:
        """The exact text a reference (sd:...) of an earlier reduction stands for
        (base64 holds its bytes; text is them as UTF-8)."""
        return guarded(expand_tool, store_path, reference)

    _add_lookups(tool, roots, store_path)
    return server


def _add_lookups(
    tool: Callable[[Callable[..., Any]], Callable[..., Any]], roots: Roots, store_path: Path
) -> None:
    """The tools that look a file or the store up: top, suggest, diff, loops,
    clear_store."""

    @tool
    def top(
        path: str, window: int = 10, count: int = 10, normalize: str | None = "all"
    ) -> list[dict[str, Any]]:
        """The sequences of `window` or more lines that repeat most in a file (records
        removed, times seen, length, where first seen). `normalize`: classes masked
        before comparing (default all: lines that differ only in timestamps, ids and
        numbers repeat; "" compares the lines as they are)."""
        return guarded(top_tool, roots, path, window, count, normalize)

    @tool
    def suggest(path: str) -> dict[str, Any]:
        """What each window size would remove from a file, the window to use, and keys
        (normalisations) that would remove more."""
        return guarded(suggest_tool, roots, path)

    @tool
    def diff(
        good: list[str],
        bad: str,
        budget: int = 8000,
        normalize: str | None = "all",
        factor: float = 2.0,
        min_count: int = 4,
    ) -> CallToolResult:
        """What changed in the file `bad` since the `good` files (paths under the
        server's roots): new lines and blocks verbatim with their line numbers, known
        sequences `factor` times more or less often (seen `min_count` times or more),
        sequences that always ran whole in the good files and break in `bad`; the rest
        counted as known. `normalize`: classes masked before comparing (default all:
        timestamps, ids and numbers do not make a line new). The result is the answer
        as text within `budget` tokens; `changed` and the counts by kind come as
        structured content."""
        found = guarded(diff_tool, roots, good, bad, budget, normalize, factor, min_count)
        return text_result(found)

    @tool
    def loops(path: str, normalize: str = "all") -> dict[str, object]:
        """Whether an agent's transcript (a file under the server's roots: Claude Code
        session JSONL, SWE-agent .traj, mini-swe-agent .traj.json, OpenHands events)
        shows the agent repeating itself: each loop's period (calls per round, 1-64),
        iterations, first and last record in the file's numbering, extra calls, and the
        calls of one round. `normalize`: classes masked before calls are compared
        (default all: timestamps, ids and numbers)."""
        return guarded(loops_tool, roots, path, normalize)

    @tool
    def clear_store() -> str:
        """Forget every reference kept so far."""
        store_path.unlink(missing_ok=True)
        return "the store is empty"


def build_parser() -> argparse.ArgumentParser:
    from seqdedup.cli.parsing import OneLineErrors

    parser = OneLineErrors(
        prog=PROG,
        description="seqdedup as an MCP server on standard input and output: reduce logs "
        "to a token budget, expand references, top sequences, window suggestions.",
    )
    parser.add_argument(
        "roots",
        nargs="*",
        metavar="DIR",
        help="folders whose files the tools may read (default: the current folder)",
    )
    parser.add_argument(
        "--store",
        default=None,
        metavar="FILE",
        help=f"where removed text is kept (default {default_store()})",
    )
    parser.add_argument(
        "--store-cap",
        type=int,
        default=DEFAULT_CAP,
        metavar="BYTES",
        help=f"removed text kept at most, oldest dropped first (default {DEFAULT_CAP:,})",
    )
    from seqdedup.cli.completion import add_option

    add_option(parser)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the server until its client closes standard input."""

    def body() -> int:
        parser = build_parser()
        if argv is None:
            from seqdedup.cli.completion import answer

            answer(parser)
        args = parser.parse_args(sys.argv[1:] if argv is None else list(argv))
        try:
            import mcp.server.mcpserver  # noqa: F401
        except ImportError:
            raise UsageError(
                "the MCP server needs the MCP SDK: pip install 'seqdedup[mcp]'"
            ) from None
        folders = [Path(root) for root in args.roots] or [Path.cwd()]
        for folder in folders:
            if not folder.is_dir():
                raise UsageError(f"root '{folder}' is not a folder")
        store = Path(args.store) if args.store else default_store()
        build_server(Roots(folders), store, args.store_cap).run("stdio")
        return 0

    return exit_status(PROG, body, sys.stderr)


def entry_point() -> None:
    sys.exit(main())
