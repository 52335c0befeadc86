"""seqdedup-mcp started as a subprocess and driven by the official MCP SDK's own client:
its tools listed, a file reduced, every reference expanded and compared byte for byte,
files outside its roots refused, the store private and clearable."""

from __future__ import annotations

import base64
import os
import re
import stat
import sys
from importlib.util import find_spec
from pathlib import Path

import pytest

from conftest import needs, user_env

# (Looked for, not imported: the SDK costs every worker a second at collection.)
pytestmark = needs(find_spec("mcp") is not None, "the MCP SDK (pip install 'seqdedup[mcp]')")

BIN = Path(sys.executable).parent
CI_LOG = Path("examples/ci.log").resolve()


# The server as its console script starts it, with the pattern time limit lowered
# (as test_timelimit.py lowers it in-process): a test of the limit waits 0.3 s, not 5.
LOWERED_LIMIT = (
    "import sys; from seqdedup.config import timelimit; timelimit.PATTERN_SECONDS = 0.3; "
    "from seqdedup.cli.launch import seqdedup_mcp; sys.exit(seqdedup_mcp())"
)


def run_client(root: Path, store: Path, body, lowered_limit: bool = False):
    """Start the server on ``root`` and run ``body(client)`` (async) against it."""
    import anyio
    from mcp import Client, StdioServerParameters

    start = [sys.executable, "-c", LOWERED_LIMIT] if lowered_limit else [str(BIN / "seqdedup-mcp")]
    params = StdioServerParameters(
        command=start[0],
        args=[*start[1:], str(root), "--store", str(store)],
        env=user_env(),
    )

    async def main():
        async with Client(params) as client:
            return await body(client)

    return anyio.run(main)


def structured(result):
    assert not result.is_error, result.content
    return result.structured_content


def test_the_tools_reduce_expand_top_and_suggest(tmp_path):
    root = tmp_path / "logs"
    root.mkdir()
    log = root / "ci.log"
    log.write_bytes(CI_LOG.read_bytes() * 3)
    outside = tmp_path / "secret.log"
    outside.write_bytes(b"secret\n")
    store = tmp_path / "cache" / "removed.db"

    async def body(client):
        listed = (await client.list_tools()).tools
        # descriptions as written, without the source's indentation
        assert all("\n    " not in (tool.description or "") for tool in listed)
        tools = {tool.name for tool in listed}
        result = await client.call_tool("reduce", {"path": "ci.log", "budget": 150, "window": 3})
        reduced = {**structured(result), "text": result.content[0].text}
        # the text is the reduced text itself, not a JSON dump of the result
        assert len(result.content) == 1 and not result.content[0].text.startswith("{")
        expanded = {}
        for entry in reduced["references"]:
            got = structured(await client.call_tool("expand", {"reference": entry["reference"]}))
            expanded[entry["reference"]] = got
        refused = await client.call_tool("reduce", {"path": str(outside), "budget": 10})
        unknown = await client.call_tool("expand", {"reference": "sd:ffffffffffff"})
        top = await client.call_tool("top", {"path": "ci.log", "window": 3, "count": 2})
        suggested = structured(await client.call_tool("suggest", {"path": "ci.log"}))
        from_text = structured(
            await client.call_tool("reduce", {"text": "a b c d e\nf g h\n" * 20, "budget": 30})
        )
        return tools, reduced, expanded, refused, unknown, top, suggested, from_text

    tools, reduced, expanded, refused, unknown, top, suggested, from_text = run_client(
        root, store, body
    )
    assert {"reduce", "expand", "top", "suggest", "clear_store"} <= tools
    # the documentation's table names every tool the server lists, and no other
    page = (Path(__file__).resolve().parent.parent / "docs" / "llm-context.md").read_text()
    table = page[page.index("| tool | what it does |") :].split("\n\n")[0]
    assert set(re.findall(r"^\| `(\w+)` \|", table, flags=re.MULTILINE)) == tools
    assert reduced["tokens_out"] < reduced["tokens_in"] and reduced["references"]
    original = log.read_bytes().splitlines(keepends=True)
    for entry in reduced["references"]:
        got = expanded[entry["reference"]]
        first, last = entry["lines"]
        assert base64.b64decode(got["base64"]) == b"".join(original[first - 1 : last])
        assert entry["reference"] in reduced["text"]
    assert refused.is_error and "outside the server's roots" in refused.content[0].text
    assert unknown.is_error and "not in the store" in unknown.content[0].text
    rows = structured(top)["result"]
    assert rows and rows[0]["removed"] > 0 and rows[0]["length"] >= 3
    assert "window" in str(suggested).lower()
    assert from_text["references"]
    # The store is private to the user and lasts across sessions
    assert stat.S_IMODE(os.stat(store).st_mode) == 0o600
    first = reduced["references"][0]

    async def again(client):
        kept = structured(await client.call_tool("expand", {"reference": first["reference"]}))
        await client.call_tool("clear_store", {})
        gone = await client.call_tool("expand", {"reference": first["reference"]})
        return kept, gone

    kept, gone = run_client(root, store, again)
    assert kept["base64"] == expanded[first["reference"]]["base64"]
    assert gone.is_error


def test_the_top_tool_finds_the_repeats_of_a_real_log(tmp_path):
    """A real log (Hadoop, from loghub): every line has its own timestamp, so compared as
    they are nothing repeats ten lines long; the tool masks them by default."""
    root = tmp_path / "logs"
    root.mkdir()
    data = Path(__file__).resolve().parent / "data" / "loghub" / "Hadoop_2k.log"
    (root / "hadoop.log").write_bytes(data.read_bytes())

    async def body(client):
        masked = await client.call_tool("top", {"path": "hadoop.log", "count": 5})
        exact = await client.call_tool("top", {"path": "hadoop.log", "normalize": ""})
        return masked, exact

    masked, exact = run_client(root, tmp_path / "removed.db", body)
    rows = structured(masked)["result"]
    assert len(rows) == 5 and all(row["removed"] >= 10 for row in rows)
    from seqdedup.config.normalize import ALL, normalize_py

    lines = data.read_bytes().split(b"\n")
    for row in rows:  # each row's first record: a copy of the line first seen (masked)
        seen = lines[row["first_seen"]["lines"][0] - 1]
        assert normalize_py(row["first_record"].encode(), ALL) == normalize_py(seen, ALL)
    assert structured(exact)["result"] == []


def test_a_keep_pattern_that_backtracks_without_end_is_a_tool_error(tmp_path):
    """The reduce tool's `keep` patterns are matched line by line under the time limit
    of every user pattern (5 s a line): (a+)+$ on 40 'a' and a 'b' would run for ages;
    the tool answers with one line naming the pattern, and the server goes on (the
    limit lowered to 0.3 s here)."""
    root = tmp_path / "logs"
    root.mkdir()
    text = "first\n" + "a" * 40 + "b\nlast\n"

    async def body(client):
        slow = await client.call_tool("reduce", {"text": text, "budget": 50, "keep": ["(a+)+$"]})
        after = await client.call_tool("reduce", {"text": "x\ny\n", "budget": 50})
        return slow, after

    slow, after = run_client(root, tmp_path / "removed.db", body, lowered_limit=True)
    assert slow.is_error
    assert "--keep '(a+)+$' took more than 0.3 s on line 2" in slow.content[0].text
    assert not after.is_error and after.content[0].text == "x\ny\n"


def test_a_file_or_text_past_the_read_cap_is_one_error_and_read_no_further(tmp_path, monkeypatch):
    """The reduce tool reads at most one byte past its cap: a 10 GB sparse file is
    refused after 64 MiB and a byte, without running out of memory; a text the same."""
    from seqdedup.base.errors import SeqdedupError
    from seqdedup.cli import mcp as mcp_server

    root = tmp_path / "logs"
    root.mkdir()
    sparse = root / "huge.log"
    with sparse.open("wb") as file:
        file.truncate(10 << 30)
    roots = mcp_server.Roots([root])
    read: list[int] = []
    real = mcp_server.read_capped
    monkeypatch.setattr(mcp_server, "read_capped", lambda p: read.append(1) or real(p))
    with pytest.raises(SeqdedupError, match="holds more than 67,108,864 bytes"):
        mcp_server.reduce_tool(
            roots, tmp_path / "s.db", 1 << 20, 100, "huge.log", None, 3, None, []
        )
    assert read == [1]
    monkeypatch.setattr(mcp_server, "READ_CAP", 10)
    with pytest.raises(SeqdedupError, match="the text holds more than 10 bytes"):
        mcp_server.reduce_tool(roots, tmp_path / "s.db", 1 << 20, 100, None, "x\n" * 6, 3, None, [])


def test_the_diff_tool_caps_what_one_call_reads_summed_over_its_files(tmp_path, monkeypatch):
    """One file named 40 times is 40 times its bytes: the call is refused once what it
    named passes the cap (it was 64 MiB per file: a request of a few kilobytes took the
    server to 1.78 GB), having read no more than the cap and a byte."""
    from seqdedup.base.errors import SeqdedupError
    from seqdedup.cli import mcp as mcp_server

    root = tmp_path / "logs"
    root.mkdir()
    (root / "g.log").write_bytes(b"".join(b"line %d\n" % k for k in range(20_000)))
    size = (root / "g.log").stat().st_size
    monkeypatch.setattr(mcp_server, "READ_CAP", 3 * size + size // 2)
    read: list[int] = []
    real = mcp_server.read_capped
    monkeypatch.setattr(
        mcp_server, "read_capped", lambda p, cap: read.append(len(real(p, cap))) or real(p, cap)
    )
    roots = mcp_server.Roots([root])
    with pytest.raises(SeqdedupError, match=r"hold more than [\d,]+ bytes together"):
        mcp_server.diff_tool(roots, ["g.log"] * 40, "g.log", 1000, None, 2.0, 4)
    assert len(read) == 4 and sum(read) == mcp_server.READ_CAP + 1
    answer = mcp_server.diff_tool(roots, ["g.log"] * 2, "g.log", 1000, None, 2.0, 4)
    assert answer["changed"] is False  # (three times the file fits)


def test_the_diff_tools_values_are_checked_as_the_command_lines(tmp_path):
    from seqdedup.base.errors import SeqdedupError
    from seqdedup.cli import mcp as mcp_server

    root = tmp_path / "logs"
    root.mkdir()
    (root / "g.log").write_bytes(b"a\n")
    roots = mcp_server.Roots([root])
    for factor, min_count, budget, message in (
        (0.5, 4, 100, "--factor must be a number more than 1, not 0.5"),
        (2.0, 0, 100, "--min-count must be at least 1, got 0"),
        (2.0, 4, 0, "budget must be at least 1"),
    ):
        with pytest.raises(SeqdedupError, match=re.escape(message)):
            mcp_server.diff_tool(roots, ["g.log"], "g.log", budget, None, factor, min_count)


def test_the_diff_tool_answers_within_its_budget(tmp_path):
    """The diff tool: the CI example's last green run against the failing one, under the
    server's roots: the text answer within the budget, changed and the counts beside it;
    a file outside the roots refused; a run against itself unchanged."""
    from seqdedup.base.tokens import estimate_tokens

    root = tmp_path / "logs"
    root.mkdir()
    ci = Path("examples/ci").resolve()
    for name in ("green.log", "failed.log"):
        (root / name).write_bytes((ci / name).read_bytes())
    outside = tmp_path / "secret.log"
    outside.write_bytes(b"secret\n")

    async def body(client):
        answer = await client.call_tool("diff", {"good": ["green.log"], "bad": "failed.log"})
        small = await client.call_tool(
            "diff", {"good": ["green.log"], "bad": "failed.log", "budget": 200}
        )
        same = await client.call_tool("diff", {"good": ["green.log"], "bad": "green.log"})
        refused = await client.call_tool("diff", {"good": [str(outside)], "bad": "failed.log"})
        return answer, small, same, refused

    answer, small, same, refused = run_client(root, tmp_path / "removed.db", body)
    found = structured(answer)
    assert found["changed"] is True and found["records"] == 65
    assert found["counts"] == {"new": 4, "values": 0, "broken": 3, "more": 1, "less": 0, "gone": 0}
    text = answer.content[0].text
    assert text.startswith("seqdedup diff: failed.log (65 records) against green.log")
    assert "sqlalchemy.exc.ProgrammingError" in text
    assert estimate_tokens(small.content[0].text.encode()) <= 200
    assert structured(same)["changed"] is False
    assert refused.is_error and "outside the server's roots" in refused.content[0].text


def test_the_loops_tool_names_a_transcripts_loop(tmp_path):
    """The loops tool on a real transcript under the server's roots: the loop its
    README names (records 9-12, period 1), as `seqdedup loops --format json` gives it;
    a normal transcript without one; a bad class word and a file outside refused."""
    root = tmp_path / "runs"
    root.mkdir()
    data = Path(__file__).parent / "data" / "transcripts"
    for name in ("sweagent_ctf-crypto-eps.traj", "sweagent_gpt4_swe-agent__test-repo-i1.traj"):
        (root / name).write_bytes((data / name).read_bytes())

    async def body(client):
        return [
            await client.call_tool("loops", arguments)
            for arguments in (
                {"path": "sweagent_ctf-crypto-eps.traj"},
                {"path": "sweagent_gpt4_swe-agent__test-repo-i1.traj"},
                {"path": "sweagent_ctf-crypto-eps.traj", "normalize": "colour"},
                {"path": str(data / "sweagent_ctf-crypto-eps.traj")},
            )
        ]

    looping, normal, bad_word, outside = run_client(root, tmp_path / "removed.db", body)
    (loop,) = structured(looping)["loops"]
    assert (loop["period"], loop["iterations"], loop["first"], loop["last"]) == (1, 4, "9", "12")
    assert loop["iteration"][0]["result"] == "Wrong flag!"
    assert structured(normal)["loops"] == [] and structured(normal)["calls"] == 5
    assert bad_word.is_error and "colour" in bad_word.content[0].text
    assert outside.is_error and "outside the server's roots" in outside.content[0].text
