"""The library through the installed command: crashes, concurrency, the workflow."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
from contextlib import closing
from functools import partial
from pathlib import Path

import pytest

from seqdedup.library.store import DB_NAME

from conftest import (
    arrived,
    children,
    library_command,
    offset_in,
    seqdedup_command,
    user_env,
    wait_until,
)


def library_state(library):
    """(runs, sequences, records) of a library, after checking its integrity, as the
    next run sees it: a read-write open rolls back what a killed save left half done."""
    # closing(): a sqlite3 connection used as a context manager is not closed.
    with closing(sqlite3.connect(f"file:{library / DB_NAME}?mode=rw", uri=True)) as db:
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        runs = db.execute("SELECT COUNT(*) FROM runs").fetchone()[0]
        sequences, records = db.execute(
            "SELECT COUNT(*), COALESCE(SUM(length), 0) FROM sequences"
        ).fetchone()
    return runs, sequences, records


@pytest.fixture(scope="module")
def big_input(tmp_path_factory, engine):
    """Input a run takes a while to read (three times less on the slower Python
    engine): its kill points are moments of the run, several read chunks apart."""
    path = tmp_path_factory.mktemp("big") / "big.log"
    count = 300_000 if engine == "c" else 100_000
    lines = (f"2026-11-22 request {i} user {i * 7919 % 100003} ok\n" for i in range(count))
    path.write_text("".join(lines))
    return path


@pytest.fixture(scope="module")
def base_library(tmp_path_factory):
    library = tmp_path_factory.mktemp("base") / "L"
    small = library.parent / "small.log"
    small.write_text("".join(f"old line {i}\n" for i in range(1000)))
    subprocess.run(
        [*seqdedup_command(), "-q", "-w", "3", "-l", str(library), str(small)],
        check=True,
        env=user_env(),
    )
    return library


def _ended_or(proc: subprocess.Popen[bytes], reached) -> bool:
    return proc.poll() is not None or reached()


def _kill_points(pid: int, source, size: int, library, staging) -> list:
    """Eight moments of a run that saves a library: a fifth, two fifths ... of the
    input read, the input read whole (closed), a staging file written, the database's
    journal beside it (the commit under way)."""

    def read(share: float):
        return lambda: (offset_in(pid, source) or 0) >= share * size

    def closed() -> bool:
        return offset_in(pid, source) is None and Path(f"/proc/{pid}").exists()

    def staged() -> bool:
        return any(path.stat().st_size > 0 for path in staging.rglob("*") if path.is_file())

    def committing() -> bool:
        return any(library.glob(f"{DB_NAME}-*"))

    return [read(0.2), read(0.4), read(0.6), read(0.8), read(0.95), closed, staged, committing]


@pytest.mark.slow
@pytest.mark.one_engine  # (the save and its commit are the library's, whichever engine)
def test_killed_run_leaves_old_or_new_library(tmp_path, big_input, base_library):
    before = library_state(base_library)
    complete = tmp_path / "complete"
    shutil.copytree(base_library, complete)
    subprocess.run(
        [*seqdedup_command(), "-q", "-w", "3", "-l", str(complete), str(big_input)],
        check=True,
        env=user_env(),
        stdout=subprocess.DEVNULL,
    )
    after = library_state(complete)
    assert after[0] == before[0] + 1 and after[2] > before[2]
    outcomes = set()
    staging = tmp_path / "staging"  # a killed run cannot remove its staging file
    staging.mkdir()
    env = {**user_env(), "TMPDIR": str(staging)}
    size = big_input.stat().st_size
    for k in range(8):  # kill points spread over the whole run, the save included
        library = tmp_path / f"kill{k}"
        shutil.copytree(base_library, library)
        proc = subprocess.Popen(
            [*seqdedup_command(), "-q", "-w", "3", "-l", str(library), str(big_input)],
            stdout=subprocess.DEVNULL,
            env=env,
        )
        reached = _kill_points(proc.pid, big_input, size, library, staging)[k]
        # (an event of the run, counted by the kernel: the input read so far, the input
        # closed, the save's files; or the run ended first)
        wait_until(partial(_ended_or, proc, reached), f"kill point {k}")
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        # The next run reads it (rolling back a save killed mid-commit) ...
        reader = subprocess.run(
            [*seqdedup_command(), "-q", "-r", str(library), "-"],
            input=b"old line 1\nnew\n",
            capture_output=True,
            env=user_env(),
        )
        assert (reader.returncode, reader.stdout) == (0, b"old line 1\nnew\n"), reader.stderr
        state = library_state(library)  # ... and finds it as before or as after the run
        assert state in (before, after), f"kill {k}: half-written library {state}"
        outcomes.add(state)
    assert before in outcomes  # some kills landed before the commit


@pytest.mark.slow
@pytest.mark.one_engine  # (SQLite's locking: the same under both engines)
def test_two_runs_saving_at_once_both_land(tmp_path, big_input, base_library):
    library = tmp_path / "L"
    shutil.copytree(base_library, library)
    other = tmp_path / "other.log"
    other.write_text("".join(f"other {i}\n" for i in range(100_000)))
    procs = [
        subprocess.Popen(
            [*seqdedup_command(), "-q", "-w", "1", "-l", str(library), str(path)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            env=user_env(),
        )
        for path in (big_input, other)
    ]
    for proc in procs:
        _, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err
    assert library_state(library)[0] == library_state(base_library)[0] + 2
    both = tmp_path / "both.log"
    both.write_bytes(big_input.read_bytes() + other.read_bytes())
    p = subprocess.run(
        [*seqdedup_command(), "-q", "-w", "1", "-r", str(library), str(both)],
        capture_output=True,
        env=user_env(),
        check=True,
    )
    assert p.stdout == b""  # every record of both runs is in the library


def test_novelty_filter_workflow(tmp_path):
    day1 = tmp_path / "day1.log"
    day2 = tmp_path / "day2.log"
    day1.write_text("boot\nconnect db\nERROR timeout\nretry\nok\n")
    day2.write_text("boot\nconnect db\nERROR disk full\nretry\nERROR disk full\nnew feature\n")
    library = tmp_path / "L"
    cmd = " ".join(seqdedup_command())
    subprocess.run(
        f"{cmd} -q -w 1 --library-dir {library} {day1}",
        shell=True,
        check=True,
        env=user_env(),
        stdout=subprocess.DEVNULL,
    )
    p = subprocess.run(
        f"{cmd} -q -w 1 --read-sequences {library} --annotate {day2} | grep -v DUPLICATE",
        shell=True,
        capture_output=True,
        env=user_env(),
        check=True,
    )
    assert p.stdout == b"ERROR disk full\nnew feature\n"


def test_library_statistics_rows_and_json(tmp_path):
    library = tmp_path / "L"
    data = b"a\nb\nc\na\nb\nc\n"
    p = subprocess.run(
        [*seqdedup_command(), "-w", "3", "-l", str(library), "--stats-format", "json"],
        input=data,
        capture_output=True,
        env=user_env(),
        check=True,
    )
    doc = json.loads(p.stderr)
    assert doc["statistics"]["library"] == {"loaded": 0, "saved": 2}
    p = subprocess.run(
        [*seqdedup_command(), "-w", "3", "-r", str(library)],
        input=data,
        capture_output=True,
        env=user_env(),
        check=True,
    )
    table = p.stderr.decode()
    assert table.index("Max history") < table.index("Library sequences loaded")
    assert p.stdout == b""


@pytest.mark.one_engine  # (storage and its errors: the library's own code)
@pytest.mark.parametrize("kind", ["missing", "file", "corrupt"])
def test_library_errors_exit_1_with_one_line(tmp_path, kind, run_cli):
    target = tmp_path / "lib"
    if kind == "file":
        target.write_text("x")
    elif kind == "corrupt":
        target.mkdir()
        (target / DB_NAME).write_bytes(b"garbage" * 1000)
    p = run_cli(["-r", str(target)], b"a\n")
    assert p.returncode == 1 and p.stdout == b""
    assert str(target) in p.stderr.decode() and p.stderr.decode().count("\n") == 1


def test_failing_transform_saves_nothing(tmp_path, run_cli):
    library = tmp_path / "L"
    p = run_cli(["-q", "-l", str(library), "-t", "exit 2"], b"a\nb\n")
    assert p.returncode == 1
    assert not (library / DB_NAME).exists()


# Every test here runs once per engine (compiled kernel and pure Python).
pytestmark = pytest.mark.usefixtures("engine")


def staging_files(library):
    return sorted(p.name for p in library.iterdir() if p.name.startswith(".seqdedup-staging-"))


def start_live_run(library):
    """A -l run reading from a pipe held open: it stays in the middle of its run."""
    proc = subprocess.Popen(
        [*seqdedup_command(), "-q", "-w", "2", "-l", str(library), "-"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=user_env(),
    )
    proc.stdin.write(b"".join(b"live %d\n" % i for i in range(1000)))
    proc.stdin.flush()
    wait_until(lambda: staging_files(library), "the run's staging")
    # (and has decided records: a signal before it read any would save nothing new)
    assert arrived(proc.stdout.fileno(), len(b"live 0\n")) == b"live 0\n"
    return proc


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP])
def test_a_live_run_stopped_by_a_signal_saves_and_cleans_up(tmp_path, base_library, signum):
    """Live input has no end of its own: a signal ends it, and what was read is saved
    as at its end (one run more), the staging file gone; exit 128 + N."""
    library = tmp_path / "L"
    shutil.copytree(base_library, library)
    runs, sequences, records = library_state(library)
    proc = start_live_run(library)
    proc.send_signal(signum)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 128 + signum, err
    assert err.decode().endswith("the library is saved\n")
    after = library_state(library)
    assert after[0] == runs + 1 and after[1] > sequences and after[2] > records
    assert staging_files(library) == []


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP])
def test_a_second_signal_saves_nothing_and_cleans_up(tmp_path, signum):
    """The first signal cannot end a run whose --hash-transform hangs; the second ends
    it at once: no run saved, the staging file gone."""
    library = tmp_path / "L"
    proc = subprocess.Popen(
        [*seqdedup_command(), "-q", "-w", "2", "-l", str(library), "--hash-transform",
         "read x; sleep 300", "-"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=user_env(),
    )  # fmt: skip
    proc.stdin.write(b"a\nb\n")
    proc.stdin.flush()
    wait_until(lambda: children(proc.pid), "the transform's start")  # (it runs, and hangs)
    proc.send_signal(signum)
    proc.send_signal(signal.SIGINT)  # (the transform hangs: the first cannot finish)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode in (130, 128 + signum), err
    assert b"Traceback" not in err
    assert not (library / DB_NAME).exists() or library_state(library)[0] == 0
    assert not library.exists() or staging_files(library) == []


@pytest.mark.one_engine  # (storage and its errors: the library's own code)
def test_staging_left_by_a_killed_run_is_removed_by_the_next(tmp_path, base_library):
    library = tmp_path / "L"
    shutil.copytree(base_library, library)
    proc = start_live_run(library)
    left = staging_files(library)
    proc.kill()
    proc.communicate(timeout=30)
    assert staging_files(library) == left  # SIGKILL: nothing could clean up
    subprocess.run(
        [*seqdedup_command(), "-q", "-l", str(library), "-"],
        input=b"next\n",
        check=True,
        capture_output=True,
        env=user_env(),
    )
    assert staging_files(library) == []


# -- libraries this user cannot write (a shared /shared/lib, read-only storage) ------
NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
needs_root = pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("setpriv") is None,
    reason="running as another user needs root and setpriv",
)


@pytest.fixture
def shared_dir():
    """A world-readable folder (pytest's own temp folders are private to their owner)."""
    folder = Path(tempfile.mkdtemp(prefix="seqdedup-shared-"))
    folder.chmod(0o755)
    yield folder
    shutil.rmtree(folder)


def make_shared_library(folder, journal_mode):
    """A library saved by this user, readable by all, in the given journal mode (WAL
    is what libraries of seqdedup's first releases used)."""
    log = folder / "f.log"
    log.write_text("".join(f"line {i % 700}\n" for i in range(1000)) + "new\n")
    old = folder / "old.log"
    old.write_text("".join(f"line {i}\n" for i in range(300)))
    library = folder / "L"
    subprocess.run([*seqdedup_command(), "-q", "-w", "3", "-l", str(library), str(old)], check=True)
    with closing(sqlite3.connect(library / DB_NAME)) as db:
        assert db.execute(f"PRAGMA journal_mode={journal_mode}").fetchone()[0] == journal_mode
    for path in (library, *library.iterdir()):
        path.chmod(0o755 if path.is_dir() else 0o644)
    return library, log


def read_with(prefix, library, log):
    return subprocess.run(
        [*prefix, *seqdedup_command(), "-q", "-w", "3", "-r", str(library), str(log)],
        capture_output=True,
        env=user_env(),
        timeout=60,
    )


@pytest.mark.one_engine  # (storage and its errors: the library's own code)
@needs_root
@pytest.mark.parametrize("journal_mode", ["delete", "wal"])
def test_another_user_reads_a_library_it_cannot_write(shared_dir, journal_mode):
    library, log = make_shared_library(shared_dir, journal_mode)
    owner = read_with([], library, log)
    assert owner.returncode == 0, owner.stderr
    # The library's 300 lines are skipped: only the 400 lines past them and 'new' remain.
    assert owner.stdout.count(b"\n") == 401
    other = read_with(NOBODY, library, log)
    assert (other.returncode, other.stderr) == (0, b"")
    assert other.stdout == owner.stdout


def read_only_mount_works():
    probe = subprocess.run(
        ["unshare", "-m", "sh", "-c", "mount --bind / /mnt && mount -o remount,bind,ro /mnt"],
        capture_output=True,
    )
    return probe.returncode == 0


@pytest.mark.one_engine  # (storage and its errors: the library's own code)
@pytest.mark.skipif(
    shutil.which("unshare") is None or not read_only_mount_works(),
    reason="a private read-only mount needs unshare and CAP_SYS_ADMIN",
)
@pytest.mark.parametrize("journal_mode", ["delete", "wal"])
def test_library_on_read_only_storage(shared_dir, journal_mode):
    library, log = make_shared_library(shared_dir, journal_mode)
    expected = read_with([], library, log)
    mount = f"mount --bind {library} {library} && mount -o remount,bind,ro {library} && "
    command = " ".join(map(shlex.quote, [*seqdedup_command(), "-q", "-w", "3", "-r"]))
    on_ro = subprocess.run(
        ["unshare", "-m", "sh", "-c", f"{mount}{command} {library} {log}"],
        capture_output=True,
        env=user_env(),
        timeout=60,
    )
    assert (on_ro.returncode, on_ro.stderr) == (0, b"")
    assert on_ro.stdout == expected.stdout
    assert on_ro.stdout.count(b"\n") == 401


@pytest.mark.one_engine  # (storage and its errors: the library's own code)
@needs_root
def test_unfinished_save_is_a_clear_error_for_a_reader_who_cannot_roll_it_back(shared_dir):
    library, log = make_shared_library(shared_dir, "delete")
    # A writer killed in the middle of a transaction leaves a hot journal.
    interrupted = (
        "import os, sqlite3, sys\n"
        "db = sqlite3.connect(sys.argv[1]); db.execute('PRAGMA cache_size=1')\n"
        "db.execute('BEGIN'); db.execute('CREATE TABLE junk (x)')\n"
        "for _ in range(2000): db.execute('INSERT INTO junk VALUES (?)', (os.urandom(500),))\n"
        "os._exit(1)\n"
    )
    subprocess.run([sys.executable, "-c", interrupted, str(library / DB_NAME)])
    assert (library / (DB_NAME + "-journal")).stat().st_size > 0
    other = read_with(NOBODY, library, log)
    assert other.returncode == 1 and other.stdout == b""
    assert other.stderr.count(b"\n") == 1 and b"unfinished save" in other.stderr
    # The owner's next run rolls it back; then everyone reads the library again.
    assert read_with([], library, log).stdout.count(b"\n") == 401
    assert read_with(NOBODY, library, log).stdout.count(b"\n") == 401


@pytest.mark.one_engine  # (storage and its errors: the library's own code)
@needs_root
def test_saving_into_a_library_this_user_cannot_write_is_one_line_before_any_output(
    shared_dir,
):
    library, log = make_shared_library(shared_dir, "delete")
    before = library_state(library)
    result = subprocess.run(
        [*NOBODY, *seqdedup_command(), "-q", "-w", "3", "-l", str(library), str(log)],
        capture_output=True,
        env=user_env(),
        timeout=60,
    )
    assert (result.returncode, result.stdout) == (1, b"")
    assert result.stderr.count(b"\n") == 1 and b"cannot stage" in result.stderr
    assert b"Permission denied" in result.stderr
    assert library_state(library) == before


@pytest.mark.slow
def test_read_sequences_folder_with_sub_folder_link_loops_and_a_100_mb_file(
    tmp_path, run_cli, engine
):
    """(The file is 100 MB on the kernel; 10 MB on the Python engine, whose reading of
    it is the same code at a tenth of the kernel's speed: seconds the suite does not have.)"""
    folder = tmp_path / "R"
    (folder / "sub").mkdir(parents=True)
    (folder / "sub" / "trace.txt").write_bytes(b"t1\nt2\nt3\n")
    (folder / "loop").symlink_to("loop")  # a link to itself: no file
    (folder / "self").symlink_to(".")  # a folder link back up: not followed
    lines, size = (2_300_000, 100_000_000) if engine == "c" else (230_000, 10_000_000)
    filler = b"".join(b"filler line %d of a large known sequence\n" % i for i in range(lines))
    big = folder / "big.txt"
    big.write_bytes(filler + b"b1\nb2\nb3\n")
    assert big.stat().st_size > size
    data = b"new\nt1\nt2\nt3\nb1\nb2\nb3\nend\n"
    result = run_cli(["-q", "-w", "3", "-r", str(folder)], data, timeout=120)
    assert (result.returncode, result.stderr) == (0, b"")
    assert result.stdout == b"new\nend\n"


@pytest.mark.one_engine  # (storage and its errors: the library's own code)
@needs_root
def test_an_unreadable_file_in_a_read_sequences_folder_is_one_line(shared_dir):
    folder = shared_dir / "R"
    folder.mkdir(mode=0o755)
    (folder / "secret.txt").write_bytes(b"a\nb\n")
    (folder / "secret.txt").chmod(0o600)
    log = shared_dir / "in.log"
    log.write_bytes(b"a\nb\nc\n")
    log.chmod(0o644)
    result = read_with(NOBODY, folder, log)
    assert (result.returncode, result.stdout) == (1, b"")
    assert result.stderr.count(b"\n") == 1
    assert b"secret.txt" in result.stderr and b"Permission denied" in result.stderr


@pytest.mark.one_engine  # (storage and its errors: the library's own code)
@needs_root
@pytest.mark.parametrize("how", ["folder", "link"])
def test_an_unreadable_part_of_a_library_is_one_line_not_skipped(shared_dir, how):
    """A library is used whole or not at all: a sub-folder, or a link to a file, that
    this user cannot read is an error naming it (before, the rest was used, exit 0)."""
    folder = shared_dir / "R"
    (folder / "sub").mkdir(parents=True, mode=0o755)
    folder.chmod(0o755)
    (folder / "open.txt").write_bytes(b"x1\nx2\nx3\n")
    (folder / "open.txt").chmod(0o644)
    secret = shared_dir / "private"
    secret.mkdir(mode=0o700)
    (secret / "t.txt").write_bytes(b"t1\nt2\nt3\n")
    if how == "folder":
        (folder / "sub").chmod(0o000)
        needle = b"library folder '" + str(folder / "sub").encode()
    else:
        (folder / "sub" / "t.txt").symlink_to(secret / "t.txt")
        needle = b"library file '" + str(folder / "sub" / "t.txt").encode()
    log = shared_dir / "in.log"
    log.write_bytes(b"x1\nx2\nx3\nend\n")
    log.chmod(0o644)
    result = read_with(NOBODY, folder, log)
    assert (result.returncode, result.stdout) == (1, b"")
    assert result.stderr.count(b"\n") == 1
    assert needle in result.stderr and b"Permission denied" in result.stderr
    info = subprocess.run(
        [*NOBODY, *library_command(), "info", str(folder)], capture_output=True, env=user_env()
    )
    assert info.returncode == 1 and info.stderr.count(b"\n") == 1
    assert b"Traceback" not in info.stderr
    (folder / "sub").chmod(0o755)


@pytest.mark.one_engine  # (storage and its errors: the library's own code)
@pytest.mark.parametrize("option", ["-l", "-r"])
def test_an_input_that_is_a_library_file_is_refused(run_cli, tmp_path, option):
    library = tmp_path / "logs"
    library.mkdir()
    log = library / "app.log"
    log.write_bytes(b"a\nb\nc\na\nb\nc\n")
    (tmp_path / "link.log").symlink_to(log)
    hard = tmp_path / "hard.log"
    os.link(log, hard)
    for name in (log, tmp_path / "link.log", hard):
        p = run_cli(["-q", "-w", "3", option, str(library), str(name)], cwd=library)
        assert (p.returncode, p.stdout) == (1, b"")
        assert p.stderr.count(b"\n") == 1 and b"is the library file" in p.stderr
    with open(log, "rb") as stdin:
        p = subprocess.run(
            [*seqdedup_command(), "-q", "-w", "3", option, "."],
            stdin=stdin,
            capture_output=True,
            cwd=library,
            env=user_env(),
        )
    assert (p.returncode, p.stdout) == (1, b"")
    assert b"input '(standard input)' is the library file" in p.stderr
    outside = tmp_path / "copy.log"
    outside.write_bytes(log.read_bytes())
    p = run_cli(["-q", "-w", "3", option, str(library), str(outside)])
    assert p.returncode == 0


@pytest.mark.one_engine  # (storage and its errors: the library's own code)
@pytest.mark.parametrize(
    "change",
    ["count = 'abc'", "records = 'hello'", "records = 12345", "length = 'x'", "count = -5"],
)
def test_a_library_changed_by_hand_is_one_line_for_a_run_and_for_diff(tmp_path, run_cli, change):
    """SQLite keeps any value in any column: a row changed by hand is one line naming
    the library (a run: status 1; diff: 2), never a traceback."""
    import sqlite3

    log = tmp_path / "in.log"
    log.write_bytes(b"a\nb\nc\na\nb\nc\nd\n")
    library = tmp_path / "L"
    assert run_cli(["-q", "-w", "2", "-l", str(library), str(log)]).returncode == 0
    with sqlite3.connect(library / "seqdedup.sqlite") as db:
        db.execute(f"UPDATE sequences SET {change}")
    for args, status in ((["-q", "-w", "2", "-r", str(library)], 1), (["diff", str(library)], 2)):
        done = run_cli([*args, str(log)])
        assert (done.returncode, done.stdout) == (status, b""), done.stderr
        assert done.stderr.count(b"\n") == 1 and b"is corrupt" in done.stderr
        assert str(library).encode() in done.stderr
