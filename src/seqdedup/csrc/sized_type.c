/*
 * The SizeDecider type (seqdedup._kernel.SizeDecider): the Python face of the rule with
 * a minimum size in sized.c, the twin of seqdedup/sized.py's SizeDecider.
 */
#include "sized.h"

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
        int rc = sized_reserve(d, (size_t)n);
        const unsigned char *h = hashes.buf;
        for (Py_ssize_t k = 0; k < n && rc == 0; k++) {
            Hash128 key;
            int64_t size;
            memcpy(&key, h + k * (Py_ssize_t)sizeof(Hash128), sizeof key);
            memcpy(&size, (const unsigned char *)sizes.buf + k * (Py_ssize_t)sizeof(int64_t),
                   sizeof size);
            rc = sized_append(d, key, size);
        }
        if (rc == 0) rc = sized_steps(d, d->total - n);
        if (rc == 0) rc = sized_sweep(d);
        result = leave(d, rc);
    }
    PyBuffer_Release(&hashes);
    PyBuffer_Release(&sizes);
    return result;
}

static PyObject *SizeDecider_finish(SizeDecider *d, PyObject *Py_UNUSED(ignored))
{
    if (enter(d) < 0) return NULL;
    int rc = sized_reserve(d, 0);
    if (rc == 0) rc = sized_release(d, d->total - 1);
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
        int ok = n == 0 || sized_library_sequence(d, first, d->region + (first + (int64_t)d->region_len),
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
    d->tables[0].stride = d->tables[1].stride = d->seen.stride = 3;
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
    table_free(&d->seen);
    type->tp_free((PyObject *)d);
    Py_DECREF(type);
}

static PyObject *get_decided(SizeDecider *d, void *c) { return PyLong_FromLongLong(d->released); }

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
