"""The Dask engine gives exactly the output of sequential runs sharing a library."""

from __future__ import annotations

import io
import os
import signal
import subprocess
import sys
from importlib.util import find_spec
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from seqdedup.api import process_inputs, process_stream
from seqdedup.base.errors import SeqdedupError
from seqdedup.config.groups import FilterRule
from seqdedup.dask.job import deduplicate_files

from conftest import examples, needs, user_env, wait_until

# (Looked for, not imported: Dask and distributed cost every worker a second at collection.)
pytestmark = needs(
    all(find_spec(name) is not None for name in ("dask", "distributed")),
    "Dask (pip install 'seqdedup[dask]')",
)

records = st.lists(st.sampled_from(["a", "b", "c", "ts 1", "ts 22", "d"]), max_size=50)
file_sets = st.lists(
    st.tuples(records, st.booleans()).map(
        lambda rt: "".join(f"{r}\n" for r in rt[0])[: -1 if rt[1] and rt[0] else None]
    ),
    min_size=1,
    max_size=4,
)


def write_files(directory: Path, contents: list[str]) -> list[Path]:
    directory.mkdir(parents=True)
    paths = []
    for k, text in enumerate(contents):
        path = directory / f"part{k}.log"
        path.write_text(text)
        paths.append(path)
    return paths


def sequential(paths, library, **options):
    """What `seqdedup --library-dir L` over each file in turn writes."""
    outputs = []
    for path in paths:
        sink = io.BytesIO()
        with open(path, "rb", buffering=0) as source:
            process_stream(source, sink, max_history=None, library_dir=library, **options)
        outputs.append(sink.getvalue())
    return outputs


options_strategy = st.fixed_dictionaries(
    {
        "window_size": st.integers(1, 4),
        "skip_chars": st.sampled_from([0, 1]),
        "inverse": st.booleans(),
        "filters": st.sampled_from([(), (FilterRule("bypass", "^ts"),)]),
        "key_steps": st.sampled_from([(), (("normalize", "number"),)]),
    }
)


@pytest.mark.usefixtures("engine")  # each engine hashes its own way
@settings(
    max_examples=examples(20),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    contents=file_sets,
    options=options_strategy,
    block=st.integers(1, 24),
    preload=st.one_of(st.none(), records),
    owners=st.integers(1, 4),
)
def test_matches_sequential_runs(tmp_path_factory, contents, options, block, preload, owners):
    base = tmp_path_factory.mktemp("job")
    paths = write_files(base / "in", contents)
    seq_lib, dask_lib = base / "seq-lib", base / "dask-lib"
    if preload is not None:  # both start from the same library
        for library in (seq_lib, dask_lib):
            sequential(
                [write_files(library.with_suffix(".pre"), ["\n".join(preload)])[0]],
                library,
                window_size=options["window_size"],
                skip_chars=options["skip_chars"],  # a library is used with its own keys
                key_steps=options["key_steps"],
            )
    want = sequential(paths, seq_lib, **options)
    stats = deduplicate_files(
        paths,
        base / "out",
        scheduler="sync",
        block_size=block,
        library_dir=dask_lib,
        owners=owners,
        **options,
    )
    got = [(base / "out" / p.name).read_bytes() for p in paths]
    assert got == want
    assert stats.total == sum(len(c.splitlines()) for c in contents)
    # The libraries the two saved hold the same windows for these options, so a new
    # file sees them alike. (Sequential runs also store each repeated piece, for its
    # count; the Dask engine stores new material only.)
    # One run over all the files (`seqdedup FILE...`) writes the same, in one stream:
    # a file's bare final record gets a delimiter when another file follows.
    if preload is None:
        sink = io.BytesIO()
        sources = [open(path, "rb", buffering=0) for path in paths]  # noqa: SIM115
        try:
            process_inputs(sources, sink, max_history=None, **options)
        finally:
            for source in sources:
                source.close()
        joined = [
            out + b"\n" if out and not out.endswith(b"\n") and k + 1 < len(want) else out
            for k, out in enumerate(want)
        ]
        assert sink.getvalue() == b"".join(joined)
    probe = write_files(base / "probe", ["\n".join(["a", "b", "c", "ts 1", "d", "a", "c"])])
    assert sequential(probe, None, read_sequences=(seq_lib,), **options) == sequential(
        probe, None, read_sequences=(dask_lib,), **options
    )
    if not options["skip_chars"] and not options["key_steps"]:  # (keys are the records)
        width = options["window_size"]
        assert library_windows(seq_lib, width) == library_windows(dask_lib, width)


def library_windows(library, width):
    """Every window of ``width`` records inside a sequence the library holds."""
    from seqdedup.library.load import load_library

    if not library.exists():
        return set()
    windows = set()
    for sequence in load_library(library, b"\n"):
        records = sequence.records
        windows.update(tuple(records[k : k + width]) for k in range(len(records) - width + 1))
    return windows


@pytest.mark.slow
@pytest.mark.usefixtures("engine")  # each engine hashes its own way
@settings(
    max_examples=examples(5),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(contents=file_sets, window=st.integers(1, 4), block=st.integers(1, 24))
def test_matches_sequential_runs_on_a_cluster(
    tmp_path_factory, real_cluster, contents, window, block
):
    """On the real cluster of the tests below (one cluster per worker of the suite: a
    second, a LocalCluster, cost every worker that ran this 4 s of CPU)."""
    base = tmp_path_factory.mktemp("cluster")
    paths = write_files(base / "in", contents)
    want = sequential(paths, base / "seq-lib", window_size=window)
    deduplicate_files(
        paths,
        base / "out",
        scheduler=real_cluster[0],
        block_size=block,
        window_size=window,
        library_dir=base / "dask-lib",
    )
    assert [(base / "out" / p.name).read_bytes() for p in paths] == want


def test_custom_delimiter_and_byte_mode(tmp_path):
    paths = write_files(tmp_path / "in", [])
    first, second = tmp_path / "in" / "x.bin", tmp_path / "in" / "y.bin"
    first.write_bytes(b"\x01\xff\xfe\x02\xff\xfe\x01\xff\xfe\x02")
    second.write_bytes(b"\x02\xff\xfe\x03\xff\xfe\x01\xff\xfe\x02\xff\xfe")
    paths = [first, second]
    options = {"window_size": 2, "byte_mode": True, "delimiter": b"\xff\xfe"}
    want = sequential(paths, tmp_path / "lib", **options)
    deduplicate_files(paths, tmp_path / "out", scheduler="sync", block_size=3, **options)
    assert [(tmp_path / "out" / p.name).read_bytes() for p in paths] == want


def _cli(*args: str, process: bool = False) -> subprocess.CompletedProcess[bytes]:
    """``seqdedup-dask ARGS``: in this process (Dask imported once, not once per
    command), or as the installed command where ``process`` is the point."""
    if process:
        script = Path(sys.executable).parent / "seqdedup-dask"
        return subprocess.run([script, *args], capture_output=True, env=user_env(), timeout=120)
    from seqdedup.cli.dask import main

    err = io.StringIO()
    status = main(list(args), stderr=err)
    return subprocess.CompletedProcess(args, status, b"", err.getvalue().encode())


def test_command_line(tmp_path):
    """The installed command (the other command-line tests run its ``main``)."""
    paths = write_files(tmp_path / "in", ["a\nb\nc\n", "x\na\nb\nc\ny\n"])
    p = _cli(
        "-w",
        "3",
        "--scheduler",
        "sync",
        "--stats-format",
        "json",
        "--output-dir",
        str(tmp_path / "out"),
        *map(str, paths),
        process=True,
    )
    assert p.returncode == 0, p.stderr
    assert (tmp_path / "out" / "part1.log").read_bytes() == b"x\ny\n"
    assert b'"skipped": 3' in p.stderr


def test_the_synchronous_scheduler_starts_without_distributed(tmp_path):
    """``--scheduler sync`` runs the job in this process: Dask's distributed package
    (0.3 s of imports) is never loaded, though it is installed."""
    (tmp_path / "in.log").write_text("a\nb\na\nb\n")
    script = (
        "import sys\n"
        "from seqdedup.dask.job import deduplicate_files\n"
        "deduplicate_files([sys.argv[1]], sys.argv[2], scheduler='sync', window_size=2)\n"
        "print('distributed' in sys.modules, 'distributed.client' in sys.modules)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path / "in.log"), str(tmp_path / "out")],
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stdout.split() == ["False", "False"]
    assert (tmp_path / "out" / "in.log").read_text() == "a\nb\n"
    assert subprocess.run([sys.executable, "-c", "import distributed"]).returncode == 0


_RETRIES = [f'{{"t": {n}, "msg": "retry"}}\n' for n in range(4)]


@pytest.mark.parametrize(
    ("options", "contents", "second_output"),
    [
        (
            ["--normalize", "number"],
            ["job 1 ok\njob 2 ok\n", "job 7 ok\njob 8 ok\nend 3\n"],
            b"end 3\n",
        ),
        (["--json-key", "msg"], ["".join(_RETRIES[:2]), "".join(_RETRIES[2:])], b""),
    ],
)
def test_command_line_with_key_options(tmp_path, options, contents, second_output):
    """--normalize and --json-key make the keys on the workers as in seqdedup."""
    paths = write_files(tmp_path / "in", contents)
    out = tmp_path / "out"
    p = _cli(
        "-w", "2", "--scheduler", "sync", "-q", *options, "--output-dir", str(out), *map(str, paths)
    )
    assert p.returncode == 0, p.stderr
    assert (out / "part1.log").read_bytes() == second_output


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["missing.log"], "missing.log"),
        (["--show-keys", "IN"], "--show-keys is not supported"),
        (
            ["--scheduler", "tcp://127.0.0.1:9", "--connect-timeout", "0.5", "IN"],
            "cannot reach the Dask scheduler",
        ),
        (["--connect-timeout", "0", "IN"], "--connect-timeout must be"),
        (["-a", "IN"], "--annotate is not supported"),
        (["--fold", "IN"], "--fold is not supported"),
        (["-c", "3", "IN"], "--max-candidates is not supported"),
        (["-U", "IN"], "--unlimited-unique-sequences is not supported"),
        (["--block-size", "4096", "IN"], "--block-size must be at least 1,048,576 bytes"),
        (["--fold-every", "0", "IN"], "--fold-every requires --fold"),
        (["-w", "0", "IN"], "--window-size"),
    ],
)
def test_command_line_errors(tmp_path, args, needle):
    (tmp_path / "in.log").write_text("a\n")
    args = [str(tmp_path / "in.log") if a == "IN" else a for a in args]
    p = _cli("--output-dir", str(tmp_path / "out"), *args)
    assert p.returncode == 1
    assert needle in p.stderr.decode() and p.stderr.decode().count("\n") == 1


def test_missing_extra_is_a_clear_error(tmp_path, monkeypatch):
    from seqdedup import SeqdedupError

    (tmp_path / "in.log").write_text("a\n")
    for name in ("dask", "dask.dataframe"):
        monkeypatch.setitem(sys.modules, name, None)  # as if not installed
    with pytest.raises(SeqdedupError, match=r"pip install 'seqdedup\[dask\]'"):
        deduplicate_files([tmp_path / "in.log"], tmp_path / "out", scheduler="sync")


def test_output_dir_never_overwrites_an_input(tmp_path):
    source = tmp_path / "in.log"
    source.write_bytes(b"a\nb\na\nb\n")
    (tmp_path / "link").symlink_to(tmp_path, target_is_directory=True)
    (tmp_path / "afile").write_bytes(b"")
    for output_dir, needle in (
        (tmp_path, "which writing it would overwrite"),
        (tmp_path / "link", "which writing it would overwrite"),  # the same file, another path
        (tmp_path / "afile", "is not a directory"),
    ):
        p = _cli("-w", "2", "--output-dir", str(output_dir), str(source))
        assert p.returncode == 1, p.stderr
        assert needle in p.stderr.decode() and p.stderr.decode().count("\n") == 1
        assert source.read_bytes() == b"a\nb\na\nb\n"


def test_an_output_linked_to_another_input_is_refused(tmp_path):
    """x/b.log, a symbolic link to a.log: writing b.log's output there would replace
    a.log. Nothing is written, exit 1."""
    a, b = tmp_path / "a.log", tmp_path / "b.log"
    a.write_bytes(b"a\nb\na\nb\n")
    b.write_bytes(b"c\nd\n")
    out = tmp_path / "x"
    out.mkdir()
    (out / "b.log").symlink_to(a)
    p = _cli("-w", "2", "--scheduler", "sync", "--output-dir", str(out), str(a), str(b))
    assert p.returncode == 1, p.stderr
    error = p.stderr.decode()
    assert f"the output '{out / 'b.log'}' is the input '{a}'" in error and error.count("\n") == 1
    assert a.read_bytes() == b"a\nb\na\nb\n" and p.stdout == b""
    assert sorted(path.name for path in out.iterdir()) == ["b.log"]


@pytest.mark.usefixtures("engine")
def test_rows_carry_the_whole_128_bit_identity(tmp_path, monkeypatch):
    """Key hashes whose low 64 bits are forced equal (every record the same low lane, on
    either engine) leave each window's identity in its high lane: the job's rows carry
    both lanes, so the output is still that of sequential runs. With 64-bit rows every
    window after the first of a file would count as a repeat."""
    from seqdedup.base.hashes import MASK64, MASK128, hash_ints, hash_words
    from seqdedup.dask import partitions

    def forced(values: list[int]) -> list[int]:
        return [(value & ~MASK64 & MASK128) | 7 for value in values]

    real_stable, real_kernel = partitions.stable_hash, partitions.kernel_module

    class ForcedKernel:
        def __getattr__(self, name):
            return getattr(real_kernel(), name)

        def hash_records(self, keys, seed):
            return hash_words(forced(hash_ints(real_kernel().hash_records(keys, seed))))

        def split_hash(self, data, *args, **kwargs):  # (a whole range split and hashed)
            starts, hashes = real_kernel().split_hash(data, *args, **kwargs)
            return starts, hash_words(forced(hash_ints(hashes))).tobytes()

    monkeypatch.setattr(
        partitions, "stable_hash", lambda key, seed: forced([real_stable(key, seed)])[0]
    )
    monkeypatch.setattr(partitions, "kernel_module", ForcedKernel)
    contents = ["a\nb\nc\nd\na\nb\nc\ne\n", "b\nc\nf\ng\nb\nc\nd\n"]
    paths = write_files(tmp_path / "in", contents)
    want = sequential(paths, tmp_path / "seq-lib", window_size=2)
    deduplicate_files(paths, tmp_path / "out", scheduler="sync", block_size=5, window_size=2)
    assert [(tmp_path / "out" / p.name).read_bytes() for p in paths] == want
    assert want[0] == b"a\nb\nc\nd\ne\n"  # the rule itself: the repeat of "a b c" goes


@settings(max_examples=examples(200), deadline=None)
@given(
    parts=st.lists(st.lists(st.integers(0, 11), max_size=40), min_size=1, max_size=3),
    library=st.lists(st.integers(0, 11), max_size=4),
    owners=st.integers(1, 4),
)
def test_kernel_indexes_tell_apart_fingerprints_that_share_their_top_bits(parts, library, owners):
    """The kernel's first-window and earliest-position indexes keep only the top bits
    of a fingerprint's high lane in their slots: twelve fingerprints that share those
    bits (and differ in the rest of either lane) are still told apart, as the Python
    definitions tell them, in each partition and at each owner (with a library)."""
    import numpy as np

    from seqdedup.dask.partitions import first_windows, owner_answers

    pytest.importorskip("seqdedup._kernel")
    top = 0x5A5A5A << 40  # the same top 24 bits of the high lane for every fingerprint
    alphabet = [(k % 3, top | (k // 3)) for k in range(12)]  # (0, top) too: lo may be 0

    def lanes(picks: list[int]) -> np.ndarray:
        fps = np.array([alphabet[k] for k in picks], dtype=np.uint64).reshape(-1, 2)
        return fps.view(np.int64)

    rows = {"c": [], "python": []}
    for rank, picks in enumerate(parts):
        positions = (rank << 40) | np.arange(len(picks), dtype=np.int64) * 3
        got = first_windows("c", lanes(picks), positions, owners)
        want = first_windows("python", lanes(picks), positions, owners)
        assert got[0].tolist() == want[0].tolist()
        assert got[1] == want[1]
        assert [r.tolist() for r in got[2]] == [r.tolist() for r in want[2]]
        rows["c"].append(got[1])
        rows["python"].append(want[1])
    loaded = lanes(library).tobytes()
    for b in range(owners):
        mine = [buckets[b] for buckets in rows["c"]]
        assert owner_answers("c", mine, loaded) == owner_answers("python", mine, loaded)


@pytest.mark.usefixtures("engine")
def test_each_job_hashes_with_a_seed_of_its_own(tmp_path, monkeypatch):
    """A fixed, public seed would let crafted records collide with a chosen one and drop
    it: every job draws its own, every task of the job hashes with it."""
    from seqdedup.dask import job as cluster

    readers = []
    real = cluster._reader

    def spy(config):
        readers.append(real(config))
        return readers[-1]

    monkeypatch.setattr(cluster, "_reader", spy)
    paths = write_files(tmp_path / "in", ["a\nb\nc\na\nb\n", "b\nc\nx\n"])
    want = sequential(paths, tmp_path / "seq-lib", window_size=2)
    for job in range(2):
        out = tmp_path / f"out{job}"
        deduplicate_files(paths, out, scheduler="sync", block_size=4, window_size=2)
        assert [(out / p.name).read_bytes() for p in paths] == want
    first, second = readers
    assert first.seed != second.seed
    assert first.hashes([b"key"]) != second.hashes([b"key"])
    # the same on every task: a worker gets the reader pickled, and hashes alike
    import pickle

    assert pickle.loads(pickle.dumps(first)).hashes([b"key"]) == first.hashes([b"key"])


@pytest.mark.usefixtures("engine")
def test_relative_inputs_are_read_as_the_client_meant(tmp_path, monkeypatch):
    """A worker started in another directory holding a file of the same name reads the
    file the client named (paths are made absolute on the client); a file that is not
    the one the client saw (changed, or another one) is exit 1 with one line."""
    from seqdedup.dask import job as cluster

    inputs, elsewhere = tmp_path / "in", tmp_path / "worker-cwd"
    paths = write_files(inputs, ["a\nb\na\nb\nc\n", "c\nd\n"])
    elsewhere.mkdir()
    for path in paths:  # decoys a worker would read by the relative name
        (elsewhere / path.name).write_bytes(b"decoy\ndecoy\n")
    want = sequential(paths, tmp_path / "seq-lib", window_size=2)
    real = cluster.Reader.read

    def from_elsewhere(self, part, start, end):
        here = os.getcwd()
        os.chdir(elsewhere)  # as a worker started there
        try:
            return real(self, part, start, end)
        finally:
            os.chdir(here)

    monkeypatch.setattr(cluster.Reader, "read", from_elsewhere)
    monkeypatch.chdir(inputs)
    names = [path.name for path in paths]
    deduplicate_files(names, tmp_path / "out", scheduler="sync", window_size=2)
    assert [(tmp_path / "out" / name).read_bytes() for name in names] == want

    def changed(self, part, start, end):
        with open(part.path, "ab") as f:
            f.write(b"appended\n")
        return real(self, part, start, end)

    monkeypatch.setattr(cluster.Reader, "read", changed)
    with pytest.raises(SeqdedupError, match="as another file than the client saw"):
        deduplicate_files(names, tmp_path / "out2", scheduler="sync", window_size=2)


def test_a_failing_task_is_one_line_and_leaves_nothing_behind(tmp_path, monkeypatch):
    from seqdedup.dask import job as cluster

    def broken(*args, **kwargs):
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(cluster, "second_pass", broken)
    paths = write_files(tmp_path / "in", ["a\nb\na\nb\n"])
    out = tmp_path / "out"
    with pytest.raises(SeqdedupError, match=r"^a Dask task failed: RuntimeError: disk on fire$"):
        deduplicate_files(paths, out, scheduler="sync", window_size=2, library_dir=tmp_path / "L")
    assert list(out.iterdir()) == []  # no partition outputs left


@pytest.mark.usefixtures("engine")
@pytest.mark.parametrize("decompress", [True, False])
def test_compressed_inputs_are_read_as_seqdedup_reads_them(tmp_path, decompress):
    """gzip, bzip2 and xz inputs are decompressed (their first bytes tell), as by
    seqdedup; with decompress=False (--no-decompress) their bytes are the records."""
    import bz2
    import gzip
    import lzma

    texts = [b"a\nb\nc\na\nb\nc\nd\n", b"q\nr\na\nb\nc\n", b"d\ne\nq\nr\n"]
    directory = tmp_path / "in"
    directory.mkdir()
    paths = []
    for k, (text, pack, suffix) in enumerate(
        zip(texts, (gzip.compress, bz2.compress, lzma.compress), ("gz", "bz2", "xz"), strict=True)
    ):
        paths.append(directory / f"f{k}.log.{suffix}")
        paths[-1].write_bytes(pack(text))
    want = []
    for path in paths:  # what seqdedup -M --library-dir L over each file writes
        sink = io.BytesIO()
        with open(path, "rb", buffering=0) as source:
            process_stream(
                source,
                sink,
                max_history=None,
                library_dir=tmp_path / "seq",
                window_size=2,
                decompress=decompress,
            )
        want.append(sink.getvalue())
    out = tmp_path / "out"
    deduplicate_files(paths, out, scheduler="sync", window_size=2, decompress=decompress)
    # decompressed, an output is plain text named without the compression's suffix
    names = [path.stem if decompress else path.name for path in paths]
    assert [(out / name).read_bytes() for name in names] == want
    assert sorted(p.name for p in out.iterdir()) == sorted(names)  # no staging
    if decompress:
        assert want[1] == b"q\nr\n"


def test_a_damaged_compressed_input_is_one_line_and_writes_nothing(tmp_path):
    import gzip

    path = tmp_path / "cut.log.gz"
    path.write_bytes(gzip.compress(b"a\nb\n" * 1000)[:30])
    p = _cli("-w", "2", "--scheduler", "sync", "--output-dir", str(tmp_path / "out"), str(path))
    assert p.returncode == 1, p.stderr
    error = p.stderr.decode()
    assert error.count("\n") == 1 and "cannot decompress" in error and "truncated" in error
    assert list((tmp_path / "out").iterdir()) == []


def test_a_terminated_job_leaves_no_scratch_folders(tmp_path):
    """SIGTERM while the partitions are written: exit 143, and neither the partition
    outputs nor the decompressed inputs stay in the output directory."""
    import gzip
    import signal

    path = tmp_path / "big.log.gz"
    path.write_bytes(gzip.compress(b"".join(b"line %d\n" % (i % 50_000) for i in range(300_000))))
    out = tmp_path / "out"
    script = Path(sys.executable).parent / "seqdedup-dask"
    proc = subprocess.Popen(
        [str(script), "-q", "-w", "3", "--scheduler", "sync", "--output-dir", str(out), str(path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=user_env(),
    )
    wait_until(lambda: list(out.glob(".seqdedup-parts-*")), "the job's partitions")
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 143, err
    assert list(out.iterdir()) == []


def _written_address(path: Path) -> bool:
    """Whether the scheduler file holds its whole JSON document (with the address)."""
    import json

    try:
        return "address" in json.loads(path.read_text())
    except (OSError, ValueError):
        return False


@pytest.fixture(scope="module")
def real_cluster(tmp_path_factory):
    """A real scheduler and two workers, the `distributed` command-line tools, each
    worker started in a directory of its own (not the client's); yields the scheduler's
    address and the workers' directories."""
    import json

    base = tmp_path_factory.mktemp("cluster")
    dask_cli = Path(sys.executable).parent / "dask"
    address_file = base / "scheduler.json"
    started = [
        subprocess.Popen(
            [
                str(dask_cli),
                "scheduler",
                "--host",
                "127.0.0.1",
                "--port",
                "0",
                "--no-dashboard",
                "--scheduler-file",
                str(address_file),
            ],
            cwd=base,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=user_env(),
        )
    ]
    homes = []
    try:
        # (the file appears before the scheduler has written it whole: wait for JSON)
        wait_until(lambda: _written_address(address_file), "the scheduler's address")
        address = json.loads(address_file.read_text())["address"]
        for k in range(2):
            home = base / f"worker{k}"
            home.mkdir()
            homes.append(home)
            started.append(
                subprocess.Popen(
                    [
                        str(dask_cli),
                        "worker",
                        address,
                        "--nthreads",
                        "1",
                        "--no-dashboard",
                        "--host",
                        "127.0.0.1",
                    ],
                    cwd=home,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                    env=user_env(),
                )
            )
        yield address, homes
    finally:
        # The workers first, each gone before the scheduler is asked to go (a worker
        # whose scheduler went first retries it for seconds).
        for proc in reversed(started):
            proc.terminate()
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


@pytest.mark.slow
def test_a_real_cluster_reads_what_the_client_names(tmp_path, real_cluster, monkeypatch):
    """Workers in other directories, holding decoys by the same relative names; plain and
    compressed inputs: the outputs are those of sequential runs."""
    import gzip

    address, homes = real_cluster
    inputs = tmp_path / "in"
    inputs.mkdir()
    texts = [b"a\nb\nc\na\nb\nc\nd\n" * 50, b"x\na\nb\nc\ny\n" * 30]
    (inputs / "one.log").write_bytes(texts[0])
    (inputs / "two.log.gz").write_bytes(gzip.compress(texts[1]))
    names = ["one.log", "two.log.gz"]
    for home in homes:
        for name in names:
            (home / name).write_bytes(b"decoy\n")
    want = sequential(
        [inputs / name for name in names], tmp_path / "seq-lib", window_size=3, decompress=True
    )
    monkeypatch.chdir(inputs)
    p = subprocess.run(
        [
            str(Path(sys.executable).parent / "seqdedup-dask"),
            "-q",
            "-w",
            "3",
            "--scheduler",
            address,
            "--output-dir",
            str(tmp_path / "out"),
            *names,
        ],
        capture_output=True,
        env=user_env(),
        timeout=180,
    )
    assert p.returncode == 0, p.stderr
    written = ["one.log", "two.log"]  # (a compressed input's output has its plain name)
    assert [(tmp_path / "out" / name).read_bytes() for name in written] == want


def _worker_killer(token: Path, after: int):
    """A worker plugin that kills its worker's process as the worker starts its
    ``after``-th task, once in the cluster's life (``token``, made with O_EXCL, is the
    "once": the nanny's new worker gets the plugin too). Defined in a function so that
    cloudpickle sends the class itself (the workers cannot import this test module)."""
    from distributed import WorkerPlugin

    class KillAtATask(WorkerPlugin):
        name = "seqdedup-test-kill"

        def setup(self, worker) -> None:
            self.started = 0

        def transition(self, key, start, finish, **kwargs) -> None:
            if finish != "executing":
                return
            self.started += 1
            if self.started < after:
                return
            try:
                os.close(os.open(token, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
            except FileExistsError:
                return
            os.kill(os.getpid(), signal.SIGKILL)

    return KillAtATask()


@pytest.mark.slow
def test_a_real_cluster_that_loses_a_worker_writes_the_same_bytes(tmp_path, real_cluster):
    """One file in several partitions and another file, a library saved: a worker killed
    as it starts its second task (the results of its first lost with it) has its tasks
    run again elsewhere (each writes its output at a fixed offset and stages anew), and
    the outputs and the saved library are those of sequential runs. The kill is an event
    of the job (a plugin in the worker kills it), not a moment the test hopes to catch."""
    import random

    from distributed import Client

    address, _ = real_cluster
    rng = random.Random(5)
    big = b"".join(b"%d\n" % rng.randrange(40) for _ in range(20_000))
    paths = write_files(tmp_path / "in", [big.decode(), "1\n2\n3\nx\n1\n2\n3\n"])
    want = sequential(paths, tmp_path / "seq-lib", window_size=3)
    out, library = tmp_path / "out", tmp_path / "dask-lib"
    token = tmp_path / "killed"
    with Client(address, timeout=10) as client:
        before = client.run(os.getpid)
        client.register_plugin(_worker_killer(token, after=2))
        try:
            deduplicate_files(
                paths, out, scheduler=address, block_size=8 << 10, window_size=3,
                library_dir=library,
            )  # fmt: skip
        finally:
            client.unregister_worker_plugin("seqdedup-test-kill")
    assert token.exists(), "no worker was killed"
    assert [(out / p.name).read_bytes() for p in paths] == want
    probe = write_files(tmp_path / "probe", [big.decode()[:3000]])
    assert sequential(probe, None, read_sequences=(library,), window_size=3) == sequential(
        probe, None, read_sequences=(tmp_path / "seq-lib",), window_size=3
    )
    with Client(address, timeout=10) as client:  # (the nanny's new worker is there)
        client.wait_for_workers(2, timeout=60)
        assert set(client.run(os.getpid).values()) != set(before.values())


def test_positions_beyond_their_bits_are_refused_in_one_line(tmp_path, monkeypatch):
    """A window's position is the file's rank and the byte offset in one int64: an
    input too large for its offset bits, or too many inputs for the rank's, is refused
    with one line (here with fewer offset bits, to show it without 16 TiB of disk)."""
    from seqdedup.base.errors import SeqdedupError
    from seqdedup.dask import job as cluster

    paths = write_files(tmp_path / "in", ["a\n" * 20, "b\n"])
    monkeypatch.setattr(cluster, "POSITION_SHIFT", 5)  # offsets below 32 bytes
    with pytest.raises(SeqdedupError, match=r"an input of 40 bytes; one job takes inputs below"):
        cluster.plan_parts([str(p) for p in paths], b"\n", 1 << 20)
    monkeypatch.setattr(cluster, "POSITION_SHIFT", 62)  # two files at most
    with pytest.raises(SeqdedupError, match="at most 2 input files in one job, got 3"):
        cluster.plan_parts([str(p) for p in [*paths, paths[0]]], b"\n", 1 << 20)


def test_a_compressed_input_is_written_plain_under_its_plain_name(tmp_path):
    """`b.log.gz` is read decompressed; its output is plain text named `b.log`, never
    plain text under the `.gz` name (zcat would fail on it). Names that become one are
    refused before anything is written."""
    import gzip

    inputs = tmp_path / "in"
    inputs.mkdir()
    (inputs / "a.log").write_text("x\ny\nz\n")
    with gzip.open(inputs / "b.log.gz", "wt") as f:
        f.write("x\ny\nz\nw\n")
    p = _cli("-w", "3", "-q", "--scheduler", "sync", "--output-dir", str(tmp_path / "out"),
             str(inputs / "a.log"), str(inputs / "b.log.gz"))  # fmt: skip
    assert p.returncode == 0, p.stderr
    assert sorted(path.name for path in (tmp_path / "out").iterdir()) == ["a.log", "b.log"]
    assert (tmp_path / "out" / "b.log").read_bytes() == b"w\n"
    with gzip.open(inputs / "a.log.gz", "wt") as f:
        f.write("q\n")
    clash = _cli("--scheduler", "sync", "--output-dir", str(tmp_path / "out2"),
                 str(inputs / "a.log"), str(inputs / "a.log.gz"))  # fmt: skip
    assert clash.returncode == 1 and b"distinct names" in clash.stderr
    assert not (tmp_path / "out2").exists()


@pytest.mark.usefixtures("engine")
@pytest.mark.parametrize("fault", ["drop", "duplicate", "change"])
@pytest.mark.parametrize("leg", ["rows", "answers"])
def test_a_row_lost_or_added_in_flight_ends_the_job_in_one_line(tmp_path, monkeypatch, fault, leg):
    """Each exchange is counted and check-summed by its sender and checked by its
    receiver: one row dropped, duplicated or changed on the way (to an owner, or back
    to a partition) ends the job with one line, and nothing is written."""
    from seqdedup.dask import job as cluster

    def damaged(rows: bytes, width: int) -> bytes:
        assert len(rows) >= width, "the test needs a row to damage"
        if fault == "drop":
            return rows[:-width]
        if fault == "duplicate":
            return rows + rows[-width:]
        return rows[:-1] + bytes([rows[-1] ^ 1])

    if leg == "rows":
        bucket = cluster._bucket

        def in_flight(first, owner):
            rows = bucket(first, owner)
            return damaged(rows, cluster.ROW_BYTES) if owner == 0 and rows else rows

        monkeypatch.setattr(cluster, "_bucket", in_flight)
    else:
        second = cluster._second_pass

        def in_flight(reader, part, first, answers, *rest):
            if part.number == 1:  # (the second file repeats the first: it has answers)
                answers = [list(a) for a in answers]
                answers[0][1] = damaged(answers[0][1], cluster.ANSWER_BYTES)
            return second(reader, part, first, answers, *rest)

        monkeypatch.setattr(cluster, "_second_pass", in_flight)
    paths = write_files(tmp_path / "in", ["a\nb\nc\n", "a\nb\nc\nd\n"])
    out = tmp_path / "out"
    with pytest.raises(SeqdedupError, match=r"^the Dask job's rows did not arrive as sent \(") as e:
        deduplicate_files(paths, out, scheduler="sync", window_size=2, owners=1)
    assert "\n" not in str(e.value)
    assert list(out.iterdir()) == []
    # and undamaged, the same job runs
    monkeypatch.undo()
    deduplicate_files(paths, out, scheduler="sync", window_size=2, owners=1)
    assert (out / "part1.log").read_text() == "d\n"


@pytest.mark.usefixtures("engine")  # each engine hashes its own way
@settings(
    max_examples=examples(20),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    contents=file_sets,
    window=st.integers(1, 3),
    min_size=st.integers(1, 14),
    unit=st.sampled_from(["bytes", "tokens"]),
    filters=st.sampled_from([(), (FilterRule("bypass", "^ts"),)]),
    block=st.integers(1, 24),
    preload=st.one_of(st.none(), records),
    owners=st.integers(1, 4),
)
def test_a_minimum_size_matches_sequential_runs(
    tmp_path_factory, contents, window, min_size, unit, filters, block, preload, owners
):
    """The shortest large-enough stretches exchanged as windows are: the output, and
    the library saved, those of sequential runs (a file's stretches never span two)."""
    base = tmp_path_factory.mktemp("job")
    paths = write_files(base / "in", contents)
    sized = {"window_size": window, "min_size": min_size, "size_unit": unit}
    seq_lib, dask_lib = base / "seq-lib", base / "dask-lib"
    if preload is not None:
        for library in (seq_lib, dask_lib):
            pre = write_files(library.with_suffix(".pre"), ["\n".join(preload)])
            sequential(pre, library, **sized)
    want = sequential(paths, seq_lib, filters=filters, **sized)
    deduplicate_files(
        paths, base / "out", scheduler="sync", block_size=block, library_dir=dask_lib,
        owners=owners, filters=filters, **sized,
    )  # fmt: skip
    assert [(base / "out" / p.name).read_bytes() for p in paths] == want
    probe = write_files(base / "probe", ["\n".join(["a", "b", "c", "ts 1", "d", "a", "c", "d"])])
    assert sequential(probe, None, read_sequences=(seq_lib,), **sized) == sequential(
        probe, None, read_sequences=(dask_lib,), **sized
    )


def test_the_command_takes_a_minimum_size(tmp_path):
    pair = "long line one\nlong line two\n"
    paths = write_files(tmp_path / "in", [f"a\n{pair}b\n", f"x\n{pair}y\n"])
    for args, second in (
        (["-w", "auto"], f"x\n{pair}y\n".encode()),  # (the pair is 28 bytes: below 64)
        (["-w", "1", "--min-bytes", "20"], b"x\ny\n"),
    ):
        out = tmp_path / f"out{len(args)}"
        p = _cli("-q", *args, "--scheduler", "sync", "--output-dir", str(out), *map(str, paths))
        assert p.returncode == 0, p.stderr
        assert (out / "part1.log").read_bytes() == second


def test_stretches_as_long_as_the_bound_cross_partitions(tmp_path):
    """Only CAP records make a stretch large here: the frames reach CAP - 1 records
    past their partitions, so a repeat of 5,000 records cut by partitions goes whole."""
    block = "".join(f"r{k}\n" for k in range(5000))
    paths = write_files(tmp_path / "in", [block + "x\n" + block + "y\n"])
    huge = {"window_size": 1, "min_size": 10**12}
    want = sequential(paths, None, **huge)
    assert want == [(block + "x\ny\n").encode()]
    deduplicate_files(paths, tmp_path / "out", scheduler="sync", block_size=9000, **huge)
    assert (tmp_path / "out" / paths[0].name).read_bytes() == want[0]
