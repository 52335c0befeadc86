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

/* shortest_period(keys) -> int: the prefix function of Knuth, Morris and Pratt. */
PyObject *seqdedup_py_shortest_period(PyObject *self, PyObject *arg)
{
    Py_buffer data;
    if (PyObject_GetBuffer(arg, &data, PyBUF_SIMPLE) < 0) return NULL;
    const unsigned char *keys = data.buf;
    size_t n = (size_t)data.len / KEY_BYTES, border = 0;
    if ((size_t)data.len % KEY_BYTES) {
        PyBuffer_Release(&data);
        PyErr_SetString(PyExc_ValueError, "shortest_period: keys are 16 bytes each");
        return NULL;
    }
    size_t *borders = n > 1 ? PyMem_RawMalloc(n * sizeof(size_t)) : NULL;
    if (n > 1 && borders == NULL) {
        PyBuffer_Release(&data);
        return PyErr_NoMemory();
    }
    if (n > 1) borders[0] = 0;
    for (size_t i = 1; i < n; i++) {
        while (border && !key_equal(keys, i, keys, border)) border = borders[border - 1];
        if (key_equal(keys, i, keys, border)) border++;
        borders[i] = border;
    }
    PyMem_RawFree(borders);
    PyBuffer_Release(&data);
    return PyLong_FromSize_t(n - border);
}

/* periodic_match(unit, data, offset) -> int: how many keys of data equal
 * unit[(offset + i) % len(unit)], before the first that does not. */
PyObject *seqdedup_py_periodic_match(PyObject *self, PyObject *args)
{
    Py_buffer unit, data;
    Py_ssize_t offset;
    if (!PyArg_ParseTuple(args, "y*y*n", &unit, &data, &offset)) return NULL;
    size_t length = (size_t)unit.len / KEY_BYTES, count = (size_t)data.len / KEY_BYTES, i = 0;
    if (length == 0 || offset < 0 || (size_t)unit.len % KEY_BYTES || (size_t)data.len % KEY_BYTES) {
        PyBuffer_Release(&unit);
        PyBuffer_Release(&data);
        PyErr_SetString(PyExc_ValueError,
                        "periodic_match: a non-empty unit, 16-byte keys, offset >= 0");
        return NULL;
    }
    size_t phase = (size_t)offset % length;
    const unsigned char *u = unit.buf, *d = data.buf;
    while (i < count) { /* whole stretches at once, then the key that differs */
        size_t take = length - phase < count - i ? length - phase : count - i;
        if (memcmp(d + i * KEY_BYTES, u + phase * KEY_BYTES, take * KEY_BYTES) != 0) {
            while (key_equal(d, i, u, phase)) i++, phase++;
            break;
        }
        i += take;
        phase = 0;
    }
    PyBuffer_Release(&unit);
    PyBuffer_Release(&data);
    return PyLong_FromSize_t(i);
}
