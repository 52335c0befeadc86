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

/* ---- literal_hits: --budget's level literals, many at once, letters folded ---------- */

#define MAX_FLOATING 64 /* floating literals: one bit each in a 64-bit mask */

/* An ASCII letter in lower case, any other byte as it is. */
static inline unsigned char folded(unsigned char c)
{
    return (unsigned char)((unsigned)(c - 'A') < 26u ? c + 32 : c);
}

/* Whether data[0 .. size) folded is the literal. */
static inline int folded_equal(const unsigned char *data, const char *lit, size_t size)
{
    for (size_t k = 0; k < size; k++) {
        if (folded(data[k]) != (unsigned char)lit[k]) return 0;
    }
    return 1;
}

/* Checks a tuple of literals: each non-empty bytes with no capital ASCII letter. */
static int lower_literals(PyObject *tuple)
{
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(tuple); i++) {
        PyObject *lit = PyTuple_GET_ITEM(tuple, i);
        if (!PyBytes_Check(lit) || PyBytes_GET_SIZE(lit) == 0) {
            PyErr_SetString(PyExc_TypeError, "literal_hits: literals are non-empty bytes");
            return -1;
        }
        const char *s = PyBytes_AS_STRING(lit);
        for (Py_ssize_t k = 0; k < PyBytes_GET_SIZE(lit); k++) {
            if (s[k] >= 'A' && s[k] <= 'Z') {
                PyErr_SetString(PyExc_ValueError, "literal_hits: literals are in lower case");
                return -1;
            }
        }
    }
    return 0;
}

/* Whether one of the floating literals whose bit `m` has (bit i: literal i) starts at
 * `at` and ends by `end`. */
static int holds_one_at(const unsigned char *at, const unsigned char *end, PyObject *floating,
                        uint64_t m)
{
    for (int i = 0; m; i++, m >>= 1) {
        if (!(m & 1)) continue;
        PyObject *lit = PyTuple_GET_ITEM(floating, i);
        size_t size = (size_t)PyBytes_GET_SIZE(lit);
        if (size <= (size_t)(end - at) && folded_equal(at, PyBytes_AS_STRING(lit), size)) return 1;
    }
    return 0;
}

/* Whether record [p, end) holds one of the floating literals: at each byte, the literals
 * whose first two bytes are there (two table look-ups) are compared. */
static int holds_floating(const unsigned char *p, const unsigned char *end, PyObject *floating,
                          const uint64_t *first, const uint64_t *second, uint64_t single)
{
    for (; p < end; p++) {
        uint64_t m = first[folded(*p)];
        if (m == 0) continue;
        m &= p + 1 < end ? second[folded(p[1])] : single;
        if (m && holds_one_at(p, end, floating, m)) return 1;
    }
    return 0;
}

/* Literals of 3 bytes or more (--budget's all are): a record is first sifted by its
 * folded 3-byte windows, each hashed into a 65,536-bit set of the literals' first three
 * bytes, a look-up a byte where a branch on the byte would mispredict at every common
 * first letter; a window in the set has its literals compared. */
#define TRIGRAM_WORDS 1024 /* 65,536 bits */

static inline uint32_t trigram_slot(uint32_t three) { return (three * 2654435761u) >> 16; }

static int holds_floating3(const unsigned char *p, const unsigned char *end, PyObject *floating,
                           const uint64_t *first, const uint64_t *trigrams)
{
    if (end - p < 3) return 0;
    uint32_t three = ((uint32_t)folded(p[0]) << 8) | folded(p[1]);
    for (const unsigned char *q = p + 2; q < end; q++) {
        three = ((three << 8) | folded(*q)) & 0xFFFFFFu;
        uint32_t slot = trigram_slot(three);
        if (!((trigrams[slot >> 6] >> (slot & 63)) & 1)) continue;
        const unsigned char *at = q - 2;
        if (holds_one_at(at, end, floating, first[folded(*at)])) return 1;
    }
    return 0;
}

#if defined(__SSE2__) && (defined(__GNUC__) || defined(__clang__))
#define LITERAL_WIDE 1 /* (SSE2, and __builtin_ctz for the hits of a mask) */
#include <emmintrin.h>

#define MAX_TRIGRAMS MAX_FLOATING

/* The literals' distinct first three bytes, each byte in every lane of a vector. */
typedef struct {
    __m128i bytes[MAX_TRIGRAMS][3];
    int count;
} Trigrams;

static void trigrams_of(PyObject *floating, Trigrams *t)
{
    uint32_t seen[MAX_TRIGRAMS];
    t->count = 0;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(floating); i++) {
        const unsigned char *s = (const unsigned char *)PyBytes_AS_STRING(PyTuple_GET_ITEM(floating, i));
        uint32_t three = ((uint32_t)s[0] << 16) | ((uint32_t)s[1] << 8) | s[2];
        int known = 0;
        for (int k = 0; k < t->count; k++) known |= seen[k] == three;
        if (known) continue;
        seen[t->count] = three;
        for (int b = 0; b < 3; b++) t->bytes[t->count][b] = _mm_set1_epi8((char)s[b]);
        t->count++;
    }
}

/* 16 bytes from p with ASCII capitals in lower case (signed compares: 'A'..'Z' are
 * below 0x80). */
static inline __m128i folded16(const unsigned char *p)
{
    __m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
    __m128i upper = _mm_and_si128(_mm_cmpgt_epi8(v, _mm_set1_epi8('A' - 1)),
                                  _mm_cmplt_epi8(v, _mm_set1_epi8('Z' + 1)));
    return _mm_or_si128(v, _mm_and_si128(upper, _mm_set1_epi8(0x20)));
}

/* holds_floating3 16 positions at a time where the 18 bytes they read may be read
 * (`readable`: the end of the data): each position's folded three bytes compared with
 * every literal's first three at once; a position that matches has its literals
 * compared whole, as the sieve's hits are. The rest one byte at a time. */
static int holds_floating3_wide(const unsigned char *p, const unsigned char *end,
                                const unsigned char *readable, PyObject *floating,
                                const uint64_t *first, const uint64_t *trigrams,
                                const Trigrams *t)
{
    const unsigned char *q = p;
    for (; end - q >= 3 && readable - q >= 18; q += 16) {
        __m128i b0 = folded16(q), b1 = folded16(q + 1), b2 = folded16(q + 2);
        __m128i any = _mm_setzero_si128();
        for (int k = 0; k < t->count; k++) {
            __m128i hit = _mm_and_si128(_mm_cmpeq_epi8(b0, t->bytes[k][0]),
                                        _mm_cmpeq_epi8(b1, t->bytes[k][1]));
            any = _mm_or_si128(any, _mm_and_si128(hit, _mm_cmpeq_epi8(b2, t->bytes[k][2])));
        }
        unsigned mask = (unsigned)_mm_movemask_epi8(any);
        size_t starts = (size_t)(end - q) - 2; /* (positions whose three bytes are the record's) */
        if (starts < 16) mask &= (1u << starts) - 1;
        for (; mask; mask &= mask - 1) {
            const unsigned char *at = q + __builtin_ctz(mask);
            if (holds_one_at(at, end, floating, first[folded(*at)])) return 1;
        }
    }
    return end - q >= 3 && holds_floating3(q, end, floating, first, trigrams);
}
#endif

static int starts_anchored(const unsigned char *p, size_t len, PyObject *anchored)
{
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(anchored); i++) {
        PyObject *lit = PyTuple_GET_ITEM(anchored, i);
        size_t size = (size_t)PyBytes_GET_SIZE(lit);
        if (size <= len && folded_equal(p, PyBytes_AS_STRING(lit), size)) return 1;
    }
    return 0;
}

/* literal_hits(region, bounds, floating, anchored) -> bytes: for each record (int64
 * (start, end) pairs into region, in order), 1 when its bytes with ASCII letters folded
 * to lower case hold one of the `floating` literals or start with one of the `anchored`
 * ones (tuples of non-empty bytes in lower case; at most 64 floating), else 0: the
 * records a level's pattern may match, in one pass, before the pattern is tried. */
PyObject *seqdedup_py_literal_hits(PyObject *self, PyObject *args)
{
    (void)self;
    Py_buffer region, bounds;
    PyObject *floating, *anchored;
    if (!PyArg_ParseTuple(args, "y*y*O!O!", &region, &bounds, &PyTuple_Type, &floating,
                          &PyTuple_Type, &anchored)) {
        return NULL;
    }
    PyObject *out = NULL;
    size_t n = (size_t)bounds.len / 16, total = (size_t)region.len;
    if (bounds.len % 16) {
        PyErr_SetString(PyExc_ValueError, "literal_hits: bounds are int64 pairs");
        goto done;
    }
    if (PyTuple_GET_SIZE(floating) > MAX_FLOATING) {
        PyErr_SetString(PyExc_ValueError, "literal_hits: at most 64 floating literals");
        goto done;
    }
    if (lower_literals(floating) < 0 || lower_literals(anchored) < 0) goto done;
    uint64_t first[256] = {0}, second[256] = {0}, single = 0, trigrams[TRIGRAM_WORDS] = {0};
    int long_only = 1; /* (every literal 3 bytes or more: sifted by trigrams) */
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(floating); i++) {
        PyObject *lit = PyTuple_GET_ITEM(floating, i);
        const unsigned char *s = (const unsigned char *)PyBytes_AS_STRING(lit);
        uint64_t bit = (uint64_t)1 << i;
        first[s[0]] |= bit;
        if (PyBytes_GET_SIZE(lit) < 3) {
            long_only = 0;
        } else {
            uint32_t slot = trigram_slot(((uint32_t)s[0] << 16) | ((uint32_t)s[1] << 8) | s[2]);
            trigrams[slot >> 6] |= (uint64_t)1 << (slot & 63);
        }
        if (PyBytes_GET_SIZE(lit) == 1) {
            single |= bit; /* (any byte, or none, may follow it) */
            for (int c = 0; c < 256; c++) second[c] |= bit;
        } else {
            second[s[1]] |= bit;
        }
    }
#if defined(LITERAL_WIDE)
    Trigrams wide;
    wide.count = 0;
    if (long_only) trigrams_of(floating, &wide);
#endif
    out = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)n);
    if (out == NULL) goto done;
    unsigned char *flags = (unsigned char *)PyBytes_AS_STRING(out);
    const unsigned char *data = region.buf;
    int64_t before = 0;
    for (size_t r = 0; r < n; r++) {
        int64_t start, end;
        memcpy(&start, (const char *)bounds.buf + 16 * r, 8);
        memcpy(&end, (const char *)bounds.buf + 16 * r + 8, 8);
        if (start < before || end < start || (uint64_t)end > total) {
            PyErr_SetString(PyExc_ValueError, "literal_hits: records out of order or bounds");
            Py_CLEAR(out);
            goto done;
        }
        before = end;
        const unsigned char *p = data + start;
        size_t len = (size_t)(end - start);
        int floats = PyTuple_GET_SIZE(floating) > 0;
#if defined(LITERAL_WIDE)
        const unsigned char *readable = data + total;
#define HOLDS_FLOATING3(p, end) holds_floating3_wide(p, end, readable, floating, first, trigrams, &wide)
#else
#define HOLDS_FLOATING3(p, end) holds_floating3(p, end, floating, first, trigrams)
#endif
        flags[r] = (unsigned char)(
            starts_anchored(p, len, anchored) ||
            (floats && long_only && HOLDS_FLOATING3(p, p + len)) ||
            (floats && !long_only && holds_floating(p, p + len, floating, first, second, single)));
#undef HOLDS_FLOATING3
    }
done:
    PyBuffer_Release(&region);
    PyBuffer_Release(&bounds);
    return out;
}

/* ---- spread_tracebacks: --budget's verbatim records, each with its traceback -------- */

/* Whether s[0 .. n) is white space (ASCII, as bytes.lstrip() takes it) and then
 * "Traceback". */
static int starts_traceback(const unsigned char *s, size_t n)
{
    size_t k = 0;
    while (k < n && (s[k] == ' ' || (s[k] >= '\t' && s[k] <= '\r'))) k++;
    return n - k >= 9 && memcmp(s + k, "Traceback", 9) == 0;
}

/* spread_tracebacks(data, bounds, flags, indented) -> heads: each flagged record (int64
 * pairs into data; flags: a byte a record, 1 set, written in place) is followed by the
 * records that continue it, the indented ones right after it (indented: a byte a record)
 * and, after a line that starts "Traceback", the record that ends them (the
 * exception's own line); those are flagged too, and are no heads: the heads returned
 * are the flags as they were but there. Left to right, a continuation's own flag
 * starts nothing (as the reading in seqdedup.budget.input does). */
PyObject *seqdedup_py_spread_tracebacks(PyObject *self, PyObject *args)
{
    (void)self;
    Py_buffer data, bounds, flags, indented;
    if (!PyArg_ParseTuple(args, "y*y*w*y*", &data, &bounds, &flags, &indented)) return NULL;
    PyObject *heads = NULL;
    size_t n = (size_t)flags.len;
    if (bounds.len % 16 || (size_t)bounds.len / 16 != n || (size_t)indented.len != n) {
        PyErr_SetString(PyExc_ValueError,
                        "spread_tracebacks: bounds int64 pairs, flags and indented a byte each");
        goto done;
    }
    heads = PyBytes_FromStringAndSize((const char *)flags.buf, (Py_ssize_t)n);
    if (heads == NULL) goto done;
    unsigned char *flag = flags.buf, *head = (unsigned char *)PyBytes_AS_STRING(heads);
    const unsigned char *inner = indented.buf, *pairs = bounds.buf, *text = data.buf;
    for (size_t at = 0; at < n;) {
        if (!flag[at]) {
            at++;
            continue;
        }
        size_t end = at + 1;
        while (end < n && inner[end]) end++;
        if (end < n) {
            int64_t span[2];
            memcpy(span, pairs + 16 * at, sizeof span);
            if (span[0] < 0 || span[0] > span[1] || span[1] > (int64_t)data.len) {
                Py_CLEAR(heads);
                PyErr_SetString(PyExc_ValueError, "spread_tracebacks: a record outside the data");
                goto done;
            }
            if (starts_traceback(text + span[0], (size_t)(span[1] - span[0]))) end++;
        }
        for (size_t k = at + 1; k < end; k++) {
            flag[k] = 1;
            head[k] = 0;
        }
        at = end;
    }
done:
    PyBuffer_Release(&data);
    PyBuffer_Release(&bounds);
    PyBuffer_Release(&flags);
    PyBuffer_Release(&indented);
    return heads;
}
