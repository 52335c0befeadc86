/*
 * json_keys: the --json-key/--json-ignore fast path (the parser of jsonkey.h) over a
 * batch of records, each record's key in one call.
 */
#include "kernel.h"
#include "functions.h"
#include "jsonkey.h"

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
