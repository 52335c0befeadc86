/*
 * The Matcher type: construction (everything checked before anything is stored),
 * memory, attributes and the method table; and what attribution reads of a matcher.
 */
#include "kernel.h"
#include "first_table.h"

/* ---- type plumbing ----------------------------------------------------------- */

static int Matcher_init(Matcher *m, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"window_size", "max_history", "seed",      "delimiter",
                             "skip_chars",  "byte_mode",   "inverse",   "run_heads",
                             "normalize",   "filtered",    "early",     "skip_fields",
                             "force_collisions", "compact_min", NULL};
    Py_ssize_t width;
    PyObject *history = Py_None;
    Hash128 seed = {0, 0};
    int force_collisions = 0;
    Py_ssize_t compact_min = 1 << 16;
    uint64_t skip = 0, fields = 0;
    Py_buffer delim = {0};
    int byte_mode = 0, inverse = 0, run_heads = 0, filtered = 0, early = 0;
    unsigned normalize = 0;
    if (m->ready || m->broken) {
        PyErr_SetString(PyExc_RuntimeError, "Matcher is already initialised");
        return -1;
    }
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "n|OO&z*O&ppiO&ppO&pn", kwlist, &width,
                                     &history, seqdedup_to_seed, &seed, &delim, seqdedup_to_u64,
                                     &skip, &byte_mode, &inverse, &run_heads, seqdedup_to_u32,
                                     &normalize, &filtered, &early, seqdedup_to_u64, &fields,
                                     &force_collisions, &compact_min))
        return -1;
    if (run_heads < 0 || run_heads > RUN_RECORDS) {
        PyErr_SetString(PyExc_ValueError, "run_heads must be 0, 1 (first records) or 2 (records)");
        return -1;
    }
    /* Everything is checked before anything is stored: a failed __init__ leaves the
     * object as tp_new made it (unusable until an __init__ succeeds). */
    int rc = -1;
    int64_t horizon = INT64_MAX;
    unsigned char *delim_copy = NULL;
    if (width < 1) {
        PyErr_SetString(PyExc_ValueError, "window_size must be at least 1");
        goto done;
    }
    if (compact_min < 1) {
        PyErr_SetString(PyExc_ValueError, "compact_min must be at least 1");
        goto done;
    }
    if (history != Py_None) {
        long long value = PyLong_AsLongLong(history);
        if (value == -1 && PyErr_Occurred()) goto done;
        if (value < width) {
            PyErr_SetString(PyExc_ValueError, "max_history must be at least window_size");
            goto done;
        }
        horizon = value;
    }
    if (delim.buf != NULL) {
        if (delim.len == 0) {
            PyErr_SetString(PyExc_ValueError, "the delimiter must not be empty");
            goto done;
        }
        delim_copy = PyMem_RawMalloc((size_t)delim.len);
        if (delim_copy == NULL) {
            PyErr_NoMemory();
            goto done;
        }
        memcpy(delim_copy, delim.buf, (size_t)delim.len);
        m->delim_len = (size_t)delim.len;
    }
    m->width = width;
    m->horizon = horizon;
    m->limited = history != Py_None;
    m->seed = seed;
    m->force_collisions = (uint64_t)force_collisions;
    m->compact_min = compact_min;
    m->skip = skip;
    m->fields = fields;
    m->byte_mode = byte_mode;
    m->inverse = inverse;
    m->run_heads = run_heads;
    m->filtered = filtered;
    m->early = early;
    m->normalize = seqdedup_normalize_classes(normalize);
    m->delim = delim_copy;
    m->ready = 1;
    rc = 0;
done:
    if (delim.buf != NULL) PyBuffer_Release(&delim);
    return rc;
}

static PyObject *Matcher_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    Matcher *m = (Matcher *)type->tp_alloc(type, 0);
    if (m == NULL) return NULL;
    /* The state every method may meet, even before (or without) a successful __init__. */
    m->new_material = Py_None;
    Py_INCREF(Py_None);
    m->cover = -1;
    m->new_until = -1;
    m->last_novel = -1;
    m->witness_window = m->witness_source = NO_SOURCE;
    m->library.stride = 3;                          /* key (2), start */
    m->chains[0].stride = m->chains[1].stride = 4; /* key (2), first, latest */
    return (PyObject *)m;
}

static int Matcher_traverse(Matcher *m, visitproc visit, void *arg)
{
    Py_VISIT(Py_TYPE(m)); /* a heap type */
    Py_VISIT(m->new_material);
    Py_VISIT(m->stretches);
    Py_VISIT(m->sized);
    return 0;
}

static int Matcher_clear(Matcher *m)
{
    Py_CLEAR(m->new_material);
    Py_CLEAR(m->stretches);
    Py_CLEAR(m->sized);
    return 0;
}

static void Matcher_dealloc(Matcher *m)
{
    PyTypeObject *type = Py_TYPE(m);
    PyObject_GC_UnTrack(m);
    Matcher_clear(m);
    PyMem_RawFree(m->sources);
    PyMem_RawFree(m->coeffs);
    PyMem_RawFree(m->tail);
    PyMem_RawFree(m->log);
    PyMem_RawFree(m->archive);
    PyMem_RawFree(m->spans);
    if (m->region_view.obj != NULL)
        PyBuffer_Release(&m->region_view);
    else
        PyMem_RawFree(m->region);
    PyMem_RawFree(m->stream_starts);
    PyMem_RawFree(m->recent);
    ft_free(&m->first);
    table_free(&m->chains[0]);
    table_free(&m->chains[1]);
    table_free(&m->library);
    PyMem_RawFree(m->delim);
    PyMem_RawFree(m->buf);
    PyMem_RawFree(m->rec_start);
    PyMem_RawFree(m->rec_end);
    PyMem_RawFree(m->rec_tracked);
    PyMem_RawFree(m->tracked_at);
    PyMem_RawFree(m->released_flags);
    seqdedup_keys_free(m);
    PyMem_RawFree(m->scratch_hashes);
    PyMem_RawFree(m->scratch_fps);
    PyMem_RawFree(m->keep);
    PyMem_RawFree(m->scratch_sizes);
    type->tp_free((PyObject *)m);
    Py_DECREF(type);
}

static PyObject *get_new_material(Matcher *m, void *c)
{
    PyObject *value = m->new_material != NULL ? m->new_material : Py_None;
    Py_INCREF(value);
    return value;
}

/* Refused while a call runs: the call may append to the list without the GIL's
 * protection against a second thread (it appends only with the GIL, but decides once,
 * on entry, whether it appends at all). */
static int refuse_while_busy(const Matcher *m)
{
    if (!m->busy) return 0;
    PyErr_SetString(PyExc_RuntimeError, "Matcher is in use by another thread");
    return -1;
}

static int set_new_material(Matcher *m, PyObject *value, void *c)
{
    if (refuse_while_busy(m) < 0) return -1;
    if (value == NULL || (value != Py_None && !PyList_Check(value))) {
        PyErr_SetString(PyExc_TypeError, "new_material must be a list or None");
        return -1;
    }
    Py_INCREF(value);
    Py_XSETREF(m->new_material, value);
    return 0;
}

/* The new-material stretches of the last chunk-path call, handed over once. */
static PyObject *get_new_stretches(Matcher *m, void *c)
{
    if (refuse_while_busy(m) < 0) return NULL;
    PyObject *value = m->stretches != NULL ? m->stretches : PyList_New(0);
    m->stretches = NULL;
    return value;
}

static PyObject *get_decided(Matcher *m, void *c) { return PyLong_FromLongLong(m->next); }

static PyObject *get_settled(Matcher *m, void *c)
{
    if (seqdedup_matcher_usable(m) < 0) return NULL;
    return PyLong_FromLongLong(seqdedup_settled(m));
}

static PyObject *get_window_size(Matcher *m, void *c) { return PyLong_FromSsize_t(m->width); }

static PyObject *get_max_history(Matcher *m, void *c)
{
    if (!m->limited) Py_RETURN_NONE;
    return PyLong_FromLongLong(m->horizon);
}

static PyObject *get_remembered(Matcher *m, void *c)
{
    size_t n = m->first.size + (size_t)m->first.has_zero + table_len(&m->chains[0]) +
               table_len(&m->chains[1]);
    return PyLong_FromSize_t(n);
}

static PyObject *get_table_bytes(Matcher *m, void *c)
{
    size_t n = m->first.cap * FT_SLOT;
    const Table *tables[] = {&m->chains[0], &m->chains[1], &m->library};
    for (size_t i = 0; i < 3; i++) n += tables[i]->cap * (size_t)tables[i]->stride * 8;
    return PyLong_FromSize_t(n);
}

/* (tests) the key hashes kept for confirmation: the log's, the archive's, its spans */
static PyObject *get_key_log(Matcher *m, void *c)
{
    return Py_BuildValue("(nnn)", (Py_ssize_t)m->log_len, (Py_ssize_t)m->archive_len,
                         (Py_ssize_t)m->spans_archived);
}

static PyObject *get_cover(Matcher *m, void *c) { return PyLong_FromLongLong(m->cover); }

static PyGetSetDef Matcher_getset[] = {
    {"new_material", (getter)get_new_material, (setter)set_new_material,
     "list: per decided record, whether a first-seen window covers it, or None", NULL},
    {"decided", (getter)get_decided, NULL, "how many tracked records have been decided", NULL},
    {"new_stretches", (getter)get_new_stretches, NULL,
     "with new_material a list, on the chunk path: the last call's stretches of new material, "
     "(start, stop, lengths as little-endian uint32, the records joined), once",
     NULL},
    {"window_size", (getter)get_window_size, NULL, "W", NULL},
    {"max_history", (getter)get_max_history, NULL, "the history, None if unlimited", NULL},
    {"remembered_windows", (getter)get_remembered, NULL, "fingerprints held in history", NULL},
    {"_table_bytes", (getter)get_table_bytes, NULL, "bytes held by the window tables (tests)", NULL},
    {"_key_log", (getter)get_key_log, NULL,
     "(key hashes in the log, in the archive, archived spans) (tests)", NULL},
    {"settled", (getter)get_settled, NULL,
     "the first tracked record whose decision is not certain yet: those before it (from "
     "decided on) are kept unless cover reaches them", NULL},
    {"cover", (getter)get_cover, NULL, "the last record a decided repeat covers (-1: none)",
     NULL},
    {NULL}};

/* sources() -> (base, bytes): a copy of the sources of the recent windows (int64 each,
 * for windows base, base + 1, ...), as an Attributor reads them: with it, attribution
 * of what the matcher just decided can run on another thread while the matcher goes on. */
static PyObject *Matcher_sources(Matcher *m, PyObject *Py_UNUSED(ignored))
{
    const int64_t *sources;
    size_t len;
    int64_t base;
    if (seqdedup_matcher_sources((PyObject *)m, &sources, &len, &base) < 0) return NULL;
    PyObject *copy =
        PyBytes_FromStringAndSize((const char *)sources, (Py_ssize_t)(len * sizeof(int64_t)));
    if (copy == NULL) return NULL;
    return Py_BuildValue("(LN)", (long long)base, copy);
}

static PyMethodDef Matcher_methods[] = {
    {"push", (PyCFunction)seqdedup_matcher_push, METH_O,
     "push(hashes) -> list[bool]: add key hashes (a buffer of int64); newly decided flags"},
    {"source", (PyCFunction)seqdedup_matcher_source, METH_O,
     "source(window) -> int | None: start of the earlier window a recent repeat window "
     "repeats (negative: a library window); None if it is not a repeat"},
    {"finish", (PyCFunction)seqdedup_matcher_finish, METH_NOARGS,
     "finish() -> list[bool]: decide the records left at end of input"},
    {"fingerprints", (PyCFunction)seqdedup_matcher_fingerprints, METH_VARARGS,
     "fingerprints(hashes, count) -> bytes: int64 fingerprints of the first count windows"},
    {"add_library_windows", (PyCFunction)seqdedup_matcher_add_library_windows, METH_VARARGS,
     "add_library_windows(fingerprints, starts, region): windows seen for the whole run; "
     "region: the library's key hashes (the last at position -1), against which they are "
     "confirmed (needed when W > 1)"},
    {"add_library_region", (PyCFunction)seqdedup_matcher_add_library_region, METH_VARARGS,
     "add_library_region(region, firsts, lengths): add_library_windows for every window "
     "inside each library sequence (int64 firsts: its first record's index in the region; "
     "lengths: its records), fingerprinted here"},
    {"attach_sized", (PyCFunction)seqdedup_matcher_attach_sized, METH_O,
     "attach_sized(decider): a fresh SizeDecider decides this chunk matcher's records "
     "instead of the window rule (a minimum size, -w auto), the keys' sizes in bytes made "
     "with their hashes; before the first chunk, without filters, early settling, "
     "inverse, run heads or new material (sources are then not named)"},
    {"feed_chunk", (PyCFunction)seqdedup_matcher_feed_chunk, METH_O,
     "feed_chunk(chunk) -> (output, hashes, skipped_runs, decided, kept, run_offsets); "
     "hashes: 16 bytes per record; skipped_runs: int64 pairs (start, stop), or with "
     "run_heads=1 a list of (start, stop, first record), with run_heads=2 of (start, stop, "
     "the run's records: from its first record's start to its last one's end); "
     "run_offsets: int64 per run, the bytes of output before it"},
    {"finish_chunks", (PyCFunction)(void (*)(void))seqdedup_matcher_finish_chunks,
     METH_VARARGS | METH_KEYWORDS,
     "finish_chunks(delimit_final=False, drop_final=False) -> the same, for the rest at end "
     "of input (drop_final: the bytes after the last delimiter are dropped)"},
    {"split_chunk", (PyCFunction)seqdedup_matcher_split_chunk, METH_O,
     "split_chunk(chunk) -> (region, bounds, first): with filtered=True, the records the "
     "chunk completes, as one bytes object, int64 (start, end) pairs into it, and the "
     "0-based input index of the first; decide_split() takes their filter mask"},
    {"split_final", (PyCFunction)(void (*)(void))seqdedup_matcher_split_final,
     METH_VARARGS | METH_KEYWORDS,
     "split_final(delimit_final=False, drop_final=False) -> the same for a final record "
     "without a delimiter (its key), at the end of the input"},
    {"decide_split", (PyCFunction)seqdedup_matcher_decide_split, METH_O,
     "decide_split(mask) -> (output, hashes, skipped_runs, decided, kept, numbers, "
     "released): one byte per record split (1: tracked); decided counts tracked records, "
     "released all of them, numbers are the 1-based input numbers of the decided tracked "
     "records (int64)"},
    {"new_input", (PyCFunction)seqdedup_matcher_new_input, METH_NOARGS,
     "new_input(): after finish() or finish_chunks(), a new stream follows"},
    {"sources", (PyCFunction)Matcher_sources, METH_NOARGS,
     "sources() -> (base, bytes): a copy of the recent windows' sources, for an Attributor "
     "on another thread"},
    {NULL}};

static PyType_Slot Matcher_slots[] = {
    {Py_tp_doc, "The exact window engine: key hashes or raw chunks in, decisions out."},
    {Py_tp_new, Matcher_new},
    {Py_tp_init, (initproc)Matcher_init},
    {Py_tp_dealloc, (destructor)Matcher_dealloc},
    {Py_tp_traverse, (traverseproc)Matcher_traverse},
    {Py_tp_clear, (inquiry)Matcher_clear},
    {Py_tp_methods, Matcher_methods},
    {Py_tp_getset, Matcher_getset},
    {0, NULL}};

PyType_Spec seqdedup_matcher_spec = {
    .name = "seqdedup._kernel.Matcher",
    .basicsize = sizeof(Matcher),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_IMMUTABLETYPE,
    .slots = Matcher_slots,
};

/* ---- offered to the attribution unit and the chunk path ------------------------ */


/* The module state of obj's type, where it is one of this module's types (else NULL). */
static KernelState *state_of(PyObject *obj)
{
    PyObject *module = PyType_GetModuleByDef(Py_TYPE(obj), &seqdedup_kernel_module);
    if (module == NULL) { /* TypeError set */
        PyErr_Clear();
        return NULL;
    }
    return PyModule_GetState(module);
}

int seqdedup_is_size_decider(PyObject *obj)
{
    KernelState *state = state_of(obj);
    if (state != NULL && PyObject_TypeCheck(obj, state->size_decider_type)) return 1;
    PyErr_SetString(PyExc_TypeError, "expected a seqdedup._kernel.SizeDecider");
    return 0;
}

int seqdedup_is_matcher(PyObject *obj)
{
    KernelState *state = state_of(obj);
    if (state != NULL && PyObject_TypeCheck(obj, state->matcher_type)) return 1;
    PyErr_SetString(PyExc_TypeError, "expected a seqdedup._kernel.Matcher");
    return 0;
}

int seqdedup_matcher_sources(PyObject *matcher, const int64_t **sources, size_t *len,
                             int64_t *base)
{
    Matcher *m = (Matcher *)matcher;
    if (seqdedup_matcher_usable(m) < 0) return -1;
    if (m->busy) {
        PyErr_SetString(PyExc_RuntimeError, "Matcher is in use by another thread");
        return -1;
    }
    *sources = m->sources;
    *len = m->sources_len;
    *base = m->sources_base;
    return 0;
}
