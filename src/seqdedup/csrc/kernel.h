/*
 * Internal declarations shared by the C units of seqdedup._kernel (not an API).
 *
 *   hash.c          key hashes (SipHash-2-4-128 of siphash.h; normalize.h, timestamps.h), --skip-chars
 *                   in characters, and the module functions that hash
 *   matcher.c       the exact window rule: the tables, push/finish (the record path)
 *   matcher_library.c  a loaded library's windows into the matcher, seen for the run
 *   confirm.c       the confirmation: a fingerprint's candidate counts when its key
 *                   hashes are the window's (and the log of key hashes it reads)
 *   chunks.c        the chunk path: raw chunks in, kept records out (filtered too)
 *   settled.c       the keys seen, for records settled before their window completes
 *   matcher_type.c  the Matcher type: construction, attributes, method table (matcher.h:
 *                   its state)
 *   module.c        the module: its functions and types, errors kept without the GIL
 *   jsonkey.c       json_keys (--json-key/--json-ignore, jsonkey.h); literal.c literal_mask
 *   sequences.c     the sequences table of attribution (counts, least recent evicted)
 *   attribution.c   attribution: duplicate runs cut into pieces, and their sources
 *   attributor.c    the Attributor type over it
 *   fold.c          --fold's key comparisons: a run's shortest period, its copies
 *   stretches.c     the chunk path's new material, encoded as library rows
 *   streamby.c      the StreamMatcher's rule per stream (--stream-by), with
 *                   streamby.h; streamby_history.c its history and what a candidate
 *                   is compared with (keylog.h: per position the key, the record
 *                   before); streamby_prefix.c the names by a prefix program;
 *                   streamby_names.c the names kept by the matcher (push_named);
 *                   streamby_type.c the type over them
 *   sized.c         the rule with a minimum size (--min-bytes): tables, stretches, sweeps
 *   sized_type.c    the SizeDecider type over it (sized.h: its state)
 *   keytable.c      diff's GOOD keys (KeyTable); chains.c, its passes over their sequences
 *   suggest.c       --suggest-window: what each window size removes, in one pass each
 *   tokens.c        --budget's token estimate per record
 *   functions.h     the module functions of the units without a type of their own
 *   dask_steps.c    the Dask engine's steps: a partition's records and key hashes, its
 *                   first windows, the earliest position of each fingerprint at its owner
 *
 * Here: the open-addressing table and growable arrays the units share (the Matcher's
 * state in matcher.h), and the functions one unit offers another (prefixed seqdedup_; the build
 * hides every symbol but the module's init function). Every allocation is checked; a
 * failure sets MemoryError. Memory comes from the raw allocator (PyMem_Raw*), which
 * needs no GIL, so that attribution can run without it (see seqdedup_unlocked).
 */
#ifndef SEQDEDUP_KERNEL_H
#define SEQDEDUP_KERNEL_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#if defined(__GNUC__) || defined(__clang__)
#define PREFETCH(addr) __builtin_prefetch(addr)
#else
#define PREFETCH(addr) ((void)0)
#endif

/* ---------------------------------------------------------------------------------
 * Errors where the GIL may be let go. Code that runs both with the GIL and without it
 * (attribution, and the tables and arrays it grows) fails through these: with the GIL
 * the exception is set at once; on a thread that let the GIL go (seqdedup_unlocked,
 * set by the caller around Py_BEGIN_ALLOW_THREADS) it is kept for that thread and set
 * by seqdedup_raise_kept() once the GIL is back. Each returns -1.
 */
#if defined(_MSC_VER)
#define THREAD_LOCAL __declspec(thread)
#elif defined(__GNUC__) || defined(__clang__)
#define THREAD_LOCAL __thread /* (the build is C99, which has no _Thread_local) */
#else
#define THREAD_LOCAL _Thread_local
#endif
extern THREAD_LOCAL int seqdedup_unlocked;
int seqdedup_fail(PyObject *type, const char *format, ...);
int seqdedup_no_memory(void);
void seqdedup_raise_kept(void);

/* Run `statement` without the GIL when `worth` holds (hashlib's rule: only work that is
 * larger than the switch), else with it. The statement touches no Python object; what
 * fails in it is kept and raised once the GIL is back. The one place the kernel lets the
 * GIL go: the caller has marked its object busy, so no other call reaches it meanwhile. */
#define WITHOUT_GIL(worth, statement)                                                     \
    do {                                                                                  \
        if (worth) {                                                                      \
            PyThreadState *gil_saved_ = PyEval_SaveThread();                              \
            seqdedup_unlocked = 1;                                                        \
            statement;                                                                    \
            seqdedup_unlocked = 0;                                                        \
            PyEval_RestoreThread(gil_saved_);                                             \
            seqdedup_raise_kept();                                                        \
        } else {                                                                          \
            statement;                                                                    \
        }                                                                                 \
    } while (0)

/* ---------------------------------------------------------------------------------
 * Identities (docs/engine.md, "Identity of windows"). A record's key hash is 128 bits:
 * SipHash-2-4-128 of the key keyed with the run's secret 128-bit seed (a PRF). A
 * window's fingerprint only finds candidates: per lane, a polynomial in the key hashes
 * modulo the prime 2^61 - 1 at a secret base drawn from the seed (for W = 1, the key
 * hash itself). A candidate decides nothing until the W key hashes of both windows are
 * compared (the matcher's confirmation), so a wrong skip needs two different keys with
 * equal 128-bit hashes, whatever the input.
 */
enum { RUN_HEADS = 1, RUN_RECORDS = 2 }; /* Matcher.run_heads */

typedef struct {
    uint64_t lo, hi;
} Hash128;

static inline int hash_equal(Hash128 a, Hash128 b) { return a.lo == b.lo && a.hi == b.hi; }
static inline int hash_is_zero(Hash128 a) { return (a.lo | a.hi) == 0; }
#include "field.h" /* arithmetic modulo 2^61 - 1, for the window fingerprints */

/* Where a table puts a key: both lanes mixed, so either one alone may be constant. */
static inline uint64_t hash_mix(Hash128 a)
{
    return (a.lo ^ (a.hi * 0xC2B2AE3D27D4EB4FULL)) * 0x9E3779B97F4A7C15ULL;
}

/* ---------------------------------------------------------------------------------
 * Open-addressing table keyed by 128-bit identities, linear probing. A slot is `stride`
 * int64s: the key's two lanes then stride-2 values. The zero key marks an empty slot,
 * so its values are kept beside the slots.
 */
typedef struct {
    int64_t *slots;
    size_t cap; /* a power of two, or 0 before the first insertion */
    size_t size;
    int shift;
    int stride;
    int has_zero;
    int64_t zero_values[2];
} Table;

#define TABLE_MIN_BITS 4

static inline size_t table_home(const Table *t, Hash128 key)
{
    return (size_t)(hash_mix(key) >> t->shift);
}

static inline Hash128 slot_key(const int64_t *slot)
{
    Hash128 key = {(uint64_t)slot[0], (uint64_t)slot[1]};
    return key;
}

static inline int64_t *table_find(Table *t, Hash128 key)
{
    if (hash_is_zero(key)) return t->has_zero ? t->zero_values : NULL;
    if (t->cap == 0) return NULL;
    size_t mask = t->cap - 1, i = table_home(t, key);
    for (;;) {
        int64_t *slot = t->slots + i * (size_t)t->stride;
        Hash128 k = slot_key(slot);
        if (hash_equal(k, key)) return slot + 2;
        if (hash_is_zero(k)) return NULL;
        i = (i + 1) & mask;
    }
}

static inline void table_prefetch(const Table *t, Hash128 key)
{
    if (t->cap) PREFETCH(t->slots + table_home(t, key) * (size_t)t->stride);
}

/* Rebuild with 2^bits slots. Returns -1 (with MemoryError set) on failure. */
static inline int table_resize(Table *t, int bits)
{
    size_t cap = (size_t)1 << bits;
    size_t stride = (size_t)t->stride;
    if (cap > SIZE_MAX / stride / sizeof(int64_t)) return seqdedup_no_memory();
    int64_t *slots = PyMem_RawCalloc(cap * stride, sizeof(int64_t));
    if (slots == NULL) return seqdedup_no_memory();
    int64_t *old = t->slots;
    size_t old_cap = t->cap;
    t->slots = slots;
    t->cap = cap;
    t->shift = 64 - bits;
    size_t mask = cap - 1;
    for (size_t s = 0; s < old_cap; s++) {
        const int64_t *src = old + s * stride;
        if (hash_is_zero(slot_key(src))) continue;
        size_t i = table_home(t, slot_key(src));
        while (!hash_is_zero(slot_key(slots + i * stride))) i = (i + 1) & mask;
        memcpy(slots + i * stride, src, stride * sizeof(int64_t));
    }
    PyMem_RawFree(old);
    return 0;
}

/* Room for `n` keys at the load upsert keeps (at most 3/4) without growing again: a
 * caller that knows its count saves the rehashes. -1 with MemoryError set. */
static inline int table_reserve(Table *t, size_t n)
{
    int bits = TABLE_MIN_BITS;
    while (((size_t)1 << bits) * 3 < (n + 1) * 4) {
        if (bits >= (int)(sizeof(size_t) * 8 - 2)) return seqdedup_no_memory();
        bits++;
    }
    return ((size_t)1 << bits) > t->cap ? table_resize(t, bits) : 0;
}

/* The values of `key`, inserting it (values zeroed, *created = 1) if absent; NULL with
 * MemoryError set if the table cannot grow. Keeps the load at most 3/4. */
static inline int64_t *table_upsert(Table *t, Hash128 key, int *created)
{
    *created = 0;
    if (hash_is_zero(key)) {
        if (!t->has_zero) {
            t->has_zero = 1;
            t->zero_values[0] = t->zero_values[1] = 0;
            *created = 1;
        }
        return t->zero_values;
    }
    if ((t->size + 1) * 4 > t->cap * 3) {
        int bits = TABLE_MIN_BITS;
        while (((size_t)1 << bits) * 3 < (t->size + 1) * 4) {
            if (bits >= (int)(sizeof(size_t) * 8 - 2)) {
                seqdedup_no_memory();
                return NULL;
            }
            bits++;
        }
        if (table_resize(t, bits) < 0) return NULL;
    }
    size_t mask = t->cap - 1, i = table_home(t, key);
    size_t stride = (size_t)t->stride;
    for (;;) {
        int64_t *slot = t->slots + i * stride;
        Hash128 k = slot_key(slot);
        if (hash_equal(k, key)) return slot + 2;
        if (hash_is_zero(k)) {
            slot[0] = (int64_t)key.lo;
            slot[1] = (int64_t)key.hi;
            t->size++;
            *created = 1;
            return slot + 2;
        }
        i = (i + 1) & mask;
    }
}

static inline size_t table_len(const Table *t) { return t->size + (size_t)t->has_zero; }

/* Remove `key` if present (backward-shift deletion keeps every probe chain whole). */
static inline void table_remove(Table *t, Hash128 key)
{
    if (hash_is_zero(key)) {
        t->has_zero = 0;
        return;
    }
    int64_t *found = table_find(t, key);
    if (found == NULL) return;
    size_t stride = (size_t)t->stride, mask = t->cap - 1;
    size_t hole = (size_t)(found - 2 - t->slots) / stride;
    for (size_t j = (hole + 1) & mask;; j = (j + 1) & mask) {
        int64_t *slot = t->slots + j * stride;
        if (hash_is_zero(slot_key(slot))) break;
        size_t home = table_home(t, slot_key(slot));
        /* the entry at j may fill the hole unless its home lies cyclically in (hole, j] */
        int stays = hole <= j ? (hole < home && home <= j) : (hole < home || home <= j);
        if (!stays) {
            memcpy(t->slots + hole * stride, slot, stride * sizeof(int64_t));
            hole = j;
        }
    }
    memset(t->slots + hole * stride, 0, stride * sizeof(int64_t));
    t->size--;
}

static inline void table_clear(Table *t)
{
    if (t->size && t->slots) memset(t->slots, 0, t->cap * (size_t)t->stride * sizeof(int64_t));
    t->size = 0;
    t->has_zero = 0;
}

static inline void table_free(Table *t)
{
    PyMem_RawFree(t->slots);
    t->slots = NULL;
    t->cap = t->size = 0;
    t->has_zero = 0;
}

/* ---------------------------------------------------------------------------------
 * Growable arrays.
 */
static inline int grow(void **data, size_t *cap, size_t needed, size_t item)
{
    if (needed <= *cap) return 0;
    size_t want = *cap ? *cap : 16;
    while (want < needed) {
        if (want > SIZE_MAX / 2) return seqdedup_no_memory();
        want *= 2;
    }
    if (want > SIZE_MAX / item) return seqdedup_no_memory();
    void *fresh = PyMem_RawRealloc(*data, want * item);
    if (fresh == NULL) return seqdedup_no_memory();
    *data = fresh;
    *cap = want;
    return 0;
}

/* Below this many bytes, releasing the GIL costs more than it saves (hashlib's rule). */
#define GIL_MINSIZE 2048
/* Below this many records, the matcher decides a chunk with the GIL held. */
#define PUSH_UNLOCKED_MIN 1024

#include "matcher.h" /* the Matcher's state and the structures it holds */

/* ---------------------------------------------------------------------------------
 * Between the units.
 */
#define NO_SOURCE INT64_MIN /* a window that repeats no earlier one */

typedef struct {
    PyTypeObject *matcher_type;
    PyTypeObject *size_decider_type; /* (attach_sized checks against it) */
} KernelState;

extern struct PyModuleDef seqdedup_kernel_module;
extern PyType_Spec seqdedup_attributor_spec; /* attributor.c */
extern PyType_Spec seqdedup_stream_matcher_spec; /* streamby.c */
extern PyType_Spec seqdedup_size_decider_spec;   /* sized_type.c */
extern PyType_Spec seqdedup_key_table_spec;      /* keytable.c */

/* confirm.c: whether window j repeats its candidate (NO_SOURCE: none), by key hashes, or
 * the window after the one window j-1 repeats (its start to *source); the log of the key
 * hashes it compares; where a new stream begins. */
int seqdedup_confirm_keys(Matcher *m, int64_t j, int64_t candidate, int64_t *source);
int seqdedup_log_keys(Matcher *m, const Hash128 *hashes, size_t n);
int seqdedup_new_span(Matcher *m, int64_t j);
/* Window j repeated nothing (unlimited history, W >= 2): its records may be compared
 * with later (see confirm.c). */
static inline int seqdedup_note_new_window(Matcher *m, int64_t j)
{
    int64_t last = j + m->width - 1;
    if (m->spans_len > m->spans_archived && j <= m->spans[m->spans_len - 1].last + 1) {
        KeySpan *span = &m->spans[m->spans_len - 1];
        m->spans_needed += last - span->last;
        span->last = last;
        return 0;
    }
    return seqdedup_new_span(m, j);
}
int seqdedup_note_stream_start(Matcher *m);
/* W = 1 needs no comparison: a 1-record window's fingerprint is its key hash. */
static inline int seqdedup_confirm(Matcher *m, int64_t j, int64_t candidate, int64_t *source)
{
    *source = candidate;
    if (m->width == 1) return candidate != NO_SOURCE;
    int follows = m->witness_window == j - 1;
    if (candidate == NO_SOURCE && !follows) return 0; /* (most windows) */
    /* Along a run of repeats (the common case): the newest records, both in the log
     * (the candidate's is checked to be; window j's always is). */
    if (follows && candidate == m->witness_source + 1 && candidate >= m->log_base &&
        candidate - m->log_base < (int64_t)m->log_len - (m->width - 1) &&
        hash_equal(m->log[candidate + m->width - 1 - m->log_base],
                   m->log[j + m->width - 1 - m->log_base])) {
        m->witness_window = j;
        m->witness_source = candidate;
        return 1;
    }
    return seqdedup_confirm_keys(m, j, candidate, source);
}

/* hash.c */
int seqdedup_to_u64(PyObject *obj, void *out); /* "O&" converters */
int seqdedup_to_u32(PyObject *obj, void *out);
/* "O&" converter: a run's seed, an int from 0 to 2**128 - 1, as a 128-bit key (lo: its
 * low 64 bits, SipHash's k0; hi: its high 64 bits, k1). */
int seqdedup_to_seed(PyObject *obj, void *out);
/* SipHash-2-4-128 of the bytes keyed with the seed (siphash.h). */
Hash128 seqdedup_hash128(const unsigned char *p, size_t len, Hash128 seeds);
/* The hash of a record's key: after `fields` blank-separated fields and `skip`
 * characters (bytes with byte_mode), normalised with the classes of `normalize` (0:
 * none), SipHash-2-4-128 keyed with the seed. */
Hash128 seqdedup_key_hash_sized(const unsigned char *p, size_t len, uint64_t fields,
                                uint64_t skip, int byte_mode, unsigned normalize, Hash128 seeds,
                                size_t *size); /* the key's length in *size */
Hash128 seqdedup_key_hash(const unsigned char *p, size_t len, uint64_t fields, uint64_t skip,
                          int byte_mode, unsigned normalize, Hash128 seeds);
unsigned seqdedup_normalize_classes(unsigned classes); /* the known ones of a mask */
PyObject *seqdedup_py_hash_records(PyObject *self, PyObject *args, PyObject *kwds);
PyObject *seqdedup_py_normalize(PyObject *self, PyObject *args);
PyObject *seqdedup_py_key_offset(PyObject *self, PyObject *args);
PyObject *seqdedup_py_first_match(PyObject *self, PyObject *args);
/* stretches.c: with new_material a list, the new-material stretches among the `count`
 * records emitted now (first_index: the first one's tracked index) into m->stretches. */
int seqdedup_take_stretches(Matcher *m, size_t count, int64_t first_index);
/* matcher.c */
int seqdedup_matcher_usable(const Matcher *m); /* else an error is set */
int seqdedup_matcher_enter(Matcher *m);        /* refuses an unusable or busy one */
/* Leave a call; `result` NULL after the state may have changed: the object is broken. */
PyObject *seqdedup_matcher_leave(Matcher *m, PyObject *result, int changed);
int seqdedup_matcher_fed_by(Matcher *m, int how); /* 1: push(), 2: the chunk path */
/* Take `n` more hashes; decide every window completed (flags to m->keep from `at`). */
Py_ssize_t seqdedup_push_core(Matcher *m, const Hash128 *hashes, size_t n, size_t at);
/* End of input: the records left (flags to m->keep from `at`). */
Py_ssize_t seqdedup_finish_core(Matcher *m, size_t at);
PyObject *seqdedup_matcher_push(Matcher *m, PyObject *arg);
PyObject *seqdedup_matcher_finish(Matcher *m, PyObject *ignored);
PyObject *seqdedup_matcher_fingerprints(Matcher *m, PyObject *args);
/* The fingerprints of the `count` windows from h[0] into out (rolled from the first). */
void seqdedup_rolling_fingerprints(const Hash128 *h, size_t count, const uint64_t *coeffs,
                                   Py_ssize_t width, Hash128 *out);
void seqdedup_collide(const Matcher *m, Hash128 *fps, size_t count); /* force_collisions */
int seqdedup_ensure_coefficients(Matcher *m);
int seqdedup_get_words(PyObject *obj, Py_buffer *view, Py_ssize_t unit); /* 8 or 16 */
/* matcher_library.c */
PyObject *seqdedup_matcher_add_library_windows(Matcher *m, PyObject *args);
PyObject *seqdedup_matcher_add_library_region(Matcher *m, PyObject *args);
PyObject *seqdedup_matcher_source(Matcher *m, PyObject *arg);
PyObject *seqdedup_matcher_new_input(Matcher *m, PyObject *ignored);

/* settled.c */
/* Note the keys of tracked records first .. first + n - 1 (hashes h): which are new. */
int seqdedup_note_keys(Matcher *m, const Hash128 *h, size_t n, int64_t first);
/* The first tracked record whose decision is not certain yet (>= m->next). */
int64_t seqdedup_settled(const Matcher *m);
void seqdedup_keys_free(Matcher *m);

/* chunks.c */
/* The first delimiter (dlen >= 1 bytes) in p .. end, or NULL. */
const unsigned char *seqdedup_find_delimiter(const unsigned char *p, const unsigned char *end,
                                             const unsigned char *delim, size_t dlen);
PyObject *seqdedup_matcher_feed_chunk(Matcher *m, PyObject *arg);
PyObject *seqdedup_matcher_attach_sized(Matcher *m, PyObject *decider);
/* (sized_chunks.c) the key hashes and sizes of pending records [from, to) into scratch,
 * how many; the attached decider's keep flags for n more into m->keep (with `finish`
 * the stream's last), how many: -1 on failure */
Py_ssize_t seqdedup_hash_sized_pending(Matcher *m, size_t from, size_t to, Hash128 **hashes,
                                       int64_t **sizes);
Py_ssize_t seqdedup_push_sized(Matcher *m, const Hash128 *h, const int64_t *sizes, size_t n,
                               int finish);
PyObject *seqdedup_matcher_finish_chunks(Matcher *m, PyObject *args, PyObject *kwds);
PyObject *seqdedup_matcher_split_chunk(Matcher *m, PyObject *arg);
PyObject *seqdedup_matcher_split_final(Matcher *m, PyObject *args, PyObject *kwds);
PyObject *seqdedup_matcher_decide_split(Matcher *m, PyObject *arg);

/* matcher_type.c */
extern PyType_Spec seqdedup_matcher_spec;
/* matcher.c, for every unit that fingerprints windows: the coefficients of W records, W
 * per lane (2W, PyMem_RawMalloc'd; NULL with MemoryError set): R[l][k] = B_l^(W-1-k)
 * mod p for the secret base B_l of lane l, drawn from the run's lane seeds. */
uint64_t *seqdedup_coefficients(Py_ssize_t width, Hash128 seeds);
/* A window's fingerprint: per lane sum(fp_input(h[k]) * R[l][k]) mod p; for W = 1 the
 * key hash itself (a table of them then needs no confirmation). */
static inline Hash128 seqdedup_fingerprint(const Hash128 *h, const uint64_t *coeffs,
                                           Py_ssize_t width)
{
    if (width == 1) return h[0];
    Hash128 acc = {0, 0};
    for (Py_ssize_t k = 0; k < width; k++) {
        acc.lo = fp_add(acc.lo, fp_mul(fp_input(h[k].lo), coeffs[k]));
        acc.hi = fp_add(acc.hi, fp_mul(fp_input(h[k].hi), coeffs[width + k]));
    }
    return acc;
}
/* A buffer of 16-byte key hashes or fingerprints: raw bytes, or a typed buffer of
 * 8-byte integers, two per value (-1 with ValueError set otherwise). */
int seqdedup_get_hashes(PyObject *obj, Py_buffer *view);
/* Whether `obj` is a Matcher of this module (0 with TypeError set if not). */
int seqdedup_is_matcher(PyObject *obj);
int seqdedup_is_size_decider(PyObject *obj); /* 1, or 0 with a TypeError set */
/* The sources a Matcher noted for its recent windows: sources[k] belongs to window
 * base + k (NO_SOURCE: not a repeat). -1 with an error set when it is busy or unusable. */
int seqdedup_matcher_sources(PyObject *matcher, const int64_t **sources, size_t *len,
                             int64_t *base);

#endif /* SEQDEDUP_KERNEL_H */
