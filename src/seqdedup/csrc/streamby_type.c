/*
 * seqdedup._kernel.StreamMatcher, the type: its construction, attributes and method
 * table over the rule of streamby.c and the names of streamby_names.c.
 */
#include "streamby.h"

/* A run's content hash keys SipHash with the seed xor this (domain separation from the
 * record hashes, which use the seed itself). */
static const Hash128 CONTENT_SALT = {0x636f6e74656e7473ull, 0x72756e2d6b657973ull};

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

static PyObject *vec_bytes(const Vec *v)
{
    return PyBytes_FromStringAndSize(v->len ? (const char *)v->data : "",
                                     (Py_ssize_t)(v->len * sizeof(int64_t)));
}

/* The parts handed over since the last call (fold): (fields, positions, keys). */
static PyObject *StreamMatcher_folded_parts(StreamMatcher *s, PyObject *Py_UNUSED(ignored))
{
    if (s->busy) {
        PyErr_SetString(PyExc_RuntimeError, "StreamMatcher is in use by another thread");
        return NULL;
    }
    PyObject *fields = vec_bytes(&s->parts), *positions = NULL, *keys = NULL;
    if (fields != NULL) positions = vec_bytes(&s->part_positions);
    if (positions != NULL) keys = vec_bytes(&s->part_keys);
    if (keys == NULL) {
        Py_XDECREF(fields);
        Py_XDECREF(positions);
        return NULL;
    }
    s->parts.len = s->part_positions.len = s->part_keys.len = 0;
    return Py_BuildValue("(NNN)", fields, positions, keys);
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
    static char *names[] = {"window",      "idle",           "max_streams", "count_runs",
                            "history",     "seed",           "force_collisions",
                            "report_runs", "fold",           "fold_every",  NULL};
    Py_ssize_t width;
    PyObject *idle = Py_None, *max_streams = Py_None, *history = Py_None, *every = Py_None;
    Hash128 seed = {0, 0};
    int count_runs = 0;
    int force_collisions = 0, report_runs = 0, fold = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "n|OOpOO&pppO", names, &width, &idle,
                                     &max_streams, &count_runs, &history, seqdedup_to_seed, &seed,
                                     &force_collisions, &report_runs, &fold, &every))
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
        limit_of(history, "history", &s->history) < 0 ||
        limit_of(every, "fold_every", &s->fold_every) < 0)
        return -1;
    if (fold && !report_runs) {
        PyErr_SetString(PyExc_ValueError, "fold hands over the runs report_runs reports");
        return -1;
    }
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
    s->fold = fold;
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
    for (size_t k = 0; s->part_records != NULL && k < s->lane_cap; k++)
        vec_free(&s->part_records[k]);
    PyMem_RawFree(s->part_records);
    vec_free(&s->parts);
    vec_free(&s->part_positions);
    vec_free(&s->part_keys);
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
    {"folded_parts", (PyCFunction)StreamMatcher_folded_parts, METH_NOARGS,
     "folded_parts() -> (fields, positions, keys): with fold, the parts handed over since "
     "the last call (each run's records in parts of fold_every, or whole; a part once the "
     "run goes on past it or ends), 11 int64 each: as closed_runs' (the last position the "
     "part's, the length the run's so far, the content 0 before it ends), then the part's "
     "first position, its records, whether it ends the run; then the parts' records' "
     "positions (int64) and key hashes (16 bytes)"},
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
