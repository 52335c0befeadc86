/*
 * --suggest-window in one pass per window size, without a table per size
 * (seqdedup.suggest holds the same definition in Python, for the pure-Python engine).
 *
 * For each position k and width W, earliest[k] is the first position whose W records
 * equal the W records from k (unlimited history, one sequence); window k repeats iff
 * earliest[k] + W <= k, exactly the matcher's rule. Widths are taken in increasing
 * order, each from the one before (P < W): the W-block from k starts with the P-block
 * from k, so every earlier occurrence of it lies at or after p = earliest_P[k].
 *   - p == k (the P-block is new): the W-block is new too.
 *   - the W-block from p equals it (compared directly): earliest is p.
 *   - otherwise it is in a table of the W-blocks that were in neither case, or new.
 * Only width 1 hashes every position into a table; the others compare keys at p and
 * touch their table only where the P-block repeats with another continuation.
 */
#include "attribution.h" /* (its Vec) */
#include "functions.h"

#define KEY 16

static int same_keys(const unsigned char *keys, int64_t a, int64_t b, int64_t from, int64_t to)
{
    return memcmp(keys + (a + from) * KEY, keys + (b + from) * KEY, (size_t)(to - from) * KEY) ==
           0;
}

/* The W keys from k as one table key: their hash keyed with the run's seed (a PRF, so
 * two different blocks share one with probability 2^-128, whatever the input). */
static Hash128 block_key(const unsigned char *keys, int64_t k, int64_t width, Hash128 seed)
{
    return seqdedup_hash128(keys + k * KEY, (size_t)width * KEY, seed);
}

/* earliest[] for `width` from `previous` (width `prior`; NULL: none, every window
 * goes through the table). -1 with MemoryError set. */
static int earliest_for(const unsigned char *keys, int64_t n, int64_t width, int64_t prior,
                        const int64_t *previous, int64_t *earliest, Hash128 seed)
{
    Table table = {.stride = 3};
    int64_t count = n - width + 1;
    int rc = 0;
    for (int64_t k = 0; k < count && rc == 0; k++) {
        int64_t p = previous != NULL ? previous[k] : -1;
        if (previous != NULL && (p == k || same_keys(keys, p, k, prior, width))) {
            earliest[k] = p; /* new with its prefix, or the prefix's first goes on alike */
            continue;
        }
        int created;
        Hash128 key;
        if (width == 1)
            memcpy(&key, keys + k * KEY, KEY); /* a key hash is its own table key */
        else
            key = block_key(keys, k, width, seed);
        int64_t *entry = table_upsert(&table, key, &created);
        if (entry == NULL) {
            rc = -1;
            break;
        }
        if (created) entry[0] = k;
        earliest[k] = entry[0];
    }
    table_free(&table);
    return rc;
}

/* Removed records and runs of one width, and the runs' lengths (int64). */
static PyObject *tally(const int64_t *earliest, int64_t n, int64_t width)
{
    int64_t count = n - width + 1, covered = 0, removed = 0, runs = 0, run_start = -1;
    Vec lengths = {0};
    for (int64_t k = 0; k < count; k++) {
        if (earliest[k] + width > k) continue; /* not a repeat */
        if (k > covered || run_start < 0) { /* a gap: the run before ends */
            if (run_start >= 0 && vec_push(&lengths, covered - run_start) < 0) goto fail;
            run_start = k;
            runs++;
        }
        int64_t from = k > covered ? k : covered;
        removed += k + width - from;
        covered = k + width;
    }
    if (run_start >= 0 && vec_push(&lengths, covered - run_start) < 0) goto fail;
    PyObject *blob = PyBytes_FromStringAndSize((const char *)lengths.data,
                                               (Py_ssize_t)(lengths.len * sizeof(int64_t)));
    vec_free(&lengths);
    if (blob == NULL) return NULL;
    return Py_BuildValue("(LLN)", (long long)removed, (long long)runs, blob);
fail:
    vec_free(&lengths);
    return NULL;
}

/* window_tally(keys, widths, seed=0) -> list of (removed, runs, run lengths) per width:
 * keys are 16-byte key hashes, widths increasing and at least 1; seed: the run's. */
PyObject *seqdedup_py_window_tally(PyObject *self, PyObject *args)
{
    Py_buffer data;
    PyObject *widths_obj;
    Hash128 seed = {0, 0};
    if (!PyArg_ParseTuple(args, "y*O!|O&", &data, &PyTuple_Type, &widths_obj, seqdedup_to_seed,
                          &seed))
        return NULL;
    PyObject *out = NULL;
    int64_t *previous = NULL, *current = NULL, prior = 0;
    Py_ssize_t nwidths = PyTuple_GET_SIZE(widths_obj);
    int64_t n = data.len / KEY;
    if (data.len % KEY) {
        PyErr_SetString(PyExc_ValueError, "window_tally: keys are 16 bytes each");
        goto done;
    }
    out = PyList_New(0);
    size_t bytes = (size_t)(n > 0 ? n : 1) * sizeof(int64_t);
    previous = PyMem_RawMalloc(bytes);
    current = PyMem_RawMalloc(bytes);
    if (out == NULL || previous == NULL || current == NULL) {
        if (out != NULL) PyErr_NoMemory();
        goto fail;
    }
    for (Py_ssize_t w = 0; w < nwidths; w++) {
        long long width = PyLong_AsLongLong(PyTuple_GET_ITEM(widths_obj, w));
        if (width == -1 && PyErr_Occurred()) goto fail;
        if (width < 1 || width <= prior) {
            PyErr_SetString(PyExc_ValueError, "window_tally: widths increasing, from 1 on");
            goto fail;
        }
        PyObject *row;
        if (width > n) {
            row = Py_BuildValue("(LLy#)", 0LL, 0LL, "", (Py_ssize_t)0);
        } else {
            if (earliest_for(data.buf, n, width, prior, prior ? previous : NULL, current, seed) <
                0)
                goto fail;
            row = tally(current, n, width);
            int64_t *swap = previous;
            previous = current;
            current = swap;
            prior = width;
        }
        if (row == NULL || PyList_Append(out, row) < 0) {
            Py_XDECREF(row);
            goto fail;
        }
        Py_DECREF(row);
    }
    goto done;
fail:
    Py_CLEAR(out);
done:
    PyMem_RawFree(previous);
    PyMem_RawFree(current);
    PyBuffer_Release(&data);
    return out;
}
