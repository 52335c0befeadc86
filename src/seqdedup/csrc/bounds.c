/*
 * Where the records of a buffer lie: one function that every Python module splitting
 * a whole buffer into records uses (seqdedup.records.record_bounds holds the same
 * definition in Python). A record ends at the delimiter (which is not part of it);
 * the last one may end at the end of the buffer without one; an empty buffer holds
 * no record, and a buffer that ends with the delimiter no empty record after it.
 */
#include "kernel.h"
#include "functions.h"

/* The next occurrence of the delimiter at or after `from`, or `size`. */
static size_t next_delimiter(const unsigned char *data, size_t size, size_t from,
                             const unsigned char *delimiter, size_t width)
{
    while (from + width <= size) {
        const unsigned char *hit = memchr(data + from, delimiter[0], size - from - width + 1);
        if (hit == NULL) return size;
        size_t at = (size_t)(hit - data);
        if (width == 1 || memcmp(hit + 1, delimiter + 1, width - 1) == 0) return at;
        from = at + 1;
    }
    return size;
}

/* record_bounds(data, delimiter) -> bytes: native int64 pairs (start, end) of each
 * record of data, in order. */
PyObject *seqdedup_py_record_bounds(PyObject *self, PyObject *args)
{
    Py_buffer data, delimiter;
    if (!PyArg_ParseTuple(args, "y*y*", &data, &delimiter)) return NULL;
    PyObject *result = NULL;
    const unsigned char *text = data.buf, *mark = delimiter.buf;
    size_t size = (size_t)data.len, width = (size_t)delimiter.len;
    if (width == 0) {
        PyErr_SetString(PyExc_ValueError, "record_bounds: an empty delimiter");
        goto done;
    }
    /* One pass, the output sized by a guess and grown (counting the records first read
     * the whole buffer twice). */
    size_t room = size / 64 + 16, records = 0;
    result = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(room * 2 * sizeof(int64_t)));
    if (result == NULL) goto done;
    for (size_t start = 0; start < size; records++) {
        if (records == room) {
            if (room > (size_t)PY_SSIZE_T_MAX / (4 * sizeof(int64_t))) {
                Py_CLEAR(result);
                PyErr_NoMemory();
                goto done;
            }
            room *= 2;
            if (_PyBytes_Resize(&result, (Py_ssize_t)(room * 2 * sizeof(int64_t))) < 0) goto done;
        }
        size_t end = next_delimiter(text, size, start, mark, width);
        int64_t pair[2] = {(int64_t)start, (int64_t)end};
        memcpy(PyBytes_AS_STRING(result) + records * sizeof pair, pair, sizeof pair);
        start = end < size ? end + width : size;
    }
    _PyBytes_Resize(&result, (Py_ssize_t)(records * 2 * sizeof(int64_t))); /* (NULL on failure) */
done:
    PyBuffer_Release(&data);
    PyBuffer_Release(&delimiter);
    return result;
}

/* flag_positions(flags) -> bytes: the positions of the bytes of flags that are not 0, in
 * order, as native int64 (the records a flag picks, without a Python int for every
 * record that it passes over). */
PyObject *seqdedup_py_flag_positions(PyObject *self, PyObject *arg)
{
    (void)self;
    Py_buffer flags;
    if (PyObject_GetBuffer(arg, &flags, PyBUF_SIMPLE) < 0) return NULL;
    const unsigned char *flag = flags.buf;
    size_t n = (size_t)flags.len, count = 0;
    for (size_t k = 0; k < n; k++) count += flag[k] != 0;
    PyObject *result = NULL;
    if (count > (size_t)PY_SSIZE_T_MAX / sizeof(int64_t)) {
        PyErr_NoMemory();
    } else if ((result = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(count * sizeof(int64_t))))) {
        unsigned char *out = (unsigned char *)PyBytes_AS_STRING(result);
        size_t taken = 0;
        for (size_t k = 0; k < n && taken < count; k++) {
            if (!flag[k]) continue;
            int64_t at = (int64_t)k;
            memcpy(out + taken++ * sizeof at, &at, sizeof at);
        }
    }
    PyBuffer_Release(&flags);
    return result;
}

/* take(items, width, indices) -> bytes: items[k] (items: a run of `width`-byte items) for
 * each int64 k of indices, in order: a table's entries read out for every record without
 * a Python object for each. */
PyObject *seqdedup_py_take(PyObject *self, PyObject *args)
{
    (void)self;
    Py_buffer items, indices;
    Py_ssize_t width;
    if (!PyArg_ParseTuple(args, "y*ny*", &items, &width, &indices)) return NULL;
    PyObject *result = NULL;
    size_t n = (size_t)indices.len / sizeof(int64_t);
    if (width <= 0 || items.len % width || indices.len % (Py_ssize_t)sizeof(int64_t)) {
        PyErr_SetString(PyExc_ValueError,
                        "take: items of a positive width, indices int64 (whole)");
        goto done;
    }
    size_t size = (size_t)width, count = (size_t)items.len / size;
    if (n > (size_t)PY_SSIZE_T_MAX / size) {
        PyErr_NoMemory();
        goto done;
    }
    result = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(n * size));
    if (result == NULL) goto done;
    unsigned char *out = (unsigned char *)PyBytes_AS_STRING(result);
    const unsigned char *from = items.buf, *at = indices.buf;
    for (size_t i = 0; i < n; i++) {
        int64_t k;
        memcpy(&k, at + i * sizeof k, sizeof k); /* (any alignment) */
        if (k < 0 || (uint64_t)k >= count) {
            Py_CLEAR(result);
            PyErr_SetString(PyExc_IndexError, "take: an index outside the items");
            goto done;
        }
        memcpy(out + i * size, from + (size_t)k * size, size);
    }
done:
    PyBuffer_Release(&items);
    PyBuffer_Release(&indices);
    return result;
}

/* put(target, width, flags, values) -> None: the k-th `width`-byte item of values
 * written over the target's item at the k-th set flag (flags: a byte an item of
 * target), in place: the places a flag picks filled in order, as take reads them. */
PyObject *seqdedup_py_put(PyObject *self, PyObject *args)
{
    (void)self;
    Py_buffer target, flags, values;
    Py_ssize_t width;
    if (!PyArg_ParseTuple(args, "w*ny*y*", &target, &width, &flags, &values)) return NULL;
    PyObject *result = NULL;
    if (width <= 0 || target.len % width || flags.len != target.len / width ||
        values.len % width) {
        PyErr_SetString(PyExc_ValueError, "put: a flag an item of target, items of one width");
        goto done;
    }
    const unsigned char *flag = flags.buf, *from = values.buf;
    unsigned char *into = target.buf;
    size_t size = (size_t)width, n = (size_t)flags.len, given = (size_t)values.len / size;
    size_t taken = 0;
    for (size_t k = 0; k < n; k++) taken += flag[k] != 0;
    if (taken != given) {
        PyErr_SetString(PyExc_ValueError, "put: as many values as set flags");
        goto done;
    }
    taken = 0;
    for (size_t k = 0; k < n; k++) {
        if (!flag[k]) continue;
        memcpy(into + k * size, from + taken++ * size, size);
    }
    result = Py_None;
    Py_INCREF(result);
done:
    PyBuffer_Release(&target);
    PyBuffer_Release(&flags);
    PyBuffer_Release(&values);
    return result;
}

/* gather(data, bounds, indices, base) -> (bytes, bytes): the records
 * data[bounds[2k]:bounds[2k + 1]] for each int64 k of indices, joined, and where each
 * ends in the joined bytes counted from base (int64): records picked out of a buffer
 * without a Python object each. Every bound is checked before anything is copied. */
PyObject *seqdedup_py_gather(PyObject *self, PyObject *args)
{
    (void)self;
    Py_buffer data, bounds, indices;
    long long base;
    if (!PyArg_ParseTuple(args, "y*y*y*L", &data, &bounds, &indices, &base)) return NULL;
    PyObject *joined = NULL, *ends = NULL, *result = NULL;
    const size_t wide = sizeof(int64_t);
    if (bounds.len % (Py_ssize_t)(2 * wide) || indices.len % (Py_ssize_t)wide || base < 0) {
        PyErr_SetString(PyExc_ValueError,
                        "gather: bounds int64 pairs, indices int64, base not negative");
        goto done;
    }
    size_t pairs = (size_t)bounds.len / (2 * wide), n = (size_t)indices.len / wide;
    const unsigned char *pair = bounds.buf, *at = indices.buf;
    uint64_t total = 0;
    for (size_t i = 0; i < n; i++) { /* (checked first: nothing is made of bad input) */
        int64_t k, start, end;
        memcpy(&k, at + i * wide, wide); /* (any alignment) */
        if (k < 0 || (uint64_t)k >= pairs) {
            PyErr_SetString(PyExc_IndexError, "gather: an index outside the bounds");
            goto done;
        }
        memcpy(&start, pair + (size_t)k * 2 * wide, wide);
        memcpy(&end, pair + (size_t)k * 2 * wide + wide, wide);
        if (start < 0 || end < start || end > (int64_t)data.len) {
            PyErr_SetString(PyExc_ValueError, "gather: a record outside the data");
            goto done;
        }
        total += (uint64_t)(end - start);
    }
    if (total > (uint64_t)PY_SSIZE_T_MAX || (uint64_t)base > (uint64_t)INT64_MAX - total ||
        n > (size_t)PY_SSIZE_T_MAX / wide) {
        PyErr_NoMemory();
        goto done;
    }
    joined = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)total);
    ends = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(n * wide));
    if (joined == NULL || ends == NULL) goto done;
    unsigned char *out = (unsigned char *)PyBytes_AS_STRING(joined);
    unsigned char *end_out = (unsigned char *)PyBytes_AS_STRING(ends);
    const unsigned char *from = data.buf;
    size_t filled = 0;
    for (size_t i = 0; i < n; i++) {
        int64_t k, start, end;
        memcpy(&k, at + i * wide, wide);
        memcpy(&start, pair + (size_t)k * 2 * wide, wide);
        memcpy(&end, pair + (size_t)k * 2 * wide + wide, wide);
        size_t length = (size_t)(end - start);
        if (length) memcpy(out + filled, from + start, length);
        filled += length;
        int64_t ended = (int64_t)base + (int64_t)filled;
        memcpy(end_out + i * wide, &ended, wide);
    }
    result = PyTuple_Pack(2, joined, ends);
done:
    Py_XDECREF(joined);
    Py_XDECREF(ends);
    PyBuffer_Release(&data);
    PyBuffer_Release(&bounds);
    PyBuffer_Release(&indices);
    return result;
}
