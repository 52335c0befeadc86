"""A slow, obviously correct ``seqdedup diff`` (docs/diff.md), over keys as they are.

Inputs are lists of (stream, key); GOOD is several inputs, BAD one. Written from the
definitions, record by record, with sets where the engine keeps counters."""

from __future__ import annotations

from collections import Counter, defaultdict

from oracle import interleaved_skipped

EDGE = object()


def streams_of(records):
    """stream -> [(position, key)] in input order."""
    found = defaultdict(list)
    for position, (name, key) in enumerate(records):
        found[name].append((position, key))
    return found


def sequences(good):
    """GOOD's counts and its sequences: chains of keys that always follow each other."""
    counts = Counter(key for records in good for _, key in records)
    after, before = defaultdict(set), defaultdict(set)
    for records in good:
        for stream in streams_of(records).values():
            keys = [key for _, key in stream]
            for i, key in enumerate(keys):
                before[key].add(keys[i - 1] if i > 0 else EDGE)
                after[key].add(keys[i + 1] if i + 1 < len(keys) else EDGE)
    link = {}
    for a in counts:
        if len(after[a]) == 1:
            (b,) = after[a]
            if b is not EDGE and b != a and before[b] == {a}:
                link[a] = b
    linked_to = set(link.values())
    chains = []
    for head in counts:
        if head not in linked_to:
            chain = [head]
            while chain[-1] in link:
                chain.append(link[chain[-1]])
            chains.append(chain)
    return counts, chains


def oracle_diff(good, bad, window=1, factor=2.0, min_count=4):
    counts, chains = sequences(good)
    chain_of = {key: c for c, chain in enumerate(chains) for key in chain}
    inputs = len(good)
    return {
        "new": _new(bad, counts, window),
        "broken": _broken(bad, counts, chains, chain_of, inputs),
        "rates": _rates(bad, counts, chains, inputs, factor, min_count),
    }


def _new(bad, counts, window):
    skipped = interleaved_skipped(bad, window)
    stretches = []
    for stream in streams_of(bad).values():
        run = []
        for position, key in stream:
            if key not in counts:
                run.append(position)
            elif run:
                stretches.append(run)
                run = []
        if run:
            stretches.append(run)
    stretches.sort()
    made, home = [], {}
    for run in stretches:
        visible = [p for p in run if not skipped[p]]
        if not visible:
            item = made[home[bad[run[0]][1]]]
            item["again"] += 1
            item["again_last"] = run[-1] + 1
            item["again_length"] += len(run)
            continue
        for p in visible:
            home.setdefault(bad[p][1], len(made))
        made.append(
            {
                "first": run[0] + 1,
                "last": run[-1] + 1,
                "length": len(run),
                "shown": [p + 1 for p in visible],
                "repeated": len(run) - len(visible),
                "again": 0,
                "again_last": 0,
                "again_length": 0,
            }
        )
    return made


def _broken(bad, counts, chains, chain_of, inputs):
    def checked(key):
        chain = chains[chain_of[key]] if key in chain_of else []
        return len(chain) >= 2 and counts[chain[0]] >= min(2, inputs)

    found = defaultdict(list)  # chain -> breakings (lists of (position, index))
    for stream in streams_of(bad).values():
        fragments = []  # (chain, [(position, index)])
        i = 0
        while i < len(stream):
            key = stream[i][1]
            if not checked(key):
                fragments.append(None)
                i += 1
                continue
            c = chain_of[key]
            fragment = [(stream[i][0], chains[c].index(key))]
            while i + 1 < len(stream):
                nxt = stream[i + 1][1]
                if chain_of.get(nxt) == c and chains[c].index(nxt) == fragment[-1][1] + 1:
                    fragment.append((stream[i + 1][0], fragment[-1][1] + 1))
                    i += 1
                else:
                    break
            fragments.append((c, fragment))
            i += 1
        before = None
        for item in fragments:
            if item is None:
                before = None
                continue
            c, fragment = item
            indices = [k for _, k in fragment]
            if indices == list(range(len(chains[c]))):
                before = None
                continue
            if (
                before is not None
                and before[0] == c
                and not ({k for _, k in found[c][-1]} & set(indices))
            ):
                found[c][-1] += fragment
            else:
                found[c].append(list(fragment))
            before = (c,)
    result = []
    for c, breakings in found.items():
        first = breakings[0]
        indices = [k for _, k in first]
        if indices != sorted(indices):
            how = "reordered"
        elif indices != list(range(indices[0], indices[-1] + 1)):
            how = "partly"
        elif indices[0] == 0:
            how = "cut short"
        elif indices[-1] == len(chains[c]) - 1:
            how = "started part way"
        else:
            how = "partly"
        result.append(
            (
                how,
                len(indices),
                len(chains[c]),
                counts[chains[c][0]],
                len(breakings),
                first[0][0] + 1,
                first[-1][0] + 1,
                breakings[-1][0][0] + 1,
            )
        )
    return sorted(result, key=lambda r: r[5])


def _rates(bad, counts, chains, inputs, factor, min_count):
    in_bad = Counter(key for _, key in bad)
    where = defaultdict(list)
    for position, (_, key) in enumerate(bad):
        where[key].append(position + 1)
    result = []
    for chain in chains:
        good = counts[chain[0]]
        seen = max(in_bad[key] for key in chain)
        good_rate = good / inputs
        if seen == 0:
            if good >= min_count:
                result.append(("gone", good, 0, 0, 0))
            continue
        if seen >= factor * good_rate and seen >= min_count:
            kind = "more"
        elif seen * factor <= good_rate and good >= min_count:
            kind = "less"
        else:
            continue
        lines = [line for key in chain for line in where[key]]
        result.append((kind, good, seen, min(lines), max(lines)))
    return sorted(result)
