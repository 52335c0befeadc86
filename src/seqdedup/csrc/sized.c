/*
 * The SizeDecider type: the rule with a minimum size (--min-bytes, --min-tokens), the
 * twin of seqdedup/sized.py (its docstring has the argument). A record is skipped when
 * it lies inside a stretch of one stream of at least `width` records and `min_size` of
 * size (or `cap` records) that equals an earlier stretch which ended before it started
 * (and started at most `history` records before it), or a stretch of a library sequence.
 *
 * Per record: its M stretch (the shortest large-enough one ending there) is looked up
 * by key (fingerprint, length) when the record arrives; its N stretch (the shortest
 * starting there) when the record that completes it arrives, and the record is decided
 * then. A key's slot holds where one content starts; contents that share a key (a
 * fingerprint collision) take the key's k-th variant, its length lane plus k * 2^32;
 * every candidate is confirmed by comparing key hashes.
 */
#include "sized.h"


/* ---- the stretches ---------------------------------------------------------------- */

/* (`sums` and `poly` hold records `base` on) */
static inline int is_large(const SizeDecider *d, const int64_t *sums, int64_t base, int64_t s,
                           int64_t e)
{
    int64_t n = e - s + 1;
    if (n < d->width) return 0;
    if (n >= d->cap) return 1;
    return sums[e + 1 - base] - sums[s - base] >= d->min_size;
}

static inline Hash128 key_of(const SizeDecider *d, const uint64_t *poly, int64_t base, int64_t s,
                             int64_t e)
{
    int64_t n = e - s + 1;
    Hash128 key = {fp_sub(poly[e + 1 - base], fp_mul(poly[s - base], d->powers[n])), (uint64_t)n};
    if (d->force_collisions) key.lo = 0;
    return key;
}

static inline const Hash128 *content(const SizeDecider *d, int64_t start)
{
    if (start < 0) return d->region + ((int64_t)d->region_len + start);
    return d->keys + (start - d->offset);
}

static inline int same(const SizeDecider *d, int64_t a, int64_t b, int64_t n)
{
    return memcmp(content(d, a), content(d, b), (size_t)n * sizeof(Hash128)) == 0;
}

/* ---- the tables ------------------------------------------------------------------- */

/* The k-th variant of a key: another content with the same fingerprint and length. */
static inline Hash128 variant(Hash128 key, uint64_t k)
{
    key.hi += k << 32; /* (the length lane holds at most 2^20) */
    return key;
}

/* The start of the occurrence equal to the stretch at `start` under `key`, or NULL. */
static int64_t *find(SizeDecider *d, Table *t, Hash128 key, int64_t start)
{
    int64_t n = (int64_t)key.hi;
    for (uint64_t k = 0;; k++) {
        int64_t *slot = table_find(t, variant(key, k));
        if (slot == NULL || same(d, *slot, start, n)) return slot;
    }
}

/* The slot of the content of the stretch at `start` under `key` (`*slot`): 1 when it is
 * new (the slot is its, holding `start`), 0 when an occurrence is there; -1 on failure. */
static int upsert(SizeDecider *d, Table *t, Hash128 key, int64_t start, int64_t **slot)
{
    int64_t n = (int64_t)key.hi;
    for (uint64_t k = 0;; k++) {
        int created;
        *slot = table_upsert(t, variant(key, k), &created);
        if (*slot == NULL) return -1;
        if (created) {
            **slot = start;
            return 1;
        }
        if (same(d, **slot, start, n)) return 0;
    }
}

/* Note an occurrence: the first of its content, or with a limited history the latest
 * (it replaces the earlier one; a library's stays). */
static int remember(SizeDecider *d, Table *t, Hash128 key, int64_t start)
{
    int64_t *slot;
    int r = upsert(d, t, key, start, &slot);
    if (r == 0 && d->history >= 0 && *slot >= 0) *slot = start;
    return r < 0 ? -1 : 0;
}

static int queue_push(Queue *q, int64_t position, Hash128 key)
{
    if (q->head && q->head * 2 >= q->len) { /* compact: what was taken is half of it */
        memmove(q->items, q->items + q->head, (q->len - q->head) * sizeof(Waiting));
        q->len -= q->head;
        q->head = 0;
    }
    if (grow((void **)&q->items, &q->cap, q->len + 1, sizeof(Waiting)) < 0) return -1;
    q->items[q->len].position = position;
    q->items[q->len].key = key;
    q->len++;
    return 0;
}

/* Whether the stretch [start, end] repeats: `as_end` for an M stretch, else N. -1 on
 * failure. */
static int repeats(SizeDecider *d, int64_t start, int64_t end, int as_end)
{
    Table *t = as_end ? d->m_table : d->n_table;
    Hash128 key = key_of(d, d->poly, d->offset, start, end);
    int64_t n = end - start + 1;
    if (d->history < 0) { /* the earliest occurrence, or this one noted: one probe */
        int64_t *slot;
        int r = upsert(d, t, key, start, &slot);
        return r <= 0 ? (r < 0 ? -1 : *slot + n - 1 < start) : 0;
    }
    Queue *q = as_end ? &d->waiting_m : &d->waiting_n;
    while (q->head < q->len) { /* admit the stretches that ended before this one starts */
        Waiting *w = q->items + q->head;
        if (w->position + (int64_t)w->key.hi - 1 >= start) break;
        if (remember(d, t, w->key, w->position) < 0) return -1;
        q->head++;
    }
    if (queue_push(q, start, key) < 0) return -1;
    int64_t *found = find(d, t, key, start);
    return found != NULL && (*found < 0 || start - *found <= d->history);
}

/* ---- feeding ---------------------------------------------------------------------- */

int sized_put_flag(SizeDecider *d, int keep)
{
    if (d->out_len == d->out_cap &&
        grow((void **)&d->out, &d->out_cap, d->out_len + 1, 1) < 0)
        return -1;
    d->out[d->out_len++] = (uint8_t)keep;
    return 0;
}

/* Room for `count` more records (and their flags). */
int sized_reserve(SizeDecider *d, size_t count)
{
    if (count > SIZE_MAX / 2 - d->held - 2) return seqdedup_no_memory();
    if (grow((void **)&d->keys, &d->records_cap, d->held + count, sizeof(Hash128)) < 0 ||
        grow((void **)&d->sums, &d->sums_cap, d->held + count + 1, sizeof(int64_t)) < 0 ||
        grow((void **)&d->poly, &d->poly_cap, d->held + count + 1, sizeof(uint64_t)) < 0 ||
        grow((void **)&d->m_repeat, &d->flags_cap, d->held + count, 1) < 0 ||
        grow((void **)&d->out, &d->out_cap, d->out_len + count + (size_t)(d->total - d->n_next),
             1) < 0 ||
        (d->tracking && grow((void **)&d->fresh, &d->fresh_cap, d->fresh_len + count, 1) < 0))
        return -1;
    return 0;
}

/* A record of key size `size` (bytes or tokens): it weighs one more, its delimiter. The
 * room is reserved. */
int sized_append(SizeDecider *d, Hash128 key, int64_t size)
{
    if (size < 0) return seqdedup_fail(PyExc_ValueError, "sizes are not negative");
    if (d->sums[d->held] > INT64_MAX - 1 - size)
        return seqdedup_fail(PyExc_OverflowError, "sizes add up to more than 2^63");
    d->keys[d->held] = key;
    d->sums[d->held + 1] = d->sums[d->held] + size + 1;
    d->poly[d->held + 1] = fp_add(fp_mul(d->poly[d->held], d->base), fp_reduce(key.lo));
    d->m_repeat[d->held] = 0;
    if (d->tracking) d->fresh[d->fresh_len++] = 0;
    d->held++;
    d->total++;
    return 0;
}

/* Flag [start, end], a first-seen stretch of `kind` (0: M, 1: N). Both ends only grow
 * within a kind, so what its last stretch flagged is not flagged again. */
static void mark_new(SizeDecider *d, int kind, int64_t start, int64_t end)
{
    if (!d->tracking) return;
    int64_t first = start > d->marked[kind] ? start : d->marked[kind] + 1;
    if (first < d->fresh_from) first = d->fresh_from; /* (taken flags are final: never) */
    if (first <= end) memset(d->fresh + (first - d->fresh_from), 1, (size_t)(end + 1 - first));
    if (end > d->marked[kind]) d->marked[kind] = end;
}

/* The record just added ends its M stretch and may complete N stretches. */
static int step(SizeDecider *d, int64_t j)
{
    const int64_t *sums = d->sums, at = d->offset;
    int64_t m = d->m_start;
    int m_large = is_large(d, sums, at, m, j);
    if (m_large) {
        while (is_large(d, sums, at, m + 1, j)) m++;
        d->m_start = m;
        int r = repeats(d, m, j, 1);
        if (r < 0) return -1;
        d->m_repeat[j - d->offset] = (uint8_t)r;
        if (!r) mark_new(d, 0, m, j);
    }
    while (d->n_next <= j && is_large(d, sums, at, d->n_next, j)) {
        int64_t s = d->n_next;
        /* N(s) is M(j) itself: with one table, the same answer (and it is noted) */
        int same_stretch = m_large && s == m && d->history < 0;
        int r = same_stretch ? d->m_repeat[j - d->offset] : repeats(d, s, j, 0);
        if (r < 0) return -1;
        if (r && d->cover < j) d->cover = j;
        if (!r) mark_new(d, 1, s, j);
        if (s >= d->released) { /* (else decided already: a later key was never met) */
            if (sized_put_flag(d, !(d->m_repeat[s - d->offset] || d->cover >= s)) < 0)
                return -1;
            d->released = s + 1;
        }
        d->n_next = s + 1;
    }
    /* Under W = 1 a record large alone is an M and an N stretch of its own: every record
     * up to it is decided by the loop above, and every occurrence of its key is large
     * alone too, so the table of keys met is neither needed nor asked for it (one table
     * probe a record fewer, a cache miss in a large table). */
    if (d->width == 1 && is_large(d, sums, at, j, j)) return 0;
    /* A key never met: no stretch that holds record j can repeat (an equal one would
     * hold the key), so j and every record waiting before it are decided now. */
    int created;
    int64_t *last = table_upsert(&d->seen, d->keys[j - d->offset], &created);
    if (last == NULL) return -1;
    if (created || *last >= 0) *last = j; /* (a library's key stays: never forgotten) */
    return created ? sized_release(d, j) : 0;
}

/* The keep flags of the records up to `last` still waiting (M stretches and the cover
 * known so far decide them: any stretch still to come that reaches them holds a record
 * whose key was never met, or ends the stream). */
int sized_release(SizeDecider *d, int64_t last)
{
    for (int64_t r = d->released; r <= last; r++) {
        if (sized_put_flag(d, !(d->m_repeat[r - d->offset] || d->cover >= r)) < 0) return -1;
        d->released = r + 1;
    }
    return 0;
}

/* Records `first` .. total - 1 (appended): each in turn ends its M stretch and may
 * complete N stretches. The table slot of the M stretch AHEAD records on is fetched
 * first, so that its probe, a cache miss in a large table, finds it there. */
#define AHEAD 8
int sized_steps(SizeDecider *d, int64_t first)
{
    const int64_t *sums = d->sums, at = d->offset;
    int64_t ahead = d->m_start; /* the M stretch's start of record j + AHEAD */
    for (int64_t j = first; j < d->total; j++) {
        int64_t next = j + AHEAD;
        if (next < d->total && !(d->width == 1 && is_large(d, sums, at, next, next)))
            table_prefetch(&d->seen, d->keys[next - at]);
        if (next < d->total && is_large(d, sums, at, ahead, next)) {
            while (is_large(d, sums, at, ahead + 1, next)) ahead++;
            table_prefetch(d->m_table, key_of(d, d->poly, at, ahead, next));
        }
        if (step(d, j) < 0) return -1;
    }
    return 0;
}

/* ---- memory (limited history) ----------------------------------------------------- */

/* Rebuild `t` with only the entries at `oldest` or after (and a library's, negative):
 * a stretch table's (`variants`: each kept one under the first free variant of its key)
 * or the keys met (each under its own key hash). */
static int sweep_table(Table *t, int64_t oldest, int variants)
{
    Table fresh = {0};
    fresh.stride = 3;
    /* Room first: growing while the keys come in the old table's order (their hash
     * order) would pile them up at the front of each new table, quadratically. */
    if (table_reserve(&fresh, t->size) < 0) return -1;
    for (size_t i = 0; i < t->cap; i++) {
        const int64_t *slot = t->slots + i * 3;
        Hash128 key = slot_key(slot);
        if (hash_is_zero(key) || (slot[2] >= 0 && slot[2] < oldest)) continue;
        if (variants) key.hi &= 0xFFFFFFFFu;
        for (uint64_t k = 0;; k++) {
            int created;
            int64_t *kept = table_upsert(&fresh, variants ? variant(key, k) : key, &created);
            if (kept == NULL) {
                table_free(&fresh);
                return -1;
            }
            if (created || !variants) {
                *kept = slot[2];
                break;
            }
        }
    }
    if (t->has_zero && (t->zero_values[0] < 0 || t->zero_values[0] >= oldest)) {
        fresh.has_zero = 1; /* (the zero key is kept beside the slots) */
        fresh.zero_values[0] = t->zero_values[0];
    }
    table_free(t);
    *t = fresh;
    return 0;
}

int sized_sweep(SizeDecider *d)
{
    int64_t every = d->history > 4096 ? d->history : 4096;
    if (d->history < 0 || d->total - d->swept < every) return 0;
    d->swept = d->total;
    /* a later M stretch starts at m_start or after, an N stretch at n_next */
    if (sweep_table(d->m_table, d->m_start - d->history, 1) < 0 ||
        sweep_table(d->n_table, d->n_next - d->history, 1) < 0)
        return -1;
    /* the key hashes no remembered or waiting stretch reaches back to */
    int64_t keep_from = (d->n_next - d->history < d->m_start ? d->n_next - d->history
                                                             : d->m_start) - d->cap;
    if (keep_from < d->offset) keep_from = d->offset;
    /* (a key met only before keep_from is in no stretch a later one can repeat) */
    if (sweep_table(&d->seen, keep_from, 0) < 0) return -1;
    int64_t drop = keep_from - d->offset;
    if (drop < 4096) return 0;
    size_t rest = d->held - (size_t)drop;
    memmove(d->keys, d->keys + drop, rest * sizeof(Hash128));
    memmove(d->sums, d->sums + drop, (rest + 1) * sizeof(int64_t));
    memmove(d->poly, d->poly + drop, (rest + 1) * sizeof(uint64_t));
    memmove(d->m_repeat, d->m_repeat + drop, rest);
    d->held = rest;
    d->offset = keep_from;
    return 0;
}

/* ---- a loaded library ------------------------------------------------------------- */

/* Every large-enough M and N stretch of one sequence (records `first` on, negative). */
int sized_library_sequence(SizeDecider *d, int64_t first, const Hash128 *keys,
                            const int64_t *sizes, int64_t count)
{
    int rc = -1;
    int64_t *sums = PyMem_RawMalloc((size_t)(count + 1) * sizeof(int64_t));
    uint64_t *poly = PyMem_RawMalloc((size_t)(count + 1) * sizeof(uint64_t));
    if (sums == NULL || poly == NULL) {
        seqdedup_no_memory();
        goto done;
    }
    sums[0] = 0;
    poly[0] = 0;
    for (int64_t k = 0; k < count; k++) {
        if (sizes[k] < 0 || sums[k] > INT64_MAX - 1 - sizes[k]) {
            seqdedup_fail(PyExc_ValueError, "library sizes must be small and not negative");
            goto done;
        }
        sums[k + 1] = sums[k] + sizes[k] + 1;
        poly[k + 1] = fp_add(fp_mul(poly[k], d->base), fp_reduce(keys[k].lo));
    }
    for (int64_t k = 0; k < count; k++) {
        int created;
        int64_t *met = table_upsert(&d->seen, keys[k], &created);
        if (met == NULL) goto done;
        *met = -1;
    }
    for (int64_t e = 0, m = 0; e < count; e++) {
        if (!is_large(d, sums, 0, m, e)) continue;
        while (is_large(d, sums, 0, m + 1, e)) m++;
        if (remember(d, d->m_table, key_of(d, poly, 0, m, e), first + m) < 0) goto done;
    }
    for (int64_t s = 0, e = 0; s < count; s++) {
        if (e < s) e = s;
        while (e < count && !is_large(d, sums, 0, s, e)) e++;
        if (e == count) break;
        if (remember(d, d->n_table, key_of(d, poly, 0, s, e), first + s) < 0) goto done;
    }
    rc = 0;
done:
    PyMem_RawFree(sums);
    PyMem_RawFree(poly);
    return rc;
}

