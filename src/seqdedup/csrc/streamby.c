/*
 * The StreamMatcher's rule (its type: streamby_type.c): the skip rule per stream with one
 * shared history (--stream-by), the twin of streamby.decider.StreamDecider (runs handed
 * over whole with report_runs, for markers and --top). Records come as key hashes and lanes (a small id the caller gives each active
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

/* A run's RUN_FIELDS: its lane, first and `last` positions, length, the source window's
 * last and first positions, its content. */
static void put_run(const StreamMatcher *s, const Lane *l, int64_t last, uint64_t lo,
                    uint64_t hi, int64_t *out)
{
    out[0] = l - s->lanes;
    out[1] = l->run_first;
    out[2] = last;
    out[3] = l->run_length;
    out[4] = l->run_source;
    out[5] = l->run_source == NO_END ? NO_END : window_first(s, l->run_source);
    out[6] = (int64_t)lo;
    out[7] = (int64_t)hi;
}

/* fold: hand over lane `l`'s current part (its records, the run's fields), then begin
 * the next one empty. */
static int hand_over_part(StreamMatcher *s, Lane *l, int ends, uint64_t lo, uint64_t hi)
{
    Vec *part = &s->part_records[l - s->lanes];
    size_t n = part->len / 3;
    if (n == 0) return 0; /* (a part holds a record: it begins with one) */
    if (vec_reserve(&s->parts, PART_FIELDS) < 0 || vec_reserve(&s->part_positions, n) < 0 ||
        vec_reserve(&s->part_keys, 2 * n) < 0)
        return -1;
    int64_t *out = s->parts.data + s->parts.len;
    put_run(s, l, part->data[3 * (n - 1)], lo, hi, out); /* (last: the part's) */
    out[RUN_FIELDS] = part->data[0];
    out[RUN_FIELDS + 1] = (int64_t)n;
    out[RUN_FIELDS + 2] = ends;
    s->parts.len += PART_FIELDS;
    int64_t *positions = s->part_positions.data + s->part_positions.len;
    int64_t *keys = s->part_keys.data + s->part_keys.len;
    for (size_t k = 0; k < n; k++) {
        positions[k] = part->data[3 * k];
        keys[2 * k] = part->data[3 * k + 1];
        keys[2 * k + 1] = part->data[3 * k + 2];
    }
    s->part_positions.len += n;
    s->part_keys.len += 2 * n;
    part->len = 0;
    return 0;
}

/* fold: the skipped record at `position` joins lane `l`'s open run; a part that is full
 * (fold_every records) is handed over first, once the run goes on past it. */
static int fold_record(StreamMatcher *s, Lane *l, int64_t position, Hash128 key)
{
    if (s->fold_every > 0 && l->run_length > 0 && l->run_length % s->fold_every == 0) {
        if (hand_over_part(s, l, 0, 0, 0) < 0) return -1;
        l->run_held = position;
    }
    Vec *part = &s->part_records[l - s->lanes];
    if (vec_reserve(part, 3) < 0) return -1;
    part->data[part->len++] = position;
    part->data[part->len++] = (int64_t)key.lo;
    part->data[part->len++] = (int64_t)key.hi;
    return 0;
}

static int close_run(StreamMatcher *s, Lane *l)
{
    l->run_open = 0;
    if (!s->count_runs && !s->report_runs) return 0;
    uint64_t lo, hi;
    sip_final(&l->content, &lo, &hi);
    if (s->fold) {
        if (hand_over_part(s, l, 1, lo, hi) < 0) return -1;
    } else if (s->report_runs) {
        if (vec_reserve(&s->closed, RUN_FIELDS) < 0) return -1;
        put_run(s, l, l->run_last, lo, hi, s->closed.data + s->closed.len);
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
        l->run_first = l->run_held = at + s->queue_base;
        l->run_length = 0;
        l->run_source = s->report_runs ? s->source_at[at] : NO_END;
    }
    if (s->fold && fold_record(s, l, at + s->queue_base, key) < 0) return -1;
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
    if (s->fold) {
        Vec *parts = PyMem_RawRealloc(s->part_records, cap * sizeof(Vec));
        if (parts == NULL) return (void)PyErr_NoMemory(), -1;
        s->part_records = parts;
        memset(parts + s->lane_cap, 0, (cap - s->lane_cap) * sizeof(Vec));
    }
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
     * last record, and counts its sequence in output order); fold parts: a part's once
     * the run goes on past it */
    for (int32_t id = s->lru_head; s->report_runs && id != NO_LANE; id = s->lanes[id].next)
        if (s->lanes[id].run_open && (size_t)(s->lanes[id].run_held - s->queue_base) < limit)
            limit = (size_t)(s->lanes[id].run_held - s->queue_base);
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
