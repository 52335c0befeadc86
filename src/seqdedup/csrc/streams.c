/*
 * seqdedup._kernel.StreamMatcher: the skip rule per stream with one shared history
 * (--stream-by), the twin of interleaved.StreamDecider for runs that report nothing per
 * run. Records come as key hashes and lanes (a small id the caller gives each active
 * stream); per lane the last W hashes and positions, the rolling fingerprint, the open
 * run and its counts. Unlimited history: one first-end table; a window repeats when its
 * fingerprint first ended before the window started. With a history of H: per position
 * the previous end of the window that ended there (a ring of H + 1) and per fingerprint
 * its latest end, in two generations rotated every H positions (as the Matcher's
 * chains); a window repeats when, walking its ends from the latest, one that ended
 * before it started is still within the history. Decisions come back in input order.
 */
#include "attribution.h" /* Vec */
#include "first_table.h"

#define DECIDED 1
#define SKIPPED 2
#define NO_LANE (-1)
#define NO_END (-1)

/* The fingerprint of the last W hashes of a ring of W (rolled as records come). */
typedef struct {
    uint64_t lo, hi;
    int32_t filled, head;     /* hashes in the ring (at most W), its oldest slot */
} Rolling;

typedef struct {
    int64_t last;             /* position of its last record */
    Rolling window;           /* its last W records (a whole window once filled == W) */
    Hash128 content;          /* the open run's content, rolled */
    int64_t total, skipped;   /* records of this stretch, and of them skipped */
    int32_t prev, next;       /* the activity list, least recently active first */
    int32_t undecided;        /* the newest records of the ring not decided yet */
    int8_t active, run_open;
} Lane;

#define AHEAD 16 /* records between a fingerprint's prefetch and its lookup */

typedef struct {
    PyObject_HEAD
    int32_t width;
    int64_t idle;             /* -1: streams never end for idleness */
    int64_t max_lanes;        /* -1: no limit on active streams */
    int count_runs;
    int busy, ready, broken;
    uint64_t *coeffs;         /* 2W, from matcher.c: [0] and [W] are B^(W-1) per lane */
    uint64_t base_lo, base_hi;
    Lane *lanes;
    Hash128 *ring_hash;       /* W per lane */
    int64_t *ring_pos;
    /* per lane, AHEAD records ahead of the decisions and never reset (so equal to the
     * lane's own window whenever that is whole) */
    Rolling *ahead;
    Hash128 *ahead_hash;      /* W per lane */
    size_t lane_cap;
    int32_t lru_head, lru_tail, active_count;
    FirstTable first;         /* unlimited: fingerprint -> first end */
    int64_t history;          /* -1: unlimited */
    Table latest[2];          /* limited: fingerprint -> latest end, two generations */
    int current;
    int64_t rotated_at;
    int64_t *previous;        /* limited: per position, the previous end of its window */
    size_t previous_cap;      /* a power of two */
    int64_t previous_base, previous_len;
    unsigned char *queue;     /* per position from queue_base: DECIDED | SKIPPED */
    size_t queue_len, queue_cap;
    int64_t queue_base, position;
    Vec ended;                /* (lane, total, skipped) per stream that ended */
    Vec runs;                 /* (lo, hi) content of each closed run (count_runs) */
} StreamMatcher;

static const Hash128 CONTENT_BASE = {0xF39CC0605CEDC835ull, 0x9E3779B97F4A7C15ull};

/* a * b mod 2^128 */
static Hash128 mul128(Hash128 a, Hash128 b)
{
    Hash128 r;
#if defined(__SIZEOF_INT128__)
    unsigned __int128 low = (unsigned __int128)a.lo * b.lo;
    r.lo = (uint64_t)low;
    r.hi = (uint64_t)(low >> 64) + a.hi * b.lo + a.lo * b.hi;
#else
    uint64_t a0 = a.lo & 0xFFFFFFFFu, a1 = a.lo >> 32, b0 = b.lo & 0xFFFFFFFFu, b1 = b.lo >> 32;
    uint64_t p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
    uint64_t mid = (p00 >> 32) + (p01 & 0xFFFFFFFFu) + (p10 & 0xFFFFFFFFu);
    r.lo = (p00 & 0xFFFFFFFFu) | (mid << 32);
    r.hi = p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32) + a.hi * b.lo + a.lo * b.hi;
#endif
    return r;
}

static void lru_unlink(StreamMatcher *s, int32_t id)
{
    Lane *l = &s->lanes[id];
    if (l->prev != NO_LANE) s->lanes[l->prev].next = l->next;
    else s->lru_head = l->next;
    if (l->next != NO_LANE) s->lanes[l->next].prev = l->prev;
    else s->lru_tail = l->prev;
    l->prev = l->next = NO_LANE;
}

static void lru_append(StreamMatcher *s, int32_t id)
{
    Lane *l = &s->lanes[id];
    l->prev = s->lru_tail;
    l->next = NO_LANE;
    if (s->lru_tail != NO_LANE) s->lanes[s->lru_tail].next = id;
    else s->lru_head = id;
    s->lru_tail = id;
}

static int close_run(StreamMatcher *s, Lane *l)
{
    l->run_open = 0;
    if (!s->count_runs) return 0;
    if (vec_reserve(&s->runs, 2) < 0) return -1;
    s->runs.data[s->runs.len++] = (int64_t)l->content.lo;
    s->runs.data[s->runs.len++] = (int64_t)l->content.hi;
    return 0;
}

/* Take `key` into a ring of W hashes and its fingerprint; the slot it went to. */
static int32_t roll(const StreamMatcher *s, Rolling *r, Hash128 *ring, Hash128 key)
{
    int32_t w = s->width, slot;
    if (r->filled == w) { /* the oldest record leaves the window */
        slot = r->head;
        r->lo -= ring[slot].lo * s->coeffs[0];
        r->hi -= ring[slot].hi * s->coeffs[w];
        r->head = (r->head + 1) % w;
    } else {
        slot = (r->head + r->filled) % w;
        r->filled++;
    }
    r->lo = r->lo * s->base_lo + key.lo;
    r->hi = r->hi * s->base_hi + key.hi;
    ring[slot] = key;
    return slot;
}

/* Decide lane `id`'s oldest undecided record (every window holding it was seen). */
static int decide_oldest(StreamMatcher *s, int32_t id)
{
    Lane *l = &s->lanes[id];
    int32_t w = s->width, slot = (l->window.head + l->window.filled - l->undecided) % w;
    int64_t at = s->ring_pos[(size_t)id * (size_t)w + (size_t)slot] - s->queue_base;
    unsigned char *flag = &s->queue[at];
    *flag |= DECIDED;
    l->undecided--;
    if (!(*flag & SKIPPED)) return l->run_open ? close_run(s, l) : 0;
    l->skipped++;
    Hash128 key = s->ring_hash[(size_t)id * (size_t)w + (size_t)slot];
    if (!l->run_open) {
        l->run_open = 1;
        l->content.lo = l->content.hi = 0;
    }
    l->content = mul128(l->content, CONTENT_BASE);
    l->content.lo += key.lo;
    l->content.hi += key.hi + (l->content.lo < key.lo);
    return 0;
}

/* Stream `id` ends: what it holds is decided; its next record starts it afresh. */
static int end_lane(StreamMatcher *s, int32_t id)
{
    Lane *l = &s->lanes[id];
    while (l->undecided > 0)
        if (decide_oldest(s, id) < 0) return -1;
    if (l->run_open && close_run(s, l) < 0) return -1;
    if (vec_reserve(&s->ended, 3) < 0) return -1;
    s->ended.data[s->ended.len++] = id;
    s->ended.data[s->ended.len++] = l->total;
    s->ended.data[s->ended.len++] = l->skipped;
    lru_unlink(s, id);
    l->active = 0;
    s->active_count--;
    return 0;
}

static int grow_lanes(StreamMatcher *s, int32_t id)
{
    if ((size_t)id < s->lane_cap) return 0;
    size_t cap = s->lane_cap ? s->lane_cap : 8, w = (size_t)s->width;
    while (cap <= (size_t)id) cap *= 2;
    if (cap > SIZE_MAX / w / sizeof(Hash128)) return (void)PyErr_NoMemory(), -1;
    Lane *lanes = PyMem_RawRealloc(s->lanes, cap * sizeof(Lane));
    if (lanes == NULL) return (void)PyErr_NoMemory(), -1;
    s->lanes = lanes;
    Hash128 *hashes = PyMem_RawRealloc(s->ring_hash, cap * w * sizeof(Hash128));
    if (hashes == NULL) return (void)PyErr_NoMemory(), -1;
    s->ring_hash = hashes;
    int64_t *pos = PyMem_RawRealloc(s->ring_pos, cap * w * sizeof(int64_t));
    if (pos == NULL) return (void)PyErr_NoMemory(), -1;
    s->ring_pos = pos;
    Rolling *ahead = PyMem_RawRealloc(s->ahead, cap * sizeof(Rolling));
    if (ahead == NULL) return (void)PyErr_NoMemory(), -1;
    s->ahead = ahead;
    Hash128 *ahead_hash = PyMem_RawRealloc(s->ahead_hash, cap * w * sizeof(Hash128));
    if (ahead_hash == NULL) return (void)PyErr_NoMemory(), -1;
    s->ahead_hash = ahead_hash;
    memset(ahead + s->lane_cap, 0, (cap - s->lane_cap) * sizeof(Rolling));
    memset(lanes + s->lane_cap, 0, (cap - s->lane_cap) * sizeof(Lane));
    for (size_t k = s->lane_cap; k < cap; k++) lanes[k].prev = lanes[k].next = NO_LANE;
    s->lane_cap = cap;
    return 0;
}

static int queue_append(StreamMatcher *s)
{
    if (s->queue_len == s->queue_cap) {
        size_t cap = s->queue_cap ? s->queue_cap * 2 : 4096;
        unsigned char *queue = PyMem_RawRealloc(s->queue, cap);
        if (queue == NULL) return (void)PyErr_NoMemory(), -1;
        s->queue = queue;
        s->queue_cap = cap;
    }
    s->queue[s->queue_len++] = 0;
    return 0;
}

/* Limited history: position g's slot (the previous end of the window ending there). */
static int64_t *previous_at(StreamMatcher *s, int64_t g)
{
    return &s->previous[(size_t)g & (s->previous_cap - 1)];
}

/* Limited history: make room for position g, forgetting ends older than the history. */
static int previous_append(StreamMatcher *s, int64_t g)
{
    while (s->previous_len && s->previous_base < g - s->history) {
        s->previous_base++;
        s->previous_len--;
    }
    if ((size_t)s->previous_len == s->previous_cap) {
        size_t cap = s->previous_cap ? s->previous_cap * 2 : 1024;
        if (cap > SIZE_MAX / sizeof(int64_t)) return (void)PyErr_NoMemory(), -1;
        int64_t *ring = PyMem_RawMalloc(cap * sizeof(int64_t));
        if (ring == NULL) return (void)PyErr_NoMemory(), -1;
        for (int64_t e = s->previous_base; e < s->previous_base + s->previous_len; e++)
            ring[(size_t)e & (cap - 1)] = *previous_at(s, e);
        PyMem_RawFree(s->previous);
        s->previous = ring;
        s->previous_cap = cap;
    }
    if (!s->previous_len) s->previous_base = g;
    s->previous_len++;
    *previous_at(s, g) = NO_END;
    return 0;
}

/* Limited history: whether the window `key` (ending at g, started at `start`) repeats
 * one that ended before it started, within the history; then it is admitted. */
static int limited_repeat(StreamMatcher *s, Hash128 key, int64_t start, int64_t g, int *repeat)
{
    Table *cur = &s->latest[s->current], *old = &s->latest[1 - s->current];
    int64_t *found = table_find(cur, key);
    if (found == NULL) found = table_find(old, key);
    int64_t latest = found != NULL ? found[0] : NO_END, end = latest;
    *repeat = 0;
    while (end != NO_END && end >= g - s->history && end >= s->previous_base) {
        if (end < start) {
            *repeat = 1;
            break;
        }
        end = *previous_at(s, end);
    }
    *previous_at(s, g) = latest;
    int created;
    int64_t *slot = table_upsert(cur, key, &created);
    if (slot == NULL) return -1;
    slot[0] = g;
    if (g + 1 - s->rotated_at >= s->history) {
        /* what was last written two rotations ago is older than the history */
        table_clear(old);
        s->current = 1 - s->current;
        s->rotated_at = g + 1;
    }
    return 0;
}

/* One tracked record of lane `id` with key hash `key`. */
static int push_one(StreamMatcher *s, int32_t id, Hash128 key)
{
    int64_t g = s->position;
    while (s->idle >= 0 && s->lru_head != NO_LANE && g - s->lanes[s->lru_head].last > s->idle)
        if (end_lane(s, s->lru_head) < 0) return -1;
    if (grow_lanes(s, id) < 0 || queue_append(s) < 0) return -1;
    if (s->history >= 0 && previous_append(s, g) < 0) return -1;
    Lane *l = &s->lanes[id];
    if (!l->active) {
        if (s->max_lanes >= 0 && s->active_count >= s->max_lanes && end_lane(s, s->lru_head) < 0)
            return -1;
        memset(l, 0, sizeof *l);
        l->prev = l->next = NO_LANE;
        l->active = 1;
        s->active_count++;
    } else {
        lru_unlink(s, id);
    }
    lru_append(s, id);
    s->position = g + 1;
    l->last = g;
    l->total++;
    int32_t w = s->width;
    Rolling *r = &l->window;
    int64_t *pos = s->ring_pos + (size_t)id * (size_t)w;
    pos[roll(s, r, s->ring_hash + (size_t)id * (size_t)w, key)] = g;
    l->undecided++;
    if (r->filled < w) return 0;
    int64_t start = pos[r->head], first;
    Hash128 fingerprint = {r->lo, r->hi};
    int repeat;
    if (s->history >= 0) {
        if (limited_repeat(s, fingerprint, start, g, &repeat) < 0) return -1;
    } else {
        if (ft_first_start(&s->first, fingerprint, g, &first) < 0) return -1;
        repeat = first < start;
    }
    if (repeat)
        for (int32_t k = 0; k < w; k++) s->queue[pos[k] - s->queue_base] |= SKIPPED;
    return decide_oldest(s, id);
}

/* The skipped flags (0 or 1) of the records decided at the front of the queue. */
static PyObject *take_decided(StreamMatcher *s)
{
    size_t n = 0;
    while (n < s->queue_len && (s->queue[n] & DECIDED)) n++;
    PyObject *flags = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)n);
    if (flags == NULL) return NULL;
    char *out = PyBytes_AS_STRING(flags);
    for (size_t k = 0; k < n; k++) out[k] = (s->queue[k] & SKIPPED) ? 1 : 0;
    if (n && s->queue_len > n) memmove(s->queue, s->queue + n, s->queue_len - n);
    s->queue_len -= n;
    s->queue_base += (int64_t)n;
    return flags;
}

static int enter(StreamMatcher *s)
{
    if (!s->ready) {
        PyErr_SetString(PyExc_RuntimeError, "StreamMatcher is not initialised");
        return -1;
    }
    if (s->broken) {
        PyErr_SetString(PyExc_RuntimeError,
                        "StreamMatcher is unusable after an earlier error in one of its calls");
        return -1;
    }
    if (s->busy) {
        PyErr_SetString(PyExc_RuntimeError, "StreamMatcher is in use by another thread");
        return -1;
    }
    s->busy = 1;
    s->ended.len = s->runs.len = 0;
    return 0;
}

/* (flags, ended, runs): the decided records' skipped flags, the streams that ended
 * (int64 triples: lane, total, skipped) and the closed runs' contents (16 bytes). */
static PyObject *leave(StreamMatcher *s, int rc)
{
    s->busy = 0;
    if (rc < 0) {
        s->broken = 1;
        return NULL;
    }
    PyObject *flags = take_decided(s);
    if (flags == NULL) {
        s->broken = 1;
        return NULL;
    }
    /* (a NULL buffer would be None to y#: an empty vector is given as "") */
    const char *ended = s->ended.len ? (const char *)s->ended.data : "";
    const char *runs = s->runs.len ? (const char *)s->runs.data : "";
    return Py_BuildValue("(Ny#y#)", flags, ended, (Py_ssize_t)(s->ended.len * sizeof(int64_t)),
                         runs, (Py_ssize_t)(s->runs.len * sizeof(int64_t)));
}

/* The lane of record k: its entry of `lanes`, or with `translate` the lane of its name
 * (an index into translate; -1: the record continues the stream before it). */
static int lane_of(const unsigned char *lanes, Py_ssize_t k, const Py_buffer *translate,
                   int32_t *current, int32_t *id)
{
    int32_t given;
    memcpy(&given, lanes + (size_t)k * sizeof given, sizeof given);
    if (translate->buf != NULL) {
        Py_ssize_t names = translate->len / (Py_ssize_t)sizeof(int32_t);
        if (given >= names) {
            PyErr_SetString(PyExc_ValueError, "a name index beyond the translation");
            return -1;
        }
        if (given >= 0) memcpy(current, (const char *)translate->buf + (size_t)given * 4, 4);
        given = *current;
    }
    if (given < 0 || given >= (1 << 30)) {
        PyErr_SetString(PyExc_ValueError, "a lane is from 0 to 2^30 - 1");
        return -1;
    }
    *id = given;
    return 0;
}

/* The look-ahead takes record `key` of lane `id` and prefetches where its window's
 * fingerprint lies in the table, AHEAD records before the decision looks it up. */
static void look_ahead(StreamMatcher *s, int32_t id, Hash128 key)
{
    Rolling *a = &s->ahead[id];
    (void)roll(s, a, s->ahead_hash + (size_t)id * (size_t)s->width, key);
    if (a->filled < s->width) return;
    Hash128 fingerprint = {a->lo, a->hi};
    if (s->history < 0) {
        ft_prefetch(&s->first, fingerprint);
    } else {
        table_prefetch(&s->latest[0], fingerprint);
        table_prefetch(&s->latest[1], fingerprint);
    }
}

static Hash128 hash_at(const Py_buffer *hashes, Py_ssize_t k)
{
    Hash128 key; /* (memcpy: the buffer need not be aligned) */
    return *(Hash128 *)memcpy(&key, (const char *)hashes->buf + (size_t)k * 16, 16);
}

/* Every record's lane (grown for), then each record decided, the look-ahead AHEAD
 * records in front. */
static int push_all(StreamMatcher *s, const Py_buffer *hashes, const Py_buffer *lanes,
                    const Py_buffer *translate, int32_t current, Py_ssize_t n)
{
    int32_t *ids = PyMem_RawMalloc((size_t)(n ? n : 1) * sizeof(int32_t));
    if (ids == NULL) return (void)PyErr_NoMemory(), -1;
    int rc = 0;
    for (Py_ssize_t k = 0; k < n && rc == 0; k++) {
        rc = lane_of(lanes->buf, k, translate, &current, &ids[k]);
        if (rc == 0) rc = grow_lanes(s, ids[k]);
    }
    for (Py_ssize_t k = 0; k < n && k < AHEAD && rc == 0; k++)
        look_ahead(s, ids[k], hash_at(hashes, k));
    for (Py_ssize_t k = 0; k < n && rc == 0; k++) {
        if (k + AHEAD < n) look_ahead(s, ids[k + AHEAD], hash_at(hashes, k + AHEAD));
        rc = push_one(s, ids[k], hash_at(hashes, k));
    }
    PyMem_RawFree(ids);
    return rc;
}

static PyObject *StreamMatcher_push(StreamMatcher *s, PyObject *args)
{
    Py_buffer hashes, lanes, translate = {0};
    Py_ssize_t initial = -1;
    if (!PyArg_ParseTuple(args, "y*y*|y*n", &hashes, &lanes, &translate, &initial)) return NULL;
    PyObject *result = NULL;
    Py_ssize_t n = lanes.len / (Py_ssize_t)sizeof(int32_t);
    if (lanes.len % (Py_ssize_t)sizeof(int32_t) || hashes.len != n * (Py_ssize_t)sizeof(Hash128) ||
        translate.len % (Py_ssize_t)sizeof(int32_t) || initial < -1 || initial >= (1 << 30)) {
        PyErr_SetString(PyExc_ValueError, "expected 16 bytes of hash and 4 of lane per record");
    } else if (enter(s) == 0) {
        result = leave(s, push_all(s, &hashes, &lanes, &translate, (int32_t)initial, n));
    }
    PyBuffer_Release(&hashes);
    PyBuffer_Release(&lanes);
    if (translate.buf != NULL) PyBuffer_Release(&translate);
    return result;
}

static PyObject *StreamMatcher_end_all(StreamMatcher *s, PyObject *Py_UNUSED(ignored))
{
    if (enter(s) < 0) return NULL;
    int rc = 0;
    while (rc == 0 && s->lru_head != NO_LANE) rc = end_lane(s, s->lru_head);
    return leave(s, rc);
}

static PyObject *StreamMatcher_active(StreamMatcher *s, PyObject *arg)
{
    long id = PyLong_AsLong(arg);
    if (id == -1 && PyErr_Occurred()) return NULL;
    return PyBool_FromLong(id >= 0 && (size_t)id < s->lane_cap && s->lanes[id].active);
}

static int limit_of(PyObject *value, const char *name, int64_t *out)
{
    if (value == Py_None) {
        *out = -1;
        return 0;
    }
    long long v = PyLong_AsLongLong(value);
    if (v == -1 && PyErr_Occurred()) return -1;
    if (v < 1) {
        PyErr_Format(PyExc_ValueError, "%s must be at least 1", name);
        return -1;
    }
    *out = (int64_t)v;
    return 0;
}

static int StreamMatcher_init(StreamMatcher *s, PyObject *args, PyObject *kwds)
{
    static char *names[] = {"window", "idle", "max_streams", "count_runs", "history", NULL};
    Py_ssize_t width;
    PyObject *idle = Py_None, *max_streams = Py_None, *history = Py_None;
    int count_runs = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "n|OOpO", names, &width, &idle, &max_streams,
                                     &count_runs, &history))
        return -1;
    if (s->ready) {
        PyErr_SetString(PyExc_RuntimeError, "StreamMatcher is initialised already");
        return -1;
    }
    if (width < 1 || width > (1 << 20)) {
        PyErr_SetString(PyExc_ValueError, "window must be from 1 to 2^20");
        return -1;
    }
    if (limit_of(idle, "idle", &s->idle) < 0 ||
        limit_of(max_streams, "max_streams", &s->max_lanes) < 0 ||
        limit_of(history, "history", &s->history) < 0)
        return -1;
    s->latest[0].stride = s->latest[1].stride = 3; /* key (2), latest end */
    s->coeffs = seqdedup_coefficients(width);
    if (s->coeffs == NULL) return -1;
    s->width = (int32_t)width;
    s->base_lo = width > 1 ? s->coeffs[width - 2] : 1;
    s->base_hi = width > 1 ? s->coeffs[2 * width - 2] : 1;
    s->count_runs = count_runs;
    s->lru_head = s->lru_tail = NO_LANE;
    s->ready = 1;
    return 0;
}

static void StreamMatcher_dealloc(StreamMatcher *s)
{
    PyTypeObject *type = Py_TYPE(s);
    PyMem_RawFree(s->coeffs);
    PyMem_RawFree(s->lanes);
    PyMem_RawFree(s->ring_hash);
    PyMem_RawFree(s->ring_pos);
    PyMem_RawFree(s->ahead);
    PyMem_RawFree(s->ahead_hash);
    PyMem_RawFree(s->queue);
    vec_free(&s->ended);
    vec_free(&s->runs);
    ft_free(&s->first);
    table_free(&s->latest[0]);
    table_free(&s->latest[1]);
    PyMem_RawFree(s->previous);
    type->tp_free((PyObject *)s);
    Py_DECREF(type);
}

static PyObject *get_position(StreamMatcher *s, void *c)
{
    return PyLong_FromLongLong(s->position);
}

static PyObject *get_windows(StreamMatcher *s, void *c)
{
    if (s->history >= 0)
        return PyLong_FromSize_t(table_len(&s->latest[0]) + table_len(&s->latest[1]));
    return PyLong_FromSize_t(s->first.size + (size_t)s->first.has_zero);
}

static PyGetSetDef StreamMatcher_getset[] = {
    {"position", (getter)get_position, NULL, "tracked records taken so far", NULL},
    {"remembered_windows", (getter)get_windows, NULL, "distinct windows in the table", NULL},
    {NULL}};

static PyMethodDef StreamMatcher_methods[] = {
    {"push", (PyCFunction)StreamMatcher_push, METH_VARARGS,
     "push(hashes, lanes, translate=None, initial=-1) -> (flags, ended, runs): the next "
     "tracked records (16-byte key hashes, int32 lanes; with translate, int32 indices into "
     "it, -1 for a record that continues the stream before it, `initial` before the "
     "first); the skipped flags of those now decided in input order, the streams that "
     "ended (int64 lane, total, skipped) and the closed runs' contents"},
    {"end_all", (PyCFunction)StreamMatcher_end_all, METH_NOARGS,
     "end_all() -> (flags, ended, runs): every stream ends"},
    {"active", (PyCFunction)StreamMatcher_active, METH_O, "active(lane) -> whether it is open"},
    {NULL}};

static PyType_Slot StreamMatcher_slots[] = {
    {Py_tp_doc, "The skip rule per stream, one shared history (--stream-by)."},
    {Py_tp_new, PyType_GenericNew},
    {Py_tp_init, (initproc)StreamMatcher_init},
    {Py_tp_dealloc, (destructor)StreamMatcher_dealloc},
    {Py_tp_methods, StreamMatcher_methods},
    {Py_tp_getset, StreamMatcher_getset},
    {0, NULL}};

PyType_Spec seqdedup_stream_matcher_spec = {
    .name = "seqdedup._kernel.StreamMatcher",
    .basicsize = sizeof(StreamMatcher),
    .flags = Py_TPFLAGS_DEFAULT,
    .slots = StreamMatcher_slots,
};
