"""`seqdedup loops --hook`: sessions synthesised from Claude Code's hook payloads (the
calls of the sample transcript in tests/data/transcripts), warnings and blocks, failing
open, the state file (0600, no link followed, bounded, two hooks at once)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from seqdedup.loops.hook import KEPT, SessionState, hook_event, judge, seen_call, state_dir

from conftest import examples, seqdedup_command, user_env

HOOK = [{"matcher": "*", "hooks": [{"type": "command", "command": "seqdedup loops --hook"}]}]
SETTINGS = {"hooks": {"PreToolUse": HOOK, "PostToolUse": HOOK}}  # (as docs/loops.md gives)


def event(name: str, tool: str, tool_input: dict, response: object = None, session="s1") -> dict:
    """A hook event as Claude Code sends it (PreToolUse has no tool_response)."""
    out = {
        "session_id": session,
        "transcript_path": "/home/u/.claude/projects/p/s1.jsonl",
        "cwd": "/home/u/p",
        "hook_event_name": name,
        "tool_name": tool,
        "tool_input": tool_input,
    }
    if name == "PostToolUse":
        out["tool_response"] = response
    return out


EDIT = ("Edit", {"file_path": "/tmp/decorator_example.py", "old_string": "a", "new_string": "b"})
RUN = ("Bash", {"command": "python /tmp/decorator_example.py", "description": "Run it"})
EDITED = {"filePath": "/tmp/decorator_example.py", "content": "File created successfully"}
FAILED = {"stdout": "", "stderr": "NameError: name 'greet' is not defined", "interrupted": False}


@pytest.fixture
def hook(run_cli, tmp_path, monkeypatch):
    """``seqdedup loops --hook ARGS`` with an event on stdin, in this process."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))

    def call(payload: dict, *args: str):
        return run_cli(["loops", "--hook", *args], json.dumps(payload).encode())

    return call


def _round(hook, *args: str) -> list:
    """One edit-then-run round: each call judged, then recorded; the answers."""
    answers = []
    for (tool, tool_input), response in ((EDIT, EDITED), (RUN, FAILED)):
        answers.append(hook(event("PreToolUse", tool, tool_input), *args))
        hook(event("PostToolUse", tool, tool_input, response))
    return answers


def test_the_third_round_of_the_same_calls_with_the_same_results_is_warned_of(hook):
    """An edit and a run that fails the same way, round after round: the third round's
    calls get a warning for the model (in the host's JSON); the first two do not."""
    rounds = [_round(hook) for _ in range(3)]
    for answers in rounds[:2]:
        assert [(a.returncode, a.stdout, a.stderr) for a in answers] == [(0, b"", b"")] * 2
    warned = rounds[2][0]
    assert (warned.returncode, warned.stderr) == (0, b"")
    said = json.loads(warned.stdout)["hookSpecificOutput"]
    assert said["hookEventName"] == "PreToolUse"
    assert said["additionalContext"].startswith("seqdedup loops: this call would make round 3")
    # (the round ends with the edit; the run between is named with it)
    assert "Bash: python /tmp/decorator_example.py" in said["additionalContext"]
    assert "Edit: file_path=" in said["additionalContext"]


def test_block_refuses_only_a_loop(hook):
    for _ in range(2):
        assert all(a.returncode == 0 for a in _round(hook, "--block"))
    blocked = hook(event("PreToolUse", *EDIT), "--block")
    assert (blocked.returncode, blocked.stdout) == (2, b"")
    assert blocked.stderr.decode().count("\n") == 1 and "round 3" in blocked.stderr.decode()
    other = hook(event("PreToolUse", "Bash", {"command": "git diff"}), "--block")
    assert (other.returncode, other.stdout, other.stderr) == (0, b"", b"")


def test_progress_is_not_warned_of(hook):
    """The same run after each edit, its result changing: progress."""
    for k in range(6):
        edit = {**EDIT[1], "new_string": f"fix {'abcdef'[k]}"}  # (numbers would be masked)
        assert hook(event("PreToolUse", "Edit", edit)).stdout == b""
        hook(event("PostToolUse", "Edit", edit, EDITED))
        assert hook(event("PreToolUse", *RUN)).stdout == b""
        hook(event("PostToolUse", *RUN, {"stdout": "", "stderr": f"failure {'abcdef'[k]}"}))


def test_sessions_are_kept_apart(hook):
    for _ in range(2):
        _round(hook)
    other = hook(event("PreToolUse", *EDIT, session="s2"))
    assert other.stdout == b""


@pytest.mark.parametrize(
    ("payload", "said"),
    [
        (b"not json", "JSONDecodeError"),
        (b"[1, 2]", "the hook event is not a JSON object"),
        (b'{"hook_event_name": "PreToolUse"}', "the hook event has no session_id or tool_name"),
        (b'{"session_id": "s", "tool_name": "Bash", "hook_event_name": "Stop"}', "neither"),
    ],
)
def test_any_error_fails_open_with_one_line(run_cli, tmp_path, monkeypatch, payload, said):
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    done = run_cli(["loops", "--hook"], payload)
    assert (done.returncode, done.stdout) == (0, b"")
    err = done.stderr.decode()
    assert err.count("\n") == 1 and said in err and err.endswith("(the call goes ahead)\n")


def test_an_unusable_state_fails_open(run_cli, tmp_path, monkeypatch):
    """A state directory that is a file: the call goes ahead, said in one line."""
    (tmp_path / "state").write_text("a file")
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    done = run_cli(["loops", "--hook"], json.dumps(event("PreToolUse", *RUN)).encode())
    assert (done.returncode, done.stdout) == (0, b"")
    assert done.stderr.decode().count("\n") == 1


def test_the_state_is_private_and_no_link_is_followed(tmp_path):
    folder = tmp_path / "loops"
    hook_event(event("PostToolUse", *RUN, FAILED), folder)
    (path,) = folder.iterdir()
    assert path.stat().st_mode & 0o777 == 0o600
    assert folder.stat().st_mode & 0o777 == 0o700
    target = tmp_path / "elsewhere"
    target.write_text("keep")
    path.unlink()
    path.symlink_to(target)
    with pytest.raises(Exception, match="cannot open the loop state"):
        hook_event(event("PostToolUse", *RUN, FAILED), folder)
    assert target.read_text() == "keep"


def test_a_state_folder_that_is_a_link_or_open_to_others_is_refused(tmp_path):
    """The state folder is followed nowhere: a link in its place (another user's
    folder, say) or a folder others may write is an error, and no state is written."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(mode=0o700)
    linked = tmp_path / "linked"
    linked.symlink_to(elsewhere)
    with pytest.raises(Exception, match="not a folder of this user's"):
        hook_event(event("PostToolUse", *RUN, FAILED), linked)
    assert list(elsewhere.iterdir()) == []
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    with pytest.raises(Exception, match="not a folder of this user's"):
        hook_event(event("PostToolUse", *RUN, FAILED), shared)
    assert list(shared.iterdir()) == []


def test_the_work_per_call_stops_growing():
    """Counted work: the calls compared to judge the 288th, the 576th and the 10,000th
    call of a session (a cycle of 8 commands whose results come round every 24 calls;
    the history the state keeps: the last KEPT calls) are the same: past KEPT calls, a
    session's length no longer counts."""
    from seqdedup.loops import hook as hook_module

    finders: list = []
    real = hook_module.LoopFinder

    class Counting(real):  # type: ignore[misc, valid-type]
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            finders.append(self)

    history, counted = [], {}
    hook_module.LoopFinder = Counting  # type: ignore[misc]
    try:
        for k in range(1, 10_001):
            action, result = f"step {'abcdefgh'[k % 8]}", f"ran {'xyz'[(k // 8) % 3]}"
            if k in (288, 576, 10_000):  # (judging every call is the same work, 30x over)
                finders.clear()
                judge(history[-KEPT:], "Bash", action)
                counted[k] = sum(f.comparisons for f in finders)
            history.append(seen_call("Bash", action, result))
    finally:
        hook_module.LoopFinder = real  # type: ignore[misc]
    assert counted[288] == counted[576] == counted[10_000] > 0


def test_the_state_keeps_the_last_calls_only(tmp_path):
    folder = tmp_path / "loops"
    for k in range(KEPT + 30):
        hook_event(event("PostToolUse", "Bash", {"command": f"echo {k}"}, "x"), folder)
    with SessionState(folder, "s1") as state:
        assert len(state.calls) == KEPT
        assert state.calls[-1] == seen_call("Bash", f"echo {KEPT + 29}", "x")


def test_two_hooks_at_once_lose_no_call(tmp_path):
    """Two real hook processes recording calls of one session at the same time: every
    call is kept (the state is locked while it is read and written)."""
    env = {**user_env(), "XDG_STATE_HOME": str(tmp_path / "state")}
    script = (
        "import json, subprocess, sys\n"
        "for k in range(8):\n"
        "    e = {'session_id': 's', 'hook_event_name': 'PostToolUse', 'tool_name': 'Bash',\n"
        "         'tool_input': {'command': sys.argv[2] + str(k)}, 'tool_response': 'x'}\n"
        "    subprocess.run([*json.loads(sys.argv[1]), 'loops', '--hook'],\n"
        "                   input=json.dumps(e).encode(), check=True)\n"
    )
    command = json.dumps(seqdedup_command())
    writers = [
        subprocess.Popen([sys.executable, "-c", script, command, name], env=env)
        for name in ("one ", "two ")
    ]
    assert [w.wait(timeout=120) for w in writers] == [0, 0]
    with SessionState(state_dir(env), "s") as state:
        assert len(state.calls) == 16


def test_the_documented_settings_snippet_is_this_one():
    text = (Path(__file__).parent.parent / "docs" / "loops.md").read_text()
    snippet = text.split("```json\n", 1)[1].split("```", 1)[0]
    assert json.loads(snippet) == SETTINGS


def _oracle_warns(calls: list, tool: str, action: str) -> bool:
    """The literal reading of PreToolUse: some earlier call with the same tool and
    masked input, its result given to the upcoming call, makes the rule's oracle report
    a loop holding the upcoming call."""
    from seqdedup import Call
    from seqdedup.config.normalize import ALL
    from seqdedup.loops.calls import masked
    from test_loops import oracle

    wanted = (tool, masked(action, ALL))
    for earlier in calls:
        if (earlier.tool, masked(earlier.action, ALL)) != wanted:
            continue
        upcoming = Call(tool, action, earlier.result, status=earlier.status)
        last = len(calls)
        if any(p1 <= last <= p2 for _, _, p1, p2 in oracle([*calls, upcoming])):
            return True
    return False


def test_the_hooks_verdict_is_the_oracles():
    """Random sessions over small alphabets: the hook warns exactly when the oracle
    says the call would go round a loop."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from seqdedup import Call
    from test_loops import ACTIONS, RESULTS

    call = st.builds(Call, st.just("bash"), st.sampled_from(ACTIONS), st.sampled_from(RESULTS))

    @settings(max_examples=examples(300), deadline=None)
    @given(calls=st.lists(call, max_size=12), action=st.sampled_from(ACTIONS))
    def check(calls, action):
        history = [seen_call(c.tool, c.action, c.result, status=c.status) for c in calls]
        warned = judge(history, "bash", action).loop is not None
        assert warned == _oracle_warns(calls, "bash", action)

    check()


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--frob"], "--hook takes --block and --normalize only, not '--frob'"),
        (["run.traj"], "not 'run.traj'"),
        (["--normalize"], "--normalize needs its classes"),
        (["--normalize", "colour"], "colour"),
    ],
)
def test_the_hooks_own_words_fail_open_too(hook, args, said):
    done = hook(event("PreToolUse", *RUN), *args)
    assert (done.returncode, done.stdout) == (0, b"")
    err = done.stderr.decode()
    assert err.count("\n") == 1 and said in err and err.endswith("(the call goes ahead)\n")


def test_the_hooks_normalize_none_tells_numbers_apart(hook):
    """Three runs that fail after a different number of seconds, recorded and judged
    with one --normalize (a session's state holds digests made with it): masked (the
    default) they are one loop of three rounds and the next run would be round 4; with
    --normalize none only the next run and the last one, the same bytes back to back,
    would make a loop (of 2 rounds)."""
    for session, words, said in (("a", [], b"round 4 "), ("n", ["--normalize=none"], b"round 2 ")):
        for k in range(3):
            response = {"stdout": "", "stderr": f"failed after {k} s"}
            hook(event("PostToolUse", *RUN, response, session=session), *words)
        assert said in hook(event("PreToolUse", *RUN, session=session), *words).stdout
