"""The hint after a run that removed almost nothing (seqdedup.cli.hints)."""

from __future__ import annotations

import random
import subprocess
from pathlib import Path

import pytest

from seqdedup.cli.hints import SAMPLE_MAX, SAMPLE_MIN, InputHead, normalization_hint, sample_size
from seqdedup.config.settings import Config
from seqdedup.run.stats import Stats

from conftest import run_in_process, seqdedup_command, user_env

BLOCK = ["retrying connection to db-1", "ConnectionError: refused", "backing off"]


def timestamped_log(lines: int = 3000, seed: int = 3) -> bytes:
    """A service log whose repeated blocks differ only in their timestamps."""
    rng = random.Random(seed)
    out = []
    for i in range(lines):
        stamp = f"2026-11-26T10:{i // 60 % 60:02d}:{i % 60:02d}.{rng.randint(0, 999):03d}Z"
        if i % 5 == 0:
            out += [f"{stamp} {text}" for text in BLOCK]
        else:
            out.append(f"{stamp} request {rng.randint(0, 10**9)} served")
    return ("\n".join(out) + "\n").encode()


def run(args: list[str], data: bytes) -> subprocess.CompletedProcess[bytes]:
    """(In this process: what a run says is the point here, not the process.)"""
    return run_in_process(args, data)


def hint_lines(stderr: bytes) -> list[str]:
    hints = ("seqdedup: lines", "seqdedup: JSON records")
    return [line for line in stderr.decode().splitlines() if line.startswith(hints)]


def test_a_timestamped_log_that_finds_nothing_gets_one_hint_on_stderr():
    data = timestamped_log()
    shown = run(["-w", "3"], data)
    quiet = run(["-q", "-w", "3"], data)
    assert shown.returncode == quiet.returncode == 0
    assert shown.stdout == quiet.stdout == data  # nothing removed; the hint never in the output
    (line,) = hint_lines(shown.stderr)
    assert line.startswith("seqdedup: lines differ only in their timestamps; ")
    assert "--normalize timestamp would remove" in line
    assert line.endswith("(seqdedup --suggest-window for more)")
    # the share it names is the one a normalised run removes (on its sample)
    named = int(line.split("would remove ")[1].split("%")[0])
    normalized = run(["-q", "-w", "3", "--normalize", "timestamp"], data)
    removed = 1 - normalized.stdout.count(b"\n") / data.count(b"\n")
    assert abs(named / 100 - removed) < 0.1
    assert hint_lines(quiet.stderr) == []


@pytest.mark.parametrize(
    "args",
    [
        ["-q", "-w", "3"],  # no statistics shown
        ["--stats-format", "json", "-w", "3"],  # a program reads stderr
        ["-w", "3", "--normalize", "timestamp"],  # the user's keys remove enough
    ],
)
def test_no_hint_where_it_does_not_belong(args):
    assert hint_lines(run(args, timestamped_log()).stderr) == []


def test_keys_the_user_chose_get_the_hint_that_adds_every_class():
    """-w 3 --normalize timestamp on a log whose repeated blocks carry a request id too:
    the run removes nothing, and the hint says that adding --normalize all would (the
    share it names is what such a run removes); the CI example, as the README's recipe
    ran it, the same."""
    rng = random.Random(4)
    lines = []
    for i in range(3000):
        stamp = f"2026-11-26T10:{i // 60 % 60:02d}:{i % 60:02d}Z"
        request = f"req={rng.getrandbits(48):012x}"
        text = BLOCK[i % 3] if i % 12 < 3 else f"served {rng.randint(0, 10**9)}"
        lines.append(f"{stamp} {request} {text}")
    data = ("\n".join(lines) + "\n").encode()
    (line,) = hint_lines(run(["-w", "3", "--normalize", "timestamp"], data).stderr)
    assert line.startswith("seqdedup: lines still differ in their ids or numbers; ")
    named = int(line.split("would remove ")[1].split("%")[0])
    both = run(["-q", "-w", "3", "--normalize", "timestamp", "--normalize", "all"], data)
    assert abs(named / 100 - (1 - both.stdout.count(b"\n") / 3000)) < 0.1
    # a JSON path on a text log leaves every line its own key: the same hint
    (line,) = hint_lines(run(["-w", "3", "--json-key", "msg"], timestamped_log()).stderr)
    assert "adding --normalize all would remove" in line
    example = Path(__file__).resolve().parent.parent / "examples" / "ci" / "failed.log"
    recipe = run(["-w", "auto", "--normalize", "timestamp", "--fold"], example.read_bytes())
    assert [line.split(";")[0] for line in hint_lines(recipe.stderr)] == [
        "seqdedup: lines still differ in their ids or numbers"
    ]


def test_when_no_class_helps_the_field_that_differs_is_named_with_its_mask():
    """Lines that differ in a user name (letters and digits: no class masks it): the hint
    names the field, two of its values, and the --mask that would remove them, with the
    share such a run removes."""
    rng = random.Random(1)
    lines = []
    for i in range(3000):
        stamp = f"2026-12-06T10:{i // 60 % 60:02d}:{i % 60:02d}Z"
        lines.append(f"{stamp} sshd: session opened for user{rng.randrange(400)} by root")
    data = ("\n".join(lines) + "\n").encode()
    (line,) = hint_lines(run(["-w", "2"], data).stderr)
    assert line.startswith('seqdedup: lines differ in one field ("user')
    options = line.split("; ")[1].split(" would remove")[0]
    assert options == "--normalize all --mask '(?<=for )\\S+'"
    named = int(line.split("would remove ")[1].split("%")[0])
    masked = run(["-q", "-w", "2", "--normalize", "all", "--mask", r"(?<=for )\S+"], data)
    assert abs(named / 100 - (1 - masked.stdout.count(b"\n") / 3000)) < 0.1


def test_lines_that_differ_in_paths_and_quoted_values_get_the_classes_of_a_kind():
    """Paths and quoted values are not in ``all``: when ``all`` is not enough, the hint
    names every class of a line's kind, with the share such a run removes."""
    rng = random.Random(2)
    lines = []
    for i in range(3000):
        user, folder = rng.randrange(300), rng.randrange(300)
        lines.append(f'{i} GET /srv/{folder}/index.html user="u{user}" done')
    data = ("\n".join(lines) + "\n").encode()
    (line,) = hint_lines(run(["-w", "2"], data).stderr)
    assert line.startswith(
        "seqdedup: lines differ only in their timestamps, ids, numbers, paths or quoted "
        "values; --normalize all,path,quoted would remove "
    )
    named = int(line.split("would remove ")[1].split("%")[0])
    masked = run(["-q", "-w", "2", "--normalize", "all,path,quoted"], data)
    assert named >= 90 and abs(named / 100 - (1 - masked.stdout.count(b"\n") / 3000)) < 0.1


def test_no_hint_when_nothing_would_be_gained_or_the_run_already_removes():
    rng = random.Random(1)
    words = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel"]
    distinct = "".join(
        " ".join(rng.choice(words) for _ in range(6)) + "\n" for _ in range(3000)
    ).encode()  # (lines that differ in their words: no normalisation joins them)
    assert hint_lines(run(["-w", "3"], distinct).stderr) == []
    repeats = b"".join(f"{text}\n".encode() for _ in range(500) for text in BLOCK)
    assert hint_lines(run(["-w", "3"], repeats).stderr) == []  # it removes 99% already


def test_the_class_that_helps_is_named():
    rng = random.Random(2)
    lines = []
    for _ in range(3000):
        lines.append(f"job {rng.randint(0, 10**6)} started")
        lines.append(f"job {rng.randint(0, 10**6)} finished in {rng.randint(1, 90)}s")
    data = ("\n".join(lines) + "\n").encode()
    (line,) = hint_lines(run(["-w", "2"], data).stderr)
    assert line.startswith("seqdedup: lines differ only in their numbers; --normalize number")


def test_the_head_gives_whole_records_across_chunks():
    head = InputHead(limit=40)
    for chunk in (b"a\nbb\nc", b"cc\nd\n", b"e" * 50):
        head(chunk)
    assert head.records(b"\n", 3) == [b"a", b"bb", b"ccc"]
    assert head.records(b"\n", 0) == []
    assert sample_size(10) == 10
    assert sample_size(10_000) == SAMPLE_MIN
    assert sample_size(10**9) == SAMPLE_MAX


def test_the_hint_reads_the_statistics_of_the_run():
    head = InputHead()
    head(timestamped_log())
    config = Config(window_size=3)
    assert normalization_hint(config, Stats(total=5000, emitted=4000, skipped=1000), head) is None
    assert normalization_hint(config, Stats(total=0), head) is None
    assert normalization_hint(config, Stats(total=5000, emitted=5000), head) is not None


def json_lines(count: int) -> bytes:
    return b"".join(
        b'{"msg": "m%d", "ts": %d, "request_id": "r%d"}\n' % (i % 3, i, i) for i in range(count)
    )


def warnings_of(stderr: bytes) -> list[str]:
    return [line for line in stderr.decode().splitlines() if line.startswith("seqdedup: warning")]


def test_a_json_path_that_matches_nothing_is_one_warning_even_with_q():
    data = json_lines(50)
    p = run(["-q", "-w", "1", "--json-ignore", "ts,request_id"], data)
    assert p.returncode == 0 and p.stdout == data  # every line differs in ts: all kept
    assert warnings_of(p.stderr) == [
        "seqdedup: warning: --json-ignore 'ts,request_id' matched no field of the first 50 "
        "records (one path per option: --json-ignore ts --json-ignore request_id)"
    ]
    right = run(["-q", "-w", "1", "--json-ignore", "ts", "--json-ignore", "request_id"], data)
    assert warnings_of(right.stderr) == [] and right.stdout.count(b"\n") == 3
    keys = run(["-q", "-w", "1", "--json-key", "msg", "--json-key", "mgs"], data)
    assert warnings_of(keys.stderr) == [
        "seqdedup: warning: --json-key 'mgs' matched no field of the first 50 records"
    ]


def test_the_json_warning_comes_after_ten_thousand_records_of_a_live_input():
    import select

    proc = subprocess.Popen(
        [*seqdedup_command(), "-q", "-w", "1", "--json-key", "mgs"],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=user_env(),
    )
    assert proc.stdin is not None and proc.stderr is not None
    try:
        proc.stdin.write(json_lines(10_050))
        proc.stdin.flush()  # (the input stays open: a live run)
        ready, _, _ = select.select([proc.stderr], [], [], 30)
        assert ready, "no warning while the input is still open"
        line = proc.stderr.readline().decode()
        assert (
            line
            == "seqdedup: warning: --json-key 'mgs' matched no field of the first 10,000 records\n"
        )
    finally:
        proc.stdin.close()
        proc.wait(timeout=30)
    assert proc.returncode == 0


def test_a_json_log_is_told_which_fields_to_leave_out():
    """JSON records that differ only in a time and a request id: the hint names those
    fields for --json-ignore (it said --normalize all, which masks every number of
    every field)."""
    import json

    rng = random.Random(5)
    messages = ["GET /a 200", "GET /b 200", "POST /c 500", "retry db", "db down"]
    lines = [
        json.dumps(
            {
                "ts": f"2026-11-26T10:{k // 60 % 60:02d}:{k % 60:02d}Z",
                "req": f"{rng.getrandbits(32):08x}",
                "level": "info",
                "msg": messages[k // 3 % 5],
            }
        )
        for k in range(3000)
    ]
    data = ("\n".join(lines) + "\n").encode()
    (line,) = hint_lines(run(["-w", "3"], data).stderr)
    assert line.startswith(
        "seqdedup: JSON records differ in their req, ts fields; --json-ignore req "
        "--json-ignore ts would remove "
    )
    share = int(line.split("would remove ")[1].split("%")[0])
    ignored = run(["-q", "-w", "3", "--json-ignore", "req", "--json-ignore", "ts"], data).stdout
    assert share >= 90 and ignored.count(b"\n") < 0.1 * len(lines)
