/*
 * A loaded library's windows into the matcher (the windows of library sequences are
 * seen for the whole run): given as fingerprints and starts (add_library_windows), or as
 * the library's key region and where each sequence lies in it (add_library_region: the
 * fingerprints are rolled here a sequence at a time, with no array of every window).
 * Both put them into the first-start table a batch at a time in slot order. The
 * earliest library window of a content wins; library starts are negative (the
 * region's last record, a sentinel, at -1).
 */
#include "kernel.h"
#include "first_table.h"

#define LIBRARY_BLOCK 4096 /* windows fingerprinted at once */
#define LIBRARY_BATCH ((size_t)1 << 20) /* windows put into the table in slot order */
#define SPAN_BYTES 32768  /* table bytes a bucket of a batch covers, about */

/* Keep the library's key region, against which windows are confirmed (W > 1; given
 * once): held in place when its buffer is aligned (the matcher holds its exporter,
 * which cannot be resized while held: no copy of a library's keys), else a copy. */
static int keep_region(Matcher *m, const Py_buffer *region, int *changed)
{
    if (region->buf == NULL || m->region != NULL) {
        PyErr_SetString(PyExc_ValueError, m->region ? "the library region is given once"
                                                    : "library windows need their key region (W > 1)");
        return -1;
    }
    size_t len = (size_t)region->len / sizeof(Hash128);
    Py_buffer *held = &m->region_view;
    if (region->obj != NULL && (uintptr_t)region->buf % sizeof(uint64_t) == 0) {
        if (PyObject_GetBuffer(region->obj, held, PyBUF_C_CONTIGUOUS) == 0) {
            if (held->buf == region->buf && held->len == region->len) {
                m->region = held->buf;
                m->region_len = len;
                *changed = 1;
                return 0;
            }
            PyBuffer_Release(held); /* (another view of it than the one given: copied) */
        } else {
            PyErr_Clear();
        }
    }
    Hash128 *copy = PyMem_RawMalloc(len * sizeof(Hash128) + 1);
    if (copy == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    if (len) memcpy(copy, region->buf, len * sizeof(Hash128));
    m->region = copy;
    m->region_len = len;
    *changed = 1;
    return 0;
}

static int before_any_push(const Matcher *m)
{
    if (m->next == 0 && m->tail_len == 0) return 1;
    PyErr_SetString(PyExc_RuntimeError, "library windows must be added before any push");
    return 0;
}

/* A batch of library windows for the first-start table, put in in slot order: a
 * random insert per window misses the cache (and the TLB) each time once the table
 * is large; windows sorted by their slot's place (a stable counting sort by the top
 * bits of the slot's hash, so that of equal fingerprints the earlier still comes
 * first) fill each stretch of the table while it is in cache. */
typedef struct {
    Hash128 fp;
    int64_t start;
} Pending;

typedef struct {
    Pending *items, *sorted;
    size_t len, cap, *counts;
    int bits; /* buckets: 1 << bits */
} Batch;

/* A batch for `windows` windows into table t (at most LIBRARY_BATCH at a time). */
static int batch_open(Batch *b, const FirstTable *t, size_t windows)
{
    b->bits = 0;
    while (b->bits < 16 && ((size_t)1 << b->bits) * SPAN_BYTES < t->cap * FT_SLOT) b->bits++;
    b->len = 0;
    b->cap = windows < LIBRARY_BATCH ? (windows ? windows : 1) : LIBRARY_BATCH;
    b->items = PyMem_RawMalloc(b->cap * sizeof(Pending));
    b->sorted = PyMem_RawMalloc(b->cap * sizeof(Pending));
    b->counts = PyMem_RawCalloc(((size_t)1 << b->bits) + 1, sizeof(size_t));
    if (b->items && b->sorted && b->counts) return 0;
    PyErr_NoMemory();
    return -1;
}

static void batch_close(Batch *b)
{
    PyMem_RawFree(b->items);
    PyMem_RawFree(b->sorted);
    PyMem_RawFree(b->counts);
}

/* The bucket of a window: the top bits of the hash its slot comes from. */
static inline size_t bucket_of(const Batch *b, Hash128 fp)
{
    return b->bits ? (size_t)(hash_mix(fp) >> (64 - b->bits)) : 0;
}

/* Put the batch's windows into the table, in slot order. */
static int batch_flush(Batch *b, FirstTable *t)
{
    size_t buckets = (size_t)1 << b->bits, *counts = b->counts;
    memset(counts, 0, (buckets + 1) * sizeof(size_t));
    for (size_t k = 0; k < b->len; k++) counts[bucket_of(b, b->items[k].fp) + 1]++;
    for (size_t k = 1; k <= buckets; k++) counts[k] += counts[k - 1];
    for (size_t k = 0; k < b->len; k++) b->sorted[counts[bucket_of(b, b->items[k].fp)]++] = b->items[k];
    for (size_t k = 0; k < b->len; k++) {
        int64_t first;
        if (ft_first_start(t, b->sorted[k].fp, b->sorted[k].start, &first) < 0) return -1;
    }
    b->len = 0;
    return 0;
}

/* Window `fp` of the library starts at `start`: the first one of its content stays
 * (unlimited history: through the batch, in slot order; else straight into the
 * library's own table). */
static int library_put(Matcher *m, Batch *b, Hash128 fp, int64_t start)
{
    if (m->limited) {
        int created;
        int64_t *v = table_upsert(&m->library, fp, &created);
        if (v == NULL) return -1;
        if (created) v[0] = start;
        return 0;
    }
    b->items[b->len].fp = fp;
    b->items[b->len++].start = start;
    return b->len == b->cap ? batch_flush(b, &m->first) : 0;
}

/* Ready for `windows` library windows (the table sized once for all of them). */
static int library_open(Matcher *m, Batch *b, size_t windows)
{
    if (m->limited) return 0;
    return ft_reserve(&m->first, m->first.size + windows) < 0 ? -1
                                                              : batch_open(b, &m->first, windows);
}

/* All put in: the rest of the batch goes in. */
static int library_close(Matcher *m, Batch *b)
{
    return m->limited ? 0 : batch_flush(b, &m->first);
}

typedef PyObject *(*LibraryCall)(Matcher *m, PyObject *args, int *changed);

/* A method's body between entering and leaving the matcher (which breaks it when the
 * body failed after a change). */
static PyObject *guarded(Matcher *m, PyObject *args, LibraryCall body)
{
    if (seqdedup_matcher_enter(m) < 0) return NULL;
    int changed = 0;
    PyObject *result = body(m, args, &changed);
    return seqdedup_matcher_leave(m, result, changed);
}

static PyObject *Matcher_add_library_windows_in(Matcher *m, PyObject *args, int *changed);

PyObject *seqdedup_matcher_add_library_windows(Matcher *m, PyObject *args)
{
    return guarded(m, args, Matcher_add_library_windows_in);
}

static PyObject *Matcher_add_library_windows_in(Matcher *m, PyObject *args, int *changed)
{
    PyObject *fps_obj, *starts_obj, *region_obj = Py_None;
    if (!PyArg_ParseTuple(args, "OO|O", &fps_obj, &starts_obj, &region_obj)) return NULL;
    if (!before_any_push(m)) return NULL;
    Py_buffer fps, starts, region = {0};
    Batch batch = {0};
    if (seqdedup_get_hashes(fps_obj, &fps) < 0) return NULL;
    if (seqdedup_get_words(starts_obj, &starts, 8) < 0) {
        PyBuffer_Release(&fps);
        return NULL;
    }
    PyObject *result = NULL;
    if (region_obj != Py_None && seqdedup_get_hashes(region_obj, &region) < 0) goto done;
    if (fps.len / 16 != starts.len / 8) {
        PyErr_SetString(PyExc_ValueError, "fingerprints and starts differ in length");
        goto done;
    }
    Py_ssize_t n = starts.len / 8;
    if (n > 0 && m->width > 1) {
        /* the windows are confirmed against their records: the region is kept (once) */
        if (keep_region(m, &region, changed) < 0) goto done;
    }
    if (library_open(m, &batch, (size_t)n) < 0) goto done;
    for (Py_ssize_t k = 0; k < n; k++) {
        Hash128 fp;
        int64_t start;
        memcpy(&fp, (const char *)fps.buf + 16 * k, 16);
        memcpy(&start, (const char *)starts.buf + 8 * k, 8);
        if (start > -(int64_t)m->width - 1 ||
            (m->width > 1 && start < -(int64_t)m->region_len)) {
            PyErr_SetString(PyExc_ValueError,
                            "library starts must lie in the region, at most -W - 1");
            goto done;
        }
        *changed = 1;
        m->settle_off = 1; /* library keys are not noted: nothing is settled early */
        if (library_put(m, &batch, fp, start) < 0) goto done;
    }
    if (library_close(m, &batch) < 0) goto done;
    result = Py_None;
    Py_INCREF(result);
done:
    batch_close(&batch);
    PyBuffer_Release(&fps);
    PyBuffer_Release(&starts);
    if (region.buf != NULL) PyBuffer_Release(&region);
    return result;
}


static PyObject *Matcher_add_library_region_in(Matcher *m, PyObject *args, int *changed);

PyObject *seqdedup_matcher_add_library_region(Matcher *m, PyObject *args)
{
    return guarded(m, args, Matcher_add_library_region_in);
}

/* Check that the sequences (firsts, lengths: int64 each) lie in order in a region of
 * `size` records, each before the region's last record; their windows in *windows. */
static int check_sequences(const int64_t *firsts, const int64_t *lengths, size_t count,
                           size_t size, int64_t width, size_t *windows)
{
    int64_t after = 0; /* where the sequence before ends */
    *windows = 0;
    for (size_t k = 0; k < count; k++) {
        int64_t first = firsts[k], length = lengths[k];
        if (first < after || length < 0 || (uint64_t)first >= size ||
            (uint64_t)length > size - 1 - (uint64_t)first) {
            PyErr_SetString(PyExc_ValueError,
                            "library sequences must lie in order in the region, before its "
                            "last record");
            return -1;
        }
        after = first + length;
        if (length >= width) *windows += (size_t)(length - width + 1);
    }
    return 0;
}

static PyObject *Matcher_add_library_region_in(Matcher *m, PyObject *args, int *changed)
{
    PyObject *region_obj, *firsts_obj, *lengths_obj;
    if (!PyArg_ParseTuple(args, "OOO", &region_obj, &firsts_obj, &lengths_obj)) return NULL;
    if (!before_any_push(m)) return NULL;
    Py_buffer region, firsts = {0}, lengths = {0};
    if (seqdedup_get_hashes(region_obj, &region) < 0) return NULL;
    PyObject *result = NULL;
    Hash128 *block = NULL;
    Batch batch = {0};
    if (seqdedup_get_words(firsts_obj, &firsts, 8) < 0) goto done;
    if (seqdedup_get_words(lengths_obj, &lengths, 8) < 0) goto done;
    if (firsts.len != lengths.len) {
        PyErr_SetString(PyExc_ValueError, "firsts and lengths differ in length");
        goto done;
    }
    size_t count = (size_t)firsts.len / 8, size = (size_t)region.len / sizeof(Hash128);
    const int64_t *first = firsts.buf, *length = lengths.buf;
    size_t windows;
    if (check_sequences(first, length, count, size, m->width, &windows) < 0) goto done;
    if (windows == 0) {
        result = Py_None;
        Py_INCREF(result);
        goto done;
    }
    if (m->width > 1 && keep_region(m, &region, changed) < 0) goto done;
    if (seqdedup_ensure_coefficients(m) < 0) goto done;
    if (library_open(m, &batch, windows) < 0) goto done;
    block = PyMem_RawMalloc(LIBRARY_BLOCK * sizeof(Hash128));
    if (block == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    *changed = 1;
    m->settle_off = 1; /* library keys are not noted: nothing is settled early */
    for (size_t k = 0; k < count; k++) {
        size_t inside = length[k] >= m->width ? (size_t)(length[k] - m->width + 1) : 0;
        for (size_t done = 0; done < inside; done += LIBRARY_BLOCK) {
            size_t take = inside - done < LIBRARY_BLOCK ? inside - done : LIBRARY_BLOCK;
            size_t at = (size_t)first[k] + done;
            if (m->width > 1) /* rolled over the region's aligned copy */
                seqdedup_rolling_fingerprints(m->region + at, take, m->coeffs, m->width, block);
            else /* a 1-record window is its key hash (the buffer may be unaligned) */
                memcpy(block, (const char *)region.buf + at * sizeof(Hash128),
                       take * sizeof(Hash128));
            if (m->force_collisions) seqdedup_collide(m, block, take);
            for (size_t j = 0; j < take; j++) {
                int64_t start = (int64_t)(at + j) - (int64_t)size;
                if (library_put(m, &batch, block[j], start) < 0) goto done;
            }
        }
    }
    if (library_close(m, &batch) < 0) goto done;
    result = Py_None;
    Py_INCREF(result);
done:
    batch_close(&batch);
    PyMem_RawFree(block);
    PyBuffer_Release(&region);
    if (firsts.buf != NULL) PyBuffer_Release(&firsts);
    if (lengths.buf != NULL) PyBuffer_Release(&lengths);
    return result;
}
