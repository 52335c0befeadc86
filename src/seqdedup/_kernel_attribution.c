/*
 * seqdedup._kernel.Attributor: attribution in C.
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
 *   - keys.data[k] is the key hash of tracked record offset + k; library.data[len + i]
 *     that of library record i (i < 0). A read outside what is held is a mismatch,
 *     never a memory access.
 *   - Pieces closed by a call are packed into `out` as PIECE_FIELDS int64s each and
 *     handed to Python as one bytes object, or only counted when nobody reads them.
 *   - A call that fails half-way marks the object broken: later calls raise.
 */
#include "_kernel.h"

#define TRIM_SLACK 65536          /* key hashes held past what a limited history needs */
#define INDEX_LIMIT ((int64_t)1 << 19) /* windows indexed (per history, or in all) */
#define LOCKSTEP 8                /* records compared at once while many candidates run */
#define UNLIMITED INT64_MAX
#define PIECE_FIELDS 5            /* start, end, source, count, identity */

/* ---- int64 vectors -------------------------------------------------------------- */

typedef struct {
    int64_t *data;
    size_t len, cap;
} Vec;

static int vec_reserve(Vec *v, size_t extra)
{
    if (extra > SIZE_MAX / 2 - v->len) return (void)PyErr_NoMemory(), -1;
    return grow((void **)&v->data, &v->cap, v->len + extra, sizeof(int64_t));
}

static int vec_push(Vec *v, int64_t x)
{
    if (v->len == v->cap && vec_reserve(v, 1) < 0) return -1;
    v->data[v->len++] = x;
    return 0;
}

static void vec_drop_front(Vec *v, size_t n)
{
    if (n >= v->len) {
        v->len = 0;
        return;
    }
    memmove(v->data, v->data + n, (v->len - n) * sizeof(int64_t));
    v->len -= n;
}

static void vec_free(Vec *v)
{
    PyMem_Free(v->data);
    v->data = NULL;
    v->len = v->cap = 0;
}

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

/* ---- the sequences table: identity -> count, least recently seen evicted ------------ */

typedef struct {
    int64_t limit;    /* UNLIMITED, or at least 1 */
    Table counts;     /* identity -> (count, node); node: its place in the LRU list */
    Table known;      /* with a limit: every identity ever counted (evicted ones too) */
    int64_t identified;
    /* LRU list over nodes (most recently seen at the tail) */
    int64_t *prev, *next;
    uint64_t *node_key;
    size_t nodes, prev_cap, next_cap, key_cap;
    int64_t head, tail;
} Sequences;

static void lru_unlink(Sequences *s, int64_t node)
{
    int64_t p = s->prev[node], n = s->next[node];
    if (p >= 0) s->next[p] = n; else s->head = n;
    if (n >= 0) s->prev[n] = p; else s->tail = p;
}

static void lru_append(Sequences *s, int64_t node)
{
    s->prev[node] = s->tail;
    s->next[node] = -1;
    if (s->tail >= 0) s->next[s->tail] = node; else s->head = node;
    s->tail = node;
}

/* One more sighting of a sequence: its count so far (2 at its first repeat: the
 * first occurrence counts), or -1 with MemoryError set. */
static int64_t sequences_observe(Sequences *s, uint64_t identity)
{
    int limited = s->limit != UNLIMITED;
    int64_t *entry = table_find(&s->counts, identity);
    if (entry != NULL) {
        entry[0]++;
        if (limited) {
            lru_unlink(s, entry[1]);
            lru_append(s, entry[1]);
        }
        return entry[0];
    }
    int created;
    if (!limited) {
        entry = table_upsert(&s->counts, identity, &created);
        if (entry == NULL) return -1;
        entry[0] = 2;
        s->identified++;
        return 2;
    }
    if (table_upsert(&s->known, identity, &created) == NULL) return -1;
    s->identified += created;
    int64_t node;
    if ((int64_t)table_len(&s->counts) >= s->limit) { /* full: the least recent goes */
        node = s->head;
        lru_unlink(s, node);
        table_remove(&s->counts, s->node_key[node]);
    } else {
        size_t want = s->nodes + 1;
        if (grow((void **)&s->prev, &s->prev_cap, want, sizeof(int64_t)) < 0 ||
            grow((void **)&s->next, &s->next_cap, want, sizeof(int64_t)) < 0 ||
            grow((void **)&s->node_key, &s->key_cap, want, sizeof(uint64_t)) < 0)
            return -1;
        node = (int64_t)s->nodes++;
    }
    entry = table_upsert(&s->counts, identity, &created);
    if (entry == NULL) return -1;
    entry[0] = 2;
    entry[1] = node;
    s->node_key[node] = identity;
    lru_append(s, node);
    return 2;
}

static void sequences_free(Sequences *s)
{
    table_free(&s->counts);
    table_free(&s->known);
    PyMem_Free(s->prev);
    PyMem_Free(s->next);
    PyMem_Free(s->node_key);
    s->prev = s->next = NULL;
    s->node_key = NULL;
    s->nodes = s->prev_cap = s->next_cap = s->key_cap = 0;
}

/* ---- the attributor ---------------------------------------------------------------- */

typedef struct {
    PyObject_HEAD
    PyObject *matcher;  /* whose sources say which earlier window each repeat repeats */
    int64_t width;
    int64_t limit;      /* max candidates, UNLIMITED */
    int64_t history;    /* max history, UNLIMITED */
    int64_t keep_back;  /* key hashes kept behind the last decided record; -1: all */
    uint64_t seed;      /* for piece identities */
    int report;         /* hand the pieces to Python (else only count them) */
    uint64_t *coeffs;
    Vec keys;           /* key hashes of tracked records offset .. */
    int64_t offset;
    Vec library;        /* key hashes of the loaded sequences, ending at index -1 */
    Vec numbers;        /* input record numbers of tracked records offset .. */
    int numbered;
    int64_t decided;
    int64_t piece_start, piece_end; /* piece_start -1: no open piece */
    Vec cands;          /* the open piece's candidate sources, aligned with its start */
    Vec ends;           /* where each earlier input stream ended */
    /* occurrence index: fingerprint -> (first node, count) and nodes (window, next) */
    Table occurring[2];
    Vec occ_nodes[2];
    int current;
    int64_t generation_end;
    int64_t run_start;  /* where the skipped run reaching the last batch's end began */
    int64_t indexed;    /* windows before this one are indexed (or lie in no run) */
    int64_t index_size; /* windows indexed in the current generation */
    Sequences sequences;
    Vec out;            /* pieces closed by this call */
    const int64_t *sources; /* the matcher's, read at the start of each add_runs */
    size_t sources_len;
    int64_t sources_base;
    Vec found, rooms, lengths, heap; /* scratch */
    int64_t work;       /* keys compared or hashed so far: tests check it grows linearly */
    int ready, broken, busy;
} Attributor;

static inline int key_at(const Attributor *a, int64_t i, uint64_t *key)
{
    if (i >= 0) {
        if (i < a->offset || i - a->offset >= (int64_t)a->keys.len) return 0;
        *key = (uint64_t)a->keys.data[i - a->offset];
        return 1;
    }
    if (i < -(int64_t)a->library.len) return 0;
    *key = (uint64_t)a->library.data[(int64_t)a->library.len + i];
    return 1;
}

/* Whether the n records from x have the same keys as the n from y (all readable). */
static int same_keys(Attributor *a, int64_t x, int64_t y, int64_t n)
{
    if (n <= 0) return 1;
    a->work += n;
    int64_t held_end = a->offset + (int64_t)a->keys.len;
    if (x >= a->offset && y >= a->offset && x <= held_end - n && y <= held_end - n) {
        const int64_t *p = a->keys.data + (x - a->offset), *q = a->keys.data + (y - a->offset);
        if (n <= 4) { /* the usual short comparison: a call to memcmp costs more */
            for (int64_t k = 0; k < n; k++)
                if (p[k] != q[k]) return 0;
            return 1;
        }
        return memcmp(p, q, (size_t)n * sizeof(int64_t)) == 0;
    }
    for (int64_t k = 0; k < n; k++) {
        uint64_t p, q;
        if (!key_at(a, x + k, &p) || !key_at(a, y + k, &q) || p != q) return 0;
    }
    return 1;
}

/* How many records from `start` (before `stop`) equal those from `source`. */
static int64_t match_length(Attributor *a, int64_t source, int64_t start, int64_t stop)
{
    int64_t length = 0;
    for (; start + length < stop; length++) {
        uint64_t p, q;
        if (!key_at(a, source + length, &p) || !key_at(a, start + length, &q) || p != q) break;
    }
    a->work += length + 1;
    return length;
}

/* The fingerprint of the window starting at i; 0 when it is not readable whole. */
static int window_fingerprint(Attributor *a, int64_t i, uint64_t *fp)
{
    uint64_t acc = 0;
    a->work += a->width;
    for (int64_t k = 0; k < a->width; k++) {
        uint64_t key;
        if (!key_at(a, i + k, &key)) return 0;
        acc += key * a->coeffs[k];
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
    for (int64_t window = first; window < first + count; window++) {
        uint64_t fp;
        if (!window_fingerprint(a, window, &fp)) continue;
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
    uint64_t fp;
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
    Table seen = {.stride = 2};
    int rc = -1, created;
    for (size_t k = 0; k < heap->len; k++)
        if (table_upsert(&seen, (uint64_t)heap->data[k], &created) == NULL) goto done;
    for (int64_t popped = 0; heap->len && popped < a->limit; popped++) {
        int64_t position = heap_pop(heap);
        if (vec_push(&a->found, position) < 0) goto done;
        for (int64_t period = 1; period < width; period++) {
            if (!same_keys(a, earliest + period, earliest, width - period)) continue;
            int64_t again = position + period;
            if (table_find(&seen, (uint64_t)again) != NULL) continue;
            if (again < lowest || again > highest) continue;
            if (a->ends.len && again + width > stream_end(a, again)) continue;
            if (!same_keys(a, again, earliest, width)) continue;
            if (table_upsert(&seen, (uint64_t)again, &created) == NULL || heap_push(heap, again) < 0)
                goto done;
        }
    }
    rc = 0;
done:
    table_free(&seen);
    return rc;
}

/* ---- pieces ------------------------------------------------------------------------- */

static int emit_piece(Attributor *a, int64_t start, int64_t end, int64_t source)
{
    if (start < a->offset || end - a->offset >= (int64_t)a->keys.len || end < start) {
        PyErr_SetString(PyExc_RuntimeError, "attribution: a piece's records are not held");
        return -1;
    }
    uint64_t identity = seqdedup_xxh64((const unsigned char *)(a->keys.data + (start - a->offset)),
                                       (size_t)(end - start + 1) * sizeof(int64_t), a->seed);
    int64_t count = sequences_observe(&a->sequences, identity);
    if (count < 0) return -1;
    if (!a->report) return 0;
    if (vec_reserve(&a->out, PIECE_FIELDS) < 0) return -1;
    int64_t *p = a->out.data + a->out.len;
    p[0] = start;
    p[1] = end;
    p[2] = source;
    p[3] = count;
    p[4] = (int64_t)identity;
    a->out.len += PIECE_FIELDS;
    return 0;
}

static int close_piece(Attributor *a)
{
    int64_t start = a->piece_start;
    a->piece_start = -1;
    return emit_piece(a, start, a->piece_end, a->cands.data[0]);
}

/* Open a piece at skipped record `record` with its candidate sources. */
static int open_piece(Attributor *a, int64_t record, int run_start)
{
    a->piece_start = record;
    a->piece_end = record - 1;
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
        PyErr_Format(PyExc_RuntimeError,
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
            uint64_t wanted;
            if (!key_at(a, start + length, &wanted)) {
                *best = length;
                return 0;
            }
            shift = offset + length;
            a->work += (int64_t)a->cands.len;
            size_t matching = 0;
            for (size_t i = 0; i < a->cands.len; i++) {
                uint64_t key;
                keep[i] = shift < a->rooms.data[i] && key_at(a, a->cands.data[i] + shift, &key) &&
                          key == wanted;
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
            PyErr_Format(PyExc_RuntimeError,
                         "attribution: no candidate matches skipped record %lld",
                         (long long)start);
            return -1;
        }
        if (best) {
            a->piece_end = start + best - 1;
            start += best;
        }
        if (start == stop) return 0; /* the piece may go on with the next records */
        if (close_piece(a) < 0 || open_piece(a, start, 0) < 0) return -1;
    }
    return 0;
}

static void trim(Attributor *a)
{
    if (a->keep_back < 0 || (int64_t)a->keys.len <= 2 * a->keep_back + TRIM_SLACK) return;
    int64_t oldest = a->decided - a->keep_back;
    if (a->piece_start >= 0) { /* an open piece and its sources stay readable */
        if (a->piece_start < oldest) oldest = a->piece_start;
        for (size_t i = 0; i < a->cands.len; i++)
            if (a->cands.data[i] >= 0 && a->cands.data[i] < oldest) oldest = a->cands.data[i];
    }
    int64_t drop = oldest - a->offset;
    if (drop <= 0) return;
    vec_drop_front(&a->keys, (size_t)drop);
    if (a->numbered) vec_drop_front(&a->numbers, (size_t)drop);
    a->offset += drop;
}

/* Take the next `size` tracked records, given as their runs of skipped records
 * (runs[2k], runs[2k+1]): tracked indices, half-open, in order. */
static int add_runs(Attributor *a, int64_t size, const int64_t *runs, size_t nruns)
{
    int64_t base = a->decided, end = base + size;
    for (size_t k = 0; k < nruns; k++) {
        int64_t start = runs[2 * k], stop = runs[2 * k + 1];
        int64_t before = k ? runs[2 * k - 1] : base;
        if (start < before || stop <= start || stop > end) {
            PyErr_SetString(PyExc_ValueError, "runs must be ordered, non-empty and in the batch");
            return -1;
        }
    }
    if (end > a->offset + (int64_t)a->keys.len) {
        PyErr_SetString(PyExc_ValueError, "more records decided than key hashes given");
        return -1;
    }
    if (seqdedup_matcher_sources(a->matcher, &a->sources, &a->sources_len, &a->sources_base) < 0)
        return -1;
    a->decided = end;
    index_rotate(a, end);
    if (a->piece_start >= 0 && size && !(nruns && runs[0] == base) && close_piece(a) < 0)
        return -1; /* a kept record ends the run left open */
    for (size_t k = 0; k < nruns; k++) {
        int64_t start = runs[2 * k], stop = runs[2 * k + 1];
        if (a->piece_start < 0 && stop < end) {
            /* The common case, a run that its window's earliest occurrence covers whole
             * (no candidate can do better): open, extend and close at once. */
            int64_t source;
            if (!source_of(a, start, &source)) {
                PyErr_Format(PyExc_RuntimeError,
                             "attribution: skipped record %lld starts no repeat window",
                             (long long)start);
                return -1;
            }
            if ((a->ends.len == 0 || source + stop - start <= stream_end(a, source)) &&
                same_keys(a, source, start, stop - start)) {
                if (emit_piece(a, start, stop - 1, source) < 0 ||
                    index_add_run(a, start, stop, base) < 0)
                    return -1;
                continue;
            }
        }
        if (index_add_run(a, start, stop, base) < 0) return -1;
        if (a->piece_start < 0 && open_piece(a, start, 1) < 0) return -1;
        if (extend(a, start, stop) < 0) return -1;
        if (stop < end && close_piece(a) < 0) return -1; /* a kept record ends the run */
    }
    a->run_start = open_run_start(runs, nruns, base, size, a->run_start);
    trim(a);
    return 0;
}

/* ---- Python glue -------------------------------------------------------------------- */

static int enter(Attributor *a)
{
    if (!a->ready) {
        PyErr_SetString(PyExc_RuntimeError, "Attributor is not initialised");
        return -1;
    }
    if (a->broken) {
        PyErr_SetString(PyExc_RuntimeError,
                        "Attributor is unusable after an earlier error in one of its calls");
        return -1;
    }
    if (a->busy) {
        PyErr_SetString(PyExc_RuntimeError, "Attributor is in use by another thread");
        return -1;
    }
    a->busy = 1;
    a->out.len = 0;
    return 0;
}

/* Leave a call: the pieces it closed (bytes; None when they are only counted). */
static PyObject *leave(Attributor *a, int rc)
{
    a->busy = 0;
    if (rc < 0) {
        a->broken = 1;
        return NULL;
    }
    if (!a->report) Py_RETURN_NONE;
    return PyBytes_FromStringAndSize((const char *)a->out.data,
                                     (Py_ssize_t)(a->out.len * sizeof(int64_t)));
}

/* Append int64 values given as a buffer (8-byte items) or a sequence of ints. */
static int extend_from(Vec *v, PyObject *values)
{
    if (PyObject_CheckBuffer(values)) {
        Py_buffer view;
        if (PyObject_GetBuffer(values, &view, PyBUF_SIMPLE) < 0) return -1;
        int rc = -1;
        if (view.len % 8) {
            PyErr_SetString(PyExc_ValueError, "expected a buffer of int64 values");
        } else if (vec_reserve(v, (size_t)view.len / 8) == 0) {
            if (view.len) memcpy(v->data + v->len, view.buf, (size_t)view.len);
            v->len += (size_t)view.len / 8;
            rc = 0;
        }
        PyBuffer_Release(&view);
        return rc;
    }
    PyObject *seq = PySequence_Fast(values, "expected a buffer of int64 or a sequence of ints");
    if (seq == NULL) return -1;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    int rc = vec_reserve(v, (size_t)n);
    for (Py_ssize_t k = 0; rc == 0 && k < n; k++) {
        PyObject *item = PySequence_Fast_GET_ITEM(seq, k);
        if (!PyLong_Check(item)) {
            PyErr_SetString(PyExc_TypeError, "expected ints");
            rc = -1;
            break;
        }
        uint64_t value = (uint64_t)PyLong_AsUnsignedLongLongMask(item);
        if (value == (uint64_t)-1 && PyErr_Occurred()) rc = -1;
        else v->data[v->len++] = (int64_t)value;
    }
    Py_DECREF(seq);
    return rc;
}

static PyObject *Attributor_append_keys(Attributor *a, PyObject *hashes)
{
    if (enter(a) < 0) return NULL;
    size_t before = a->keys.len;
    int rc = extend_from(&a->keys, hashes);
    if (rc < 0) a->keys.len = before; /* nothing half-added */
    a->busy = 0;
    if (rc < 0) return NULL;
    Py_RETURN_NONE;
}

static PyObject *Attributor_set_library_keys(Attributor *a, PyObject *region)
{
    if (enter(a) < 0) return NULL;
    Vec fresh = {0};
    int rc = extend_from(&fresh, region);
    a->busy = 0;
    if (rc < 0) {
        vec_free(&fresh);
        return NULL;
    }
    vec_free(&a->library);
    a->library = fresh;
    Py_RETURN_NONE;
}

/* The runs as int64 pairs: from a buffer, or a list of (start, stop, ...) tuples. */
static int runs_from(PyObject *obj, Vec *runs)
{
    runs->len = 0;
    if (PyObject_CheckBuffer(obj)) {
        if (extend_from(runs, obj) < 0) return -1;
    } else {
        PyObject *seq = PySequence_Fast(obj, "runs: a buffer of int64 pairs or a list of tuples");
        if (seq == NULL) return -1;
        Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
        int rc = vec_reserve(runs, 2 * (size_t)n);
        for (Py_ssize_t k = 0; rc == 0 && k < n; k++) {
            PyObject *run = PySequence_Fast_GET_ITEM(seq, k);
            long long start, stop;
            if (!PyTuple_Check(run) || PyTuple_GET_SIZE(run) < 2) {
                PyErr_SetString(PyExc_TypeError, "a run is a tuple (start, stop, ...)");
                rc = -1;
                break;
            }
            start = PyLong_AsLongLong(PyTuple_GET_ITEM(run, 0));
            stop = PyLong_AsLongLong(PyTuple_GET_ITEM(run, 1));
            if ((start == -1 || stop == -1) && PyErr_Occurred()) {
                rc = -1;
                break;
            }
            runs->data[runs->len++] = start;
            runs->data[runs->len++] = stop;
        }
        Py_DECREF(seq);
        if (rc < 0) return -1;
    }
    if (runs->len % 2) {
        PyErr_SetString(PyExc_ValueError, "runs: an even number of values");
        return -1;
    }
    return 0;
}

static PyObject *Attributor_add_runs(Attributor *a, PyObject *args)
{
    Py_ssize_t size;
    PyObject *runs_obj, *numbers = Py_None;
    if (!PyArg_ParseTuple(args, "nO|O", &size, &runs_obj, &numbers)) return NULL;
    if (size < 0) {
        PyErr_SetString(PyExc_ValueError, "size must not be negative");
        return NULL;
    }
    if (enter(a) < 0) return NULL;
    Vec runs = {0};
    int rc = runs_from(runs_obj, &runs);
    if (rc == 0 && numbers != Py_None) {
        size_t before = a->numbers.len;
        rc = extend_from(&a->numbers, numbers);
        if (rc == 0 && a->numbers.len - before != (size_t)size) {
            PyErr_SetString(PyExc_ValueError, "one number per record decided");
            rc = -1;
        }
        if (rc < 0) a->numbers.len = before;
        else a->numbered = 1;
    }
    if (rc < 0) { /* refused before any change */
        vec_free(&runs);
        a->busy = 0;
        return NULL;
    }
    rc = add_runs(a, (int64_t)size, runs.data, runs.len / 2);
    vec_free(&runs);
    return leave(a, rc);
}

/* add(keep, numbers=None): the decisions as flags (a list of bools or a bytes-like of
 * 0/1), as the record path has them. */
static PyObject *Attributor_add(Attributor *a, PyObject *args)
{
    PyObject *keep, *numbers = Py_None;
    if (!PyArg_ParseTuple(args, "O|O", &keep, &numbers)) return NULL;
    PyObject *seq = PySequence_Fast(keep, "keep: a sequence of flags");
    if (seq == NULL) return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    Vec runs = {0};
    int64_t base = a->decided;
    int rc = 0;
    for (Py_ssize_t k = 0; k < n && rc == 0;) {
        PyObject *item = PySequence_Fast_GET_ITEM(seq, k);
        int flag = item == Py_True ? 1 : item == Py_False ? 0 : PyObject_IsTrue(item);
        if (flag < 0) {
            rc = -1;
            break;
        }
        if (flag) {
            k++;
            continue;
        }
        Py_ssize_t stop = k + 1;
        while (stop < n) {
            PyObject *later = PySequence_Fast_GET_ITEM(seq, stop);
            int next = later == Py_True ? 1 : later == Py_False ? 0 : PyObject_IsTrue(later);
            if (next < 0) {
                rc = -1;
                break;
            }
            if (next) break;
            stop++;
        }
        if (rc == 0 && (vec_push(&runs, base + k) < 0 || vec_push(&runs, base + stop) < 0)) rc = -1;
        k = stop;
    }
    Py_DECREF(seq);
    PyObject *result = NULL;
    if (rc == 0) {
        PyObject *packed = PyBytes_FromStringAndSize((const char *)runs.data,
                                                     (Py_ssize_t)(runs.len * sizeof(int64_t)));
        if (packed != NULL) {
            PyObject *call = Py_BuildValue("(nOO)", n, packed, numbers);
            Py_DECREF(packed);
            if (call != NULL) {
                result = Attributor_add_runs(a, call);
                Py_DECREF(call);
            }
        }
    }
    vec_free(&runs);
    return result;
}

static PyObject *Attributor_finish(Attributor *a, PyObject *Py_UNUSED(ignored))
{
    if (enter(a) < 0) return NULL;
    int rc = a->piece_start >= 0 ? close_piece(a) : 0;
    return leave(a, rc);
}

/* The input stream ended (after its last records were added) and another begins: close
 * the open piece; no piece or source spans the boundary. */
static PyObject *Attributor_new_stream(Attributor *a, PyObject *Py_UNUSED(ignored))
{
    if (enter(a) < 0) return NULL;
    int rc = a->piece_start >= 0 ? close_piece(a) : 0;
    if (rc == 0) rc = vec_push(&a->ends, a->decided);
    a->run_start = -1;
    return leave(a, rc);
}

static PyObject *Attributor_record_number(Attributor *a, PyObject *arg)
{
    long long tracked = PyLong_AsLongLong(arg);
    if (tracked == -1 && PyErr_Occurred()) return NULL;
    if (!a->numbered) return PyLong_FromLongLong(tracked + 1);
    if (tracked < a->offset || tracked - a->offset >= (int64_t)a->numbers.len) {
        PyErr_SetString(PyExc_IndexError, "record number no longer held");
        return NULL;
    }
    return PyLong_FromLongLong(a->numbers.data[tracked - a->offset]);
}

static int limit_from(PyObject *value, const char *name, int64_t minimum, int64_t *out)
{
    if (value == Py_None) {
        *out = UNLIMITED;
        return 0;
    }
    long long n = PyLong_AsLongLong(value);
    if (n == -1 && PyErr_Occurred()) return -1;
    if (n < minimum) {
        PyErr_Format(PyExc_ValueError, "%s must be at least %lld", name, (long long)minimum);
        return -1;
    }
    *out = n;
    return 0;
}

static int Attributor_init(Attributor *a, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"matcher", "max_candidates", "max_history", "max_sequences",
                             "seed", "report", NULL};
    PyObject *matcher, *candidates = Py_None, *history = Py_None, *sequences = Py_None;
    unsigned long long seed = 0;
    int report = 1;
    if (a->ready || a->broken) {
        PyErr_SetString(PyExc_RuntimeError, "Attributor is already initialised");
        return -1;
    }
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O|OOOKp", kwlist, &matcher, &candidates,
                                     &history, &sequences, &seed, &report))
        return -1;
    if (!seqdedup_is_matcher(matcher)) return -1;
    PyObject *width_obj = PyObject_GetAttrString(matcher, "window_size");
    if (width_obj == NULL) return -1;
    Py_ssize_t width = PyLong_AsSsize_t(width_obj);
    Py_DECREF(width_obj);
    if (width == -1 && PyErr_Occurred()) return -1;
    int64_t limit, horizon, table_limit;
    if (limit_from(candidates, "max_candidates", 1, &limit) < 0 ||
        limit_from(history, "max_history", width, &horizon) < 0 ||
        limit_from(sequences, "max_sequences", 1, &table_limit) < 0)
        return -1;
    uint64_t *coeffs = seqdedup_coefficients(width);
    if (coeffs == NULL) return -1;
    Py_INCREF(matcher);
    a->matcher = matcher;
    a->coeffs = coeffs;
    a->width = width;
    a->limit = limit;
    a->history = horizon;
    a->keep_back = horizon == UNLIMITED ? -1 : horizon + 2 * (int64_t)width;
    a->generation_end = horizon;
    a->seed = seed;
    a->report = report;
    a->sequences.limit = table_limit;
    a->ready = 1;
    return 0;
}

static PyObject *Attributor_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    Attributor *a = (Attributor *)type->tp_alloc(type, 0);
    if (a == NULL) return NULL;
    a->piece_start = -1;
    a->run_start = -1;
    a->occurring[0].stride = a->occurring[1].stride = 3;
    a->sequences.counts.stride = 3;
    a->sequences.known.stride = 2;
    a->sequences.head = a->sequences.tail = -1;
    return (PyObject *)a;
}

static int Attributor_traverse(Attributor *a, visitproc visit, void *arg)
{
    Py_VISIT(Py_TYPE(a));
    Py_VISIT(a->matcher);
    return 0;
}

static int Attributor_clear(Attributor *a)
{
    Py_CLEAR(a->matcher);
    a->ready = 0; /* its matcher is gone */
    return 0;
}

static void Attributor_dealloc(Attributor *a)
{
    PyTypeObject *type = Py_TYPE(a);
    PyObject_GC_UnTrack(a);
    (void)Attributor_clear(a);
    PyMem_Free(a->coeffs);
    Vec *vecs[] = {&a->keys,    &a->library, &a->numbers, &a->cands,   &a->ends,
                   &a->out,     &a->found,   &a->rooms,   &a->lengths, &a->heap,
                   &a->occ_nodes[0], &a->occ_nodes[1]};
    for (size_t k = 0; k < sizeof vecs / sizeof vecs[0]; k++) vec_free(vecs[k]);
    table_free(&a->occurring[0]);
    table_free(&a->occurring[1]);
    sequences_free(&a->sequences);
    type->tp_free((PyObject *)a);
    Py_DECREF(type);
}

static PyObject *get_decided(Attributor *a, void *c) { return PyLong_FromLongLong(a->decided); }

static PyObject *get_open_piece(Attributor *a, void *c)
{
    return PyBool_FromLong(a->piece_start >= 0);
}

static PyObject *get_identified(Attributor *a, void *c)
{
    return PyLong_FromLongLong(a->sequences.identified);
}

static PyObject *get_sequences(Attributor *a, void *c)
{
    return PyLong_FromSize_t(table_len(&a->sequences.counts));
}

static PyObject *get_work(Attributor *a, void *c) { return PyLong_FromLongLong(a->work); }

static PyObject *get_held(Attributor *a, void *c)
{
    return PyLong_FromSize_t(a->keys.len);
}

static PyGetSetDef Attributor_getset[] = {
    {"decided", (getter)get_decided, NULL, "how many tracked records have been taken", NULL},
    {"open_piece", (getter)get_open_piece, NULL, "whether a piece is open", NULL},
    {"identified", (getter)get_identified, NULL,
     "distinct sequences identified in this run (evicted ones too)", NULL},
    {"sequences", (getter)get_sequences, NULL, "sequences in the table now", NULL},
    {"held_keys", (getter)get_held, NULL, "key hashes held (for tests)", NULL},
    {"work", (getter)get_work, NULL, "keys compared or hashed so far (for tests)", NULL},
    {NULL}};

static PyMethodDef Attributor_methods[] = {
    {"append_keys", (PyCFunction)Attributor_append_keys, METH_O,
     "append_keys(hashes): key hashes of the next tracked records (int64 buffer or ints)"},
    {"set_library_keys", (PyCFunction)Attributor_set_library_keys, METH_O,
     "set_library_keys(region): the loaded sequences' key hashes, ending at index -1"},
    {"add_runs", (PyCFunction)Attributor_add_runs, METH_VARARGS,
     "add_runs(size, runs, numbers=None) -> bytes | None: the next size tracked records as "
     "their skipped runs (int64 pairs, or (start, stop, ...) tuples); the pieces closed, "
     "5 int64 each (start, end, source, count, identity)"},
    {"add", (PyCFunction)Attributor_add, METH_VARARGS,
     "add(keep, numbers=None) -> bytes | None: the same from one flag per record"},
    {"finish", (PyCFunction)Attributor_finish, METH_NOARGS,
     "finish() -> bytes | None: end of input, the open piece closed"},
    {"new_stream", (PyCFunction)Attributor_new_stream, METH_NOARGS,
     "new_stream() -> bytes | None: the stream ended, another begins"},
    {"record_number", (PyCFunction)Attributor_record_number, METH_O,
     "record_number(tracked) -> int: its 1-based input record number"},
    {NULL}};

static PyType_Slot Attributor_slots[] = {
    {Py_tp_doc, "Attribution of a matcher's duplicate runs: pieces, sources, counts."},
    {Py_tp_new, Attributor_new},
    {Py_tp_init, (initproc)Attributor_init},
    {Py_tp_dealloc, (destructor)Attributor_dealloc},
    {Py_tp_traverse, (traverseproc)Attributor_traverse},
    {Py_tp_clear, (inquiry)Attributor_clear},
    {Py_tp_methods, Attributor_methods},
    {Py_tp_getset, Attributor_getset},
    {0, NULL}};

PyType_Spec seqdedup_attributor_spec = {
    .name = "seqdedup._kernel.Attributor",
    .basicsize = sizeof(Attributor),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .slots = Attributor_slots,
};
