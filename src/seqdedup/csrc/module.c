/*
 * The module seqdedup._kernel: json_keys (the --json-key/--json-ignore fast path of
 * jsonkey.h), errors kept while the GIL is let go, the method table and multi-phase
 * initialisation (heap types, module state).
 */
#include "kernel.h"
#include "jsonkey.h"

#include <stdarg.h>
#include <stdio.h>

/* ---- errors kept while the GIL is let go (kernel.h) ---------------------------------- */

THREAD_LOCAL int seqdedup_unlocked;

static THREAD_LOCAL struct {
    PyObject *type; /* NULL: none kept (an exception type is immortal enough: a builtin) */
    char message[256];
} kept;

int seqdedup_fail(PyObject *type, const char *format, ...)
{
    char message[256];
    va_list args;
    va_start(args, format);
    vsnprintf(message, sizeof message, format, args);
    va_end(args);
    if (!seqdedup_unlocked) {
        PyErr_SetString(type, message);
    } else if (kept.type == NULL) { /* the first failure is the one to report */
        kept.type = type;
        memcpy(kept.message, message, sizeof message);
    }
    return -1;
}

int seqdedup_no_memory(void)
{
    if (!seqdedup_unlocked) {
        PyErr_NoMemory();
        return -1;
    }
    return seqdedup_fail(PyExc_MemoryError, "out of memory");
}

void seqdedup_raise_kept(void)
{
    if (kept.type == NULL) return;
    PyErr_SetString(kept.type, kept.message);
    kept.type = NULL;
}

/* What json_keys makes: --json-key keys from `paths`, or (ignore) --json-ignore keys
 * without the members named in `names`. */
typedef struct {
    int ignore;
    JkPath paths[JK_MAX_PATHS];
    const unsigned char *names[JK_MAX_PATHS];
    size_t name_lens[JK_MAX_PATHS];
    size_t count;
    size_t extra; /* key bytes beyond the record's length, at most */
} JkRequest;

/* The key of each record: bytes, the record itself (compared as text) or None. */
static PyObject *json_keys_of(PyObject *rec, const JkRequest *req)
{
    Py_ssize_t n = PySequence_Fast_GET_SIZE(rec);
    PyObject *out = PyList_New(n);
    unsigned char *buf = NULL;
    size_t cap = 0;
    if (out == NULL) return NULL;
    for (Py_ssize_t r = 0; r < n; r++) {
        PyObject *record = PySequence_Fast_GET_ITEM(rec, r);
        if (!PyBytes_Check(record)) {
            PyErr_SetString(PyExc_TypeError, "records must be bytes");
            goto fail;
        }
        size_t len = (size_t)PyBytes_GET_SIZE(record);
        if (len > SIZE_MAX - req->extra - 1) {
            PyErr_NoMemory();
            goto fail;
        }
        if (grow((void **)&buf, &cap, len + req->extra + 1, 1) < 0) goto fail;
        const unsigned char *text = (const unsigned char *)PyBytes_AS_STRING(record);
        size_t key_len = 0;
        int kind = req->ignore ? json_ignore_key(text, len, req->names, req->name_lens,
                                                 req->count, buf, cap, &key_len)
                               : json_key(text, len, req->paths, req->names, req->name_lens,
                                          req->count, buf, cap, &key_len);
        PyObject *key;
        if (kind == JK_TEXT) {
            key = record;
            Py_INCREF(key);
        } else if (kind == JK_KEY) {
            key = PyBytes_FromStringAndSize((const char *)buf, (Py_ssize_t)key_len);
            if (key == NULL) goto fail;
        } else {
            key = Py_None;
            Py_INCREF(key);
        }
        PyList_SET_ITEM(out, r, key);
    }
    PyMem_RawFree(buf);
    return out;
fail:
    PyMem_RawFree(buf);
    Py_DECREF(out);
    return NULL;
}

/* json_keys(records, paths, ignore=False) -> list: per record its key (bytes), the
 * record itself when it is compared as text, or None when Python must decide
 * (jsonkey.h). --json-key: paths are (text, components) pairs sorted by text; with
 * ignore, the names of the one-component --json-ignore paths. At most 64. */
PyObject *seqdedup_py_json_keys(PyObject *self, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"records", "paths", "ignore", NULL};
    PyObject *records, *path_list;
    int ignore = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OO|p", kwlist, &records, &path_list, &ignore))
        return NULL;
    PyObject *rec = PySequence_Fast(records, "records must be a sequence of bytes");
    if (rec == NULL) return NULL;
    PyObject *pths = PySequence_Fast(path_list, "paths must be a sequence");
    PyObject *out = NULL;
    const unsigned char **parts = NULL;
    size_t *part_lens = NULL;
    JkRequest *req = PyMem_RawCalloc(1, sizeof *req); /* too large for the stack's comfort */
    if (req == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    if (pths == NULL) goto done;
    Py_ssize_t npaths = PySequence_Fast_GET_SIZE(pths);
    if (npaths > JK_MAX_PATHS || (!ignore && npaths < 1)) {
        PyErr_SetString(PyExc_ValueError, "json_keys takes at most 64 paths (and one key path)");
        goto done;
    }
    req->ignore = ignore;
    req->count = (size_t)npaths;
    req->extra = 2;
    if (ignore) {
        for (Py_ssize_t p = 0; p < npaths; p++) {
            PyObject *name = PySequence_Fast_GET_ITEM(pths, p);
            if (!PyBytes_Check(name)) {
                PyErr_SetString(PyExc_TypeError, "ignored names must be bytes");
                goto done;
            }
            req->names[p] = (const unsigned char *)PyBytes_AS_STRING(name);
            req->name_lens[p] = (size_t)PyBytes_GET_SIZE(name);
        }
        out = json_keys_of(rec, req);
        goto done;
    }
    size_t total_parts = 0;
    for (Py_ssize_t p = 0; p < npaths; p++) {
        PyObject *item = PySequence_Fast_GET_ITEM(pths, p);
        if (!PyTuple_Check(item) || PyTuple_GET_SIZE(item) != 2 ||
            !PyBytes_Check(PyTuple_GET_ITEM(item, 0)) || !PyTuple_Check(PyTuple_GET_ITEM(item, 1)) ||
            PyTuple_GET_SIZE(PyTuple_GET_ITEM(item, 1)) < 1 ||
            PyTuple_GET_SIZE(PyTuple_GET_ITEM(item, 1)) > JK_MAX_DEPTH) {
            PyErr_SetString(PyExc_TypeError, "a path is (bytes, tuple of 1 to 64 bytes)");
            goto done;
        }
        total_parts += (size_t)PyTuple_GET_SIZE(PyTuple_GET_ITEM(item, 1));
        req->extra += (size_t)PyBytes_GET_SIZE(PyTuple_GET_ITEM(item, 0)) + 4;
    }
    parts = PyMem_RawMalloc(total_parts * sizeof *parts + 1);
    part_lens = PyMem_RawMalloc(total_parts * sizeof *part_lens + 1);
    if (parts == NULL || part_lens == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    size_t at = 0;
    for (Py_ssize_t p = 0; p < npaths; p++) {
        PyObject *item = PySequence_Fast_GET_ITEM(pths, p);
        PyObject *components = PyTuple_GET_ITEM(item, 1);
        req->paths[p].parts = parts + at;
        req->paths[p].part_lens = part_lens + at;
        req->paths[p].depth = (size_t)PyTuple_GET_SIZE(components);
        for (Py_ssize_t c = 0; c < PyTuple_GET_SIZE(components); c++) {
            PyObject *part = PyTuple_GET_ITEM(components, c);
            if (!PyBytes_Check(part)) {
                PyErr_SetString(PyExc_TypeError, "path components must be bytes");
                goto done;
            }
            parts[at] = (const unsigned char *)PyBytes_AS_STRING(part);
            part_lens[at++] = (size_t)PyBytes_GET_SIZE(part);
        }
        req->names[p] = (const unsigned char *)PyBytes_AS_STRING(PyTuple_GET_ITEM(item, 0));
        req->name_lens[p] = (size_t)PyBytes_GET_SIZE(PyTuple_GET_ITEM(item, 0));
    }
    out = json_keys_of(rec, req);
done:
    PyMem_RawFree(req);
    PyMem_RawFree(parts);
    PyMem_RawFree(part_lens);
    Py_XDECREF(pths);
    Py_DECREF(rec);
    return out;
}

/* The first occurrence of `needle` in [p, p + len), or NULL. */
static const unsigned char *find_bytes(const unsigned char *p, size_t len,
                                       const unsigned char *needle, size_t size)
{
#if defined(__GLIBC__) || defined(__APPLE__) || defined(__FreeBSD__)
    return memmem(p, len, needle, size);
#else
    const unsigned char *end = p + len;
    while ((size_t)(end - p) >= size) {
        const unsigned char *hit = memchr(p, needle[0], (size_t)(end - p) - size + 1);
        if (hit == NULL) return NULL;
        if (memcmp(hit, needle, size) == 0) return hit;
        p = hit + 1;
    }
    return NULL;
#endif
}

/* literal_mask(region, bounds, literal, anchored, open) -> bytes: for each record (int64
 * (start, end) pairs into region, in order), 1 when it contains the literal (starts with
 * it, anchored); records whose `open` byte is 0 are not looked at. The region is
 * searched in one pass from hit to hit; after a hit the search goes on after that
 * record. */
static PyObject *py_literal_mask(PyObject *self, PyObject *args)
{
    Py_buffer region, bounds, literal, open;
    int anchored;
    if (!PyArg_ParseTuple(args, "y*y*y*py*", &region, &bounds, &literal, &anchored, &open))
        return NULL;
    PyObject *out = NULL;
    const unsigned char *data = region.buf, *lit = literal.buf, *want = open.buf;
    size_t n = (size_t)bounds.len / 16, size = (size_t)literal.len, total = (size_t)region.len;
    if (bounds.len % 16 || (size_t)open.len != n) {
        PyErr_SetString(PyExc_ValueError, "literal_mask: bounds and open do not match");
        goto done;
    }
    int64_t *pairs = PyMem_RawMalloc(n * 16 + 1);
    if (pairs == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    if (n) memcpy(pairs, bounds.buf, n * 16);
    for (size_t i = 0; i < n; i++) {
        int64_t start = pairs[2 * i], end = pairs[2 * i + 1];
        int64_t before = i ? pairs[2 * i - 1] : 0;
        if (start < before || end < start || (uint64_t)end > total) {
            PyErr_SetString(PyExc_ValueError, "literal_mask: records out of order or bounds");
            PyMem_RawFree(pairs);
            goto done;
        }
    }
    out = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)n);
    if (out == NULL) {
        PyMem_RawFree(pairs);
        goto done;
    }
    unsigned char *mask = (unsigned char *)PyBytes_AS_STRING(out);
    memset(mask, 0, n);
    if (anchored || size == 0) {
        for (size_t i = 0; i < n; i++) {
            size_t start = (size_t)pairs[2 * i], len = (size_t)pairs[2 * i + 1] - start;
            mask[i] = want[i] && len >= size && (size == 0 || memcmp(data + start, lit, size) == 0);
        }
    } else {
        size_t i = 0, from = n ? (size_t)pairs[0] : 0;
        while (i < n) {
            const unsigned char *hit = find_bytes(data + from, total - from, lit, size);
            if (hit == NULL) break;
            size_t at = (size_t)(hit - data);
            while (i < n && (size_t)pairs[2 * i + 1] < at + size) i++; /* the record it may lie in */
            if (i == n) break;
            if ((size_t)pairs[2 * i] <= at) { /* inside record i */
                mask[i] = want[i] != 0;
                from = (size_t)pairs[2 * i + 1];
                i++;
                if (i < n && from < (size_t)pairs[2 * i]) from = (size_t)pairs[2 * i];
            } else {
                from = at + 1; /* across a gap between records: look again after it */
            }
        }
    }
    PyMem_RawFree(pairs);
done:
    PyBuffer_Release(&region);
    PyBuffer_Release(&bounds);
    PyBuffer_Release(&literal);
    PyBuffer_Release(&open);
    return out;
}

static PyMethodDef kernel_methods[] = {
    {"literal_mask", py_literal_mask, METH_VARARGS,
     "literal_mask(region, bounds, literal, anchored, open) -> bytes: 1 per record (int64 "
     "start, end pairs) that contains the literal (or starts with it)"},
    {"_xxh64", seqdedup_py_xxh64, METH_VARARGS, "_xxh64(data, seed=0) -> int: XXH64 of data (tests)"},
    {"hash_records", (PyCFunction)(void (*)(void))seqdedup_py_hash_records,
     METH_VARARGS | METH_KEYWORDS,
     "hash_records(records, seed=0, skip_chars=0, byte_mode=False, normalize=0, "
     "skip_fields=0) -> bytes: "
     "16 per record, the key's XXH64 with each of _lane_seeds(seed)"},
    {"_lane_seeds", seqdedup_py_lane_seeds, METH_O,
     "_lane_seeds(seed) -> (int, int): the seeds of the two lanes of a key hash: the low and "
     "high 64 bits of the seed, an int below 2**128 (tests)"},
    {"hash_encoded", (PyCFunction)(void (*)(void))seqdedup_py_hash_encoded,
     METH_VARARGS | METH_KEYWORDS,
     "hash_encoded(encoded, seed=0, skip_chars=0, byte_mode=False, normalize=0, "
     "skip_fields=0) -> bytes: "
     "the 16-byte key hashes of a library row's records"},
    {"normalize", seqdedup_py_normalize, METH_VARARGS,
     "normalize(key, classes) -> bytes: the key with each match of the classes replaced"},
    {"json_keys", (PyCFunction)(void (*)(void))seqdedup_py_json_keys, METH_VARARGS | METH_KEYWORDS,
     "json_keys(records, paths, ignore=False) -> list: each record's --json-key (or, with "
     "ignore, --json-ignore) key, the record itself (compared as text) or None (for Python "
     "to decide)"},
    {"_key_offset", seqdedup_py_key_offset, METH_VARARGS,
     "_key_offset(record, skip_chars, byte_mode=False, skip_fields=0) -> where the key "
     "starts (tests)"},
    {"first_match", seqdedup_py_first_match, METH_VARARGS,
     "first_match(record, classes) -> (start, end) of the first match of the --normalize "
     "classes, or None"},
    {"shortest_period", seqdedup_py_shortest_period, METH_O,
     "shortest_period(keys) -> the smallest p with key i equal to key i-p for every i >= p "
     "(16-byte keys)"},
    {"stream_prefixes", seqdedup_py_stream_prefixes, METH_VARARGS,
     "stream_prefixes(records, sets, mins, maxes, name_from, name_to, ascii_only=False) -> "
     "(names, found, keys) | None: --stream-by's names by a prefix program (see "
     "streamby.decider.prefix_program)"},
    {"window_tally", seqdedup_py_window_tally, METH_VARARGS,
     "window_tally(keys, widths) -> [(removed, runs, run lengths)]: per width (increasing), "
     "what the rule with an unlimited history removes from these 16-byte key hashes"},
    {"window_keys", seqdedup_py_window_keys, METH_VARARGS,
     "window_keys(hashes, fps, width, seed) -> bytes: per window a 128-bit key standing for "
     "its content (a keyed hash of its W key hashes), fingerprints confirmed by comparison"},
    {"first_windows", seqdedup_py_first_windows, METH_VARARGS,
     "first_windows(fps, positions, owners) -> (firsts, rows, routed): per window (int64 "
     "fingerprint pairs, int64 positions) the index of the first with its fingerprint; per "
     "owner (low lane % owners), the (fingerprint, position) rows of the first windows it "
     "owns and their indices"},
    {"split_hash", (PyCFunction)(void (*)(void))seqdedup_py_split_hash,
     METH_VARARGS | METH_KEYWORDS,
     "split_hash(data, delimiter, seed=0, skip_chars=0, byte_mode=False, normalize=0, "
     "skip_fields=0) -> "
     "(starts, hashes): each record's start (int64) and key hash (16 bytes)"},
    {"earliest", seqdedup_py_earliest, METH_VARARGS,
     "earliest(rows, library) -> list of bytes: per list item of (fingerprint, position) "
     "int64 triples, (row index, earliest position) for rows whose fingerprint occurs "
     "earlier (library fingerprints, int64 pairs, at position -1)"},
    {"periodic_match", seqdedup_py_periodic_match, METH_VARARGS,
     "periodic_match(unit, data, offset) -> how many keys of data equal the unit's, "
     "repeated, from key offset of the repetition on"},
    {NULL}};

/* Multi-phase initialisation: the types are created per module object (heap types);
 * the module state keeps the Matcher type, which the attribution unit checks against. */
static int kernel_exec(PyObject *module)
{
    KernelState *state = PyModule_GetState(module);
    PyObject *matcher = PyType_FromModuleAndSpec(module, &seqdedup_matcher_spec, NULL);
    if (matcher == NULL) return -1;
    state->matcher_type = (PyTypeObject *)matcher; /* the state owns this reference */
    if (PyModule_AddType(module, state->matcher_type) < 0) return -1;
    PyObject *attributor = PyType_FromModuleAndSpec(module, &seqdedup_attributor_spec, NULL);
    if (attributor == NULL) return -1;
    int rc = PyModule_AddType(module, (PyTypeObject *)attributor);
    Py_DECREF(attributor);
    if (rc < 0) return -1;
    PyObject *streams = PyType_FromModuleAndSpec(module, &seqdedup_stream_matcher_spec, NULL);
    if (streams == NULL) return -1;
    rc = PyModule_AddType(module, (PyTypeObject *)streams);
    Py_DECREF(streams);
    if (rc < 0) return -1;
    return PyModule_AddIntConstant(module, "GIL_MINSIZE", GIL_MINSIZE);
}

static int kernel_traverse(PyObject *module, visitproc visit, void *arg)
{
    KernelState *state = PyModule_GetState(module);
    if (state != NULL) Py_VISIT(state->matcher_type);
    return 0;
}

static int kernel_clear(PyObject *module)
{
    KernelState *state = PyModule_GetState(module);
    if (state != NULL) Py_CLEAR(state->matcher_type);
    return 0;
}

static void kernel_free(void *module) { (void)kernel_clear((PyObject *)module); }

/* Isolated: the types live in the module's state and nothing else is shared but the
 * thread-local kept error, so each interpreter, with its own GIL, has its own module. */
static PyModuleDef_Slot kernel_slots[] = {
    {Py_mod_exec, kernel_exec},
#if PY_VERSION_HEX >= 0x030C0000
    {Py_mod_multiple_interpreters, Py_MOD_PER_INTERPRETER_GIL_SUPPORTED},
#endif
    {0, NULL}};

struct PyModuleDef seqdedup_kernel_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "seqdedup._kernel",
    .m_doc = "The compiled core of seqdedup's window engine.",
    .m_size = sizeof(KernelState),
    .m_methods = kernel_methods,
    .m_slots = kernel_slots,
    .m_traverse = kernel_traverse,
    .m_clear = kernel_clear,
    .m_free = kernel_free,
};

PyMODINIT_FUNC PyInit__kernel(void) { return PyModuleDef_Init(&seqdedup_kernel_module); }
