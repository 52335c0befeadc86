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
#include "kernel.h"

#define SIZE_CAP 4096
#define NOWHERE INT64_MIN
#define MAX_WIDTH ((int64_t)1 << 20)

typedef struct {
    int64_t position;
    Hash128 key;
} Waiting;

typedef struct {
    Waiting *items;
    size_t head, len, cap;
} Queue;

typedef struct {
    PyObject_HEAD
    int64_t width, min_size, history, cap; /* history -1: unlimited */
    uint64_t base;
    uint64_t *powers; /* base^n, n <= cap */
    /* per record from `offset` on: key hash, prefix sums of sizes and of the polynomial
     * (one more than records), whether its M stretch repeats */
    int64_t offset;
    Hash128 *keys;
    int64_t *sums;
    uint64_t *poly;
    uint8_t *m_repeat;
    size_t held, records_cap, sums_cap, poly_cap, flags_cap;
    Hash128 *region; /* a loaded library's key hashes: records -region_len .. -1 */
    size_t region_len;
    int64_t total, stream, m_start, n_next, cover, swept;
    /* stretches by key -> where one content starts; M and N share one table with an
     * unlimited history (a content is an M, or an N, stretch wherever it occurs) */
    Table tables[2];
    Table *m_table, *n_table;
    Queue waiting_m, waiting_n; /* limited history: stretches not admitted yet */
    uint8_t *out; /* this call's keep flags */
    size_t out_len, out_cap;
    /* saving a library (track_new): per record from fresh_from on, whether a first-seen
     * M or N stretch holds it; the last record each kind flagged */
    uint8_t *fresh;
    size_t fresh_len, fresh_cap;
    int64_t fresh_from, marked[2];
    int tracking;
    int force_collisions; /* (tests) every fingerprint 0: stretches of a length share keys */
    int ready, busy, broken;
} SizeDecider;

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

/* Note an occurrence: the first of its content, or with a limited history the latest
 * (it replaces the earlier one; a library's stays). */
static int remember(SizeDecider *d, Table *t, Hash128 key, int64_t start)
{
    int64_t n = (int64_t)key.hi;
    for (uint64_t k = 0;; k++) {
        int created;
        int64_t *slot = table_upsert(t, variant(key, k), &created);
        if (slot == NULL) return -1;
        if (created) {
            *slot = start;
            return 0;
        }
        if (same(d, *slot, start, n)) {
            if (d->history >= 0 && *slot >= 0) *slot = start;
            return 0;
        }
    }
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
        for (uint64_t k = 0;; k++) {
            int created;
            int64_t *slot = table_upsert(t, variant(key, k), &created);
            if (slot == NULL) return -1;
            if (created) {
                *slot = start;
                return 0;
            }
            if (same(d, *slot, start, n)) return *slot + n - 1 < start;
        }
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

static int put_flag(SizeDecider *d, int keep)
{
    if (d->out_len == d->out_cap &&
        grow((void **)&d->out, &d->out_cap, d->out_len + 1, 1) < 0)
        return -1;
    d->out[d->out_len++] = (uint8_t)keep;
    return 0;
}

/* Room for `count` more records (and their flags). */
static int reserve(SizeDecider *d, size_t count)
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
static int append(SizeDecider *d, Hash128 key, int64_t size)
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
static int step(SizeDecider *d)
{
    const int64_t *sums = d->sums, at = d->offset;
    int64_t j = d->total - 1, m = d->m_start;
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
        if (put_flag(d, !(d->m_repeat[s - d->offset] || d->cover >= s)) < 0) return -1;
        d->n_next = s + 1;
    }
    return 0;
}

/* ---- memory (limited history) ----------------------------------------------------- */

/* Rebuild `t` with only the occurrences a later stretch may still repeat (each kept
 * one under the first free variant of its key). */
static int sweep_table(Table *t, int64_t oldest)
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
        key.hi &= 0xFFFFFFFFu;
        for (uint64_t k = 0;; k++) {
            int created;
            int64_t *kept = table_upsert(&fresh, variant(key, k), &created);
            if (kept == NULL) {
                table_free(&fresh);
                return -1;
            }
            if (created) {
                *kept = slot[2];
                break;
            }
        }
    }
    table_free(t);
    *t = fresh;
    return 0;
}

static int sweep(SizeDecider *d)
{
    int64_t every = d->history > 4096 ? d->history : 4096;
    if (d->history < 0 || d->total - d->swept < every) return 0;
    d->swept = d->total;
    /* a later M stretch starts at m_start or after, an N stretch at n_next */
    if (sweep_table(d->m_table, d->m_start - d->history) < 0 ||
        sweep_table(d->n_table, d->n_next - d->history) < 0)
        return -1;
    /* the key hashes no remembered or waiting stretch reaches back to */
    int64_t keep_from = (d->n_next - d->history < d->m_start ? d->n_next - d->history
                                                             : d->m_start) - d->cap;
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
static int library_sequence(SizeDecider *d, int64_t first, const Hash128 *keys,
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

/* ---- the type --------------------------------------------------------------------- */

static int enter(SizeDecider *d)
{
    if (!d->ready) {
        PyErr_SetString(PyExc_RuntimeError, "SizeDecider is not initialised");
        return -1;
    }
    if (d->broken) {
        PyErr_SetString(PyExc_RuntimeError,
                        "SizeDecider is unusable after an earlier error in one of its calls");
        return -1;
    }
    if (d->busy) {
        PyErr_SetString(PyExc_RuntimeError, "SizeDecider is in use by another thread");
        return -1;
    }
    d->busy = 1;
    d->out_len = 0;
    return 0;
}

/* The keep flags of this call, as a list of bools. */
static PyObject *leave(SizeDecider *d, int rc)
{
    d->busy = 0;
    if (rc < 0) {
        d->broken = 1;
        return NULL;
    }
    PyObject *flags = PyList_New((Py_ssize_t)d->out_len);
    if (flags == NULL) return NULL;
    for (size_t k = 0; k < d->out_len; k++) {
        PyObject *flag = d->out[k] ? Py_True : Py_False;
        Py_INCREF(flag);
        PyList_SET_ITEM(flags, (Py_ssize_t)k, flag);
    }
    return flags;
}

static PyObject *SizeDecider_push(SizeDecider *d, PyObject *args)
{
    Py_buffer hashes, sizes;
    if (!PyArg_ParseTuple(args, "y*y*", &hashes, &sizes)) return NULL;
    PyObject *result = NULL;
    Py_ssize_t n = sizes.len / (Py_ssize_t)sizeof(int64_t);
    if (sizes.len % (Py_ssize_t)sizeof(int64_t) || hashes.len != n * (Py_ssize_t)sizeof(Hash128)) {
        PyErr_SetString(PyExc_ValueError, "one size per key hash");
    } else if (enter(d) == 0) {
        int rc = reserve(d, (size_t)n);
        const unsigned char *h = hashes.buf;
        for (Py_ssize_t k = 0; k < n && rc == 0; k++) {
            Hash128 key;
            int64_t size;
            memcpy(&key, h + k * (Py_ssize_t)sizeof(Hash128), sizeof key);
            memcpy(&size, (const unsigned char *)sizes.buf + k * (Py_ssize_t)sizeof(int64_t),
                   sizeof size);
            rc = append(d, key, size);
            if (rc == 0) rc = step(d);
        }
        if (rc == 0) rc = sweep(d);
        result = leave(d, rc);
    }
    PyBuffer_Release(&hashes);
    PyBuffer_Release(&sizes);
    return result;
}

static PyObject *SizeDecider_finish(SizeDecider *d, PyObject *Py_UNUSED(ignored))
{
    if (enter(d) < 0) return NULL;
    int rc = reserve(d, 0);
    for (int64_t r = d->n_next; r < d->total && rc == 0; r++)
        rc = put_flag(d, !(d->m_repeat[r - d->offset] || d->cover >= r));
    d->n_next = d->m_start = d->stream = d->total;
    return leave(d, rc);
}

static PyObject *SizeDecider_new_input(SizeDecider *d, PyObject *Py_UNUSED(ignored))
{
    if (d->n_next != d->total) {
        PyErr_SetString(PyExc_RuntimeError, "new_input() comes after finish()");
        return NULL;
    }
    Py_RETURN_NONE;
}

static PyObject *SizeDecider_track_new(SizeDecider *d, PyObject *Py_UNUSED(ignored))
{
    if (d->total || d->busy) {
        PyErr_SetString(PyExc_RuntimeError, "track_new() comes before any record");
        return NULL;
    }
    d->tracking = 1;
    d->marked[0] = d->marked[1] = -1;
    Py_RETURN_NONE;
}

/* The flags of the records no later stretch can reach back to (before the last M
 * stretch's start, and decided), from where the last call stopped. */
static PyObject *SizeDecider_take_new(SizeDecider *d, PyObject *Py_UNUSED(ignored))
{
    if (!d->tracking) {
        PyErr_SetString(PyExc_RuntimeError, "take_new() needs track_new()");
        return NULL;
    }
    int64_t final = (d->m_start < d->n_next ? d->m_start : d->n_next) - d->fresh_from;
    if (final < 0 || (size_t)final > d->fresh_len) {
        PyErr_SetString(PyExc_SystemError, "SizeDecider: new-material flags out of step");
        return NULL;
    }
    if (d->fresh_len == 0) return PyBytes_FromStringAndSize("", 0); /* (fresh may be NULL) */
    PyObject *taken = PyBytes_FromStringAndSize((const char *)d->fresh, (Py_ssize_t)final);
    if (taken == NULL) return NULL;
    memmove(d->fresh, d->fresh + final, d->fresh_len - (size_t)final);
    d->fresh_len -= (size_t)final;
    d->fresh_from += final;
    return taken;
}

static PyObject *SizeDecider_add_library(SizeDecider *d, PyObject *sequences)
{
    if (enter(d) < 0) return NULL;
    int rc = -1;
    PyObject *items = PySequence_Fast(sequences, "add_library() takes a list of (hashes, sizes)");
    if (items == NULL) goto out;
    if (d->total || d->region_len) {
        PyErr_SetString(PyExc_RuntimeError, "libraries are added once, before any record");
        goto out;
    }
    Py_ssize_t count = PySequence_Fast_GET_SIZE(items);
    size_t records = 0;
    for (Py_ssize_t i = 0; i < count; i++) { /* the region first: every stretch reads it */
        Py_buffer hashes, sizes;
        if (!PyArg_ParseTuple(PySequence_Fast_GET_ITEM(items, i), "y*y*", &hashes, &sizes))
            goto out;
        size_t n = (size_t)hashes.len / sizeof(Hash128);
        int fits = hashes.len % (Py_ssize_t)sizeof(Hash128) == 0 &&
                   sizes.len == (Py_ssize_t)(n * sizeof(int64_t));
        if (!fits || n == 0) {
            /* (nothing to copy: an empty sequence leaves the region as it is) */
        } else if (grow((void **)&d->region, &records, d->region_len + n, sizeof(Hash128)) == 0) {
            memcpy(d->region + d->region_len, hashes.buf, (size_t)hashes.len);
        } else {
            fits = -1;
        }
        PyBuffer_Release(&hashes);
        PyBuffer_Release(&sizes);
        if (fits <= 0) {
            if (fits == 0) PyErr_SetString(PyExc_ValueError, "one size per key hash");
            goto out;
        }
        d->region_len += n;
    }
    int64_t first = -(int64_t)d->region_len;
    for (Py_ssize_t i = 0; i < count; i++) {
        Py_buffer hashes, sizes;
        if (!PyArg_ParseTuple(PySequence_Fast_GET_ITEM(items, i), "y*y*", &hashes, &sizes))
            goto out;
        int64_t n = (int64_t)(hashes.len / (Py_ssize_t)sizeof(Hash128));
        int ok = n == 0 || library_sequence(d, first, d->region + (first + (int64_t)d->region_len),
                                            (const int64_t *)sizes.buf, n) == 0;
        PyBuffer_Release(&hashes);
        PyBuffer_Release(&sizes);
        if (!ok) goto out;
        first += n;
    }
    rc = 0;
out:
    Py_XDECREF(items);
    PyObject *flags = leave(d, rc);
    if (flags == NULL) return NULL;
    Py_DECREF(flags);
    Py_RETURN_NONE;
}

static int SizeDecider_init(SizeDecider *d, PyObject *args, PyObject *kwds)
{
    static char *names[] = {"window", "min_size", "history", "seed", "cap", "force_collisions",
                            NULL};
    long long width, min_size, cap = SIZE_CAP, seed = 0;
    PyObject *history = Py_None;
    int force = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "LL|OLLp", names, &width, &min_size, &history,
                                     &seed, &cap, &force))
        return -1;
    if (d->ready) {
        PyErr_SetString(PyExc_RuntimeError, "SizeDecider is initialised already");
        return -1;
    }
    if (width < 1 || width > MAX_WIDTH || min_size < 0 || cap < 1) {
        PyErr_SetString(PyExc_ValueError, "window from 1 to 2^20, min_size >= 0, cap >= 1");
        return -1;
    }
    d->history = -1;
    if (history != Py_None) {
        long long h = PyLong_AsLongLong(history);
        if (h == -1 && PyErr_Occurred()) return -1;
        if (h < 1) {
            PyErr_SetString(PyExc_ValueError, "history must be at least 1");
            return -1;
        }
        d->history = h;
    }
    d->width = width;
    d->min_size = min_size;
    d->force_collisions = force;
    d->cap = cap > width ? (cap > MAX_WIDTH ? MAX_WIDTH : cap) : width;
    /* a secret base from the seed (splitmix64), below the prime and not tiny */
    uint64_t z = (uint64_t)seed + 0x9E3779B97F4A7C15ULL;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    d->base = (z ^ (z >> 31)) % (FP_PRIME - ((uint64_t)1 << 32)) + ((uint64_t)1 << 32);
    d->powers = PyMem_RawMalloc((size_t)(d->cap + 1) * sizeof(uint64_t));
    d->sums = PyMem_RawCalloc(16, sizeof(int64_t));
    d->poly = PyMem_RawCalloc(16, sizeof(uint64_t));
    if (d->powers == NULL || d->sums == NULL || d->poly == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    d->sums_cap = d->poly_cap = 16;
    d->powers[0] = 1;
    for (int64_t k = 1; k <= d->cap; k++) d->powers[k] = fp_mul(d->powers[k - 1], d->base);
    d->tables[0].stride = d->tables[1].stride = 3;
    d->m_table = &d->tables[0];
    d->n_table = d->history < 0 ? &d->tables[0] : &d->tables[1];
    d->cover = -1;
    d->ready = 1;
    return 0;
}

static void SizeDecider_dealloc(SizeDecider *d)
{
    PyTypeObject *type = Py_TYPE(d);
    PyMem_RawFree(d->powers);
    PyMem_RawFree(d->keys);
    PyMem_RawFree(d->sums);
    PyMem_RawFree(d->poly);
    PyMem_RawFree(d->m_repeat);
    PyMem_RawFree(d->region);
    PyMem_RawFree(d->waiting_m.items);
    PyMem_RawFree(d->waiting_n.items);
    PyMem_RawFree(d->out);
    PyMem_RawFree(d->fresh);
    table_free(&d->tables[0]);
    table_free(&d->tables[1]);
    type->tp_free((PyObject *)d);
    Py_DECREF(type);
}

static PyObject *get_decided(SizeDecider *d, void *c) { return PyLong_FromLongLong(d->n_next); }

static PyObject *get_remembered(SizeDecider *d, void *c)
{
    return PyLong_FromSize_t(table_len(&d->tables[0]) + table_len(&d->tables[1]));
}

static PyGetSetDef SizeDecider_getset[] = {
    {"decided", (getter)get_decided, NULL, "records decided so far", NULL},
    {"remembered", (getter)get_remembered, NULL, "stretches the tables hold", NULL},
    {NULL}};

static PyMethodDef SizeDecider_methods[] = {
    {"push", (PyCFunction)SizeDecider_push, METH_VARARGS,
     "push(hashes, sizes) -> list: the next tracked records (16-byte key hashes, int64 "
     "key sizes: each record weighs one more); the keep flags of those now decided"},
    {"finish", (PyCFunction)SizeDecider_finish, METH_NOARGS,
     "finish() -> list: the stream ends; the keep flags of its last records"},
    {"new_input", (PyCFunction)SizeDecider_new_input, METH_NOARGS,
     "new_input(): after finish(), a new stream begins"},
    {"track_new", (PyCFunction)SizeDecider_track_new, METH_NOARGS,
     "track_new(): flag the records of first-seen stretches (a saved library); before any push"},
    {"take_new", (PyCFunction)SizeDecider_take_new, METH_NOARGS,
     "take_new() -> bytes: the final new-material flags since the last call (1: new)"},
    {"add_library", (PyCFunction)SizeDecider_add_library, METH_O,
     "add_library(sequences): (hashes, int64 key sizes) of each library sequence, seen for the "
     "whole run; before any push"},
    {NULL}};

static PyType_Slot SizeDecider_slots[] = {
    {Py_tp_doc, "The rule with a minimum size (--min-bytes): seqdedup.sized's twin."},
    {Py_tp_new, PyType_GenericNew},
    {Py_tp_init, (initproc)SizeDecider_init},
    {Py_tp_dealloc, (destructor)SizeDecider_dealloc},
    {Py_tp_methods, SizeDecider_methods},
    {Py_tp_getset, SizeDecider_getset},
    {0, NULL}};

PyType_Spec seqdedup_size_decider_spec = {
    .name = "seqdedup._kernel.SizeDecider",
    .basicsize = sizeof(SizeDecider),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE,
    .slots = SizeDecider_slots,
};
