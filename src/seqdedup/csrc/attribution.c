/*
 * Attribution in C (the Attributor type is in attributor.c).
 *
 * The matcher decides what is skipped; attribution says what each duplicate run
 * repeats. It cuts each run into pieces, each reported against one earlier occurrence
 * (its source), and counts each piece's content in the sequences table. This is the
 * definition of seqdedup.attribution.Attributor, the Python engine's, which stays the
 * judge (the tests compare both with the oracles): the same candidates, the same cuts,
 * the same sources and counts; only the identity numbers differ (each engine hashes a
 * piece's key hashes its own way, both seeded per process).
 *
 * Invariants:
 *   - keys.data[2k], keys.data[2k + 1] are the two lanes of the key hash of tracked
 *     record offset + k (held_keys(a) of them); the library's likewise, record i < 0 at
 *     2 * (held + i). A read outside what is held is a mismatch, never a memory access.
 *   - Pieces closed by a call are packed into `out` as PIECE_FIELDS int64s each and
 *     handed to Python as one bytes object, or only counted when nobody reads them.
 *   - A call that fails half-way marks the object broken: later calls raise.
 */
#include "attribution.h"

static int compare_i64(const void *x, const void *y)
{
    int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
    return (a > b) - (a < b);
}

/* Sort and drop repeats. */
static void vec_sort_unique(Vec *v)
{
    if (v->len < 2) return;
    if (v->len <= 32) { /* the usual few candidates: qsort's set-up costs more */
        for (size_t k = 1; k < v->len; k++) {
            int64_t x = v->data[k];
            size_t j = k;
            for (; j > 0 && v->data[j - 1] > x; j--) v->data[j] = v->data[j - 1];
            v->data[j] = x;
        }
    } else {
        qsort(v->data, v->len, sizeof(int64_t), compare_i64);
    }
    size_t kept = 1;
    for (size_t k = 1; k < v->len; k++)
        if (v->data[k] != v->data[kept - 1]) v->data[kept++] = v->data[k];
    v->len = kept;
}

static inline int key_at(const Attributor *a, int64_t i, Hash128 *key)
{
    const int64_t *at;
    if (i >= 0) {
        if (i < a->offset || i - a->offset >= held_keys(&a->keys)) return 0;
        at = a->keys.data + 2 * (i - a->offset);
    } else {
        if (i < -held_keys(&a->library)) return 0;
        at = a->library.data + 2 * (held_keys(&a->library) + i);
    }
    key->lo = (uint64_t)at[0];
    key->hi = (uint64_t)at[1];
    return 1;
}

/* Whether the n records from x have the same keys as the n from y (all readable). */
static int same_keys(Attributor *a, int64_t x, int64_t y, int64_t n)
{
    if (n <= 0) return 1;
    a->work += n;
    int64_t held_end = a->offset + held_keys(&a->keys);
    if (x >= a->offset && y >= a->offset && x <= held_end - n && y <= held_end - n) {
        const int64_t *p = a->keys.data + 2 * (x - a->offset);
        const int64_t *q = a->keys.data + 2 * (y - a->offset);
        if (n <= 2) { /* the usual short comparison: a call to memcmp costs more */
            for (int64_t k = 0; k < 2 * n; k++)
                if (p[k] != q[k]) return 0;
            return 1;
        }
        return memcmp(p, q, (size_t)n * 2 * sizeof(int64_t)) == 0;
    }
    for (int64_t k = 0; k < n; k++) {
        Hash128 p, q;
        if (!key_at(a, x + k, &p) || !key_at(a, y + k, &q) || !hash_equal(p, q)) return 0;
    }
    return 1;
}

/* How many records from `start` (before `stop`) equal those from `source`. */
static int64_t match_length(Attributor *a, int64_t source, int64_t start, int64_t stop)
{
    int64_t length = 0;
    for (; start + length < stop; length++) {
        Hash128 p, q;
        if (!key_at(a, source + length, &p) || !key_at(a, start + length, &q) ||
            !hash_equal(p, q))
            break;
    }
    a->work += length + 1;
    return length;
}

/* The fingerprint of the window starting at i; 0 when it is not readable whole. */
static int window_fingerprint(Attributor *a, int64_t i, Hash128 *fp)
{
    Hash128 acc = {0, 0};
    a->work += a->width;
    for (int64_t k = 0; k < a->width; k++) {
        Hash128 key;
        if (!key_at(a, i + k, &key)) return 0;
        if (a->width == 1) {
            acc = key; /* a 1-record window is its key hash */
        } else {
            acc.lo = fp_add(acc.lo, fp_mul(fp_input(key.lo), a->coeffs[k]));
            acc.hi = fp_add(acc.hi, fp_mul(fp_input(key.hi), a->coeffs[a->width + k]));
        }
    }
    *fp = acc;
    return 1;
}

/* Where the stream holding `position` ends: UNLIMITED for the current stream and the
 * library region (which its sentinels separate). */
static int64_t stream_end(const Attributor *a, int64_t position)
{
    size_t n = a->ends.len;
    if (n == 0 || position < 0 || position >= a->ends.data[n - 1]) return UNLIMITED;
    size_t low = 0, high = n; /* the first end > position */
    while (low < high) {
        size_t middle = low + (high - low) / 2;
        if (a->ends.data[middle] <= position) low = middle + 1; else high = middle;
    }
    return a->ends.data[low];
}

/* 1 and *source when window `window` repeats an earlier one, else 0 (from the sources
 * the matcher held at the start of this call: it cannot change during the call). */
static inline int source_of(const Attributor *a, int64_t window, int64_t *source)
{
    if (window < a->sources_base || window - a->sources_base >= (int64_t)a->sources_len)
        return 0;
    int64_t found = a->sources[window - a->sources_base];
    if (found == NO_SOURCE) return 0;
    *source = found;
    return 1;
}

/* ---- the occurrence index ------------------------------------------------------------
 * The matcher knows one occurrence of a window, its earliest remembered. Every later one
 * is a repeat window, and so lies inside a duplicate run, or overlaps an earlier
 * occurrence (periodic content). So the windows of duplicate runs are indexed by
 * fingerprint as they are decided (the earliest `limit` per content, at most
 * INDEX_LIMIT windows, in input order), and from each occurrence its periodic
 * neighbours are checked. */

static void index_rotate(Attributor *a, int64_t decided)
{
    if (a->history == UNLIMITED) return;
    while (decided > a->generation_end) {
        int older = 1 - a->current;
        table_clear(&a->occurring[older]);
        a->occ_nodes[older].len = 0;
        a->current = older;
        a->generation_end += a->history;
        a->index_size = 0;
    }
}

static int index_add_run(Attributor *a, int64_t start, int64_t stop, int64_t base)
{
    if (start == base && a->run_start >= 0) start = a->run_start; /* goes on from before */
    int64_t first = start > a->indexed ? start : a->indexed;
    int64_t count = stop - a->width + 1 - first;
    if (count > INDEX_LIMIT - a->index_size) count = INDEX_LIMIT - a->index_size;
    if (count <= 0) return 0;
    a->index_size += count;
    Table *occurring = &a->occurring[a->current];
    Vec *nodes = &a->occ_nodes[a->current];
    /* The run's windows are consecutive: after the first, each fingerprint is rolled
     * from the one before, fp(j+1) = (fp(j) - h[j] * B^(W-1)) * B + h[j+W] per lane (as
     * the matcher's), two multiplications instead of W; B = coeffs[W-2]. */
    const int rolls = a->width > 1;
    const uint64_t base_lo = rolls ? a->coeffs[a->width - 2] : 0;
    const uint64_t base_hi = rolls ? a->coeffs[2 * a->width - 2] : 0;
    const uint64_t drop_lo = rolls ? fp_sub(0, fp_mul(a->coeffs[0], base_lo)) : 0;
    const uint64_t drop_hi = rolls ? fp_sub(0, fp_mul(a->coeffs[a->width], base_hi)) : 0;
    Hash128 fp = {0, 0};
    int have = 0; /* fp holds the fingerprint of the window before this one */
    for (int64_t window = first; window < first + count; window++) {
        Hash128 gone, come;
        if (have && key_at(a, window - 1, &gone) && key_at(a, window - 1 + a->width, &come)) {
            fp.lo = fp_roll(fp.lo, base_lo, gone.lo, drop_lo, come.lo);
            fp.hi = fp_roll(fp.hi, base_hi, gone.hi, drop_hi, come.hi);
            a->work++;
        } else if (window_fingerprint(a, window, &fp)) {
            have = rolls;
        } else {
            have = 0;
            continue;
        }
        int created;
        int64_t *entry = table_upsert(occurring, fp, &created);
        if (entry == NULL) return -1;
        if (created) entry[0] = -1;
        if (entry[1] >= a->limit) continue;
        int64_t node = (int64_t)nodes->len / 2;
        if (vec_push(nodes, window) < 0 || vec_push(nodes, entry[0]) < 0) return -1;
        entry[0] = node;
        entry[1]++;
    }
    a->indexed = first + count;
    return 0;
}

/* Where the skipped run reaching the end of the batch [base, base + size) began
 * (`previous` when it goes on from the batch before), or -1 when none does. */
static int64_t open_run_start(const int64_t *runs, size_t nruns, int64_t base, int64_t size,
                              int64_t previous)
{
    if (size == 0) return previous;
    if (nruns == 0 || runs[2 * nruns - 1] != base + size) return -1;
    int64_t last = runs[2 * nruns - 2];
    return (last == base && previous >= 0) ? previous : last;
}

static int heap_push(Vec *heap, int64_t value)
{
    if (vec_push(heap, value) < 0) return -1;
    int64_t *h = heap->data;
    for (size_t k = heap->len - 1; k > 0;) {
        size_t parent = (k - 1) / 2;
        if (h[parent] <= h[k]) break;
        int64_t t = h[parent];
        h[parent] = h[k];
        h[k] = t;
        k = parent;
    }
    return 0;
}

static int64_t heap_pop(Vec *heap)
{
    int64_t *h = heap->data, top = h[0];
    h[0] = h[--heap->len];
    for (size_t k = 0;;) {
        size_t left = 2 * k + 1, right = left + 1, least = k;
        if (left < heap->len && h[left] < h[least]) least = left;
        if (right < heap->len && h[right] < h[least]) least = right;
        if (least == k) break;
        int64_t t = h[least];
        h[least] = h[k];
        h[k] = t;
        k = least;
    }
    return top;
}

/* Append to a->found the remembered occurrences of the window at `earliest` that end
 * before `window` starts, earliest first (at most `limit`): `earliest`, the indexed
 * windows of duplicate runs with its content, and where the content is periodic, the
 * occurrences overlapping those. */
static int index_find(Attributor *a, int64_t earliest, int64_t window)
{
    const int64_t width = a->width;
    int64_t lowest = a->offset;
    if (a->history != UNLIMITED && window - a->history > lowest) lowest = window - a->history;
    int64_t highest = window - width;
    Vec *heap = &a->heap;
    heap->len = 0;
    if (vec_push(heap, earliest) < 0) return -1;
    Hash128 fp;
    if (window_fingerprint(a, earliest, &fp)) {
        for (int g = 0; g < 2; g++) {
            const int64_t *entry = table_find(&a->occurring[g], fp);
            size_t from = heap->len;
            for (int64_t node = entry ? entry[0] : -1; node >= 0;) {
                int64_t position = a->occ_nodes[g].data[2 * node];
                if (lowest <= position && position <= highest && vec_push(heap, position) < 0)
                    return -1;
                node = a->occ_nodes[g].data[2 * node + 1];
            }
            for (size_t i = from, j = heap->len; i + 1 < j; i++, j--) { /* newest first: */
                int64_t t = heap->data[i];                          /* put them in order */
                heap->data[i] = heap->data[j - 1];
                heap->data[j - 1] = t;
            }
        }
    }
    vec_sort_unique(heap); /* sorted: a heap already */
    int periodic = 0;
    for (int64_t d = 1; d < width && !periodic; d++)
        periodic = same_keys(a, earliest + d, earliest, width - d);
    if (!periodic) {
        size_t take = (int64_t)heap->len < a->limit ? heap->len : (size_t)a->limit;
        if (vec_reserve(&a->found, take) < 0) return -1;
        memcpy(a->found.data + a->found.len, heap->data, take * sizeof(int64_t));
        a->found.len += take;
        return 0;
    }
    /* Popped in position order, and a periodic neighbour lies after what it neighbours:
     * the first `limit` popped are the earliest occurrences. */
    Table seen = {.stride = 3}; /* positions, as keys {position, 0} */
    int rc = -1, created;
    for (size_t k = 0; k < heap->len; k++)
        if (table_upsert(&seen, position_key(heap->data[k]), &created) == NULL) goto done;
    for (int64_t popped = 0; heap->len && popped < a->limit; popped++) {
        int64_t position = heap_pop(heap);
        if (vec_push(&a->found, position) < 0) goto done;
        for (int64_t period = 1; period < width; period++) {
            if (!same_keys(a, earliest + period, earliest, width - period)) continue;
            int64_t again = position + period;
            if (table_find(&seen, position_key(again)) != NULL) continue;
            if (again < lowest || again > highest) continue;
            if (a->ends.len && again + width > stream_end(a, again)) continue;
            if (!same_keys(a, again, earliest, width)) continue;
            if (table_upsert(&seen, position_key(again), &created) == NULL ||
                heap_push(heap, again) < 0)
                goto done;
        }
    }
    rc = 0;
done:
    table_free(&seen);
    return rc;
}

/* ---- pieces ------------------------------------------------------------------------- */

/* A closed piece counted (and handed over as the attributor says); `first`: it begins
 * its run. */
static int emit_piece(Attributor *a, int64_t start, int64_t end, int64_t source, int first)
{
    if (start < a->offset || end - a->offset >= held_keys(&a->keys) || end < start) {
        seqdedup_fail(PyExc_AssertionError, "attribution: a piece's records are not held");
        return -1;
    }
    Hash128 identity =
        seqdedup_hash128((const unsigned char *)(a->keys.data + 2 * (start - a->offset)),
                         (size_t)(end - start + 1) * sizeof(Hash128), a->seed);
    int made;
    int64_t count = seqdedup_sequences_observe(&a->sequences, identity, &made);
    if (count < 0) return -1;
    if (a->top) {
        if (seqdedup_sequences_observe(&a->tops, identity, &made) < 0) return -1;
        if (!a->report && !made) return 0; /* --top alone reads a sequence's first piece */
    } else if (!a->report) {
        return 0;
    }
    if (a->run_firsts && !first) return 0; /* (counted: only run beginnings are read) */
    if (vec_reserve(&a->out, PIECE_FIELDS) < 0) return -1;
    int64_t *p = a->out.data + a->out.len;
    p[0] = start;
    p[1] = end;
    p[2] = source;
    p[3] = count;
    p[4] = (int64_t)identity.lo;
    p[5] = (int64_t)identity.hi;
    a->out.len += PIECE_FIELDS;
    return 0;
}

int seqdedup_close_piece(Attributor *a)
{
    int64_t start = a->piece_start;
    a->piece_start = -1;
    return emit_piece(a, start, a->piece_end, a->cands.data[0], a->piece_first);
}

/* Open a piece at skipped record `record` with its candidate sources. */
static int open_piece(Attributor *a, int64_t record, int run_start)
{
    a->piece_start = record;
    a->piece_end = record - 1;
    a->piece_first = run_start;
    /* The first record of a run is covered by one repeat window only, the one starting
     * at it (an earlier one would cover the record before too). */
    int64_t first = run_start ? record : (record - a->width + 1 > 0 ? record - a->width + 1 : 0);
    a->found.len = 0;
    for (int64_t window = first; window <= record; window++) {
        int64_t source;
        if (!source_of(a, window, &source)) continue;
        if (window == record) { /* the window the piece starts with: all its occurrences */
            if (index_find(a, source, window) < 0) return -1;
        } else if (vec_push(&a->found, source + record - window) < 0) { /* aligned */
            return -1;
        }
    }
    if (a->found.len == 0) {
        seqdedup_fail(PyExc_AssertionError,
                     "attribution: skipped record %lld is covered by no repeat window",
                     (long long)record);
        return -1;
    }
    vec_sort_unique(&a->found);
    size_t take = (int64_t)a->found.len < a->limit ? a->found.len : (size_t)a->limit;
    a->cands.len = 0;
    if (vec_reserve(&a->cands, take) < 0) return -1;
    memcpy(a->cands.data, a->found.data, take * sizeof(int64_t));
    a->cands.len = take;
    return 0;
}

/* Keep the candidates (and their rooms) for which keep[i] holds; how many stay. */
static size_t narrow(Attributor *a, const unsigned char *keep)
{
    size_t kept = 0;
    for (size_t i = 0; i < a->cands.len; i++) {
        if (!keep[i]) continue;
        a->cands.data[kept] = a->cands.data[i];
        a->rooms.data[kept] = a->rooms.data[i];
        kept++;
    }
    return kept;
}

/* How far from `start` (before `stop`) the best candidates match; the candidates are
 * narrowed to those that match that far. Many candidates are narrowed a block of
 * records at a time (those matching the whole block beat the rest; if none does,
 * record by record inside it); the last few are followed to their ends. */
static int longest(Attributor *a, int64_t offset, int64_t start, int64_t stop, int64_t *best)
{
    size_t n = a->cands.len;
    a->rooms.len = 0;
    if (vec_reserve(&a->rooms, n) < 0 || vec_reserve(&a->lengths, n) < 0) return -1;
    for (size_t i = 0; i < n; i++) { /* how many records each has before its stream ends */
        int64_t c = a->cands.data[i];
        int64_t end = a->ends.len ? stream_end(a, c) : UNLIMITED;
        a->rooms.data[i] = end == UNLIMITED ? UNLIMITED : end - c;
    }
    a->rooms.len = n;
    unsigned char *keep = (unsigned char *)a->lengths.data; /* n bytes of scratch */
    int64_t length = 0;
    while (a->cands.len > 2 && start + length < stop) {
        int64_t at = start + length;
        int64_t step = stop - at < LOCKSTEP ? stop - at : LOCKSTEP;
        int64_t shift = offset + length;
        size_t whole = 0;
        for (size_t i = 0; i < a->cands.len; i++) {
            int64_t c = a->cands.data[i];
            keep[i] = shift + step <= a->rooms.data[i] && same_keys(a, c + shift, at, step);
            whole += keep[i];
        }
        if (whole) {
            a->cands.len = narrow(a, keep);
            length += step;
            continue;
        }
        for (int64_t k = 0; k < step; k++) { /* none matches the whole block: it ends inside */
            Hash128 wanted;
            if (!key_at(a, start + length, &wanted)) {
                *best = length;
                return 0;
            }
            shift = offset + length;
            a->work += (int64_t)a->cands.len;
            size_t matching = 0;
            for (size_t i = 0; i < a->cands.len; i++) {
                Hash128 key;
                keep[i] = shift < a->rooms.data[i] && key_at(a, a->cands.data[i] + shift, &key) &&
                          hash_equal(key, wanted);
                matching += keep[i];
            }
            if (!matching) {
                *best = length;
                return 0;
            }
            a->cands.len = narrow(a, keep);
            length++;
        }
    }
    if (start + length == stop) {
        *best = length;
        return 0;
    }
    int64_t at = start + length, shift = offset + length, most = 0;
    int64_t *lengths = a->lengths.data;
    for (size_t i = 0; i < a->cands.len; i++) {
        int64_t room = a->rooms.data[i];
        int64_t end = (room == UNLIMITED || at + room - shift >= stop) ? stop : at + room - shift;
        lengths[i] = match_length(a, a->cands.data[i] + shift, at, end);
        if (lengths[i] > most) most = lengths[i];
    }
    size_t kept = 0;
    for (size_t i = 0; i < a->cands.len; i++)
        if (lengths[i] == most) a->cands.data[kept++] = a->cands.data[i];
    a->cands.len = kept;
    *best = length + most;
    return 0;
}

/* Extend the open piece over skipped records [start, stop). */
static int extend(Attributor *a, int64_t start, int64_t stop)
{
    while (start < stop) {
        int64_t best;
        if (longest(a, start - a->piece_start, start, stop, &best) < 0) return -1;
        if (!best && a->piece_end < a->piece_start) {
            seqdedup_fail(PyExc_AssertionError,
                         "attribution: no candidate matches skipped record %lld",
                         (long long)start);
            return -1;
        }
        if (best) {
            a->piece_end = start + best - 1;
            start += best;
        }
        if (start == stop) return 0; /* the piece may go on with the next records */
        if (seqdedup_close_piece(a) < 0 || open_piece(a, start, 0) < 0) return -1;
    }
    return 0;
}

static void trim(Attributor *a)
{
    if (a->keep_back < 0 || held_keys(&a->keys) <= 2 * a->keep_back + TRIM_SLACK) return;
    int64_t oldest = a->decided - a->keep_back;
    if (a->piece_start >= 0) { /* an open piece and its sources stay readable */
        if (a->piece_start < oldest) oldest = a->piece_start;
        for (size_t i = 0; i < a->cands.len; i++)
            if (a->cands.data[i] >= 0 && a->cands.data[i] < oldest) oldest = a->cands.data[i];
    }
    int64_t drop = oldest - a->offset;
    if (drop <= 0) return;
    vec_drop_front(&a->keys, 2 * (size_t)drop);
    if (a->numbered) vec_drop_front(&a->numbers, (size_t)drop);
    a->offset += drop;
}

/* Take the next `size` tracked records, given as their runs of skipped records
 * (runs[2k], runs[2k+1]): tracked indices, half-open, in order, with the matcher's
 * sources of its recent windows as they were after it decided them. */
int seqdedup_add_runs(Attributor *a, int64_t size, const int64_t *runs, size_t nruns,
                      const int64_t *sources, size_t sources_len, int64_t sources_base)
{
    int64_t base = a->decided, end = base + size;
    for (size_t k = 0; k < nruns; k++) {
        int64_t start = runs[2 * k], stop = runs[2 * k + 1];
        int64_t before = k ? runs[2 * k - 1] : base;
        if (start < before || stop <= start || stop > end) {
            seqdedup_fail(PyExc_ValueError, "runs must be ordered, non-empty and in the batch");
            return -1;
        }
    }
    if (end > a->offset + held_keys(&a->keys)) {
        seqdedup_fail(PyExc_ValueError, "more records decided than key hashes given");
        return -1;
    }
    a->sources = sources;
    a->sources_len = sources_len;
    a->sources_base = sources_base;
    a->decided = end;
    index_rotate(a, end);
    if (a->piece_start >= 0 && size && !(nruns && runs[0] == base) && seqdedup_close_piece(a) < 0)
        return -1; /* a kept record ends the run left open */
    for (size_t k = 0; k < nruns; k++) {
        int64_t start = runs[2 * k], stop = runs[2 * k + 1];
        if (a->piece_start < 0 && stop < end) {
            /* The common case, a run that its window's earliest occurrence covers whole
             * (no candidate can do better): open, extend and close at once. */
            int64_t source;
            if (!source_of(a, start, &source)) {
                seqdedup_fail(PyExc_AssertionError,
                             "attribution: skipped record %lld starts no repeat window",
                             (long long)start);
                return -1;
            }
            if ((a->ends.len == 0 || source + stop - start <= stream_end(a, source)) &&
                same_keys(a, source, start, stop - start)) {
                if (emit_piece(a, start, stop - 1, source, 1) < 0 ||
                    index_add_run(a, start, stop, base) < 0)
                    return -1;
                continue;
            }
        }
        if (index_add_run(a, start, stop, base) < 0) return -1;
        if (a->piece_start < 0 && open_piece(a, start, 1) < 0) return -1;
        if (extend(a, start, stop) < 0) return -1;
        if (stop < end && seqdedup_close_piece(a) < 0) return -1; /* a kept record ends the run */
    }
    a->run_start = open_run_start(runs, nruns, base, size, a->run_start);
    trim(a);
    return 0;
}
