/*
 * The chunk path: raw input in, kept records out. A chunk is appended to the
 * matcher's buffer, split on the delimiter in place, each record's key hashed (without
 * the GIL when the chunk is large), the windows decided, and the kept records written as
 * contiguous ranges of the input, with no Python object per record.
 */
#include "kernel.h"

/* ---- the chunk path ------------------------------------------------------------- */

static const unsigned char *find_delimiter(const unsigned char *p, const unsigned char *end,
                                           const unsigned char *delim, size_t dlen)
{
    if (dlen == 1) return memchr(p, delim[0], (size_t)(end - p));
    while ((size_t)(end - p) >= dlen) {
        const unsigned char *hit = memchr(p, delim[0], (size_t)(end - p) - dlen + 1);
        if (hit == NULL) return NULL;
        if (memcmp(hit + 1, delim + 1, dlen - 1) == 0) return hit;
        p = hit + 1;
    }
    return NULL;
}

static inline Hash128 record_hash(const Matcher *m, const unsigned char *p, size_t len)
{
    return seqdedup_key_hash(p, len, m->skip, m->byte_mode, m->normalize, m->seed);
}

/* Turn the decided records (the oldest `count` pending ones) into the output, the
 * skipped runs and the counts; then drop them from the pending records. */
static PyObject *emit(Matcher *m, const unsigned char *keep, size_t count, PyObject *hashes,
                      int64_t first_index)
{
    size_t dlen = m->delim_len, total = 0, kept = 0;
    if (count > m->rec_len) { /* cannot happen while push() and chunks are kept apart */
        PyErr_SetString(PyExc_RuntimeError, "more decisions than pending records");
        return NULL;
    }
    for (size_t k = 0; k < count; k++) {
        kept += keep[k];
        if ((keep[k] != 0) != (m->inverse != 0)) {
            int bare = m->final_without_delimiter && k + 1 == m->rec_len;
            total += m->rec_end[k] - m->rec_start[k] + (bare ? 0 : dlen);
        }
    }
    size_t nruns = 0; /* runs of skipped records */
    for (size_t k = 0; k < count; k++) nruns += !keep[k] && (k == 0 || keep[k - 1]);
    PyObject *out = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)total);
    /* Where each skipped run lies in `out` (bytes written before it): markers go there. */
    PyObject *offsets = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(nruns * 8));
    /* The runs as int64 pairs (start, stop), or with run_heads a list of (start, stop,
     * first record) tuples. */
    PyObject *runs = m->run_heads ? PyList_New(0)
                                  : PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(nruns * 16));
    if (out == NULL || runs == NULL || offsets == NULL) goto fail;
    char *dst = PyBytes_AS_STRING(out), *offset = PyBytes_AS_STRING(offsets);
    size_t k = 0;
    while (k < count) { /* written records leave as contiguous ranges of the input */
        int written = (keep[k] != 0) != (m->inverse != 0);
        size_t stop = k;
        while (stop < count && ((keep[stop] != 0) != (m->inverse != 0)) == written) stop++;
        if (!keep[k]) { /* a skipped run (written ones are too, with inverse) */
            int64_t at = (int64_t)(dst - PyBytes_AS_STRING(out));
            memcpy(offset, &at, sizeof at);
            offset += sizeof at;
        }
        if (written) {
            int bare = m->final_without_delimiter && stop == m->rec_len;
            size_t from = m->rec_start[k], to = m->rec_end[stop - 1] + (bare ? 0 : dlen);
            memcpy(dst, m->buf + from, to - from);
            dst += to - from;
        }
        k = stop;
    }
    char *packed = m->run_heads ? NULL : PyBytes_AS_STRING(runs);
    for (k = 0; k < count;) { /* runs of skipped records, as tracked indices */
        if (keep[k]) {
            k++;
            continue;
        }
        size_t stop = k;
        while (stop < count && !keep[stop]) stop++;
        int64_t bounds[2] = {first_index + (int64_t)k, first_index + (int64_t)stop};
        if (packed != NULL) {
            memcpy(packed, bounds, sizeof bounds);
            packed += sizeof bounds;
            k = stop;
            continue;
        }
        PyObject *run = Py_BuildValue("(LLy#)", (long long)bounds[0], (long long)bounds[1],
                                      (const char *)m->buf + m->rec_start[k],
                                      (Py_ssize_t)(m->rec_end[k] - m->rec_start[k]));
        if (run == NULL || PyList_Append(runs, run) < 0) {
            Py_XDECREF(run);
            goto fail;
        }
        Py_DECREF(run);
        k = stop;
    }
    size_t rest = m->rec_len - count;
    if (rest && count) {
        memmove(m->rec_start, m->rec_start + count, rest * sizeof(size_t));
        memmove(m->rec_end, m->rec_end + count, rest * sizeof(size_t));
    }
    m->rec_len = rest;
    return Py_BuildValue("(NONnnN)", out, hashes, runs, (Py_ssize_t)count, (Py_ssize_t)kept,
                         offsets);
fail:
    Py_XDECREF(out);
    Py_XDECREF(runs);
    Py_XDECREF(offsets);
    return NULL;
}

static PyObject *Matcher_feed_chunk_in(Matcher *m, PyObject *arg, int *changed);

PyObject *seqdedup_matcher_feed_chunk(Matcher *m, PyObject *arg)
{
    if (seqdedup_matcher_enter(m) < 0) return NULL;
    int changed = 0;
    PyObject *result = Matcher_feed_chunk_in(m, arg, &changed);
    return seqdedup_matcher_leave(m, result, changed);
}

static PyObject *Matcher_feed_chunk_in(Matcher *m, PyObject *arg, int *changed)
{
    if (m->delim == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "the chunk path needs a delimiter");
        return NULL;
    }
    if (m->chunks_finished) {
        PyErr_SetString(PyExc_RuntimeError, "feed_chunk() after finish_chunks()");
        return NULL;
    }
    if (seqdedup_matcher_fed_by(m, 2) < 0) return NULL;
    Py_buffer chunk;
    if (PyObject_GetBuffer(arg, &chunk, PyBUF_SIMPLE) < 0) return NULL;
    *changed = 1;
    /* Drop what was decided: keep the pending records and the incomplete tail. */
    size_t base = m->rec_len ? m->rec_start[0] : m->tail_start;
    if (base) {
        memmove(m->buf, m->buf + base, m->buf_len - base);
        m->buf_len -= base;
        m->tail_start -= base;
        m->scan_from -= base;
        for (size_t k = 0; k < m->rec_len; k++) {
            m->rec_start[k] -= base;
            m->rec_end[k] -= base;
        }
    }
    size_t add = (size_t)chunk.len;
    if (add > SIZE_MAX - m->buf_len - 1 ||
        grow((void **)&m->buf, &m->buf_cap, m->buf_len + add + 1, 1) < 0) {
        PyBuffer_Release(&chunk);
        if (!PyErr_Occurred()) PyErr_NoMemory();
        return NULL;
    }
    if (add) memcpy(m->buf + m->buf_len, chunk.buf, add);
    PyBuffer_Release(&chunk);
    m->buf_len += add;

    size_t first_new = m->rec_len, dlen = m->delim_len;
    const unsigned char *end = m->buf + m->buf_len;
    const unsigned char *p = m->buf + m->scan_from;
    for (;;) {
        const unsigned char *hit = find_delimiter(p, end, m->delim, dlen);
        if (hit == NULL) break;
        if (grow((void **)&m->rec_start, &m->rec_cap, m->rec_len + 1, sizeof(size_t)) < 0 ||
            grow((void **)&m->rec_end, &m->rec_end_cap, m->rec_len + 1, sizeof(size_t)) < 0)
            return NULL;
        m->rec_start[m->rec_len] = m->tail_start;
        m->rec_end[m->rec_len] = (size_t)(hit - m->buf);
        m->rec_len++;
        m->tail_start = (size_t)(hit - m->buf) + dlen;
        p = hit + dlen;
    }
    m->scan_from = m->buf_len >= dlen - 1 ? m->buf_len - (dlen - 1) : 0;
    if (m->scan_from < m->tail_start) m->scan_from = m->tail_start;

    size_t n = m->rec_len - first_new;
    if (grow((void **)&m->scratch_hashes, &m->scratch_hashes_cap, n + 1, sizeof(Hash128)) < 0)
        return NULL;
    Hash128 *h = m->scratch_hashes;
    /* Pure work on the matcher's own memory (busy keeps other calls out): without the
     * GIL when it is large, so other threads run meanwhile. */
    int release = n && m->rec_end[first_new + n - 1] - m->rec_start[first_new] >= GIL_MINSIZE;
    PyThreadState *save = release ? PyEval_SaveThread() : NULL;
    for (size_t k = 0; k < n; k++) {
        size_t i = first_new + k;
        h[k] = record_hash(m, m->buf + m->rec_start[i], m->rec_end[i] - m->rec_start[i]);
    }
    if (save != NULL) PyEval_RestoreThread(save);
    PyObject *hashes = PyBytes_FromStringAndSize((const char *)h, (Py_ssize_t)(n * sizeof(Hash128)));
    if (hashes == NULL) return NULL;
    int64_t first_index = m->next;
    Py_ssize_t count = seqdedup_push_core(m, h, n, 0);
    PyObject *result = count < 0 ? NULL : emit(m, m->keep, (size_t)count, hashes, first_index);
    Py_DECREF(hashes);
    return result;
}

/* End of the chunks. With delimit_final, a final record without a delimiter is written
 * with one (another stream follows), except one that a newline ends in text mode. */
static PyObject *Matcher_finish_chunks_in(Matcher *m, PyObject *args, PyObject *kwds,
                                          int *changed);

PyObject *seqdedup_matcher_finish_chunks(Matcher *m, PyObject *args, PyObject *kwds)
{
    if (seqdedup_matcher_enter(m) < 0) return NULL;
    int changed = 0;
    PyObject *result = Matcher_finish_chunks_in(m, args, kwds, &changed);
    return seqdedup_matcher_leave(m, result, changed);
}

static PyObject *Matcher_finish_chunks_in(Matcher *m, PyObject *args, PyObject *kwds,
                                          int *changed)
{
    static char *kwlist[] = {"delimit_final", NULL};
    int delimit_final = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "|p", kwlist, &delimit_final)) return NULL;
    if (m->delim == NULL || m->chunks_finished) {
        PyErr_SetString(PyExc_RuntimeError, "finish_chunks() needs an unfinished chunk path");
        return NULL;
    }
    if (seqdedup_matcher_fed_by(m, 2) < 0) return NULL;
    *changed = 1;
    m->chunks_finished = 1;
    PyObject *hashes;
    Py_ssize_t count = 0;
    int64_t first_index = m->next;
    if (m->tail_start < m->buf_len) { /* a final record without a delimiter */
        if (grow((void **)&m->rec_start, &m->rec_cap, m->rec_len + 1, sizeof(size_t)) < 0 ||
            grow((void **)&m->rec_end, &m->rec_end_cap, m->rec_len + 1, sizeof(size_t)) < 0)
            return NULL;
        size_t first = m->tail_start, len = m->buf_len - first;
        /* Text with another delimiter than a newline: a newline (or CRLF) ending the
         * input ends the last record; it is not part of its key (it is still written,
         * as read). */
        int newline_delimited = m->delim_len == 1 && m->delim[0] == '\n';
        size_t key_len = len;
        if (!m->byte_mode && !newline_delimited && len > 0 && m->buf[first + len - 1] == '\n') {
            key_len--;
            if (key_len > 0 && m->buf[first + key_len - 1] == '\r') key_len--;
        }
        if (delimit_final && key_len == len) { /* written as if the input had it */
            if (m->delim_len > SIZE_MAX - m->buf_len - 1 ||
                grow((void **)&m->buf, &m->buf_cap, m->buf_len + m->delim_len + 1, 1) < 0) {
                if (!PyErr_Occurred()) PyErr_NoMemory();
                return NULL;
            }
            memcpy(m->buf + m->buf_len, m->delim, m->delim_len);
            m->buf_len += m->delim_len;
        } else {
            m->final_without_delimiter = 1;
        }
        m->rec_start[m->rec_len] = first;
        m->rec_end[m->rec_len] = first + len;
        m->rec_len++;
        m->tail_start = m->buf_len;
        Hash128 h = record_hash(m, m->buf + first, key_len);
        hashes = PyBytes_FromStringAndSize((const char *)&h, sizeof h);
        if (hashes == NULL) return NULL;
        count = seqdedup_push_core(m, &h, 1, 0);
    } else {
        hashes = PyBytes_FromStringAndSize(NULL, 0);
        if (hashes == NULL) return NULL;
    }
    Py_ssize_t rest = count < 0 ? -1 : seqdedup_finish_core(m, (size_t)count);
    PyObject *result =
        rest < 0 ? NULL : emit(m, m->keep, (size_t)(count + rest), hashes, first_index);
    Py_DECREF(hashes);
    return result;
}
