"""--json-key and --json-ignore (README: Keys for real logs): paths, arrays, lines that
are no JSON object, key order, missing fields; the kernel's fast path against the
parsers."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from seqdedup import Deduplicator, UsageError
from seqdedup.config.jsonkeys import JsonSelector

from conftest import examples, kernel_built


def codecs():
    """Both parsers a run may use: orjson (the json extra) and the standard library."""
    found = ["stdlib"]
    try:
        import orjson  # noqa: F401

        found.append("orjson")
    except ImportError:
        pass
    return found


@pytest.fixture(params=codecs())
def codec(request, monkeypatch):
    if request.param == "stdlib":
        import sys

        monkeypatch.setitem(sys.modules, "orjson", None)  # import orjson fails
    return request.param


def selector(keys=(), ignore=(), fast=True):
    from seqdedup.engine.choice import chosen_engine

    return JsonSelector(keys, ignore, chosen_engine().kernel if fast else None, track_text=True)


def test_a_field_or_a_nested_one_decides(codec):
    s = selector(["msg", "error.type"])
    keys = s(
        [
            b'{"msg": "failed", "ts": 1, "error": {"type": "Timeout", "at": 3}}',
            b'{"ts": 2, "error": {"at": 4, "type": "Timeout"}, "msg": "failed"}',
            b'{"msg": "failed", "error": {"type": "Reset"}}',
        ]
    )
    assert keys[0] == keys[1] != keys[2]
    assert json.loads(keys[0]) == {"msg": "failed", "error.type": "Timeout"}


def test_array_elements_by_index(codec):
    s = selector(["items.0.id"], fast=False)
    keys = s([b'{"items": [{"id": 7}, {"id": 8}]}', b'{"items": [{"id": 7}]}', b'{"items": []}'])
    assert keys[0] == keys[1] == b'{"items.0.id":7}'
    assert keys[2] == b"{}"  # the path is missing


def test_a_missing_field_differs_from_null_and_agrees_with_another_missing_one(codec):
    keys = selector(["user"])([b'{"a": 1}', b'{"b": 2}', b'{"user": null}'])
    assert keys[0] == keys[1] == b"{}"
    assert keys[2] == b'{"user":null}'


def test_lines_that_are_no_json_object_are_their_own_text(codec):
    lines = [b"plain text", b"[1, 2]", b"42", b'"a string"', b"{broken", b"", b"  ", b"{} x"]
    s = selector(["msg"])
    assert s(lines) == lines
    assert s.as_text == list(range(len(lines)))


def test_ignore_compares_the_rest_in_any_key_order(codec):
    s = selector(ignore=["ts", "meta.id"])
    keys = s(
        [
            b'{"ts": 1, "msg": "x", "meta": {"id": 5, "host": "a"}}',
            b'{"meta": {"host": "a", "id": 6}, "msg": "x", "ts": 2}',
            b'{"meta": {"host": "b"}, "msg": "x"}',
        ]
    )
    assert keys[0] == keys[1] != keys[2]


def test_the_last_of_duplicate_names_counts(codec):
    keys = selector(["msg", "e.t"])(
        [b'{"msg": "a", "msg": "b"}', b'{"msg": "b"}', b'{"e": {"t": 1}, "e": {"u": 2}}']
    )
    assert keys[0] == keys[1]
    assert keys[2] == b"{}"  # the later "e" has no "t"


def test_options_are_checked():
    with pytest.raises(UsageError, match="cannot be used together"):
        JsonSelector(["a"], ["b"])
    with pytest.raises(UsageError, match="not a dotted path"):
        JsonSelector(["a..b"])
    with pytest.raises(UsageError, match="need text mode"):
        Deduplicator(json_key=("a",), byte_mode=True)


# Random JSON values, written with random spacing and escapes, and junk lines.
json_values = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-(10**20), 10**20),
        st.floats(allow_nan=False, allow_infinity=False),
        st.text(st.sampled_from('ab "\\/\n\t\x01é\x7fz'), max_size=6),
    ),
    lambda children: st.one_of(
        st.lists(children, max_size=3),
        st.dictionaries(st.sampled_from(["msg", "a", "b", "e", "t"]), children, max_size=4),
    ),
    max_leaves=8,
)


@st.composite
def json_lines(draw):
    value = draw(
        st.dictionaries(
            st.sampled_from(["msg", "a", "e", "ts", "b", "ab", "A", "_"]),
            st.one_of(st.text(st.sampled_from('a/b "\\'), max_size=5), json_values),
            max_size=4,
        )
    )
    text = json.dumps(
        value, ensure_ascii=draw(st.booleans()), indent=draw(st.sampled_from([None, 0]))
    )
    text = text.replace("\n", draw(st.sampled_from(["", " ", "\t"])))
    if draw(st.booleans()):
        text = text.replace("/", "\\/")  # an escape the serialisers never write
    junk = draw(st.sampled_from(["", "", "", " ", "x", "}", ",", '{"a":NaN}', "[1]", "nope"]))
    return (text + junk).encode("utf-8", "surrogatepass")


@pytest.mark.slow
@pytest.mark.skipif(not kernel_built(), reason="needs the compiled kernel")
@settings(max_examples=examples(300), deadline=None)
@given(
    lines=st.lists(json_lines(), min_size=1, max_size=8),
    paths=st.lists(st.sampled_from(["msg", "a", "e.t", "e.a.b", "ts"]), min_size=1, max_size=3),
    ignore=st.booleans(),
)
def test_the_kernel_fast_path_gives_the_parsers_keys(lines, paths, ignore):
    for name in codecs():
        mp = pytest.MonkeyPatch()
        try:
            if name == "stdlib":
                import sys

                mp.setitem(sys.modules, "orjson", None)
            if ignore:  # --json-ignore: flat objects are sorted by the kernel
                fast, slow = selector(ignore=paths), selector(ignore=paths, fast=False)
            else:
                fast, slow = selector(paths), selector(paths, fast=False)
            assert fast(list(lines)) == slow(list(lines)), name
            assert fast.as_text == slow.as_text
        finally:
            mp.undo()


@pytest.mark.usefixtures("engine")
class TestInTheEngine:
    def test_json_keys_decide_and_the_records_are_written_as_read(self):
        records = [
            b'{"ts": "09:00:01", "msg": "retry", "n": 1}',
            b'{"ts": "09:00:02", "msg": "failed", "n": 2}',
            b'{"msg": "retry", "ts": "09:00:03", "n": 3}',
            b'{"ts": "09:00:04", "msg": "failed", "n": 4}',
            b"not json",
        ]
        d = Deduplicator(window_size=2, json_key=("msg",), explain=True)
        assert d.feed(records) + d.flush() == [*records[:2], records[4]]
        assert d.explanations == [
            "EXPLAIN: Lines 3-4 skipped (duplicate of lines 1-2, seen 2x)",
            "EXPLAIN: Line 5 compared as text (not a JSON object)",
        ]
        d = Deduplicator(window_size=2, json_ignore=("ts", "n"))
        assert d.feed(records) + d.flush() == [*records[:2], records[4]]


def test_the_module_stays_out_of_plain_runs():
    """No JSON parser is imported for a run without JSON options."""
    import subprocess
    import sys

    code = (
        "import sys; from seqdedup.cli.seqdedup import main; main(['-q', '-w', '1'], "
        "stdin=open('/dev/null', 'rb'), stdout=open('/dev/null', 'wb')); "
        "print(sorted(m for m in ('json', 'orjson', 'seqdedup.config.jsonkeys', "
        "'seqdedup.config.normalize') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout


def _keys_with_each_parser(records, keys=(), ignore=(), fast=False):
    import sys

    with_orjson = selector(keys, ignore, fast)(records)
    saved = sys.modules.get("orjson")
    sys.modules["orjson"] = None  # type: ignore[assignment]  # import orjson fails
    try:
        standard = selector(keys, ignore, fast)(records)
    finally:
        if saved is None:
            del sys.modules["orjson"]
        else:
            sys.modules["orjson"] = saved
    return with_orjson, standard


ADVERSARIAL = [
    b'{"id": 18446744073709551617, "m": 1}',  # past 64 bits: orjson reads a float
    b'{"id": 18446744073709551618, "m": 1}',
    b'{"id": 123456789012345678901234567890, "m": 1}',
    b'{"id": -18446744073709551617, "m": 1}',
    b'{"id": 1e-5, "m": 1}',
    b'{"id": 0.00001, "m": 1}',
    b'{"id": 1e400, "m": 1}',
    b'{"id": 12345678901234567890.5, "m": 1}',
    b'{"id": NaN, "m": 1}',
    b'{"id": Infinity, "m": 1}',
    b'{"id": "\\ud800", "m": 1}',
    b'{"id": "\\u001f\\u2028/", "m": 1}',
    b'{"id": {"a": ' * 250 + b"1" + b"}" * 250 + b', "m": 1}',  # deep: text for both
    b'{"id": ' + b'{"a": ' * 300 + b"1" + b"}" * 301,
]


@pytest.mark.skipif("orjson" not in codecs(), reason="needs orjson (the json extra)")
@pytest.mark.parametrize("fast", [False, True])
@pytest.mark.parametrize(("keys", "ignore"), [(["id"], []), ([], ["m"])])
def test_orjson_and_the_standard_library_give_the_same_keys(keys, ignore, fast):
    with_orjson, standard = _keys_with_each_parser(ADVERSARIAL, keys, ignore, fast)
    assert with_orjson == standard
    if keys:  # distinct integers past 64 bits stay distinct
        assert len(set(standard[:4])) == 4


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**30), max_value=10**30)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3)
    ),
    max_leaves=8,
)


@pytest.mark.skipif("orjson" not in codecs(), reason="needs orjson (the json extra)")
@settings(max_examples=examples(150), deadline=None)
@given(st.lists(st.dictionaries(st.sampled_from(["id", "m", "x"]), json_values), max_size=6))
def test_both_parsers_agree_on_any_json_object(objects):
    records = [json.dumps(value).encode() for value in objects]
    for keys, ignore in ((["id"], []), ([], ["m"])):
        with_orjson, standard = _keys_with_each_parser(records, keys, ignore)
        assert with_orjson == standard


@pytest.mark.parametrize("engine", ["c", "python"])
def test_top_on_json_logs_shows_the_key_compared(run_cli, engine, monkeypatch):
    if engine == "c" and not kernel_built():
        pytest.skip("needs the compiled kernel")
    monkeypatch.setenv("SEQDEDUP_ENGINE", engine)
    data = b"".join(
        b'{"ts": %d, "msg": "%s", "trace": "t%d"}\n' % (k, m, k)
        for k, m in enumerate([b"db lost", b"retry", b"db lost", b"retry", b"done"])
    )
    for args in (["--json-key", "msg"], ["--json-ignore", "ts", "--json-ignore", "trace"]):
        p = run_cli(["-q", "-w", "2", "--top", "3", "--stats-format", "json", *args], data)
        (row,) = json.loads(p.stderr)["top_sequences"]
        assert row["first_record"] == '{"msg":"db lost"}', args
    plain = run_cli(["-q", "-w", "1", "--top", "3", "--stats-format", "json"], b"a\nb\na\n")
    assert json.loads(plain.stderr)["top_sequences"][0]["first_record"] == "a"
