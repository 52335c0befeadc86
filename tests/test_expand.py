"""seqdedup --budget and seqdedup-expand through the installed commands: the round trip
byte for byte, one reference, a range of lines, and every refusal in one line."""

from __future__ import annotations

import io
import re
import subprocess
import sys
from pathlib import Path

import pytest

from seqdedup.budget.removed import ESCAPE, escaped
from seqdedup.cli import expand as expand_cli

from conftest import user_env

BIN = Path(sys.executable).parent
CI_LOG = Path("examples/ci.log")


def expand(*args: str, stdin: bytes = b"") -> tuple[int, bytes, str]:
    out, err = io.BytesIO(), io.StringIO()
    status = expand_cli.main(list(args), io.BytesIO(stdin), out, err)
    return status, out.getvalue(), err.getvalue()


def test_the_installed_commands_round_trip_a_ci_log(tmp_path):
    store = tmp_path / "removed.db"
    reduced = tmp_path / "reduced.txt"
    done = subprocess.run(
        [str(BIN / "seqdedup"), "--budget", "150", "-w", "3", "--keep-removed", str(store)],
        stdin=CI_LOG.open("rb"),
        capture_output=True,
        env=user_env(),
        check=True,
    )
    reduced.write_bytes(done.stdout)
    assert b"[sd:" in done.stdout and "tokens in" in done.stderr.decode()
    back = subprocess.run(
        [str(BIN / "seqdedup-expand"), str(reduced), "--from", str(store)],
        capture_output=True,
        env=user_env(),
        check=True,
    )
    assert back.stdout == CI_LOG.read_bytes()


def test_one_reference_a_range_of_lines_and_standard_input(run_cli, tmp_path):
    store = tmp_path / "removed.db"
    done = run_cli(["--budget", "200", "-w", "3", "-q", "--keep-removed", str(store), str(CI_LOG)])
    marker = re.search(rb"\[sd:([0-9a-f]+) lines (\d+)-(\d+):", done.stdout)
    assert marker is not None
    reference, first, last = marker.group(1).decode(), int(marker[2]), int(marker[3])
    status, out, err = expand("--from", str(store), "sd:" + reference)
    lines = CI_LOG.read_bytes().splitlines(keepends=True)
    assert (status, err) == (0, "") and out == b"".join(lines[first - 1 : last])
    reduced = tmp_path / "reduced.txt"
    reduced.write_bytes(done.stdout)
    assert expand(str(reduced), "--from", str(store), "--lines", "3-5")[1] == b"".join(lines[2:5])
    assert expand("-", "--from", str(store), stdin=done.stdout)[1] == CI_LOG.read_bytes()


def test_a_line_that_looks_like_a_marker_is_never_taken_for_one(run_cli, tmp_path):
    store = tmp_path / "removed.db"
    fake = b"[sd:0123456789ab: lines 1-2 elided (2 lines); expand the reference]\n"
    data = fake + CI_LOG.read_bytes() + fake
    keep = ["--keep", r"^\[sd:"]  # (kept verbatim: written as it is, among real markers)
    done = run_cli(["--budget", "280", "-w", "3", "-q", *keep, "--keep-removed", str(store)], data)
    shown = ESCAPE + fake  # (an input line that reads as a marker is shown escaped)
    assert shown in done.stdout.splitlines(keepends=True)
    assert b"[sd:" in done.stdout.replace(shown, b"")
    assert expand("-", "--from", str(store), stdin=done.stdout)[1] == data
    assert expand("-", stdin=done.stdout)[0] == 1  # (the text alone has store markers)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--from", "{store}", "sd:ffffffff"], "sd:ffffffff is not in the store"),
        (["--from", "{store}", "sd:zz"], "is no reference"),
        (["{changed}", "--from", "{store}"], "the reduced text is not one the store"),
        (["{reduced}", "--from", "{missing}"], "no store at"),
        (["{reduced}", "--from", "{store}", "--lines", "5-2"], "--lines: not a range"),
        (["--from", "{store}", "sd:abcd", "--lines", "1-2"], "--lines applies to a reduced text"),
        (["{nothing}", "--from", "{store}"], "cannot read"),
        ([], "the following arguments are required"),
    ],
)
def test_refusals_are_one_line_and_exit_1(run_cli, tmp_path, args, message):
    store = tmp_path / "removed.db"
    done = run_cli(["--budget", "150", "-w", "3", "-q", "--keep-removed", str(store), str(CI_LOG)])
    reduced, changed = tmp_path / "reduced.txt", tmp_path / "changed.txt"
    reduced.write_bytes(done.stdout)
    changed.write_bytes(done.stdout.replace(b"TestUpload", b"TestUpdate"))
    names = {
        "store": store,
        "reduced": reduced,
        "changed": changed,
        "missing": tmp_path / "none.db",
        "nothing": tmp_path / "none.txt",
    }
    status, out, err = expand(*(a.format(**names) for a in args))
    assert status == 1 and out == b""
    assert err.count("\n") == 1 and err.startswith("seqdedup-expand: ") and message in err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--budget", "8x"], "not a token count: '8x'"),
        (["--budget", "0"], "--budget must be at least 1"),
        (["--keep", "ERR"], "--keep requires --budget"),
        (["--budget", "1k", "--keep", "("], "--keep: invalid regular expression"),
        (["--budget", "1k", "--stream-by", "^x"], "--budget cannot be combined with --stream-by"),
        (["--budget", "1k", "--annotate"], "--budget cannot be combined with --annotate"),
        (["--budget", "1k", "-F", "{log}"], "--budget reads the whole input first"),
    ],
)
def test_budget_refusals(run_cli, args, message):
    done = run_cli([a.format(log=CI_LOG) for a in args], b"x\n")
    assert done.returncode == 1 and done.stdout == b""
    assert message in done.stderr.decode() and done.stderr.decode().count("\n") == 1


def test_the_dask_engine_refuses_a_budget(tmp_path):
    done = subprocess.run(
        [str(BIN / "seqdedup-dask"), "--budget", "8k", str(CI_LOG), "--output-dir", str(tmp_path)],
        capture_output=True,
        env=user_env(),
    )
    assert done.returncode == 1 and b"--budget" in done.stderr


@pytest.mark.parametrize("delimiter", [" ", ":", ";", "(", "e", "0", "x", "ab", "\\n"])
def test_any_delimiter_round_trips_even_one_inside_a_marker(run_cli, tmp_path, delimiter):
    """A delimiter that occurs in the markers' own text (a space, a colon, a letter of
    "elided"): markers are found where they were written, by byte position, never by
    splitting the reduced text again."""
    from seqdedup.base.records import parse_delimiter

    store = tmp_path / "removed.db"
    # the log's lines joined by the delimiter: its repeats stay repeats
    data = parse_delimiter(delimiter).join(CI_LOG.read_bytes().splitlines() * 3)
    done = run_cli(
        ["--budget", "150", "-w", "2", "-q", "-d", delimiter, "--keep-removed", str(store)],
        data,
    )
    assert done.returncode == 0 and b"[sd:" in done.stdout
    reduced = tmp_path / "reduced.txt"
    reduced.write_bytes(done.stdout)
    status, out, err = expand(str(reduced), "--from", str(store))
    assert (status, err) == (0, "") and out == data


def test_reducing_a_reduced_text_into_the_same_store_keeps_the_first(run_cli, tmp_path):
    """The same store twice, the second time on the first's output (which fits, but
    whose lines read as markers: they are escaped below a first line of its own): each
    reduction expands to its own input."""
    store = tmp_path / "removed.db"
    args = ["-w", "3", "-q", "--keep-removed", str(store)]
    first = run_cli(["--budget", "220", *args, str(CI_LOG)])
    again = run_cli(["--budget", "1000", *args], first.stdout)
    assert b"[sd:" in first.stdout and b"not met" not in first.stdout
    assert again.stdout.split(b"\n", 1)[1] == escaped(first.stdout, b"\n") != first.stdout
    for reduced, original in ((first.stdout, CI_LOG.read_bytes()), (again.stdout, first.stdout)):
        status, out, err = expand("-", "--from", str(store), stdin=reduced)
        assert (status, err, out) == (0, "", original)


def test_a_changed_stretch_is_refused_and_a_bomb_is_bounded(run_cli, tmp_path):
    """A stretch whose bytes no longer match its digest, or that inflates past the size
    the store gives it: one line, exit 1, nothing written."""
    import sqlite3
    import zlib

    store = tmp_path / "removed.db"
    done = run_cli(["--budget", "150", "-w", "3", "-q", "--keep-removed", str(store), str(CI_LOG)])
    reduced = tmp_path / "reduced.txt"
    reduced.write_bytes(done.stdout)
    db = sqlite3.connect(store)
    digest, data = db.execute("SELECT digest, data FROM removed LIMIT 1").fetchone()
    changed = zlib.decompress(data).replace(b"a", b"b", 1)
    db.execute("UPDATE removed SET data = ? WHERE digest = ?", (zlib.compress(changed), digest))
    db.commit()
    status, out, err = expand(str(reduced), "--from", str(store))
    assert (status, out) == (1, b"") and err.count("\n") == 1 and "damaged" in err
    bomb = zlib.compress(b"\0" * (64 << 20))  # 64 MiB from about 64 KiB
    db.execute("UPDATE removed SET data = ? WHERE digest = ?", (bomb, digest))
    db.commit()
    db.close()
    status, out, err = expand(str(reduced), "--from", str(store))
    assert (status, out) == (1, b"") and "damaged" in err
