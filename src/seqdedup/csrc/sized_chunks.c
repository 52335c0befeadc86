/*
 * A minimum size (-w auto, --min-bytes) on the chunk path: a SizeDecider (sized.c)
 * attached to a chunk Matcher decides its records in place of the window rule; the
 * chunk path (chunks.c) splits the records and writes the output as for any rule, and
 * asks here for the keys' hashes and sizes and the decider's keep flags.
 */
#include "sized.h"

/* Key hashes and key sizes (bytes) of pending records [from, to) into scratch; how
 * many, or -1. */
Py_ssize_t seqdedup_hash_sized_pending(Matcher *m, size_t from, size_t to, Hash128 **hashes,
                                       int64_t **sizes)
{
    size_t n = to - from;
    if (grow((void **)&m->scratch_hashes, &m->scratch_hashes_cap, n + 1, sizeof(Hash128)) < 0 ||
        grow((void **)&m->scratch_sizes, &m->scratch_sizes_cap, n + 1, sizeof(int64_t)) < 0)
        return -1;
    for (size_t i = from; i < to; i++) {
        size_t size;
        m->scratch_hashes[i - from] = seqdedup_key_hash_sized(
            m->buf + m->rec_start[i], m->rec_end[i] - m->rec_start[i], m->fields, m->skip,
            m->byte_mode, m->normalize, m->seed, &size);
        m->scratch_sizes[i - from] = (int64_t)size; /* (a record is far below 2^63 bytes) */
    }
    *hashes = m->scratch_hashes;
    *sizes = m->scratch_sizes;
    return (Py_ssize_t)n;
}

/* The attached SizeDecider takes n more records (and with `finish` the stream ends, as
 * its finish() does): its keep flags into m->keep, as the window rule's would be; how
 * many records they decide, or -1 (the decider then unusable, as after a failed call). */
Py_ssize_t seqdedup_push_sized(Matcher *m, const Hash128 *h, const int64_t *sizes, size_t n,
                               int finish)
{
    SizeDecider *d = (SizeDecider *)m->sized;
    if (!d->ready || d->broken || d->busy) {
        PyErr_SetString(PyExc_RuntimeError, "the attached SizeDecider is not usable");
        return -1;
    }
    d->busy = 1;
    d->out_len = 0;
    int rc = sized_reserve(d, n);
    for (size_t k = 0; k < n && rc == 0; k++) rc = sized_append(d, h[k], sizes[k]);
    if (rc == 0) rc = sized_steps(d, d->total - (int64_t)n);
    if (rc == 0) rc = sized_sweep(d);
    if (rc == 0 && finish) {
        rc = sized_release(d, d->total - 1);
        d->n_next = d->m_start = d->stream = d->total;
    }
    d->busy = 0;
    if (rc < 0 || grow((void **)&m->keep, &m->keep_cap, d->out_len + 1, 1) < 0) {
        d->broken = 1;
        return -1;
    }
    if (d->out_len) memcpy(m->keep, d->out, d->out_len);
    m->next += (int64_t)d->out_len;
    return (Py_ssize_t)d->out_len;
}

/* attach_sized(decider): see the method's docstring (matcher_type.c). */
PyObject *seqdedup_matcher_attach_sized(Matcher *m, PyObject *decider)
{
    if (seqdedup_matcher_enter(m) < 0) return NULL;
    if (!seqdedup_is_size_decider(decider)) return seqdedup_matcher_leave(m, NULL, 0);
    SizeDecider *d = (SizeDecider *)decider;
    const char *refused = NULL;
    if (m->sized != NULL || m->fed_by != 0 || m->delim == NULL)
        refused = "attach_sized() comes once, before the first chunk of a chunk matcher";
    else if (m->filtered || m->early || m->inverse || m->run_heads ||
             (m->new_material != NULL && m->new_material != Py_None))
        refused = "attach_sized() needs a matcher without filters, early settling, inverse, "
                  "run heads or new material";
    else if (!d->ready || d->broken || d->busy || d->total || d->tracking)
        refused = "attach_sized() needs a fresh SizeDecider";
    if (refused != NULL) {
        PyErr_SetString(PyExc_RuntimeError, refused);
        return seqdedup_matcher_leave(m, NULL, 0);
    }
    Py_INCREF(decider);
    m->sized = decider;
    Py_INCREF(Py_None);
    return seqdedup_matcher_leave(m, Py_None, 0);
}
