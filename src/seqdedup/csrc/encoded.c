/*
 * Key hashes straight from library rows (library.encode_records: uint32 count, count
 * uint32 lengths, then the records), without a Python object per record: one row
 * (hash_encoded) or a group of rows at once (hash_encoded_rows). Every length is checked
 * against what the row holds: a corrupt row is a ValueError, never a read past its end.
 * And the other way: a row made from records joined by a delimiter (encode_joined).
 */
#include "kernel.h"
#include "functions.h"

/* A little-endian uint32 (the rows' counts and lengths). */
static inline uint32_t read32(const unsigned char *p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) |
           ((uint32_t)p[3] << 24);
}

static inline void write32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)v, p[1] = (unsigned char)(v >> 8);
    p[2] = (unsigned char)(v >> 16), p[3] = (unsigned char)(v >> 24);
}

typedef struct {
    uint64_t fields, skip;
    int byte_mode;
    unsigned normalize;
    Hash128 seeds;
} KeySettings;

/* The key hashes of a row's `count` records (lengths from base + 4, records from `pos`)
 * into dst; where the records end, or SIZE_MAX when a length runs past the row. */
static size_t hash_rows(const unsigned char *base, size_t size, uint32_t count, size_t pos,
                        const KeySettings *keys, char *dst)
{
    for (uint32_t i = 0; i < count; i++) {
        size_t len = read32(base + 4 + 4 * (size_t)i);
        if (len > size - pos) return SIZE_MAX;
        Hash128 h = seqdedup_key_hash(base + pos, len, keys->fields, keys->skip,
                                      keys->byte_mode, keys->normalize, keys->seeds);
        memcpy(dst + 16 * (size_t)i, &h, 16);
        pos += len;
    }
    return pos;
}

/* Key hashes straight from a library row (library.encode_records: uint32 count, count
 * uint32 lengths, the records), without a Python object per record. Every length is
 * checked against what the blob holds: a corrupt row is a ValueError, never a read
 * past its end. */
PyObject *seqdedup_py_hash_encoded(PyObject *self, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"encoded",   "seed",      "skip_chars", "byte_mode",
                             "normalize", "skip_fields", NULL};
    Py_buffer blob;
    Hash128 seeds = {0, 0};
    uint64_t skip = 0, fields = 0;
    int byte_mode = 0;
    unsigned normalize = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "y*|O&O&pO&O&", kwlist, &blob,
                                     seqdedup_to_seed, &seeds,
                                     seqdedup_to_u64, &skip, &byte_mode, seqdedup_to_u32,
                                     &normalize, seqdedup_to_u64, &fields))
        return NULL;
    const unsigned char *base = blob.buf;
    size_t size = (size_t)blob.len;
    PyObject *out = NULL;
    if (size < 4) goto corrupt;
    uint32_t count = read32(base);
    if ((size - 4) / 4 < count) goto corrupt;
    size_t pos = 4 + 4 * (size_t)count; /* first record */
    size_t words = count; /* count * 16 overflows where size_t is 32 bits */
    if (words > (size_t)PY_SSIZE_T_MAX / 16) goto corrupt;
    out = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)count * 16);
    if (out == NULL) goto done;
    KeySettings keys = {fields, skip, byte_mode, seqdedup_normalize_classes(normalize), seeds};
    /* Pure work on the row (held by `blob`) and the new bytes object nobody else sees. */
    WITHOUT_GIL(size >= GIL_MINSIZE,
                pos = hash_rows(base, size, count, pos, &keys, PyBytes_AS_STRING(out)));
    if (pos != size) goto corrupt;
    goto done;
corrupt:
    Py_CLEAR(out);
    PyErr_SetString(PyExc_ValueError, "encoded records: lengths do not match the data");
done:
    PyBuffer_Release(&blob);
    return out;
}

/* The key hashes of many library rows at once, each row's followed by `separator` (16
 * bytes: the sentinel record between sequences), in one bytes object: one call per
 * group of rows instead of one per row. Every row is checked as hash_encoded checks
 * it, all of them before any is hashed. */
PyObject *seqdedup_py_hash_encoded_rows(PyObject *self, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"rows",      "separator", "seed",        "skip_chars",
                             "byte_mode", "normalize", "skip_fields", NULL};
    PyObject *rows;
    Py_buffer separator;
    Hash128 seeds = {0, 0};
    uint64_t skip = 0, fields = 0;
    int byte_mode = 0;
    unsigned normalize = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "Oy*|O&O&pO&O&", kwlist, &rows, &separator,
                                     seqdedup_to_seed, &seeds, seqdedup_to_u64, &skip,
                                     &byte_mode, seqdedup_to_u32, &normalize, seqdedup_to_u64,
                                     &fields))
        return NULL;
    PyObject *out = NULL, *seq = NULL;
    if (separator.len != 16) {
        PyErr_SetString(PyExc_ValueError, "the separator is one key hash: 16 bytes");
        goto done;
    }
    seq = PySequence_Fast(rows, "expected a list of rows (bytes)");
    if (seq == NULL) goto done;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    size_t words = 0; /* key hashes out: every row's records and its separator */
    for (Py_ssize_t k = 0; k < n; k++) {
        PyObject *row = PySequence_Fast_GET_ITEM(seq, k);
        if (!PyBytes_Check(row)) {
            PyErr_SetString(PyExc_TypeError, "a row is bytes");
            goto done;
        }
        size_t size = (size_t)PyBytes_GET_SIZE(row);
        const unsigned char *base = (const unsigned char *)PyBytes_AS_STRING(row);
        if (size < 4 || (size - 4) / 4 < read32(base)) goto corrupt;
        words += (size_t)read32(base) + 1;
        if (words > (size_t)PY_SSIZE_T_MAX / 16) goto corrupt;
    }
    out = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(words * 16));
    if (out == NULL) goto done;
    KeySettings keys = {fields, skip, byte_mode, seqdedup_normalize_classes(normalize), seeds};
    char *dst = PyBytes_AS_STRING(out);
    for (Py_ssize_t k = 0; k < n; k++) {
        PyObject *row = PySequence_Fast_GET_ITEM(seq, k);
        size_t size = (size_t)PyBytes_GET_SIZE(row);
        const unsigned char *base = (const unsigned char *)PyBytes_AS_STRING(row);
        uint32_t count = read32(base);
        if (hash_rows(base, size, count, 4 + 4 * (size_t)count, &keys, dst) != size) goto corrupt;
        dst += 16 * (size_t)count;
        memcpy(dst, separator.buf, 16);
        dst += 16;
    }
    goto done;
corrupt:
    Py_CLEAR(out);
    PyErr_SetString(PyExc_ValueError, "encoded records: lengths do not match the data");
done:
    Py_XDECREF(seq);
    PyBuffer_Release(&separator);
    return out;
}

/* library_windows(fingerprints, firsts, lengths, width, size) -> (fps, starts): of every
 * window of the key region (fingerprints: two uint64 lanes each, the window starting at
 * each region index), those that lie inside one sequence (sequence k: `lengths[k]`
 * records from region index `firsts[k]`), with their starts counted from the region's
 * end (index - size), as the matcher takes library windows. No Python object per
 * window. */
PyObject *seqdedup_py_library_windows(PyObject *self, PyObject *args)
{
    Py_buffer every, firsts, lengths;
    Py_ssize_t width, size;
    if (!PyArg_ParseTuple(args, "y*y*y*nn", &every, &firsts, &lengths, &width, &size))
        return NULL;
    PyObject *result = NULL, *fps = NULL, *starts = NULL;
    size_t windows = (size_t)every.len / 16, count = (size_t)firsts.len / 8;
    if (every.len % 16 || firsts.len % 8 || lengths.len != firsts.len || width < 1 ||
        size < 0) {
        PyErr_SetString(PyExc_ValueError, "library_windows: malformed arguments");
        goto done;
    }
    const int64_t *first = firsts.buf, *length = lengths.buf;
    size_t total = 0;
    for (size_t k = 0; k < count; k++) {
        int64_t inside = length[k] - (int64_t)width + 1;
        if (inside <= 0) continue;
        if (first[k] < 0 || (size_t)first[k] > windows || (size_t)inside > windows - (size_t)first[k]) {
            PyErr_SetString(PyExc_ValueError, "library_windows: a sequence past the windows");
            goto done;
        }
        total += (size_t)inside;
    }
    fps = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(total * 16));
    starts = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(total * 8));
    if (fps == NULL || starts == NULL) goto done;
    char *fp_out = PyBytes_AS_STRING(fps);
    int64_t *start_out = (int64_t *)(void *)PyBytes_AS_STRING(starts);
    for (size_t k = 0; k < count; k++) {
        int64_t inside = length[k] - (int64_t)width + 1;
        if (inside <= 0) continue;
        memcpy(fp_out, (const char *)every.buf + 16 * (size_t)first[k], 16 * (size_t)inside);
        fp_out += 16 * (size_t)inside;
        for (int64_t i = 0; i < inside; i++) *start_out++ = first[k] + i - (int64_t)size;
    }
    result = PyTuple_Pack(2, fps, starts);
done:
    Py_XDECREF(fps);
    Py_XDECREF(starts);
    PyBuffer_Release(&every);
    PyBuffer_Release(&firsts);
    PyBuffer_Release(&lengths);
    return result;
}

/* encode_joined(data, delimiter, count, skip=0) -> bytes: the row
 * (library.encode_records) of count records of data from record skip on, records joined
 * by delimiter (a run's records as the chunk path hands them over: --fold's sequence
 * ids, a repeated piece saved by -l). */
/* skip_records(data, delimiter, offset, count): where the record `count` records after
 * the one starting at byte `offset` starts (past `count` delimiters), or -1 when fewer
 * delimiters follow. */
PyObject *seqdedup_py_skip_records(PyObject *self, PyObject *args)
{
    Py_buffer data, delim;
    Py_ssize_t offset, count;
    if (!PyArg_ParseTuple(args, "y*y*nn", &data, &delim, &offset, &count)) return NULL;
    PyObject *result = NULL;
    if (delim.len == 0 || offset < 0 || offset > data.len || count < 0) {
        PyErr_SetString(PyExc_ValueError,
                        "skip_records: a delimiter, 0 <= offset <= len(data), 0 <= count");
        goto done;
    }
    const unsigned char *p = (const unsigned char *)data.buf + offset;
    const unsigned char *end = (const unsigned char *)data.buf + data.len;
    Py_ssize_t at = offset;
    for (Py_ssize_t i = 0; i < count && at >= 0; i++) {
        const unsigned char *hit = seqdedup_find_delimiter(p, end, delim.buf, (size_t)delim.len);
        if (hit == NULL) {
            at = -1;
        } else {
            p = hit + delim.len;
            at = (Py_ssize_t)(p - (const unsigned char *)data.buf);
        }
    }
    result = PyLong_FromSsize_t(at);
done:
    PyBuffer_Release(&data);
    PyBuffer_Release(&delim);
    return result;
}

PyObject *seqdedup_py_encode_joined(PyObject *self, PyObject *args)
{
    Py_buffer data, delim;
    Py_ssize_t count, skip = 0;
    if (!PyArg_ParseTuple(args, "y*y*n|n", &data, &delim, &count, &skip)) return NULL;
    const unsigned char *p = data.buf, *end = p + data.len;
    size_t dlen = (size_t)delim.len, content = 0;
    PyObject *row = NULL;
    /* (a record is at least one byte of data or a delimiter: count is bounded by it) */
    if (dlen == 0 || count < 0 || skip < 0 || count > data.len + 1 ||
        count > (Py_ssize_t)UINT32_MAX) {
        PyErr_SetString(PyExc_ValueError,
                        "encode_joined: a delimiter and 0 <= skip, 0 <= count <= records");
        goto done;
    }
    for (Py_ssize_t i = 0; i < skip; i++) { /* the records before the first taken */
        const unsigned char *hit = seqdedup_find_delimiter(p, end, delim.buf, dlen);
        if (hit == NULL && !(i + 1 == skip && count == 0)) { /* (skip: all of them) */
            PyErr_SetString(PyExc_ValueError, "encode_joined: fewer records than skip + count");
            goto done;
        }
        p = hit != NULL ? hit + dlen : end;
    }
    const unsigned char *from = p;
    size_t head = 4 + 4 * (size_t)count;
    /* First pass: the contents' size, checking that count records are there. */
    for (Py_ssize_t i = 0; i < count; i++) {
        const unsigned char *hit = seqdedup_find_delimiter(p, end, delim.buf, dlen);
        if (hit == NULL && i + 1 < count) {
            PyErr_SetString(PyExc_ValueError, "encode_joined: fewer records than skip + count");
            goto done;
        }
        const unsigned char *stop = hit != NULL ? hit : end;
        if ((size_t)(stop - p) > UINT32_MAX) {
            PyErr_SetString(PyExc_ValueError, "encode_joined: a record of 4 GiB or more");
            goto done;
        }
        content += (size_t)(stop - p);
        p = hit != NULL ? hit + dlen : end;
    }
    row = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(head + content));
    if (row == NULL) goto done;
    unsigned char *out = (unsigned char *)PyBytes_AS_STRING(row), *body = out + head;
    write32(out, (uint32_t)count);
    p = from;
    for (Py_ssize_t i = 0; i < count; i++) {
        const unsigned char *hit = seqdedup_find_delimiter(p, end, delim.buf, dlen);
        const unsigned char *stop = hit != NULL ? hit : end;
        size_t len = (size_t)(stop - p);
        write32(out + 4 + 4 * (size_t)i, (uint32_t)len);
        memcpy(body, p, len);
        body += len;
        p = hit != NULL ? hit + dlen : end;
    }
done:
    PyBuffer_Release(&data);
    PyBuffer_Release(&delim);
    return row;
}
