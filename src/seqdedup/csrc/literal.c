/*
 * literal_mask: which records of a chunk contain a literal pattern (or start with it),
 * in one pass over the chunk: --track/--bypass patterns that are plain text.
 */
#include "kernel.h"
#include "functions.h"

#include <string.h>

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
PyObject *seqdedup_py_literal_mask(PyObject *self, PyObject *args)
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
