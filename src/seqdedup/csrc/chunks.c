/*
 * The chunk path: raw input in, kept records out. A chunk is appended to the
 * matcher's buffer, split on the delimiter in place, each record's key hashed (without
 * the GIL when the chunk is large), the windows decided, and the kept records written as
 * contiguous ranges of the input, with no Python object per record.
 *
 * With filters (a Matcher made with filtered=True) the same happens in two steps:
 * split_chunk() splits and hands Python the new records as one region, Python's filters
 * classify them in one pass, and decide_split(mask) hashes the tracked ones, decides
 * them and writes the output, passed-through records in their place.
 */
#include "kernel.h"
#include "siphash.h"

const unsigned char *seqdedup_find_delimiter(const unsigned char *p, const unsigned char *end,
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

/* A record's key hash; the whole record's (no key options: the common case) inline,
 * reading its last word in one load from the chunk buffer where that holds 8 bytes. */
static inline Hash128 record_hash(const Matcher *m, const unsigned char *p, size_t len)
{
    if (m->fields | m->skip | m->normalize)
        return seqdedup_key_hash(p, len, m->fields, m->skip, m->byte_mode, m->normalize, m->seed);
    Hash128 h;
    sip128_in(p, len, (size_t)(m->buf + m->buf_len - p), m->seed.lo, m->seed.hi, &h.lo, &h.hi);
    return h;
}

/* Room for one more pending record (its bounds and, filtered, its mask). */
static int reserve_record(Matcher *m)
{
    if (grow((void **)&m->rec_start, &m->rec_cap, m->rec_len + 1, sizeof(size_t)) < 0 ||
        grow((void **)&m->rec_end, &m->rec_end_cap, m->rec_len + 1, sizeof(size_t)) < 0)
        return -1;
    if (m->filtered && grow((void **)&m->rec_tracked, &m->rec_tracked_cap, m->rec_len + 1, 1) < 0)
        return -1;
    return 0;
}

/* Which pending records the decisions of the last push reach, and what is written:
 * flags[i] for released record i is 1 when it is kept (or passed through), 0 when
 * skipped; m->tracked_at[d] is the pending index of decision d. Returns how many
 * pending records are released (all `count` decisions are used), or -1. */
static Py_ssize_t release(Matcher *m, const unsigned char *keep, size_t count,
                          unsigned char **flags)
{
    /* (settle() marks the records after the released ones in the same array) */
    if (grow((void **)&m->released_flags, &m->released_flags_cap, m->rec_len + 1, 1) < 0)
        return -1;
    if (!m->filtered) {
        if (count > m->rec_len) { /* cannot happen while push() and chunks are kept apart */
            PyErr_SetString(PyExc_RuntimeError, "more decisions than pending records");
            return -1;
        }
        *flags = (unsigned char *)keep;
        return (Py_ssize_t)count;
    }
    /* filtered: passed-through records go with the decided ones before them; the first
     * undecided tracked record (and all after it) waits */
    if (grow((void **)&m->tracked_at, &m->tracked_at_cap, count + 1, sizeof(size_t)) < 0)
        return -1;
    unsigned char *out = m->released_flags;
    size_t used = 0, i = 0;
    for (; i < m->rec_classified; i++) {
        if (!m->rec_tracked[i]) {
            out[i] = 1;
            continue;
        }
        if (used == count) break;
        m->tracked_at[used] = i;
        out[i] = keep[used++];
    }
    if (used != count) {
        PyErr_SetString(PyExc_RuntimeError, "more decisions than tracked records");
        return -1;
    }
    *flags = out;
    return (Py_ssize_t)i;
}

/* The pending records after the `released` ones whose decision is certain already (see
 * settled.c), with early=True: *from is the first not written yet; returns the end
 * (a pending index); released_flags[i] for i in [from, end) says whether i is written. */
static size_t settle(Matcher *m, size_t released, size_t *from)
{
    size_t p = released + (m->early_out > released ? m->early_out - released : 0);
    *from = p;
    if (!m->early) return p;
    int64_t settled = seqdedup_settled(m), tracked = m->next;
    size_t classified = m->filtered ? m->rec_classified : m->rec_len;
    for (size_t i = released; i < p; i++) tracked += !m->filtered || m->rec_tracked[i];
    for (; p < classified; p++) {
        int written;
        if (m->filtered && !m->rec_tracked[p]) {
            written = !m->inverse; /* passed through */
        } else {
            if (tracked >= settled) break;
            written = (tracked > m->cover) != (m->inverse != 0);
            tracked++;
        }
        m->released_flags[p] = (unsigned char)written;
    }
    return p;
}

/* A record's bytes as written: the record, then its delimiter, or for the final record
 * without one what ended the input after it (nothing, or a newline or CRLF). */
static inline size_t record_bytes(const Matcher *m, size_t k)
{
    int bare = m->final_without_delimiter && k + 1 == m->rec_len;
    return m->rec_end[k] - m->rec_start[k] + (bare ? m->final_suffix : m->delim_len);
}

#define HEAD_SEARCH 64 /* records of a run looked at for one that is not blank */

/* Whether a record holds only ASCII white space (or nothing). */
static int all_blank(const unsigned char *text, size_t length)
{
    for (size_t i = 0; i < length; i++) {
        unsigned char c = text[i];
        if (!(c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f')) return 0;
    }
    return 1;
}

/* Turn the decided records into the output, the skipped runs (in tracked indices from
 * first_index) and the counts; then drop the released records from the pending ones.
 * Records settled earlier were written then; records settled now are written after the
 * decided ones (both in input order).
 * Returns (output, hashes, runs, decided, kept, run_offsets), or with filters (output,
 * hashes, runs, decided, kept, numbers, released). */
static PyObject *emit(Matcher *m, const unsigned char *keep, size_t count, PyObject *hashes,
                      int64_t first_index)
{
    unsigned char *flag;
    Py_ssize_t released_n = release(m, keep, count, &flag);
    if (released_n < 0) return NULL;
    size_t released = (size_t)released_n, dlen = m->delim_len, total = 0, kept = 0;
    size_t written_before = m->early_out < released ? m->early_out : released;
    size_t settled_from, settled_end = settle(m, released, &settled_from);
    for (size_t k = 0; k < released; k++) {
        kept += flag[k];
        if (k >= written_before && (flag[k] != 0) != (m->inverse != 0)) total += record_bytes(m, k);
    }
    for (size_t k = settled_from; k < settled_end; k++)
        if (m->released_flags[k]) total += record_bytes(m, k);
    size_t nruns = 0; /* runs of skipped records */
    for (size_t k = 0; k < count; k++) nruns += !keep[k] && (k == 0 || keep[k - 1]);
    PyObject *out = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)total);
    /* Where each skipped run lies in `out` (bytes written before it): markers go there.
     * With filters, the input record number of each decided tracked record instead. */
    PyObject *offsets = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)((m->filtered ? count : nruns) * 8));
    /* The runs as int64 pairs (start, stop), or with run_heads a list of (start, stop,
     * first record) tuples (with RUN_RECORDS, the bytes of all the run's records). */
    PyObject *runs = m->run_heads ? PyList_New(0)
                                  : PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(nruns * 16));
    if (out == NULL || runs == NULL || offsets == NULL) goto fail;
    char *dst = PyBytes_AS_STRING(out), *offset = PyBytes_AS_STRING(offsets);
    size_t k = 0;
    while (k < released) { /* written records leave as contiguous ranges of the input */
        int written = (flag[k] != 0) != (m->inverse != 0);
        size_t limit = k < written_before ? written_before : released, stop = k;
        while (stop < limit && ((flag[stop] != 0) != (m->inverse != 0)) == written) stop++;
        if (!flag[k] && (k == 0 || flag[k - 1]) && !m->filtered) { /* a skipped run starts */
            int64_t at = (int64_t)(dst - PyBytes_AS_STRING(out));
            memcpy(offset, &at, sizeof at);
            offset += sizeof at;
        }
        if (written && k >= written_before) {
            int bare = m->final_without_delimiter && stop == m->rec_len;
            size_t from = m->rec_start[k],
                   to = m->rec_end[stop - 1] + (bare ? m->final_suffix : dlen);
            memcpy(dst, m->buf + from, to - from);
            dst += to - from;
        }
        k = stop;
    }
    for (k = settled_from; k < settled_end; k++) { /* settled: written now, decided later */
        if (!m->released_flags[k]) continue;
        size_t size = record_bytes(m, k);
        memcpy(dst, m->buf + m->rec_start[k], size);
        dst += size;
    }
    m->early_out = settled_end - released;
    if (m->filtered) {
        for (size_t d = 0; d < count; d++) {
            int64_t number = m->released_total + (int64_t)m->tracked_at[d] + 1;
            memcpy(offset + 8 * d, &number, 8);
        }
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
        /* --top shows a run's first record that is not blank (of its first
         * HEAD_SEARCH; else its first): a block that begins with an empty line. */
        size_t shown = k;
        for (size_t j = k; m->run_heads == RUN_HEADS && j < stop && j - k < HEAD_SEARCH; j++) {
            size_t r = m->filtered ? m->tracked_at[j] : j;
            if (!all_blank(m->buf + m->rec_start[r], m->rec_end[r] - m->rec_start[r])) {
                shown = j;
                break;
            }
        }
        size_t head = m->filtered ? m->tracked_at[shown] : shown;
        /* That record, or (unfiltered: the run's records lie together) all of them. */
        size_t end = m->run_heads == RUN_RECORDS && !m->filtered ? m->rec_end[stop - 1]
                                                                 : m->rec_end[head];
        PyObject *run = Py_BuildValue("(LLy#)", (long long)bounds[0], (long long)bounds[1],
                                      (const char *)m->buf + m->rec_start[head],
                                      (Py_ssize_t)(end - m->rec_start[head]));
        if (run == NULL || PyList_Append(runs, run) < 0) {
            Py_XDECREF(run);
            goto fail;
        }
        Py_DECREF(run);
        k = stop;
    }
    if (seqdedup_take_stretches(m, count, first_index) < 0) goto fail;
    size_t rest = m->rec_len - released;
    if (rest && released) {
        memmove(m->rec_start, m->rec_start + released, rest * sizeof(size_t));
        memmove(m->rec_end, m->rec_end + released, rest * sizeof(size_t));
        if (m->filtered) memmove(m->rec_tracked, m->rec_tracked + released, rest);
    }
    m->rec_len = rest;
    if (m->filtered) {
        m->rec_classified -= released;
        m->released_total += (int64_t)released;
        return Py_BuildValue("(NONnnNn)", out, hashes, runs, (Py_ssize_t)count, (Py_ssize_t)kept,
                             offsets, (Py_ssize_t)released);
    }
    return Py_BuildValue("(NONnnN)", out, hashes, runs, (Py_ssize_t)count, (Py_ssize_t)kept,
                         offsets);
fail:
    Py_XDECREF(out);
    Py_XDECREF(runs);
    Py_XDECREF(offsets);
    return NULL;
}

/* Append a chunk and split what is complete into pending records; the index of the
 * first new one, or -1. */
static Py_ssize_t append_and_split(Matcher *m, PyObject *arg, int *changed)
{
    Py_buffer chunk;
    if (PyObject_GetBuffer(arg, &chunk, PyBUF_SIMPLE) < 0) return -1;
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
        return -1;
    }
    if (add) memcpy(m->buf + m->buf_len, chunk.buf, add);
    PyBuffer_Release(&chunk);
    m->buf_len += add;

    size_t first_new = m->rec_len, dlen = m->delim_len;
    const unsigned char *end = m->buf + m->buf_len;
    const unsigned char *p = m->buf + m->scan_from;
    for (;;) {
        const unsigned char *hit = seqdedup_find_delimiter(p, end, m->delim, dlen);
        if (hit == NULL) break;
        if (reserve_record(m) < 0) return -1;
        m->rec_start[m->rec_len] = m->tail_start;
        m->rec_end[m->rec_len] = (size_t)(hit - m->buf);
        m->rec_len++;
        m->tail_start = (size_t)(hit - m->buf) + dlen;
        p = hit + dlen;
    }
    m->scan_from = m->buf_len >= dlen - 1 ? m->buf_len - (dlen - 1) : 0;
    if (m->scan_from < m->tail_start) m->scan_from = m->tail_start;
    return (Py_ssize_t)first_new;
}

/* The key hashes of pending records [from, to) whose mask is 1 (all without a mask)
 * into h; how many. Touches no Python object. */
static size_t hash_records_of(const Matcher *m, size_t from, size_t to,
                              const unsigned char *mask, Hash128 *h)
{
    size_t made = 0;
    for (size_t i = from; i < to; i++)
        if (mask == NULL || mask[i - from])
            h[made++] = record_hash(m, m->buf + m->rec_start[i], m->rec_end[i] - m->rec_start[i]);
    return made;
}

/* Key hashes of pending records [from, to) (those whose mask is 1, with filters) into
 * scratch; how many, or -1. */
static Py_ssize_t hash_pending(Matcher *m, size_t from, size_t to, const unsigned char *mask,
                               Hash128 **out)
{
    size_t n = to - from;
    if (grow((void **)&m->scratch_hashes, &m->scratch_hashes_cap, n + 1, sizeof(Hash128)) < 0)
        return -1;
    size_t made;
    /* Pure work on the matcher's own memory (busy keeps other calls out): without the
     * GIL when it is large, so other threads run meanwhile. */
    WITHOUT_GIL(n && m->rec_end[to - 1] - m->rec_start[from] >= GIL_MINSIZE,
                made = hash_records_of(m, from, to, mask, m->scratch_hashes));
    *out = m->scratch_hashes;
    return (Py_ssize_t)made;
}

/* Decide n more tracked records (seqdedup_push_core), without the GIL when a batch is
 * large and nothing on the way needs Python (no new-material list to append to): the
 * statistics' attribution of the chunk before runs on another thread meanwhile. */
static Py_ssize_t push_chunk(Matcher *m, const Hash128 *h, size_t n)
{
    if (n < PUSH_UNLOCKED_MIN || (m->new_material != NULL && m->new_material != Py_None))
        return seqdedup_push_core(m, h, n, 0);
    Py_ssize_t count;
    WITHOUT_GIL(1, count = seqdedup_push_core(m, h, n, 0));
    return count;
}

/* ---- feeding ------------------------------------------------------------------------ */

static PyObject *Matcher_feed_chunk_in(Matcher *m, PyObject *arg, int *changed);

PyObject *seqdedup_matcher_feed_chunk(Matcher *m, PyObject *arg)
{
    if (seqdedup_matcher_enter(m) < 0) return NULL;
    int changed = 0;
    PyObject *result = Matcher_feed_chunk_in(m, arg, &changed);
    return seqdedup_matcher_leave(m, result, changed);
}

/* Whether the chunk path may take more input in this mode (else an error is set). */
static int chunks_open(Matcher *m, int filtered)
{
    if (m->delim == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "the chunk path needs a delimiter");
        return 0;
    }
    if (m->chunks_finished) {
        PyErr_SetString(PyExc_RuntimeError, "more input after the end of the chunks");
        return 0;
    }
    if (m->filtered != filtered) {
        PyErr_SetString(PyExc_RuntimeError,
                        filtered ? "split_chunk() needs a Matcher made with filtered=True"
                                 : "a filtered Matcher takes split_chunk() and decide_split()");
        return 0;
    }
    return seqdedup_matcher_fed_by(m, 2) == 0;
}

static PyObject *Matcher_feed_chunk_in(Matcher *m, PyObject *arg, int *changed)
{
    if (!chunks_open(m, 0)) return NULL;
    Py_ssize_t first_new = append_and_split(m, arg, changed);
    if (first_new < 0) return NULL;
    Hash128 *h;
    int64_t *sizes = NULL;
    Py_ssize_t n = m->sized != NULL
                       ? seqdedup_hash_sized_pending(m, (size_t)first_new, m->rec_len, &h, &sizes)
                       : hash_pending(m, (size_t)first_new, m->rec_len, NULL, &h);
    if (n < 0) return NULL;
    PyObject *hashes = PyBytes_FromStringAndSize((const char *)h, n * (Py_ssize_t)sizeof(Hash128));
    if (hashes == NULL) return NULL;
    int64_t first_index = m->next;
    Py_ssize_t count = m->sized != NULL ? seqdedup_push_sized(m, h, sizes, (size_t)n, 0)
                                        : push_chunk(m, h, (size_t)n);
    PyObject *result = count < 0 ? NULL : emit(m, m->keep, (size_t)count, hashes, first_index);
    Py_DECREF(hashes);
    return result;
}

/* The final record without a delimiter, if any, made pending: 1, 0 (none) or -1. With
 * delimit_final, it is written with one (another stream follows), except one that a
 * newline ends in text mode. With drop_final, those bytes are no record (the input was
 * cut short inside one): they are dropped. */
static int final_record(Matcher *m, int delimit_final, int drop_final)
{
    m->chunks_finished = 1;
    m->final_suffix = 0;
    if (drop_final) m->buf_len = m->tail_start; /* (no record points past it) */
    if (m->tail_start >= m->buf_len) return 0;
    if (reserve_record(m) < 0) return -1;
    size_t first = m->tail_start, len = m->buf_len - first;
    /* Text with another delimiter than a newline: a newline (or CRLF) ending the input
     * ends the last record; it is not part of the record (its key, its fold line, what a
     * library saves), and is written after it as read, as a delimiter would be. */
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
            return -1;
        }
        memcpy(m->buf + m->buf_len, m->delim, m->delim_len);
        m->buf_len += m->delim_len;
    } else {
        m->final_without_delimiter = 1;
    }
    m->rec_start[m->rec_len] = first;
    m->rec_end[m->rec_len] = first + key_len;
    m->rec_len++;
    m->tail_start = m->buf_len;
    m->final_suffix = len - key_len;
    return 1;
}

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
    static char *kwlist[] = {"delimit_final", "drop_final", NULL};
    int delimit_final = 0, drop_final = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "|pp", kwlist, &delimit_final, &drop_final))
        return NULL;
    if (!chunks_open(m, 0)) return NULL;
    *changed = 1;
    int64_t first_index = m->next;
    int made = final_record(m, delimit_final, drop_final);
    if (made < 0) return NULL;
    Hash128 *h;
    int64_t *sizes = NULL;
    size_t from = m->rec_len - (size_t)made;
    Py_ssize_t n = m->sized != NULL ? seqdedup_hash_sized_pending(m, from, m->rec_len, &h, &sizes)
                                    : hash_pending(m, from, m->rec_len, NULL, &h);
    if (n < 0) return NULL;
    PyObject *hashes = PyBytes_FromStringAndSize((const char *)h, n * (Py_ssize_t)sizeof(Hash128));
    if (hashes == NULL) return NULL;
    Py_ssize_t count, rest;
    if (m->sized != NULL) { /* (its flags of the whole stream's end at once) */
        count = seqdedup_push_sized(m, h, sizes, (size_t)n, 1);
        rest = count < 0 ? -1 : 0;
    } else {
        count = n ? seqdedup_push_core(m, h, (size_t)n, 0) : 0;
        rest = count < 0 ? -1 : seqdedup_finish_core(m, (size_t)count);
    }
    PyObject *result =
        rest < 0 ? NULL : emit(m, m->keep, (size_t)(count + rest), hashes, first_index);
    Py_DECREF(hashes);
    return result;
}

/* ---- the filtered chunk path ----------------------------------------------------- */

/* (region, bounds, first): the pending records not yet classified, as one bytes object
 * and int64 (start, end) pairs into it, and the 0-based input index of the first. */
static PyObject *unclassified(Matcher *m)
{
    size_t from = m->rec_classified, n = m->rec_len - from;
    size_t base = n ? m->rec_start[from] : 0, top = n ? m->rec_end[m->rec_len - 1] : 0;
    if (n > (size_t)PY_SSIZE_T_MAX / 16) return PyErr_NoMemory();
    PyObject *region = PyBytes_FromStringAndSize((const char *)m->buf + base, (Py_ssize_t)(top - base));
    PyObject *bounds = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(n * 16));
    if (region == NULL || bounds == NULL) {
        Py_XDECREF(region);
        Py_XDECREF(bounds);
        return NULL;
    }
    char *dst = PyBytes_AS_STRING(bounds);
    for (size_t i = from; i < m->rec_len; i++) {
        int64_t pair[2] = {(int64_t)(m->rec_start[i] - base), (int64_t)(m->rec_end[i] - base)};
        if (pair[1] > (int64_t)(top - base)) pair[1] = (int64_t)(top - base);
        memcpy(dst + 16 * (i - from), pair, 16);
    }
    return Py_BuildValue("(NNL)", region, bounds, (long long)(m->released_total + (int64_t)from));
}

static PyObject *Matcher_split_chunk_in(Matcher *m, PyObject *arg, int *changed)
{
    if (!chunks_open(m, 1)) return NULL;
    if (m->rec_classified != m->rec_len) {
        PyErr_SetString(PyExc_RuntimeError, "split_chunk() before the last split was decided");
        return NULL;
    }
    if (append_and_split(m, arg, changed) < 0) return NULL;
    return unclassified(m);
}

PyObject *seqdedup_matcher_split_chunk(Matcher *m, PyObject *arg)
{
    if (seqdedup_matcher_enter(m) < 0) return NULL;
    int changed = 0;
    PyObject *result = Matcher_split_chunk_in(m, arg, &changed);
    return seqdedup_matcher_leave(m, result, changed);
}

static PyObject *Matcher_split_final_in(Matcher *m, PyObject *args, PyObject *kwds, int *changed)
{
    static char *kwlist[] = {"delimit_final", "drop_final", NULL};
    int delimit_final = 0, drop_final = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "|pp", kwlist, &delimit_final, &drop_final))
        return NULL;
    if (!chunks_open(m, 1)) return NULL;
    if (m->rec_classified != m->rec_len) {
        PyErr_SetString(PyExc_RuntimeError, "split_final() before the last split was decided");
        return NULL;
    }
    *changed = 1;
    if (final_record(m, delimit_final, drop_final) < 0) return NULL;
    return unclassified(m);
}

PyObject *seqdedup_matcher_split_final(Matcher *m, PyObject *args, PyObject *kwds)
{
    if (seqdedup_matcher_enter(m) < 0) return NULL;
    int changed = 0;
    PyObject *result = Matcher_split_final_in(m, args, kwds, &changed);
    return seqdedup_matcher_leave(m, result, changed);
}

static PyObject *Matcher_decide_split_in(Matcher *m, PyObject *arg, int *changed)
{
    if (!m->filtered || m->delim == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "decide_split() needs a filtered chunk path");
        return NULL;
    }
    Py_buffer mask;
    if (PyObject_GetBuffer(arg, &mask, PyBUF_SIMPLE) < 0) return NULL;
    size_t from = m->rec_classified, n = m->rec_len - from;
    if ((size_t)mask.len != n) {
        PyBuffer_Release(&mask);
        PyErr_SetString(PyExc_ValueError, "the mask must have one byte per record split");
        return NULL;
    }
    *changed = 1;
    for (size_t i = 0; i < n; i++) m->rec_tracked[from + i] = ((const unsigned char *)mask.buf)[i] != 0;
    m->rec_classified = m->rec_len;
    Hash128 *h;
    Py_ssize_t tracked = hash_pending(m, from, m->rec_len, m->rec_tracked + from, &h);
    PyBuffer_Release(&mask);
    if (tracked < 0) return NULL;
    PyObject *hashes =
        PyBytes_FromStringAndSize((const char *)h, tracked * (Py_ssize_t)sizeof(Hash128));
    if (hashes == NULL) return NULL;
    int64_t first_index = m->next;
    Py_ssize_t count = tracked ? push_chunk(m, h, (size_t)tracked) : 0;
    if (count >= 0 && m->chunks_finished) { /* the end: the tracked records left */
        Py_ssize_t rest = seqdedup_finish_core(m, (size_t)count);
        count = rest < 0 ? -1 : count + rest;
    }
    PyObject *result = count < 0 ? NULL : emit(m, m->keep, (size_t)count, hashes, first_index);
    Py_DECREF(hashes);
    return result;
}

PyObject *seqdedup_matcher_decide_split(Matcher *m, PyObject *arg)
{
    if (seqdedup_matcher_enter(m) < 0) return NULL;
    int changed = 0;
    PyObject *result = Matcher_decide_split_in(m, arg, &changed);
    return seqdedup_matcher_leave(m, result, changed);
}
