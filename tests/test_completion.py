"""Shell completion from each command's own parser: the scripts for bash, zsh and fish,
and bash's `complete` running the generated script against the installed commands."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import needs, user_env

BIN = Path(sys.executable).parent
COMMANDS = ("seqdedup", "seqdedup-dask", "seqdedup-library", "seqdedup-expand", "seqdedup-mcp")


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_each_command_prints_a_script_for_each_shell(command, shell):
    done = subprocess.run(
        [str(BIN / command), "--print-completion", shell],
        capture_output=True,
        env=user_env(),
        timeout=60,
    )
    assert done.returncode == 0 and done.stderr == b""
    assert command.encode() in done.stdout and b"_ARGCOMPLETE" in done.stdout


def bash_completions(command: str, words: list[str]) -> list[str]:
    """What bash offers for the last word, through the generated script."""
    script = subprocess.run(
        [str(BIN / command), "--print-completion", "bash"], capture_output=True, check=True
    ).stdout.decode()
    line = " ".join([command, *words])
    before = words[-2] if len(words) > 1 else command
    words_array = " ".join(f"'{w}'" for w in [command, *words])
    probe = (
        f"{script}\n"
        f"COMP_LINE='{line}'; COMP_POINT=${{#COMP_LINE}}; COMP_WORDS=({words_array}); "
        f"COMP_CWORD={len(words)}\n"
        f"complete -p {command} >/dev/null || exit 3\n"
        f"_python_argcomplete {command} '{words[-1]}' '{before}'\n"
        'printf "%s\\n" "${COMPREPLY[@]}"\n'
    )
    env = {**user_env(), "PATH": f"{BIN}:{user_env()['PATH']}"}
    done = subprocess.run(["bash", "-c", probe], capture_output=True, env=env, timeout=60)
    assert done.returncode == 0, done.stderr
    return [word.strip() for word in done.stdout.decode().splitlines() if word.strip()]


@needs(shutil.which("bash") is not None, "bash")
def test_bash_completes_options_values_and_commands():
    assert bash_completions("seqdedup", ["--skip-f"]) == ["--skip-fields"]
    assert sorted(bash_completions("seqdedup", ["--stats-format", ""])) == ["json", "table"]
    assert sorted(bash_completions("seqdedup", ["--color", ""])) == ["always", "auto", "never"]
    assert bash_completions("seqdedup-dask", ["--output-d"]) == ["--output-dir"]
    assert bash_completions("seqdedup-library", ["pr"]) == ["prune"]
    assert bash_completions("seqdedup-expand", ["--li"]) == ["--lines"]
    assert bash_completions("seqdedup", ["--keep-rem"]) == ["--keep-removed"]
    # options the Dask engine refuses are not offered
    assert bash_completions("seqdedup-dask", ["--annot"]) == []


@needs(shutil.which("bash") is not None, "bash")
def test_bash_completes_normalisation_classes_and_the_profiles_in_effect(tmp_path, monkeypatch):
    assert sorted(bash_completions("seqdedup", ["--normalize", "t"])) == ["timestamp"]
    assert sorted(bash_completions("seqdedup", ["--normalize", "timestamp,u"])) == [
        "timestamp,uuid"
    ]
    everything = bash_completions("seqdedup", ["--normalize", ""])
    assert sorted(everything) == sorted(
        ["timestamp", "uuid", "ip", "hex", "number", "path", "quoted", "space", "all"]
    )
    xdg = tmp_path / "xdg"
    (xdg / "seqdedup").mkdir(parents=True)
    (xdg / "seqdedup" / "config.toml").write_text("[profile.k8s]\nfold = true\n")
    project = tmp_path / "project"
    project.mkdir()
    (project / ".seqdedup.toml").write_text(
        "[profile.ci]\ntop = 3\n[profile.kafka]\nquiet = true\n"
    )
    monkeypatch.setenv("XDG_CONFIG_HOME", str(xdg))
    monkeypatch.chdir(project)
    assert sorted(bash_completions("seqdedup", ["--profile", ""])) == ["ci", "k8s", "kafka", "logs"]
    assert sorted(bash_completions("seqdedup", ["--profile", "k"])) == ["k8s", "kafka"]


@needs(shutil.which("bash") is not None, "bash")
def test_bash_completes_the_stream_presets():
    assert sorted(bash_completions("seqdedup", ["--stream-by", ""])) == [
        "compose",
        "journal",
        "k8s",
        "syslog",
    ]
    assert bash_completions("seqdedup", ["--stream-by", "j"]) == ["journal"]


@needs(shutil.which("bash") is not None, "bash")
def test_bash_completes_the_loops_command_and_its_options():
    assert "loops" in bash_completions("seqdedup", ["lo"])
    assert bash_completions("seqdedup", ["loops", "--ac"]) == ["--action-key"]
    assert sorted(bash_completions("seqdedup", ["loops", "--format", ""])) == ["json", "text"]
    assert bash_completions("seqdedup", ["loops", "--fold"]) == []


def test_bash_completes_the_diff_command_and_its_options():
    assert "diff" in bash_completions("seqdedup", ["di"])
    assert bash_completions("seqdedup", ["diff", "--fac"]) == ["--factor"]
    assert sorted(bash_completions("seqdedup", ["diff", "--per", ""])) == ["auto", "hour", "input"]
    assert bash_completions("seqdedup", ["diff", "--normalize", "u"]) == ["uuid"]
    # a run's options that diff does not take are not offered after it
    assert bash_completions("seqdedup", ["diff", "--fold"]) == []
