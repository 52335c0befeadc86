/*
 * --budget's token estimate (seqdedup.tokens holds the definition in Python, as a
 * regular expression): per record, a run of letters costs one token per 6 begun, a
 * run of digits one per 3, a line feed one, a run of other white space one where a
 * digit follows it (a vocabulary keeps no space with a number) and none otherwise,
 * any other byte one.
 */
#include "kernel.h"
#include "functions.h"

static int is_blank(unsigned char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v';
}

static int64_t record_tokens(const unsigned char *text, size_t length)
{
    int64_t count = 0;
    size_t i = 0;
    while (i < length) {
        unsigned char c = text[i];
        size_t run = 0;
        if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z')) {
            while (i + run < length && ((text[i + run] >= 'A' && text[i + run] <= 'Z') ||
                                        (text[i + run] >= 'a' && text[i + run] <= 'z')))
                run++;
            count += (int64_t)((run + 5) / 6);
        } else if (c >= '0' && c <= '9') {
            while (i + run < length && text[i + run] >= '0' && text[i + run] <= '9') run++;
            count += (int64_t)((run + 2) / 3);
        } else if (is_blank(c)) {
            /* white space as Python's bytes regex \s, \n aside (a piece of its own) */
            while (i + run < length && is_blank(text[i + run])) run++;
            if (i + run < length && text[i + run] >= '0' && text[i + run] <= '9') count++;
        } else {
            run = 1;
            count++;
        }
        i += run;
    }
    return count;
}

/* token_counts(data, bounds) -> bytes: for each record data[bounds[2k]:bounds[2k+1]]
 * (bounds: native int64 pairs), its estimated tokens as a native int64. */
PyObject *seqdedup_py_token_counts(PyObject *self, PyObject *args)
{
    Py_buffer data, bounds;
    if (!PyArg_ParseTuple(args, "y*y*", &data, &bounds)) return NULL;
    PyObject *result = NULL;
    if (bounds.len % (Py_ssize_t)(2 * sizeof(int64_t))) {
        PyErr_SetString(PyExc_ValueError, "token_counts: bounds are pairs of int64");
        goto done;
    }
    size_t n = (size_t)bounds.len / (2 * sizeof(int64_t));
    const unsigned char *pairs = bounds.buf; /* read with memcpy: any alignment */
    result = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(n * sizeof(int64_t)));
    if (result == NULL) goto done;
    unsigned char *counts = (unsigned char *)PyBytes_AS_STRING(result);
    const unsigned char *text = data.buf;
    for (size_t k = 0; k < n; k++) {
        int64_t span[2];
        memcpy(span, pairs + k * sizeof span, sizeof span);
        if (span[0] < 0 || span[0] > span[1] || span[1] > (int64_t)data.len) {
            Py_CLEAR(result);
            PyErr_SetString(PyExc_ValueError, "token_counts: a record lies outside the data");
            goto done;
        }
        int64_t count = record_tokens(text + span[0], (size_t)(span[1] - span[0]));
        memcpy(counts + k * sizeof count, &count, sizeof count);
    }
done:
    PyBuffer_Release(&data);
    PyBuffer_Release(&bounds);
    return result;
}
