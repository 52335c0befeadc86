from __future__ import annotations

import itertools
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from seqdedup import SeqdedupError, deduplicate
from seqdedup.keys.maker import ShellTransform

from conftest import HANG_GUARD, examples, seqdedup_command, user_env, wait_until
from oracle import reference_output


def test_line_wise_command_takes_the_batch_path():
    transform = ShellTransform("tr a-z A-Z")
    assert transform([b"ab", b"cd", b"ef"]) == [b"AB", b"CD", b"EF"]
    assert transform.batch_mode is True


@pytest.mark.parametrize(
    ("command", "per_record"),
    [
        ("tac", [b"b", b"a", b"c"]),
        ("nl -ba", [b"     1\tb", b"     1\ta", b"     1\tc"]),
        ("sort -r", [b"b", b"a", b"c"]),
    ],
)
def test_command_that_is_not_line_wise_falls_back_to_per_record(command, per_record):
    transform = ShellTransform(command)
    keys = transform([b"b", b"a", b"c"])
    assert transform.batch_mode is False
    assert keys == per_record  # what the command prints for each record alone


def test_records_with_newlines_go_one_by_one():
    transform = ShellTransform("wc -l")
    assert transform([b"a\nb", b"c"]) == [b"2", b"1"]


def test_failing_command_is_a_clear_error():
    with pytest.raises(SeqdedupError, match="exit status 3: oops"):
        ShellTransform("echo oops >&2; exit 3")([b"x"])


@settings(max_examples=examples(25), deadline=None)
@given(
    records=st.lists(st.sampled_from(["1:a", "2:a", "1:b", "3:b", "2:c"]), max_size=40),
    window=st.integers(1, 4),
)
def test_transform_keys_match_oracle(records, window):
    out = list(deduplicate(records, window_size=window, hash_transform="cut -d: -f2"))
    assert out == reference_output(records, window, transform=lambda k: k.split(":")[1])


def test_transform_applies_after_skip_chars():
    records = ["xx1:a", "yy2:a"]
    out = list(deduplicate(records, window_size=1, skip_chars=2, hash_transform="cut -c3-"))
    assert out == ["xx1:a"]


# Every test here runs once per engine (compiled kernel and pure Python).
pytestmark = pytest.mark.usefixtures("engine")


def test_order_dependent_command_on_sorted_first_records_is_caught(run_cli):
    """`sort` passes the first-records check when they are already sorted (as
    timestamped logs are); the shuffled rerun of every batch catches it."""
    data = b"".join(b"%d\n" % i for i in range(1, 21)) * 2
    p = run_cli(["-q", "-w", "2", "-t", "sort"], data)
    assert p.stdout == b"".join(b"%d\n" % i for i in range(1, 21))
    transform = ShellTransform("sort")
    keys = [b"1", b"2", b"3", b"4", b"5", b"6", b"7", b"8", b"10", b"9"]
    assert transform(keys) == keys  # sorting one line at a time changes nothing
    assert transform.batch_mode is False


@settings(max_examples=examples(25), deadline=None)
@given(records=st.lists(st.sampled_from(["a", "b", "c", "d"]), min_size=2, max_size=40))
def test_sort_as_a_transform_matches_the_oracle(records):
    """Per record, `sort` is the identity: the result must be that of no transform."""
    out = list(deduplicate(records, window_size=2, hash_transform="sort", batch_size=40))
    assert out == reference_output(records, 2)


# -- commands that hang, flood or leave processes behind --------------------------------


def processes_running(marker: str) -> list[str]:
    """Command lines of live processes containing ``marker`` (from /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                # (another test's process may hold any bytes in its arguments)
                cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ")
                line = cmdline.decode("utf-8", "replace")
                stat = (entry / "stat").read_bytes().decode("utf-8", "replace")
                state = stat.rsplit(")", 1)[1].split()[0]
            except OSError:
                continue
            if marker in line and state != "Z":
                found.append(line)
    return found


_SLEEPS = itertools.count()


def unique_sleep() -> str:
    """A sleep whose command line no other process has (a fractional duration made of
    this test process's id and a count: no two tests of a run share one)."""
    return f"sleep 1000.{os.getpid():07d}{next(_SLEEPS):04d}"


@pytest.mark.parametrize("moment", ["running", "just started"])
def test_a_command_running_when_the_program_exits_is_ended_on_the_way_out(moment):
    """Whatever way the program leaves while a transform runs (here: the main thread
    exits while another thread waits on the command, so no ``finally`` of the call
    runs), the exit handler ends the command's process group; also when the program
    leaves between the command's start and its registration (the thread is held there
    until the exit has begun)."""
    sleep = unique_sleep()
    hold = (  # (a hook on the start: the program's exit begins before it returns)
        "import atexit, subprocess\n"
        "gate, start = threading.Event(), subprocess.Popen\n"
        "def held(*args, **kwargs):\n"
        "    proc = start(*args, **kwargs)\n"
        "    atexit.register(gate.set)\n"  # (the last registered: the first to run)
        "    print('started', flush=True)\n"
        "    gate.wait()\n"
        "    return proc\n"
        "subprocess.Popen = held\n"
    )
    program = (  # (the sleep comes through the environment: only the sleep shows it)
        "import os, sys, threading\n"
        "from seqdedup.keys.maker import ShellTransform\n"
        + (hold if moment == "just started" else "")
        + "transform = ShellTransform(os.environ['TRANSFORM'], timeout=None)\n"
        "threading.Thread(target=transform._run, args=(b'a\\n',), daemon=True).start()\n"
        + ("print('started', flush=True)\n" if moment == "running" else "")
        + "sys.stdin.read()\n"  # (until the test has seen the sleep)
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", program],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        env={**user_env(), "TRANSFORM": f"{sleep}; cat"},
    )
    assert proc.stdout is not None and proc.stdin is not None
    assert proc.stdout.readline() == b"started\n"
    wait_until(lambda: processes_running(sleep), "the transform's start")
    proc.stdin.close()
    assert proc.wait(timeout=HANG_GUARD) == 0
    wait_until(lambda: not processes_running(sleep), "the end of the transform")


def test_a_hanging_command_times_out_and_is_ended():
    sleep = unique_sleep()
    transform = ShellTransform(f"{sleep}; cat", timeout=0.5)
    with pytest.raises(SeqdedupError, match=r"took more than 0.5 s .*--transform-timeout"):
        transform([b"a", b"b"])  # (a sleep of 1,000 s: only the timeout ends it)
    wait_until(lambda: not processes_running(sleep), "the end of the transform")


def test_a_flooding_command_is_stopped_at_a_bound():
    with pytest.raises(SeqdedupError, match=r"printed more than .* one line per record"):
        ShellTransform("yes")([b"a", b"b"])


def test_large_batches_are_written_and_read_at_once():
    # Far more than a pipe holds, both ways: writing all before reading would deadlock.
    records = [b"record %d " % i + b"x" * 200 for i in range(40_000)]
    transform = ShellTransform("cat")
    assert transform(records) == records and transform.batch_mode is True


def test_what_a_finished_command_left_running_is_ended():
    sleep = unique_sleep()
    transform = ShellTransform(f"({sleep} >/dev/null 2>&1 &); cat")
    assert transform([b"a", b"b"]) == [b"a", b"b"]
    wait_until(lambda: not processes_running(sleep), "the end of the transform")


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_stopped_run_ends_the_command_too(signum):
    """The first signal asks the run to stop, which waits for the keys of what was read;
    the command hangs: a second signal (another one, so that the two cannot merge)
    ends the run at once, and the command's processes with it."""
    other = signal.SIGINT if signum == signal.SIGTERM else signal.SIGTERM
    sleep = unique_sleep()
    # The command comes through the environment, so that only the sleep itself (not
    # seqdedup's own command line) shows the marker.
    proc = subprocess.Popen(
        [*seqdedup_command(), "-q", "-t", 'eval "$TRANSFORM"'],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**user_env(), "TRANSFORM": f"{sleep}; cat"},
    )
    proc.stdin.write(b"a\nb\n")
    proc.stdin.close()
    wait_until(lambda: processes_running(sleep), "the transform's start")
    proc.send_signal(signum)
    proc.send_signal(other)
    proc.wait(timeout=30)
    err = proc.stderr.read()
    proc.stdout.close()
    proc.stderr.close()
    assert proc.returncode in (128 + signum, 128 + other)  # (the one handled second)
    assert b"Traceback" not in err
    wait_until(lambda: not processes_running(sleep), "the end of the transform")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["-t", "cat", "--transform-timeout", "-1"], b"--transform-timeout must be 0 or"),
        (["-t", "cat", "--transform-timeout", "nan"], b"--transform-timeout must be 0 or"),
        (["--transform-timeout", "5"], b"--transform-timeout requires --hash-transform"),
        (["-t", "sleep 30", "--transform-timeout", "0.3"], b"took more than 0.3 s"),
    ],
)
def test_transform_limits_on_the_command_line(run_cli, args, message):
    result = run_cli(["-q", *args], b"a\nb\n")
    assert result.returncode == 1 and result.stdout == b""
    assert result.stderr.count(b"\n") == 1 and message in result.stderr


@pytest.mark.slow
def test_no_time_limit_with_zero(run_cli):
    result = run_cli(
        ["-q", "-w", "1", "-t", "sleep 0.2; cat", "--transform-timeout", "0"], b"a\na\n"
    )
    assert (result.returncode, result.stdout) == (0, b"a\n")


@pytest.mark.parametrize(
    "command",
    [
        "cat; echo extra",  # more lines than records: each record is run alone
        "printf '\\377\\376'; cat",  # invalid UTF-8 in the keys: they are bytes
    ],
)
def test_odd_transform_output_keeps_the_rule(run_cli, command):
    data = b"".join(b"%s\n" % k for k in b"a b a b c a b c d".split())
    plain = run_cli(["-q", "-w", "2"], data)
    result = run_cli(["-q", "-w", "2", "-t", command], data)
    assert (result.returncode, result.stderr) == (0, b"")
    # Both commands keep equal records equal and different ones different.
    assert result.stdout == plain.stdout == b"a\nb\nc\nd\n"
