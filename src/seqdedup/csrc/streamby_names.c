/*
 * --stream-by's names kept by the StreamMatcher (push_named, end_named): a table from
 * each active stream's name to its lane, and the statistics row of each of the first
 * names ever seen. The caller hands over a batch's names once each (as the prefix
 * program found them) and gets back only what it reads: the rows given, the rows'
 * counts of the streams that ended, and the other streams' counts summed. So a new
 * stream costs no Python object: with a stream per record that was most of the run.
 *
 * Names are placed by their keyed hash (the run's seed: no input can make them share
 * slots on purpose) and compared whole. Entries have stable indices (lanes point at
 * them); the slots hold entry indices, linear probing, deletion by backward shift. The
 * table holds the active streams' names and the names with a row: bounded by the
 * streams' limits and the rows.
 */
#include "streamby.h"

static size_t home_of(const NameTable *t, uint64_t hash) { return (size_t)hash & (t->slot_cap - 1); }

/* The slot holding entry `e`. */
static size_t slot_of(const NameTable *t, int32_t e)
{
    size_t mask = t->slot_cap - 1, i = home_of(t, t->entries[e].hash);
    while (t->slots[i] != e) i = (i + 1) & mask;
    return i;
}

static int grow_slots(NameTable *t)
{
    size_t cap = t->slot_cap ? t->slot_cap * 2 : 64;
    if (cap > SIZE_MAX / sizeof(int32_t) || cap > ((size_t)1 << 31))
        return seqdedup_no_memory();
    int32_t *slots = PyMem_RawMalloc(cap * sizeof(int32_t));
    if (slots == NULL) return seqdedup_no_memory();
    for (size_t i = 0; i < cap; i++) slots[i] = -1;
    int32_t *old = t->slots;
    size_t old_cap = t->slot_cap;
    t->slots = slots;
    t->slot_cap = cap;
    for (size_t i = 0; i < old_cap; i++) {
        if (old[i] < 0) continue;
        size_t j = home_of(t, t->entries[old[i]].hash);
        while (slots[j] >= 0) j = (j + 1) & (cap - 1);
        slots[j] = old[i];
    }
    PyMem_RawFree(old);
    return 0;
}

/* The entry of name p[0..len), made (without a lane or row) when it is new; -1 with
 * MemoryError set. */
static int32_t intern(NameTable *t, const char *p, Py_ssize_t len)
{
    uint64_t hash = seqdedup_hash128((const unsigned char *)p, (size_t)len, t->seed).lo;
    if (t->slot_cap) {
        size_t mask = t->slot_cap - 1;
        for (size_t i = home_of(t, hash); t->slots[i] >= 0; i = (i + 1) & mask) {
            NameEntry *e = &t->entries[t->slots[i]];
            if (e->hash == hash && e->len == len && memcmp(e->bytes, p, (size_t)len) == 0)
                return t->slots[i];
        }
    }
    if ((t->used + 1) * 2 > t->slot_cap && grow_slots(t) < 0) return -1;
    int32_t e = t->free_entry;
    if (e < 0) {
        if (t->entries_len >= INT32_MAX) return seqdedup_no_memory();
        if (grow((void **)&t->entries, &t->entries_cap, t->entries_len + 1, sizeof(NameEntry)) < 0)
            return -1;
        e = (int32_t)t->entries_len;
    }
    char *copy = PyMem_RawMalloc(len ? (size_t)len : 1);
    if (copy == NULL) return seqdedup_no_memory();
    if (len) memcpy(copy, p, (size_t)len);
    if (e == t->free_entry) t->free_entry = t->entries[e].next_free;
    else t->entries_len++;
    t->entries[e] = (NameEntry){hash, copy, len, NO_LANE, -1, -1};
    size_t mask = t->slot_cap - 1, i = home_of(t, hash);
    while (t->slots[i] >= 0) i = (i + 1) & mask;
    t->slots[i] = e;
    t->used++;
    return e;
}

/* Entry `e` leaves the table (its name is neither active nor a row's). */
static void forget(NameTable *t, int32_t e)
{
    size_t mask = t->slot_cap - 1, i = slot_of(t, e), j = i;
    for (;;) { /* backward shift: no probe sequence is left broken */
        j = (j + 1) & mask;
        if (t->slots[j] < 0) break;
        size_t k = home_of(t, t->entries[t->slots[j]].hash);
        /* the entry at j may move to i when its home is not in (i, j] (cyclically) */
        if ((i <= j) ? (k <= i || k > j) : (k <= i && k > j)) {
            t->slots[i] = t->slots[j];
            i = j;
        }
    }
    t->slots[i] = -1;
    t->used--;
    PyMem_RawFree(t->entries[e].bytes);
    t->entries[e].bytes = NULL;
    t->entries[e].next_free = t->free_entry;
    t->free_entry = e;
}

/* The lane of entry `e`, given one when it has none (a freed lane first), and a row
 * when it has none and fewer than `max_rows` were given (noted in `new_rows` as (row,
 * `index`)). -1 with MemoryError set. */
static int32_t lane_for(NameTable *t, int32_t e, int64_t max_rows, Vec *new_rows, int64_t index)
{
    NameEntry *entry = &t->entries[e];
    if (entry->row < 0 && t->rows < max_rows) {
        if (vec_reserve(new_rows, 2) < 0) return -1;
        entry->row = t->rows++;
        new_rows->data[new_rows->len++] = entry->row;
        new_rows->data[new_rows->len++] = index;
    }
    if (entry->lane != NO_LANE) return entry->lane;
    int32_t lane;
    if (t->free_len) {
        lane = t->free_lanes[--t->free_len];
    } else {
        if (t->next_lane >= (1 << 30) - 1) return seqdedup_no_memory();
        lane = t->next_lane++;
        if (grow((void **)&t->lane_entry, &t->lane_entry_cap, (size_t)lane + 1, sizeof(int32_t)) < 0)
            return -1;
    }
    entry->lane = lane;
    t->lane_entry[lane] = e;
    return lane;
}

/* The streams that ended in this call (s->ended: lane, total, skipped): the counts of
 * those with a row into `rows` as (row, total, skipped), the others summed into
 * other[2]; each lane that is no longer active freed, its name forgotten unless it
 * holds a row. */
static int settle_ended(StreamMatcher *s, Vec *rows, int64_t other[2])
{
    NameTable *t = &s->names;
    for (size_t k = 0; k + 2 < s->ended.len; k += 3) {
        int32_t lane = (int32_t)s->ended.data[k];
        /* (a lane no name was given: push() and push_named() mixed; counted apart) */
        NameEntry *entry = lane < t->next_lane ? &t->entries[t->lane_entry[lane]] : NULL;
        if (entry != NULL && entry->row >= 0) {
            if (vec_reserve(rows, 3) < 0) return -1;
            rows->data[rows->len++] = entry->row;
            rows->data[rows->len++] = s->ended.data[k + 1];
            rows->data[rows->len++] = s->ended.data[k + 2];
        } else {
            other[0] += s->ended.data[k + 1];
            other[1] += s->ended.data[k + 2];
        }
    }
    for (size_t k = 0; k + 2 < s->ended.len; k += 3) {
        int32_t lane = (int32_t)s->ended.data[k];
        if (lane >= t->next_lane) continue;
        int32_t e = t->lane_entry[lane];
        /* (a lane ended twice in one call is freed once; one begun again stays) */
        if (t->entries[e].lane != lane || s->lanes[lane].active) continue;
        if (t->free_len == t->free_cap &&
            grow((void **)&t->free_lanes, &t->free_cap, t->free_len + 1, sizeof(int32_t)) < 0)
            return -1;
        t->free_lanes[t->free_len++] = lane;
        t->entries[e].lane = NO_LANE;
        if (t->entries[e].row < 0) forget(t, e);
    }
    return 0;
}

/* (flags, ended, (other total, other skipped), new_rows, runs) of a call. */
static PyObject *named_result(StreamMatcher *s, int rc, Vec *new_rows)
{
    Vec rows = {0};
    int64_t other[2] = {0, 0};
    if (rc == 0) rc = settle_ended(s, &rows, other);
    PyObject *flags = seqdedup_stream_leave(s, rc), *result = NULL;
    if (flags != NULL) {
        int32_t *pairs = PyMem_RawMalloc(new_rows->len ? new_rows->len * sizeof(int32_t) : 1);
        if (pairs == NULL) {
            PyErr_NoMemory();
            Py_DECREF(flags);
        } else {
            for (size_t k = 0; k < new_rows->len; k++) pairs[k] = (int32_t)new_rows->data[k];
            result = Py_BuildValue(
                "(Ny#(LL)y#y#)", flags, rows.len ? (const char *)rows.data : "",
                (Py_ssize_t)(rows.len * sizeof(int64_t)), (long long)other[0],
                (long long)other[1], (const char *)pairs,
                (Py_ssize_t)(new_rows->len * sizeof(int32_t)),
                s->runs.len ? (const char *)s->runs.data : "",
                (Py_ssize_t)(s->runs.len * sizeof(int64_t)));
            PyMem_RawFree(pairs);
        }
    }
    vec_free(&rows);
    vec_free(new_rows);
    return result;
}

static int row_limit(Py_ssize_t rows)
{
    if (rows < 0 || rows > INT32_MAX) {
        PyErr_SetString(PyExc_ValueError, "rows must be from 0 to 2^31 - 1");
        return -1;
    }
    return 0;
}

/* Each name's lane (in the order given), then the records pushed. */
static int push_named(StreamMatcher *s, const Py_buffer *hashes, const Py_buffer *found,
                      PyObject *names, const Py_buffer *current, Py_ssize_t max_rows,
                      Vec *new_rows)
{
    Py_ssize_t n = found->len / (Py_ssize_t)sizeof(int32_t), count = PyList_GET_SIZE(names);
    int32_t initial = -1, first = -1;
    if (n) memcpy(&first, found->buf, sizeof first);
    if (n && first < 0) { /* the batch begins inside the stream before it */
        int32_t e = intern(&s->names, current->buf, current->len);
        if (e < 0 || (initial = lane_for(&s->names, e, max_rows, new_rows, -1)) < 0) return -1;
    }
    int32_t *lanes = PyMem_RawMalloc((size_t)(count ? count : 1) * sizeof(int32_t));
    if (lanes == NULL) return seqdedup_no_memory();
    int rc = 0;
    for (Py_ssize_t k = 0; k < count && rc == 0; k++) {
        PyObject *name = PyList_GET_ITEM(names, k);
        if (!PyBytes_Check(name)) {
            PyErr_SetString(PyExc_TypeError, "names must be bytes");
            rc = -1;
            break;
        }
        int32_t e = intern(&s->names, PyBytes_AS_STRING(name), PyBytes_GET_SIZE(name));
        if (e < 0 || (lanes[k] = lane_for(&s->names, e, max_rows, new_rows, k)) < 0) rc = -1;
    }
    if (rc == 0) {
        Py_buffer translate = {0};
        translate.buf = lanes;
        translate.len = count * (Py_ssize_t)sizeof(int32_t);
        rc = seqdedup_stream_push(s, hashes, found, &translate, initial, n);
    }
    PyMem_RawFree(lanes);
    return rc;
}

PyObject *seqdedup_stream_push_named(StreamMatcher *s, PyObject *args)
{
    Py_buffer hashes, found, current;
    PyObject *names;
    Py_ssize_t max_rows;
    if (!PyArg_ParseTuple(args, "y*y*O!y*n", &hashes, &found, &PyList_Type, &names, &current,
                          &max_rows))
        return NULL;
    PyObject *result = NULL;
    Py_ssize_t n = found.len / (Py_ssize_t)sizeof(int32_t);
    if (found.len % (Py_ssize_t)sizeof(int32_t) || hashes.len != n * (Py_ssize_t)sizeof(Hash128)) {
        PyErr_SetString(PyExc_ValueError, "expected 16 bytes of hash and 4 of name per record");
    } else if (row_limit(max_rows) == 0 && seqdedup_stream_enter(s) == 0) {
        Vec new_rows = {0};
        int rc = push_named(s, &hashes, &found, names, &current, max_rows, &new_rows);
        result = named_result(s, rc, &new_rows);
    }
    PyBuffer_Release(&hashes);
    PyBuffer_Release(&found);
    PyBuffer_Release(&current);
    return result;
}

PyObject *seqdedup_stream_end_named(StreamMatcher *s, PyObject *Py_UNUSED(ignored))
{
    if (seqdedup_stream_enter(s) < 0) return NULL;
    Vec new_rows = {0};
    return named_result(s, seqdedup_stream_end_all(s), &new_rows);
}

void seqdedup_names_free(NameTable *t)
{
    for (size_t e = 0; e < t->entries_len; e++) PyMem_RawFree(t->entries[e].bytes);
    PyMem_RawFree(t->entries);
    PyMem_RawFree(t->slots);
    PyMem_RawFree(t->lane_entry);
    PyMem_RawFree(t->free_lanes);
}
