/*
 * The Dask engine's two steps over window fingerprints (seqdedup.cluster holds the
 * same definitions in Python, for the pure-Python engine):
 *
 *   first_windows(...)   in one partition: for each window, the first window of the
 *                        partition with its fingerprint; and those first ones as rows
 *                        (fingerprint, position) for each fingerprint's owner
 *   earliest(rows, lib)  at a fingerprint's owner: the rows (fingerprint, position) of
 *                        every partition and the library's fingerprints (position -1);
 *                        for each partition, the rows whose fingerprint occurs earlier
 *
 *   window_keys(...)     before them, per window a key that stands for its content (a
 *                        keyed hash of its key hashes), found by fingerprint and
 *                        confirmed by comparison, so that the steps group contents
 *
 * Keys and fingerprints are 128 bits, two int64 lanes; positions are int64. Every length
 * is checked before anything is read.
 */
#include "kernel.h"
#include "functions.h"

#define PREFETCH_AHEAD 8 /* windows: about what covers a miss to memory */

/* A buffer of int64 groups of `width`: its count of groups, or -1 with ValueError. */
static Py_ssize_t groups_of(const Py_buffer *b, Py_ssize_t width, const char *what)
{
    Py_ssize_t size = width * (Py_ssize_t)sizeof(int64_t);
    if (b->len % size) {
        PyErr_Format(PyExc_ValueError, "%s: %zd int64 values each", what, width);
        return -1;
    }
    return b->len / size;
}

static Hash128 fp_at(const int64_t *values, Py_ssize_t i, Py_ssize_t width)
{
    Hash128 fp = {(uint64_t)values[i * width], (uint64_t)values[i * width + 1]};
    return fp;
}

/* The owner of a fingerprint: its low lane modulo the number of owners. */
static size_t owner_of(Hash128 fp, size_t owners) { return (size_t)(fp.lo % owners); }

/* ---- the first window of each fingerprint in one partition ---------------------------
 * One 64-bit slot per entry: the window's index + 1 in the low FIRST_INDEX_BITS (0: an
 * empty slot) and the top bits of the fingerprint's high lane above them, so a probe
 * reads the fingerprints themselves only when those bits agree. A third of the memory
 * of a Table slot (key and value), hence fewer misses and fewer pages to fault in. */
#define FIRST_INDEX_BITS 40
#define FIRST_INDEX_MASK (((uint64_t)1 << FIRST_INDEX_BITS) - 1)

typedef struct {
    uint64_t *slots;
    size_t mask;
    int shift;
} FirstIndex;

/* Room for n windows at a load of at most 3/4; -1 with MemoryError set. */
static int first_index_init(FirstIndex *x, size_t n)
{
    int bits = 4;
    while (((size_t)1 << bits) * 3 < (n + 1) * 4) {
        if (bits >= 40) return (void)PyErr_NoMemory(), -1;
        bits++;
    }
    x->slots = PyMem_RawCalloc((size_t)1 << bits, sizeof(uint64_t));
    if (x->slots == NULL) return (void)PyErr_NoMemory(), -1;
    x->mask = ((size_t)1 << bits) - 1;
    x->shift = 64 - bits;
    return 0;
}

static inline size_t first_index_home(const FirstIndex *x, Hash128 fp)
{
    return (size_t)(hash_mix(fp) >> x->shift);
}

/* The index of the first of windows 0..i with window i's fingerprint (i itself when it
 * is the first; then it is entered). */
static inline int64_t first_index_take(FirstIndex *x, const int64_t *fps, int64_t i)
{
    Hash128 fp = fp_at(fps, i, 2);
    uint64_t tag = fp.hi >> FIRST_INDEX_BITS;
    for (size_t h = first_index_home(x, fp);; h = (h + 1) & x->mask) {
        uint64_t slot = x->slots[h];
        if (slot == 0) {
            x->slots[h] = (tag << FIRST_INDEX_BITS) | (uint64_t)(i + 1);
            return i;
        }
        if (slot >> FIRST_INDEX_BITS != tag) continue;
        int64_t j = (int64_t)(slot & FIRST_INDEX_MASK) - 1;
        if (hash_equal(fp_at(fps, j, 2), fp)) return j;
    }
}

/* window_keys(hashes, fps, width, seed) -> bytes: per window (fps: its fingerprint, int64
 * pairs; hashes: the 16-byte key hashes of its records and those after), a 128-bit key
 * that is a keyed hash of its W key hashes (for W = 1 the key hash itself), so that the
 * owners' grouping compares contents, not fingerprints (docs/engine.md, "Identity of
 * windows"). A window whose records equal those of the first window with its fingerprint
 * takes that one's key: compared in full at a run's start, then by the newest record. */
PyObject *seqdedup_py_window_keys(PyObject *self, PyObject *args)
{
    Py_buffer keys, data;
    Py_ssize_t width;
    Hash128 seeds;
    if (!PyArg_ParseTuple(args, "y*y*nO&", &keys, &data, &width, seqdedup_to_seed, &seeds))
        return NULL;
    PyObject *out = NULL;
    FirstIndex seen = {NULL, 0, 0};
    Py_ssize_t n = groups_of(&data, 2, "window_keys: fingerprints");
    if (n < 0) goto done;
    if (width < 1 || keys.len % 16 || (n > 0 && keys.len / 16 < n + width - 1) ||
        (uint64_t)n >= FIRST_INDEX_MASK) {
        PyErr_SetString(PyExc_ValueError, "window_keys: W >= 1 and W - 1 + a hash per window");
        goto done;
    }
    out = PyBytes_FromStringAndSize(NULL, n * 16);
    if (out == NULL) goto done;
    unsigned char *key = (unsigned char *)PyBytes_AS_STRING(out);
    const unsigned char *h = keys.buf;
    const int64_t *fps = data.buf;
    if (width == 1 || n == 0) {
        if (n) memcpy(key, h, (size_t)n * 16); /* a 1-record window: its key hash */
        goto done;
    }
    if (first_index_init(&seen, (size_t)n) < 0) {
        Py_CLEAR(out);
        goto done;
    }
    const Hash128 salt = {seeds.lo ^ 0x77696E646F776B65ULL, seeds.hi ^ 0x6B65797320666F72ULL};
    const size_t span = (size_t)width * 16;
    int64_t matched = -1; /* the first window that window i-1 equals, or -1 */
    for (Py_ssize_t i = 0; i < n; i++) {
        int64_t f = first_index_take(&seen, fps, i);
        const unsigned char *mine = h + (size_t)i * 16, *theirs = h + (size_t)f * 16;
        int equal = f != i && (matched >= 0 && f == matched + 1
                                   ? memcmp(mine + span - 16, theirs + span - 16, 16) == 0
                                   : memcmp(mine, theirs, span) == 0);
        if (equal) {
            memcpy(key + (size_t)i * 16, key + (size_t)f * 16, 16);
        } else {
            Hash128 digest = seqdedup_hash128(mine, span, salt);
            memcpy(key + (size_t)i * 16, &digest, 16);
        }
        matched = equal ? f : -1;
    }
done:
    PyMem_RawFree(seen.slots);
    PyBuffer_Release(&keys);
    PyBuffer_Release(&data);
    return out;
}

/* first_windows(fps, positions, owners) -> (firsts, rows, routed): fps int64 pairs and
 * positions int64, one per window; firsts[i] (int64) is the index of the first window
 * with fingerprint fps[i]; per owner (fingerprint low lane % owners), rows holds the
 * (fingerprint lanes, position) int64 triples of the first windows it owns, in order,
 * and routed their window indices (int64). */
PyObject *seqdedup_py_first_windows(PyObject *self, PyObject *args)
{
    Py_buffer data, where;
    Py_ssize_t owners;
    if (!PyArg_ParseTuple(args, "y*y*n", &data, &where, &owners)) return NULL;
    PyObject *firsts = NULL, *rows = NULL, *routed = NULL, *result = NULL;
    FirstIndex seen = {NULL, 0, 0};
    size_t *counts = NULL;
    Py_ssize_t n = groups_of(&data, 2, "first_windows: fingerprints");
    if (n < 0) goto done;
    if (owners < 1 || groups_of(&where, 1, "first_windows: positions") != n) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_ValueError, "first_windows: a position per window, owners >= 1");
        goto done;
    }
    if ((uint64_t)n >= FIRST_INDEX_MASK) {
        PyErr_SetString(PyExc_ValueError, "first_windows: too many windows in one partition");
        goto done;
    }
    firsts = PyBytes_FromStringAndSize(NULL, n * (Py_ssize_t)sizeof(int64_t));
    counts = PyMem_RawCalloc((size_t)owners, sizeof(size_t));
    if (firsts == NULL || counts == NULL) {
        if (counts == NULL) PyErr_NoMemory();
        goto done;
    }
    int64_t *first = (int64_t *)PyBytes_AS_STRING(firsts);
    const int64_t *fps = data.buf, *position = where.buf;
    if (first_index_init(&seen, (size_t)n) < 0) goto done;
    for (Py_ssize_t i = 0; i < n; i++) {
        if (i + PREFETCH_AHEAD < n) /* the slot wanted a few windows on: its miss overlaps */
            PREFETCH(seen.slots + first_index_home(&seen, fp_at(fps, i + PREFETCH_AHEAD, 2)));
        first[i] = first_index_take(&seen, fps, i);
        if (first[i] == i) counts[owner_of(fp_at(fps, i, 2), (size_t)owners)]++;
    }
    rows = PyList_New(owners);
    routed = PyList_New(owners);
    if (rows == NULL || routed == NULL) goto done;
    int64_t **row_at = PyMem_RawCalloc((size_t)owners, 2 * sizeof(int64_t *));
    if (row_at == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    int64_t **index_at = row_at + owners;
    for (Py_ssize_t b = 0; b < owners; b++) {
        PyObject *r = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(counts[b] * 3 * sizeof(int64_t)));
        PyObject *w = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(counts[b] * sizeof(int64_t)));
        if (r == NULL || w == NULL) {
            Py_XDECREF(r);
            Py_XDECREF(w);
            PyMem_RawFree(row_at);
            goto done;
        }
        PyList_SET_ITEM(rows, b, r);
        PyList_SET_ITEM(routed, b, w);
        row_at[b] = (int64_t *)PyBytes_AS_STRING(r);
        index_at[b] = (int64_t *)PyBytes_AS_STRING(w);
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        if (first[i] != i) continue;
        size_t b = owner_of(fp_at(fps, i, 2), (size_t)owners);
        int64_t *row = row_at[b];
        row[0] = fps[2 * i];
        row[1] = fps[2 * i + 1];
        row[2] = position[i];
        row_at[b] += 3;
        *index_at[b]++ = i;
    }
    PyMem_RawFree(row_at);
    result = PyTuple_Pack(3, firsts, rows, routed);
done:
    Py_XDECREF(firsts);
    Py_XDECREF(rows);
    Py_XDECREF(routed);
    PyMem_RawFree(counts);
    PyMem_RawFree(seen.slots);
    PyBuffer_Release(&data);
    PyBuffer_Release(&where);
    return result;
}

/* ---- the owners' earliest positions ------------------------------------------------
 * The rows of one call, numbered: the library's fingerprints (position -1) first, then
 * each partition's rows in turn. The index keeps, per fingerprint, the number of its
 * row of earliest position (in a FirstIndex slot, as above). */
typedef struct {
    const int64_t *library;
    Py_ssize_t library_count;
    Py_buffer *parts;  /* each partition's rows (int64 triples) */
    Py_ssize_t *ends;  /* ends[p]: the number after partition p's last row */
    Py_ssize_t nparts; /* how many of parts are held */
} RowSet;

static void row_at(const RowSet *s, Py_ssize_t number, Hash128 *fp, int64_t *position)
{
    if (number < s->library_count) {
        *fp = fp_at(s->library, number, 2);
        *position = -1;
        return;
    }
    Py_ssize_t low = 0, high = s->nparts; /* the first partition ending after it */
    while (low < high) {
        Py_ssize_t middle = low + (high - low) / 2;
        if (s->ends[middle] <= number) low = middle + 1; else high = middle;
    }
    Py_ssize_t k = number - (low ? s->ends[low - 1] : s->library_count);
    const int64_t *rows = s->parts[low].buf;
    *fp = fp_at(rows, k, 3);
    *position = rows[3 * k + 2];
}

/* The slot of `fp` (its row of earliest position so far), or of the empty slot where
 * it belongs. */
static uint64_t *earliest_slot(FirstIndex *x, const RowSet *s, Hash128 fp)
{
    uint64_t tag = fp.hi >> FIRST_INDEX_BITS;
    for (size_t h = first_index_home(x, fp);; h = (h + 1) & x->mask) {
        uint64_t *slot = x->slots + h;
        if (*slot == 0) return slot;
        if (*slot >> FIRST_INDEX_BITS != tag) continue;
        Hash128 other;
        int64_t position;
        row_at(s, (Py_ssize_t)(*slot & FIRST_INDEX_MASK) - 1, &other, &position);
        if (hash_equal(other, fp)) return slot;
    }
}

/* Enter a row, keeping per fingerprint the row of earliest position. */
static void earliest_enter(FirstIndex *x, const RowSet *s, Py_ssize_t number, Hash128 fp,
                           int64_t position)
{
    uint64_t *slot = earliest_slot(x, s, fp);
    uint64_t mine = (fp.hi >> FIRST_INDEX_BITS) << FIRST_INDEX_BITS | (uint64_t)(number + 1);
    if (*slot == 0) {
        *slot = mine;
        return;
    }
    Hash128 same;
    int64_t earlier;
    row_at(s, (Py_ssize_t)(*slot & FIRST_INDEX_MASK) - 1, &same, &earlier);
    if (position < earlier) *slot = mine;
}

/* Enter the library's fingerprints, then every partition's rows. */
static void earliest_enter_all(FirstIndex *x, const RowSet *s)
{
    for (Py_ssize_t i = 0; i < s->library_count; i++)
        earliest_enter(x, s, i, fp_at(s->library, i, 2), -1);
    for (Py_ssize_t p = 0; p < s->nparts; p++) {
        Py_ssize_t first = p ? s->ends[p - 1] : s->library_count, n = s->ends[p] - first;
        const int64_t *r = s->parts[p].buf;
        for (Py_ssize_t i = 0; i < n; i++) {
            if (i + PREFETCH_AHEAD < n)
                PREFETCH(x->slots + first_index_home(x, fp_at(r, i + PREFETCH_AHEAD, 3)));
            earliest_enter(x, s, first + i, fp_at(r, i, 3), r[3 * i + 2]);
        }
    }
}

/* Partition p's (row index, earliest position) pairs: its rows whose fingerprint
 * occurs at an earlier position. */
static PyObject *answer_rows(FirstIndex *x, const RowSet *s, Py_ssize_t p)
{
    Py_ssize_t first = p ? s->ends[p - 1] : s->library_count, n = s->ends[p] - first;
    const int64_t *r = s->parts[p].buf;
    int64_t *pairs = NULL; /* few: the rows that repeat another partition's */
    size_t len = 0, cap = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        if (i + PREFETCH_AHEAD < n)
            PREFETCH(x->slots + first_index_home(x, fp_at(r, i + PREFETCH_AHEAD, 3)));
        uint64_t slot = *earliest_slot(x, s, fp_at(r, i, 3));
        Py_ssize_t earliest = (Py_ssize_t)(slot & FIRST_INDEX_MASK) - 1;
        if (earliest == first + i) continue; /* (its own row: the usual case) */
        Hash128 fp;
        int64_t position;
        row_at(s, earliest, &fp, &position);
        if (position >= r[3 * i + 2]) continue;
        if (grow((void **)&pairs, &cap, len + 2, sizeof(int64_t)) < 0) {
            PyMem_RawFree(pairs);
            return NULL;
        }
        pairs[len++] = i;
        pairs[len++] = position;
    }
    PyObject *answer =
        PyBytes_FromStringAndSize((const char *)pairs, (Py_ssize_t)(len * sizeof(int64_t)));
    PyMem_RawFree(pairs);
    return answer;
}

/* Hold every partition's rows in `s` (nparts counts those held); -1 with an error. */
static int rows_held(RowSet *s, PyObject *buffers)
{
    Py_ssize_t parts = PyList_GET_SIZE(buffers), number = s->library_count;
    s->parts = PyMem_RawCalloc((size_t)parts + 1, sizeof(Py_buffer));
    s->ends = PyMem_RawCalloc((size_t)parts + 1, sizeof(Py_ssize_t));
    if (s->parts == NULL || s->ends == NULL) return (void)PyErr_NoMemory(), -1;
    for (Py_ssize_t p = 0; p < parts; p++) {
        if (PyObject_GetBuffer(PyList_GET_ITEM(buffers, p), &s->parts[p], PyBUF_SIMPLE) < 0)
            return -1;
        s->nparts = p + 1;
        Py_ssize_t n = groups_of(&s->parts[p], 3, "earliest: rows");
        if (n < 0) return -1;
        number += n;
        s->ends[p] = number;
    }
    if ((uint64_t)number >= FIRST_INDEX_MASK) {
        PyErr_SetString(PyExc_ValueError, "earliest: too many rows");
        return -1;
    }
    return 0;
}

/* earliest(rows, library) -> list of bytes: rows[p] holds int64 triples (fingerprint
 * lanes, position), library int64 pairs (fingerprints at position -1); answer p holds
 * int64 pairs (row index, earliest position) for the rows of p whose fingerprint
 * occurs at an earlier position. */
PyObject *seqdedup_py_earliest(PyObject *self, PyObject *args)
{
    PyObject *buffers, *answers = NULL;
    Py_buffer library;
    if (!PyArg_ParseTuple(args, "O!y*", &PyList_Type, &buffers, &library)) return NULL;
    RowSet rows = {library.buf, 0, NULL, NULL, 0};
    FirstIndex index = {NULL, 0, 0};
    Py_ssize_t parts = PyList_GET_SIZE(buffers);
    rows.library_count = groups_of(&library, 2, "earliest: library fingerprints");
    if (rows.library_count < 0 || rows_held(&rows, buffers) < 0) goto done;
    if (first_index_init(&index, (size_t)(parts ? rows.ends[parts - 1] : rows.library_count)) < 0)
        goto done;
    earliest_enter_all(&index, &rows);
    answers = PyList_New(parts);
    if (answers == NULL) goto done;
    for (Py_ssize_t p = 0; p < parts; p++) {
        PyObject *answer = answer_rows(&index, &rows, p);
        if (answer == NULL) {
            Py_CLEAR(answers);
            goto done;
        }
        PyList_SET_ITEM(answers, p, answer);
    }
done:
    for (Py_ssize_t p = 0; p < rows.nparts; p++) PyBuffer_Release(&rows.parts[p]);
    PyMem_RawFree(rows.parts);
    PyMem_RawFree(rows.ends);
    PyMem_RawFree(index.slots);
    PyBuffer_Release(&library);
    return answers;
}

/* Where the record starting at `at` ends: the next delimiter, or the end of the data
 * (a final record without one). */
static size_t record_end(const unsigned char *p, size_t size, size_t at, const unsigned char *d,
                         size_t dlen)
{
    const unsigned char *hit = memchr(p + at, d[0], size - at);
    while (hit != NULL && ((size_t)(hit - p) + dlen > size || memcmp(hit, d, dlen) != 0))
        hit = memchr(hit + 1, d[0], size - (size_t)(hit + 1 - p));
    return hit == NULL ? size : (size_t)(hit - p);
}

/* split_hash(data, delimiter, seed=0, skip_chars=0, byte_mode=False, normalize=0) ->
 * (starts, hashes): the records of data (which starts at a record's start; a final
 * record without a delimiter counts), each one's start (int64) and key hash (16 bytes,
 * as hash_records gives it), without a Python object per record. */
PyObject *seqdedup_py_split_hash(PyObject *self, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"data",      "delimiter", "seed",        "skip_chars",
                             "byte_mode", "normalize", "skip_fields", NULL};
    Py_buffer data, delimiter;
    Hash128 seeds = {0, 0};
    uint64_t skip = 0, fields = 0;
    int byte_mode = 0;
    unsigned normalize = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "y*y*|O&O&pO&O&", kwlist, &data, &delimiter,
                                     seqdedup_to_seed, &seeds, seqdedup_to_u64, &skip, &byte_mode, seqdedup_to_u32,
                                     &normalize, seqdedup_to_u64, &fields))
        return NULL;
    PyObject *starts = NULL, *hashes = NULL, *result = NULL;
    const unsigned char *p = data.buf, *d = delimiter.buf;
    size_t size = (size_t)data.len, dlen = (size_t)delimiter.len, count = 0;
    if (dlen == 0) {
        PyErr_SetString(PyExc_ValueError, "split_hash: an empty delimiter");
        goto done;
    }
    /* One pass: the outputs are sized by a guess and grown (a first pass counting the
     * records read the whole partition twice). */
    size_t room = size / 64 + 16;
    starts = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(room * sizeof(int64_t)));
    hashes = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(room * 16));
    if (starts == NULL || hashes == NULL) goto done;
    unsigned classes = seqdedup_normalize_classes(normalize);
    for (size_t at = 0; at < size; count++) {
        if (count == room) {
            if (room > (size_t)PY_SSIZE_T_MAX / 32) {
                PyErr_NoMemory();
                goto done;
            }
            room *= 2;
            if (_PyBytes_Resize(&starts, (Py_ssize_t)(room * sizeof(int64_t))) < 0 ||
                _PyBytes_Resize(&hashes, (Py_ssize_t)(room * 16)) < 0)
                goto done;
        }
        size_t end = record_end(p, size, at, d, dlen);
        Hash128 h = seqdedup_key_hash(p + at, end - at, fields, skip, byte_mode, classes, seeds);
        ((int64_t *)PyBytes_AS_STRING(starts))[count] = (int64_t)at;
        memcpy(PyBytes_AS_STRING(hashes) + 16 * count, &h, 16);
        at = end == size ? size : end + dlen;
    }
    if (_PyBytes_Resize(&starts, (Py_ssize_t)(count * sizeof(int64_t))) < 0 ||
        _PyBytes_Resize(&hashes, (Py_ssize_t)(count * 16)) < 0)
        goto done;
    result = PyTuple_Pack(2, starts, hashes);
done:
    Py_XDECREF(starts);
    Py_XDECREF(hashes);
    PyBuffer_Release(&data);
    PyBuffer_Release(&delimiter);
    return result;
}

/* bounds_hash(data, bounds, seed=0, skip_chars=0, byte_mode=False, normalize=0,
 * skip_fields=0, passed=None) -> bytearray: the key hash (16 bytes, as hash_records
 * gives it) of each record data[bounds[2k]:bounds[2k+1]] (int64 pairs: records already
 * split, not split again); `passed` (a byte a record): the records whose byte is not 0
 * are not hashed (16 zero bytes: the caller writes their hashes in place). */
PyObject *seqdedup_py_bounds_hash(PyObject *self, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"data",      "bounds",    "seed",        "skip_chars",
                             "byte_mode", "normalize", "skip_fields", "passed", NULL};
    Py_buffer data, bounds, passed = {0};
    Hash128 seeds = {0, 0};
    uint64_t skip = 0, fields = 0;
    int byte_mode = 0;
    unsigned normalize = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "y*y*|O&O&pO&O&z*", kwlist, &data, &bounds,
                                     seqdedup_to_seed, &seeds, seqdedup_to_u64, &skip,
                                     &byte_mode, seqdedup_to_u32, &normalize, seqdedup_to_u64,
                                     &fields, &passed))
        return NULL;
    PyObject *hashes = NULL;
    size_t n = (size_t)bounds.len / 16;
    const unsigned char *pass = passed.buf, *pairs = bounds.buf; /* (pass NULL: hash all) */
    if (bounds.len % 16 || (pass != NULL && (size_t)passed.len != n)) {
        PyErr_SetString(PyExc_ValueError,
                        "bounds_hash: bounds are int64 pairs, passed a byte per record");
        goto done;
    }
    if (n > (size_t)PY_SSIZE_T_MAX / 16) {
        PyErr_NoMemory();
        goto done;
    }
    hashes = PyByteArray_FromStringAndSize(NULL, (Py_ssize_t)(n * 16));
    if (hashes == NULL) goto done;
    unsigned char *out = (unsigned char *)PyByteArray_AS_STRING(hashes);
    unsigned classes = seqdedup_normalize_classes(normalize);
    for (size_t k = 0; k < n; k++) {
        int64_t span[2];
        memcpy(span, pairs + 16 * k, sizeof span); /* (any alignment) */
        if (span[0] < 0 || span[0] > span[1] || span[1] > (int64_t)data.len) {
            Py_CLEAR(hashes);
            PyErr_SetString(PyExc_ValueError, "bounds_hash: a record lies outside the data");
            goto done;
        }
        Hash128 h = {0, 0};
        if (pass == NULL || !pass[k]) {
            const unsigned char *record = (const unsigned char *)data.buf + span[0];
            h = seqdedup_key_hash(record, (size_t)(span[1] - span[0]), fields, skip, byte_mode,
                                  classes, seeds);
        }
        memcpy(out + 16 * k, &h, 16);
    }
done:
    PyBuffer_Release(&data);
    PyBuffer_Release(&bounds);
    if (passed.obj != NULL) PyBuffer_Release(&passed);
    return hashes;
}
