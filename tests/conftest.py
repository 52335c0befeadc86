import contextlib
import io
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

# Property-based tests: a quick profile while working (a fifth of each test's examples,
# 20 where a test names none), the full one where CI=true (CI sets it): the same
# command, `python -m pytest`, either way.
FULL = os.environ.get("CI", "").strip().lower() in ("1", "true", "yes")


def examples(count: int) -> int:
    """A test's number of Hypothesis examples under the profile in use."""
    return count if FULL else max(10, count // 5)


def needs(present: bool, reason: str) -> pytest.MarkDecorator:
    """A test that needs a system part (a program, a runtime): skipped with ``reason``
    where it is missing while working; run anyway where CI=true, so that it fails
    there: CI installs what the tests need (.ci/run)."""
    return pytest.mark.skipif(not present and not FULL, reason=reason)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests marked ``slow`` (whole builds, sanitizers, real clusters, bombs, killed
    runs: seconds each) run where CI=true; while working they are skipped, so that
    the quick run stays quick. ``pytest -m slow`` with CI=true runs only them."""
    if FULL:
        return
    skip = pytest.mark.skip(reason="a slow whole-system test: CI=true runs it")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)


from hypothesis import settings as _hypothesis_settings  # noqa: E402

_hypothesis_settings.register_profile("quick", max_examples=20)
_hypothesis_settings.register_profile("full")
_hypothesis_settings.load_profile("full" if FULL else "quick")

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
    return [str(script)] if script.exists() else [sys.executable, "-m", "seqdedup.library_cli"]


def user_env() -> dict[str, str]:
    """The environment a user has: no PYTHONUNBUFFERED hiding buffering bugs."""
    env = dict(os.environ)
    env.pop("PYTHONUNBUFFERED", None)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def arrived(fd: int, timeout: float) -> bytes:
    """What a pipe holds within ``timeout`` seconds (and nothing more after 0.1 s)."""
    import select
    import time

    got, deadline = b"", time.monotonic() + timeout
    while True:
        wait = max(0.0, deadline - time.monotonic()) if not got else 0.1
        if not select.select([fd], [], [], wait)[0]:
            return got
        chunk = os.read(fd, 65536)
        if not chunk:
            return got
        got += chunk


def processes() -> list[tuple[int, list[str]]]:
    """Every process (read from /proc): its pid and the fields of its stat after the
    name (state, parent, group, session, ...)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            found.append((int(stat.parent.name), stat.read_text().rsplit(")", 1)[1].split()))
        except OSError:
            continue
    return found


def children(pid: int) -> list[int]:
    """The processes whose parent is ``pid``."""
    return [child for child, fields in processes() if int(fields[1]) == pid]


def session_processes(session: int) -> list[str]:
    """The processes of a session (pid and state), zombies included."""
    return [f"{pid} {fields[0]}" for pid, fields in processes() if int(fields[3]) == session]


def holds_open(pid: int, path) -> bool:
    """Whether process ``pid`` has the file ``path`` open."""
    import contextlib

    target = os.path.realpath(path)
    with contextlib.suppress(OSError):
        for fd in os.listdir(f"/proc/{pid}/fd"):
            with contextlib.suppress(OSError):
                if os.readlink(f"/proc/{pid}/fd/{fd}") == target:
                    return True
    return False


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


def live(*args: str) -> subprocess.Popen[bytes]:
    """The installed command reading a pipe that the test writes to (as a user runs
    ``tail -f log | seqdedup``: no PYTHONUNBUFFERED)."""
    return subprocess.Popen(
        [*seqdedup_command(), *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=user_env(),
    )


def new_lines_arrive_at_once(proc: subprocess.Popen[bytes]) -> tuple[int, list[bytes]]:
    """Write 12 new lines to a live run; check that all come out at once, with the pipe
    open (new material never waits); return the output's descriptor and the lines."""
    assert proc.stdin is not None and proc.stdout is not None
    fd = proc.stdout.fileno()
    lines = [f"line {i}\n".encode() for i in range(12)]
    proc.stdin.write(b"".join(lines))
    proc.stdin.flush()
    assert arrived(fd, 0.5) == b"".join(lines)
    return fd, lines


def run_in_process(
    args: list[str], input_bytes: bytes = b"", env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[bytes]:
    """``seqdedup ARGS`` run by ``cli.main`` in this process (standard input a file
    holding ``input_bytes``, the output and messages captured), answered in
    ``subprocess.run``'s shape; ``env``: the environment during the run."""
    from seqdedup import cli

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


# Without a compiler (SEQDEDUP_NO_EXTENSION=1 at install) only the Python engine exists.
ENGINES = (
    ["c", "python"] if kernel_built() or not os.environ.get("SEQDEDUP_NO_EXTENSION") else ["python"]
)


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
