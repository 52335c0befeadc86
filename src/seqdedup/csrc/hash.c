/*
 * Hashing: XXH64 (implemented from its published specification, one-shot and
 * streaming), --skip-chars counted in characters as Python decodes UTF-8 with
 * surrogateescape, and each record's key hash, normalised on the fly by the scanner of
 * normalize.h (the normalised key is never held whole). Also the module functions that
 * hash: xxh64, hash_records, normalize, key_offset (library rows: encoded.c).
 */
#include "kernel.h"

/* "O&" converter: a Python int from 0 to 2**64 - 1 (the "K" format would wrap -1). */
int seqdedup_to_u64(PyObject *obj, void *out)
{
    if (!PyLong_Check(obj)) {
        PyErr_SetString(PyExc_TypeError, "expected an int");
        return 0;
    }
    unsigned long long value = PyLong_AsUnsignedLongLong(obj);
    if (value == (unsigned long long)-1 && PyErr_Occurred()) {
        PyErr_Clear();
        PyErr_SetString(PyExc_ValueError, "expected an int from 0 to 2**64 - 1");
        return 0;
    }
    *(uint64_t *)out = value;
    return 1;
}

/* "O&" converter for a class mask: an int from 0 to 2**32 - 1. */
int seqdedup_to_u32(PyObject *obj, void *out)
{
    uint64_t value;
    if (!seqdedup_to_u64(obj, &value)) return 0;
    if (value > UINT32_MAX) {
        PyErr_SetString(PyExc_ValueError, "expected an int from 0 to 2**32 - 1");
        return 0;
    }
    *(unsigned *)out = (unsigned)value;
    return 1;
}

/* ---------------------------------------------------------------------------------
 * XXH64, from the xxHash specification (v0.1.1). Little-endian reads via memcpy so
 * unaligned input and big-endian hosts are both correct.
 */
static const uint64_t XXP1 = 0x9E3779B185EBCA87ULL;
static const uint64_t XXP2 = 0xC2B2AE3D27D4EB4FULL;
static const uint64_t XXP3 = 0x165667B19E3779F9ULL;
static const uint64_t XXP4 = 0x85EBCA77C2B2AE63ULL;
static const uint64_t XXP5 = 0x27D4EB2F165667C5ULL;

static inline uint64_t rotl64(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

static inline uint64_t read64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = (v << 8) | p[i];
    return v;
}

static inline uint32_t read32(const unsigned char *p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) |
           ((uint32_t)p[3] << 24);
}

static inline uint64_t xx_round(uint64_t acc, uint64_t lane)
{
    acc += lane * XXP2;
    acc = rotl64(acc, 31);
    return acc * XXP1;
}

static inline uint64_t xx_merge(uint64_t acc, uint64_t val)
{
    acc ^= xx_round(0, val);
    return acc * XXP1 + XXP4;
}

static inline uint64_t xx_converge(uint64_t v1, uint64_t v2, uint64_t v3, uint64_t v4)
{
    uint64_t h = rotl64(v1, 1) + rotl64(v2, 7) + rotl64(v3, 12) + rotl64(v4, 18);
    h = xx_merge(h, v1);
    h = xx_merge(h, v2);
    h = xx_merge(h, v3);
    return xx_merge(h, v4);
}

static inline uint64_t xx_avalanche(uint64_t h)
{
    h ^= h >> 33;
    h *= XXP2;
    h ^= h >> 29;
    h *= XXP3;
    h ^= h >> 32;
    return h;
}

/* The last (len < 32) bytes and the avalanche. */
static uint64_t xx_tail(uint64_t h, const unsigned char *p, size_t len)
{
    const unsigned char *end = p + len;
    while ((size_t)(end - p) >= 8) {
        h ^= xx_round(0, read64(p));
        h = rotl64(h, 27) * XXP1 + XXP4;
        p += 8;
    }
    if ((size_t)(end - p) >= 4) {
        h ^= (uint64_t)read32(p) * XXP1;
        h = rotl64(h, 23) * XXP2 + XXP3;
        p += 4;
    }
    while (p < end) {
        h ^= (uint64_t)(*p) * XXP5;
        h = rotl64(h, 11) * XXP1;
        p++;
    }
    return xx_avalanche(h);
}

static uint64_t xxh64(const unsigned char *p, size_t len, uint64_t seed)
{
    const unsigned char *end = p + len;
    uint64_t h;
    if (len >= 32) {
        uint64_t v1 = seed + XXP1 + XXP2, v2 = seed + XXP2, v3 = seed, v4 = seed - XXP1;
        const unsigned char *limit = end - 32;
        do {
            v1 = xx_round(v1, read64(p));
            v2 = xx_round(v2, read64(p + 8));
            v3 = xx_round(v3, read64(p + 16));
            v4 = xx_round(v4, read64(p + 24));
            p += 32;
        } while (p <= limit);
        h = xx_converge(v1, v2, v3, v4);
    } else {
        h = seed + XXP5;
    }
    h += (uint64_t)len;
    return xx_tail(h, p, (size_t)(end - p));
}

/* Both lanes of a 128-bit hash at once: XXH64 of the same bytes with two seeds, each
 * word read once and the two multiply chains interleaved. */
static void xx_tail2(uint64_t *h1, uint64_t *h2, const unsigned char *p, size_t len)
{
    const unsigned char *end = p + len;
    uint64_t a = *h1, b = *h2;
    while ((size_t)(end - p) >= 8) {
        uint64_t word = read64(p);
        a ^= xx_round(0, word);
        b ^= xx_round(0, word);
        a = rotl64(a, 27) * XXP1 + XXP4;
        b = rotl64(b, 27) * XXP1 + XXP4;
        p += 8;
    }
    if ((size_t)(end - p) >= 4) {
        uint64_t word = (uint64_t)read32(p) * XXP1;
        a ^= word;
        b ^= word;
        a = rotl64(a, 23) * XXP2 + XXP3;
        b = rotl64(b, 23) * XXP2 + XXP3;
        p += 4;
    }
    while (p < end) {
        uint64_t byte = (uint64_t)(*p) * XXP5;
        a = rotl64(a ^ byte, 11) * XXP1;
        b = rotl64(b ^ byte, 11) * XXP1;
        p++;
    }
    *h1 = xx_avalanche(a);
    *h2 = xx_avalanche(b);
}

Hash128 seqdedup_hash128(const unsigned char *p, size_t len, Hash128 seeds)
{
    const unsigned char *end = p + len;
    uint64_t a, b;
    if (len >= 32) {
        uint64_t a1 = seeds.lo + XXP1 + XXP2, a2 = seeds.lo + XXP2, a3 = seeds.lo,
                 a4 = seeds.lo - XXP1;
        uint64_t b1 = seeds.hi + XXP1 + XXP2, b2 = seeds.hi + XXP2, b3 = seeds.hi,
                 b4 = seeds.hi - XXP1;
        const unsigned char *limit = end - 32;
        do {
            uint64_t w1 = read64(p), w2 = read64(p + 8), w3 = read64(p + 16),
                     w4 = read64(p + 24);
            a1 = xx_round(a1, w1);
            b1 = xx_round(b1, w1);
            a2 = xx_round(a2, w2);
            b2 = xx_round(b2, w2);
            a3 = xx_round(a3, w3);
            b3 = xx_round(b3, w3);
            a4 = xx_round(a4, w4);
            b4 = xx_round(b4, w4);
            p += 32;
        } while (p <= limit);
        a = xx_converge(a1, a2, a3, a4);
        b = xx_converge(b1, b2, b3, b4);
    } else {
        a = seeds.lo + XXP5;
        b = seeds.hi + XXP5;
    }
    a += (uint64_t)len;
    b += (uint64_t)len;
    xx_tail2(&a, &b, p, (size_t)(end - p));
    Hash128 out = {a, b};
    return out;
}

int seqdedup_to_seed(PyObject *obj, void *out)
{
    if (!PyLong_Check(obj)) {
        PyErr_SetString(PyExc_TypeError, "the seed must be an int");
        return 0;
    }
    unsigned char bytes[16];
    /* (little-endian, unsigned: a negative or wider int raises OverflowError) */
#if PY_VERSION_HEX >= 0x030D0000
    Py_ssize_t got = PyLong_AsNativeBytes(obj, bytes, 16,
                                          Py_ASNATIVEBYTES_LITTLE_ENDIAN |
                                              Py_ASNATIVEBYTES_UNSIGNED_BUFFER |
                                              Py_ASNATIVEBYTES_REJECT_NEGATIVE);
    if (got < 0) return 0;
    if (got > 16) {
        PyErr_SetString(PyExc_ValueError, "the seed must be from 0 to 2**128 - 1");
        return 0;
    }
#else
    if (_PyLong_AsByteArray((PyLongObject *)obj, bytes, 16, 1, 0) < 0) {
        PyErr_Clear();
        PyErr_SetString(PyExc_ValueError, "the seed must be from 0 to 2**128 - 1");
        return 0;
    }
#endif
    Hash128 seeds = {0, 0};
    for (int b = 7; b >= 0; b--) {
        seeds.lo = seeds.lo << 8 | bytes[b];
        seeds.hi = seeds.hi << 8 | bytes[8 + b];
    }
    *(Hash128 *)out = seeds;
    return 1;
}

/* The same hash of bytes given in pieces (a normalised key is never held whole). */
typedef struct {
    uint64_t v1, v2, v3, v4, seed, total;
    unsigned char mem[32];
    size_t memsize;
} XXState;

static void xx_init(XXState *st, uint64_t seed)
{
    st->seed = seed;
    st->v1 = seed + XXP1 + XXP2;
    st->v2 = seed + XXP2;
    st->v3 = seed;
    st->v4 = seed - XXP1;
    st->total = 0;
    st->memsize = 0;
}

static inline void xx_stripe(XXState *st, const unsigned char *p)
{
    st->v1 = xx_round(st->v1, read64(p));
    st->v2 = xx_round(st->v2, read64(p + 8));
    st->v3 = xx_round(st->v3, read64(p + 16));
    st->v4 = xx_round(st->v4, read64(p + 24));
}

static void xx_update(XXState *st, const unsigned char *p, size_t len)
{
    st->total += (uint64_t)len;
    if (st->memsize + len < 32) {
        if (len) memcpy(st->mem + st->memsize, p, len);
        st->memsize += len;
        return;
    }
    if (st->memsize) {
        size_t fill = 32 - st->memsize;
        memcpy(st->mem + st->memsize, p, fill);
        xx_stripe(st, st->mem);
        p += fill;
        len -= fill;
        st->memsize = 0;
    }
    while (len >= 32) {
        xx_stripe(st, p);
        p += 32;
        len -= 32;
    }
    if (len) memcpy(st->mem, p, len);
    st->memsize = len;
}

static uint64_t xx_digest(const XXState *st)
{
    uint64_t h = st->total >= 32 ? xx_converge(st->v1, st->v2, st->v3, st->v4) : st->seed + XXP5;
    return xx_tail(h + st->total, st->mem, st->memsize);
}

/* Where a normalised key goes: into `out` (room checked by a counting pass), into a
 * hash (both lanes), or nowhere (only counted). */
typedef struct {
    unsigned char *out;
    XXState *hash; /* two states, one per lane */
    size_t len;    /* bytes produced so far */
    size_t fill;   /* hashing: bytes waiting in buf */
    /* hashing: the normalised key's next bytes, given to both lanes in one update (a key
     * comes in many short pieces; XXH64 of the whole is the same however it is cut) */
    unsigned char buf[256];
} KeySink;

static inline void sink_flush(KeySink *k)
{
    if (k->fill) {
        xx_update(&k->hash[0], k->buf, k->fill);
        xx_update(&k->hash[1], k->buf, k->fill);
        k->fill = 0;
    }
}

static inline void sink_put(KeySink *k, const unsigned char *p, size_t n)
{
    if (k->out != NULL) {
        memcpy(k->out + k->len, p, n);
    } else if (k->hash != NULL) {
        if (n > sizeof k->buf - k->fill) {
            sink_flush(k);
            if (n >= sizeof k->buf) { /* a long piece: straight to the lanes */
                xx_update(&k->hash[0], p, n);
                xx_update(&k->hash[1], p, n);
                k->len += n;
                return;
            }
        }
        memcpy(k->buf + k->fill, p, n);
        k->fill += n;
    }
    k->len += n;
}

#include "normalize.h"

/* ---------------------------------------------------------------------------------
 * --skip-chars in text mode counts characters as Python's UTF-8 decoder with
 * surrogateescape does: a valid sequence is one character, every byte of an invalid
 * one is a character of its own.
 */
static size_t utf8_sequence_length(const unsigned char *p, size_t avail)
{
    unsigned char c = p[0];
    if (c < 0x80) return 1;
    if (c >= 0xC2 && c <= 0xDF) return (avail >= 2 && (p[1] & 0xC0) == 0x80) ? 2 : 0;
    if (c >= 0xE0 && c <= 0xEF) {
        unsigned char lo = (c == 0xE0) ? 0xA0 : 0x80, hi = (c == 0xED) ? 0x9F : 0xBF;
        if (avail < 3 || p[1] < lo || p[1] > hi || (p[2] & 0xC0) != 0x80) return 0;
        return 3;
    }
    if (c >= 0xF0 && c <= 0xF4) {
        unsigned char lo = (c == 0xF0) ? 0x90 : 0x80, hi = (c == 0xF4) ? 0x8F : 0xBF;
        if (avail < 4 || p[1] < lo || p[1] > hi || (p[2] & 0xC0) != 0x80 ||
            (p[3] & 0xC0) != 0x80)
            return 0;
        return 4;
    }
    return 0;
}

/* Byte offset at which the key starts after skipping `skip` characters (or bytes). */
static size_t key_offset(const unsigned char *p, size_t len, uint64_t skip, int byte_mode)
{
    if (byte_mode) return skip < (uint64_t)len ? (size_t)skip : len;
    size_t i = 0;
    while (skip > 0 && i < len) {
        size_t step = utf8_sequence_length(p + i, len - i);
        i += step ? step : 1;
        skip--;
    }
    return i;
}

/* Byte offset after `fields` blank-separated fields, as `uniq -f` skips them: each is
 * a run of blanks (space, tab), then a run of other bytes. */
static size_t fields_offset(const unsigned char *p, size_t len, uint64_t fields)
{
    size_t i = 0;
    for (; fields > 0 && i < len; fields--) {
        while (i < len && (p[i] == ' ' || p[i] == '\t')) i++;
        while (i < len && p[i] != ' ' && p[i] != '\t') i++;
    }
    return i;
}

/* Where a record's key starts: after `fields` fields, then `skip` characters. */
static size_t key_start(const unsigned char *p, size_t len, uint64_t fields, uint64_t skip,
                        int byte_mode)
{
    size_t off = fields ? fields_offset(p, len, fields) : 0;
    return skip ? off + key_offset(p + off, len - off, skip, byte_mode) : off;
}

/* The hash of a record's key: after `fields` fields and `skip` characters, normalised
 * with the classes of `normalize` (0: none), as XXH64 with each lane's seed. */
Hash128 seqdedup_key_hash(const unsigned char *p, size_t len, uint64_t fields, uint64_t skip,
                          int byte_mode, unsigned normalize, Hash128 seeds)
{
    size_t off = key_start(p, len, fields, skip, byte_mode);
    if (!normalize) return seqdedup_hash128(p + off, len - off, seeds);
    XXState state[2];
    xx_init(&state[0], seeds.lo);
    xx_init(&state[1], seeds.hi);
    KeySink sink; /* (not zeroed whole: only its buffer's filled part is read) */
    sink.out = NULL;
    sink.hash = state;
    sink.len = sink.fill = 0;
    normalize_key(p + off, len - off, normalize, &sink);
    sink_flush(&sink);
    Hash128 out = {xx_digest(&state[0]), xx_digest(&state[1])};
    return out;
}

unsigned seqdedup_normalize_classes(unsigned classes) { return classes & NORM_ALL; }

uint64_t seqdedup_xxh64(const unsigned char *p, size_t len, uint64_t seed)
{
    return xxh64(p, len, seed);
}

/* ---- module functions that hash ------------------------------------------------ */

PyObject *seqdedup_py_xxh64(PyObject *self, PyObject *args)
{
    Py_buffer data;
    unsigned long long seed = 0;
    if (!PyArg_ParseTuple(args, "y*|K", &data, &seed)) return NULL;
    uint64_t h;
    WITHOUT_GIL(data.len >= GIL_MINSIZE, h = xxh64(data.buf, (size_t)data.len, seed));
    PyBuffer_Release(&data);
    return PyLong_FromUnsignedLongLong(h);
}

/* _lane_seeds(seed) -> (lo, hi): the seeds of a key hash's two XXH64 lanes (tests). */
PyObject *seqdedup_py_lane_seeds(PyObject *self, PyObject *arg)
{
    Hash128 seeds;
    if (!seqdedup_to_seed(arg, &seeds)) return NULL;
    return Py_BuildValue("(KK)", (unsigned long long)seeds.lo, (unsigned long long)seeds.hi);
}

PyObject *seqdedup_py_hash_records(PyObject *self, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"records",   "seed",      "skip_chars", "byte_mode",
                             "normalize", "skip_fields", NULL};
    PyObject *records;
    Hash128 seeds = {0, 0};
    uint64_t skip = 0, fields = 0;
    int byte_mode = 0;
    unsigned normalize = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O|O&O&pO&O&", kwlist, &records,
                                     seqdedup_to_seed, &seeds,
                                     seqdedup_to_u64, &skip, &byte_mode, seqdedup_to_u32,
                                     &normalize, seqdedup_to_u64, &fields))
        return NULL;
    PyObject *seq = PySequence_Fast(records, "records must be a sequence of bytes");
    if (seq == NULL) return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    if (n > PY_SSIZE_T_MAX / 16) {
        Py_DECREF(seq);
        return PyErr_NoMemory();
    }
    PyObject *out = PyBytes_FromStringAndSize(NULL, n * 16);
    if (out == NULL) {
        Py_DECREF(seq);
        return NULL;
    }
    char *dst = PyBytes_AS_STRING(out);
    PyObject **items = PySequence_Fast_ITEMS(seq);
    for (Py_ssize_t i = 0; i < n; i++) {
        if (!PyBytes_Check(items[i])) {
            PyErr_SetString(PyExc_TypeError, "records must be bytes");
            Py_DECREF(seq);
            Py_DECREF(out);
            return NULL;
        }
        const unsigned char *p = (const unsigned char *)PyBytes_AS_STRING(items[i]);
        size_t len = (size_t)PyBytes_GET_SIZE(items[i]);
        Hash128 h =
            seqdedup_key_hash(p, len, fields, skip, byte_mode, normalize & NORM_ALL, seeds);
        memcpy(dst + 16 * i, &h, 16);
    }
    Py_DECREF(seq);
    return out;
}

/* normalize(key, classes) -> bytes: the key with the classes' matches replaced. */
PyObject *seqdedup_py_normalize(PyObject *self, PyObject *args)
{
    Py_buffer data;
    unsigned classes;
    if (!PyArg_ParseTuple(args, "y*O&", &data, seqdedup_to_u32, &classes)) return NULL;
    const unsigned char *p = data.buf;
    size_t n = (size_t)data.len;
    KeySink count = {NULL, NULL, 0, 0, {0}};
    normalize_key(p, n, classes & NORM_ALL, &count);
    PyObject *out = count.len > (size_t)PY_SSIZE_T_MAX
                        ? PyErr_NoMemory()
                        : PyBytes_FromStringAndSize(NULL, (Py_ssize_t)count.len);
    if (out != NULL) {
        KeySink write = {(unsigned char *)PyBytes_AS_STRING(out), NULL, 0, 0, {0}};
        normalize_key(p, n, classes & NORM_ALL, &write);
    }
    PyBuffer_Release(&data);
    return out;
}

PyObject *seqdedup_py_first_match(PyObject *self, PyObject *args)
{
    Py_buffer data;
    unsigned classes;
    if (!PyArg_ParseTuple(args, "y*O&", &data, seqdedup_to_u32, &classes)) return NULL;
    size_t start = 0;
    size_t end = nd_first_match(data.buf, (size_t)data.len, classes & NORM_ALL, &start);
    PyBuffer_Release(&data);
    if (!end) Py_RETURN_NONE;
    return Py_BuildValue("(nn)", (Py_ssize_t)start, (Py_ssize_t)end);
}

PyObject *seqdedup_py_key_offset(PyObject *self, PyObject *args)
{
    Py_buffer data;
    uint64_t skip, fields = 0;
    int byte_mode = 0;
    if (!PyArg_ParseTuple(args, "y*O&|pO&", &data, seqdedup_to_u64, &skip, &byte_mode,
                          seqdedup_to_u64, &fields))
        return NULL;
    size_t off = key_start(data.buf, (size_t)data.len, fields, skip, byte_mode);
    PyBuffer_Release(&data);
    return PyLong_FromSize_t(off);
}
