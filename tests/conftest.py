import contextlib
import io
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

# Property-based tests: a quick profile while working (a fifth of each test's examples,
# 20 where a test names none), the full one where CI=true (CI sets it): the same
# command, `python -m pytest`, either way.
FULL = os.environ.get("CI", "").strip().lower() in ("1", "true", "yes")
# Hunting for new failures: random examples, the written counts (see below).
EXPLORE = os.environ.get("SEQDEDUP_EXPLORE", "").strip().lower() in ("1", "true", "yes")


def examples(count: int) -> int:
    """A test's number of Hypothesis examples under the profile in use: the written
    count while exploring (SEQDEDUP_EXPLORE=1, below); a third of it where CI=true (at
    least 10: the suite's 3 minutes on 2 cores); a fifth of it otherwise (at least 10).
    (Derandomised, a run draws the same examples each time: more of them in every run
    find less than the written count drawn anew while exploring.)"""
    if EXPLORE:
        return count
    return max(10, count // 3 if FULL else count // 5)


def needs(present: bool, reason: str) -> pytest.MarkDecorator:
    """A test that needs a system part (a program, a runtime): skipped, with ``reason``
    naming what is missing, wherever it is missing, so that the README's command is
    green on any clone. CI cannot skip by accident: ``.ci/run`` installs each part and
    checks it is there before the suite starts."""
    return pytest.mark.skipif(not present, reason=f"missing: {reason}")


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """``-n auto``: one worker more than the cores, since some tests spend their time
    waiting on a real process (a browser, a server, a killed run). On 2 cores (the suite
    of 2026-12-07): 2 workers 194 s (343 CPU-s), 3 workers 184 s (339 CPU-s), 4 workers
    196 s (367 CPU-s: each worker collects the suite and starts its own clusters)."""
    return len(os.sched_getaffinity(0)) + 1


# Fixtures that start something costly once per module on each worker that runs one of
# their tests (a Dask cluster: 3.7 CPU-s; a browser): their tests run one after another
# on one worker, so that the run starts each once.
SHARED_STARTS = ("real_cluster", "browser")


def slow_ones_first(items: list[pytest.Item], workers: int) -> list[pytest.Item]:
    """The order in which the workers get the tests: xdist hands each worker an equal
    share of the list in one piece, and each share here begins with its part of the slow
    tests, dealt in turn. The slow tests run first, side by side, with quick work left to
    fill in around them: no worker ends the run alone on a long test. The tests of each
    of SHARED_STARTS open one worker's share, together (a worker that runs out of tests
    takes them from the end of another's share, never from its start)."""
    groups = [
        [item for item in items if name in getattr(item, "fixturenames", ())]
        for name in SHARED_STARTS
    ]
    grouped = {id(item) for group in groups for item in group}
    slow = [item for item in items if "slow" in item.keywords and id(item) not in grouped]
    quick = [item for item in items if "slow" not in item.keywords and id(item) not in grouped]
    heads: list[list[pytest.Item]] = [[] for _ in range(workers)]
    for k, group in enumerate(groups):
        heads[k % workers] += group
    ordered: list[pytest.Item] = []
    left = len(items)
    for k in range(workers):
        share = left // (workers - k)  # (the split xdist makes)
        left -= share
        mine = heads[k] + slow[k::workers]
        take = max(share - len(mine), 0)
        ordered += mine + quick[:take]
        del quick[:take]
    return ordered + quick


def _on_another_engine(item: pytest.Item) -> bool:
    callspec = getattr(item, "callspec", None)
    engine = callspec.params.get("engine") if callspec is not None else None
    return "one_engine" in item.keywords and engine not in (None, ENGINES[0])


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    """The package's bytecode written once, before any worker starts: an editable install
    has none, and where PYTHONDONTWRITEBYTECODE is set (this machine sets it) each of the
    ~300 commands the suite starts would compile every module it imports (a budget run
    of one line: 0.19 CPU-s uncompiled, 0.10 compiled)."""
    if not hasattr(config, "workerinput"):  # (the controller, or a run without workers)
        import compileall

        # (quiet: a tree it cannot write to runs as before, compiling in each command)
        compileall.compile_dir(Path(__file__).parent.parent / "src" / "seqdedup", quiet=2)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests marked ``slow`` (whole builds, sanitizers, real clusters, bombs, killed
    runs: seconds each) run where CI=true; while working they are skipped, so that
    the quick run stays quick. ``pytest -m slow`` with CI=true runs only them. A test
    marked ``one_engine`` in a module run per engine runs on the first engine only."""
    other = [item for item in items if _on_another_engine(item)]
    if other:
        config.hook.pytest_deselected(items=other)
        items[:] = [item for item in items if not _on_another_engine(item)]
    if FULL:
        items[:] = slow_ones_first(items, getattr(config, "workerinput", {}).get("workercount", 1))
        return
    skip = pytest.mark.skip(reason="a slow whole-system test: CI=true runs it")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)


from hypothesis import settings as _hypothesis_settings  # noqa: E402

# Every run of the suite is the same run: Hypothesis derandomised (its examples drawn from
# a seed fixed by each test's source, so a test that passes here passes on every clone),
# and no example database (an example saved by an earlier run is never replayed into a
# later one). ``SEQDEDUP_EXPLORE=1`` turns both back on, with every test's written number
# of examples, while hunting for new failures; a failure found that way is kept as an
# ``@example`` in the test, not in a database. (A test that names no number: 100.) No
# deadline: an example's duration is the machine's load, never the test's verdict
# (Hypothesis's own CI profile has none; a run outside CI had its default, 200 ms).
_SAME_RUN = {"deadline": None} | ({} if EXPLORE else {"derandomize": True, "database": None})
_hypothesis_settings.register_profile("quick", max_examples=20, print_blob=True, **_SAME_RUN)
_hypothesis_settings.register_profile(
    "full", max_examples=examples(100), print_blob=True, **_SAME_RUN
)
_hypothesis_settings.load_profile("full" if FULL or EXPLORE else "quick")


# The commands the tests start take the signals the tests send, however the suite was
# started: a shell starts a background job (`pytest &` in a script) with SIGINT and
# SIGQUIT ignored, `nohup` ignores SIGHUP, and an ignored signal stays ignored in every
# program started. A handler is reset to the default in each program started, so one
# that does nothing keeps this process as it was asked to be and its commands as users
# run them.
def _ignored_here(signum: int, frame: object) -> None:
    """Stands for SIG_IGN in this process only (see above)."""


for _signum in (signal.SIGINT, signal.SIGQUIT, signal.SIGHUP):
    if signal.getsignal(_signum) == signal.SIG_IGN:
        signal.signal(_signum, _ignored_here)

# Never the real user's settings file: every run in the tests (in this process and the
# commands it starts) looks for one in an empty directory of its own.
os.environ["XDG_CONFIG_HOME"] = tempfile.mkdtemp(prefix="seqdedup-tests-config-")


def seqdedup_command() -> list[str]:
    """The installed console script next to this interpreter (falls back to -m)."""
    script = Path(sys.executable).parent / "seqdedup"
    if script.exists():
        return [str(script)]
    found = shutil.which("seqdedup")
    return [found] if found else [sys.executable, "-m", "seqdedup"]


def library_command() -> list[str]:
    """The installed ``seqdedup-library`` next to this interpreter (falls back to -m)."""
    script = Path(sys.executable).parent / "seqdedup-library"
    return [str(script)] if script.exists() else [sys.executable, "-m", "seqdedup.cli.library"]


def user_env() -> dict[str, str]:
    """The environment a user has: no PYTHONUNBUFFERED hiding buffering bugs."""
    env = dict(os.environ)
    env.pop("PYTHONUNBUFFERED", None)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


HANG_GUARD = 60.0  # seconds: only ever reached by a test that fails (it hangs instead)


def wait_until(condition: Callable[[], object], what: str = "the event") -> None:
    """Until ``condition()`` holds: an event the test waits for (a file written, a
    process started or gone, a thread's work done). The hang guard only fails a test
    whose event never comes."""
    import time

    deadline = time.monotonic() + HANG_GUARD
    while not condition():
        assert time.monotonic() < deadline, f"{what} never came"
        time.sleep(0.005)


def arrived(fd: int, size: int, timeout: float = HANG_GUARD) -> bytes:
    """The next ``size`` bytes a pipe receives (fewer only at its end, or when nothing
    comes before the hang guard: the test then fails on what it got). Waits for an
    event, never for a guessed time."""
    import select
    import time

    got, deadline = b"", time.monotonic() + timeout
    while len(got) < size:
        if not select.select([fd], [], [], max(0.0, deadline - time.monotonic()))[0]:
            return got
        chunk = os.read(fd, size - len(got))
        if not chunk:
            return got
        got += chunk
    return got


def arrived_lines(fd: int, count: int, timeout: float = HANG_GUARD) -> bytes:
    """The next ``count`` lines a pipe receives (as ``arrived``)."""
    got = b""
    while got.count(b"\n") < count:
        more = arrived(fd, 1, timeout)
        if not more:
            return got
        got += more
    return got


def pending(fd: int) -> bytes:
    """What a pipe holds right now (nothing waited for)."""
    import fcntl
    import termios

    held = bytearray(4)
    fcntl.ioctl(fd, termios.FIONREAD, held)
    size = int.from_bytes(held, sys.byteorder)
    return os.read(fd, size) if size else b""


# System calls in which a process waits for input (x86_64 and aarch64 numbers): read,
# poll, select, pselect6, ppoll, epoll_wait, epoll_pwait.
_INPUT_WAITS = {"x86_64": {0, 7, 23, 270, 271, 232, 281}, "aarch64": {63, 73, 72, 22}}
# ... and in which any other thread sleeps: those, and futex, nanosleep, wait4, clock_nanosleep.
_SLEEPS = {"x86_64": {202, 35, 61, 230}, "aarch64": {98, 101, 260, 115}}


def between_looks(pid: int) -> bool:
    """Whether the main thread of process ``pid`` sleeps (nanosleep, clock_nanosleep): a
    follower that has looked at its file and waits for the next look."""
    import contextlib
    import platform

    naps = {"x86_64": {35, 230}, "aarch64": {101, 115}}[platform.machine()]
    with contextlib.suppress(OSError):
        call = Path(f"/proc/{pid}/syscall").read_text().split()[0]
        return call.isdigit() and int(call) in naps
    return False


def main_thread(pid: int) -> tuple[int | None, int]:
    """Process ``pid``'s main thread: the system call it waits in (None while it runs)
    and its context switches so far (a thread woken by a signal or input switches)."""
    task = Path(f"/proc/{pid}/task/{pid}")
    call = (task / "syscall").read_text().split()[0]
    fields = dict(line.split(":", 1) for line in (task / "status").read_text().splitlines())
    switches = int(fields["voluntary_ctxt_switches"]) + int(fields["nonvoluntary_ctxt_switches"])
    return (int(call) if call.isdigit() else None), switches


def waits_for_input(pid: int) -> bool:
    """Whether process ``pid``'s main thread waits in a read, poll or select."""
    import platform

    call, _ = main_thread(pid)
    return call in _INPUT_WAITS[platform.machine()]


def settled(proc: subprocess.Popen[bytes], timeout: float = HANG_GUARD) -> None:
    """Wait until ``proc`` has read everything written to its standard input and waits
    for more: the pipe is empty, its main thread waits in a read, poll or select and
    every other thread sleeps, twice in a row with nothing written in between. From
    then on it writes nothing until it is given input or a timer of its own runs: what
    its output holds (``pending``) is all that this input makes it write."""
    import fcntl
    import platform
    import termios
    import time

    assert proc.stdin is not None
    waits, sleeps = _INPUT_WAITS[platform.machine()], _SLEEPS[platform.machine()]
    held = bytearray(4)

    def state() -> tuple[int, ...] | None:
        fcntl.ioctl(proc.stdin.fileno(), termios.FIONREAD, held)
        if any(held):
            return None
        calls = []
        for task in sorted(Path(f"/proc/{proc.pid}/task").iterdir()):
            call = (task / "syscall").read_text().split()[0]
            if not call.isdigit():  # "running"
                return None
            calls.append((task.name == str(proc.pid), int(call)))
        if not all(c in waits if main else c in waits | sleeps for main, c in calls):
            return None
        io_fields = dict(
            line.split(": ") for line in Path(f"/proc/{proc.pid}/io").read_text().splitlines()
        )
        return int(io_fields["wchar"]), int(io_fields["syscw"])

    deadline, last = time.monotonic() + timeout, None
    while time.monotonic() < deadline:
        now = state()
        if now is not None and now == last:
            return
        last = now
        time.sleep(0.01)
    raise AssertionError(f"process {proc.pid} never settled waiting for input")


def processes() -> list[tuple[int, list[str]]]:
    """Every process (read from /proc): its pid and the fields of its stat after the
    name (state, parent, group, session, ...)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            # (a process's name may hold any bytes: fields after it are ASCII)
            text = stat.read_bytes().decode("utf-8", "replace")
            found.append((int(stat.parent.name), text.rsplit(")", 1)[1].split()))
        except OSError:
            continue
    return found


def children(pid: int) -> list[int]:
    """The processes whose parent is ``pid``."""
    return [child for child, fields in processes() if int(fields[1]) == pid]


def session_processes(session: int) -> list[str]:
    """The processes of a session (pid and state), zombies included."""
    return [f"{pid} {fields[0]}" for pid, fields in processes() if int(fields[3]) == session]


def offset_in(pid: int, path) -> int | None:
    """Where process ``pid`` reads ``path`` (its file offset, from /proc/PID/fdinfo):
    how much of the file it has read, counted by the kernel; None while it does not
    hold the file open."""
    import contextlib

    target = os.path.realpath(path)
    with contextlib.suppress(OSError):
        for fd in os.listdir(f"/proc/{pid}/fd"):
            with contextlib.suppress(OSError):
                if os.readlink(f"/proc/{pid}/fd/{fd}") == target:
                    with open(f"/proc/{pid}/fdinfo/{fd}") as info:
                        fields = dict(line.split(":", 1) for line in info if ":" in line)
                    return int(fields["pos"])
    return None


def at_its_end(pid: int, path) -> bool:
    """Whether process ``pid`` holds ``path`` open at the file's end: a follower that has
    opened the file *and* gone to its end, so what is written from now on is what it
    reads. (Opening alone is not that event: bytes written between the open and the seek
    would be skipped.) The file must not be empty, or offset 0 would say nothing.
    An offset at the end alone is not that event either: a run that reads the head of a
    short file before it follows it (``--fold`` looks for JSON records) holds the file
    at its end for a moment, and what is appended then lies before the follower's start.
    So the main thread must also sleep between two looks: the follower's first look,
    which opened the file at its end, is done."""
    size = os.path.getsize(path)
    assert size > 0, f"{path} is empty: a follower's offset would not tell its start"
    return offset_in(pid, path) == size and between_looks(pid)


def signal_taken(pid: int, signum: int, timeout: float = 20) -> None:
    """Wait until process ``pid`` has taken signal ``signum`` (no longer pending: the
    kernel ran its handler; a Python program blocked in a read runs its own handler
    right then, before the read goes on). An event, not a guess at a time."""
    import time

    bit = 1 << (signum - 1)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with open(f"/proc/{pid}/status") as status:
            fields = dict(line.split(":", 1) for line in status if ":" in line)
        pending = int(fields["SigPnd"], 16) | int(fields["ShdPnd"], 16)
        if not pending & bit:
            return
        time.sleep(0.005)
    raise AssertionError(f"process {pid} never took signal {signum}")


def live(*args: str, env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
    """The installed command reading a pipe that the test writes to (as a user runs
    ``tail -f log | seqdedup``: no PYTHONUNBUFFERED); ``env``: more variables."""
    return subprocess.Popen(
        [*seqdedup_command(), *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**user_env(), **(env or {})},
    )


def new_lines_arrive_at_once(proc: subprocess.Popen[bytes]) -> tuple[int, list[bytes]]:
    """Write 12 new lines to a live run; check that all come out at once, with the pipe
    open (new material never waits); return the output's descriptor and the lines."""
    assert proc.stdin is not None and proc.stdout is not None
    fd = proc.stdout.fileno()
    lines = [f"line {i}\n".encode() for i in range(12)]
    proc.stdin.write(b"".join(lines))
    proc.stdin.flush()
    assert arrived(fd, len(b"".join(lines))) == b"".join(lines)  # before any more input
    return fd, lines


def run_in_process(
    args: list[str], input_bytes: bytes = b"", env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[bytes]:
    """``seqdedup ARGS`` run by ``cli.main`` in this process (standard input a file
    holding ``input_bytes``, the output and messages captured), answered in
    ``subprocess.run``'s shape; ``env``: the environment during the run."""
    from seqdedup.cli import seqdedup as cli

    saved = dict(os.environ)
    try:
        if env is not None:
            os.environ.clear()
            os.environ.update(env)
        with tempfile.TemporaryFile() as stdin:
            stdin.write(input_bytes)
            stdin.seek(0)
            out, err, said = io.BytesIO(), io.StringIO(), io.StringIO()
            # (what argparse prints itself, --help and --version, goes to sys.stdout)
            with contextlib.redirect_stdout(said):
                status = cli.main([str(arg) for arg in args], stdin, out, err)
    finally:
        os.environ.clear()
        os.environ.update(saved)
    written = said.getvalue().encode() + out.getvalue()
    return subprocess.CompletedProcess(args, status, written, err.getvalue().encode())


@pytest.fixture
def run_cli():
    """``seqdedup ARGS``: in this process, unless a real process is the point
    (``process=True``, or an option only a process has: ``cwd``, ``pass_fds``, ...)."""

    def run(args, input_bytes=b"", timeout=60, process=False, **kwargs):
        if not process and set(kwargs) <= {"env"}:
            return run_in_process(args, input_bytes, kwargs.get("env"))
        return subprocess.run(
            [*seqdedup_command(), *args],
            input=input_bytes,
            capture_output=True,
            timeout=timeout,
            env=kwargs.pop("env", None) or user_env(),
            **kwargs,
        )

    return run


def kernel_built() -> bool:
    try:
        from seqdedup import _kernel  # noqa: F401
    except ImportError:
        return False
    return True


def every_engine() -> list:
    """The engine objects this install has: the Python engine, and the kernel's where it
    is built (for tests that hold the twins' answers side by side)."""
    from seqdedup.engine.choice import engine_named
    from seqdedup.engine.pyengine import PYTHON

    return [PYTHON, engine_named("c")] if kernel_built() else [PYTHON]


# Without a compiler (SEQDEDUP_NO_EXTENSION=1 at install) only the Python engine exists.
ENGINES = (
    ["c", "python"] if kernel_built() or not os.environ.get("SEQDEDUP_NO_EXTENSION") else ["python"]
)


@pytest.fixture(autouse=True)
def _no_kernel_on_the_python_engine(request):
    """A test run on the Python engine by the ``engine`` fixture: any import of the
    kernel fails in it, so a stray use of the kernel shows (a test that names its engines
    itself, or switches them, is left alone)."""
    direct = any(
        m.args and "engine" in str(m.args[0]) for m in request.node.iter_markers("parametrize")
    )
    if direct or "engine" not in request.fixturenames:
        yield
        return
    if request.getfixturevalue("engine") != "python":
        yield
        return
    import seqdedup

    kernel = sys.modules.get("seqdedup._kernel")
    sys.modules["seqdedup._kernel"] = None  # type: ignore[assignment]
    seqdedup.__dict__.pop("_kernel", None)  # (else `from seqdedup import _kernel` finds it)
    try:
        yield
    finally:
        if kernel is None:
            sys.modules.pop("seqdedup._kernel", None)
        else:
            sys.modules["seqdedup._kernel"] = kernel
            seqdedup._kernel = kernel


@pytest.fixture(scope="module", params=ENGINES)
def engine(request):
    """Run the module's tests once per engine (SEQDEDUP_ENGINE, read at each run)."""
    before = os.environ.get("SEQDEDUP_ENGINE")
    os.environ["SEQDEDUP_ENGINE"] = request.param
    yield request.param
    if before is None:
        os.environ.pop("SEQDEDUP_ENGINE", None)
    else:
        os.environ["SEQDEDUP_ENGINE"] = before
