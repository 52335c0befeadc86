"""`seqdedup loops`: the rule against a literal reading of it (Hypothesis), the real
transcripts in tests/data/transcripts (their loops as their README names them), planted
loops of each period, legitimate repetition, the command, and the work per call."""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from seqdedup import Call, Loop, SeqdedupError, find_loops
from seqdedup.config.normalize import ALL
from seqdedup.loops.calls import keyed, masked, shape_of
from seqdedup.loops.rule import LoopFinder
from seqdedup.loops.transcripts import read_transcript

from conftest import examples

TRANSCRIPTS = Path(__file__).parent / "data" / "transcripts"
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
from genloops import legitimate, planted, session  # type: ignore[import-not-found]  # noqa: E402


# -- the oracle: the rule as docs/loops.md states it, read literally ----------------------
def _identity(call: Call) -> tuple[str, str, str, str]:
    return (call.tool, masked(call.action, ALL), masked(call.result, ALL), call.status)


def _empty(call: Call) -> bool:
    return not call.result.strip() and call.status in ("", "0")


def _equal(p: int, later: Call, earlier: Call) -> bool:
    """Call ``later`` equals ``earlier`` (its counterpart one iteration before)."""
    if _identity(later) == _identity(earlier):
        return True
    if p == 1:
        return False
    same_result = (masked(later.result, ALL), later.status) == (
        masked(earlier.result, ALL),
        earlier.status,
    )
    if not _empty(later) and same_result:
        return True
    return shape_of(later.tool, masked(later.action, ALL)) == shape_of(
        earlier.tool, masked(earlier.action, ALL)
    )


def _iterations(calls: list[Call], p: int, start: int, before: list[int]):
    """Every way the loop may go on at ``start`` after the iteration ``before``: each a
    list of iterations (the calls compared, and the extra call or None)."""
    yield []
    for extra in (None, *range(p)):
        span = list(range(start, start + p + (extra is not None)))
        if span[-1] >= len(calls):
            continue
        compared = [c for k, c in enumerate(span) if k != extra]
        extra_call = None if extra is None else span[extra]
        pairs = list(zip(compared, before, strict=True))
        if not all(_equal(p, calls[a], calls[b]) for a, b in pairs):
            continue
        if not any(_identity(calls[a]) == _identity(calls[b]) for a, b in pairs):
            continue
        for rest in _iterations(calls, p, span[-1] + 1, compared):
            yield [(compared, extra_call), *rest]


def oracle(calls: list[Call], max_period: int = 64) -> list[tuple[int, int, int, int]]:
    """(period, iterations, first, last) of each loop reported, by brute force."""
    found = []
    start = 0
    while start < len(calls):
        chosen = None  # (last, -period, iterations)
        for p in range(1, max_period + 1):
            if start + 2 * p > len(calls):
                break
            first = list(range(start, start + p))
            best = None  # (iterations, -last, path)
            for path in _iterations(calls, p, start + p, first):
                k = 1 + len(path)
                last = path[-1][0][-1] if path else first[-1]
                if best is None or (k, -last) > best[:2]:
                    best = (k, -last, path)
            assert best is not None
            k, last, path = best[0], -best[1], best[2]
            adjacent = (
                p == 1
                and k == 2
                and path[0][1] is None
                and (*calls[start][:3], calls[start].status)
                == (*calls[start + 1][:3], calls[start + 1].status)
            )
            if (k >= 3 or adjacent) and (chosen is None or last > chosen[0]):
                chosen = (last, p, k)
        if chosen is None:
            start += 1
            continue
        last, p, k = chosen
        found.append((p, k, start, last))
        start = last + 1
    return found


def _brief(loops: list[Loop]) -> list[tuple[int, int, int, int]]:
    return [(loop.period, loop.iterations, loop.first, loop.last) for loop in loops]


# small alphabets: actions that differ in a number (masked), a path or a quoted string
# (the same shape), or in their first words; results empty, equal or not
ACTIONS = [
    "ls",
    "ls -la",
    "cat a.py",
    "cat b.py",
    "sed -n '1,5p' x",
    "sed -n '2,9p' x",
    "run 1",
    "run 2",
]
RESULTS = ["", "", "ok", "Error: 7", "Error: 8", "done"]
calls_strategy = st.lists(
    st.builds(
        Call,
        st.sampled_from(["bash", "edit"]),
        st.sampled_from(ACTIONS),
        st.sampled_from(RESULTS),
        st.just(""),
        st.none(),
        st.sampled_from(["", "", "0", "1"]),
    ),
    max_size=16,
)


@pytest.mark.usefixtures("engine")  # (the kernel's masking and the Python one)
@settings(max_examples=examples(400), deadline=None)
@given(calls=calls_strategy, max_period=st.integers(1, 8))
def test_the_rule_is_its_literal_reading(calls, max_period):
    assert _brief(find_loops(calls, max_period=max_period)) == oracle(calls, max_period)


@settings(max_examples=examples(200), deadline=None)
@given(
    block=st.lists(
        st.builds(Call, st.just("bash"), st.sampled_from(ACTIONS), st.sampled_from(RESULTS)),
        min_size=1,
        max_size=4,
    ),
    copies=st.integers(2, 5),
    noise=st.lists(st.sampled_from(ACTIONS), max_size=3),
    extra=st.integers(0, 3),
)
def test_repeated_blocks_with_a_stray_call_agree_with_the_oracle(block, copies, noise, extra):
    """Blocks repeated with one call put inside a copy: the shapes the rule's tolerances
    are for, more often than random lists draw them."""
    calls = [Call("bash", a, "x") for a in noise]
    for copy in range(copies):
        these = list(block)
        if copy == 1:
            these.insert(min(extra, len(these) - 1), Call("bash", "stray", "y"))
        calls += these
    assert _brief(find_loops(calls)) == oracle(calls)


# -- hand-checked cases -------------------------------------------------------------------
def test_the_shape_drops_cd_and_puts_placeholders_for_paths_and_quoted_strings():
    assert shape_of("bash", "cd /repo && sed -n '125,180p' a/b.py") == "bash\0sed\0-n"
    assert shape_of("bash", "python3 fix_1.py --x") == "bash\0python3\0<P>"
    assert shape_of("bash", 'echo "select 1" | sqlfluff lint -') == "bash\0echo\0<Q>"
    assert shape_of("Edit", 'file_path="/a.py"\nold_string="x"') == "Edit\0file_path=\0<Q>"


def test_a_view_between_two_fixes_is_not_a_loop():
    """A x A: not adjacent, so no loop (an editor's view-fix-view)."""
    calls = [
        Call("bash", "view a.py", "1"),
        Call("bash", "fix", ""),
        Call("bash", "view a.py", "1"),
    ]
    assert find_loops(calls) == []


def test_two_identical_adjacent_calls_are_a_loop_only_byte_for_byte():
    same = [Call("bash", "pytest", "1 failed"), Call("bash", "pytest", "1 failed")]
    assert _brief(find_loops(same)) == [(1, 2, 0, 1)]
    masked_only = [
        Call("bash", "sleep 1", "done at 10:00:01"),
        Call("bash", "sleep 2", "done at 10:00:02"),
    ]
    assert find_loops(masked_only) == []  # (equal once masked: k = 2 needs the bytes)
    assert _brief(find_loops([*masked_only, Call("bash", "sleep 3", "done at 10:00:03")])) == [
        (1, 3, 0, 2)
    ]


def test_a_changed_result_with_no_exact_call_kept_is_progress():
    """Polling whose result changes (a word, not a number, which is masked)."""
    states = ["pending", "queued", "running", "building", "done"]
    calls = [Call("bash", "gh run view 42", f"status: {s}") for s in states]
    assert find_loops(calls) == []
    # (two polls in a row with the same answer are byte for byte the same: a loop of two)
    again = [*calls[:3], calls[2], *calls[3:]]
    assert _brief(find_loops(again)) == [(1, 2, 2, 3)]


def test_a_failed_command_is_not_its_empty_success():
    """The exit status is never masked: `grep` finding nothing (1) is not success (0)."""
    calls = [Call("bash", "grep -n x a.py", "", status=s) for s in ("1", "0", "1")]
    assert find_loops(calls) == []


# -- real transcripts ---------------------------------------------------------------------
REAL = {
    "sweagent_ctf-crypto-eps.traj": [(1, 4, "9", "12")],
    "sweagent_gpt4_pydicom__pydicom-1458.traj": [(1, 2, "6", "7")],
    "minisweagent_deepseek-chat_django__django-11620.traj.json": [(1, 4, "57", "61")],
    "minisweagent_deepseek-chat_pyvista__pyvista-4315.traj.json": [(3, 4, "36", "49")],
    "minisweagent_deepseek-chat_sqlfluff__sqlfluff-1517.traj.json": [],
    "minisweagent_deepseek-chat_django__django-11099.traj.json": [],
    "sweagent_gpt4_swe-agent__test-repo-i1.traj": [],
    "sweagent_fc-demo_marshmallow-code__marshmallow-1867.traj": [],
    "openhands_basic_gui_mode.json": [],
    "claudecodelog_representative_messages.jsonl": [],
}


@pytest.mark.parametrize("name", sorted(REAL))
def test_the_real_transcripts_loops_are_those_their_readme_names(name):
    """The README's loops, each covering the records it names and at most one
    iteration more (pyvista: its README names steps 37-47, the cycle starts at 36);
    nothing on the normal files and the linter probes (sqlfluff)."""
    transcript = read_transcript((TRANSCRIPTS / name).read_bytes(), name)
    loops = find_loops(transcript.calls)
    calls = transcript.calls
    got = [
        (lp.period, lp.iterations, calls[lp.first].record, calls[lp.last].record) for lp in loops
    ]
    assert got == REAL[name]


def test_the_formats_are_told_from_the_content():
    formats = {
        name: read_transcript((TRANSCRIPTS / name).read_bytes(), name)
        for name in (
            "sweagent_ctf-crypto-eps.traj",
            "openhands_basic_gui_mode.json",
            "claudecodelog_representative_messages.jsonl",
            "minisweagent_deepseek-chat_django__django-11099.traj.json",
        )
    }
    assert {n: (t.format, t.unit, len(t.calls)) for n, t in formats.items()} == {
        "sweagent_ctf-crypto-eps.traj": ("SWE-agent", "record", 14),
        "openhands_basic_gui_mode.json": ("OpenHands", "event", 4),
        "claudecodelog_representative_messages.jsonl": ("Claude Code", "line", 2),
        "minisweagent_deepseek-chat_django__django-11099.traj.json": ("mini-swe-agent", "step", 42),
    }
    claude = formats["claudecodelog_representative_messages.jsonl"].calls
    assert [(c.tool, c.action, c.record) for c in claude] == [
        ("Edit", claude[0].action, "4"),
        ("Bash", "python /tmp/decorator_example.py", "8"),
    ]
    assert claude[1].result.startswith("Hello, Alice!") and claude[1].time == "2025-06-14T10:03:00Z"
    openhands = formats["openhands_basic_gui_mode.json"].calls
    assert [(c.tool, c.record) for c in openhands] == [
        ("run", "7"),
        ("edit", "9"),
        ("edit", "11"),
        ("run", "13"),
    ]
    assert openhands[0].action == "mkdir -p /workspace/todo-app"


# -- planted loops and legitimate repetition ----------------------------------------------
@pytest.mark.parametrize("period", [1, 2, 3, 4, 5, 6, 7, 8, 16, 32, 64])
@pytest.mark.parametrize("inserted", [False, True])
def test_planted_loops_are_found_with_their_period(period, inserted):
    rng = random.Random(period * 2 + inserted)  # (seeded: the same calls every run)
    for iterations in (3, 6, 10):
        before, after = session(rng, 7), session(rng, 5)
        calls = [*before, *planted(period, iterations, inserted, rng), *after]
        loops = find_loops(calls)
        assert [(lp.period, lp.iterations, lp.first) for lp in loops] == [(period, iterations, 7)]
        assert loops[0].last == len(before) + period * iterations + inserted - 1


def test_legitimate_repetition_is_not_a_loop():
    shapes = legitimate()
    together = [call for calls in shapes.values() for call in calls]
    for name, calls in [*shapes.items(), ("all of them", together)]:
        assert find_loops(calls) == [], name


def test_the_work_per_call_does_not_grow_with_thesession():
    """Counted work: calls compared per call, on 1,000 and on 10,000 calls of ordinary
    work with loops planted in it, within a fifth of each other."""

    def work(count: int) -> float:
        rng = random.Random(7)
        calls: list[Call] = []
        while len(calls) < count:
            calls += session(rng, 40) + planted(rng.choice([1, 3, 8]), 3, False, rng)
        finder = LoopFinder(keyed(calls[:count]))
        finder.loops()
        return finder.comparisons / count

    small, large = work(1000), work(10000)
    assert large <= small * 1.2, (small, large)


# -- the command ----------------------------------------------------------------------------
def test_the_command_names_each_loop_and_exits_1(run_cli):
    done = run_cli(["loops", str(TRANSCRIPTS / "sweagent_ctf-crypto-eps.traj")])
    assert done.returncode == 1 and done.stderr == b""
    name = TRANSCRIPTS / "sweagent_ctf-crypto-eps.traj"
    assert done.stdout.decode().splitlines() == [
        f"{name}: a loop of period 1, 4 iterations, records 9-12",
        "  one iteration:",
        "    record 9: submit flag{People always make the best exploits.} -> Wrong flag!",
    ]


def test_the_json_answer_and_exit_0_without_a_loop(run_cli):
    normal = TRANSCRIPTS / "sweagent_gpt4_swe-agent__test-repo-i1.traj"
    pyvista = TRANSCRIPTS / "minisweagent_deepseek-chat_pyvista__pyvista-4315.traj.json"
    done = run_cli(["loops", "--format", "json", str(normal)])
    assert done.returncode == 0
    assert json.loads(done.stdout)["transcripts"][0]["loops"] == []
    answer = json.loads(run_cli(["loops", "--format", "json", str(pyvista)]).stdout)
    loop = answer["transcripts"][0]["loops"][0]
    assert (loop["period"], loop["iterations"], loop["first"], loop["last"]) == (3, 4, "36", "49")
    assert loop["inserted"] == ["42", "48"]
    assert [c["action"] for c in loop["iteration"]][
        1
    ] == "cp pyvista/core/grid.py.backup pyvista/core/grid.py"


def test_the_time_and_tokens_inside_a_loop_are_the_transcripts(run_cli):
    """pyvista's loop (steps 36-49): the seconds from the first step's timestamp to the
    last's, and the tokens of the model's turns between, read here from the file."""
    path = TRANSCRIPTS / "minisweagent_deepseek-chat_pyvista__pyvista-4315.traj.json"
    import datetime

    steps = [m for m in json.loads(path.read_bytes())["messages"] if m["role"] == "assistant"]
    inside = steps[36:50]
    # (the times as written: UTC, to the millisecond, from the file's seconds since 1970)
    first, last = (
        datetime.datetime.fromtimestamp(float(m["extra"]["timestamp"]), datetime.UTC)
        for m in (inside[0], inside[-1])
    )
    tokens = sum(m["extra"]["response"]["usage"]["total_tokens"] for m in inside)
    answer = json.loads(run_cli(["loops", "--format", "json", str(path)]).stdout)
    (loop,) = answer["transcripts"][0]["loops"]
    assert loop["tokens"] == tokens
    written = [t.isoformat(timespec="milliseconds").replace("+00:00", "Z") for t in (first, last)]
    assert [loop["first_time"], loop["last_time"]] == written
    # the seconds between the two times written, counted in whole milliseconds
    stamps = [datetime.datetime.fromisoformat(t) for t in written]
    assert round(loop["seconds"] * 1000) == round((stamps[1] - stamps[0]).total_seconds() * 1000)


def test_normalize_none_compares_the_exact_text(run_cli):
    """Three runs whose answers differ in a number: a loop once numbers are masked (the
    default), none with --normalize none; the Python call the same."""
    lines = [{"in": "make test", "out": f"FAIL after {n} s"} for n in (3, 4, 5)]
    data = "".join(json.dumps(line) + "\n" for line in lines).encode()
    keys = ["--action-key", "in", "--result-key", "out"]
    assert run_cli(["loops", *keys], data).returncode == 1
    assert run_cli(["loops", *keys, "--normalize", "none"], data).returncode == 0
    calls = [Call("", line["in"], line["out"]) for line in lines]
    assert len(find_loops(calls)) == 1 and find_loops(calls, normalize="none") == []


def test_any_jsonl_by_its_key_paths_and_from_standard_input(run_cli):
    lines = [{"call": {"input": "make test", "output": "FAIL: 1"}, "at": n} for n in range(3)]
    data = "".join(json.dumps(line) + "\n" for line in lines).encode()
    keys = ["--action-key", "call.input", "--result-key", "call.output"]
    done = run_cli(["loops", *keys], data)
    assert done.returncode == 1
    assert done.stdout.decode().startswith("-: a loop of period 1, 3 iterations, lines 1-3")


@pytest.mark.parametrize(
    ("args", "data", "message"),
    [
        (["loops", "-"], b"plain text\n", "cannot tell the format of the transcript '-'"),
        (["loops", "/nonexistent/run.traj"], b"", "cannot read '/nonexistent/run.traj'"),
        (["loops", "--normalize", "colour"], b"", "colour"),
        (["loops", "--result-key", "x"], b"", "--result-key needs --action-key"),
        (
            ["loops", "--action-key", "nope"],
            b'{"a": 1}\n',
            "no line of '-' holds --action-key nope",
        ),
    ],
)
def test_errors_are_one_line_and_exit_2(run_cli, args, data, message):
    done = run_cli(args, data)
    assert done.returncode == 2 and done.stdout == b""
    err = done.stderr.decode()
    assert err.count("\n") == 1 and message in err and "Traceback" not in err


def test_the_python_call_refuses_a_period_out_of_range():
    with pytest.raises(SeqdedupError, match="max_period must be 1 to 64"):
        find_loops([], max_period=65)
