/*
 * The KeyTable type (seqdedup._kernel.KeyTable): the distinct keys of `seqdedup diff`'s
 * GOOD side, the twin of seqdedup/diff/profile.py's KeyTable. Each distinct 16-byte
 * key hash gets the next small id (a FirstTable whose "start" is the id); per id its
 * count and its one neighbour before and after (EDGE, NONE or MANY when not one key),
 * so that GOOD is read into compact arrays and never into a Python object per record.
 */
#include "first_table.h"

#define KT_EDGE (-1) /* the start or end of a stretch handed to add() */
#define KT_NONE (-2) /* no neighbour seen yet; in find(): a key the table lacks */
#define KT_MANY (-3) /* more than one neighbour */
#define KT_MAX_IDS ((int64_t)1 << 31) /* ids are int32 in find()'s answer */

typedef struct {
    PyObject_HEAD
    FirstTable ids; /* key hash -> id */
    int64_t *counts;
    int32_t *after, *before;
    size_t size, cap; /* ids given; room in the three arrays */
    int32_t open;     /* the last key of a stretch the next add() continues (if is_open) */
    int is_open;
} KeyTable;

static int grow_arrays(KeyTable *t)
{
    size_t cap = t->cap < 64 ? 64 : t->cap + t->cap / 2;
    if (cap > SIZE_MAX / sizeof(int64_t)) return seqdedup_no_memory();
    int64_t *counts = PyMem_RawRealloc(t->counts, cap * sizeof(int64_t));
    if (counts == NULL) return seqdedup_no_memory();
    t->counts = counts;
    int32_t *after = PyMem_RawRealloc(t->after, cap * sizeof(int32_t));
    if (after == NULL) return seqdedup_no_memory();
    t->after = after;
    int32_t *before = PyMem_RawRealloc(t->before, cap * sizeof(int32_t));
    if (before == NULL) return seqdedup_no_memory();
    t->before = before;
    t->cap = cap;
    return 0;
}

/* The id of `key`, a new one (count 0, no neighbours) if the table lacks it; *fresh
 * says which. */
static int id_of(KeyTable *t, Hash128 key, int32_t *id, int *fresh)
{
    int64_t found = 0;
    if ((int64_t)t->size >= KT_MAX_IDS) {
        return seqdedup_fail(PyExc_OverflowError, "more than 2^31 distinct keys");
    }
    if (ft_first_start(&t->ids, key, (int64_t)t->size, &found) < 0) return -1;
    *fresh = found == (int64_t)t->size;
    if (*fresh) {
        if (t->size == t->cap && grow_arrays(t) < 0) return -1;
        t->counts[t->size] = 0;
        t->after[t->size] = t->before[t->size] = KT_NONE;
        t->size++;
    }
    *id = (int32_t)found;
    return 0;
}

/* A neighbour seen: the first one kept, a different one later makes it MANY. */
static inline void note(int32_t *slot, int32_t neighbour)
{
    if (*slot != neighbour) *slot = *slot == KT_NONE ? neighbour : KT_MANY;
}

static Hash128 key_at(const unsigned char *buf, Py_ssize_t k)
{
    Hash128 key;
    memcpy(&key.lo, buf + 16 * k, 8);
    memcpy(&key.hi, buf + 16 * k + 8, 8);
    return key;
}

static PyObject *KeyTable_add(KeyTable *t, PyObject *args, PyObject *kwds)
{
    static char *names[] = {"hashes", "weights", "separator", "links", "ends", NULL};
    Py_buffer hashes, weights = {0}, separator = {0};
    int links = 1, ends = 1;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "y*|z*z*pp", names, &hashes, &weights,
                                     &separator, &links, &ends)) {
        return NULL;
    }
    PyObject *result = NULL;
    Py_ssize_t n = hashes.len / 16;
    int weighted = weights.buf != NULL, separated = separator.buf != NULL;
    if (hashes.len % 16) {
        PyErr_SetString(PyExc_ValueError, "key hashes are 16 bytes each");
    } else if (weighted && weights.len != n * (Py_ssize_t)sizeof(int64_t)) {
        PyErr_SetString(PyExc_ValueError, "one int64 weight per key hash");
    } else if (separated && separator.len != 16) {
        PyErr_SetString(PyExc_ValueError, "the separator is one 16-byte key hash");
    } else {
        size_t made = 0, room = 0;
        int64_t *first = NULL; /* the first position of each new id, in id order */
        Hash128 edge = separated ? key_at(separator.buf, 0) : (Hash128){0, 0};
        if (t->is_open && !links) note(&t->after[t->open], KT_EDGE); /* (closed here) */
        int32_t previous = t->is_open && links ? t->open : KT_EDGE; /* (a stretch continued) */
        t->is_open = 0;
        int rc = 0;
        for (Py_ssize_t k = 0; k <= n && rc == 0; k++) {
            Hash128 key = k < n ? key_at(hashes.buf, k) : edge;
            if (k == n && !ends && links) { /* the next call continues the stretch */
                t->is_open = previous >= 0;
                t->open = previous;
                break;
            }
            if (k == n || (separated && hash_equal(key, edge))) {
                if (previous >= 0 && links) note(&t->after[previous], KT_EDGE);
                previous = KT_EDGE;
                continue;
            }
            int32_t id = 0;
            int fresh = 0;
            rc = id_of(t, key, &id, &fresh);
            if (rc < 0) break;
            if (fresh) {
                if (made == room) {
                    room = room < 64 ? 64 : room * 2;
                    int64_t *more = PyMem_RawRealloc(first, room * sizeof(int64_t));
                    if (more == NULL) {
                        rc = seqdedup_no_memory();
                        break;
                    }
                    first = more;
                }
                first[made++] = (int64_t)k;
            }
            int64_t weight = 1;
            if (weighted) memcpy(&weight, (const char *)weights.buf + 8 * k, 8);
            t->counts[id] += weight;
            if (links) {
                note(&t->before[id], previous);
                if (previous >= 0) note(&t->after[previous], id);
                previous = id;
            }
        }
        if (rc == 0) {
            result = PyBytes_FromStringAndSize(first ? (const char *)first : "",
                                               (Py_ssize_t)(made * sizeof(int64_t)));
        }
        PyMem_RawFree(first);
    }
    PyBuffer_Release(&hashes);
    if (weights.buf != NULL) PyBuffer_Release(&weights);
    if (separator.buf != NULL) PyBuffer_Release(&separator);
    return result;
}

/* The id of `key`, or KT_NONE when the table lacks it (nothing inserted). */
static int32_t find_id(const KeyTable *t, Hash128 key)
{
    const FirstTable *ft = &t->ids;
    if (hash_is_zero(key)) return ft->has_zero ? (int32_t)ft->zero_start : KT_NONE;
    if (ft->cap == 0) return KT_NONE;
    for (size_t i = ft_home(ft, key);; i = ft_next(ft, i)) {
        const unsigned char *slot = ft->slots + i * FT_SLOT;
        Hash128 k = ft_key(slot);
        if (hash_equal(k, key)) return (int32_t)ft_start(slot);
        if (hash_is_zero(k)) return KT_NONE;
    }
}

static PyObject *KeyTable_find(KeyTable *t, PyObject *arg)
{
    Py_buffer hashes;
    if (PyObject_GetBuffer(arg, &hashes, PyBUF_SIMPLE) < 0) return NULL;
    PyObject *result = NULL;
    if (hashes.len % 16) {
        PyErr_SetString(PyExc_ValueError, "key hashes are 16 bytes each");
    } else {
        Py_ssize_t n = hashes.len / 16;
        result = PyBytes_FromStringAndSize(NULL, n * (Py_ssize_t)sizeof(int32_t));
        if (result != NULL) {
            char *out = PyBytes_AS_STRING(result);
            for (Py_ssize_t k = 0; k < n; k++) {
                int32_t id = find_id(t, key_at(hashes.buf, k));
                memcpy(out + 4 * k, &id, 4);
            }
        }
    }
    PyBuffer_Release(&hashes);
    return result;
}

static PyObject *KeyTable_arrays(KeyTable *t, PyObject *unused)
{
    (void)unused;
    Py_ssize_t n = (Py_ssize_t)t->size;
    if (n == 0) return Py_BuildValue("y#y#y#", "", (Py_ssize_t)0, "", (Py_ssize_t)0, "",
                                     (Py_ssize_t)0); /* (y# makes None of a NULL) */
    return Py_BuildValue("y#y#y#", (const char *)t->counts, n * (Py_ssize_t)sizeof(int64_t),
                         (const char *)t->after, n * (Py_ssize_t)sizeof(int32_t),
                         (const char *)t->before, n * (Py_ssize_t)sizeof(int32_t));
}

static Py_ssize_t KeyTable_len(KeyTable *t) { return (Py_ssize_t)t->size; }

static void KeyTable_dealloc(KeyTable *t)
{
    PyTypeObject *type = Py_TYPE(t);
    ft_free(&t->ids);
    PyMem_RawFree(t->counts);
    PyMem_RawFree(t->after);
    PyMem_RawFree(t->before);
    type->tp_free((PyObject *)t);
    Py_DECREF(type);
}

static PyMethodDef KeyTable_methods[] = {
    {"add", (PyCFunction)(void (*)(void))KeyTable_add, METH_VARARGS | METH_KEYWORDS,
     "add(hashes, weights=None, separator=None, links=True, ends=True) -> bytes: count one "
     "stretch of 16-byte key hashes (each weighing its int64 weight, else 1; the separator "
     "hash ends a stretch and starts the next) and, with links, note each key's neighbours "
     "(ends=False: the next call continues the stretch); the first position of each new id "
     "(int64, in id order)"},
    {"find", (PyCFunction)KeyTable_find, METH_O,
     "find(hashes) -> bytes: each key's id (int32), -2 for a key the table lacks"},
    {"arrays", (PyCFunction)KeyTable_arrays, METH_NOARGS,
     "arrays() -> (counts, after, before): per id its count (int64) and its neighbour after "
     "and before (int32: the id, -1 an edge, -2 none seen, -3 several)"},
    {NULL}};

static PyType_Slot KeyTable_slots[] = {
    {Py_tp_doc, "GOOD's distinct keys for seqdedup diff: ids, counts and neighbours."},
    {Py_tp_new, PyType_GenericNew},
    {Py_tp_dealloc, (destructor)KeyTable_dealloc},
    {Py_tp_methods, KeyTable_methods},
    {Py_sq_length, (lenfunc)KeyTable_len},
    {0, NULL}};

PyType_Spec seqdedup_key_table_spec = {
    .name = "seqdedup._kernel.KeyTable",
    .basicsize = sizeof(KeyTable),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE,
    .slots = KeyTable_slots,
};

/* ---- occurrences: --budget's kinds and events, numbered in one pass ----------------- */

/* Fills the five arrays of occurrences(); the number of ids, or -1 with an error set. */
static Py_ssize_t number_hashes(const unsigned char *hashes, Py_ssize_t n, int64_t *ids,
                                int64_t *previous, int64_t *firsts, int64_t *counts,
                                int64_t *lasts)
{
    FirstTable table = {0};
    Py_ssize_t size = 0;
    for (Py_ssize_t k = 0; k < n; k++) {
        int64_t id = 0;
        if (ft_first_start(&table, key_at(hashes, k), (int64_t)size, &id) < 0) {
            ft_free(&table);
            return -1;
        }
        if (id == (int64_t)size) { /* (a new hash: its id is the next number) */
            firsts[size] = k;
            counts[size] = 0;
            lasts[size] = -1;
            size++;
        }
        ids[k] = id;
        previous[k] = lasts[id];
        lasts[id] = k;
        counts[id]++;
    }
    ft_free(&table);
    return size;
}

/* occurrences(hashes) -> (ids, previous, firsts, counts, lasts): per 16-byte hash its
 * id (0, 1, ... in the order of first occurrence) and the position of the same hash
 * before it (-1: none), int64 each; per id its first position, count and last position. */
PyObject *seqdedup_py_occurrences(PyObject *self, PyObject *arg)
{
    (void)self;
    Py_buffer hashes;
    if (PyObject_GetBuffer(arg, &hashes, PyBUF_SIMPLE) < 0) return NULL;
    PyObject *result = NULL;
    Py_ssize_t n = hashes.len / 16;
    int64_t *ids = NULL, *previous = NULL, *firsts = NULL, *counts = NULL, *lasts = NULL;
    if (hashes.len % 16) {
        PyErr_SetString(PyExc_ValueError, "key hashes are 16 bytes each");
        goto done;
    }
    size_t bytes = (size_t)n * sizeof(int64_t) + 1; /* (+1: never a request of 0) */
    ids = PyMem_RawMalloc(bytes);
    previous = PyMem_RawMalloc(bytes);
    firsts = PyMem_RawMalloc(bytes);
    counts = PyMem_RawMalloc(bytes);
    lasts = PyMem_RawMalloc(bytes);
    if (!ids || !previous || !firsts || !counts || !lasts) {
        PyErr_NoMemory();
        goto done;
    }
    Py_ssize_t size = number_hashes(hashes.buf, n, ids, previous, firsts, counts, lasts);
    if (size < 0) goto done;
    Py_ssize_t per_position = n * 8, per_id = size * 8;
    result = Py_BuildValue("y#y#y#y#y#", (const char *)ids, per_position, (const char *)previous,
                           per_position, (const char *)firsts, per_id, (const char *)counts,
                           per_id, (const char *)lasts, per_id);
done:
    PyMem_RawFree(ids);
    PyMem_RawFree(previous);
    PyMem_RawFree(firsts);
    PyMem_RawFree(counts);
    PyMem_RawFree(lasts);
    PyBuffer_Release(&hashes);
    return result;
}

/* Fills `found` with up to `top` (id, count) pairs of the ids in [first, last], most
 * frequent first (ties: the first met); the number of distinct ids, -1 on no memory. */
static Py_ssize_t tally_ids(const int64_t *ids, Py_ssize_t first, Py_ssize_t last,
                            Py_ssize_t size, Py_ssize_t top, int64_t *found, Py_ssize_t *made)
{
    int64_t *counts = PyMem_RawCalloc((size_t)size + 1, sizeof(int64_t));
    size_t held = (size_t)(last + 1 - first); /* (0 for an empty stretch: last = first - 1) */
    int64_t *order = PyMem_RawMalloc((held + 1) * sizeof(int64_t));
    if (counts == NULL || order == NULL) {
        PyMem_RawFree(counts);
        PyMem_RawFree(order);
        return -1;
    }
    Py_ssize_t distinct = 0;
    for (Py_ssize_t k = first; k <= last; k++) {
        if (counts[ids[k]]++ == 0) order[distinct++] = ids[k];
    }
    *made = 0;
    for (Py_ssize_t pick = 0; pick < top && pick < distinct; pick++) {
        Py_ssize_t best = -1;
        for (Py_ssize_t d = 0; d < distinct; d++) { /* (a strict > keeps the first met) */
            if (counts[order[d]] > 0 && (best < 0 || counts[order[d]] > counts[order[best]])) {
                best = d;
            }
        }
        found[2 * pick] = order[best];
        found[2 * pick + 1] = counts[order[best]];
        counts[order[best]] = -counts[order[best]]; /* (taken: not picked again) */
        (*made)++;
    }
    PyMem_RawFree(counts);
    PyMem_RawFree(order);
    return distinct;
}

/* tally(ids, first, last, size, top) -> (distinct, pairs): of the int64 ids (each in
 * 0 .. size - 1) at positions first .. last, how many distinct, and the `top` most
 * frequent as int64 (id, count) pairs, most frequent first, ties in the order first
 * met (as collections.Counter.most_common). */
PyObject *seqdedup_py_tally(PyObject *self, PyObject *args)
{
    (void)self;
    Py_buffer view;
    Py_ssize_t first, last, size, top;
    if (!PyArg_ParseTuple(args, "y*nnnn", &view, &first, &last, &size, &top)) return NULL;
    PyObject *result = NULL;
    Py_ssize_t n = view.len / 8;
    if (view.len % 8 || first < 0 || last < first - 1 || last >= n || size < 0 || top < 0 ||
        top > 64) {
        PyErr_SetString(PyExc_ValueError, "tally: int64 ids, 0 <= first <= last + 1 <= their "
                                          "count, 0 <= top <= 64");
        goto done;
    }
    const int64_t *ids = view.buf;
    for (Py_ssize_t k = first; k <= last; k++) {
        if (ids[k] < 0 || ids[k] >= size) {
            PyErr_SetString(PyExc_ValueError, "tally: an id outside 0 .. size - 1");
            goto done;
        }
    }
    int64_t found[128];
    Py_ssize_t made = 0;
    Py_ssize_t distinct = tally_ids(ids, first, last, size, top, found, &made);
    if (distinct < 0) {
        PyErr_NoMemory();
        goto done;
    }
    result = Py_BuildValue("ny#", distinct, (const char *)found, made * 16);
done:
    PyBuffer_Release(&view);
    return result;
}

/* distinct_records(data, bounds, flags, seed) -> (ids, firsts): of the records whose flag
 * is set (record k is data[bounds[2k]:bounds[2k+1]], int64 pairs; flags: a byte a
 * record), in order, each one's id among them by its bytes (0, 1, ... in the order of
 * first occurrence, told by its keyed 128-bit hash), int64; per id the record where it
 * first occurs, int64. --budget's verbatim lines: a few thousand distinct of hundreds
 * of thousands, each made into an event's key once. */
PyObject *seqdedup_py_distinct_records(PyObject *self, PyObject *args)
{
    (void)self;
    Py_buffer data, bounds, flags;
    Hash128 seeds = {0, 0};
    if (!PyArg_ParseTuple(args, "y*y*y*O&", &data, &bounds, &flags, seqdedup_to_seed, &seeds))
        return NULL;
    PyObject *result = NULL;
    int64_t *ids = NULL, *firsts = NULL;
    FirstTable table = {0};
    size_t n = (size_t)bounds.len / 16, flagged = 0, size = 0, taken = 0;
    if (bounds.len % 16 || (size_t)flags.len != n) {
        PyErr_SetString(PyExc_ValueError,
                        "distinct_records: bounds are int64 pairs, flags a byte per record");
        goto done;
    }
    const unsigned char *flag = flags.buf, *pairs = bounds.buf, *text = data.buf;
    for (size_t k = 0; k < n; k++) flagged += flag[k] != 0;
    ids = PyMem_RawMalloc(flagged * sizeof(int64_t) + 1); /* (+1: never a request of 0) */
    firsts = PyMem_RawMalloc(flagged * sizeof(int64_t) + 1);
    if (ids == NULL || firsts == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    for (size_t k = 0; k < n; k++) {
        if (!flag[k]) continue;
        int64_t span[2], id = 0;
        memcpy(span, pairs + 16 * k, sizeof span); /* (any alignment) */
        if (span[0] < 0 || span[0] > span[1] || span[1] > (int64_t)data.len) {
            PyErr_SetString(PyExc_ValueError, "distinct_records: a record lies outside the data");
            goto done;
        }
        Hash128 key = seqdedup_hash128(text + span[0], (size_t)(span[1] - span[0]), seeds);
        if (ft_first_start(&table, key, (int64_t)size, &id) < 0) goto done;
        if (id == (int64_t)size) firsts[size++] = (int64_t)k; /* (new: the next id) */
        ids[taken++] = id;
    }
    result = Py_BuildValue("y#y#", (const char *)ids, (Py_ssize_t)(taken * sizeof(int64_t)),
                           (const char *)firsts, (Py_ssize_t)(size * sizeof(int64_t)));
done:
    ft_free(&table);
    PyMem_RawFree(ids);
    PyMem_RawFree(firsts);
    PyBuffer_Release(&data);
    PyBuffer_Release(&bounds);
    PyBuffer_Release(&flags);
    return result;
}
