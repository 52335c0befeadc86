"""--report's data: what the picture gathers while a run runs (``picture``) and the page's
figures made from it (``pagedata``), checked against the input itself and the oracle of
the skip rule; the page's HTML as text (escaping, size). The page in a real browser is
tests/test_report_page.py."""

from __future__ import annotations

import hashlib
import io
import itertools
import json
import re
import struct
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from seqdedup.api import Deduplicator, feed_inputs
from seqdedup.cli.seqdedup import main
from seqdedup.config.normalize import EVERY, normalize_py
from seqdedup.config.settings import Config
from seqdedup.page.axis import Axis
from seqdedup.page.data import TOP, page_data, shown
from seqdedup.page.html import render
from seqdedup.page.library import library_data
from seqdedup.page.picture import RunPicture

from oracle import skipped_flags

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def pictured(inputs: list[bytes], config: Config) -> tuple[object, RunPicture, bytes]:
    """A run of ``inputs`` (one after another) watched by a picture, as --report runs."""
    picture = RunPicture(config.delimiter)
    dedup = Deduplicator(config, None, observer=picture)  # (fed the input by the run)
    sink = io.BytesIO()
    stats = feed_inputs(dedup, [io.BytesIO(data) for data in inputs], sink, None, False)
    return stats, picture, sink.getvalue()


def data_of(inputs: list[bytes], config: Config, names: list[str] | None = None) -> dict:
    stats, picture, out = pictured(inputs, config)
    assert picture.ranking is not None
    ranked = picture.ranking.ranked(TOP)
    names = names or ["-"]
    return page_data(picture, stats, config, ranked, names, len(out), 0.5)  # type: ignore[arg-type]


def embedded(html: str, element: str) -> dict:
    """A JSON document the page holds in a <script type="application/json">."""
    found = re.search(rf'id="{element}">(.*?)</script>', html, re.S)
    assert found is not None
    return json.loads(found.group(1))


letters = st.lists(st.sampled_from([b"a", b"b", b"c"]), min_size=1, max_size=300)


@given(records=letters, window=st.sampled_from([1, 2, 3, 5]))
def test_the_timeline_removes_exactly_the_records_the_rule_skips_in_each_bucket(records, window):
    data = b"".join(record + b"\n" for record in records)
    page = data_of([data], Config(window_size=window))
    skipped = skipped_flags(records, window)
    axis = Axis(RunPicture(b"\n"), len(records), 96)
    line = page["timeline"]
    assert line["axis"] == "record"
    assert [row["read"] for row in line["buckets"]] == [
        axis.bounds[b + 1] - axis.bounds[b] for b in range(axis.buckets)
    ]
    expected = [sum(skipped[axis.bounds[b] : axis.bounds[b + 1]]) for b in range(axis.buckets)]
    assert [row["read"] - row["written"] for row in line["buckets"]] == expected
    assert page["headline"]["records_removed"] == sum(skipped)
    # every folded record lies in a band, and the bands hold exactly the records removed
    assert sum(band["removed"] for band in line["bands"]) == sum(skipped)


@given(
    records=st.lists(st.sampled_from([b"x", b"yy", b"z\xff", b""]), min_size=1, max_size=120),
    cuts=st.lists(st.integers(0, 2000), max_size=8),
    ends=st.booleans(),
    first=st.integers(0, 119),
    count=st.integers(1, 30),
)
def test_the_spool_gives_back_any_records_whatever_the_chunks(records, cuts, ends, first, count):
    """Records read back by number equal the input's, however the input came in chunks
    and whether or not each input ends with a delimiter (two inputs here)."""
    data = b"\n".join(records) + (b"\n" if ends else b"")
    records = data.split(b"\n")  # (the records a run reads: a final delimiter ends one)
    records = records[:-1] if not data or data.endswith(b"\n") else records
    picture = RunPicture(b"\n")
    for _ in range(2):
        bounds = sorted({0, len(data), *(c % (len(data) + 1) for c in cuts)})
        for a, b in itertools.pairwise(bounds):
            picture(data[a:b])
        picture.end_input((picture.input_ends[-1] if picture.input_ends else 0) + len(records))
    both = records + records
    wanted = both[first : first + count]
    got = picture.text_of(first, count)
    if first + count <= len(both):
        assert got == wanted
    else:
        assert got is None
    picture.close()


def test_timestamps_make_a_time_axis_and_top_sequences_carry_their_text_and_reference():
    data = (EXAMPLES / "app.log").read_bytes()
    page = data_of([data], Config(window_size=3))
    assert page["timeline"]["axis"] == "time"
    lines = data.split(b"\n")
    assert page["top"], "app.log repeats a traceback"
    for row in page["top"]:
        start, end = (int(n) for n in re.findall(r"\d+", row["first_place"])[:2])
        records = lines[start - 1 : end]
        assert row["text"] == "\n".join(shown(r) for r in records)
        digest = hashlib.blake2b(b"".join(r + b"\n" for r in records), digest_size=16).hexdigest()
        assert row["reference"] == "sd:" + digest[:7]  # (as --budget writes a reference)
        assert row["first_shown"] and row["last_shown"] >= row["first_shown"]
        # the kind of line of its first record: every class masked (seqdedup.keys.kind)
        assert row["kind"] == shown(normalize_py(records[0], EVERY))


def test_a_top_sequence_names_its_kind_of_line():
    block = b'2026-12-06T10:00:01Z GET /srv/a.html user="ann" sent 12 kB\nretry\n'
    page = data_of([b"start\n" + block * 3], Config(window_size=2))
    (row,) = page["top"]
    assert row["kind"] == "<TIMESTAMP> GET <PATH> user=<QUOTED> sent <NUMBER> kB"
    assert '<code class="kind">&lt;TIMESTAMP&gt; GET &lt;PATH&gt;' in render(page)


def _stamped(day: int, count: int, with_date: bool = True) -> bytes:
    """``count`` lines a second apart, on day ``day`` of December 2026 (or a time of
    day alone), a repeated block among them."""
    lines = []
    for i in range(count):
        clock = f"10:{i // 60 % 60:02d}:{i % 60:02d}"
        stamp = f"2026-12-{day:02d}T{clock}Z" if with_date else clock
        lines.append(f"{stamp} {'retrying db' if i % 4 == 0 else f'request {i}'}")
    return ("\n".join(lines) + "\n").encode()


def test_inputs_on_clocks_apart_are_drawn_in_input_order_and_the_page_says_why():
    """Two inputs whose times lie days apart (or one with a date and one with a time of
    day alone, read as 1900): one time axis would squeeze each into a sliver at its end;
    the page draws them by record number and says why. Inputs within the hour keep a
    time axis."""
    config = Config(window_size=1)
    near = data_of([_stamped(6, 400), _stamped(6, 400)], config, ["a.log", "b.log"])
    assert near["timeline"]["axis"] == "time"
    for second in (_stamped(9, 400), _stamped(6, 400, with_date=False)):
        page = data_of([_stamped(6, 400), second], config, ["a.log", "b.log"])
        assert page["timeline"]["axis"] == "record"
        assert "more than an hour apart" in page["timeline_how"]


def test_one_input_whose_times_keep_going_back_is_drawn_in_input_order():
    """Interleaved streams with clocks of their own: times that go back by more than an
    hour again and again make no timeline."""
    first, second = _stamped(6, 3000).split(b"\n"), _stamped(2, 3000).split(b"\n")
    mixed = b"\n".join(  # (runs of 7 and 5 lines: the samples, a stride apart, meet both)
        line for k in range(0, 3000, 7) for line in [*first[k : k + 7], *second[k : k + 5]]
    )
    page = data_of([mixed], Config(window_size=1))
    assert page["timeline"]["axis"] == "record"
    assert "go back by more than an hour" in page["timeline_how"]
    assert data_of([_stamped(6, 600)], Config(window_size=1))["timeline"]["axis"] == "time"


def test_the_headline_equals_the_runs_json_statistics(tmp_path):
    page = tmp_path / "run.html"
    stderr = io.StringIO()
    out = io.BytesIO()
    logs = [str(EXAMPLES / name) for name in ("app.log", "storm.log")]
    status = main(
        ["-w", "3", "--stats-format", "json", "--report", str(page), *logs], None, out, stderr
    )
    assert status == 0
    statistics = json.loads(stderr.getvalue())["statistics"]
    headline = embedded(page.read_text(), "seqdedup-data")["headline"]
    assert headline["records_read"] == statistics["lines"]["total"]
    assert headline["records_written"] == statistics["lines"]["emitted"]
    assert headline["records_removed"] == statistics["lines"]["skipped"]
    assert headline["removed_pct"] == statistics["redundancy_pct"]
    assert headline["bytes_written"] == len(out.getvalue())
    assert headline["bytes_read"] == sum(Path(name).stat().st_size for name in logs)


@pytest.mark.parametrize(
    ("args", "kind"),
    [
        (["--stream-by", r"^\S+", "-w", "3"], "stream"),
        (["-w", "3"], "input"),
    ],
)
def test_the_heat_map_holds_every_record_removed(tmp_path, args, kind):
    page = tmp_path / "run.html"
    stderr = io.StringIO()
    inputs = (
        [str(EXAMPLES / "pods.log")]
        if kind == "stream"
        else [str(EXAMPLES / name) for name in ("app.log", "ci.log", "storm.log")]
    )
    argv = [*args, "--stats-format", "json", "--report", str(page), *inputs]
    assert main(argv, None, io.BytesIO(), stderr) == 0
    skipped = json.loads(stderr.getvalue())["statistics"]["lines"]["skipped"]
    heat = embedded(page.read_text(), "seqdedup-data")["heat"]
    assert heat["kind"] == kind
    assert sum(cell["removed"] for cell in heat["cells"]) == skipped > 0


def test_hostile_records_are_text_in_the_html(tmp_path):
    hostile = [
        b"<script>alert('x')</script>",
        b"</textarea><b>bold</b> \"quoted\" 'single' & amp",
        b"\x1b[31mred\x1b[0m \xff\xfe invalid",
    ]
    data = b"".join(record + b"\n" for record in hostile) * 3
    html = render(data_of([data], Config(window_size=3)))
    body = html.split('<script type="application/json"', 1)[0]
    assert "<script>alert" not in body and "<b>bold</b>" not in body
    assert "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;" in body
    assert "\x1b" not in html  # (the escape shown as \x1b, never sent to a terminal or page)
    assert "\\x1b[31mred" in body and "\\xff\\xfe invalid" in body
    for element in ("seqdedup-data", "seqdedup-charts"):
        document = re.search(rf'id="{element}">(.*?)</script>', html, re.S)
        assert document is not None and "<" not in document.group(1)


def test_a_page_with_many_distinct_sequences_stays_small():
    """Caps, not the input, bound the page: 40,000 distinct repeated pairs, then the
    whole input again."""
    pair = "event {0} begins\nevent {0} ends\n"
    records = [(pair * 2 + "new {0}\n").format(i).encode() for i in range(40_000)]
    data = b"".join(records) * 2
    page = data_of([data], Config(window_size=2))
    assert len(page["top"]) == TOP
    assert all(row["text"] for row in page["top"])
    assert len(page["timeline"]["bands"]) <= 120
    assert len(render(page).encode()) < 2_000_000


def test_coarsened_pieces_keep_the_records_removed():
    picture = RunPicture(b"\n")
    for i in range(1001):
        picture.add(3 * i, 1, i % 7, 0, False)
    picture._coarsen()
    assert sum(picture.lengths) == 2002 and len(picture.starts) == 501
    assert picture.coarsened == 1


def test_a_budget_page_names_its_tokens_and_stretches(tmp_path):
    page = tmp_path / "budget.html"
    stderr = io.StringIO()
    log = EXAMPLES / "app.log"
    assert (
        main(["--budget", "150", "--report", str(page), str(log)], None, io.BytesIO(), stderr) == 0
    )
    data = embedded(page.read_text(), "seqdedup-data")
    assert data["headline"]["tokens_in"] > data["headline"]["tokens_out"] > 0
    assert data["top"] and all(row["reference"].startswith("sd:") for row in data["top"])


def test_a_librarys_page_lists_its_sequences(tmp_path):
    library = tmp_path / "lib"
    logs = [str(EXAMPLES / name) for name in ("app.log", "ci.log")]
    assert (
        main(["-q", "-w", "3", "-l", str(library), *logs], None, io.BytesIO(), io.StringIO()) == 0
    )
    data = library_data(library)
    assert data["headline"]["runs"] == 1
    assert data["top"] and data["top"][0]["sample"] == "Traceback (most recent call last):"
    assert data["runs"][0]["read"] == sum(len(Path(n).read_bytes().splitlines()) for n in logs)


class TestRefusals:
    """--report's errors: one line, exit 1, nothing on standard output, nothing read."""

    def run(self, argv: list[str]) -> tuple[int, bytes, str]:
        out, err = io.BytesIO(), io.StringIO()
        status = main(argv, io.BytesIO(b"a\na\n"), out, err)
        return status, out.getvalue(), err.getvalue()

    def test_without_the_extra(self, monkeypatch, tmp_path):
        import seqdedup.page.html

        monkeypatch.setattr(seqdedup.page.html, "find_spec", lambda name: None)
        status, out, err = self.run(["--report", str(tmp_path / "r.html"), "-"])
        assert (status, out) == (1, b"")
        assert err.count("\n") == 1 and "pip install 'seqdedup[report]'" in err

    @pytest.mark.parametrize(
        ("where", "says"), [("missing/r.html", "no such directory"), (".", "is a directory")]
    )
    def test_a_path_it_cannot_write(self, tmp_path, where, says):
        status, out, err = self.run(["--report", str(tmp_path / where), "-"])
        assert (status, out) == (1, b"")
        assert err.count("\n") == 1 and says in err

    def test_beside_suggest_window(self, tmp_path):
        status, out, err = self.run(["--suggest-window", "--report", str(tmp_path / "r.html")])
        assert (status, out) == (1, b"") and "--report" in err

    def test_seqdedup_dask_refuses_it(self, tmp_path):
        from seqdedup.cli.dask import main as dask_main

        err = io.StringIO()
        argv = ["--output-dir", str(tmp_path / "o"), "--report", "r.html", str(EXAMPLES / "ci.log")]
        assert dask_main(argv, err) == 1
        assert err.getvalue().count("\n") == 1 and "--report" in err.getvalue()


@pytest.mark.parametrize("delimiter", [b"\n", b"--"])
def test_named_files_are_read_back_in_place_and_records_found_across_blocks(tmp_path, delimiter):
    """Inputs read back from the files themselves (one without a final delimiter, one
    compressed, so copied), records numbered across 1 MiB blocks of the kept input."""
    import gzip

    records = [b"record %d " % i + b"x" * (i % 50) for i in range(60_000)]
    names = [tmp_path / "a.log", tmp_path / "b.log.gz", tmp_path / "c.log"]
    names[0].write_bytes(delimiter.join(records[:25_000]))  # (no final delimiter)
    decoded = delimiter.join(records[25_000:40_000]) + delimiter
    names[1].write_bytes(gzip.compress(decoded))
    names[2].write_bytes(delimiter.join(records[40_000:]) + delimiter)
    picture = RunPicture(delimiter, [str(n) for n in names])
    ends = [25_000, 40_000, 60_000]
    for data, end in zip(
        [names[0].read_bytes(), decoded, names[2].read_bytes()], ends, strict=True
    ):
        for at in range(0, len(data), 300_001):
            picture(data[at : at + 300_001])
        picture.end_input(end)
    assert picture.kept.spool_size == len(decoded) + len(delimiter)  # (only b and a's end)
    for first in (0, 24_999, 25_000, 33_333, 39_999, 40_000, 59_990):
        assert picture.text_of(first, 10) == (
            records[first : first + 10] if first + 10 <= 60_000 else None
        )
    picture.close()


def test_each_timestamp_sample_names_the_record_it_was_read_from(tmp_path):
    from seqdedup.config.normalize import first_timestamp, timestamp_seconds

    records = [
        b"2026-11-22T%02d:%02d:%02d.%03dZ event %d"
        % (i // 3600 % 24, i // 60 % 60, i % 60, i % 1000, i)
        for i in range(200_000)
    ]
    data = b"\n".join(records) + b"\n"
    picture = RunPicture(b"\n")
    for at in range(0, len(data), 1 << 20):
        picture(data[at : at + (1 << 20)])
    picture.end_input(len(records))
    at, times = picture.sample_at, picture.sample_time
    assert 500 <= len(at) <= 1024 and list(at) == sorted(at)
    for index, seconds in zip(at, times, strict=True):
        assert timestamp_seconds(first_timestamp(records[index])) == seconds
    picture.close()


class Recorder:
    """A run observer that writes down what the ledger hands it."""

    def __init__(self) -> None:
        self.read = b""
        self.removed = 0  # records the pieces cover
        self.ends: list[int] = []
        self.ranked = None

    def __call__(self, chunk: bytes, /) -> None:
        self.read += chunk

    def add_packed(self, packed, record_number, /) -> None:
        for start, end, *_ in struct.iter_unpack("4q2Q", packed or b""):
            self.removed += end - start + 1

    def add_pieces(self, pieces, record_number, /) -> None:
        self.removed += sum(piece.end - piece.start + 1 for piece in pieces)

    def add_stream_run(self, first, last, length, content, stream, library, /) -> None:
        self.removed += length

    def end_input(self, released: int, /) -> None:
        self.ends.append(released)

    def ranked_by(self, ranking, /) -> None:
        self.ranked = ranking


@pytest.mark.parametrize("streams", [False, True])
def test_the_ledger_hands_an_observer_the_whole_run(engine, streams):
    """One observer, the run's ledger its one caller: the input as fed, a piece (or
    stream run) for every removed record on either engine, where each input ends, and
    the ranking at the end."""
    options = {"stream_by": r"^(\w) "} if streams else {}
    data = b"".join(b"%s x%d\n" % (b"ab"[k % 2 : k % 2 + 1], k % 5) for k in range(200))
    recorder = Recorder()
    dedup = Deduplicator(Config(window_size=3, **options), observer=recorder)
    out = dedup.feed_bytes(data[:777]) + dedup.feed_bytes(data[777:]) + dedup.flush_bytes()
    assert recorder.read == data
    assert dedup.stats.skipped > 0 and out.count(b"\n") == dedup.stats.emitted
    assert recorder.removed == dedup.stats.skipped
    assert recorder.ends == [200] and recorder.ranked is not None


def test_removed_records_count_where_they_lie_and_add_up(engine):
    """Two streams interleaved record by record, the second half a repeat of the
    first: each stream's run is spread over the stretch where its records lie (not
    put at its first record), and the timeline and the heat map add up to the run's
    removed records."""
    block = [b"s%d line %d" % (k % 2, k // 2) for k in range(40)]
    data = b"\n".join(block + block) + b"\n"
    config = Config(window_size=3, stream_by=r"^(s\d) ")
    page = data_of([data], config)
    removed = [bucket["removed"] for bucket in page["timeline"]["buckets"]]
    assert sum(removed) == page["headline"]["records_removed"] == 40
    assert sum(removed[: len(removed) // 2]) == 0  # (the first half is new)
    cells = page["heat"]["cells"]
    assert sum(cell["removed"] for cell in cells) == 40
    for row in page["heat"]["rows"]:  # (each run over the 40 records where its 20 lie)
        columns = [cell for cell in cells if cell["row"] == row and cell["removed"]]
        assert len(columns) >= 20, (row, columns)
    assert all(
        b["share"] == round(100 * b["removed"] / b["read"], 1)
        for b in page["timeline"]["buckets"]
        if b["read"]
    )
