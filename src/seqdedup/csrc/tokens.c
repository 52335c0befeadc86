/*
 * --budget's token estimate (seqdedup.tokens holds the definition in Python, as a
 * regular expression): per record, a run of letters costs one token per 6 begun, a
 * run of digits one per 3, a line feed one, a run of other white space one where a
 * digit follows it (a vocabulary keeps no space with a number) and none otherwise,
 * any other byte one.
 */
#include "kernel.h"
#include "functions.h"

/* A byte's class for the estimate: a letter, a digit, another byte (a line feed too: a
 * piece of its own), or white space other than a line feed. */
enum { TOKEN_LETTER, TOKEN_DIGIT, TOKEN_OTHER, TOKEN_BLANK, TOKEN_NONE };

static unsigned token_class(unsigned char c)
{
    if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z')) return TOKEN_LETTER;
    if (c >= '0' && c <= '9') return TOKEN_DIGIT;
    if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') return TOKEN_BLANK;
    return TOKEN_OTHER;
}

/* Per byte, without a branch on the text (where a run ends is data the branch predictor
 * cannot learn): `phase`, the byte's place in its run of one class, wraps at the run
 * length one token holds (6 letters, 3 digits, 1 other byte); a token begins where it
 * is 0. White space costs nothing itself; a digit right after it counts one more (the
 * white space's own token, where a digit follows it). */
static int64_t record_tokens(const unsigned char *text, size_t length)
{
    static const unsigned wrap[4] = {6, 3, 1, 1}, begins[4] = {1, 1, 1, 0};
    static unsigned char classes[256];
    static int ready = 0;
    if (!ready) { /* (the same every time: a second making changes nothing) */
        for (int c = 0; c < 256; c++) classes[c] = (unsigned char)token_class((unsigned char)c);
        ready = 1;
    }
    int64_t count = 0;
    unsigned previous = TOKEN_NONE, phase = 0;
    for (size_t i = 0; i < length; i++) {
        unsigned kind = classes[text[i]];
        phase = kind == previous ? phase + 1 : 0;
        phase = phase == wrap[kind] ? 0 : phase;
        count += (int64_t)((phase == 0) & begins[kind]);
        count += (int64_t)((kind == TOKEN_DIGIT) & (previous == TOKEN_BLANK));
        previous = kind;
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
        int64_t count = record_tokens(text + span[0], (size_t)(span[1] - span[0]));
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
