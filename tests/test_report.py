from __future__ import annotations

import io
import json

from hypothesis import given
from hypothesis import strategies as st

from seqdedup import Config
from seqdedup.run.stats import Stats, stats_rows, write_stats


def test_table_rows_in_order_with_separators():
    rows = stats_rows(
        Stats(total=12345, emitted=12000, skipped=345, unique_sequences=3), Config(max_history=None)
    )
    assert [name for name, _ in rows] == [
        "Total lines processed",
        "Lines emitted",
        "Lines skipped",
        "Redundancy",
        "Unique sequences tracked",
        "Window size",
        "Max history",
    ]
    assert rows[0][1] == "12,345"
    assert rows[3][1] == "2.8%"
    assert rows[6][1] == "unlimited"


def test_table_is_rendered_with_metric_and_value_columns():
    out = io.StringIO()
    write_stats(Stats(total=3, emitted=2, skipped=1), Config(), out)
    text = out.getvalue()
    assert "Metric" in text and "Value" in text and "100,000" in text


def test_json_document():
    out = io.StringIO()
    write_stats(
        Stats(total=4, emitted=3, skipped=1, unique_sequences=1), Config(skip_chars=2), out, "json"
    )
    doc = json.loads(out.getvalue())
    assert doc["statistics"]["lines"] == {"total": 4, "emitted": 3, "skipped": 1}
    assert doc["statistics"]["redundancy_pct"] == 25.0
    assert doc["statistics"]["sequences"]["unique_tracked"] == 1
    assert doc["configuration"]["window_size"] == 10
    assert doc["configuration"]["max_history"] == 100000
    assert doc["configuration"]["skip_chars"] == 2


@given(
    keys=st.lists(st.sampled_from([b"a", b"b", b"c"]), max_size=200),
    window=st.sampled_from([1, 2, 3]),
    history=st.sampled_from([None, 100]),
)
def test_the_default_markers_written_inline_equal_the_templates(keys, window, history):
    """On one input without filters the default marker is written without its fields
    (PieceReport.marker's shortcut): the same text as the template gives."""
    from seqdedup import Deduplicator

    outputs = []
    for shortcut in (True, False):
        dedup = Deduplicator(window_size=window, max_history=history, annotate=True)
        report = dedup._stages.parts.report
        assert report._plain_markers
        report._plain_markers = shortcut
        outputs.append(dedup.feed(keys) + dedup.flush())
    assert outputs[0] == outputs[1]
