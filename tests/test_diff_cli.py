"""``seqdedup diff`` as users run it: the exit statuses (0 same, 1 changed, 2 errors,
each error one line with nothing on stdout), GOOD as files, folders and a library, BAD
from standard input, the JSON form, --budget, --stream-by and the key options; the
installed command in a real process where the process is the point."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from seqdedup.base.tokens import estimate_tokens

from conftest import user_env, wait_until, waits_for_input

ROOT = Path(__file__).resolve().parent.parent
GREEN = ROOT / "examples" / "ci" / "green.log"
FAILED = ROOT / "examples" / "ci" / "failed.log"
BIN = Path(sys.executable).parent


def diff(run_cli, *args, stdin=b""):
    return run_cli(["diff", *map(str, args)], stdin)


def test_the_ci_example_reports_each_kind_and_exits_1(run_cli):
    done = diff(run_cli, "--normalize", "all", GREEN, FAILED)
    assert done.returncode == 1, done.stderr
    text = done.stdout.decode()
    assert text.startswith(f"seqdedup diff: {FAILED} (65 records) against {GREEN} (1 input)")
    # the new traceback, verbatim with its line numbers
    assert "+      55 | 2026-11-28T10:01:17.3524590Z sqlalchemy.exc.ProgrammingError" in text
    # the start-up that ran the migrations is cut short: said where, with GOOD's steps
    assert "! lines 16-19: broken, only 4 of its 9 records" in text
    assert "!         | 2026-11-27T10:00:17.9189627Z Running migrations: 0001_initial" in text
    # the session retries, more often (per input: two one-hour-less runs)
    assert "more often (6.0x), 2 records: 12 in BAD (12 per input) against 2 in GOOD" in text
    assert done.stderr == b""


def test_nothing_changed_is_exit_0(run_cli):
    done = diff(run_cli, "--normalize", "all", GREEN, GREEN)
    assert done.returncode == 0
    assert done.stdout.decode().splitlines() == [
        f"seqdedup diff: {GREEN} (45 records) against {GREEN} (1 input): nothing changed",
        "= lines 1-45: 45 known records",
    ]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["nope.log", "bad.log"], "seqdedup diff: cannot open input 'nope.log'"),
        (
            ["--factor", "1", "g", "b"],
            "seqdedup diff: --factor must be a number more than 1, not 1",
        ),
        (["--factor", "nan", "g", "b"], "--factor must be a number more than 1, not nan"),
        (["--min-count", "0", "g", "b"], "seqdedup diff: --min-count must be at least 1, got 0"),
        (["-", "b"], "seqdedup diff: standard input ('-') can only be BAD, the last input"),
        (["--budget", "8k", "--format", "json", "g", "b"], "--format json gives it whole"),
        (["--tokenizer", "o200k_base", "g", "b"], "--tokenizer requires --budget"),
        (["--show-keys", "g", "b"], "seqdedup diff: --show-keys is not supported by"),
        (["--per-stream", "g", "b"], "seqdedup diff: --per-stream is not supported by"),
        (["-w", "auto", "g", "b"], "takes -w N (a number of records), not auto"),
        (["--bogus", "g", "b"], "seqdedup diff: unrecognized arguments: --bogus"),
        (["--normalize", "colour", "g", "b"], "colour"),
    ],
)
def test_an_error_is_one_line_exit_2_and_nothing_on_stdout(run_cli, tmp_path, args, message):
    for name in ("g", "b"):
        (tmp_path / name).write_text("a\nb\n")
    args = [str(tmp_path / a) if a in ("g", "b") else a for a in args]
    done = diff(run_cli, *args)
    assert done.returncode == 2, done
    assert done.stdout == b""
    lines = done.stderr.decode().splitlines()
    assert len(lines) == 1 and message in lines[0], lines


def test_bad_from_standard_input_and_good_as_a_folder(run_cli, tmp_path):
    good = tmp_path / "green"
    good.mkdir()
    (good / "run1.log").write_bytes(GREEN.read_bytes())
    (good / "run2.log").write_bytes(GREEN.read_bytes())
    (good / ".hidden").write_text("not an input\n")
    done = diff(run_cli, "--normalize", "all", good, stdin=FAILED.read_bytes())
    assert done.returncode == 1
    first = done.stdout.decode().splitlines()[0]
    assert first.startswith(f"seqdedup diff: standard input (65 records) against {good} (2 inputs)")
    # per input: GOOD's two runs show the retries twice each, BAD twelve times
    assert "12 in BAD (12 per input) against 4 in GOOD (2 per input)" in done.stdout.decode()


def test_good_as_a_library_counts_what_the_library_holds(run_cli, tmp_path):
    library = tmp_path / "lib"
    for _ in range(2):  # two runs saved into it: two inputs
        saved = run_cli(["-q", "-w", "1", "--normalize", "all", "-l", str(library), str(GREEN)])
        assert saved.returncode == 0, saved.stderr
    done = diff(run_cli, "--normalize", "all", "--format", "json", library, FAILED)
    answer = json.loads(done.stdout)
    assert done.returncode == 1 and answer["good_inputs"] == 2
    new = [c for c in answer["changes"] if c["kind"] == "new"]
    assert not [c for c in answer["changes"] if c["kind"] == "values"]  # (one commit in GOOD)
    assert [line["line"] for c in new for line in c["records"]] == [
        3,
        51,
        52,
        53,
        54,
        55,
        59,
        60,
        61,
        63,
    ]
    more = [c for c in answer["changes"] if c["kind"] == "more"]
    assert [(c["bad"], c["good"], c["good_rate"]) for c in more] == [(12, 4, 2.0)]


def test_json_holds_what_the_text_says(run_cli):
    text = diff(run_cli, "--normalize", "all", GREEN, FAILED).stdout.decode()
    answer = json.loads(
        diff(run_cli, "--normalize", "all", "--format", "json", GREEN, FAILED).stdout
    )
    assert answer["changed"] is True and answer["records"] == 65
    counts = answer["counts"]
    assert (
        f"{counts['new']} new, {counts['values']} kinds with new values, {counts['broken']}"
        f" broken, {counts['more']} more often"
    ) in text
    known = sum(c["length"] for c in answer["changes"] if c["kind"] == "known")
    new = sum(c["length"] for c in answer["changes"] if c["kind"] in ("new", "values"))
    assert known + new == 65
    for change in answer["changes"]:
        for line in change.get("records", []):
            if line["line"]:
                assert f"{line['line']:>7,} | {line['text']}" in text


@pytest.mark.parametrize("budget", [60, 150, 400, 2000])
def test_the_budget_is_met_and_says_what_it_left_out(run_cli, budget):
    done = diff(run_cli, "--normalize", "all", "--budget", budget, GREEN, FAILED)
    assert done.returncode == 1
    assert estimate_tokens(done.stdout) <= budget
    text = done.stdout.decode()
    whole = diff(run_cli, "--normalize", "all", GREEN, FAILED).stdout.decode()
    if len(whole) > len(text):
        assert "more line" in text or "not shown: --format json" in text
    assert text.splitlines()[0].endswith(whole.splitlines()[0].split(": ", 2)[2])  # the verdict


def test_streams_are_compared_each_on_its_own(run_cli, tmp_path):
    good = tmp_path / "good.log"
    bad = tmp_path / "bad.log"
    steps = ["begin", "load", "ready"]
    good.write_text("".join(f"{pod} {step}\n" for step in steps for pod in ("p1", "p2")))
    # p2 stops after 'load'; interleaved, each pod's own order is what counts
    bad.write_text("p1 begin\np2 begin\np1 load\np2 load\np1 ready\np2 crash\n")
    done = diff(run_cli, "--stream-by", r"^\S+ ", "--min-count", "1", good, bad)
    text = done.stdout.decode()
    assert done.returncode == 1
    assert "broken, cut short after 2 of 3 records" in text
    assert "+       6 | p2 crash" in text
    plain = diff(run_cli, "--min-count", "1", good, bad).stdout.decode()
    assert "p1 begin" in plain  # (without streams every line differs: the names are in the keys)


def test_the_installed_command_exits_1_on_change_and_2_on_error(tmp_path):
    env = user_env()
    changed = subprocess.run(
        [str(BIN / "seqdedup"), "diff", str(GREEN), str(FAILED)], capture_output=True, env=env
    )
    assert changed.returncode == 1 and changed.stdout.startswith(b"seqdedup diff: ")
    missing = subprocess.run(
        [str(BIN / "seqdedup"), "diff", str(tmp_path / "none"), str(FAILED)],
        capture_output=True,
        env=env,
    )
    assert missing.returncode == 2 and missing.stdout == b""
    # | head: the reader went away, the answer was cut short, no traceback
    piped = subprocess.run(
        f"'{BIN / 'seqdedup'}' diff '{GREEN}' '{FAILED}' | head -1",
        shell=True,
        capture_output=True,
        env=env,
    )
    assert piped.stdout.startswith(b"seqdedup diff: ") and piped.stderr == b""


def test_the_report_page_is_written(run_cli, tmp_path):
    pytest.importorskip("jinja2")
    pytest.importorskip("vl_convert")
    page = tmp_path / "diff.html"
    done = diff(run_cli, "--normalize", "all", "--report", page, GREEN, FAILED)
    assert done.returncode == 1
    html = page.read_text()
    assert "What changed in" in html and "sqlalchemy.exc.ProgrammingError" in html
    refused = diff(run_cli, "--report", tmp_path / "no" / "x.html", GREEN, FAILED)
    assert refused.returncode == 2 and refused.stdout == b"" and not (tmp_path / "no").exists()


def test_a_budget_below_the_shortest_answer_is_said(run_cli):
    done = diff(run_cli, "--budget", "20", GREEN, FAILED)
    assert done.returncode == 1
    assert done.stdout.startswith(b"seqdedup diff: 65 records: ")
    assert b"tokens, over --budget" in done.stderr


def test_a_signal_ends_the_command_at_once_with_nothing_written(tmp_path):
    """SIGTERM while BAD is still coming (a pipe that stays open): exit 143 at once, no
    half answer on stdout."""
    import errno
    import os
    import signal

    fifo = tmp_path / "bad.fifo"
    os.mkfifo(fifo)
    process = subprocess.Popen(
        [str(BIN / "seqdedup"), "diff", str(GREEN), str(fifo)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=user_env(),
    )
    opened: list[int] = []

    def reader_came() -> bool:
        """The FIFO opened for writing once the command opened it to read (or the
        command ended first: a failure said below, not a test that hangs)."""
        try:
            opened.append(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        except OSError as exc:
            if exc.errno != errno.ENXIO:  # (ENXIO: no reader yet)
                raise
        return bool(opened) or process.poll() is not None

    wait_until(reader_came, "diff opening its BAD")
    assert opened, process.communicate()[1]
    writer = opened[0]
    os.set_blocking(writer, True)
    try:
        os.write(writer, GREEN.read_bytes()[:200])
        # (once it has read them and waits for more: an event, not a pause)
        wait_until(lambda: waits_for_input(process.pid), "diff waiting on its BAD")
        process.send_signal(signal.SIGTERM)
        out, err = process.communicate(timeout=30)
    finally:
        os.close(writer)
    assert process.returncode == 128 + signal.SIGTERM, err
    assert out == b""


def test_a_full_disk_is_one_line_and_exit_2(tmp_path):
    if not Path("/dev/full").exists():
        pytest.skip("no /dev/full")
    with open("/dev/full", "wb") as full:
        done = subprocess.run(
            [str(BIN / "seqdedup"), "diff", str(GREEN), str(FAILED)],
            stdout=full,
            stderr=subprocess.PIPE,
            env=user_env(),
            check=False,
        )
    assert done.returncode == 2
    assert done.stderr.decode().splitlines() == [
        "seqdedup diff: cannot write output: No space left on device"
    ]


def test_records_that_are_not_utf8_are_written_as_they_are(run_cli, tmp_path):
    good = tmp_path / "good.log"
    good.write_bytes(b"ok\n")
    bad = tmp_path / "bad.log"
    bad.write_bytes(b"ok\nbad \xff\xfe byte\n\x00nul\n")
    text = diff(run_cli, good, bad)
    assert b"+       2 | bad \xff\xfe byte\n" in text.stdout
    assert b"+       3 | \x00nul\n" in text.stdout
    answer = json.loads(diff(run_cli, "--format", "json", good, bad).stdout)
    (new,) = [c for c in answer["changes"] if c["kind"] == "new"]
    assert [line["text"] for line in new["records"]] == ["bad \ufffd\ufffd byte", "\x00nul"]


def test_a_good_folders_link_to_a_file_outside_it_is_not_read(run_cli, tmp_path):
    """A link inside a GOOD folder to a file elsewhere (a secret, say) is not read: its
    lines never reach the answer; standard error names it and says how many of the
    folder's files were read."""
    good = tmp_path / "good"
    good.mkdir()
    (good / "run1.log").write_bytes(b"start\nok\n")
    secret = tmp_path / "secret.txt"
    secret.write_bytes(b"password=hunter2\n")
    (good / "z-link.log").symlink_to(secret)
    (good / "inside.log").symlink_to(good / "run1.log")  # (a link within: read)
    bad = tmp_path / "bad.log"
    bad.write_bytes(b"start\nok\n")
    done = diff(run_cli, good, bad)
    assert done.returncode == 0, done.stderr
    assert b"hunter2" not in done.stdout + done.stderr
    assert done.stderr.decode().splitlines() == [
        f"seqdedup diff: '{good / 'z-link.log'}' links to a file outside '{good}': not read",
        f"seqdedup diff: '{good}': 2 of its 3 files read",
    ]


# -- sanity: an empty side, a reader that goes -----------------------------------------
@pytest.mark.parametrize("bad", [b"", b"\n  \n\t\n"])
def test_an_empty_or_blank_bad_is_a_change(run_cli, tmp_path, bad):
    """The job printed nothing (the worst failure): exit 1 and the first line says so;
    it was "nothing changed", exit 0."""
    path = tmp_path / "bad.log"
    path.write_bytes(bad)
    done = diff(run_cli, GREEN, path)
    assert done.returncode == 1, done.stderr
    assert done.stdout.decode().startswith(f"seqdedup diff: BAD is empty: {path} holds ")
    answer = json.loads(diff(run_cli, "--format", "json", GREEN, path).stdout)
    assert answer["changed"] is True and answer["bad_empty"] is True
    from seqdedup import diff_records

    assert diff_records([[b"a", b"b"]], [b""] if bad else []).changed


@pytest.mark.parametrize("from_stdin", [False, True], ids=["file", "stdin"])
def test_sides_shorter_than_the_delimiter_are_one_record_each(run_cli, tmp_path, from_stdin):
    """An input shorter than a delimiter of several bytes is one record without a
    delimiter, as a run reads it (it was a traceback: the check for a final delimiter
    read before the input's start)."""
    good, bad = tmp_path / "good.log", tmp_path / "bad.log"
    good.write_bytes(b"a")
    bad.write_bytes(b"a")
    if from_stdin:
        done = run_cli(["diff", "-d", "ab", str(good), "-"], b"a")
    else:
        done = run_cli(["diff", "-d", "ab", str(good), str(bad)])
    assert (done.returncode, done.stderr) == (0, b""), done.stderr
    name = "standard input" if from_stdin else str(bad)
    assert done.stdout.decode().splitlines() == [
        f"seqdedup diff: {name} (1 record) against {good} (1 input): nothing changed",
        "= line 1: 1 known record",
    ]


def test_an_empty_good_is_an_error(run_cli, tmp_path):
    empty = tmp_path / "good.log"
    empty.write_bytes(b"")
    done = diff(run_cli, empty, FAILED)
    assert (done.returncode, done.stdout) == (2, b"")
    assert done.stderr == (
        f"seqdedup diff: GOOD holds no record ({empty}): nothing to compare with\n".encode()
    )


@pytest.mark.parametrize(("changed", "status"), [(True, 1), (False, 0)])
def test_the_status_survives_a_reader_that_goes(tmp_path, changed, status):
    """`seqdedup diff GOOD BAD | head -1` under pipefail: an answer larger than a pipe
    holds, the reader gone after one line; the status is still the answer's (a closed
    pipe ended every command with 0, so a CI gate passed a changed job)."""
    good = tmp_path / "good.log"
    good.write_bytes(b"".join(b"known line %d\n" % (i % 7) for i in range(100)))
    bad = tmp_path / "bad.log"
    lines = (b"new line %d with some text to fill the pipe\n" % i for i in range(20_000))
    bad.write_bytes(b"".join(lines) if changed else good.read_bytes())
    env = user_env()  # (PYTHONUNBUFFERED left out, as a user runs it)
    command = f"set -o pipefail; '{BIN / 'seqdedup'}' diff -w 1 '{good}' '{bad}' | head -1"
    done = subprocess.run(["bash", "-c", command], capture_output=True, env=env, timeout=120)
    assert done.returncode == status, done.stderr
    assert done.stdout.count(b"\n") == 1 and done.stderr == b""


@pytest.mark.parametrize("crlf_side", ["good", "bad"])
def test_crlf_against_lf_compares_the_lines_and_says_so(run_cli, tmp_path, crlf_side):
    """The same lines with CRLF on one side and LF on the other: all were "new" (the CR
    was part of each key); now nothing changed, and the first line says the line ends
    differ. Sides with the same line ends say nothing of them."""
    lf = GREEN.read_bytes()
    crlf = lf.replace(b"\n", b"\r\n")
    good, bad = tmp_path / "good.log", tmp_path / "bad.log"
    good.write_bytes(crlf if crlf_side == "good" else lf)
    bad.write_bytes(crlf if crlf_side == "bad" else lf)
    done = diff(run_cli, "--normalize", "all", good, bad)
    assert done.returncode == 0, done.stdout
    first = done.stdout.decode().splitlines()[0]
    styles = "GOOD CRLF, BAD LF" if crlf_side == "good" else "GOOD LF, BAD CRLF"
    assert first.endswith(f"nothing changed (line ends differ: {styles}; compared without the CR)")
    answer = json.loads(diff(run_cli, "--format", "json", good, bad).stdout)
    assert answer["line_ends"] == styles and answer["changed"] is False
    same = json.loads(diff(run_cli, "--format", "json", good, good).stdout)
    assert same["line_ends"] is None


def halves(tmp_path: Path, name: str) -> tuple[Path, Path]:
    """The first and the second 1,000 lines of a loghub log, as GOOD and BAD."""
    from recipes import halves as written

    return written(name, tmp_path / f"{name}-1.log", tmp_path / f"{name}-2.log")


@pytest.mark.usefixtures("engine")
def test_sides_keyed_apart_by_a_timestamp_say_so_and_name_the_option(run_cli, tmp_path):
    """Two halves of a real web-server log, nothing planted, no key options: every line
    of BAD was "new" with no word on why (its timestamp). The first line says how little
    lines up, the field the lines differ in and the option that masks it; with that
    option the halves line up and the line says nothing."""
    good, bad = halves(tmp_path, "Apache")
    done = diff(run_cli, good, bad)
    assert done.returncode == 1, done.stderr
    first = done.stdout.decode().splitlines()[0]
    assert "; only 0.0% of BAD's records have a key GOOD shows: lines of the two " in first
    assert first.endswith("...): --normalize all would line them up")
    answer = json.loads(diff(run_cli, "--format", "json", good, bad).stdout)
    assert answer["lined_up"] < 0.1 and answer["apart"].endswith(
        "--normalize all would line them up"
    )
    masked = json.loads(diff(run_cli, "--normalize", "all", "--format", "json", good, bad).stdout)
    assert masked["lined_up"] > 0.9 and masked["apart"] is None
    assert "only" not in diff(run_cli, "--normalize", "all", good, bad).stdout.decode()


def apart_answer(run_cli, tmp_path, good_text: str, bad_text: str):
    """GOOD and BAD written from ``good_text`` and ``bad_text``, and the JSON answer of
    their diff with no key options."""
    good, bad = tmp_path / "good.log", tmp_path / "bad.log"
    good.write_text(good_text)
    bad.write_text(bad_text)
    return good, bad, json.loads(diff(run_cli, "--format", "json", good, bad).stdout)


def assert_lined_up(run_cli, good, bad, *options: str) -> None:
    """With ``options`` (what the answer named) every line of BAD has a key GOOD shows,
    and nothing changed."""
    masked = diff(run_cli, *options, "--format", "json", good, bad)
    assert json.loads(masked.stdout)["lined_up"] == 1.0 and masked.returncode == 0


@pytest.mark.usefixtures("engine")
def test_a_field_no_class_masks_is_named_with_a_mask_that_lines_the_sides_up(run_cli, tmp_path):
    """Lines that differ in a user's name (no built-in class masks it): the answer names
    a --mask, and that mask given makes the sides line up."""
    good, bad, answer = apart_answer(
        run_cli,
        tmp_path,
        "".join(f"session opened for user {n} by sshd\n" for n in ("ann", "bob")),
        "".join(f"session opened for user {n} by sshd\n" for n in ("cy", "dee", "eve")),
    )
    assert answer["lined_up"] == 0.0
    assert answer["apart"] == (
        'lines of the two differ in one field ("ann", "bob", ...): '
        "--mask '(?<=user )\\S+' would line them up"
    )
    assert_lined_up(run_cli, good, bad, "--mask", "(?<=user )\\S+")


@pytest.mark.usefixtures("engine")
def test_a_path_is_lined_up_by_the_classes_of_a_kind(run_cli, tmp_path):
    """Lines that differ in a path: the classes of a line's kind mask it, and the
    answer names them rather than a --mask."""
    good, bad, answer = apart_answer(
        run_cli,
        tmp_path,
        "".join(f"opened /srv/{n}/data.db for reading\n" for n in ("a", "b")),
        "".join(f"opened /var/{n}.db for reading\n" for n in ("c", "d", "e")),
    )
    assert answer["apart"].endswith("...): --normalize all,path,quoted would line them up")
    assert_lined_up(run_cli, good, bad, "--normalize", "all,path,quoted")


@pytest.mark.usefixtures("engine")
def test_kinds_of_line_with_values_changed_in_two_fields_are_named(run_cli, tmp_path):
    """No line of BAD is a line of GOOD with one field changed, but every one is a kind
    of line GOOD shows (a user and a path changed): the answer says so and names the
    classes of a kind, which line the sides up."""
    line = 'user="{0}" opened /srv/{0}.db\nuser="{0}" closed /srv/{0}.db\n'
    good, bad, answer = apart_answer(
        run_cli,
        tmp_path,
        "".join(line.format(u) for u in ("ann", "bob")),
        "".join(line.format(u) for u in ("cy", "dee")),
    )
    assert answer["lined_up"] == 0.0
    assert answer["apart"] == (
        "100% of the lines of BAD sampled are kinds of line GOOD shows, with other values "
        "in more than one field: --normalize all,path,quoted would line them up"
    )
    assert_lined_up(run_cli, good, bad, "--normalize", "all,path,quoted")


@pytest.mark.usefixtures("engine")
def test_different_logs_are_said_to_be_different(run_cli, tmp_path):
    good, _ = halves(tmp_path, "Apache")
    _, bad = halves(tmp_path, "HDFS")
    first = diff(run_cli, "--normalize", "all", good, bad).stdout.decode().splitlines()[0]
    assert first.endswith(
        "no line of BAD is a line of GOOD with one field changed: the two look like "
        "different logs, or keyed apart in more than one field"
    )


def test_the_field_helper_counts_only_pairs_across_the_sides():
    """Keys of one side that differ among themselves in one field do not explain why
    the sides are apart; with ``sides`` only a pair across them counts."""
    from seqdedup.keys.fields import differing_field

    keys = [b"a 1 x", b"a 2 x", b"a 3 x", b"b q z", b"c q z"]
    assert differing_field(keys).values == (b"1", b"2")  # (three values: the widest)
    across = differing_field(keys, [0, 0, 0, 1, 1])
    assert across is None  # (b/c differ within BAD only; 1/2/3 within GOOD only)
    across = differing_field([*keys, b"a 9 x"], [0, 0, 0, 1, 1, 1])
    assert across is not None and across.values == (b"1", b"2") and across.distinct == 4
    assert across.pattern == r"(?<=a )\S+"
