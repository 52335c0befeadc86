/*
 * --stream-by's names at C speed for patterns that are a *prefix program*: anchored at
 * the record's start, a sequence of steps, each a set of bytes taken between min and
 * max times (greedily), one span of steps the name. streamby.decider.prefix_program makes
 * one from a regular expression only where greedy matching without backtracking finds
 * exactly what the expression finds; everything else stays with Python's `re`.
 */
#include "kernel.h"
#include "functions.h"

#define SET_BYTES 32 /* a set of bytes as 256 bits */

typedef struct {
    const unsigned char *sets;
    const int64_t *mins, *maxes; /* max < 0: no limit */
    Py_ssize_t steps, name_from, name_to;
} Program;

/* The end of the program's match at the start of p[0..len), or -1; the name's span;
 * in *reach how many bytes from the start it may have read (each step's stopping byte
 * counted: a bound, not the least). */
static Py_ssize_t run_program(const Program *g, const unsigned char *p, Py_ssize_t len,
                              Py_ssize_t *name_start, Py_ssize_t *name_end, Py_ssize_t *reach)
{
    Py_ssize_t at = 0;
    *name_start = *name_end = 0;
    for (Py_ssize_t k = 0; k < g->steps; k++) {
        if (k == g->name_from) *name_start = at;
        const unsigned char *set = g->sets + (size_t)k * SET_BYTES;
        int64_t taken = 0, most = g->maxes[k];
        while (at < len && (most < 0 || taken < most) && (set[p[at] >> 3] >> (p[at] & 7) & 1)) {
            at++;
            taken++;
        }
        *reach = at < len ? at + 1 : len;
        if (taken < g->mins[k]) return -1;
        if (k + 1 == g->name_to) *name_end = at;
    }
    return at;
}

/* Whether p[0..len) holds a byte outside ASCII. */
static int has_high_byte(const unsigned char *p, Py_ssize_t len)
{
    for (Py_ssize_t i = 0; i < len; i++)
        if (p[i] & 0x80) return 1;
    return 0;
}

typedef struct {
    const unsigned char *data;
    Py_ssize_t len;
    int32_t index;
} NameSlot;

/* The index of the name p[0..len) among `names` (added if new), or -1 (MemoryError).
 * Names are placed by their keyed hash (`seed`: the run's), so that no input can make
 * them share slots on purpose; they are compared whole. */
static int32_t intern(NameSlot **slots, size_t *cap, PyObject *names, const unsigned char *p,
                      Py_ssize_t len, Hash128 seed)
{
    Py_ssize_t count = PyList_GET_SIZE(names);
    if ((size_t)(count + 1) * 2 > *cap) {
        size_t bigger = *cap ? *cap * 2 : 64;
        NameSlot *fresh = PyMem_RawCalloc(bigger, sizeof(NameSlot));
        if (fresh == NULL) return (void)PyErr_NoMemory(), -1;
        for (size_t s = 0; s < *cap; s++) {
            if ((*slots)[s].data == NULL) continue;
            size_t i = (size_t)seqdedup_hash128((*slots)[s].data, (size_t)(*slots)[s].len, seed).lo;
            while (fresh[i & (bigger - 1)].data != NULL) i++;
            fresh[i & (bigger - 1)] = (*slots)[s];
        }
        PyMem_RawFree(*slots);
        *slots = fresh;
        *cap = bigger;
    }
    static const unsigned char empty[1] = {0};
    const unsigned char *key = len ? p : empty;
    size_t i = (size_t)seqdedup_hash128(key, (size_t)len, seed).lo;
    for (;; i++) {
        NameSlot *slot = &(*slots)[i & (*cap - 1)];
        if (slot->data == NULL) {
            PyObject *name = PyBytes_FromStringAndSize((const char *)key, len);
            if (name == NULL || PyList_Append(names, name) < 0) {
                Py_XDECREF(name);
                return -1;
            }
            Py_DECREF(name);
            /* the list holds the bytes: the slot points into them */
            slot->data = (const unsigned char *)PyBytes_AS_STRING(PyList_GET_ITEM(names, count));
            slot->len = len;
            slot->index = (int32_t)count;
            return slot->index;
        }
        if (slot->len == len && memcmp(slot->data, key, (size_t)len) == 0) return slot->index;
    }
}

static int get_program(PyObject *sets, PyObject *mins, PyObject *maxes, Py_ssize_t from,
                       Py_ssize_t to, Program *g)
{
    Py_ssize_t steps = PyBytes_GET_SIZE(sets) / SET_BYTES;
    if (PyBytes_GET_SIZE(sets) % SET_BYTES || PyBytes_GET_SIZE(mins) != steps * 8 ||
        PyBytes_GET_SIZE(maxes) != steps * 8 || from < 0 || to <= from || to > steps) {
        PyErr_SetString(PyExc_ValueError, "not a prefix program");
        return -1;
    }
    g->sets = (const unsigned char *)PyBytes_AS_STRING(sets);
    g->mins = (const int64_t *)(const void *)PyBytes_AS_STRING(mins);
    g->maxes = (const int64_t *)(const void *)PyBytes_AS_STRING(maxes);
    g->steps = steps;
    g->name_from = from;
    g->name_to = to;
    return 0;
}

/* stream_prefixes(records, sets, mins, maxes, name_from, name_to, ascii_only=False, seed=0) ->
 * (names, found, keys, unread): the distinct names in order of appearance; per record
 * the index of its name (int32, -1 when the program does not match); each record
 * without its match. With ascii_only (the program is a text pattern's bytes twin, exact
 * on ASCII), a record whose match read a byte outside ASCII is left to the text pattern:
 * its index is UNREAD, its key the record, and its position (int32) is in unread. */
#define UNREAD (-2)
PyObject *seqdedup_py_stream_prefixes(PyObject *self, PyObject *args)
{
    PyObject *records, *sets, *mins, *maxes;
    Py_ssize_t from, to;
    int ascii_only = 0;
    Hash128 seed = {0, 0};
    if (!PyArg_ParseTuple(args, "O!SSSnn|pO&", &PyList_Type, &records, &sets, &mins, &maxes,
                          &from, &to, &ascii_only, seqdedup_to_seed, &seed))
        return NULL;
    Program g;
    if (get_program(sets, mins, maxes, from, to, &g) < 0) return NULL;
    Py_ssize_t n = PyList_GET_SIZE(records), unread_count = 0;
    PyObject *names = PyList_New(0), *keys = PyList_New(n), *unread = NULL;
    PyObject *found = PyBytes_FromStringAndSize(NULL, n * (Py_ssize_t)sizeof(int32_t));
    NameSlot *slots = NULL;
    size_t cap = 0;
    int32_t *left = NULL; /* the positions left to the text pattern */
    if (names == NULL || keys == NULL || found == NULL) goto fail;
    char *out = PyBytes_AS_STRING(found);
    for (Py_ssize_t k = 0; k < n; k++) {
        PyObject *record = PyList_GET_ITEM(records, k);
        if (!PyBytes_Check(record)) {
            PyErr_SetString(PyExc_TypeError, "records must be bytes");
            goto fail;
        }
        const unsigned char *p = (const unsigned char *)PyBytes_AS_STRING(record);
        Py_ssize_t len = PyBytes_GET_SIZE(record), name_start, name_end, reach = 0;
        Py_ssize_t end = run_program(&g, p, len, &name_start, &name_end, &reach);
        int32_t index = -1;
        PyObject *key;
        if (ascii_only && has_high_byte(p, reach)) {
            if (left == NULL && (left = PyMem_RawMalloc((size_t)n * sizeof(int32_t))) == NULL) {
                PyErr_NoMemory();
                goto fail;
            }
            left[unread_count++] = (int32_t)k;
            index = UNREAD;
            Py_INCREF(record);
            key = record;
        } else if (end < 0) {
            Py_INCREF(record);
            key = record;
        } else {
            index = intern(&slots, &cap, names, p + name_start, name_end - name_start, seed);
            if (index < 0) goto fail;
            key = PyBytes_FromStringAndSize((const char *)p + end, len - end);
            if (key == NULL) goto fail;
        }
        PyList_SET_ITEM(keys, k, key);
        memcpy(out + (size_t)k * sizeof index, &index, sizeof index);
    }
    unread = PyBytes_FromStringAndSize(left ? (const char *)left : "",
                                       unread_count * (Py_ssize_t)sizeof(int32_t));
    if (unread == NULL) goto fail;
    PyMem_RawFree(slots);
    PyMem_RawFree(left);
    return Py_BuildValue("(NNNN)", names, found, keys, unread);
fail:
    PyMem_RawFree(slots);
    PyMem_RawFree(left);
    Py_XDECREF(names);
    Py_XDECREF(keys);
    Py_XDECREF(found);
    return NULL;
}
