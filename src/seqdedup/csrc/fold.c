/*
 * --fold's key comparisons (seqdedup.fold holds the definitions in Python): the
 * shortest period of a run's first piece, how far a run goes on repeating its
 * sequence, and how many different texts its copies have. Keys are 16-byte key hashes,
 * compared as bytes; texts are 8-byte digests.
 */
#include "kernel.h"
#include "functions.h"

#define KEY_BYTES 16

static int key_equal(const unsigned char *keys, size_t i, const unsigned char *other, size_t j)
{
    return memcmp(keys + i * KEY_BYTES, other + j * KEY_BYTES, KEY_BYTES) == 0;
}

/* The prefix function of Knuth, Morris and Pratt over n keys: the shortest period.
 * -1 (a MemoryError set) when its table cannot be allocated. */
static Py_ssize_t shortest_period_of(const unsigned char *keys, size_t n)
{
    if (n < 2) return (Py_ssize_t)n;
    size_t *borders = PyMem_RawMalloc(n * sizeof(size_t)), border = 0;
    if (borders == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    borders[0] = 0;
    for (size_t i = 1; i < n; i++) {
        while (border && !key_equal(keys, i, keys, border)) border = borders[border - 1];
        if (key_equal(keys, i, keys, border)) border++;
        borders[i] = border;
    }
    PyMem_RawFree(borders);
    return (Py_ssize_t)(n - border);
}

/* How many of the count keys of data equal unit[(phase + i) % length], before the
 * first that does not (length > 0, phase < length). */
static size_t periodic_count(const unsigned char *unit, size_t length, const unsigned char *data,
                             size_t count, size_t phase)
{
    size_t i = 0;
    while (i < count) { /* whole stretches at once, then the key that differs */
        size_t take = length - phase < count - i ? length - phase : count - i;
        if (memcmp(data + i * KEY_BYTES, unit + phase * KEY_BYTES, take * KEY_BYTES) != 0) {
            while (key_equal(data, i, unit, phase)) i++, phase++;
            break;
        }
        i += take;
        phase = 0;
    }
    return i;
}

/* shortest_period(keys) -> int */
PyObject *seqdedup_py_shortest_period(PyObject *self, PyObject *arg)
{
    Py_buffer data;
    if (PyObject_GetBuffer(arg, &data, PyBUF_SIMPLE) < 0) return NULL;
    if ((size_t)data.len % KEY_BYTES) {
        PyBuffer_Release(&data);
        PyErr_SetString(PyExc_ValueError, "shortest_period: keys are 16 bytes each");
        return NULL;
    }
    Py_ssize_t period = shortest_period_of(data.buf, (size_t)data.len / KEY_BYTES);
    PyBuffer_Release(&data);
    return period < 0 ? NULL : PyLong_FromSsize_t(period);
}

/* periodic_match(unit, data, offset) -> int: how many keys of data equal
 * unit[(offset + i) % len(unit)], before the first that does not. */
PyObject *seqdedup_py_periodic_match(PyObject *self, PyObject *args)
{
    Py_buffer unit, data;
    Py_ssize_t offset;
    if (!PyArg_ParseTuple(args, "y*y*n", &unit, &data, &offset)) return NULL;
    size_t length = (size_t)unit.len / KEY_BYTES, count = (size_t)data.len / KEY_BYTES;
    if (length == 0 || offset < 0 || (size_t)unit.len % KEY_BYTES || (size_t)data.len % KEY_BYTES) {
        PyBuffer_Release(&unit);
        PyBuffer_Release(&data);
        PyErr_SetString(PyExc_ValueError,
                        "periodic_match: a non-empty unit, 16-byte keys, offset >= 0");
        return NULL;
    }
    size_t matched = periodic_count(unit.buf, length, data.buf, count, (size_t)offset % length);
    PyBuffer_Release(&unit);
    PyBuffer_Release(&data);
    return PyLong_FromSize_t(matched);
}

/* fold_shape(keys, at, extent, count) -> (length, matched): of the count keys from key
 * at, the shortest period of the first extent (the run's first piece), and how many
 * repeat those first length keys (the two calls above in one, for a whole run). */
PyObject *seqdedup_py_fold_shape(PyObject *self, PyObject *args)
{
    Py_buffer keys;
    Py_ssize_t at, extent, count;
    if (!PyArg_ParseTuple(args, "y*nnn", &keys, &at, &extent, &count)) return NULL;
    size_t total = (size_t)keys.len / KEY_BYTES;
    if ((size_t)keys.len % KEY_BYTES || at < 0 || extent < 1 || count < extent ||
        (size_t)at > total || (size_t)count > total - (size_t)at) {
        PyBuffer_Release(&keys);
        PyErr_SetString(PyExc_ValueError,
                        "fold_shape: 16-byte keys, 0 < extent <= count keys from at");
        return NULL;
    }
    const unsigned char *run = (const unsigned char *)keys.buf + (size_t)at * KEY_BYTES;
    Py_ssize_t length = shortest_period_of(run, (size_t)extent);
    size_t matched = length < 0 ? 0 : periodic_count(run, (size_t)length, run, (size_t)count, 0);
    PyBuffer_Release(&keys);
    return length < 0 ? NULL : Py_BuildValue("nn", length, (Py_ssize_t)matched);
}

/* ---- the copies' texts ------------------------------------------------------------ */

#define TEXT_BYTES 8

/* A group of `length` text digests spread over a table. The digests are keyed (the
 * run's secret), so no input chooses where its groups fall: a plain mix serves. */
static uint64_t group_hash(const unsigned char *group, size_t length)
{
    uint64_t h = 0x9E3779B97F4A7C15u;
    for (size_t i = 0; i < length; i++) {
        uint64_t value;
        memcpy(&value, group + i * TEXT_BYTES, sizeof value); /* (any alignment) */
        h = (h ^ value) * 0xFF51AFD7ED558CCDu;
        h ^= h >> 32;
    }
    return h;
}

/* How many different groups of `length` consecutive digests the n of texts hold, from
 * its start (a shorter group at the end counts as one of its own); groups compared
 * whole, so the count is exact. -1 (a MemoryError set) when the table cannot be had. */
static Py_ssize_t distinct_groups(const unsigned char *texts, size_t n, size_t length)
{
    size_t copies = n / length, found = n % length != 0;
    if (copies < 2) return (Py_ssize_t)(copies + found);
    size_t cap = 16; /* a power of two, at least twice the copies (n < 2^60: no wrap) */
    while (cap < 2 * copies) cap <<= 1;
    size_t *slots = PyMem_RawCalloc(cap, sizeof(size_t)); /* copy index + 1; 0: free */
    if (slots == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    size_t mask = cap - 1, bytes = length * TEXT_BYTES;
    for (size_t c = 0; c < copies; c++) {
        const unsigned char *group = texts + c * bytes;
        for (size_t at = (size_t)group_hash(group, length) & mask;; at = (at + 1) & mask) {
            size_t held = slots[at];
            if (held == 0) {
                slots[at] = c + 1;
                found++;
                break;
            }
            if (memcmp(texts + (held - 1) * bytes, group, bytes) == 0) break;
        }
    }
    PyMem_RawFree(slots);
    return (Py_ssize_t)found;
}

/* distinct_copies(texts, length) -> int */
PyObject *seqdedup_py_distinct_copies(PyObject *self, PyObject *args)
{
    Py_buffer texts;
    Py_ssize_t length;
    if (!PyArg_ParseTuple(args, "y*n", &texts, &length)) return NULL;
    if (length < 1 || (size_t)texts.len % TEXT_BYTES) {
        PyBuffer_Release(&texts);
        PyErr_SetString(PyExc_ValueError, "distinct_copies: 8-byte digests, length >= 1");
        return NULL;
    }
    Py_ssize_t found =
        distinct_groups(texts.buf, (size_t)texts.len / TEXT_BYTES, (size_t)length);
    PyBuffer_Release(&texts);
    return found < 0 ? NULL : PyLong_FromSsize_t(found);
}
