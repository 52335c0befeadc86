/*
 * --fold's key comparisons (seqdedup.fold holds the definitions in Python): the
 * shortest period of a run's first piece, and how far a run goes on repeating its
 * sequence. Keys are 16-byte key hashes, compared as bytes.
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
