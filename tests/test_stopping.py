"""The signal table (stopping): the installed command stopped by SIGTERM, SIGINT or
SIGHUP as a supervisor or a terminal stops it, in an environment without
PYTHONUNBUFFERED."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sqlite3
import subprocess
import sys

import pytest

from conftest import (
    HANG_GUARD,
    arrived,
    at_its_end,
    children,
    library_command,
    live,
    seqdedup_command,
    user_env,
    wait_until,
)

SIGNALS = ["SIGTERM", "SIGINT", "SIGHUP"]
BLOCK = b"".join(b"step %d of the retry\n" % i for i in range(5))


def runs_in(library) -> int:
    path = library / "seqdedup.sqlite"
    if not path.exists():
        return 0
    with contextlib.closing(sqlite3.connect(path)) as connection:
        return connection.execute("SELECT COUNT(*) FROM runs").fetchone()[0]


@pytest.mark.parametrize("signame", SIGNALS)
def test_live_input_ends_as_its_end_would(tmp_path, signame):
    """Standard input from a pipe: the open run's fold line and the library are not
    lost to the signal; the statistics come; exit 128 + N with one line."""
    library = tmp_path / "L"
    proc = live(
        "-w", "3", "--fold", "--fold-idle", "0", "-l", str(library), "--stats-format", "json"
    )
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(b"start\n" + BLOCK * 4)  # one write (< PIPE_BUF): read at once
    proc.stdin.flush()
    first = arrived(proc.stdout.fileno(), len(b"start\n" + BLOCK))
    assert first == b"start\n" + BLOCK  # the copies are skipped: their run is still open
    proc.send_signal(getattr(signal, signame))
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 128 + getattr(signal, signame)
    assert out.startswith(b"[FOLDED: lines 7-21 like ") and b"(lines 2-6, 3 copies)" in out
    stats, line = _stats_and_line(err)
    assert stats["lines"] == {"total": 21, "emitted": 6, "skipped": 15}
    assert line == f"seqdedup: stopped by {signame}: what was read is decided and written; " + (
        "the library is saved"
    )
    assert runs_in(library) == 1


def _stats_and_line(err: bytes) -> tuple[dict, str]:
    """The JSON statistics and the one line after them."""
    text = err.decode()
    body, line = text.rstrip("\n").rsplit("\n", 1)
    return json.loads(body)["statistics"], line


@pytest.mark.slow
def test_a_named_file_stops_at_once_its_output_whole_and_the_library_unchanged(tmp_path):
    """A file cut short: what was read is decided as at its end, fold lines included,
    written in whole records, and the library stays as it was (a later run reads it)."""
    source = tmp_path / "big.log"
    lines = [b"new %d\n" % i if i % 3 else BLOCK for i in range(2_000_000)]
    source.write_bytes(b"".join(lines))
    library = tmp_path / "L"
    out_path = tmp_path / "out"
    args = ["-w", "3", "--fold", "--stats-format", "json", "--bypass", "^never"]
    with out_path.open("wb") as out:
        proc = subprocess.Popen(
            [*seqdedup_command(), *args, "-l", str(library), str(source)],
            stdout=out,
            stderr=subprocess.PIPE,
            env=user_env(),
        )
        wait_until(lambda: out_path.stat().st_size > 0 or proc.poll() is not None)
        assert proc.poll() is None, "the run ended before the signal"
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    assert proc.returncode == 143, err
    stats, line = _stats_and_line(err)
    assert line == (
        "seqdedup: stopped by SIGTERM: what was read is decided and written; "
        "the library is unchanged"
    )
    assert runs_in(library) == 0
    read = stats["lines"]["total"]
    assert 0 < read < sum(line.count(b"\n") for line in lines)  # stopped part-way
    prefix = tmp_path / "prefix.log"  # (a file: the history of a file, not of a pipe)
    prefix.write_bytes(b"".join(b"".join(lines).splitlines(keepends=True)[:read]))
    whole = subprocess.run(
        [*seqdedup_command(), *args, "-q", str(prefix)], capture_output=True, check=True
    )
    assert out_path.read_bytes() == whole.stdout  # as if the file had ended there


def test_a_second_signal_ends_the_run_at_once(tmp_path):
    """The first signal asks; a run that cannot finish (a hash transform that hangs)
    is ended by the second at once, the library unchanged, no traceback."""
    library = tmp_path / "L"
    command = "sleep 100000; cat"  # (only a signal ends it: the run waits for nothing)
    proc = live("-w", "2", "-l", str(library), "--hash-transform", command,
                "--transform-timeout", "600")  # fmt: skip
    assert proc.stdin is not None
    proc.stdin.write(b"a\nb\n")
    proc.stdin.flush()
    wait_until(lambda: bool(children(proc.pid)))  # the transform runs
    proc.send_signal(signal.SIGTERM)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=HANG_GUARD)  # (a run that waited would hang here)
    assert proc.returncode in (130, 143)  # (whichever the system delivered second)
    assert b"Traceback" not in err
    assert runs_in(library) == 0


def test_a_signal_the_parent_ignores_stays_ignored(tmp_path):
    """As under nohup: SIGTERM ignored by whoever started the command has no effect;
    the run ends at the end of its input, exit 0."""
    proc = subprocess.Popen(
        [*seqdedup_command(), "-q", "-w", "2"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=user_env(),
        preexec_fn=lambda: signal.signal(signal.SIGTERM, signal.SIG_IGN),
    )
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(b"a\nb\n")
    proc.stdin.flush()
    assert arrived(proc.stdout.fileno(), 4) == b"a\nb\n"
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(b"a\nb\nc\n", timeout=60)
    assert (proc.returncode, out, err) == (0, b"c\n", b"")


@pytest.mark.parametrize("signame", SIGNALS)
def test_a_followed_file_ends_as_its_end_would(tmp_path, signame):
    """--follow, stopped by a service manager's SIGTERM (or Ctrl-C, SIGHUP): the open
    fold line is written, the library saved, exit 128 + N."""
    library = tmp_path / "L"
    command = [*seqdedup_command(), "-F", "-q", "-w", "3", "--fold", "--fold-idle", "0"]
    command += ["-l", str(library)]  # (no idle line: a pause of the test machine changes nothing)
    proc = _following(command, tmp_path, copies=3)
    proc.send_signal(getattr(signal, signame))
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 128 + getattr(signal, signame)
    assert out.startswith(b"[FOLDED: lines 7-16 like ") and b"(lines 2-6, 2 copies)" in out
    assert err.decode() == (
        f"seqdedup: stopped by {signame}: what was read is decided and written; "
        "the library is saved\n"
    )
    assert runs_in(library) == 1


def _following(command: list[str], tmp_path, copies: int) -> subprocess.Popen[bytes]:
    """A follower of tmp_path/app.log (``command``, the file's name added when it is
    seqdedup's), once it holds the file open: "start" and ``copies`` copies of BLOCK
    written, the first copy read back (the others are an open run)."""
    log = tmp_path / "app.log"
    log.write_bytes(b"before the follow\n")  # (not read: a follow starts at the end)
    if command[0] != sys.executable:
        command = [*command, str(log)]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=user_env())
    assert proc.stdout is not None
    wait_until(lambda: at_its_end(proc.pid, log), "the follow to start")
    with log.open("ab") as writer:
        writer.write(b"start\n" + BLOCK * copies)
    assert arrived(proc.stdout.fileno(), len(b"start\n" + BLOCK)) == b"start\n" + BLOCK
    return proc


def test_the_library_api_follow_ends_on_ctrl_c_with_the_rest_written(tmp_path):
    """A program using follow_file in its main thread: Ctrl-C ends the follow as the
    end of input would (stats.interrupted is the signal), and the handler it had is
    back afterwards."""
    log = tmp_path / "app.log"
    program = (
        "import signal, sys\n"
        "from seqdedup import Config\n"
        "from seqdedup.api import follow_file\n"
        "out = sys.stdout.buffer\n"
        f"stats = follow_file({str(log)!r}, out, Config(window_size=3, fold=True))\n"
        "out.flush()\n"
        "print(stats.interrupted, signal.getsignal(signal.SIGINT) is "
        "signal.default_int_handler, file=sys.stderr)\n"
    )
    proc = _following([sys.executable, "-c", program], tmp_path, copies=2)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert out.startswith(b"[FOLDED: lines 7-11 like ") and b"(lines 2-6), id " in out
    assert err == b"2 True\n"


# -- signals in the first milliseconds --------------------------------------------------

SLOW_IMPORTS = """
import os, sys, time

class SlowCommand:
    # the command's own imports take a while (a loaded machine, a cold disk): the
    # test's signal comes while they run, after the interpreter started. They go on
    # once the signal is pending (held back by the launcher), whenever that is.
    def find_spec(self, name, path=None, target=None):
        if name in ("seqdedup.cli.seqdedup", "seqdedup.cli.library"):
            open(os.environ["SLOW_READY"], "w").close()
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline and not self.pending():
                time.sleep(0.002)
        return None

    @staticmethod
    def pending():
        with open("/proc/self/status") as status:
            fields = dict(line.split(":", 1) for line in status if ":" in line)
        return int(fields["SigPnd"], 16) | int(fields["ShdPnd"], 16)

sys.meta_path.insert(0, SlowCommand())
"""


def started_slowly(tmp_path, args: list[str], data: bytes, command=None):
    """The command with its imports slowed down, once they began; the process."""
    hooks = tmp_path / "hooks"
    hooks.mkdir(exist_ok=True)
    (hooks / "sitecustomize.py").write_text(SLOW_IMPORTS)
    ready = tmp_path / "ready"
    env = {
        **user_env(),
        "PYTHONPATH": str(hooks),
        "SLOW_READY": str(ready),
    }
    r, w = os.pipe()
    os.write(w, data)
    os.close(w)
    proc = subprocess.Popen(
        [*(command or seqdedup_command()), *args],
        stdin=r,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    os.close(r)
    wait_until(ready.exists, "the command's imports")
    return proc


def test_a_sighup_while_the_command_imports_reopens_the_output(tmp_path):
    """With --output, SIGHUP reopens the file: one that comes while the command is
    still importing (before its handlers exist) waits for them instead of killing the
    process, so what was piped in is written and the file is made."""
    out = tmp_path / "out.log"
    proc = started_slowly(tmp_path, ["-q", "-w", "1", "--output", str(out)], b"a\nb\na\n")
    proc.send_signal(signal.SIGHUP)
    _stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 0, (proc.returncode, stderr)
    assert out.read_bytes() == b"a\nb\n"


@pytest.mark.parametrize("signame", ["SIGTERM", "SIGINT"])
def test_a_signal_while_the_command_imports_follows_the_table(tmp_path, signame):
    """Without --output, the first SIGTERM or Ctrl-C that comes during the imports ends
    the run as the table says (128 + N, one line at most), never by the default action."""
    signum = getattr(signal, signame)
    proc = started_slowly(tmp_path, ["-q", "-w", "1"], b"a\nb\n")
    proc.send_signal(signum)
    _stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 128 + signum, (proc.returncode, stderr)
    assert b"Traceback" not in stderr and stderr.count(b"\n") <= 1


def test_the_library_command_follows_the_table_during_its_imports(tmp_path):
    proc = started_slowly(
        tmp_path, ["info", str(tmp_path / "none")], b"", command=library_command()
    )
    proc.send_signal(signal.SIGTERM)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 128 + signal.SIGTERM, (proc.returncode, stderr)


def _sighup_bits(pid: int) -> tuple[bool, bool]:
    """Whether process ``pid`` holds SIGHUP back (blocked) and has a handler for it."""
    bit = 1 << (signal.SIGHUP - 1)
    try:
        with open(f"/proc/{pid}/status") as status:
            fields = dict(line.split(":", 1) for line in status if ":" in line)
    except OSError:  # (it ended)
        return False, False
    return bool(int(fields["SigBlk"], 16) & bit), bool(int(fields["SigCgt"], 16) & bit)


def _interpreter_runs(pid: int) -> bool:
    try:
        return os.path.realpath(f"/proc/{pid}/exe") == os.path.realpath(sys.executable)
    except OSError:
        return False


# When the signal is sent: at once (the fork may not even have exec'd), once the
# interpreter runs (its own start-up: the console script's first line may not have run),
# once the launcher holds SIGHUP back or the command's handler is in place.
SIGHUP_POINTS = {
    "at once": None,
    "interpreter": _interpreter_runs,
    "held": lambda pid: any(_sighup_bits(pid)),
}


@pytest.mark.parametrize("point", sorted(SIGHUP_POINTS))
def test_a_sighup_soon_after_start_never_costs_a_started_run_its_input(tmp_path, point):
    """The signal at events of the start (not at guessed times). Before the interpreter
    runs the console script's first line only the default action exists, and the process
    ends by SIGHUP having read and written nothing; from that line on, the signal waits
    for the handlers and the run writes all it was given. Never anything between. Once
    the launcher holds the signal back (or the handler is in place) only the second can
    happen. (The slowed-down imports above are the exact test of the second.)"""
    out = tmp_path / "out.log"
    r, w = os.pipe()
    os.write(w, b"a\nb\n")
    os.close(w)
    proc = subprocess.Popen(
        [*seqdedup_command(), "-q", "--output", str(out)],
        stdin=r,
        stderr=subprocess.PIPE,
        env=user_env(),
    )
    os.close(r)
    reached = SIGHUP_POINTS[point]
    if reached is not None:  # (or the run ended first: the signal then changes nothing)
        wait_until(lambda: reached(proc.pid) or proc.poll() is not None, f"the point {point}")
    proc.send_signal(signal.SIGHUP)
    _, stderr = proc.communicate(timeout=60)
    if proc.returncode == -signal.SIGHUP:  # (before any line of the command)
        assert point != "held", stderr
        assert not out.exists()
    else:
        assert proc.returncode == 0, stderr
        assert out.read_bytes() == b"a\nb\n"


RACE = """
import inspect, os, signal, sys, time
from seqdedup.base import stopping

def lines_of(function, call):
    # every line that runs up to the wait itself (those after it run only once it
    # ended), found by a run that does not wait
    source, first = inspect.getsourcelines(function)
    waits = ("select.select(", "time.sleep(")
    wait = next(first + i for i, text in enumerate(source) if any(w in text for w in waits))
    ran = set()
    def tracer(frame, event, arg):
        if frame.f_code is not function.__code__:
            return None
        def local(frame, event, arg):
            if event == "line":
                ran.add(frame.f_lineno)
            return local
        return local
    with stopping.graceful():  # (as the runs below: no stop asked yet)
        sys.settrace(tracer)
        call(0.0)
        sys.settrace(None)
    return sorted(line for line in ran if line <= wait)

sent = [0.0]

def cut_at(function, line):
    # the signal arrives just before `line` of the function runs
    def tracer(frame, event, arg):
        if frame.f_code is function.__code__:
            def local(frame, event, arg):
                if event == "line" and frame.f_lineno == line:
                    sys.settrace(None)
                    frame.f_trace = None
                    sent[0] = time.monotonic()
                    os.kill(os.getpid(), signal.SIGINT)
                return local
            return local
        return None
    return tracer

r, w = os.pipe()  # (never written: a wait on it lasts a day unless cut)
for name in ("wait_readable", "pause"):
    function = getattr(stopping, name)
    call = (lambda s: function(r, s)) if name == "wait_readable" else function
    for line in lines_of(function, call):
        with stopping.graceful():
            sent[0] = 0.0
            sys.settrace(cut_at(function, line))
            result = call(86400.0)
            sys.settrace(None)
            if not sent[0] or stopping.requested() is None or result not in (None, False):
                print(f"{name}: a signal before line {line} was lost ({result!r})")
print("done")
"""


def test_a_signal_at_any_point_of_a_wait_cuts_it_short():
    """The signal comes just before each line of wait_readable and pause in turn: once
    a stop was asked, every wait ends at once (the flag was tested after the waiting
    state was set, or the handler cut the wait)."""
    done = subprocess.run(  # (a wait that a signal did not cut lasts a day: the guard fails it)
        [sys.executable, "-c", RACE], capture_output=True, text=True, env=user_env(), timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "done\n", done.stdout


AFTER_A_SAVE = """
import os, signal, sys, tempfile
from seqdedup.api import Deduplicator
from seqdedup.base.stopping import graceful

dedup = Deduplicator(window_size=1, library_dir=tempfile.mkdtemp() + "/L")
dedup.feed([b"a", b"b", b"a"])
dedup.flush()
dedup.save()  # (the library API: the program's signals are its own)
try:
    with graceful():  # a later run of the program's, live: Ctrl-C twice
        os.kill(os.getpid(), signal.SIGINT)  # the first asks it to stop
        os.kill(os.getpid(), signal.SIGINT)  # the second ends it at once
        print("not interrupted")
except KeyboardInterrupt:
    print("KeyboardInterrupt")
except SystemExit as exit:
    print("SystemExit", exit.code)
"""


def test_a_library_save_through_the_api_leaves_the_programs_signals_alone():
    """Only the command marks its outcome settled at the commit: after a save through
    the API, a later second Ctrl-C is still the program's KeyboardInterrupt."""
    done = subprocess.run(
        [sys.executable, "-c", AFTER_A_SAVE],
        capture_output=True,
        text=True,
        env=user_env(),
        timeout=60,
    )
    assert done.stdout == "KeyboardInterrupt\n", (done.stdout, done.stderr)
