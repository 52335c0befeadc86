/*
 * --budget's token estimate (seqdedup.tokens holds the definition in Python, as a
 * regular expression): per record, a run of letters costs one token per 6 begun, a
 * run of digits one per 3, a line feed one, a run of other white space one where a
 * digit follows it (a vocabulary keeps no space with a number) and none otherwise,
 * any other byte one.
 */
#include "kernel.h"
#include "functions.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/* A block's bytes by class, as bit masks (bit k: the block's byte k): letters, digits,
 * white space other than a line feed, and the bytes the block has. Every other byte (a
 * line feed too) is a piece of its own. */
typedef struct {
    uint64_t letters, digits, blanks, valid;
} TokenMasks;

static int token_blank(unsigned char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v';
}

/* Bytes from..count of the block, one at a time (a block's tail, or every byte where
 * SSE2 is not there). */
static void masks_bytewise(const unsigned char *text, size_t from, size_t count, TokenMasks *m)
{
    for (size_t k = from; k < count; k++) {
        unsigned char c = text[k], lower = (unsigned char)(c | 0x20);
        uint64_t bit = (uint64_t)1 << k;
        if (lower >= 'a' && lower <= 'z') m->letters |= bit;
        else if (c >= '0' && c <= '9') m->digits |= bit;
        else if (token_blank(c)) m->blanks |= bit;
    }
}

#if defined(__SSE2__)
/* The classes of 16 bytes from p as three 16-bit masks (signed byte compares: a byte
 * from 0x80 up is negative, none of the classes). */
static void masks16(const unsigned char *p, unsigned *letters, unsigned *digits, unsigned *blanks)
{
    __m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
    __m128i lower = _mm_or_si128(v, _mm_set1_epi8(0x20));
    __m128i letter = _mm_and_si128(_mm_cmpgt_epi8(lower, _mm_set1_epi8('a' - 1)),
                                   _mm_cmplt_epi8(lower, _mm_set1_epi8('z' + 1)));
    __m128i digit = _mm_and_si128(_mm_cmpgt_epi8(v, _mm_set1_epi8('0' - 1)),
                                  _mm_cmplt_epi8(v, _mm_set1_epi8('9' + 1)));
    __m128i controls = _mm_and_si128(_mm_cmpgt_epi8(v, _mm_set1_epi8('\t' - 1)),
                                     _mm_cmplt_epi8(v, _mm_set1_epi8('\r' + 1)));
    __m128i blank = _mm_or_si128(_mm_andnot_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('\n')), controls),
                                 _mm_cmpeq_epi8(v, _mm_set1_epi8(' ')));
    *letters = (unsigned)_mm_movemask_epi8(letter);
    *digits = (unsigned)_mm_movemask_epi8(digit);
    *blanks = (unsigned)_mm_movemask_epi8(blank);
}
#endif

/* The masks of text[0..count), count <= 64, where `readable` bytes from text may be read
 * (at least count): 16 bytes at a time where SSE2 is there (a branch per byte on its
 * class is what the branch predictor cannot learn), reading past count only within
 * `readable` (the bits past count are dropped). */
static TokenMasks block_masks(const unsigned char *text, size_t count, size_t readable)
{
    TokenMasks m = {0, 0, 0, count == 64 ? ~(uint64_t)0 : ((uint64_t)1 << count) - 1};
    size_t k = 0;
#if defined(__SSE2__)
    for (; k < count && k + 16 <= readable; k += 16) {
        unsigned letters, digits, blanks;
        masks16(text + k, &letters, &digits, &blanks);
        m.letters |= (uint64_t)letters << k;
        m.digits |= (uint64_t)digits << k;
        m.blanks |= (uint64_t)blanks << k;
    }
    m.letters &= m.valid;
    m.digits &= m.valid;
    m.blanks &= m.valid;
#endif
    if (k < count) masks_bytewise(text, k, count, &m);
    return m;
}

/* The set bits of x, by adding neighbouring fields (inline: without -mpopcnt, which a
 * build for any x86-64 does not have, the compiler's builtin is a library call). */
static inline unsigned popcount64(uint64_t x)
{
    x -= (x >> 1) & UINT64_C(0x5555555555555555);
    x = (x & UINT64_C(0x3333333333333333)) + ((x >> 2) & UINT64_C(0x3333333333333333));
    x = (x + (x >> 4)) & UINT64_C(0x0F0F0F0F0F0F0F0F);
    return (unsigned)((x * UINT64_C(0x0101010101010101)) >> 56);
}

static unsigned highest_bit(uint64_t x) /* x != 0 */
{
#if defined(__GNUC__) || defined(__clang__)
    return 63u - (unsigned)__builtin_clzll(x);
#else
    unsigned k = 0;
    while (x >>= 1) k++;
    return k;
#endif
}

/* Where a run of one class stands at a block's end: whether the block's last byte is in
 * one, and its length so far modulo the bytes a token holds. */
typedef struct {
    int open;
    unsigned phase;
} RunState;

/* The tokens that runs of one class begin in a block (`runs`: its mask; `valid`: the
 * block's bytes), a token every `width` bytes of a run (bits 0, width, 2 width, ... of
 * `every`); `state` carries a run from the block before and into the next. A run's
 * further tokens are found a step of `width` bytes at a time, over bytes that are all of
 * the run (a run is rarely more than a few steps long). */
static int64_t run_tokens(uint64_t runs, uint64_t valid, unsigned width, uint64_t every,
                          RunState *state)
{
    uint64_t lead = state->open ? runs & ~(runs + 1) : 0; /* (the run carried on) */
    int64_t tokens = popcount64(lead & (every << ((width - state->phase) % width)));
    uint64_t rest = runs & ~lead, starts = rest & ~(rest << 1), whole = rest;
    for (unsigned j = 1; j <= width; j++) whole &= rest << j; /* (width bytes of a run before) */
    tokens += popcount64(starts);
    for (uint64_t step = starts; (step = (step << width) & whole) != 0;) tokens += popcount64(step);
    uint64_t outside = valid & ~runs;
    unsigned count = (unsigned)popcount64(valid), top = count - 1;
    if (!((runs >> top) & 1)) {
        state->open = 0;
        state->phase = 0;
    } else if (outside == 0) { /* (the whole block is of the run) */
        state->phase = ((state->open ? state->phase : 0) + count) % width;
        state->open = 1;
    } else { /* (the run began after the block's last byte of another class) */
        state->phase = (top - highest_bit(outside)) % width;
        state->open = 1;
    }
    return tokens;
}

/* A record's estimated tokens, 64 bytes at a time: each other byte one, each run of
 * letters one per 6 begun, of digits one per 3, white space one where a digit follows. */
static int64_t record_tokens(const unsigned char *text, size_t length, size_t readable)
{
    static const uint64_t every_3 = UINT64_C(0x9249249249249249); /* bits 0, 3, ..., 63 */
    static const uint64_t every_6 = UINT64_C(0x1041041041041041); /* bits 0, 6, ..., 60 */
    RunState letters = {0, 0}, digits = {0, 0};
    uint64_t blank_before = 0; /* (the byte before the block: white space) */
    int64_t count = 0;
    for (size_t at = 0; at < length; at += 64) {
        size_t size = length - at < 64 ? length - at : 64;
        TokenMasks m = block_masks(text + at, size, readable - at);
        uint64_t other = m.valid & ~(m.letters | m.digits | m.blanks);
        count += popcount64(other);
        count += popcount64(m.digits & ((m.blanks << 1) | blank_before));
        count += run_tokens(m.letters, m.valid, 6, every_6, &letters);
        count += run_tokens(m.digits, m.valid, 3, every_3, &digits);
        blank_before = (m.blanks >> (size - 1)) & 1;
    }
    return count;
}

/* token_counts(data, bounds, cumulative=False) -> bytes: for each record
 * data[bounds[2k]:bounds[2k+1]] (bounds: native int64 pairs), its estimated tokens as a
 * native int64; `cumulative`: the n + 1 sums of the first k records' instead (0 first),
 * what a cost of any stretch is read from (no pass in Python over a million counts). */
PyObject *seqdedup_py_token_counts(PyObject *self, PyObject *args)
{
    Py_buffer data, bounds;
    int cumulative = 0;
    if (!PyArg_ParseTuple(args, "y*y*|p", &data, &bounds, &cumulative)) return NULL;
    PyObject *result = NULL;
    if (bounds.len % (Py_ssize_t)(2 * sizeof(int64_t))) {
        PyErr_SetString(PyExc_ValueError, "token_counts: bounds are pairs of int64");
        goto done;
    }
    size_t n = (size_t)bounds.len / (2 * sizeof(int64_t));
    size_t first = cumulative ? 1 : 0; /* (the leading 0 of the sums) */
    const unsigned char *pairs = bounds.buf; /* read with memcpy: any alignment */
    result = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)((n + first) * sizeof(int64_t)));
    if (result == NULL) goto done;
    unsigned char *counts = (unsigned char *)PyBytes_AS_STRING(result);
    const unsigned char *text = data.buf;
    int64_t sum = 0; /* (at most the data's length: one token a byte at most) */
    if (cumulative) memcpy(counts, &sum, sizeof sum);
    for (size_t k = 0; k < n; k++) {
        int64_t span[2];
        memcpy(span, pairs + k * sizeof span, sizeof span);
        if (span[0] < 0 || span[0] > span[1] || span[1] > (int64_t)data.len) {
            Py_CLEAR(result);
            PyErr_SetString(PyExc_ValueError, "token_counts: a record lies outside the data");
            goto done;
        }
        int64_t count = record_tokens(text + span[0], (size_t)(span[1] - span[0]),
                                      (size_t)(data.len - span[0]));
        if (cumulative) {
            if (count > INT64_MAX - sum) { /* (records may overlap: each is counted) */
                Py_CLEAR(result);
                PyErr_SetString(PyExc_OverflowError, "token_counts: the sum overflows");
                goto done;
            }
            sum += count;
            count = sum;
        }
        memcpy(counts + (k + first) * sizeof count, &count, sizeof count);
    }
done:
    PyBuffer_Release(&data);
    PyBuffer_Release(&bounds);
    return result;
}
