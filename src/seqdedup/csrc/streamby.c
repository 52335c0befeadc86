/*
 * seqdedup._kernel.StreamMatcher: the skip rule per stream with one shared history
 * (--stream-by), the twin of streamby.decider.StreamDecider for runs that report nothing per
 * run. Records come as key hashes and lanes (a small id the caller gives each active
 * stream); per lane the last W hashes and positions, the rolling fingerprint, the open
 * run and its counts. Unlimited history: one first-end table; a window repeats when its
 * fingerprint first ended before the window started. With a history of H: per position
 * the previous end of the window that ended there (a ring of H + 1) and per fingerprint
 * its latest end, in two generations rotated every H positions (as the Matcher's
 * chains); a window repeats when, walking its ends from the latest, one that ended
 * before it started is still within the history. A fingerprint only finds a candidate:
 * the window repeats it when their key hashes are equal, read back through the key log
 * (all W at a run's start, then the newest record per window). Decisions come back in
 * input order.
 */
#include "streamby.h"


/* A run's content hash keys SipHash with the seed xor this (domain separation from the
 * record hashes, which use the seed itself). */
static const Hash128 CONTENT_SALT = {0x636f6e74656e7473ull, 0x72756e2d6b657973ull};

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

/* The first position of the window that ends at `end` (its stream's W - 1 records
 * before, read back through the key log). */
static int64_t window_first(const StreamMatcher *s, int64_t end)
{
    int64_t first = end;
    for (int32_t k = 1; k < s->width; k++) {
        Hash128 key;
        int64_t before;
        if (!keylog_at(&s->keys, first, &key, &before) || before == NO_PREVIOUS) break;
        first = before;
    }
    return first;
}

static int close_run(StreamMatcher *s, Lane *l)
{
    l->run_open = 0;
    if (!s->count_runs && !s->report_runs) return 0;
    uint64_t lo, hi;
    sip_final(&l->content, &lo, &hi);
    if (s->report_runs) {
        if (vec_reserve(&s->closed, RUN_FIELDS) < 0) return -1;
        int64_t *out = s->closed.data + s->closed.len;
        out[0] = l - s->lanes;
        out[1] = l->run_first;
        out[2] = l->run_last;
        out[3] = l->run_length;
        out[4] = l->run_source;
        out[5] = l->run_source == NO_END ? NO_END : window_first(s, l->run_source);
        out[6] = (int64_t)lo;
        out[7] = (int64_t)hi;
        s->closed.len += RUN_FIELDS;
    }
    if (!s->count_runs) return 0;
    if (vec_reserve(&s->runs, 2) < 0) return -1;
    s->runs.data[s->runs.len++] = (int64_t)lo;
    s->runs.data[s->runs.len++] = (int64_t)hi;
    return 0;
}

/* Take `key` into a ring of W hashes and its fingerprint; the slot it went to. */
static int32_t roll(const StreamMatcher *s, Rolling *r, Hash128 *ring, Hash128 key)
{
    int32_t w = s->width, slot;
    Hash128 gone = {0, 0};
    if (r->filled == w) { /* the oldest record leaves the window */
        slot = r->head;
        gone = ring[slot];
        r->head = (r->head + 1) % w;
    } else {
        slot = (r->head + r->filled) % w;
        r->filled++;
    }
    if (w == 1) { /* a 1-record window is its key hash (matcher.c's definition) */
        r->lo = key.lo;
        r->hi = key.hi;
    } else { /* as matcher.c's rolling_fingerprints (drop: -B^W per lane) */
        r->lo = fp_roll(r->lo, s->base_lo, gone.lo, s->drop_lo, key.lo);
        r->hi = fp_roll(r->hi, s->base_hi, gone.hi, s->drop_hi, key.hi);
    }
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
        sip_init(&l->content, s->content_key.lo, s->content_key.hi);
        l->run_first = at + s->queue_base;
        l->run_length = 0;
        l->run_source = s->report_runs ? s->source_at[at] : NO_END;
    }
    l->run_last = at + s->queue_base;
    l->run_length++;
    sip_words(&l->content, key.lo, key.hi);
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
        if (s->report_runs) {
            if (cap > SIZE_MAX / sizeof(int64_t)) return seqdedup_no_memory();
            int64_t *sources = PyMem_RawRealloc(s->source_at, cap * sizeof(int64_t));
            if (sources == NULL) return (void)PyErr_NoMemory(), -1;
            s->source_at = sources;
        }
        s->queue_cap = cap;
    }
    if (s->report_runs) s->source_at[s->queue_len] = NO_END;
    s->queue[s->queue_len++] = 0;
    return 0;
}

/* One tracked record of lane `id` with key hash `key`. */
static int push_one(StreamMatcher *s, int32_t id, Hash128 key)
{
    int64_t g = s->position;
    while (s->idle >= 0 && s->lru_head != NO_LANE && g - s->lanes[s->lru_head].last > s->idle)
        if (end_lane(s, s->lru_head) < 0) return -1;
    if (grow_lanes(s, id) < 0 || queue_append(s) < 0) return -1;
    if (s->history >= 0 && seqdedup_previous_append(s, g) < 0) return -1;
    Lane *l = &s->lanes[id];
    int64_t before = l->active ? l->last : NO_PREVIOUS; /* the stream's record before */
    if (!l->active) {
        if (s->max_lanes >= 0 && s->active_count >= s->max_lanes && end_lane(s, s->lru_head) < 0)
            return -1;
        memset(l, 0, sizeof *l);
        l->prev = l->next = NO_LANE;
        l->witness = NO_END;
        l->active = 1;
        s->active_count++;
    } else {
        lru_unlink(s, id);
    }
    if (s->width > 1 &&
        keylog_append(&s->keys, key, before, s->keys_span >= 0 ? g - s->keys_span : 0) < 0)
        return -1;
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
    int64_t start = pos[r->head], source = NO_END;
    Hash128 fingerprint = {r->lo, r->hi};
    if (s->force_collisions && w > 1) fingerprint = (Hash128){1, 1}; /* the tests' hook */
    if (s->history >= 0) {
        if (seqdedup_limited_repeat(s, l, id, fingerprint, key, start, g, &source) < 0)
            return -1;
    } else {
        if (ft_first_start(&s->first, fingerprint, g, &source) < 0) return -1;
        if (source >= start || !seqdedup_same_as_lane(s, l, id, source, key)) source = NO_END;
    }
    l->witness = source;
    if (source != NO_END && s->report_runs) s->source_at[start - s->queue_base] = source;
    if (source != NO_END)
        for (int32_t k = 0; k < w; k++) s->queue[pos[k] - s->queue_base] |= SKIPPED;
    return decide_oldest(s, id);
}

/* The skipped flags (0 or 1) of the records decided at the front of the queue. */
static PyObject *take_decided(StreamMatcher *s)
{
    size_t n = 0, limit = s->queue_len;
    /* report_runs: a run's records go only once it is closed (its marker follows its
     * last record, and counts its sequence in output order) */
    for (int32_t id = s->lru_head; s->report_runs && id != NO_LANE; id = s->lanes[id].next)
        if (s->lanes[id].run_open && (size_t)(s->lanes[id].run_first - s->queue_base) < limit)
            limit = (size_t)(s->lanes[id].run_first - s->queue_base);
    while (n < limit && (s->queue[n] & DECIDED)) n++;
    PyObject *flags = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)n);
    if (flags == NULL) return NULL;
    char *out = PyBytes_AS_STRING(flags);
    for (size_t k = 0; k < n; k++) out[k] = (s->queue[k] & SKIPPED) ? 1 : 0;
    if (n && s->queue_len > n) {
        memmove(s->queue, s->queue + n, s->queue_len - n);
        if (s->report_runs)
            memmove(s->source_at, s->source_at + n, (s->queue_len - n) * sizeof(int64_t));
    }
    s->queue_len -= n;
    s->queue_base += (int64_t)n;
    return flags;
}

int seqdedup_stream_enter(StreamMatcher *s)
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

PyObject *seqdedup_stream_leave(StreamMatcher *s, int rc)
{
    s->busy = 0;
    PyObject *flags = rc < 0 ? NULL : take_decided(s);
    if (flags == NULL) s->broken = 1;
    return flags;
}

int seqdedup_stream_end_all(StreamMatcher *s)
{
    int rc = 0;
    while (rc == 0 && s->lru_head != NO_LANE) rc = end_lane(s, s->lru_head);
    return rc;
}

/* (flags, ended, runs): the decided records' skipped flags, the streams that ended
 * (int64 triples: lane, total, skipped) and the closed runs' contents (16 bytes). */
static PyObject *leave(StreamMatcher *s, int rc)
{
    PyObject *flags = seqdedup_stream_leave(s, rc);
    if (flags == NULL) return NULL;
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
int seqdedup_stream_push(StreamMatcher *s, const Py_buffer *hashes, const Py_buffer *lanes,
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
    } else if (seqdedup_stream_enter(s) == 0) {
        result = leave(s, seqdedup_stream_push(s, &hashes, &lanes, &translate, (int32_t)initial, n));
    }
    PyBuffer_Release(&hashes);
    PyBuffer_Release(&lanes);
    if (translate.buf != NULL) PyBuffer_Release(&translate);
    return result;
}

static PyObject *StreamMatcher_end_all(StreamMatcher *s, PyObject *Py_UNUSED(ignored))
{
    if (seqdedup_stream_enter(s) < 0) return NULL;
    return leave(s, seqdedup_stream_end_all(s));
}

/* The runs closed since the last call (report_runs): RUN_FIELDS int64 each. */
static PyObject *StreamMatcher_closed_runs(StreamMatcher *s, PyObject *Py_UNUSED(ignored))
{
    if (s->busy) {
        PyErr_SetString(PyExc_RuntimeError, "StreamMatcher is in use by another thread");
        return NULL;
    }
    PyObject *out = PyBytes_FromStringAndSize(s->closed.len ? (const char *)s->closed.data : "",
                                              (Py_ssize_t)(s->closed.len * sizeof(int64_t)));
    if (out != NULL) s->closed.len = 0;
    return out;
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
    static char *names[] = {"window", "idle", "max_streams", "count_runs", "history",
                            "seed", "force_collisions", "report_runs", NULL};
    Py_ssize_t width;
    PyObject *idle = Py_None, *max_streams = Py_None, *history = Py_None;
    Hash128 seed = {0, 0};
    int count_runs = 0;
    int force_collisions = 0, report_runs = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "n|OOpOO&pp", names, &width, &idle, &max_streams,
                                     &count_runs, &history, seqdedup_to_seed, &seed,
                                     &force_collisions, &report_runs))
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
    /* A remembered window ends within the history, and its stream's records are at most
     * `idle` apart (else the stream ended): its records lie within (W-1) * idle before
     * that. Without a history, or without an idle limit (a window may then spread over
     * any length), every position is kept (-1). */
    s->keys_span = -1;
    if (s->history >= 0 && s->idle >= 0) {
        s->keys_span = s->history + 1;
        if (s->idle > (INT64_MAX / 2 - s->keys_span) / (width > 1 ? width - 1 : 1)) {
            PyErr_SetString(PyExc_ValueError, "history and idle limit too large for the window");
            return -1;
        }
        s->keys_span += (width - 1) * s->idle;
    }
    s->coeffs = seqdedup_coefficients(width, seed);
    if (s->coeffs == NULL) return -1;
    s->content_key.lo = seed.lo ^ CONTENT_SALT.lo;
    s->content_key.hi = seed.hi ^ CONTENT_SALT.hi;
    s->width = (int32_t)width;
    s->base_lo = width > 1 ? s->coeffs[width - 2] : 1;
    s->base_hi = width > 1 ? s->coeffs[2 * width - 2] : 1;
    s->drop_lo = fp_sub(0, fp_mul(s->coeffs[0], s->base_lo));
    s->drop_hi = fp_sub(0, fp_mul(s->coeffs[width], s->base_hi));
    s->count_runs = count_runs;
    s->report_runs = report_runs;
    s->force_collisions = force_collisions;
    s->names.seed = seed;
    s->names.free_entry = -1;
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
    PyMem_RawFree(s->source_at);
    vec_free(&s->closed);
    vec_free(&s->ended);
    vec_free(&s->runs);
    ft_free(&s->first);
    table_free(&s->latest[0]);
    table_free(&s->latest[1]);
    PyMem_RawFree(s->previous);
    keylog_free(&s->keys);
    seqdedup_names_free(&s->names);
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
    {"closed_runs", (PyCFunction)StreamMatcher_closed_runs, METH_NOARGS,
     "closed_runs() -> bytes: with report_runs, the runs closed since the last call, 8 "
     "int64 each: lane, first and last positions, length, the last and first positions "
     "of the earliest window its first record's window repeats, its content (two words)"},
    {"push_named", (PyCFunction)seqdedup_stream_push_named, METH_VARARGS,
     "push_named(hashes, found, names, current, rows) -> (flags, ended, other, new_rows, "
     "runs): push with the names kept here: `found` int32 indices into `names` (bytes), "
     "-1 for a record that continues the stream before it (`current`, bytes, before the "
     "first); the first `rows` names ever seen get a statistics row. `ended`: int64 "
     "(row, total, skipped) of the streams with a row that ended; `other`: (total, "
     "skipped) of those without; `new_rows`: int32 (row, index into names, -1 for "
     "current) of the rows given"},
    {"end_named", (PyCFunction)seqdedup_stream_end_named, METH_NOARGS,
     "end_named() -> as push_named: every stream ends (push and push_named are not mixed)"},
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
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE,
    .slots = StreamMatcher_slots,
};
