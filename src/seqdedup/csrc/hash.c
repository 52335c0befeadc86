/*
 * Hashing: each record's key hash (SipHash-2-4-128 keyed with the run's seed, from
 * siphash.h), normalised on the fly by the scanner of normalize.h (the normalised key is
 * never held whole), and --skip-chars counted in characters as Python decodes UTF-8 with
 * surrogateescape. Also the module functions that hash: hash_records, normalize,
 * key_offset (library rows: encoded.c).
 */
#include "kernel.h"
#include "functions.h"
#include "siphash.h"

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

/* A record's key hash: SipHash-2-4-128 keyed with the run's 128-bit seed (siphash.h;
 * docs/engine.md, "Identity", says why a PRF and not a fast non-cryptographic hash). */
Hash128 seqdedup_hash128(const unsigned char *p, size_t len, Hash128 seeds)
{
    Hash128 out;
    sip128(p, len, seeds.lo, seeds.hi, &out.lo, &out.hi);
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

/* Where a normalised key goes: into `out` (room checked by a counting pass), into a
 * hash (both lanes), or nowhere (only counted). */
typedef struct {
    unsigned char *out;
    SipState *hash;
    size_t len;    /* bytes produced so far */
    size_t fill;   /* hashing: bytes waiting in buf */
    /* hashing: the normalised key's next bytes, given to both lanes in one update (a key
     * comes in many short pieces; the hash of the whole is the same however it is cut) */
    unsigned char buf[256];
} KeySink;

static inline void sink_flush(KeySink *k)
{
    if (k->fill) {
        sip_update(k->hash, k->buf, k->fill);
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
                sip_update(k->hash, p, n);
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
 * with the classes of `normalize` (0: none), keyed with the run's seed; the key's length
 * in *size. */
static Hash128 key_hash_sized(const unsigned char *p, size_t len, uint64_t fields,
                              uint64_t skip, int byte_mode, unsigned normalize, Hash128 seeds,
                              size_t *size)
{
    size_t off = key_start(p, len, fields, skip, byte_mode);
    *size = len - off;
    if (!normalize) return seqdedup_hash128(p + off, len - off, seeds);
    SipState state;
    sip_init(&state, seeds.lo, seeds.hi);
    KeySink sink; /* (not zeroed whole: only its buffer's filled part is read) */
    sink.out = NULL;
    sink.hash = &state;
    sink.len = sink.fill = 0;
    normalize_key(p + off, len - off, normalize, &sink);
    sink_flush(&sink);
    *size = sink.len;
    Hash128 out;
    sip_final(&state, &out.lo, &out.hi);
    return out;
}

Hash128 seqdedup_key_hash_sized(const unsigned char *p, size_t len, uint64_t fields,
                                uint64_t skip, int byte_mode, unsigned normalize, Hash128 seeds,
                                size_t *size)
{
    return key_hash_sized(p, len, fields, skip, byte_mode, normalize, seeds, size);
}

Hash128 seqdedup_key_hash(const unsigned char *p, size_t len, uint64_t fields, uint64_t skip,
                          int byte_mode, unsigned normalize, Hash128 seeds)
{
    size_t size;
    return key_hash_sized(p, len, fields, skip, byte_mode, normalize, seeds, &size);
}

unsigned seqdedup_normalize_classes(unsigned classes) { return classes & NORM_CLASSES; }

/* ---- module functions that hash ------------------------------------------------ */

/* hash_records(records, ...): each record's key hash (16 bytes); with sizes=True also
 * each key's length (int64), for a minimum size, the keys never made. */
PyObject *seqdedup_py_hash_records(PyObject *self, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"records",   "seed",        "skip_chars", "byte_mode",
                             "normalize", "skip_fields", "sizes",      NULL};
    PyObject *records;
    Hash128 seeds = {0, 0};
    uint64_t skip = 0, fields = 0;
    int byte_mode = 0, with_sizes = 0;
    unsigned normalize = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O|O&O&pO&O&p", kwlist, &records,
                                     seqdedup_to_seed, &seeds,
                                     seqdedup_to_u64, &skip, &byte_mode, seqdedup_to_u32,
                                     &normalize, seqdedup_to_u64, &fields, &with_sizes))
        return NULL;
    PyObject *seq = PySequence_Fast(records, "records must be a sequence of bytes");
    if (seq == NULL) return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    PyObject *out = NULL, *sizes = NULL;
    if (n > PY_SSIZE_T_MAX / 16) {
        PyErr_NoMemory();
        goto fail;
    }
    out = PyBytes_FromStringAndSize(NULL, n * 16);
    if (out == NULL) goto fail;
    if (with_sizes && (sizes = PyBytes_FromStringAndSize(NULL, n * 8)) == NULL) goto fail;
    char *dst = PyBytes_AS_STRING(out);
    PyObject **items = PySequence_Fast_ITEMS(seq);
    for (Py_ssize_t i = 0; i < n; i++) {
        if (!PyBytes_Check(items[i])) {
            PyErr_SetString(PyExc_TypeError, "records must be bytes");
            goto fail;
        }
        const unsigned char *p = (const unsigned char *)PyBytes_AS_STRING(items[i]);
        size_t len = (size_t)PyBytes_GET_SIZE(items[i]), size;
        Hash128 h = key_hash_sized(p, len, fields, skip, byte_mode, normalize & NORM_CLASSES,
                                   seeds, &size);
        memcpy(dst + 16 * i, &h, 16);
        if (sizes != NULL) {
            int64_t length = (int64_t)size; /* (a bytes object's length fits) */
            memcpy(PyBytes_AS_STRING(sizes) + 8 * i, &length, 8);
        }
    }
    Py_DECREF(seq);
    return sizes == NULL ? out : Py_BuildValue("(NN)", out, sizes);
fail:
    Py_DECREF(seq);
    Py_XDECREF(out);
    Py_XDECREF(sizes);
    return NULL;
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
    normalize_key(p, n, classes & NORM_CLASSES, &count);
    PyObject *out = count.len > (size_t)PY_SSIZE_T_MAX
                        ? PyErr_NoMemory()
                        : PyBytes_FromStringAndSize(NULL, (Py_ssize_t)count.len);
    if (out != NULL) {
        KeySink write = {(unsigned char *)PyBytes_AS_STRING(out), NULL, 0, 0, {0}};
        normalize_key(p, n, classes & NORM_CLASSES, &write);
    }
    PyBuffer_Release(&data);
    return out;
}

/* value_matches(record, classes) -> bytes: each match of the classes, left to right as
 * normalize() replaces them, as int64 (start, end, class bit) triples. */
PyObject *seqdedup_py_value_matches(PyObject *self, PyObject *args)
{
    Py_buffer data;
    unsigned classes;
    if (!PyArg_ParseTuple(args, "y*O&", &data, seqdedup_to_u32, &classes)) return NULL;
    PyObject *out = NULL;
    size_t n = (size_t)data.len;
    if (n > SIZE_MAX / (3 * sizeof(int64_t)) - 1) {
        PyErr_NoMemory();
        goto done;
    }
    int64_t *found = PyMem_RawMalloc(3 * sizeof(int64_t) * (n + 1)); /* (+1: never 0) */
    if (found == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    size_t count = nd_matches(data.buf, n, classes & NORM_CLASSES, found);
    out = PyBytes_FromStringAndSize((const char *)found,
                                    (Py_ssize_t)(3 * sizeof(int64_t) * count));
    PyMem_RawFree(found);
done:
    PyBuffer_Release(&data);
    return out;
}

PyObject *seqdedup_py_first_match(PyObject *self, PyObject *args)
{
    Py_buffer data;
    unsigned classes;
    if (!PyArg_ParseTuple(args, "y*O&", &data, seqdedup_to_u32, &classes)) return NULL;
    size_t start = 0;
    size_t end = nd_first_match(data.buf, (size_t)data.len, classes & NORM_CLASSES, &start);
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
