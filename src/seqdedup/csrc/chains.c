/*
 * seqdedup diff's passes over GOOD's sequences: the sequences made from the key table's
 * neighbours (chains), BAD's counts per sequence (chain_counts) and the fragments of
 * them in BAD that are not whole (broken_fragments). Each the twin of a function in
 * seqdedup/diff: int32 buffers in, bytes out, no Python object per key or record.
 */
#include "kernel.h"

/* ---- broken_fragments: seqdedup diff's pass over BAD for GOOD's sequences ---------- */

/* Reads an int32 buffer; -1 with an error set if its length is not a multiple of 4. */
static int int32_view(PyObject *obj, Py_buffer *view, Py_ssize_t *count)
{
    if (PyObject_GetBuffer(obj, view, PyBUF_SIMPLE) < 0) return -1;
    if (view->len % 4) {
        PyBuffer_Release(view);
        PyErr_SetString(PyExc_ValueError, "int32 values are 4 bytes each");
        return -1;
    }
    *count = view->len / 4;
    return 0;
}

static inline int32_t int32_at(const Py_buffer *view, Py_ssize_t k)
{
    int32_t v;
    memcpy(&v, (const char *)view->buf + 4 * k, 4);
    return v;
}

PyObject *seqdedup_py_broken_fragments(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *objs[4];
    if (!PyArg_ParseTuple(args, "OOOO", &objs[0], &objs[1], &objs[2], &objs[3])) return NULL;
    Py_buffer views[4];
    Py_ssize_t counts[4];
    int held = 0;
    PyObject *result = NULL;
    for (; held < 4; held++) {
        if (int32_view(objs[held], &views[held], &counts[held]) < 0) goto done;
    }
    const Py_buffer *ranked = &views[0], *chain_of = &views[1], *index_of = &views[2],
                    *lengths = &views[3];
    if (counts[1] != counts[2]) {
        PyErr_SetString(PyExc_ValueError, "one chain and one index per key id");
        goto done;
    }
    size_t made = 0, room = 0;
    int64_t *pairs = NULL;
    int64_t start = -1, previous = -2;
    int32_t chain = -1, index = -1, first = -1;
    for (Py_ssize_t r = 0; r <= counts[0]; r++) {
        int32_t id = r < counts[0] ? int32_at(ranked, r) : -1, here = -1, at = -1;
        int candidate = 0;
        if (id >= 0) {
            if (id >= counts[1]) {
                PyErr_SetString(PyExc_ValueError, "a key id past the chains");
                PyMem_RawFree(pairs);
                goto done;
            }
            here = int32_at(chain_of, id);
            at = int32_at(index_of, id);
            if (here < 0 || here >= counts[3]) {
                PyErr_SetString(PyExc_ValueError, "a chain past the lengths");
                PyMem_RawFree(pairs);
                goto done;
            }
            candidate = int32_at(lengths, here) > 0;
        }
        if (candidate && r == previous + 1 && here == chain && at == index + 1) {
            previous = r;
            index = at;
            continue;
        }
        /* the fragment before ends: kept unless it holds its whole sequence */
        if (start >= 0 && !(first == 0 && index == int32_at(lengths, chain) - 1)) {
            if (made + 2 > room) {
                room = room < 64 ? 64 : room * 2;
                int64_t *more = PyMem_RawRealloc(pairs, room * sizeof(int64_t));
                if (more == NULL) {
                    PyMem_RawFree(pairs);
                    PyErr_NoMemory();
                    goto done;
                }
                pairs = more;
            }
            pairs[made++] = start;
            pairs[made++] = previous;
        }
        start = candidate ? r : -1;
        previous = candidate ? r : -2;
        chain = here;
        index = first = at;
    }
    result = PyBytes_FromStringAndSize(pairs ? (const char *)pairs : "",
                                       (Py_ssize_t)(made * sizeof(int64_t)));
    PyMem_RawFree(pairs);
done:
    for (int k = 0; k < held; k++) PyBuffer_Release(&views[k]);
    return result;
}

/* ---- chains: GOOD's sequences from each key's one neighbour after and before --------- */

/* Key a links to key b when a's one neighbour after is b and b's one neighbour before is
 * a: each key has at most one link in and one out, so the links form paths (a table's
 * stretches end, so they never close a cycle; one given here is cut where it was
 * entered). A path is a chain, from each key no link enters, in id order. */
PyObject *seqdedup_py_chains(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *objs[2];
    if (!PyArg_ParseTuple(args, "OO", &objs[0], &objs[1])) return NULL;
    Py_buffer views[2];
    Py_ssize_t counts[2];
    int held = 0;
    PyObject *result = NULL;
    int32_t *linked = NULL, *members = NULL, *starts = NULL, *chain_of = NULL,
            *index_of = NULL;
    unsigned char *state = NULL; /* 0: no link in, 1: a link in, 2: placed */
    for (; held < 2; held++) {
        if (int32_view(objs[held], &views[held], &counts[held]) < 0) goto done;
    }
    Py_ssize_t n = counts[0];
    if (n != counts[1]) {
        PyErr_SetString(PyExc_ValueError, "one neighbour after and one before per key id");
        goto done;
    }
    if (n >= INT32_MAX) {
        PyErr_SetString(PyExc_ValueError, "more key ids than int32 numbers");
        goto done;
    }
    size_t room = (size_t)n + 1;
    linked = PyMem_RawMalloc(room * sizeof(int32_t));
    members = PyMem_RawMalloc(room * sizeof(int32_t));
    starts = PyMem_RawMalloc(room * sizeof(int32_t));
    chain_of = PyMem_RawMalloc(room * sizeof(int32_t));
    index_of = PyMem_RawMalloc(room * sizeof(int32_t));
    state = PyMem_RawCalloc(room, 1);
    if (!linked || !members || !starts || !chain_of || !index_of || !state) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t k = 0; k < n; k++) {
        int32_t follower = int32_at(&views[0], k);
        linked[k] = -1;
        if (follower >= n || int32_at(&views[1], k) >= n) {
            PyErr_SetString(PyExc_ValueError, "a neighbour past the key ids");
            goto done;
        }
        if (follower >= 0 && follower != k && int32_at(&views[1], follower) == k) {
            linked[k] = follower;
            state[follower] = 1;
        }
    }
    int32_t chains = 0, placed = 0;
    for (int pass = 0; pass < 2; pass++) { /* heads, then what a cycle left */
        for (int32_t head = 0; head < (int32_t)n; head++) {
            if (state[head] != (pass ? 1 : 0)) continue;
            starts[chains] = placed;
            int32_t index = 0;
            for (int32_t key = head; key >= 0 && state[key] != 2; key = linked[key]) {
                state[key] = 2;
                chain_of[key] = chains;
                index_of[key] = index++;
                members[placed++] = key;
            }
            chains++;
        }
    }
    starts[chains] = placed;
    result = Py_BuildValue("(y#y#y#y#)", (const char *)members, (Py_ssize_t)placed * 4,
                           (const char *)starts, ((Py_ssize_t)chains + 1) * 4,
                           (const char *)chain_of, n * 4, (const char *)index_of, n * 4);
done:
    PyMem_RawFree(linked);
    PyMem_RawFree(members);
    PyMem_RawFree(starts);
    PyMem_RawFree(chain_of);
    PyMem_RawFree(index_of);
    PyMem_RawFree(state);
    for (int k = 0; k < held; k++) PyBuffer_Release(&views[k]);
    return result;
}

/* ---- chain_counts: per sequence, the most times one of its keys occurs in BAD ---------- */

PyObject *seqdedup_py_chain_counts(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *objs[3];
    if (!PyArg_ParseTuple(args, "OOO", &objs[0], &objs[1], &objs[2])) return NULL;
    Py_buffer views[3];
    Py_ssize_t counts[3];
    int held = 0;
    PyObject *result = NULL;
    int64_t *seen = NULL, *most = NULL;
    for (; held < 3; held++) {
        if (int32_view(objs[held], &views[held], &counts[held]) < 0) goto done;
    }
    const Py_buffer *ids = &views[0], *members = &views[1], *starts = &views[2];
    Py_ssize_t keys = counts[1], chains = counts[2] - 1;
    if (chains < 0 || int32_at(starts, 0) != 0 || int32_at(starts, chains) != keys) {
        PyErr_SetString(PyExc_ValueError, "the starts run from 0 to the members' end");
        goto done;
    }
    seen = PyMem_RawCalloc((size_t)keys + 1, sizeof(int64_t));
    most = PyMem_RawCalloc((size_t)chains + 1, sizeof(int64_t));
    if (seen == NULL || most == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t r = 0; r < counts[0]; r++) {
        int32_t id = int32_at(ids, r);
        if (id < 0) continue; /* (a key GOOD lacks, or between streams) */
        if (id >= keys) {
            PyErr_SetString(PyExc_ValueError, "a key id past the members");
            goto done;
        }
        seen[id]++;
    }
    for (Py_ssize_t c = 0; c < chains; c++) {
        int32_t from = int32_at(starts, c), to = int32_at(starts, c + 1);
        if (from > to || to > keys) {
            PyErr_SetString(PyExc_ValueError, "the starts run from 0 to the members' end");
            goto done;
        }
        for (int32_t k = from; k < to; k++) {
            int32_t key = int32_at(members, k);
            if (key < 0 || key >= keys) {
                PyErr_SetString(PyExc_ValueError, "a member past the key ids");
                goto done;
            }
            if (seen[key] > most[c]) most[c] = seen[key];
        }
    }
    result = PyBytes_FromStringAndSize((const char *)most, chains * (Py_ssize_t)sizeof(int64_t));
done:
    PyMem_RawFree(seen);
    PyMem_RawFree(most);
    for (int k = 0; k < held; k++) PyBuffer_Release(&views[k]);
    return result;
}
