"""Settings files and profiles, end to end through the installed command: which files
are read and in which order, the command line over them, one-line errors naming the
file, the key and its line. (conftest points XDG_CONFIG_HOME at an empty directory:
the real user's file is never read.)"""

from __future__ import annotations

import argparse
import os
import subprocess
from pathlib import Path

import pytest

from conftest import run_in_process, seqdedup_command, user_env

DATA = b"a\nb\nc\na\nb\nc\nd\n"


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """A working directory with an input, and a user config directory of its own."""
    (tmp_path / "in.log").write_bytes(DATA)
    (tmp_path / "xdg" / "seqdedup").mkdir(parents=True)
    return tmp_path


def run(home: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    """``seqdedup ARGS`` in ``home`` with its user settings folder, in this process (the
    files it reads are the point, not the process)."""
    env = {**user_env(), "XDG_CONFIG_HOME": str(home / "xdg")}
    before = os.getcwd()
    os.chdir(home)
    try:
        return run_in_process(list(args), env=env)
    finally:
        os.chdir(before)


def user_file(home: Path) -> Path:
    return home / "xdg" / "seqdedup" / "config.toml"


def test_no_file_changes_nothing(home):
    assert run(home, "-q", "in.log").stdout == DATA  # the default window (10) finds nothing


def test_the_project_file_wins_over_the_user_file_and_the_command_line_over_both(home):
    user_file(home).write_text("window-size = 2\nquiet = true\n")
    assert run(home, "in.log").stdout == b"a\nb\nc\nd\n"  # the user's W=2
    (home / ".seqdedup.toml").write_text("window-size = 4\n")
    assert run(home, "in.log").stdout == DATA  # the project's W=4 (the user's quiet stays)
    done = run(home, "-w", "3", "in.log")
    assert done.stdout == b"a\nb\nc\nd\n" and done.stderr == b""


LOGHUB = Path(__file__).resolve().parent / "data" / "loghub"


def test_the_built_in_logs_profile(home):
    """``--profile logs`` without any file: -w auto, --normalize all, --fold; a file's
    own [profile.logs] table refines it, the command line over both; --show-config says
    where each comes from."""
    log = home / "hdfs.log"
    log.write_bytes((LOGHUB / "HDFS_2k.log").read_bytes())
    preset = run(home, "-q", "--profile", "logs", "hdfs.log")
    spelled = run(home, "-q", "-w", "auto", "--normalize", "all", "--fold", "hdfs.log")
    assert preset.returncode == 0 and preset.stdout == spelled.stdout
    assert b"[FOLDED: " in preset.stdout
    shown = run(home, "--profile", "logs", "--show-config=changed").stdout.decode()
    assert 'window-size = "auto"  # the built-in profile' in shown
    assert "fold = true  # the built-in profile, 'fold'" in shown
    (home / ".seqdedup.toml").write_text("[profile.logs]\nwindow-size = 3\n")
    shown = run(home, "--profile", "logs", "--show-config=changed").stdout.decode()
    assert "window-size = 3  # config file '.seqdedup.toml', line 2" in shown
    assert 'normalize = ["all"]  # the built-in profile' in shown
    shown = run(home, "--profile", "logs", "-w", "5", "--show-config=changed").stdout.decode()
    assert "window-size = 5  # the command line" in shown


def test_an_option_that_needs_a_profiles_switch_takes_it_from_the_profile(home):
    """--fold-idle on the command line with the profile's fold (the live-file recipe):
    no error; without any fold, and a bad value, the command line's own error."""
    done = run(home, "-q", "--profile", "logs", "--fold-idle", "2", "in.log")
    assert (done.returncode, done.stderr) == (0, b"")
    alone = run(home, "-q", "--fold-idle", "2", "in.log")
    assert alone.returncode == 1 and alone.stderr == b"seqdedup: --fold-idle requires --fold\n"
    bad = run(home, "-q", "--profile", "logs", "--fold-idle", "-2", "in.log")
    assert bad.stderr == b"seqdedup: --fold-idle must be 0 or more, got -2\n"


def test_the_logs_profile_removes_what_the_spelled_out_options_remove_on_real_logs(home):
    """On each real log of tests/data/loghub, ``--profile logs`` removes at least 90% of
    what ``-w auto --normalize all`` removes (the quick start's promise)."""
    for path in sorted(LOGHUB.glob("*_2k.log")):
        plain = run(home, "-q", "-w", "auto", "--normalize", "all", str(path))
        preset = run(home, "-q", "--profile", "logs", "--no-fold", str(path))
        total = len(path.read_bytes().splitlines())
        removed = total - plain.stdout.count(b"\n")
        by_preset = total - preset.stdout.count(b"\n")
        assert by_preset >= 0.9 * removed > 0, (path.name, by_preset, removed)


def test_a_profile_applies_over_its_file(home):
    (home / ".seqdedup.toml").write_text(
        "window-size = 3\nquiet = true\n\n[profile.marks]\nannotate = true\nquiet = false\n"
        'annotation-format = "M {start}-{end}"\n'
    )
    assert run(home, "in.log").stdout == b"a\nb\nc\nd\n"
    done = run(home, "--profile", "marks", "in.log")
    assert done.stdout == b"a\nb\nc\nM 4-6\nd\n"
    assert b"Window size" in done.stderr  # quiet = false in the profile: statistics shown
    missing = run(home, "--profile", "nope", "in.log")
    assert missing.returncode == 1 and missing.stdout == b""
    assert (
        missing.stderr == b"seqdedup: --profile nope: no [profile.nope] table in .seqdedup.toml\n"
    )


def test_the_command_line_replaces_a_list_as_a_whole(home):
    data = b"x1 a\nx2 b\nx3 a\nx4 b\ny\n"
    (home / "ids.log").write_bytes(data)
    (home / ".seqdedup.toml").write_text('window-size = 2\nquiet = true\nmask = ["^x\\\\d "]\n')
    assert run(home, "ids.log").stdout == b"x1 a\nx2 b\ny\n"  # the file's mask
    assert run(home, "--mask", "^zzz", "ids.log").stdout == data  # replaced, not added


def test_config_names_the_one_file_and_no_config_reads_none(home):
    user_file(home).write_text("window-size = 3\nquiet = true\n")
    other = home / "other.toml"
    other.write_text("quiet = true\n")
    assert run(home, "--config", "other.toml", "in.log").stdout == DATA  # not the user's W
    done = run(home, "--no-config", "-w", "3", "in.log")
    assert done.stdout == b"a\nb\nc\nd\n" and b"Window size" in done.stderr


def test_show_config_says_every_value_in_effect_and_where_it_comes_from(home):
    user_file(home).write_text("window-size = 3\n")
    (home / ".seqdedup.toml").write_text(
        "quiet = true\n\n[profile.k8s]\nwindow-size = 5\nfold = true\nfold-every = 9\n"
        "[profile.ci]\ntop = 3\n"
    )
    done = run(home, "--profile", "k8s", "--show-config", "--quiet", "--no-fold")
    assert done.returncode == 0 and done.stderr == b""
    lines = done.stdout.decode().splitlines()
    assert lines[0] == f"# files read: {user_file(home)}, .seqdedup.toml"
    assert lines[1] == "# profile: k8s (in the files: k8s, ci; built in: logs)"
    where = "config file '.seqdedup.toml', line"
    assert f"window-size = 5  # {where} 4, 'window-size'" in lines  # the profile's
    assert "quiet = true  # the command line" in lines
    assert "fold = false  # the command line" in lines
    assert "# fold-every: not set  # --no-fold" in lines  # dropped with --fold
    assert "annotate = false  # default" in lines and "top = 0  # default" in lines
    assert 'stats-format = "table"  # default' in lines
    assert f"# replaced by --no-fold: fold-every = 9  # {where} 6, 'fold-every'" in lines
    assert f"# replaced by the command line: quiet = true  # {where} 1, 'quiet'" in lines
    replaced = [line for line in lines if line.startswith("# replaced by a later setting: ")]
    assert replaced == [
        f"# replaced by a later setting: window-size = 3  # config file '{user_file(home)}', "
        "line 1, 'window-size'"
    ]
    from seqdedup.cli.configfile import NOT_SETTINGS
    from seqdedup.cli.options import build_parser

    shown = {line.lstrip("# ").split(" ")[0].rstrip(":") for line in lines[2:]}
    for action in build_parser()._actions:
        longs = [o[2:] for o in action.option_strings if o.startswith("--")]
        if longs and longs[0] not in NOT_SETTINGS and not getattr(action, "negates", False):
            assert longs[0] in shown, longs[0]  # every setting has its line


@pytest.mark.parametrize(
    ("text", "args", "message"),
    [
        ('\nwindow-size = "ten"\n', [], "line 2: 'window-size' takes a whole number"),
        (
            "windowsize = 3\n",
            [],
            "line 1: unknown key 'windowsize' (keys are long option names; did you mean "
            "'window-size'?)",
        ),
        (
            "[profile.a]\nwindow-size = 0\n",
            ["--profile", "a"],
            "line 2, 'window-size': --window-size must be at least 1, got 0",
        ),
        ("quiet = 1\n", [], "line 1: 'quiet' takes true or false"),
        ('stats-format = "xml"\n', [], "line 1: 'stats-format' takes one of table, json"),
        ("mask = [1]\n", [], "line 1: 'mask' takes a string or a list of strings"),
        ("fold = true\n", ["-a"], "line 1, 'fold': --fold cannot be combined with --annotate"),
        ("window-size = [\n", [], "config file '.seqdedup.toml': "),
        ('config = "x"\n', [], "line 1: unknown key 'config'"),
    ],
)
def test_a_bad_setting_is_one_line_naming_file_key_and_line(home, text, args, message):
    (home / ".seqdedup.toml").write_text(text)
    done = run(home, *args, "in.log")
    assert done.returncode == 1 and done.stdout == b""
    error = done.stderr.decode()
    assert error.count("\n") == 1 and "Traceback" not in error
    assert error.startswith("seqdedup: config file '.seqdedup.toml'") and message in error


def test_an_unreadable_config_file_is_one_line(home):
    done = run(home, "--config", "missing.toml", "in.log")
    assert done.returncode == 1 and done.stdout == b""
    assert done.stderr == (
        b"seqdedup: cannot read config file 'missing.toml': No such file or directory\n"
    )


# -- trust: nothing runs, reads or writes what the user did not ask for -----------------

HOSTILE = 'hash-transform = "touch ran-it; cat"\nlibrary-dir = "stolen"\nwindow-size = 1\n'


def test_a_project_file_others_may_write_to_is_refused(home):
    """As git's safe.directory: a project file writable by others is refused, one line
    naming it and how to trust it; nothing runs and nothing is written."""
    project = home / ".seqdedup.toml"
    project.write_text(HOSTILE)
    project.chmod(0o666)
    done = run(home, "-q", "in.log")
    assert done.returncode == 1 and done.stdout == b""
    error = done.stderr.decode()
    assert error.count("\n") == 1 and "refusing the settings file '.seqdedup.toml'" in error
    assert "others may write to it" in error and "trusted-projects" in error
    assert not (home / "ran-it").exists() and not (home / "stolen").exists()


@pytest.mark.skipif(os.getuid() != 0, reason="giving a file to another user needs root")
def test_a_project_file_of_another_user_is_refused(home):
    project = home / ".seqdedup.toml"
    project.write_text(HOSTILE)
    os.chown(project, 65534, -1)  # nobody
    done = run(home, "-q", "in.log")
    assert done.returncode == 1 and b"belongs to another user (uid 65534)" in done.stderr
    assert not (home / "ran-it").exists() and not (home / "stolen").exists()
    user_file(home).write_text(f'trusted-projects = ["{home}"]\n')  # the user trusts it
    assert run(home, "-q", "in.log").returncode == 0 and (home / "ran-it").exists()


def test_a_project_runs_commands_and_names_files_only_when_trusted(home):
    """Options that run a command or name a file are left out of an untrusted project's
    file, with one line saying so (and --show-config showing them refused); the rest of
    the file applies. The user's own trust takes them."""
    (home / ".seqdedup.toml").write_text(HOSTILE)
    done = run(home, "-q", "in.log")
    assert done.returncode == 0 and done.stdout == b"a\nb\nc\nd\n"  # window-size = 1 applies
    assert done.stderr.decode().splitlines() == [
        "seqdedup: not taken from .seqdedup.toml: hash-transform, library-dir (options that "
        "run commands or name files come from a project's settings only when you trust it: "
        "trusted-projects in your own settings file)"
    ]
    assert not (home / "ran-it").exists() and not (home / "stolen").exists()
    shown = run(home, "--show-config").stdout.decode()
    assert "# refused: hash-transform = " in shown and "# refused: library-dir = " in shown
    user_file(home).write_text(f'trusted-projects = ["{home}"]\n')
    done = run(home, "-q", "in.log")
    assert done.returncode == 0 and done.stderr == b""
    assert (home / "ran-it").exists() and (home / "stolen").is_dir()


def test_only_the_users_own_file_trusts_projects(home):
    (home / ".seqdedup.toml").write_text('trusted-projects = ["*"]\n' + HOSTILE)
    done = run(home, "-q", "in.log")
    assert done.returncode == 1 and b"only the user's own file trusts projects" in done.stderr
    assert not (home / "ran-it").exists()


def test_every_option_that_runs_or_names_a_path_needs_trust():
    """Every option of every command that runs a command or names a file or directory
    (its metavar says so) is one a project's file may give only when trusted; and each
    one marked is a real option of the command that reads settings files."""
    from seqdedup.cli.configfile import NOT_SETTINGS, TRUSTED_ONLY
    from seqdedup.cli.dask import PROG, _cluster_options
    from seqdedup.cli.library import build_parser as library_parser
    from seqdedup.cli.options import build_parser

    def dask_parser():
        parser = build_parser(PROG, many_inputs=True)
        _cluster_options(parser)
        return parser

    def naming(parser):
        for action in parser._actions:
            for option in action.option_strings:
                if option.startswith("--") and option[2:] not in NOT_SETTINGS:
                    yield option[2:], str(action.metavar or "")
            if isinstance(action, argparse._SubParsersAction):  # each subcommand's own
                for sub in action.choices.values():
                    yield from naming(sub)

    paths = {"CMD", "FILE", "DIR", "DIRECTORY", "PATHNAME", "COMMAND", "OUTPUT"}
    options = set()
    for parser in (build_parser(), dask_parser(), library_parser()):
        for name, metavar in naming(parser):
            options.add(name)
            if metavar in paths:
                assert name in TRUSTED_ONLY, name
    assert options >= TRUSTED_ONLY


@pytest.mark.parametrize(
    ("text", "args", "message"),
    [
        ("window-size = -1\n", ["-w", "3"], "'window-size': --window-size must be at least 1"),
        ("[profile.other]\nmax-history = 5\n", [], "'max-history': --max-history must be at"),
        ("[profile.other]\nwindowsize = 3\n", [], "unknown key 'windowsize'"),
        ("fold-idle = 1e12\n", [], "--fold-idle must be at most"),
    ],
)
def test_every_value_is_checked_even_where_it_does_not_apply(home, text, args, message):
    """(0 stays "none" where the command line says so: see the next test.)"""
    (home / ".seqdedup.toml").write_text(text)
    done = run(home, "-q", *args, "in.log")
    assert done.returncode == 1 and done.stdout == b"" and message in done.stderr.decode()


def test_a_settings_file_is_read_up_to_a_mebibyte_and_from_a_pipe(home):
    done = run(home, "--config", "/dev/zero", "in.log")
    assert done.returncode == 1 and done.stdout == b""
    assert done.stderr == b"seqdedup: config file '/dev/zero' is larger than 1 MiB\n"
    env = {**user_env(), "XDG_CONFIG_HOME": str(home / "xdg")}
    piped = subprocess.run(
        ["bash", "-c", f"{' '.join(seqdedup_command())} --config <(printf 'window-size = 3\\n"
         "quiet = true\\n') in.log"],
        cwd=home, env=env, capture_output=True, timeout=60,
    )  # fmt: skip
    assert piped.returncode == 0 and piped.stdout == b"a\nb\nc\nd\n", piped.stderr


def test_zero_says_none_in_a_file_as_on_the_command_line(home):
    (home / ".seqdedup.toml").write_text(
        "fold = true\nfold-idle = 0\nfold-every = 0\nwindow-size = 3\nquiet = true\n"
        '[profile.t]\ntransform-timeout = 0\nhash-transform = "cat"\n'
    )
    done = run(home, "in.log")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(b"a\nb\nc\n")


def test_every_switch_has_its_negation_and_the_last_one_given_wins():
    from seqdedup.cli.options import build_parser
    from seqdedup.cli.parsing import NOT_NEGATED

    for parser in (build_parser(), build_parser("seqdedup-dask", many_inputs=True)):
        switches = [
            a
            for a in parser._actions
            if isinstance(a, argparse._StoreTrueAction) and a.dest not in NOT_NEGATED
        ]
        assert len(switches) >= 12
        for switch in switches:
            long = next(o for o in switch.option_strings if o.startswith("--"))
            negation = "--" + long[5:] if long.startswith("--no-") else "--no-" + long[2:]
            inputs = ["f"]
            on = parser.parse_args([*inputs, negation, long])
            off = parser.parse_args([*inputs, long, negation])
            assert (getattr(on, switch.dest), getattr(off, switch.dest)) == (True, False), long


def test_a_profiles_switch_is_turned_off_for_one_run_with_what_only_applies_with_it(home):
    (home / ".seqdedup.toml").write_text(
        "[profile.k8s]\nfold = true\nfold-every = 50\n"
        'fold-format = "F {removed}"\nwindow-size = 3\n'
    )
    folded = run(home, "-q", "--profile", "k8s", "in.log")
    assert folded.stdout == b"a\nb\nc\nF 3\nd\n"
    refused = run(home, "-q", "--profile", "k8s", "--annotate", "in.log")
    assert refused.returncode == 1 and refused.stdout == b""
    assert refused.stderr.decode().endswith("(--no-fold turns it off for this run)\n")
    marked = run(home, "-q", "--profile", "k8s", "--no-fold", "--annotate", "in.log")
    assert (marked.returncode, marked.stderr) == (0, b"")  # fold-every, fold-format dropped too
    assert (
        marked.stdout
        == b"a\nb\nc\n[DUPLICATE: Lines 4-6 matched lines 1-3 (sequence seen 2 times)]\nd\n"
    )
    (home / ".seqdedup.toml").write_text("no-fold = true\n")
    bad = run(home, "-q", "in.log")
    assert bad.returncode == 1 and b"unknown key 'no-fold'" in bad.stderr


def run_in(home: Path, cwd: Path, *args: str, **env: str) -> subprocess.CompletedProcess[bytes]:
    environment = {**user_env(), "XDG_CONFIG_HOME": str(home / "xdg"), **env}
    return subprocess.run(
        [*seqdedup_command(), *args], cwd=cwd, env=environment, capture_output=True, timeout=60
    )


def test_the_project_file_is_found_above_the_current_directory_up_to_a_repository(home):
    (home / ".seqdedup.toml").write_text("window-size = 3\nquiet = true\n")
    deep = home / "src" / "pkg"
    deep.mkdir(parents=True)
    (deep / "in.log").write_bytes(DATA)
    env = {"HOME": str(home.parent)}  # (the home directory above: not a boundary here)
    found = run_in(home, deep, "in.log", **env)
    assert (found.stdout, found.stderr) == (b"a\nb\nc\nd\n", b"")  # W=3 from two levels up
    shown = run_in(home, deep, "--show-config", **env).stdout.decode()
    assert f"# files read: {home / '.seqdedup.toml'}" in shown
    (home / "src" / ".git").mkdir()  # a repository's root below the file: the search stops
    assert run_in(home, deep, "-q", "in.log", **env).stdout == DATA
    (home / "src" / ".git").rmdir()
    assert run_in(home, deep, "-q", "in.log", HOME=str(home / "src")).stdout == DATA  # home


def test_a_project_above_is_trusted_by_its_own_directory(home):
    (home / ".seqdedup.toml").write_text('window-size = 3\nlibrary-dir = "L"\n')
    deep = home / "sub"
    deep.mkdir()
    (deep / "in.log").write_bytes(DATA)
    env = {"HOME": str(home.parent)}
    refused = run_in(home, deep, "-q", "in.log", **env)
    assert b"not taken from" in refused.stderr and not (home / "L").exists()
    user_file(home).write_text(f'trusted-projects = ["{home}"]\n')
    taken = run_in(home, deep, "-q", "in.log", **env)
    assert taken.stderr == b"" and (deep / "L" / "seqdedup.sqlite").exists()


# -- the project file is opened once and checked on that descriptor ---------------------


@pytest.mark.skipif(os.getuid() != 0, reason="a link of another user needs root")
def test_a_symbolic_link_planted_by_another_user_is_refused(home):
    """A `.seqdedup.toml` symlink another user made, pointing at a file of root's (which
    a check that follows links would accept), is refused; nothing of it applies."""
    target = home / "rootfile.toml"
    target.write_text("inverse = true\n")
    link = home / ".seqdedup.toml"
    link.symlink_to(target)
    os.lchown(link, 65534, 65534)
    done = run(home, "-q", "-w", "1", "in.log")
    assert done.returncode == 1 and done.stdout == b""
    error = done.stderr.decode()
    assert error.count("\n") == 1
    assert "symbolic link made by another user (uid 65534)" in error
    os.lchown(link, 0, 0)  # your own link is followed
    assert run(home, "-q", "-w", "1", "in.log").stdout == b"a\nb\nc\n"  # (the inverse)


@pytest.mark.parametrize("mode", [0o777, 0o1777])
def test_your_own_file_in_a_folder_others_may_write_to_needs_the_sticky_bit(home, mode):
    """Anyone may replace a file in a 0777 folder at any moment (not in a sticky one,
    as /tmp): there your own project file is refused too, in one line."""
    shared = home / "shared"
    shared.mkdir()
    shared.chmod(mode)
    (shared / "in.log").write_bytes(DATA)
    (shared / ".seqdedup.toml").write_text("inverse = true\n")
    (shared / ".git").mkdir()  # (the search for a project file stops here)
    done = run_in(home, shared, "-q", "-w", "1", "in.log")
    if mode & 0o1000:
        assert done.returncode == 0 and done.stdout == b"a\nb\nc\n"  # (the inverse)
        return
    assert done.returncode == 1 and done.stdout == b""
    assert done.stderr.decode().count("\n") == 1
    assert b"its folder is writable by others" in done.stderr


# -- the first hour: settings that say what they do ------------------------------------


def settings_lines(text: str) -> list[str]:
    """The ``key = value`` lines of --show-config, without where each comes from."""
    return [line.split("  #")[0] for line in text.splitlines() if not line.startswith("#")]


def test_a_command_line_mask_says_it_replaced_the_files_normalize(home):
    (home / ".seqdedup.toml").write_text('normalize = "timestamp"\n')
    done = run(home, "-q", "--mask", r"port=\d+", "in.log")
    assert done.returncode == 0
    assert done.stderr.decode() == (
        "seqdedup: the command line's --normalize/--mask replace the settings' normalize = "
        "\"timestamp\" (config file '.seqdedup.toml', line 1, 'normalize'): give "
        "--normalize timestamp too to keep them\n"
    )
    assert run(home, "-q", "in.log").stderr == b""  # (the file alone: nothing to say)


def test_show_config_is_toml_that_reads_back_to_the_same_settings(home):
    """--show-config printed Python tuples for the key options; now TOML that tomllib
    reads, which as a settings file gives the same settings again; =changed shows only
    what is not a default."""
    import tomllib

    (home / ".seqdedup.toml").write_text('normalize = ["timestamp", "uuid"]\nwindow-size = 4\n')
    first = run(home, "--show-config").stdout.decode()
    settings = tomllib.loads(first)
    assert settings["normalize"] == ["timestamp", "uuid"] and "mask" not in settings
    assert settings["window-size"] == 4
    (home / "again.toml").write_text(first)
    again = run(home, "--show-config", "--config", "again.toml").stdout.decode()
    assert settings_lines(again) == settings_lines(first)
    changed = run(home, "--show-config=changed").stdout.decode()
    assert settings_lines(changed) == ["window-size = 4", 'normalize = ["timestamp", "uuid"]']
    masked = run(home, "--show-config=changed", "--mask", "port=\\d+").stdout.decode()
    assert 'mask = ["port=\\\\d+"]' in settings_lines(masked)


def test_an_unknown_key_says_which_key_was_meant(home):
    (home / ".seqdedup.toml").write_text("windw-size = 2\n")
    done = run(home, "in.log")
    assert done.returncode == 1
    assert (
        b"unknown key 'windw-size' (keys are long option names; did you mean 'window-size'?)"
        in (done.stderr)
    )
