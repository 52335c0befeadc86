"""Faults a user or an adversary can cause: nothing is lost, nothing is wrong, nothing
crashes. Each test runs the installed command as a user does (no PYTHONUNBUFFERED)."""

from __future__ import annotations

import contextlib
import fcntl
import io
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import termios
from functools import partial
from pathlib import Path

import pytest

from conftest import (
    ENGINES,
    HANG_GUARD,
    arrived,
    children,
    seqdedup_command,
    session_processes,
    user_env,
    wait_until,
)
from oracle import kept

SEQDEDUP = " ".join(shlex.quote(part) for part in seqdedup_command())


@pytest.fixture(scope="module")
def repeats_log(tmp_path_factory):
    """A log with many short repeats: many explanations, a few MB of output."""
    path = tmp_path_factory.mktemp("faults") / "repeats.log"
    lines = (b"line %d of the log\n" % (i * 7919 % 150001) for i in range(200_000))
    path.write_bytes(b"".join(lines))
    return path


def first_copies(path):
    """What -w 1 keeps on a named file: each record's first copy (awk '!seen[$0]++');
    the oracle agrees (test below) and is too slow for 200,000 lines."""
    records = path.read_bytes().split(b"\n")[:-1]
    return b"".join(r + b"\n" for r in dict.fromkeys(records))


def test_first_copies_is_the_oracle_at_window_1(tmp_path):
    path = tmp_path / "small.log"
    path.write_bytes(b"".join(b"%d\n" % (i * 7 % 13) for i in range(300)))
    records = path.read_bytes().split(b"\n")[:-1]
    assert first_copies(path) == b"".join(r + b"\n" for r in kept(records, 1))


def engine_env(engine):
    return dict(user_env(), SEQDEDUP_ENGINE=engine)


@pytest.mark.slow
@pytest.mark.one_engine  # (the writing of output and messages: the same under both engines)
@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("library", [False, True])
def test_a_closed_stderr_loses_no_record(tmp_path, repeats_log, engine, library):
    out = tmp_path / "out"
    extra = f"-l {tmp_path / 'L'}" if library else ""
    command = f"{SEQDEDUP} -w 1 -e {extra} {repeats_log} 2>&1 >{out} | head -1"
    p = subprocess.run(
        ["bash", "-c", command + "; echo ${PIPESTATUS[0]} >&2"],
        capture_output=True,
        env=engine_env(engine),
        timeout=120,
    )
    # (what went wrong, if it does: it failed once in a loaded run, cause not found)
    assert p.stdout.startswith(b"EXPLAIN: "), (p.stdout[:300], p.stderr[-300:])
    assert p.stderr == b"0\n"
    assert out.read_bytes() == first_copies(repeats_log)
    if library:  # the run completed, so it saved: a second run over it drops everything
        again = subprocess.run(
            [*seqdedup_command(), "-q", "-w", "1", "-r", str(tmp_path / "L"), str(repeats_log)],
            capture_output=True,
            env=engine_env(engine),
            timeout=120,
        )
        assert (again.returncode, again.stdout) == (0, b"")


def _nonblocking_pipe():
    read_end, write_end = os.pipe()
    flags = fcntl.fcntl(write_end, fcntl.F_GETFL)
    fcntl.fcntl(write_end, fcntl.F_SETFL, flags | os.O_NONBLOCK)
    return read_end, write_end


@pytest.mark.slow
@pytest.mark.one_engine  # (the writing of output: the same under both engines)
@pytest.mark.parametrize("engine", ENGINES)
def test_a_non_blocking_stdout_gets_every_byte(tmp_path, repeats_log, engine):
    read_end, write_end = _nonblocking_pipe()
    library = tmp_path / "L"
    proc = subprocess.Popen(
        [*seqdedup_command(), "-q", "-w", "1", "-l", str(library), str(repeats_log)],
        stdout=write_end,
        stderr=subprocess.PIPE,
        env=engine_env(engine),
    )
    os.close(write_end)
    # let the pipe fill while nobody reads (an event: as many bytes held as it holds)
    wait_until(partial(_pipe_full, read_end, proc), "the pipe to fill")
    received = bytearray()
    with os.fdopen(read_end, "rb") as reader:
        while chunk := reader.read(1 << 16):
            received += chunk
    _, err = proc.communicate(timeout=120)
    assert (proc.returncode, err) == (0, b"")
    assert bytes(received) == first_copies(repeats_log)
    assert len(received) > 1 << 20  # far more than a pipe holds


@pytest.mark.slow
def test_a_non_blocking_stdin_is_waited_on_not_polled(tmp_path):
    """A parent that set O_NONBLOCK on our stdin: the run waits for input without
    spinning. Counted, not timed: once it has taken the first lines and waits, its
    read calls and context switches stay put while the input is idle (a loop that
    polled would make thousands of each in the pause)."""
    read_end, write_end = os.pipe()
    flags = fcntl.fcntl(read_end, fcntl.F_GETFL)
    fcntl.fcntl(read_end, fcntl.F_SETFL, flags | os.O_NONBLOCK)
    proc = subprocess.Popen(
        [*seqdedup_command(), "-q", "-w", "1"],
        stdin=read_end,
        stdout=subprocess.PIPE,
        env=user_env(),
    )
    os.close(read_end)
    import time

    os.write(write_end, b"a\nb\na\n")
    assert proc.stdout is not None
    assert arrived(proc.stdout.fileno(), 4) == b"a\nb\n"  # it has read them
    before = work_done(proc.pid)
    time.sleep(0.5)  # idle input (a pause, not a measurement)
    after = work_done(proc.pid)
    os.write(write_end, b"c\n")
    os.close(write_end)
    out, _ = proc.communicate(timeout=HANG_GUARD)
    assert (proc.returncode, out) == (0, b"c\n")
    assert after[0] - before[0] <= 2, (before, after)  # read calls: none, or one woken
    assert after[1] - before[1] <= 20, (before, after)  # context switches


def _pipe_full(fd: int, proc: subprocess.Popen[bytes]) -> bool:
    """Whether the pipe read at ``fd`` holds all it can (or its writer ended)."""
    held = bytearray(4)
    fcntl.ioctl(fd, termios.FIONREAD, held)
    capacity = fcntl.fcntl(fd, 1032)  # F_GETPIPE_SZ
    return int.from_bytes(held, sys.byteorder) >= capacity or proc.poll() is not None


def work_done(pid: int) -> tuple[int, int]:
    """A process's read calls so far and its context switches (all its threads)."""
    from pathlib import Path

    io_fields = dict(line.split(": ") for line in Path(f"/proc/{pid}/io").read_text().splitlines())
    switches = 0
    for status in Path(f"/proc/{pid}/task").glob("*/status"):
        for line in status.read_text().splitlines():
            if line.startswith(("voluntary_ctxt_switches", "nonvoluntary_ctxt_switches")):
                switches += int(line.split()[1])
    return int(io_fields["syscr"]), switches


if sys.platform != "linux":  # pragma: no cover
    pytestmark = pytest.mark.skip(reason="pipes with O_NONBLOCK, /proc")


@pytest.mark.slow
@pytest.mark.one_engine  # (the library's staging: the same under both engines)
@pytest.mark.parametrize("engine", ENGINES)
def test_a_failure_while_staging_costs_no_output(tmp_path, engine):
    """``ulimit -f`` stops the staging file half-way: the whole output is still written,
    then exit 1 with one line, and the library is as it was (here: empty)."""
    source = tmp_path / "big.txt"
    source.write_bytes(b"".join(b"new line %d\n" % i for i in range(200_000)))  # 3.2 MB
    library = tmp_path / "L"
    command = f"ulimit -f 1000; exec {SEQDEDUP} -q -w 3 -l {library} {source}"
    p = subprocess.run(
        ["bash", "-c", command], capture_output=True, env=engine_env(engine), timeout=120
    )
    assert p.stdout == source.read_bytes()
    assert p.returncode == 1
    assert p.stderr.count(b"\n") == 1
    assert p.stderr.startswith(b"seqdedup: library '")
    assert b"cannot stage this run's sequences" in p.stderr
    assert list(library.iterdir()) == []


SIGNAL_AT_COMMIT = """
import os, signal, sys
from seqdedup import api
from seqdedup.cli import seqdedup as cli
from seqdedup.library import save as library
where = sys.argv.pop(1)
signum = getattr(signal, sys.argv.pop(1))
if where == "after":  # the signal arrives the moment the library has committed
    committed = api.settle
    def settle():
        committed()
        os.kill(os.getpid(), signum)
    api.settle = settle
else:  # ... or just before the commit (a new library's, or the merge into one)
    publish, begin = library.publish_fresh, library.add_last_run
    def publish_fresh(*args):
        os.kill(os.getpid(), signum)
        return publish(*args)
    def add_last_run(connection):
        os.kill(os.getpid(), signum)
        begin(connection)
    library.publish_fresh, library.add_last_run = publish_fresh, add_last_run
sys.argv[0] = "seqdedup"
cli.entry_point()
"""


def runs_saved(library):
    import sqlite3

    path = library / "seqdedup.sqlite"
    if not path.exists():
        return 0
    with contextlib.closing(sqlite3.connect(path)) as connection:
        return connection.execute("SELECT COUNT(*) FROM runs").fetchone()[0]


@pytest.mark.parametrize(
    ("signame", "existing"),
    [("SIGTERM", False), ("SIGHUP", False), ("SIGINT", False), ("SIGTERM", True)],
)
@pytest.mark.parametrize("where", ["before", "after"])
def test_a_signal_at_the_commit_lets_the_save_finish_and_says_so(
    tmp_path, signame, existing, where
):
    """The input was read to its end: a first signal during the save (just before the
    commit, or the moment after; the library new, or one merged into) lets the run
    finish; the status is 128 + N and its one line says that the library is saved."""
    source = tmp_path / "in.log"
    source.write_bytes(b"a\nb\na\nb\nc\n")
    library = tmp_path / "L"
    if existing:
        other = tmp_path / "other.log"
        other.write_bytes(b"x\ny\n")
        subprocess.run([*seqdedup_command(), "-q", "-l", str(library), str(other)], check=True)
    p = subprocess.run(
        [
            sys.executable,
            "-c",
            SIGNAL_AT_COMMIT,
            where,
            signame,
            "-q",
            "-w",
            "2",
            "-l",
            str(library),
            str(source),
        ],
        capture_output=True,
        env=user_env(),
        timeout=60,
    )
    assert p.stdout == b"a\nb\nc\n"
    assert runs_saved(library) == 1 + existing
    assert p.returncode == 128 + getattr(signal, signame)
    line = f"seqdedup: stopped by {signame}: the input was read to its end; the library is saved"
    assert p.stderr == f"{line}\n".encode()


@pytest.mark.parametrize("engine", ENGINES)
def test_json_ids_past_64_bits_stay_distinct(run_cli, engine):
    ids = (18446744073709551617, 18446744073709551618, 18446744073709551617)
    data = b"".join(b'{"id": %d}\n' % i for i in ids)
    p = run_cli(["-q", "-w", "1", "--json-key", "id"], data, env=engine_env(engine))
    assert (p.returncode, p.stdout) == (0, b"".join(data.splitlines(keepends=True)[:2]))
    deep = b'{"a": ' * 300 + b"1" + b"}" * 300 + b"\n"
    p = run_cli(["-q", "-w", "1", "--json-ignore", "b"], deep + deep, env=engine_env(engine))
    warning = b"seqdedup: warning: --json-ignore 'b' matched no field of the first 2 records\n"
    assert (p.returncode, p.stdout, p.stderr) == (0, deep, warning)  # (no "b" in them)


def test_top_shows_records_as_text_never_as_markup(run_cli):
    records = [
        b"[main] worker",
        b"arr[i] = x[/i] :smile:",
        b"[ERROR] [/var/log] x",
        b"\x1b[31mred\x1b[0m",
        b"end",
    ]
    for first in records[:4]:  # each one first in its repeated block, so the table shows it
        block = [first, *(r for r in records if r != first)]
        data = b"".join(r + b"\n" for r in block * 2)
        for fmt in ("table", "json"):
            p = run_cli(["-q", "-w", "2", "--top", "3", "--stats-format", fmt], data)
            assert (p.returncode, p.stdout) == (0, data[: len(data) // 2])
            err = p.stderr.decode()
            assert "Traceback" not in err and "\x1b" not in err and "😄" not in err
            if fmt == "table":
                shown = first.decode().replace("\x1b", "\\x1b")
                assert shown[:12] in err  # the table shortens long records


@pytest.mark.slow
@pytest.mark.parametrize("engine", ENGINES)
def test_a_record_larger_than_memory_is_one_line_after_the_output(engine):
    """2 GB without a delimiter under a 700 MB address-space limit."""
    command = (
        f"ulimit -v 700000; (printf 'a\\nb\\n'; head -c 2000000000 /dev/zero) | {SEQDEDUP} -w 1 -q"
    )
    p = subprocess.run(
        ["bash", "-c", command], capture_output=True, env=engine_env(engine), timeout=120
    )
    assert (p.returncode, p.stdout) == (1, b"a\nb\n")
    assert p.stderr.count(b"\n") == 1 and b"Traceback" not in p.stderr
    assert p.stderr.startswith(b"seqdedup: a record is larger than the memory available: ")
    assert p.stderr.endswith(
        b"read without a delimiter; 2 records written before it (is the delimiter right?)\n"
    )


# -- one line, never a traceback ---------------------------------------------------------
def _script(name):
    from pathlib import Path

    return str(Path(sys.executable).parent / name)


def saved_library(tmp_path):
    library = tmp_path / "L"
    subprocess.run(
        [*seqdedup_command(), "-q", "-w", "1", "-l", str(library)],
        input=b"a\na\n",
        check=True,
        capture_output=True,
        env=user_env(),
    )
    return library


@pytest.mark.parametrize("days", ["inf", "1e400", "1e12"])
def test_prune_with_more_days_than_a_date_holds_prunes_nothing(tmp_path, days):
    library = saved_library(tmp_path)
    p = subprocess.run(
        [_script("seqdedup-library"), "prune", str(library), "--unseen-days", days],
        capture_output=True,
        env=user_env(),
    )
    assert (p.returncode, p.stderr) == (0, b"")
    assert p.stdout.startswith(b"deleted 0 sequences")


def test_library_info_into_a_closed_pipe_is_quiet(tmp_path):
    library = saved_library(tmp_path)
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader is gone before anything is written (| head, done)
    p = subprocess.run(
        [_script("seqdedup-library"), "info", str(library)],
        stdout=write_end,
        stderr=subprocess.PIPE,
        env=user_env(),
    )
    os.close(write_end)
    assert (p.returncode, p.stderr) == (0, b"")


@pytest.mark.parametrize("address", ["bogus", "tcp://host", "foo://host:1"])
def test_dask_scheduler_that_is_no_address_is_one_line(tmp_path, address):
    """(Its ``main`` in this process: Dask imported once for the three.)"""
    pytest.importorskip("distributed")
    from seqdedup.cli.dask import main

    source = tmp_path / "a.log"
    source.write_bytes(b"a\nb\n")
    err = io.StringIO()
    args = ["--output-dir", str(tmp_path / "out"), "--scheduler", address, str(source)]
    assert main(args, stderr=err) == 1
    assert err.getvalue().count("\n") == 1
    assert err.getvalue().startswith(f"seqdedup-dask: --scheduler '{address}' is not a")


def _dask_job(tmp_path, *args, lines=6_000_000):
    """seqdedup-dask on a local cluster, in a session of its own, with Ctrl-C as a
    terminal gives it; a large input with a filter (classified record by record in
    Python: the job lasts long enough to be interrupted)."""
    source = tmp_path / "big.log"
    if not source.exists():
        cycle = b"".join(b"line %d\n" % i for i in range(50_000))  # (the same bytes
        source.write_bytes(cycle * (lines // 50_000))  # as line i % 50,000, made at once)
    command = [_script("seqdedup-dask"), "-q", "--scheduler", "local", *args]
    return subprocess.Popen(
        [*command, "--output-dir", str(tmp_path / "out"), str(source)],
        stderr=subprocess.PIPE,
        env=user_env(),
        start_new_session=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )


def _alive(session: int) -> list[str]:
    """The processes of a session that have not ended (zombies have)."""
    return [p for p in session_processes(session) if not p.endswith(" Z")]


def _wait_for(condition, proc):
    """Until ``condition()`` holds, the job still running (an event)."""

    def came() -> bool:
        assert proc.poll() is None, "the job ended before the event"
        return bool(condition())

    wait_until(came)


@pytest.mark.slow
@pytest.mark.parametrize("when", ["starting", "running"])
def test_ctrl_c_of_the_dask_command_is_quiet_and_leaves_nothing(tmp_path, when):
    """Ctrl-C reaches the whole process group (the workers too): exit 130 before the job
    is done, no traceback, and no process of the job's session is left. "starting":
    when the cluster's first process has appeared (the cluster is still starting: that
    Ctrl-C is held until it has, then ends the job); "running": when its workers are
    all there, started without the MALLOC_TRIM_THRESHOLD_=65536 Dask's nanny gives
    them (it made every pass about 1.6x slower)."""
    proc = _dask_job(tmp_path, "--bypass", "^zzz")
    try:
        wanted = 1 if when == "starting" else 3  # (the resource tracker and two workers)
        _wait_for(lambda: len(children(proc.pid)) >= wanted, proc)
        if when == "running":
            environments = [Path(f"/proc/{pid}/environ").read_bytes() for pid in children(proc.pid)]
            assert not [env for env in environments if b"MALLOC_TRIM_THRESHOLD_=" in env]
        os.killpg(proc.pid, signal.SIGINT)
        _, err = proc.communicate(timeout=HANG_GUARD)  # (a guard: the test waits on the end)
        # Every process of the group took the Ctrl-C and ends on its own, before the
        # cleanup below could kill one: one may end just after the command (a zombie
        # then, its exit for init to collect: seen once in five runs); none may stay
        # alive (the hang guard fails the test if one does).
        wait_until(lambda: not _alive(proc.pid), "every process of the job's session to end")
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 130, err.decode()[-2000:]
    # The job was stopped, not finished: a finished one writes the input's 50,000
    # distinct lines (counted work, not a duration).
    written = tmp_path / "out" / "big.log"
    assert not written.exists() or written.read_bytes().count(b"\n") < 50_000
    assert b"Traceback" not in err and err.count(b"\n") <= 1, err.decode()[-2000:]


@pytest.mark.slow
def test_the_dask_command_leaves_no_process_after_success_failure_or_sigterm(tmp_path):
    """Every process a local cluster started ends with the command: after a job that
    succeeds, one that fails on a worker (a damaged input), and one ended by SIGTERM."""
    import gzip

    small = tmp_path / "small.log"
    small.write_bytes(b"a\nb\na\nb\n")
    damaged = tmp_path / "cut.log.gz"
    damaged.write_bytes(gzip.compress(b"a\nb\n" * 1000)[:30])
    for source, status in ((small, 0), (damaged, 1)):
        command = [_script("seqdedup-dask"), "-q", "--scheduler", "local"]
        proc = subprocess.Popen(
            [*command, "--output-dir", str(tmp_path / f"out-{status}"), str(source)],
            stderr=subprocess.PIPE,
            env=user_env(),
            start_new_session=True,
        )
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == status, err
        assert session_processes(proc.pid) == []
    proc = _dask_job(tmp_path, "--bypass", "^zzz", lines=2_000_000)
    try:
        _wait_for(lambda: len(children(proc.pid)) >= 3, proc)
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=120)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 143, err
    assert session_processes(proc.pid) == []


# -- smaller ones ------------------------------------------------------------------------
def test_a_file_name_with_a_newline_stays_inside_its_marker(run_cli, tmp_path):
    odd = tmp_path / "new\nline.log"
    odd.write_bytes(b"a\nb\n")
    other = tmp_path / "b.log"
    other.write_bytes(b"a\nb\n")
    p = run_cli(["-q", "-a", "-e", "-w", "2", str(odd), str(other)])
    assert p.returncode == 0
    lines = p.stdout.split(b"\n")
    assert lines[:2] == [b"a", b"b"] and lines[3] == b""
    assert lines[2].startswith(b"[DUPLICATE: ") and b"new\\x0aline.log" in lines[2]
    assert p.stderr.count(b"\n") == 1 and b"new\\x0aline.log" in p.stderr


@pytest.mark.parametrize(
    ("args", "option"),
    [
        (["-l", "L"], "--library-dir"),
        (["-r", "."], "--read-sequences"),
        (["-a"], "--annotate"),
        (["-i"], "--inverse"),
        (["-e"], "--explain"),
        (["--top", "3"], "--top"),
    ],
)
def test_show_keys_refuses_what_it_would_ignore(run_cli, tmp_path, args, option):
    p = run_cli(["--show-keys", *args], b"a\n", cwd=tmp_path)
    assert (p.returncode, p.stdout) == (1, b"")
    assert p.stderr == (
        b"seqdedup: --show-keys prints keys and matches nothing: it cannot be combined with "
        + option.encode()
        + b"\n"
    )
    assert not (tmp_path / "L").exists()


def test_a_library_database_that_is_a_symbolic_link_is_not_written_through(run_cli, tmp_path):
    library = tmp_path / "L"
    library.mkdir()
    elsewhere = tmp_path / "elsewhere.sqlite"
    elsewhere.write_bytes(b"")
    (library / "seqdedup.sqlite").symlink_to(elsewhere)
    p = run_cli(["-q", "-w", "1", "-l", str(library)], b"a\na\n")
    assert (p.returncode, p.stdout) == (1, b"")
    assert p.stderr.count(b"\n") == 1 and b"is a symbolic link" in p.stderr
    assert elsewhere.read_bytes() == b""
    assert run_cli(["-q", "-w", "1", "-r", str(library)], b"a\na\n").stdout == b"a\n"


def test_a_transform_killed_by_a_signal_says_so(run_cli):
    p = run_cli(["-q", "--hash-transform", "kill -9 $$"], b"a\n")
    assert p.returncode == 1
    assert p.stderr == b"seqdedup: --hash-transform command 'kill -9 $$' was killed by signal 9\n"


def test_text_that_starts_like_gzip_suggests_no_decompress(run_cli, tmp_path):
    path = tmp_path / "looks.txt"
    path.write_bytes(b"\x1f\x8bnot really\nmore\n")
    p = run_cli(["-q", str(path)])
    assert (p.returncode, p.stdout) == (1, b"")
    assert b"read it with --no-decompress" in p.stderr and p.stderr.count(b"\n") == 1
    again = run_cli(["-q", "--no-decompress", str(path)])
    assert (again.returncode, again.stdout) == (0, path.read_bytes())


def test_deduplicate_with_mixed_record_types_is_a_clear_type_error():
    from seqdedup import deduplicate

    with pytest.raises(TypeError, match="record 2 is bytes, the first was str"):
        list(deduplicate(["a", b"a"]))
    with pytest.raises(TypeError, match="record 1 is int: records are all str or all bytes"):
        list(deduplicate([1]))


def test_library_help_is_plain_text():
    p = subprocess.run([_script("seqdedup-library"), "--help"], capture_output=True, env=user_env())
    assert p.returncode == 0 and b"`" not in p.stdout and b":mod:" not in p.stdout


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("window", [1, 2])
def test_top_names_the_first_record_of_a_run_that_ends_the_input(run_cli, engine, window):
    """At -w 1 the chunk path decides everything before the end of input: the end (an
    empty batch) must not forget the head of the run still open."""
    import json

    p = run_cli(
        ["-q", "-w", str(window), "--top", "3", "--stats-format", "json"],
        b"x\ny\nx\ny\n",
        env=engine_env(engine),
    )
    assert p.returncode == 0
    assert json.loads(p.stderr)["top_sequences"][0]["first_record"] == "x"


def test_an_error_naming_a_file_is_one_readable_line(tmp_path):
    """A file name may hold a newline or a terminal escape: the error that names it is
    still one line on stderr, with those characters shown as escapes, never acted on."""
    name = tmp_path / "no\nsuch\x1b[31m.log"
    run = subprocess.run(
        [*seqdedup_command(), str(name)], capture_output=True, env=user_env(), timeout=60
    )
    assert run.returncode == 1 and run.stdout == b""
    assert run.stderr.count(b"\n") == 1, run.stderr
    assert b"no\\x0asuch\\x1b[31m.log" in run.stderr and b"\x1b" not in run.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--fold", "--fold-idle", "1e12"], "--fold-idle must be at most 31,622,400 seconds"),
        (["--hash-transform", "cat", "--transform-timeout", "1e308"], "--transform-timeout"),
        (["-w", "2000000", "--stream-by-json", "pod"], "--window-size with --stream-by is at most"),
    ],
)
def test_values_past_their_bounds_are_one_line_never_a_traceback(run_cli, tmp_path, args, message):
    source = tmp_path / "in.json"
    source.write_bytes(b'{"pod": "a", "m": 1}\n')
    p = run_cli([*args, str(source)])
    assert (p.returncode, p.stdout) == (1, b"")
    assert p.stderr.count(b"\n") == 1 and p.stderr.startswith(f"seqdedup: {message}".encode())


@pytest.mark.parametrize("option", ["-a", "--fold"])
def test_a_stream_name_with_a_lone_surrogate_is_written_escaped(run_cli, tmp_path, option):
    """JSON allows "\\ud800" (no character): the stream's name is shown escaped in the
    markers and summary lines, the records as they were, exit 0."""
    record = b'{"pod": "\\ud800", "m": "a"}\n'
    source = tmp_path / "in.json"
    source.write_bytes(record * 2 + b'{"pod": "x", "m": "b"}\n')
    p = run_cli(["-q", "-w", "1", "--stream-by-json", "pod", option, str(source)])
    assert p.returncode == 0 and p.stderr == b""
    lines = p.stdout.splitlines(keepends=True)
    assert lines[0] == record and lines[2] == b'{"pod": "x", "m": "b"}\n'
    if option == "-a":
        assert b"(stream \\ud800)" in lines[1]
    else:  # (JSON records: a JSON fold line, the name escaped as text in it)
        assert json.loads(lines[1])["stream"] == "\\ud800"


# -- inputs read whole (--budget, seqdedup diff): bounded by --max-input -------------------


@pytest.mark.parametrize(
    ("args", "status"),
    [
        (["diff", "--max-input", "64k", "{good}", "/dev/zero"], 2),  # a record never ending
        (["diff", "--max-input", "64k", "{good}"], 2),  # BAD from standard input
        (["--budget", "8k", "--max-input", "64k"], 1),
        (["--budget", "8k", "--max-input", "64k", "{good}", "{big}"], 1),
    ],
)
def test_an_input_read_whole_stops_at_its_cap_with_one_line(tmp_path, run_cli, args, status):
    good = tmp_path / "good.log"
    good.write_bytes(b"start\nok\n")
    big = tmp_path / "big.log"
    big.write_bytes(b"y\n" * 40_000)
    args = [a.format(good=good, big=big) for a in args]
    done = run_cli(args, b"y\n" * 40_000)
    assert (done.returncode, done.stdout) == (status, b"")
    assert done.stderr.count(b"\n") == 1
    assert b"larger than --max-input (65,536 bytes)" in done.stderr
    assert b"temporary folder" in done.stderr


@pytest.mark.parametrize(
    "command",
    ["yes | {seqdedup} diff --max-input 1M {good}", "yes | {seqdedup} --budget 8k --max-input 1M"],
)
def test_an_endless_pipe_read_whole_ends_at_the_cap(tmp_path, command):
    good = tmp_path / "good.log"
    good.write_bytes(b"start\nok\n")
    done = subprocess.run(
        ["bash", "-c", command.format(seqdedup=SEQDEDUP, good=good)],
        capture_output=True,
        env=user_env(),
        timeout=HANG_GUARD,
    )
    assert done.returncode in (1, 2) and done.stdout == b""
    assert done.stderr.count(b"\n") == 1 and b"--max-input" in done.stderr


SMALL_SPILL = """
import sys
from seqdedup.budget import input as budgetinput
from seqdedup.cli import seqdedup as cli
budgetinput.SPILL = 1 << 20  # (past 1 MiB the input goes to the temporary folder)
sys.exit(cli.main(sys.argv[1:]))
"""


@pytest.mark.skipif(shutil.which("bash") is None, reason="missing: bash")
def test_a_temporary_folder_that_cannot_take_the_input_is_one_line(tmp_path):
    """A file size limit (ulimit -f; a full disk says ENOSPC the same way): one line
    naming the temporary folder, no traceback, nothing on standard output."""
    command = (
        f"ulimit -f 1024; head -c 4000000 /dev/zero | {sys.executable} -c '{SMALL_SPILL}' "
        "--budget 8k"
    )
    done = subprocess.run(
        ["bash", "-c", command],
        capture_output=True,
        env={**user_env(), "TMPDIR": str(tmp_path)},
        timeout=HANG_GUARD,
    )
    assert (done.returncode, done.stdout) == (1, b""), done.stderr
    assert done.stderr.count(b"\n") == 1 and b"Traceback" not in done.stderr
    assert f"temporary folder '{tmp_path}'".encode() in done.stderr


SPILL_IN_CHUNKS = """
import resource, sys
from seqdedup.budget import input as budgetinput
from seqdedup.base.errors import SeqdedupError
budgetinput.SPILL = 1 << 20
resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 20, 1 << 20))
size = int(sys.argv[1])
try:
    budgetinput.read_whole(b"x" * size for _ in range((4 << 20) // size))
except SeqdedupError as exc:
    sys.exit(f"seqdedup: {exc}")
"""


@pytest.mark.parametrize("chunk", [1000, 8192, 65536])
def test_a_spool_that_fails_with_bytes_in_its_buffer_is_still_one_line(tmp_path, chunk):
    """Chunks smaller than the spool's buffer leave bytes in it when a write fails;
    closing the spool fails again on them, and that second error must not replace the
    first (a pipe's chunk sizes made this happen by chance under the test above)."""
    done = subprocess.run(
        [sys.executable, "-c", SPILL_IN_CHUNKS, str(chunk)],
        capture_output=True,
        env={**user_env(), "TMPDIR": str(tmp_path)},
        timeout=HANG_GUARD,
    )
    assert (done.returncode, done.stdout) == (1, b""), done.stderr
    assert done.stderr.count(b"\n") == 1 and b"Traceback" not in done.stderr
    assert b"File too large" in done.stderr
