"""``--suggest-window``: what each window size would remove from an input, and which one
to use.

The input's records (its first ``sample`` of them) are keyed and hashed once, as a run
would key them; the rule then runs on those hashes for each W of :data:`WIDTHS` (with
an unlimited history, as on a named file). For each W: the records it would remove and
the runs they form. The lengths of the repeated blocks are those runs at W=2 (every
repeat of two or more records), as a histogram. The recommendation is the largest
W >= 2 that still removes at least :data:`KEEP` of what W=2 removes: blocks shorter
than that are rare, and a larger W leaves short coincidences (a blank line and a
closing brace) alone.

With ``--stream-by`` the rule runs per stream, as a run would (the decider, once per W).
Without key options, the keys are suggested too: at the recommended W, what a built-in
normalisation (timestamp, then all) and skipping the first fields of each record would
remove; one of them is suggested when it removes at least :data:`KEY_GAIN` of the
records more than the plain keys.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from itertools import compress
from shlex import quote
from typing import NamedTuple, NotRequired, TextIO, TypedDict

from seqdedup.config.settings import Config
from seqdedup.keys.kind import KIND_CLASSES


class WindowRow(TypedDict):
    window_size: int
    removed: int  # records the rule removes at this W
    runs: int  # the runs they form


class SizeRow(TypedDict):
    min_bytes: int  # -w 1 --min-bytes B
    removed: int
    runs: int


class BlockBucket(TypedDict):
    lengths: str  # "2-4", ..., "100+"
    blocks: int  # runs of that length at W = 2
    records: int  # the records in them


class KeyRow(TypedDict):
    keys: str  # the option as written ("--normalize timestamp"), or "(the keys as given)"
    removed: int  # records removed at KEY_WIDTH with those keys


class WithKeys(TypedDict):
    recommended: int
    reason: str
    recommended_min_bytes: int | None


class Suggestion(TypedDict):
    """What ``--suggest-window`` found: the document the command line renders (as tables
    or as JSON) and the MCP tool returns as it is."""

    records: int  # records read (the sample)
    windows: list[WindowRow]
    sizes: list[SizeRow]  # -w 1 with each minimum size (none with --stream-by)
    recommended_min_bytes: int | None  # a minimum size that makes W unnecessary
    size_reason: str
    repeated_blocks: list[BlockBucket]
    recommended: int  # the W to use
    reason: str
    keys: list[KeyRow]  # empty when the call gave key options
    recommended_keys: str | None
    with_keys: NotRequired[WithKeys]  # the W to use with the recommended keys
    kept: list[str]  # the options of the call the suggestion keeps (they shape the keys)
    command: str  # the one command line to copy: W, the keys, what it kept, the inputs


WIDTHS = (1, 2, 3, 5, 10, 20, 50)
SIZES = (32, 64, 128, 256)  # the minimum sizes tried (-w 1 --min-bytes B)
BUCKETS = ((2, 4), (5, 9), (10, 19), (20, 49), (50, 99), (100, None))
KEEP = 0.8  # of what W=2 removes, the recommended W still removes
DEFAULT_SAMPLE = 1_000_000
KEY_GAIN = 0.10  # of the records, more than the plain keys remove: a key is suggested
KEY_WIDTH = 2  # the keys are tried at this W: the one that finds every repeated block
# The keys tried, the least sweeping first: the option as the user would write it, and
# the config it makes
KEY_TRIALS: tuple[tuple[str, Callable[[Config], Config]], ...] = (
    ("--normalize timestamp", lambda c: c._replace(key_steps=(("normalize", "timestamp"),))),
    ("--skip-fields 1", lambda c: c._replace(skip_fields=1)),
    ("--skip-fields 2", lambda c: c._replace(skip_fields=2)),
    ("--normalize all", lambda c: c._replace(key_steps=(("normalize", "all"),))),
    # every class of a line's kind (seqdedup.keys.kind): paths and quoted values too
    (f"--normalize {KIND_CLASSES}", lambda c: c._replace(key_steps=(("normalize", KIND_CLASSES),))),
)
NEARLY = 0.9  # a key that removes this share of the best key's records is as good
# Options --suggest-window does not use: refused when given on the command line (a
# profile that sets them is no error)
IGNORED = {
    "window_size": "-w",
    "min_size": "--min-bytes/--min-tokens",
    "fold": "--fold",
    "annotate": "--annotate",
    "explain": "--explain",
    "top": "--top",
    "inverse": "--inverse",
}


def sample_records(chunks: Iterable[bytes], delimiter: bytes, limit: int | None) -> list[bytes]:
    """The first ``limit`` records of the chunks (all of them without a limit)."""
    from seqdedup.base.records import RecordSplitter

    splitter = RecordSplitter(delimiter)
    records: list[bytes] = []
    for chunk in chunks:
        records += splitter.split(chunk)
        if limit is not None and len(records) >= limit:
            return records[:limit]
    final = splitter.finish()
    if final is not None:
        records.append(final)
    return records if limit is None else records[:limit]


def suggest(records: list[bytes], config: Config) -> Suggestion:
    """Per W, the records removed and the runs; the histogram of repeated blocks; the
    recommended W and why; the keys, when none were given."""
    rows, blocks = width_rows(records, config)
    histogram = [
        BlockBucket(
            lengths=f"{low}-{high}" if high is not None else f"{low}+",
            blocks=sum(1 for n in blocks if low <= n and (high is None or n <= high)),
            records=sum(n for n in blocks if low <= n and (high is None or n <= high)),
        )
        for low, high in BUCKETS
    ]
    window, reason = recommend(rows)
    sizes = size_rows(records, config)
    min_bytes, size_reason = recommend_size(sizes, rows, window)
    keys = suggest_keys(config, records)
    best = _best_key(keys, len(records))
    kept = call_options(config)
    result = Suggestion(
        records=len(records),
        windows=rows,
        sizes=sizes,
        recommended_min_bytes=min_bytes,
        size_reason=size_reason,
        repeated_blocks=histogram,
        recommended=window,
        reason=reason,
        keys=keys,
        recommended_keys=best,
        kept=kept,
        command="",
    )
    chosen = _rule_options(window, min_bytes)
    if best is not None:  # the W (or size) to use with those keys
        trial = dict(KEY_TRIALS)[best](config)
        with_keys = suggest(records, trial)
        result["with_keys"] = WithKeys(
            recommended=with_keys["recommended"],
            reason=with_keys[
                "reason" if with_keys["recommended_min_bytes"] is None else "size_reason"
            ],
            recommended_min_bytes=with_keys["recommended_min_bytes"],
        )
        chosen = [*_rule_options(with_keys["recommended"], with_keys["recommended_min_bytes"])]
        chosen.append(best)
    named = [quote(name) for name in config.inputs if name != "-"]
    result["command"] = " ".join(["seqdedup", *chosen, *kept, *named])
    return result


def _rule_options(window: int, min_bytes: int | None) -> list[str]:
    """The options that give the rule: -w N, -w auto, or -w 1 --min-bytes B."""
    from seqdedup.engine.sized import AUTO_MIN_BYTES

    if min_bytes is None:
        return [f"-w {window}"]
    return ["-w auto"] if min_bytes == AUTO_MIN_BYTES else ["-w 1", f"--min-bytes {min_bytes}"]


def size_rows(records: list[bytes], config: Config) -> list[SizeRow]:
    """Per minimum size of SIZES, at W = 1: the records removed and the runs (none with
    --stream-by, whose streams take no minimum size)."""
    if config.stream_split:
        return []
    from seqdedup.base.engine import SEED
    from seqdedup.config.groups import RuleOptions
    from seqdedup.engine.choice import chosen_engine
    from seqdedup.engine.matcher import rule_matcher
    from seqdedup.engine.runs import runs_of
    from seqdedup.engine.sized import SizedMatcher
    from seqdedup.keys.maker import key_maker

    engine = chosen_engine()
    keys = key_maker(config.key_options, engine.kernel, SEED)
    hashes, sizes = keys.hashes_and_sizes(records, "bytes")
    rows = []
    for size in SIZES:
        matcher = rule_matcher(RuleOptions(1, size, max_history=None), engine)
        assert isinstance(matcher, SizedMatcher)
        keep = matcher.decider.push(hashes, sizes) + matcher.decider.finish()
        runs = runs_of(keep, False)
        removed = sum(stop - start for start, stop in runs)
        rows.append(SizeRow(min_bytes=size, removed=removed, runs=len(runs)))
    return rows


def recommend_size(
    sizes: list[SizeRow], windows: list[WindowRow], window: int
) -> tuple[int | None, str]:
    """``-w auto``'s size when it removes at least what the recommended W removes (else
    the largest size that does, if any): then no W is needed (a block of any length
    goes, a short repeat stays)."""
    from seqdedup.engine.sized import AUTO_MIN_BYTES

    if not sizes:
        return None, "--stream-by takes no minimum size"
    at_window = next(row["removed"] for row in windows if row["window_size"] == window)
    enough = [row for row in sizes if row["removed"] >= at_window and row["removed"]]
    if not enough:
        return None, f"every minimum size removes fewer records than -w {window}"
    auto = [row for row in enough if row["min_bytes"] == AUTO_MIN_BYTES]
    row = auto[0] if auto else max(enough, key=lambda r: r["min_bytes"])
    option = " ".join(_rule_options(1, row["min_bytes"]))
    return row["min_bytes"], (
        f"{option} removes {row['removed']:,} records (-w {window}: {at_window:,}): a block "
        f"of any length goes, repeats shorter than {row['min_bytes']} bytes stay; no window "
        "size to choose"
    )


def call_options(config: Config) -> list[str]:
    """The options of the call that shape what is compared (keys, streams, filters,
    records): the suggestion was measured with them, so its command line keeps them."""
    options = [f"--{kind} {quote(value)}" for kind, value in config.key_steps]
    options += [f"--json-key {quote(p)}" for p in config.json_key]
    options += [f"--json-ignore {quote(p)}" for p in config.json_ignore]
    if config.skip_fields:
        options.append(f"--skip-fields {config.skip_fields}")
    if config.skip_chars:
        options.append(f"--skip-chars {config.skip_chars}")
    if config.stream_by is not None:
        options.append(f"--stream-by {quote(config.stream_by)}")
    if config.stream_by_json is not None:
        options.append(f"--stream-by-json {quote(config.stream_by_json)}")
    options += [f"--{rule.kind} {quote(rule.pattern)}" for rule in config.filters]
    if config.byte_mode:
        options.append("--byte-mode")
    return options


def _quiet(config: Config, width: int) -> Config:
    """The run's config at ``width``, with an unlimited history, nothing reported."""
    return config.quiet()._replace(window_size=width, max_history=None)


class StreamKeys(NamedTuple):
    """A --stream-by input as the rule sees it: the tracked records' keys and streams."""

    keys: list[bytes]
    streams: list[str]


def stream_keys(config: Config, records: list[bytes]) -> StreamKeys:
    """Each tracked record's key (the stream's name left out, the key options applied)
    and stream (a record the pattern does not name continues the stream before it)."""
    from seqdedup.base.engine import SEED
    from seqdedup.engine.choice import chosen_engine
    from seqdedup.keys.filters import TRACKED, FilterList
    from seqdedup.keys.maker import key_maker
    from seqdedup.keys.streams import UNNAMED, StreamNamer

    engine = chosen_engine()
    names, keyed = StreamNamer(config.stream_options, config.byte_mode, engine.kernel).split(
        records
    )
    streams, current = [], UNNAMED
    for name in names:
        current = current if name is None else name
        streams.append(current)
    if config.filters:
        filters = FilterList(config.filters, engine.literal_mask)
        tracked = [d == TRACKED for d in filters.classify(records)]
        keyed = list(compress(keyed, tracked))
        streams = list(compress(streams, tracked))
    return StreamKeys(key_maker(config.key_options, engine.kernel, SEED).keys(keyed), streams)


def _stream_runs(config: Config, named: StreamKeys, width: int) -> tuple[int, list[int]]:
    """With --stream-by: the records removed at ``width``, and each run's length, by
    the rule per stream (:class:`seqdedup.engine.decisions.Decisions`)."""
    from seqdedup.engine.decisions import Decisions

    rule = Decisions(width, None, config.stream_idle, config.max_streams)
    fed, ended = rule.feed(named.keys, named.streams), rule.finish()
    removed = fed.keep.count(False) + ended.keep.count(False)
    return removed, [run.length for run in fed.pieces + ended.pieces]


def suggest_keys(config: Config, records: list[bytes]) -> list[KeyRow]:
    """At KEY_WIDTH: the records the plain keys remove, and each key trial's (none when
    the user gave key options: the keys are chosen)."""
    if config.key_steps or config.json_key or config.json_ignore or config.skip_fields:
        return []
    from seqdedup.run.assembled import count_removed

    found = []
    for option, keyed in (("(the keys as given)", _as_given), *KEY_TRIALS):
        if option.startswith("--skip-fields") and not _fields_left(records, int(option[-1])):
            continue
        removed = count_removed(keyed(_quiet(config, KEY_WIDTH)), records)
        found.append(KeyRow(keys=option, removed=removed))
    return found


def _fields_left(records: list[bytes], skipped: int) -> bool:
    """Whether skipping the first fields leaves most records two fields or more (else
    the keys would be all but empty, and every record a repeat)."""
    kept = sum(1 for record in records if len(record.split(maxsplit=skipped + 1)) > skipped + 1)
    return kept >= 0.9 * len(records)


def _as_given(config: Config) -> Config:
    return config


def _best_key(keys: list[KeyRow], total: int) -> str | None:
    """The least sweeping trial that removes nearly as much as the best one, when the
    best removes KEY_GAIN of the records more than the keys as given."""
    if not keys or not total:
        return None
    removed = [row["removed"] for row in keys]
    most = max(removed[1:])
    if most - removed[0] < KEY_GAIN * total:
        return None
    trials = zip(keys[1:], removed[1:], strict=True)
    return next(str(row["keys"]) for row, n in trials if n >= NEARLY * most)


def width_rows(records: list[bytes], config: Config) -> tuple[list[WindowRow], list[int]]:
    """Per W of WIDTHS, the records removed and the runs; and the runs' lengths at W=2."""
    from seqdedup.base.engine import SEED
    from seqdedup.config.groups import RuleOptions
    from seqdedup.engine.choice import chosen_engine, compiled
    from seqdedup.engine.matcher import rule_matcher
    from seqdedup.engine.runs import runs_of
    from seqdedup.keys.maker import key_maker

    rows, blocks = [], []
    if config.stream_split:  # per stream, as the run decides
        named = stream_keys(config, records)
        for width in WIDTHS:
            removed, lengths = _stream_runs(config, named, width)
            rows.append(WindowRow(window_size=width, removed=removed, runs=len(lengths)))
            if width == 2:
                blocks = lengths
        return rows, blocks
    engine = chosen_engine()
    hashes = key_maker(config.key_options, engine.kernel, SEED).hashes(records)
    kernel = compiled(engine)
    if kernel is not None:  # every width in one pass each, in C
        from array import array

        tallies = kernel.window_tally(bytes(hashes), WIDTHS, SEED)
        for width, (removed, count, run_lengths) in zip(WIDTHS, tallies, strict=True):
            rows.append(WindowRow(window_size=width, removed=removed, runs=count))
            if width == 2:
                blocks = list(array("q", run_lengths))
        return rows, blocks
    for width in WIDTHS:  # the matcher, once per width
        matcher = rule_matcher(RuleOptions(width, max_history=None), engine)
        keep = list(matcher.push(hashes)) + list(matcher.finish())
        runs = runs_of(keep, False)
        removed = sum(stop - start for start, stop in runs)
        rows.append(WindowRow(window_size=width, removed=removed, runs=len(runs)))
        if width == 2:
            blocks = [stop - start for start, stop in runs]
    return rows, blocks


def recommend(rows: list[WindowRow]) -> tuple[int, str]:
    """The largest W >= 2 that removes at least KEEP of what W=2 removes."""
    removed = {row["window_size"]: row["removed"] for row in rows}
    base = removed[2]
    if base == 0:
        return 10, "no block of two or more records repeats here: the default, 10, is as good"
    best = max(w for w in WIDTHS if w >= 2 and removed[w] >= KEEP * base)
    share = 100.0 * removed[best] / base
    return best, (
        f"-w {best} removes {removed[best]:,} records, {share:.0f}% of what -w 2 removes, "
        f"and leaves repeats shorter than {best} records alone"
    )


def write_suggestion(result: Suggestion, stream: TextIO, fmt: str) -> None:
    """The suggestion as tables and a line (or one JSON document with ``json``)."""
    if fmt == "json":
        import json

        stream.write(json.dumps({"suggest_window": result}, indent=2) + "\n")
        return
    total = result["records"]
    lines = [f"{total:,} records read"]
    lines.append(f"{'window':>8}  {'removed':>12}  {'share':>6}  {'runs':>10}")
    for row in result["windows"]:
        share = 100.0 * row["removed"] / total if total else 0.0
        lines.append(
            f"{'-w ' + str(row['window_size']):>8}  {row['removed']:>12,}  {share:>5.1f}%  "
            f"{row['runs']:>10,}"
        )
    lines.append("repeated blocks (runs of 2+ records removed at -w 2), by length:")
    for bucket in result["repeated_blocks"]:
        lines.append(
            f"{bucket['lengths']:>8}  {bucket['blocks']:>12,} blocks  "
            f"{bucket['records']:>12,} records"
        )
    lines.append(f"window: -w {result['recommended']} ({result['reason']})")
    if result["sizes"]:
        lines.append(f"{'size':>18}  {'removed':>12}  {'share':>6}  {'runs':>10}")
        for size in result["sizes"]:
            share = 100.0 * size["removed"] / total if total else 0.0
            lines.append(
                f"{'--min-bytes ' + str(size['min_bytes']):>18}  {size['removed']:>12,}  "
                f"{share:>5.1f}%  {size['runs']:>10,}"
            )
        lines.append(f"size: {result['size_reason']}")
    if result["keys"]:
        lines.append(f"keys (records removed at -w {KEY_WIDTH}):")
        for key in result["keys"]:
            share = 100.0 * key["removed"] / total if total else 0.0
            lines.append(f"{key['keys']:>28}  {key['removed']:>8,}  {share:>5.1f}%")
        best = result["recommended_keys"]
        if best:
            with_keys = result["with_keys"]
            rule = " ".join(
                _rule_options(with_keys["recommended"], with_keys["recommended_min_bytes"])
            )
            lines.append(f"keys: {best} {rule} ({with_keys['reason']})")
        else:
            lines.append("keys: as given (no built-in key removes much more)")
    if result["kept"]:
        lines.append("kept from the call: " + " ".join(result["kept"]))
    lines.append(f"suggested: {result['command']}")
    stream.write("\n".join(lines) + "\n")
