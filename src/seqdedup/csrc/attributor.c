/*
 * seqdedup._kernel.Attributor: attribution (attribution.c) as a Python type. Calls
 * take key hashes (16 bytes each), runs and record numbers as packed buffers (or lists)
 * and hand back the pieces they closed as one bytes object, six int64 each; a call that
 * fails half-way marks the object broken.
 */
#include "attribution.h"

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
    if (!a->report && !a->top) Py_RETURN_NONE;
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

/* Append key hashes: a buffer of 16-byte values (two int64 lanes each), or a sequence of
 * ints from 0 to 2**128 - 1 (lo | hi << 64). */
static int keys_from(Vec *v, PyObject *hashes)
{
    if (PyObject_CheckBuffer(hashes)) {
        Py_buffer view;
        if (seqdedup_get_hashes(hashes, &view) < 0) return -1;
        size_t words = (size_t)view.len / 8;
        int rc = vec_reserve(v, words);
        if (rc == 0 && words) {
            memcpy(v->data + v->len, view.buf, (size_t)view.len);
            v->len += words;
        }
        PyBuffer_Release(&view);
        return rc;
    }
    PyObject *seq = PySequence_Fast(hashes, "expected a buffer of key hashes or ints");
    if (seq == NULL) return -1;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    int rc = vec_reserve(v, 2 * (size_t)n);
    PyObject *shift = PyLong_FromLong(64);
    if (shift == NULL) rc = -1;
    for (Py_ssize_t k = 0; rc == 0 && k < n; k++) {
        PyObject *item = PySequence_Fast_GET_ITEM(seq, k);
        if (!PyLong_Check(item)) {
            PyErr_SetString(PyExc_TypeError, "expected ints");
            rc = -1;
            break;
        }
        PyObject *high = PyNumber_Rshift(item, shift);
        if (high == NULL) {
            rc = -1;
            break;
        }
        uint64_t lo = (uint64_t)PyLong_AsUnsignedLongLongMask(item);
        uint64_t hi = (uint64_t)PyLong_AsUnsignedLongLongMask(high);
        Py_DECREF(high);
        if (PyErr_Occurred()) {
            rc = -1;
            break;
        }
        v->data[v->len++] = (int64_t)lo;
        v->data[v->len++] = (int64_t)hi;
    }
    Py_XDECREF(shift);
    Py_DECREF(seq);
    return rc;
}

static PyObject *Attributor_append_keys(Attributor *a, PyObject *hashes)
{
    if (enter(a) < 0) return NULL;
    size_t before = a->keys.len;
    int rc = keys_from(&a->keys, hashes);
    if (rc < 0) a->keys.len = before; /* nothing half-added */
    a->busy = 0;
    if (rc < 0) return NULL;
    Py_RETURN_NONE;
}

static PyObject *Attributor_set_library_keys(Attributor *a, PyObject *region)
{
    if (enter(a) < 0) return NULL;
    Vec fresh = {0};
    int rc = keys_from(&fresh, region);
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

/* The call itself. Given the matcher's sources (a copy: `sources` a buffer of int64
 * from `base`), it needs nothing but its arguments and lets the GIL go, so another
 * thread (the matcher deciding the next chunk) runs meanwhile; without them it reads
 * the matcher's, as they are now. */
static int add_runs_core(Attributor *a, int64_t size, const Vec *runs, PyObject *sources,
                         Py_ssize_t base)
{
    if (sources == Py_None) {
        const int64_t *held;
        size_t len;
        int64_t at;
        if (seqdedup_matcher_sources(a->matcher, &held, &len, &at) < 0) return -1;
        return seqdedup_add_runs(a, size, runs->data, runs->len / 2, held, len, at);
    }
    Py_buffer view;
    if (PyObject_GetBuffer(sources, &view, PyBUF_SIMPLE) < 0) return -1;
    int rc = -1;
    if (view.len % 8) {
        PyErr_SetString(PyExc_ValueError, "sources: a buffer of int64 values");
    } else {
        WITHOUT_GIL(1, rc = seqdedup_add_runs(a, size, runs->data, runs->len / 2, view.buf,
                                              (size_t)view.len / 8, (int64_t)base));
        a->sources = NULL; /* (the copy is not held past the call) */
        a->sources_len = 0;
    }
    PyBuffer_Release(&view);
    return rc;
}

static PyObject *Attributor_add_runs(Attributor *a, PyObject *args)
{
    Py_ssize_t size, base = 0;
    PyObject *runs_obj, *numbers = Py_None, *sources = Py_None;
    if (!PyArg_ParseTuple(args, "nO|OOn", &size, &runs_obj, &numbers, &sources, &base))
        return NULL;
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
    rc = add_runs_core(a, (int64_t)size, &runs, sources, base);
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
    int rc = a->piece_start >= 0 ? seqdedup_close_piece(a) : 0;
    return leave(a, rc);
}

/* The input stream ended (after its last records were added) and another begins: close
 * the open piece; no piece or source spans the boundary. */
static PyObject *Attributor_new_input(Attributor *a, PyObject *Py_UNUSED(ignored))
{
    if (enter(a) < 0) return NULL;
    int rc = a->piece_start >= 0 ? seqdedup_close_piece(a) : 0;
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
                             "seed", "report", "top", "run_firsts", NULL};
    PyObject *matcher, *candidates = Py_None, *history = Py_None, *sequences = Py_None;
    Hash128 seed = {0, 0};
    int report = 1, top = 0, run_firsts = 0;
    if (a->ready || a->broken) {
        PyErr_SetString(PyExc_RuntimeError, "Attributor is already initialised");
        return -1;
    }
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O|OOOO&ppp", kwlist, &matcher, &candidates,
                                     &history, &sequences, seqdedup_to_seed, &seed, &report,
                                     &top, &run_firsts))
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
    uint64_t *coeffs = seqdedup_coefficients(width, seed);
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
    a->top = top;
    a->run_firsts = run_firsts;
    a->sequences.limit = a->tops.limit = table_limit;
    a->ready = 1;
    return 0;
}

static PyObject *Attributor_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    Attributor *a = (Attributor *)type->tp_alloc(type, 0);
    if (a == NULL) return NULL;
    a->piece_start = -1;
    a->run_start = -1;
    a->occurring[0].stride = a->occurring[1].stride = 4; /* fingerprint, first node, count */
    a->sequences.counts.stride = 4;                      /* identity, count, node */
    a->sequences.known.stride = 3;                       /* identity, unused */
    a->sequences.head = a->sequences.tail = -1;
    a->sequences.identifying = 1;
    a->tops.counts.stride = 4;
    a->tops.known.stride = 3;
    a->tops.head = a->tops.tail = -1;
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
    PyMem_RawFree(a->coeffs);
    Vec *vecs[] = {&a->keys,    &a->library, &a->numbers, &a->cands,   &a->ends,
                   &a->out,     &a->found,   &a->rooms,   &a->lengths, &a->heap,
                   &a->occ_nodes[0], &a->occ_nodes[1]};
    for (size_t k = 0; k < sizeof vecs / sizeof vecs[0]; k++) vec_free(vecs[k]);
    table_free(&a->occurring[0]);
    table_free(&a->occurring[1]);
    seqdedup_sequences_free(&a->sequences);
    seqdedup_sequences_free(&a->tops);
    type->tp_free((PyObject *)a);
    Py_DECREF(type);
}

/* --top: every sequence its table holds, with how many pieces it counted since its
 * entry was made: int64 triples (identity low, identity high, pieces). */
static PyObject *Attributor_top_counts(Attributor *a, PyObject *unused)
{
    if (enter(a) < 0) return NULL;
    a->busy = 0; /* (nothing below can fail half-way) */
    const Table *t = &a->tops.counts;
    size_t n = table_len(t);
    PyObject *result = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(n * 3 * sizeof(int64_t)));
    if (result == NULL) return NULL;
    int64_t *p = (int64_t *)PyBytes_AS_STRING(result);
    size_t k = 0;
    if (t->has_zero) {
        p[k++] = 0;
        p[k++] = 0;
        p[k++] = t->zero_values[0] - 1;
    }
    for (size_t s = 0; s < t->cap; s++) {
        const int64_t *slot = t->slots + s * (size_t)t->stride;
        if (hash_is_zero(slot_key(slot))) continue;
        p[k++] = slot[0];
        p[k++] = slot[1];
        p[k++] = slot[2] - 1; /* the count starts at 2 with the entry's first piece */
    }
    return result;
}

static PyObject *get_decided(Attributor *a, void *c) { return PyLong_FromLongLong(a->decided); }

static PyObject *get_open_piece(Attributor *a, void *c)
{
    return PyBool_FromLong(a->piece_start >= 0);
}

static PyObject *get_open_source(Attributor *a, void *c)
{
    /* The open piece's earliest candidate: where it would be reported if it closed now. */
    if (a->piece_start < 0 || a->cands.len == 0) Py_RETURN_NONE;
    return PyLong_FromLongLong(a->cands.data[0]);
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
    return PyLong_FromLongLong(held_keys(&a->keys));
}

static PyGetSetDef Attributor_getset[] = {
    {"decided", (getter)get_decided, NULL, "how many tracked records have been taken", NULL},
    {"open_piece", (getter)get_open_piece, NULL, "whether a piece is open", NULL},
    {"open_source", (getter)get_open_source, NULL,
     "the open piece's earliest candidate source (None: no open piece)", NULL},
    {"identified", (getter)get_identified, NULL,
     "distinct sequences identified in this run (evicted ones too)", NULL},
    {"sequences", (getter)get_sequences, NULL, "sequences in the table now", NULL},
    {"held_keys", (getter)get_held, NULL, "key hashes held (for tests)", NULL},
    {"work", (getter)get_work, NULL, "keys compared or hashed so far (for tests)", NULL},
    {NULL}};

static PyMethodDef Attributor_methods[] = {
    {"append_keys", (PyCFunction)Attributor_append_keys, METH_O,
     "append_keys(hashes): key hashes of the next tracked records (16-byte values or ints)"},
    {"set_library_keys", (PyCFunction)Attributor_set_library_keys, METH_O,
     "set_library_keys(region): the loaded sequences' key hashes, ending at index -1"},
    {"add_runs", (PyCFunction)Attributor_add_runs, METH_VARARGS,
     "add_runs(size, runs, numbers=None, sources=None, sources_base=0) -> bytes | None: "
     "the next size tracked records as their skipped runs (int64 pairs, or (start, stop, "
     "...) tuples); sources: a copy of the matcher's recent sources (Matcher.sources()), "
     "which lets the call run without the GIL; the pieces closed, 6 int64 each (start, "
     "end, source, count, the identity's two lanes)"},
    {"add", (PyCFunction)Attributor_add, METH_VARARGS,
     "add(keep, numbers=None) -> bytes | None: the same from one flag per record"},
    {"finish", (PyCFunction)Attributor_finish, METH_NOARGS,
     "finish() -> bytes | None: end of input, the open piece closed"},
    {"new_input", (PyCFunction)Attributor_new_input, METH_NOARGS,
     "new_input() -> bytes | None: the stream ended, another begins"},
    {"top_counts", (PyCFunction)Attributor_top_counts, METH_NOARGS,
     "top_counts() -> bytes: (identity low, identity high, pieces) int64 triples, one per "
     "sequence --top's table holds (top=True)"},
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
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_IMMUTABLETYPE,
    .slots = Attributor_slots,
};

