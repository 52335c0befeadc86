"""End-to-end tests of the installed ``seqdedup`` command in a subprocess."""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys

import pytest

from seqdedup import __version__

from conftest import (
    arrived,
    live,
    new_lines_arrive_at_once,
    pending,
    seqdedup_command,
    settled,
    user_env,
)
from oracle import kept

LOG = b"".join(f"{line}\n".encode() for line in ["start", "a", "b", "c", "x", "a", "b", "c", "end"])


def test_removes_repeated_block_from_stdin(run_cli):
    p = run_cli(["-w", "3", "-q"], LOG)
    assert p.returncode == 0
    assert p.stdout == b"start\na\nb\nc\nx\nend\n"
    assert p.stderr == b""


def test_file_dash_and_stdin_give_the_same_output(run_cli, tmp_path):
    path = tmp_path / "in.log"
    path.write_bytes(LOG)
    for args in (["-w", "3", "-q", str(path)], ["-w", "3", "-q", "-"], ["-w", "3", "-q"]):
        result = run_cli(args, LOG)
        assert (result.returncode, result.stdout) == (0, b"start\na\nb\nc\nx\nend\n"), args


def test_statistics_table_and_json_on_stderr(run_cli):
    p = run_cli(["-w", "3"], LOG)
    assert b"Total lines processed" in p.stderr and b"Redundancy" in p.stderr
    assert b"Metric" not in p.stdout
    p = run_cli(["-w", "3", "--stats-format", "json"], LOG)
    doc = json.loads(p.stderr)
    lines = doc["statistics"]["lines"]
    assert lines == {"total": 9, "emitted": 6, "skipped": 3}


def test_named_file_switches_history_to_unlimited(run_cli, tmp_path):
    path = tmp_path / "in.log"
    block = b"".join(f"r{i}\n".encode() for i in range(5))
    path.write_bytes(block + b"".join(f"f{i}\n".encode() for i in range(100_100)) + block)
    unlimited = run_cli(["-w", "5", "--stats-format", "json", str(path)])
    assert json.loads(unlimited.stderr)["statistics"]["lines"]["skipped"] == 5
    limited = run_cli(["-w", "5", "-m", "100", "--stats-format", "json", str(path)])
    assert json.loads(limited.stderr)["statistics"]["lines"]["skipped"] == 0
    from_stdin = run_cli(["-w", "5", "--stats-format", "json"], path.read_bytes())
    assert json.loads(from_stdin.stderr)["statistics"]["lines"]["skipped"] == 0


def test_custom_delimiter_and_no_trailing_delimiter(run_cli):
    p = run_cli(["-w", "1", "-q", "-d", "\\0"], b"a\0b\0a\0c")
    assert p.stdout == b"a\0b\0c"
    p = run_cli(["-w", "2", "-q", "-d", "::"], b"a::b::a::b::c::")
    assert p.stdout == b"a::b::c::"


def test_byte_mode_with_hex_delimiter(run_cli):
    data = b"\x01\xff\xfe\x02\xff\xfe\x01\xff\xfe\x02\xff\xfe"
    p = run_cli(["-b", "-x", "0xfffe", "-w", "2", "-q"], data)
    assert p.returncode == 0
    assert p.stdout == b"\x01\xff\xfe\x02\xff\xfe"


def test_invalid_utf8_passes_through_unchanged(run_cli):
    data = b"\xff\xfe bad\n\xc3\x28\nok\n\xff\xfe bad\n\xc3\x28\n"
    p = run_cli(["-w", "2", "-q", "-s", "1"], data)
    assert p.returncode == 0
    assert p.stdout == b"\xff\xfe bad\n\xc3\x28\nok\n"


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["-w", "0"], "--window-size"),
        (["-w", "x"], "--window-size"),
        (["-m", "99"], "--max-history"),
        (["-w", "200", "-m", "150"], "--window-size"),
        (["-u", "0"], "--max-unique-sequences"),
        (["-c", "0"], "--max-candidates"),
        (["-s", "-1"], "--skip-chars"),
        (["-m", "1000", "-M"], "--unlimited-history"),
        (["-u", "10", "-U"], "--unlimited-unique-sequences"),
        (["-c", "10", "-C"], "--unlimited-candidates"),
        (["-d", ",", "-b", "-x", "00"], "--delimiter-hex"),
        (["-x", "00"], "--byte-mode"),
        (["-b", "-x", "0g"], "--delimiter-hex"),
        (["--annotation-format", "{start}"], "--annotate"),
        (["-b", "--track", "x"], "--byte-mode"),
        (["-b", "--bypass-file", "f"], "--byte-mode"),
        (["-d", ""], "--delimiter"),
        (["--no-such-option"], "--no-such-option"),
        (["--stats-format", "xml"], "--stats-format"),
    ],
)
def test_argument_errors_exit_1_with_one_line_and_no_stdout(run_cli, args, needle):
    p = run_cli(args, LOG)
    assert p.returncode == 1
    assert p.stdout == b""
    err = p.stderr.decode()
    assert err.count("\n") == 1 and "Traceback" not in err
    assert needle in err


def test_missing_file_and_directory_are_clear_errors(run_cli, tmp_path):
    for target, words in ((tmp_path / "missing.log", "No such file"), (tmp_path, "directory")):
        p = run_cli([str(target)])
        assert p.returncode == 1
        assert p.stdout == b""
        assert words in p.stderr.decode() and str(target) in p.stderr.decode()
        assert p.stderr.decode().count("\n") == 1


@pytest.mark.skipif(os.geteuid() == 0, reason="root can read any file")
def test_unreadable_file(run_cli, tmp_path):
    path = tmp_path / "secret.log"
    path.write_bytes(b"x\n")
    path.chmod(0)
    p = run_cli([str(path)])
    assert p.returncode == 1 and b"Permission denied" in p.stderr


def test_version(run_cli):
    p = run_cli(["--version"])
    assert p.returncode == 0
    assert p.stdout.decode().startswith(f"seqdedup {__version__} (engine: ")
    assert run_cli(["-V"]).stdout == p.stdout


@pytest.mark.parametrize(
    ("args", "data", "expected"),
    [
        (
            ["-w", "2", "--delimiter", "---END---"],
            b"a---END---b---END---a---END---b---END---c",
            b"a---END---b---END---c",
        ),
        (["-w", "2", "-d", "--"], b"x--y--x--y--", b"x--y--"),
        (
            ["-w", "1", "--bypass", "-DEBUG-"],
            b"ok\n-DEBUG- x\nok\n-DEBUG- x\n",
            b"ok\n-DEBUG- x\n-DEBUG- x\n",
        ),
        (["-w", "1", "--bypass", "--"], b"ok\n--\nok\n--\n", b"ok\n--\n--\n"),
        (["-w", "1", "--", "-"], b"a\na\n", b"a\n"),  # after --, '-' is stdin
    ],
)
def test_option_values_may_start_with_a_dash(run_cli, args, data, expected):
    result = run_cli(["-q", *args], data)
    assert (result.returncode, result.stderr) == (0, b"")
    assert result.stdout == expected


def test_every_option_has_a_help_line_and_the_help_ends_with_examples(run_cli):
    from seqdedup.cli.options import build_parser

    text = run_cli(["--help"]).stdout.decode()
    for action in build_parser()._actions:
        assert action.help, f"{action.option_strings or action.dest} has no help line"
    assert text.rstrip().splitlines()[-4] == "examples:"
    assert "--library-dir" in text and "--annotation-format TEMPLATE" in text


def test_dask_command_names_itself_and_offers_only_what_it_takes():
    from pathlib import Path

    script = Path(sys.executable).parent / "seqdedup-dask"
    command = [str(script)] if script.exists() else [sys.executable, "-m", "seqdedup.cli.dask"]
    version = subprocess.run([*command, "-V"], capture_output=True, text=True, env=user_env())
    assert version.stdout.startswith(f"seqdedup-dask {__version__} (engine: ")
    text = subprocess.run([*command, "--help"], capture_output=True, text=True).stdout
    assert "--output-dir" in text
    for refused in ("--hash-transform", "--annotate", "--explain", "--progress", "--max-history"):
        assert refused not in text


def test_matches_oracle_end_to_end(run_cli, tmp_path):
    import random

    rng = random.Random(3)
    records = [rng.choice("abcd") for _ in range(2000)]
    data = "".join(f"{r}\n" for r in records).encode()
    path = tmp_path / "in.txt"
    path.write_bytes(data)
    for window in (1, 2, 3, 5, 12):
        want = "".join(f"{r}\n" for r in kept(records, window)).encode()
        assert run_cli(["-q", "-w", str(window), str(path)]).stdout == want
        want_limited = "".join(f"{r}\n" for r in kept(records, window, 100)).encode()
        assert run_cli(["-q", "-w", str(window), "-m", "100"], data).stdout == want_limited


def _read_line(stream, timeout):
    ready, _, _ = select.select([stream], [], [], timeout)
    return stream.readline() if ready else None


def test_live_stream_gets_records_before_end_of_input():
    """New material never waits: 12 new lines at -w 5 all come out at once while stdin
    stays open; a repeated block waits for its window (it may be skipped) and is decided
    by the next line; a new line after it comes out at once."""
    proc = live("-w", "5", "-q")
    try:
        fd, lines = new_lines_arrive_at_once(proc)
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(b"".join(lines[:3]))  # may start a repeat: it waits
        proc.stdin.flush()
        settled(proc)  # it has read them and waits for more input ...
        assert pending(fd) == b""  # ... and has written none of them
        proc.stdin.write(b"fresh\n")  # new: lines 0-2 cannot be skipped any more
        proc.stdin.flush()
        want = b"".join(lines[:3]) + b"fresh\n"
        assert arrived(fd, len(want)) == want  # before any more input
        proc.stdin.close()
        assert proc.stdout.read() == b""
        assert proc.wait(10) == 0
    finally:
        proc.kill()


def test_closed_output_pipe_ends_quietly(tmp_path):
    path = tmp_path / "big.log"
    path.write_bytes(b"".join(f"unique line {i}\n".encode() for i in range(300_000)))
    cmd = " ".join(seqdedup_command()) + f" -q {path} | head -1"
    p = subprocess.run(
        ["bash", "-o", "pipefail", "-c", cmd], capture_output=True, env=user_env(), timeout=60
    )
    assert p.stdout == b"unique line 0\n"
    assert p.stderr == b""
    assert p.returncode == 0


def _default_sigint():
    """The child starts with Ctrl-C's default action, whatever the parent ignores
    (a shell running tests in the background ignores SIGINT, and children inherit it)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_ctrl_c_exits_130_without_traceback():
    proc = subprocess.Popen(
        [*seqdedup_command(), "-q", "-w", "1"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=user_env(),
        preexec_fn=_default_sigint,
    )
    try:
        assert proc.stdin is not None
        proc.stdin.write(b"a\nb\n")
        proc.stdin.flush()
        assert _read_line(proc.stdout, 30) == b"a\n"  # started, and now waits for input
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=10)
        assert proc.returncode == 130
        assert b"Traceback" not in err
    finally:
        proc.kill()


def test_filters_from_command_line_and_file_in_order(run_cli, tmp_path):
    patterns = tmp_path / "bypass.txt"
    patterns.write_text("# timestamps\n^ts\n")
    data = b"E1\nts a\nE2\nI\nE1\nts b\nE2\n"
    p = run_cli(["-w", "2", "-q", "--bypass-file", str(patterns), "--track", "^E"], data)
    assert p.stdout == b"E1\nts a\nE2\nI\nts b\n"
    p = run_cli(["-w", "2", "-q", "--track", "^E", "--explain"], data)
    assert p.stderr.decode().splitlines() == [
        "EXPLAIN: Line 2 passed through (no track pattern matched)",
        "EXPLAIN: Line 4 passed through (no track pattern matched)",
        "EXPLAIN: Line 6 passed through (no track pattern matched)",
        "EXPLAIN: Lines 5-7 skipped (duplicate of lines 1-3, seen 2x)",
    ]


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--track", "("], "--track: invalid regex '('"),
        (["--bypass-file", "/nonexistent/p.txt"], "/nonexistent/p.txt"),
    ],
)
def test_filter_errors(run_cli, args, needle):
    p = run_cli(args, LOG)
    assert p.returncode == 1 and p.stdout == b""
    assert needle in p.stderr.decode() and p.stderr.decode().count("\n") == 1


def test_bad_regex_in_pattern_file_names_file_and_line(run_cli, tmp_path):
    patterns = tmp_path / "track.txt"
    patterns.write_text("^ok\n[unclosed\n")
    p = run_cli(["--track-file", str(patterns)], LOG)
    assert p.returncode == 1 and p.stdout == b""
    assert f"{patterns} line 2" in p.stderr.decode()


def test_hash_transform_runs_once_per_batch(run_cli, tmp_path):
    calls = tmp_path / "calls"
    records = [f"2026-11-22 10:{i % 60:02d} event {i % 7}" for i in range(2000)]
    data = "".join(r + "\n" for r in records).encode()
    command = f"echo x >> {calls}; cut -c18-"
    p = run_cli(["-w", "3", "-q", "-t", command], data)
    assert p.returncode == 0
    launches = len(calls.read_text().splitlines())
    assert launches < 20  # 8 per-record checks + 1 batch check + one per chunk read
    expected = records[:7]  # keys repeat with period 7: everything after is a repeat
    assert p.stdout.decode().splitlines() == expected


def test_hash_transform_failure_is_exit_1_with_stderr(run_cli):
    p = run_cli(["-q", "-t", "echo broken >&2; exit 4"], b"a\nb\n")
    assert p.returncode == 1
    assert "broken" in p.stderr.decode() and "exit status 4" in p.stderr.decode()
    assert "Traceback" not in p.stderr.decode()


def _run_with_stderr_on_pty(args, stdout):
    import pty

    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [*seqdedup_command(), *args],
        stdin=subprocess.DEVNULL,
        stdout=stdout,
        stderr=slave,
        env=user_env(),
    )
    os.close(slave)
    seen = b""
    while True:
        ready, _, _ = select.select([master], [], [], 30)
        if not ready:
            break
        try:
            data = os.read(master, 65536)
        except OSError:  # the pty closes when the process exits
            break
        if not data:
            break
        seen += data
    os.close(master)
    assert proc.wait(30) == 0
    return seen


@pytest.fixture(scope="module")
def big_log(tmp_path_factory):
    path = tmp_path_factory.mktemp("progress") / "big.log"
    path.write_bytes(b"".join(b"line %d\n" % (i % 5000) for i in range(400_000)))
    return path


def test_progress_shows_on_a_terminal_and_never_in_stdout(big_log, tmp_path):
    out_path = tmp_path / "out.txt"
    with out_path.open("wb") as out:
        seen = _run_with_stderr_on_pty(["-p", "-w", "3", str(big_log)], out)
    assert b"records" in seen and b"redundancy" in seen and b"%" in seen
    assert b"Total lines processed" in seen  # the statistics still follow
    assert b"records" not in out_path.read_bytes()
    assert out_path.read_bytes().count(b"\n") == 5000


def test_progress_is_off_when_stdout_is_a_pipe(big_log):
    seen = _run_with_stderr_on_pty(["-p", "-w", "3", "-q", str(big_log)], subprocess.PIPE)
    assert b"records" not in seen


def test_progress_is_off_when_stderr_is_not_a_terminal(run_cli, big_log):
    p = run_cli(["-p", "-w", "3", "-q", str(big_log)])
    assert p.returncode == 0 and p.stderr == b""


@pytest.mark.parametrize(
    ("template", "needle"),
    [
        ("{nope}", "unknown placeholder '{nope}'"),
        ("{start", "malformed"),
        ("{start:q}", "malformed"),
        ("{0}", "unknown placeholder"),
        ("{start:c}", "cannot write every record number"),
        ("{count:c}", "cannot write every record number"),
    ],
)
def test_annotation_template_errors_before_any_output(run_cli, template, needle):
    p = run_cli(["-a", "--annotation-format", template], LOG)
    assert p.returncode == 1 and p.stdout == b""
    assert needle in p.stderr.decode() and p.stderr.decode().count("\n") == 1


def test_annotate_inverse_and_explain_end_to_end(run_cli):
    data = b"a\nb\nx\na\nb\ny\na\nb"
    p = run_cli(["-w", "2", "-q", "-a"], data)
    assert p.stdout == (
        b"a\nb\nx\n[DUPLICATE: Lines 4-5 matched lines 1-2 (sequence seen 2 times)]\n"
        b"y\n[DUPLICATE: Lines 7-8 matched lines 1-2 (sequence seen 3 times)]\n"
    )
    p = run_cli(["-w", "2", "-q", "-i"], data)
    assert p.stdout == b"a\nb\na\nb"  # the final record keeps its missing delimiter
    p = run_cli(["-w", "2", "-q", "-e"], data)
    assert p.stdout == b"a\nb\nx\ny\n"
    assert p.stderr.decode().splitlines() == [
        "EXPLAIN: Lines 4-5 skipped (duplicate of lines 1-2, seen 2x)",
        "EXPLAIN: Lines 7-8 skipped (duplicate of lines 1-2, seen 3x)",
    ]


@pytest.mark.parametrize("option", ["-w", "-m", "-u", "-c", "-s"])
def test_values_beyond_64_bits_are_a_clear_error(run_cli, tmp_path, option):
    source = tmp_path / "t.txt"
    source.write_bytes(b"a\nb\n")
    p = run_cli([option, "99999999999999999999", str(source)])
    assert p.returncode == 1 and p.stdout == b""
    assert b"Traceback" not in p.stderr and b"at most" in p.stderr


PEAK_OF = (
    "import resource, subprocess, sys;"
    "done = subprocess.run(sys.argv[1:], capture_output=True);"
    "sys.stdout.buffer.write(done.stdout);"
    "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=sys.stderr)"
)


@pytest.mark.parametrize("engine", ["c", "python"])
def test_a_window_far_larger_than_the_input_allocates_nothing_for_it(tmp_path, engine):
    source = tmp_path / "t.txt"
    source.write_bytes(b"a\nb\na\nb\n")
    env = {**user_env(), "SEQDEDUP_ENGINE": engine}
    command = [*seqdedup_command(), "-q", "-w", str(2**63 - 1), str(source)]
    p = subprocess.run(
        [sys.executable, "-c", PEAK_OF, *command], capture_output=True, env=env, timeout=60
    )
    assert p.stdout == b"a\nb\na\nb\n", p.stderr
    assert int(p.stderr.split()[-1]) < 100_000  # KB: nothing in proportion to W


def test_a_read_error_names_the_file(run_cli):
    p = run_cli(["-q", "/proc/self/mem"])  # reading it from offset 0 is an I/O error
    assert p.returncode == 1 and p.stdout == b""
    assert p.stderr.decode().strip() == "seqdedup: cannot read '/proc/self/mem': Input/output error"


def test_a_window_above_the_default_history_says_where_the_history_comes_from(run_cli):
    p = run_cli(["-q", "-w", "1000000"], b"a\n")
    assert p.returncode == 1 and p.stdout == b""
    message = p.stderr.decode()
    assert "default history" in message and "--max-history" in message
    assert run_cli(["-q", "-w", "1000000", "-M"], b"a\n").stdout == b"a\n"


@pytest.mark.parametrize(
    "template", ["", "{start:>99999999999}", "{start:>{end}}", "{count:.5000f}"]
)
def test_annotation_templates_that_cannot_make_a_marker_line(run_cli, template):
    p = run_cli(["-q", "-w", "2", "--annotate", "--annotation-format", template], b"a\nb\na\nb\n")
    assert p.returncode == 1 and p.stdout == b""
    assert b"--annotation-format" in p.stderr and b"Traceback" not in p.stderr
    assert p.stderr.count(b"\n") == 1


def test_annotation_field_widths_up_to_the_limit_work(run_cli):
    p = run_cli(
        ["-q", "-w", "2", "--annotate", "--annotation-format", "[{start:>8}]"], b"a\nb\na\nb\n"
    )
    assert p.stdout == b"a\nb\n[       3]\n"


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
@pytest.mark.parametrize("library", [False, True])
def test_a_full_disk_is_one_line_and_saves_nothing(tmp_path, library):
    source = tmp_path / "t.txt"
    source.write_bytes(b"".join(b"%d\n" % (i % 50) for i in range(300)))
    extra = ["-l", str(tmp_path / "L")] if library else []
    with open("/dev/full", "wb") as full:
        p = subprocess.run(
            [*seqdedup_command(), "-q", "-w", "2", *extra, str(source)],
            stdout=full,
            stderr=subprocess.PIPE,
            env=user_env(),
            timeout=60,
        )
    assert p.returncode == 1
    assert p.stderr == b"seqdedup: cannot write output: No space left on device\n"
    if library:
        assert list((tmp_path / "L").iterdir()) == []  # no save, no staging left


def run_in_shell(command_tail, input_bytes=b""):
    """Run seqdedup through sh, which can start it with standard streams closed."""
    import shlex

    command = " ".join(shlex.quote(part) for part in seqdedup_command())
    return subprocess.run(
        ["sh", "-c", f"exec {command} {command_tail}"],
        input=input_bytes,
        capture_output=True,
        env=user_env(),
        timeout=60,
    )


def test_closed_standard_streams(tmp_path):
    source = tmp_path / "t.txt"
    source.write_bytes(b"a\nb\na\nb\nc\n")
    # stderr closed: the records only, never the statistics, in the output
    p = run_in_shell(f"-w 2 {source} 2>&-")
    assert (p.returncode, p.stdout) == (0, b"a\nb\nc\n")
    # stdout closed: nowhere to write, said on stderr
    p = run_in_shell(f"-w 2 {source} >&-")
    assert p.returncode == 1
    assert p.stderr == b"seqdedup: standard output is closed: nowhere to write the records\n"
    # stdin closed and no file named
    p = run_in_shell("-w 2 <&-")
    assert p.returncode == 1
    assert p.stderr == b"seqdedup: standard input is closed: name an input file\n"


@pytest.mark.parametrize("engine", ["c", "python"])
@pytest.mark.parametrize(
    ("args", "data", "expected"),
    [
        (
            ["-d", ",", "-w", "10"],
            b"A,B,C,D,E,F,G,H,I,J,A,B,C,D,E,F,G,H,I,J\n",
            b"A,B,C,D,E,F,G,H,I,J,",
        ),
        (["-d", ",", "-w", "1"], b"A,B,A\n", b"A,B,"),
        (["-d", ",", "-w", "1"], b"A,B,A\r\n", b"A,B,"),
        (["-d", ",", "-w", "1"], b"A,B,C\n", b"A,B,C\n"),  # written back as read
        (["-d", ",", "-w", "1", "--bypass", "^Z"], b"A,B,A\n", b"A,B,"),  # record path
        (["-b", "-d", ",", "-w", "1"], b"A,A\n", b"A,A\n"),  # bytes: the newline is data
        (["-w", "1"], b"A\nA", b"A\n"),  # newline-delimited: unchanged
    ],
)
def test_a_final_newline_ends_the_last_record_with_another_delimiter(
    run_cli, engine, args, data, expected
):
    env = {**user_env(), "SEQDEDUP_ENGINE": engine}
    result = run_cli(["-q", *args], data, env=env)
    assert (result.returncode, result.stderr) == (0, b"")
    assert result.stdout == expected


def test_top_alone_with_quiet_and_in_the_json_document(run_cli):
    block = b"".join(b"trace line %d\n" % i for i in range(4))
    data = b"start\n" + block + b"a\n" + block + b"b\n" + block + b"c\nx\nc\nx\nend\n"
    quiet = run_cli(["-q", "-w", "2", "--top", "5"], data)
    assert quiet.returncode == 0
    text = quiet.stderr.decode()
    assert "Top repeated sequences" in text and "Deduplication statistics" not in text
    assert "trace line 0" in text and "lines 2-5" in text
    full = run_cli(["-w", "2", "--top", "1", "--stats-format", "json"], data)
    document = json.loads(full.stderr)
    (row,) = document["top_sequences"]
    assert row == {
        "removed": 8,
        "seen": 3,
        "length": 4,
        "first_seen": {"lines": [2, 5]},
        "first_record": "trace line 0",
    }
    assert run_cli(["-q", "--top", "-1"], data).returncode == 1


def test_top_names_a_one_record_sequence_by_its_line(run_cli):
    """A sequence of one record was first seen at "lines 1-1"; now "line 1"."""
    text = run_cli(["-q", "-w", "1", "--top", "3"], b"a\nb\na\nc\na\n").stderr.decode()
    assert "line 1 " in text and "lines 1-1" not in text


def test_top_table_shortens_only_the_first_record_and_only_for_a_terminal(run_cli):
    """Piped (or in a file), the first record is whole; on a terminal of 80 columns it
    is the cell that is shortened, the counts never."""
    import io

    from rich.console import Console

    from seqdedup.run.top import _top_table

    block = b"".join(b"%d " % i + b"y" * 300 + b"\n" for i in range(3))
    data = b"start\n" + block + b"a\n" + block + b"end\n"
    text = run_cli(["-q", "-w", "2", "--top", "3"], data).stderr.decode()
    row = next(line for line in text.splitlines() if "lines 2-4" in line)
    assert "0 " + "y" * 300 in row and "…" not in text  # (a pipe: the whole record)
    assert [cell.strip() for cell in row.split("│")[1:4]] == ["3", "2", "3"]
    rows = json.loads(
        run_cli(["-q", "-w", "2", "--top", "3", "--stats-format", "json"], data).stderr
    )
    terminal = io.StringIO()
    Console(file=terminal, width=80).print(_top_table(rows["top_sequences"], 80))
    shown = terminal.getvalue()
    assert "…" in shown and max(len(line) for line in shown.splitlines()) <= 80
    row = next(line for line in shown.splitlines() if "lines 2-4" in line)
    assert [cell.strip() for cell in row.split("│")[1:4]] == ["3", "2", "3"]


@pytest.mark.parametrize("engine", ["c", "python"])
def test_top_is_the_same_on_the_chunk_path_and_the_record_path(run_cli, engine):
    """--bypass sends records one by one (the record path); without it, --annotate too,
    the kernel's chunk path runs."""
    import random

    rng = random.Random(7)
    data = b"".join(b"%s\n" % rng.choice([b"a", b"b", b"c", b"d"]) for _ in range(3000))
    env = {**user_env(), "SEQDEDUP_ENGINE": engine}
    reports = []
    for extra in ([], ["--annotate"], ["--bypass", "^zzz"]):
        args = ["-w", "3", "--top", "25", "--stats-format", "json", *extra]
        result = run_cli(args, data, env=env)
        assert result.returncode == 0, result.stderr
        reports.append(json.loads(result.stderr)["top_sequences"])
    assert reports[0] == reports[1] == reports[2]
    assert any(row["first_record"] is None for row in reports[0])  # pieces inside runs
    assert any(row["first_record"] in ("a", "b", "c", "d") for row in reports[0])


@pytest.mark.parametrize("engine", ["c", "python"])
def test_top_names_every_rows_first_record_on_a_named_file(run_cli, engine, tmp_path):
    """The same input as a named file: a sequence first removed inside a longer run has
    no run of its own to take a first record from; it is read from the file where the
    sequence was first seen, so every row has one (standard input cannot be read again:
    above). Several inputs: each row's from its own."""
    import random

    rng = random.Random(7)
    data = b"".join(
        b"%s %d\n" % (rng.choice([b"a", b"b", b"c", b"d"]), rng.randrange(3)) for _ in range(3000)
    )
    first, second = tmp_path / "one.log", tmp_path / "two.log"
    first.write_bytes(data)
    second.write_bytes(data[::-1][1:] + b"\n")
    env = {**user_env(), "SEQDEDUP_ENGINE": engine}
    for names in ([first], [first, second]):
        args = ["-q", "-w", "3", "--top", "25", "--stats-format", "json", *map(str, names)]
        rows = json.loads(run_cli(args, b"", env=env).stderr)["top_sequences"]
        assert rows and all(row["first_record"] is not None for row in rows)
        for row in rows:
            seen = row["first_seen"]
            path = tmp_path / seen.get("file", str(first)).rsplit("/", 1)[-1]
            line = path.read_bytes().split(b"\n")[seen["lines"][0] - 1]
            assert row["first_record"] == line.decode()


@pytest.mark.parametrize("engine", ["c", "python"])
@pytest.mark.parametrize("extra", [[], ["--bypass", "^zzz"], ["--fold"]])
def test_top_shows_a_runs_first_record_that_is_not_blank(run_cli, engine, extra):
    """A repeated block that begins with an empty line: --top shows its first record
    with something in it, the same on the kernel's chunk path (first records, or whole
    runs with --fold), the record path and the Python engine."""
    block = b'\n  \nTraceback (most recent call last):\n  File "x"\nValueError: bad\n'
    data = block + b"ok 1\n" + block + b"ok 2\n"
    env = {**user_env(), "SEQDEDUP_ENGINE": engine}
    done = run_cli(["-q", "-w", "3", "--top", "3", "--stats-format", "json", *extra], data, env=env)
    [row] = json.loads(done.stderr)["top_sequences"]
    assert row["first_record"] == "Traceback (most recent call last):"
