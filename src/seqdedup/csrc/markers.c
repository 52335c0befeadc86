/*
 * --annotate's default markers on the chunk path: the chunk's output with each closed
 * piece's marker written where its run of skipped records lies, made in one pass (the
 * twin of engine.pykernel.python_mark_runs). Only the default text of one input without
 * filters, whose numbers are the records' own indices plus one; a piece that repeats a
 * loaded library names its sequence, which Python writes (None is returned).
 */
#include "kernel.h"
#include "functions.h"

#define PIECE_WORDS 6 /* start, end, source, count, identity (two words) */
#define MARKER_MAX 192 /* the longest marker (five int64 numbers and the text: 159) */

static int64_t word_at(const Py_buffer *b, size_t k)
{
    int64_t v; /* (memcpy: the buffer need not be aligned) */
    memcpy(&v, (const char *)b->buf + k * sizeof v, sizeof v);
    return v;
}

/* The index of the last run starting at or before tracked record `end`, or -1. */
static Py_ssize_t run_of(const Py_buffer *runs, size_t nruns, int64_t end)
{
    size_t lo = 0, hi = nruns; /* runs [0, lo) start at or before end */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (word_at(runs, 2 * mid) <= end) lo = mid + 1;
        else hi = mid;
    }
    return (Py_ssize_t)lo - 1;
}

/* The marker of piece k into buf (MARKER_MAX bytes); its length. */
static int marker_of(const Py_buffer *pieces, size_t k, char *buf)
{
    size_t at = k * PIECE_WORDS;
    long long start = word_at(pieces, at), end = word_at(pieces, at + 1);
    long long source = word_at(pieces, at + 2), count = word_at(pieces, at + 3);
    return snprintf(buf, MARKER_MAX,
                    "[DUPLICATE: Lines %lld-%lld matched lines %lld-%lld (sequence seen %lld "
                    "times)]",
                    start + 1, end + 1, source + 1, source + (end - start) + 1, count);
}

typedef struct {
    Py_buffer out, runs, offsets, pieces;
    const char *delimiter, *prefix, *suffix;
    Py_ssize_t delimiter_len, prefix_len, suffix_len;
} Marking;

/* Check the pieces against the runs and the output: each piece's place (the offset of
 * its run) no earlier than the one before and within the output; the bytes the marked
 * output takes, or -1 with ValueError set, or -2 when a piece repeats a library. */
static Py_ssize_t marked_size(const Marking *m, size_t nruns, size_t npieces)
{
    Py_ssize_t total = m->out.len, taken = 0;
    for (size_t k = 0; k < npieces; k++) {
        int64_t start = word_at(&m->pieces, k * PIECE_WORDS);
        int64_t end = word_at(&m->pieces, k * PIECE_WORDS + 1);
        int64_t source = word_at(&m->pieces, k * PIECE_WORDS + 2);
        if (source < 0) return -2;
        /* (start + 1, end + 1 and source + end - start + 1 are written) */
        if (start < 0 || end < start || end == INT64_MAX || end - start > INT64_MAX - 1 - source) {
            PyErr_SetString(PyExc_ValueError, "a piece's records are out of range");
            return -1;
        }
        Py_ssize_t run = run_of(&m->runs, nruns, end);
        int64_t at = run >= 0 ? word_at(&m->offsets, (size_t)run) : 0;
        if (at < taken || at > m->out.len) {
            PyErr_SetString(PyExc_ValueError, "a run's place is outside the output");
            return -1;
        }
        taken = (Py_ssize_t)at;
        char text[MARKER_MAX];
        int length = marker_of(&m->pieces, k, text);
        if (length < 0 || length >= MARKER_MAX) {
            PyErr_SetString(PyExc_ValueError, "a marker does not fit");
            return -1;
        }
        Py_ssize_t add = m->prefix_len + length + m->suffix_len + m->delimiter_len;
        if (total > PY_SSIZE_T_MAX - add) return seqdedup_no_memory();
        total += add;
    }
    return total;
}

/* The marked output into dst (marked_size bytes, the pieces checked). */
static void write_marked(const Marking *m, size_t nruns, size_t npieces, char *dst)
{
    const char *out = m->out.buf;
    Py_ssize_t taken = 0;
    for (size_t k = 0; k < npieces; k++) {
        Py_ssize_t run = run_of(&m->runs, nruns, word_at(&m->pieces, k * PIECE_WORDS + 1));
        Py_ssize_t at = run >= 0 ? (Py_ssize_t)word_at(&m->offsets, (size_t)run) : 0;
        memcpy(dst, out + taken, (size_t)(at - taken));
        dst += at - taken;
        taken = at;
        char text[MARKER_MAX];
        int length = marker_of(&m->pieces, k, text);
        memcpy(dst, m->prefix, (size_t)m->prefix_len);
        dst += m->prefix_len;
        memcpy(dst, text, (size_t)length);
        dst += length;
        memcpy(dst, m->suffix, (size_t)m->suffix_len);
        dst += m->suffix_len;
        memcpy(dst, m->delimiter, (size_t)m->delimiter_len);
        dst += m->delimiter_len;
    }
    memcpy(dst, out + taken, (size_t)(m->out.len - taken));
}

PyObject *seqdedup_py_mark_runs(PyObject *self, PyObject *args)
{
    Marking m = {0};
    if (!PyArg_ParseTuple(args, "y*y*y*y*y#y#y#", &m.out, &m.runs, &m.offsets, &m.pieces,
                          &m.delimiter, &m.delimiter_len, &m.prefix, &m.prefix_len, &m.suffix,
                          &m.suffix_len))
        return NULL;
    PyObject *result = NULL;
    size_t nruns = (size_t)m.runs.len / 16, npieces = (size_t)m.pieces.len / (8 * PIECE_WORDS);
    if (m.runs.len % 16 || m.offsets.len != m.runs.len / 2 || m.pieces.len % (8 * PIECE_WORDS)) {
        PyErr_SetString(PyExc_ValueError,
                        "expected int64 pairs of runs, an int64 offset each, 6 int64 a piece");
        goto done;
    }
    Py_ssize_t total = marked_size(&m, nruns, npieces);
    if (total == -2) {
        result = Py_NewRef(Py_None);
        goto done;
    }
    if (total < 0) goto done;
    result = PyBytes_FromStringAndSize(NULL, total);
    if (result != NULL) write_marked(&m, nruns, npieces, PyBytes_AS_STRING(result));
done:
    PyBuffer_Release(&m.out);
    PyBuffer_Release(&m.runs);
    PyBuffer_Release(&m.offsets);
    PyBuffer_Release(&m.pieces);
    return result;
}
