/*
 * seqdedup._kernel: the per-record work of the window engine, in C.
 *
 * One job: turn key hashes (or a raw chunk of input) into keep/skip decisions by the
 * exact window rule, without a Python object per record on the common path.
 *
 *   - XXH64 (implemented from its published specification) hashes each record's key;
 *   - a window's fingerprint is sum(h[j+k] * R[k]) mod 2^64 over its W key hashes,
 *     R[k] fixed odd constants (splitmix64): the same definition as the Python engine;
 *   - unlimited history: an open-addressing table maps a fingerprint to the start of
 *     its first window; window j repeats iff that start is <= j - W;
 *   - limited history: the rule window by window (admit j - W, look up j), in two
 *     table generations rotated every history-length, so memory stays bounded;
 *   - the chunk path splits a chunk on the delimiter in place and writes the kept
 *     records as contiguous ranges of the input.
 *
 * Everything runs under the GIL, except the long pure loops that hash records (a
 * chunk's records, a library row, a large buffer: over GIL_MINSIZE bytes), which touch
 * only memory the call owns; a Matcher is used by one call at a time (`busy`). Every
 * allocation is checked and every size that could overflow is checked before it is
 * used. A Matcher is usable only once __init__ succeeded, and an error half-way through
 * a call that changes it (memory, overflow) marks it broken: every later call raises,
 * so it never gives wrong answers from half-updated state.
 */
#include "_kernel.h"

/* Below this many bytes, releasing the GIL costs more than it saves (hashlib's rule). */
#define GIL_MINSIZE 2048

/* "O&" converter: a Python int from 0 to 2**64 - 1 (the "K" format would wrap -1). */
static int to_u64(PyObject *obj, void *out)
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
static int to_u32(PyObject *obj, void *out)
{
    uint64_t value;
    if (!to_u64(obj, &value)) return 0;
    if (value > UINT32_MAX) {
        PyErr_SetString(PyExc_ValueError, "expected an int from 0 to 2**32 - 1");
        return 0;
    }
    *(unsigned *)out = (unsigned)value;
    return 1;
}
#if defined(__linux__) || defined(__APPLE__)
#include <sys/mman.h>
#include <unistd.h>
#define HAVE_MMAP 1
#endif


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
    h ^= h >> 33;
    h *= XXP2;
    h ^= h >> 29;
    h *= XXP3;
    h ^= h >> 32;
    return h;
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
 * hash, or nowhere (only counted). */
typedef struct {
    unsigned char *out;
    XXState *hash;
    size_t len; /* bytes produced so far */
} KeySink;

static inline void sink_put(KeySink *k, const unsigned char *p, size_t n)
{
    if (k->out != NULL)
        memcpy(k->out + k->len, p, n);
    else if (k->hash != NULL)
        xx_update(k->hash, p, n);
    k->len += n;
}

#include "normalize.h"
#include "jsonkey.h"

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

/* The hash of a record's key: after `skip` characters, normalised with the classes of
 * `normalize` (0: none), as XXH64 with `seed`. */
static uint64_t key_hash(const unsigned char *p, size_t len, uint64_t skip, int byte_mode,
                         unsigned normalize, uint64_t seed)
{
    size_t off = skip ? key_offset(p, len, skip, byte_mode) : 0;
    if (!normalize) return xxh64(p + off, len - off, seed);
    XXState state;
    xx_init(&state, seed);
    KeySink sink = {NULL, &state, 0};
    normalize_key(p + off, len - off, normalize, &sink);
    return xx_digest(&state);
}

/* ---------------------------------------------------------------------------------
 * The first-start table of unlimited history: the one structure that grows with the
 * input, so its slots are packed: 13 bytes, the 64-bit fingerprint then the start in
 * 40 bits (offset by FT_BIAS so that negative library starts fit). Kept at most 3/4
 * full. Large tables live in their own mappings, and while the table doubles the old
 * one is returned to the system as it is read, so a doubling never holds both whole.
 */
#define FT_SLOT 13
#define FT_BIAS ((int64_t)1 << 39)
#define FT_MMAP_MIN ((size_t)1 << 20)

typedef struct {
    unsigned char *slots;
    size_t cap, size;
    int shift;
    int mapped; /* slots come from mmap, not PyMem */
    int has_zero;
    int64_t zero_start;
} FirstTable;

static inline uint64_t ft_key(const unsigned char *slot)
{
    uint64_t key;
    memcpy(&key, slot, 8);
    return key;
}

static inline int64_t ft_start(const unsigned char *slot)
{
    uint64_t v = (uint64_t)slot[8] | ((uint64_t)slot[9] << 8) | ((uint64_t)slot[10] << 16) |
                 ((uint64_t)slot[11] << 24) | ((uint64_t)slot[12] << 32);
    return (int64_t)v - FT_BIAS;
}

static inline void ft_set(unsigned char *slot, uint64_t key, int64_t start)
{
    uint64_t v = (uint64_t)(start + FT_BIAS);
    memcpy(slot, &key, 8);
    for (int b = 0; b < 5; b++) slot[8 + b] = (unsigned char)(v >> (8 * b));
}

static inline size_t ft_home(const FirstTable *t, uint64_t key)
{
    return (size_t)((key * 0x9E3779B97F4A7C15ULL) >> t->shift);
}

static inline void ft_prefetch(const FirstTable *t, uint64_t key)
{
    if (t->cap) PREFETCH(t->slots + ft_home(t, key) * FT_SLOT);
}

/* Zeroed memory for `bytes`; sets *mapped. NULL on failure (no exception set). */
static unsigned char *ft_alloc(size_t bytes, int *mapped)
{
#ifdef HAVE_MMAP
    if (bytes >= FT_MMAP_MIN) {
        void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANON, -1, 0);
        *mapped = 1;
        return p == MAP_FAILED ? NULL : p;
    }
#endif
    *mapped = 0;
    return PyMem_Calloc(bytes, 1);
}

static void ft_release(unsigned char *slots, size_t bytes, int mapped)
{
    if (slots == NULL) return;
#ifdef HAVE_MMAP
    if (mapped) {
        munmap(slots, bytes);
        return;
    }
#endif
    (void)bytes;
    (void)mapped;
    PyMem_Free(slots);
}

static int ft_resize(FirstTable *t, int bits)
{
    size_t cap = (size_t)1 << bits;
    if (cap > SIZE_MAX / FT_SLOT) return (void)PyErr_NoMemory(), -1;
    int mapped;
    unsigned char *slots = ft_alloc(cap * FT_SLOT, &mapped);
    if (slots == NULL) return (void)PyErr_NoMemory(), -1;
    unsigned char *old = t->slots;
    size_t old_cap = t->cap;
    int old_mapped = t->mapped;
    t->slots = slots;
    t->cap = cap;
    t->shift = 64 - bits;
    t->mapped = mapped;
    size_t mask = cap - 1;
#ifdef HAVE_MMAP
    size_t page = (size_t)sysconf(_SC_PAGESIZE), freed = 0;
#endif
    for (size_t s = 0; s < old_cap; s++) {
        const unsigned char *src = old + s * FT_SLOT;
        uint64_t key = ft_key(src);
        if (key != 0) {
            size_t i = ft_home(t, key);
            while (ft_key(slots + i * FT_SLOT) != 0) i = (i + 1) & mask;
            memcpy(slots + i * FT_SLOT, src, FT_SLOT);
        }
#ifdef HAVE_MMAP
        /* Give back each few megabytes of the old table once read. */
        size_t done = (s + 1) * FT_SLOT;
        if (old_mapped && done - freed >= ((size_t)4 << 20)) {
            size_t upto = done / page * page;
            if (upto > freed) madvise(old + freed, upto - freed, MADV_DONTNEED);
            freed = upto;
        }
#endif
    }
    ft_release(old, old_cap * FT_SLOT, old_mapped);
    return 0;
}

/* The first start of `key`, inserting `start` for it if it is new. */
static int ft_first_start(FirstTable *t, uint64_t key, int64_t start, int64_t *first)
{
    if (start < -FT_BIAS || start >= FT_BIAS) {
        PyErr_SetString(PyExc_OverflowError,
                        "more than 2^39 records in one run with unlimited history");
        return -1;
    }
    if (key == 0) {
        if (!t->has_zero) {
            t->has_zero = 1;
            t->zero_start = start;
        }
        *first = t->zero_start;
        return 0;
    }
    if ((t->size + 1) * 4 > t->cap * 3) {
        int bits = 4;
        while (((size_t)1 << bits) * 3 < (t->size + 1) * 4) {
            if (bits >= (int)(sizeof(size_t) * 8 - 6)) return (void)PyErr_NoMemory(), -1;
            bits++;
        }
        if (ft_resize(t, bits) < 0) return -1;
    }
    size_t mask = t->cap - 1, i = ft_home(t, key);
    for (;;) {
        unsigned char *slot = t->slots + i * FT_SLOT;
        uint64_t k = ft_key(slot);
        if (k == key) {
            *first = ft_start(slot);
            return 0;
        }
        if (k == 0) {
            ft_set(slot, key, start);
            t->size++;
            *first = start;
            return 0;
        }
        i = (i + 1) & mask;
    }
}

static void ft_free(FirstTable *t)
{
    ft_release(t->slots, t->cap * FT_SLOT, t->mapped);
    t->slots = NULL;
    t->cap = t->size = 0;
    t->has_zero = 0;
}

/* ---------------------------------------------------------------------------------
 * The matcher.
 */
typedef struct {
    PyObject_HEAD
    Py_ssize_t width;     /* W */
    int64_t horizon;      /* max history; INT64_MAX when unlimited */
    int limited;
    uint64_t *coeffs;     /* W coefficients, made at the first complete window */
    /* hashes of the records whose window is not complete yet (at most W-1) */
    uint64_t *tail;
    size_t tail_len, tail_cap;
    /* limited history: fingerprints of the last W windows, not admitted yet */
    uint64_t *recent;
    size_t recent_len, recent_cap;
    int64_t recent_end;   /* the window after the last of recent */
    int64_t next;         /* index of the next window to decide (= next undecided record) */
    int64_t cover;        /* last record covered by a repeat so far */
    int64_t new_until;    /* last record covered by a first-seen window so far */
    int64_t rotated_at;
    FirstTable first;     /* unlimited: fingerprint -> first start */
    Table chains[2];      /* limited: fingerprint -> (first, latest) (stride 3) */
    int current;          /* which of chains[] is the current generation */
    Table library;        /* limited: library fingerprint -> start (stride 2) */
    /* sources of the recent windows (the last W-1 before the last call and those it
     * decided), NO_SOURCE for windows that are not repeats: attribution reads them */
    int64_t *sources;
    size_t sources_len, sources_cap;
    int64_t sources_base; /* window index of sources[0] */
    PyObject *new_material;   /* list or None */
    /* chunk path */
    unsigned char *delim;
    size_t delim_len;
    uint64_t skip;
    int byte_mode;
    unsigned normalize; /* --normalize classes (NORM_*), 0: none */
    int inverse;
    int run_heads; /* each skipped run also carries its first record's bytes */
    uint64_t seed;
    unsigned char *buf;   /* undecided complete records, then the incomplete tail */
    size_t buf_len, buf_cap;
    size_t tail_start;    /* start of the incomplete record in buf */
    size_t scan_from;     /* where the delimiter search resumes */
    size_t *rec_start, *rec_end; /* undecided complete records, oldest first */
    size_t rec_len, rec_cap, rec_end_cap;
    int final_without_delimiter; /* the last pending record had no delimiter */
    int chunks_finished;
    int fed_by;           /* 0: nothing yet; 1: push(); 2: the chunk path (never both) */
    /* scratch, grown as needed and reused: fresh large blocks cost page faults */
    uint64_t *scratch_hashes, *scratch_windows, *scratch_fps;
    size_t scratch_hashes_cap, scratch_windows_cap, scratch_fps_cap;
    unsigned char *keep;  /* decisions of the records decided by the last call */
    size_t keep_cap;
    int ready;            /* __init__ succeeded */
    int broken;           /* an error left the state half-updated: unusable */
    int busy;             /* a call is running (it may have released the GIL) */
} Matcher;

/* Whether the object may be used: initialised and not broken (else an error is set). */
static int usable(const Matcher *m)
{
    if (!m->ready) {
        PyErr_SetString(PyExc_RuntimeError, "Matcher is not initialised");
        return -1;
    }
    if (m->broken) {
        PyErr_SetString(PyExc_RuntimeError,
                        "Matcher is unusable after an earlier error in one of its calls; "
                        "make a new one");
        return -1;
    }
    return 0;
}

/* Enter a call: refuse an object that is not usable, or in use. */
static int enter(Matcher *m)
{
    if (usable(m) < 0) return -1;
    if (m->busy) {
        PyErr_SetString(PyExc_RuntimeError, "Matcher is in use by another thread");
        return -1;
    }
    m->busy = 1;
    return 0;
}

/* Leave a call; `result` NULL after the state may have changed: the object is broken. */
static PyObject *leave(Matcher *m, PyObject *result, int changed)
{
    m->busy = 0;
    if (result == NULL && changed) m->broken = 1;
    return result;
}

uint64_t *seqdedup_coefficients(Py_ssize_t count)
{
    if ((size_t)count > SIZE_MAX / sizeof(uint64_t)) {
        PyErr_NoMemory();
        return NULL;
    }
    uint64_t *out = PyMem_Malloc((size_t)count * sizeof(uint64_t) + 1);
    if (out == NULL) {
        PyErr_NoMemory();
        return NULL;
    }
    uint64_t state = 0x9E3779B97F4A7C15ULL;
    for (Py_ssize_t k = 0; k < count; k++) {
        state += 0x9E3779B97F4A7C15ULL;
        uint64_t z = state;
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
        out[k] = (z ^ (z >> 31)) | 1;
    }
    return out;
}

static int ensure_coefficients(Matcher *m)
{
    if (m->coeffs == NULL) m->coeffs = seqdedup_coefficients(m->width);
    return m->coeffs ? 0 : -1;
}

static inline uint64_t fingerprint(const uint64_t *h, const uint64_t *coeffs, Py_ssize_t width)
{
    uint64_t acc = 0;
    for (Py_ssize_t k = 0; k < width; k++) acc += h[k] * coeffs[k];
    return acc;
}

static inline void note_source(Matcher *m, int64_t window, int64_t source)
{
    m->sources[window - m->sources_base] = source;
}

/* Keep the sources of the last W-1 windows and make room for `count` more. After a
 * new stream nothing is kept: the windows before it cannot cover what comes next. */
static int prepare_sources(Matcher *m, size_t count)
{
    size_t keep = m->sources_len < (size_t)m->width - 1 ? m->sources_len : (size_t)m->width - 1;
    if (m->sources_base + (int64_t)m->sources_len != m->next) keep = 0;
    if (keep && keep < m->sources_len)
        memmove(m->sources, m->sources + m->sources_len - keep, keep * sizeof(int64_t));
    m->sources_base = m->next - (int64_t)keep;
    m->sources_len = keep;
    if (count > SIZE_MAX - keep ||
        grow((void **)&m->sources, &m->sources_cap, keep + count, sizeof(int64_t)) < 0) {
        if (!PyErr_Occurred()) PyErr_NoMemory();
        return -1;
    }
    for (size_t k = 0; k < count; k++) m->sources[keep + k] = NO_SOURCE;
    m->sources_len = keep + count;
    return 0;
}

static int note_new(Matcher *m, int flag)
{
    if (m->new_material == NULL || m->new_material == Py_None) return 0;
    return PyList_Append(m->new_material, flag ? Py_True : Py_False);
}

/* Decide windows next .. next+count-1 from their fingerprints; keep[k] for record
 * next+k. Unlimited history. */
static int decide_unlimited(Matcher *m, const uint64_t *fps, size_t count, unsigned char *keep)
{
    const int64_t width = m->width;
    int64_t cover = m->cover;
    enum { AHEAD = 8 };
    for (size_t k = 0; k < count; k++) {
        if (k + AHEAD < count) ft_prefetch(&m->first, fps[k + AHEAD]);
        int64_t j = m->next + (int64_t)k;
        int64_t first;
        if (ft_first_start(&m->first, fps[k], j, &first) < 0) return -1;
        if (j - first < width) {
            keep[k] = j > cover;
            m->new_until = j + width - 1;
        } else {
            cover = j + width - 1;
            keep[k] = 0;
            note_source(m, j, first);
        }
        if (note_new(m, j <= m->new_until) < 0) return -1;
    }
    m->cover = cover;
    return 0;
}

/* Limited history: window `admitted` has ended, later windows may repeat it. A chain
 * goes on while occurrences are less than a history apart. */
static int admit(Matcher *m, uint64_t key, int64_t admitted)
{
    Table *cur = &m->chains[m->current], *old = &m->chains[1 - m->current];
    int created;
    int64_t *slot = table_upsert(cur, key, &created); /* one probe if present */
    if (slot == NULL) return -1;
    const int64_t *chain = created ? table_find(old, key) : slot;
    slot[0] = (chain != NULL && admitted - chain[1] <= m->horizon) ? chain[0] : admitted;
    slot[1] = admitted;
    return 0;
}

/* The same under limited history: `all` holds the fingerprints of windows
 * low .. next+count-1 (the last recent ones first). */
static int decide_limited(Matcher *m, const uint64_t *all, int64_t low, size_t count,
                          unsigned char *keep)
{
    const int64_t width = m->width, horizon = m->horizon;
    int64_t cover = m->cover;
    enum { AHEAD = 8 };
    for (size_t k = 0; k < count; k++) {
        int64_t j = m->next + (int64_t)k;
        Table *cur = &m->chains[m->current], *old = &m->chains[1 - m->current];
        if (k + AHEAD < count) { /* the probes coming up: the table is larger than cache */
            uint64_t ahead = all[j + AHEAD - low];
            table_prefetch(cur, ahead);
            table_prefetch(old, ahead);
            if (j + AHEAD - width >= low) table_prefetch(cur, all[j + AHEAD - width - low]);
        }
        if (j - width >= low && admit(m, all[j - width - low], j - width) < 0) return -1;
        uint64_t fp = all[j - low];
        int64_t *lib = m->library.cap || m->library.has_zero ? table_find(&m->library, fp) : NULL;
        int64_t *chain = table_find(cur, fp);
        if (chain == NULL) chain = table_find(old, fp);
        int repeat = 1;
        int64_t source = 0;
        if (lib != NULL) {
            source = lib[0]; /* library windows come first and are never forgotten */
        } else if (chain != NULL && j - chain[1] <= horizon) {
            source = (j - chain[0] <= horizon) ? chain[0] : chain[1];
        } else {
            repeat = 0;
        }
        if (repeat) {
            cover = j + width - 1;
            keep[k] = 0;
            note_source(m, j, source);
        } else {
            keep[k] = j > cover;
            m->new_until = j + width - 1;
        }
        if (note_new(m, j <= m->new_until) < 0) return -1;
        if (j + 1 - m->rotated_at >= horizon) {
            /* Two generations, each a history long: whatever was last written two
             * rotations ago is older than the history, so dropping it forgets nothing
             * still remembered. */
            table_clear(old);
            m->current = 1 - m->current;
            m->rotated_at = j + 1;
        }
    }
    m->cover = cover;
    return 0;
}

/* Take `n` more hashes; decide every window completed. The flags of the decided
 * records go to m->keep from index `at` on; returns their number, or -1 on error. */
static Py_ssize_t push_core(Matcher *m, const uint64_t *hashes, size_t n, size_t at)
{
    size_t width = (size_t)m->width;
    if (n > SIZE_MAX / 2 - m->tail_len) return (void)PyErr_NoMemory(), -1;
    size_t total = m->tail_len + n;
    if (total > SIZE_MAX / 2 / sizeof(uint64_t)) return (void)PyErr_NoMemory(), -1;
    if (total < width) { /* no window completes: everything waits in the tail */
        if (grow((void **)&m->tail, &m->tail_cap, total, sizeof(uint64_t)) < 0) return -1;
        if (n) memcpy(m->tail + m->tail_len, hashes, n * sizeof(uint64_t));
        m->tail_len = total;
        return 0;
    }
    if (ensure_coefficients(m) < 0) return -1;
    size_t count = total - width + 1;
    size_t recent = m->limited ? m->recent_len : 0;
    if (grow((void **)&m->scratch_windows, &m->scratch_windows_cap, total, sizeof(uint64_t)) < 0 ||
        grow((void **)&m->scratch_fps, &m->scratch_fps_cap, recent + count, sizeof(uint64_t)) < 0 ||
        count > SIZE_MAX - at || grow((void **)&m->keep, &m->keep_cap, at + count, 1) < 0) {
        if (!PyErr_Occurred()) PyErr_NoMemory();
        return -1;
    }
    if (prepare_sources(m, count) < 0) return -1;
    uint64_t *all = m->scratch_windows, *fps = m->scratch_fps;
    unsigned char *keep = m->keep + at;
    if (m->tail_len) memcpy(all, m->tail, m->tail_len * sizeof(uint64_t));
    if (n) memcpy(all + m->tail_len, hashes, n * sizeof(uint64_t));
    if (recent) memcpy(fps, m->recent, recent * sizeof(uint64_t));
    for (size_t k = 0; k < count; k++)
        fps[recent + k] = fingerprint(all + k, m->coeffs, m->width);
    if (m->limited) {
        if (decide_limited(m, fps, m->next - (int64_t)recent, count, keep) < 0) return -1;
        /* keep the last W fingerprints for admission */
        size_t have = recent + count, keep_n = have < width ? have : width;
        if (grow((void **)&m->recent, &m->recent_cap, keep_n, sizeof(uint64_t)) < 0) return -1;
        memmove(m->recent, fps + have - keep_n, keep_n * sizeof(uint64_t));
        m->recent_len = keep_n;
        m->recent_end = m->next + (int64_t)count;
    } else if (decide_unlimited(m, fps, count, keep) < 0) {
        return -1;
    }
    size_t rest = total - count; /* = W - 1 */
    if (grow((void **)&m->tail, &m->tail_cap, rest, sizeof(uint64_t)) < 0) return -1;
    if (rest) memcpy(m->tail, all + count, rest * sizeof(uint64_t)); /* tail is NULL at W=1 */
    m->tail_len = rest;
    m->next += (int64_t)count;
    return (Py_ssize_t)count;
}

/* End of input: the records left (no window starts at them), flags from m->keep[at]. */
static Py_ssize_t finish_core(Matcher *m, size_t at)
{
    size_t count = m->tail_len;
    if (count > SIZE_MAX - at || grow((void **)&m->keep, &m->keep_cap, at + count + 1, 1) < 0) {
        if (!PyErr_Occurred()) PyErr_NoMemory();
        return -1;
    }
    for (size_t k = 0; k < count; k++) {
        int64_t j = m->next + (int64_t)k;
        m->keep[at + k] = j > m->cover;
        if (note_new(m, j <= m->new_until) < 0) return -1;
    }
    m->next += (int64_t)count;
    m->tail_len = 0;
    return (Py_ssize_t)count;
}

/* The hashes of a buffer, copied to aligned scratch (a buffer may be unaligned). */
static uint64_t *scratch_copy(Matcher *m, const Py_buffer *view)
{
    size_t n = (size_t)view->len / 8;
    if (grow((void **)&m->scratch_hashes, &m->scratch_hashes_cap, n + 1, sizeof(uint64_t)) < 0)
        return NULL;
    if (n) memcpy(m->scratch_hashes, view->buf, n * sizeof(uint64_t));
    return m->scratch_hashes;
}

static PyObject *flags_to_list(const unsigned char *keep, size_t count)
{
    PyObject *list = PyList_New((Py_ssize_t)count);
    if (list == NULL) return NULL;
    for (size_t k = 0; k < count; k++) {
        PyObject *flag = keep[k] ? Py_True : Py_False;
        Py_INCREF(flag);
        PyList_SET_ITEM(list, (Py_ssize_t)k, flag);
    }
    return list;
}

/* A buffer of native int64/uint64 values: raw bytes (a multiple of 8 long), or a typed
 * buffer of 8-byte integers (array('q'), an int64 numpy array); never floats or other
 * widths whose byte length happens to be a multiple of 8. */
static int get_hashes(PyObject *obj, Py_buffer *view)
{
    if (PyObject_GetBuffer(obj, view, PyBUF_FORMAT | PyBUF_C_CONTIGUOUS) < 0) return -1;
    const char *f = view->format;
    if (f != NULL && (f[0] == '@' || f[0] == '=' || f[0] == '<' || f[0] == '>')) {
        int foreign = (f[0] == '<' && PY_BIG_ENDIAN) || (f[0] == '>' && PY_LITTLE_ENDIAN);
        f = foreign ? "x" : f + 1;
    }
    int raw = f == NULL || strcmp(f, "B") == 0 || strcmp(f, "b") == 0 || strcmp(f, "c") == 0;
    int words = view->itemsize == 8 && f != NULL &&
                (strcmp(f, "q") == 0 || strcmp(f, "Q") == 0 || strcmp(f, "l") == 0 ||
                 strcmp(f, "L") == 0);
    if (!(raw || words) || view->len % 8) {
        PyBuffer_Release(view);
        PyErr_SetString(PyExc_ValueError, "hashes must be a buffer of 8-byte integers");
        return -1;
    }
    return 0;
}

/* push() and the chunk path keep different records: one matcher takes one of them. */
static int fed_by(Matcher *m, int how)
{
    if (m->fed_by != 0 && m->fed_by != how) {
        PyErr_SetString(PyExc_RuntimeError, "push() and feed_chunk() cannot be mixed");
        return -1;
    }
    m->fed_by = how;
    return 0;
}

static PyObject *Matcher_push(Matcher *m, PyObject *arg)
{
    if (enter(m) < 0) return NULL;
    if (fed_by(m, 1) < 0) return leave(m, NULL, 0);
    Py_buffer view;
    if (get_hashes(arg, &view) < 0) return leave(m, NULL, 0);
    uint64_t *hashes = scratch_copy(m, &view);
    size_t n = (size_t)view.len / 8;
    PyBuffer_Release(&view);
    if (hashes == NULL) return leave(m, NULL, 0);
    Py_ssize_t count = push_core(m, hashes, n, 0);
    return leave(m, count < 0 ? NULL : flags_to_list(m->keep, (size_t)count), 1);
}

static PyObject *Matcher_finish(Matcher *m, PyObject *Py_UNUSED(ignored))
{
    if (enter(m) < 0) return NULL;
    if (fed_by(m, 1) < 0) return leave(m, NULL, 0);
    Py_ssize_t count = finish_core(m, 0);
    return leave(m, count < 0 ? NULL : flags_to_list(m->keep, (size_t)count), 1);
}

static PyObject *Matcher_fingerprints_in(Matcher *m, PyObject *args);

static PyObject *Matcher_fingerprints(Matcher *m, PyObject *args)
{
    if (enter(m) < 0) return NULL;
    return leave(m, Matcher_fingerprints_in(m, args), 0); /* only scratch changes */
}

static PyObject *Matcher_fingerprints_in(Matcher *m, PyObject *args)
{
    PyObject *obj;
    Py_ssize_t count;
    if (!PyArg_ParseTuple(args, "On", &obj, &count)) return NULL;
    Py_buffer view;
    if (get_hashes(obj, &view) < 0) return NULL;
    Py_ssize_t n = view.len / 8;
    if (count < 0 || (count > 0 && (n < m->width || count > n - (m->width - 1)))) {
        PyBuffer_Release(&view);
        PyErr_SetString(PyExc_ValueError, "not enough hashes for that many windows");
        return NULL;
    }
    if (ensure_coefficients(m) < 0) {
        PyBuffer_Release(&view);
        return NULL;
    }
    uint64_t *h = scratch_copy(m, &view);
    PyBuffer_Release(&view);
    if (h == NULL) return NULL;
    if (count > PY_SSIZE_T_MAX / 8) return PyErr_NoMemory();
    PyObject *out = PyBytes_FromStringAndSize(NULL, count * 8);
    if (out == NULL) return NULL;
    char *dst = PyBytes_AS_STRING(out);
    for (Py_ssize_t k = 0; k < count; k++) {
        uint64_t fp = fingerprint(h + k, m->coeffs, m->width);
        memcpy(dst + 8 * k, &fp, 8);
    }
    return out;
}

static PyObject *Matcher_add_library_windows_in(Matcher *m, PyObject *args, int *changed);

static PyObject *Matcher_add_library_windows(Matcher *m, PyObject *args)
{
    if (enter(m) < 0) return NULL;
    int changed = 0;
    PyObject *result = Matcher_add_library_windows_in(m, args, &changed);
    return leave(m, result, changed);
}

static PyObject *Matcher_add_library_windows_in(Matcher *m, PyObject *args, int *changed)
{
    PyObject *fps_obj, *starts_obj;
    if (!PyArg_ParseTuple(args, "OO", &fps_obj, &starts_obj)) return NULL;
    if (m->next != 0 || m->tail_len != 0) {
        PyErr_SetString(PyExc_RuntimeError, "library windows must be added before any push");
        return NULL;
    }
    Py_buffer fps, starts;
    if (get_hashes(fps_obj, &fps) < 0) return NULL;
    if (get_hashes(starts_obj, &starts) < 0) {
        PyBuffer_Release(&fps);
        return NULL;
    }
    PyObject *result = NULL;
    if (fps.len != starts.len) {
        PyErr_SetString(PyExc_ValueError, "fingerprints and starts differ in length");
        goto done;
    }
    Py_ssize_t n = fps.len / 8;
    for (Py_ssize_t k = 0; k < n; k++) {
        uint64_t fp;
        int64_t start;
        memcpy(&fp, (const char *)fps.buf + 8 * k, 8);
        memcpy(&start, (const char *)starts.buf + 8 * k, 8);
        if (start > -(int64_t)m->width - 1) {
            PyErr_SetString(PyExc_ValueError, "library starts must be at most -W - 1");
            goto done;
        }
        /* the earliest library window wins */
        *changed = 1;
        if (m->limited) {
            int created;
            int64_t *v = table_upsert(&m->library, fp, &created);
            if (v == NULL) goto done;
            if (created) v[0] = start;
        } else {
            int64_t first;
            if (ft_first_start(&m->first, fp, start, &first) < 0) goto done;
        }
    }
    result = Py_None;
    Py_INCREF(result);
done:
    PyBuffer_Release(&fps);
    PyBuffer_Release(&starts);
    return result;
}

/* ---- the chunk path ------------------------------------------------------------- */

static const unsigned char *find_delimiter(const unsigned char *p, const unsigned char *end,
                                           const unsigned char *delim, size_t dlen)
{
    if (dlen == 1) return memchr(p, delim[0], (size_t)(end - p));
    while ((size_t)(end - p) >= dlen) {
        const unsigned char *hit = memchr(p, delim[0], (size_t)(end - p) - dlen + 1);
        if (hit == NULL) return NULL;
        if (memcmp(hit + 1, delim + 1, dlen - 1) == 0) return hit;
        p = hit + 1;
    }
    return NULL;
}

static inline uint64_t record_hash(const Matcher *m, const unsigned char *p, size_t len)
{
    return key_hash(p, len, m->skip, m->byte_mode, m->normalize, m->seed);
}

/* Turn the decided records (the oldest `count` pending ones) into the output, the
 * skipped runs and the counts; then drop them from the pending records. */
static PyObject *emit(Matcher *m, const unsigned char *keep, size_t count, PyObject *hashes,
                      int64_t first_index)
{
    size_t dlen = m->delim_len, total = 0, kept = 0;
    if (count > m->rec_len) { /* cannot happen while push() and chunks are kept apart */
        PyErr_SetString(PyExc_RuntimeError, "more decisions than pending records");
        return NULL;
    }
    for (size_t k = 0; k < count; k++) {
        kept += keep[k];
        if ((keep[k] != 0) != (m->inverse != 0)) {
            int bare = m->final_without_delimiter && k + 1 == m->rec_len;
            total += m->rec_end[k] - m->rec_start[k] + (bare ? 0 : dlen);
        }
    }
    size_t nruns = 0; /* runs of skipped records */
    for (size_t k = 0; k < count; k++) nruns += !keep[k] && (k == 0 || keep[k - 1]);
    PyObject *out = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)total);
    /* The runs as int64 pairs (start, stop), or with run_heads a list of (start, stop,
     * first record) tuples. */
    PyObject *runs = m->run_heads ? PyList_New(0)
                                  : PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(nruns * 16));
    if (out == NULL || runs == NULL) goto fail;
    char *dst = PyBytes_AS_STRING(out);
    size_t k = 0;
    while (k < count) { /* kept records leave as contiguous ranges of the input */
        int written = (keep[k] != 0) != (m->inverse != 0);
        size_t stop = k;
        while (stop < count && ((keep[stop] != 0) != (m->inverse != 0)) == written) stop++;
        if (written) {
            int bare = m->final_without_delimiter && stop == m->rec_len;
            size_t from = m->rec_start[k], to = m->rec_end[stop - 1] + (bare ? 0 : dlen);
            memcpy(dst, m->buf + from, to - from);
            dst += to - from;
        }
        k = stop;
    }
    char *packed = m->run_heads ? NULL : PyBytes_AS_STRING(runs);
    for (k = 0; k < count;) { /* runs of skipped records, as tracked indices */
        if (keep[k]) {
            k++;
            continue;
        }
        size_t stop = k;
        while (stop < count && !keep[stop]) stop++;
        int64_t bounds[2] = {first_index + (int64_t)k, first_index + (int64_t)stop};
        if (packed != NULL) {
            memcpy(packed, bounds, sizeof bounds);
            packed += sizeof bounds;
            k = stop;
            continue;
        }
        PyObject *run = Py_BuildValue("(LLy#)", (long long)bounds[0], (long long)bounds[1],
                                      (const char *)m->buf + m->rec_start[k],
                                      (Py_ssize_t)(m->rec_end[k] - m->rec_start[k]));
        if (run == NULL || PyList_Append(runs, run) < 0) {
            Py_XDECREF(run);
            goto fail;
        }
        Py_DECREF(run);
        k = stop;
    }
    size_t rest = m->rec_len - count;
    if (rest && count) {
        memmove(m->rec_start, m->rec_start + count, rest * sizeof(size_t));
        memmove(m->rec_end, m->rec_end + count, rest * sizeof(size_t));
    }
    m->rec_len = rest;
    return Py_BuildValue("(NONnn)", out, hashes, runs, (Py_ssize_t)count, (Py_ssize_t)kept);
fail:
    Py_XDECREF(out);
    Py_XDECREF(runs);
    return NULL;
}

static PyObject *Matcher_feed_chunk_in(Matcher *m, PyObject *arg, int *changed);

static PyObject *Matcher_feed_chunk(Matcher *m, PyObject *arg)
{
    if (enter(m) < 0) return NULL;
    int changed = 0;
    PyObject *result = Matcher_feed_chunk_in(m, arg, &changed);
    return leave(m, result, changed);
}

static PyObject *Matcher_feed_chunk_in(Matcher *m, PyObject *arg, int *changed)
{
    if (m->delim == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "the chunk path needs a delimiter");
        return NULL;
    }
    if (m->chunks_finished) {
        PyErr_SetString(PyExc_RuntimeError, "feed_chunk() after finish_chunks()");
        return NULL;
    }
    if (fed_by(m, 2) < 0) return NULL;
    Py_buffer chunk;
    if (PyObject_GetBuffer(arg, &chunk, PyBUF_SIMPLE) < 0) return NULL;
    *changed = 1;
    /* Drop what was decided: keep the pending records and the incomplete tail. */
    size_t base = m->rec_len ? m->rec_start[0] : m->tail_start;
    if (base) {
        memmove(m->buf, m->buf + base, m->buf_len - base);
        m->buf_len -= base;
        m->tail_start -= base;
        m->scan_from -= base;
        for (size_t k = 0; k < m->rec_len; k++) {
            m->rec_start[k] -= base;
            m->rec_end[k] -= base;
        }
    }
    size_t add = (size_t)chunk.len;
    if (add > SIZE_MAX - m->buf_len - 1 ||
        grow((void **)&m->buf, &m->buf_cap, m->buf_len + add + 1, 1) < 0) {
        PyBuffer_Release(&chunk);
        if (!PyErr_Occurred()) PyErr_NoMemory();
        return NULL;
    }
    if (add) memcpy(m->buf + m->buf_len, chunk.buf, add);
    PyBuffer_Release(&chunk);
    m->buf_len += add;

    size_t first_new = m->rec_len, dlen = m->delim_len;
    const unsigned char *end = m->buf + m->buf_len;
    const unsigned char *p = m->buf + m->scan_from;
    for (;;) {
        const unsigned char *hit = find_delimiter(p, end, m->delim, dlen);
        if (hit == NULL) break;
        if (grow((void **)&m->rec_start, &m->rec_cap, m->rec_len + 1, sizeof(size_t)) < 0 ||
            grow((void **)&m->rec_end, &m->rec_end_cap, m->rec_len + 1, sizeof(size_t)) < 0)
            return NULL;
        m->rec_start[m->rec_len] = m->tail_start;
        m->rec_end[m->rec_len] = (size_t)(hit - m->buf);
        m->rec_len++;
        m->tail_start = (size_t)(hit - m->buf) + dlen;
        p = hit + dlen;
    }
    m->scan_from = m->buf_len >= dlen - 1 ? m->buf_len - (dlen - 1) : 0;
    if (m->scan_from < m->tail_start) m->scan_from = m->tail_start;

    size_t n = m->rec_len - first_new;
    if (grow((void **)&m->scratch_hashes, &m->scratch_hashes_cap, n + 1, sizeof(uint64_t)) < 0)
        return NULL;
    uint64_t *h = m->scratch_hashes;
    /* Pure work on the matcher's own memory (busy keeps other calls out): without the
     * GIL when it is large, so other threads run meanwhile. */
    int release = n && m->rec_end[first_new + n - 1] - m->rec_start[first_new] >= GIL_MINSIZE;
    PyThreadState *save = release ? PyEval_SaveThread() : NULL;
    for (size_t k = 0; k < n; k++) {
        size_t i = first_new + k;
        h[k] = record_hash(m, m->buf + m->rec_start[i], m->rec_end[i] - m->rec_start[i]);
    }
    if (save != NULL) PyEval_RestoreThread(save);
    PyObject *hashes = PyBytes_FromStringAndSize((const char *)h, (Py_ssize_t)(n * 8));
    if (hashes == NULL) return NULL;
    int64_t first_index = m->next;
    Py_ssize_t count = push_core(m, h, n, 0);
    PyObject *result = count < 0 ? NULL : emit(m, m->keep, (size_t)count, hashes, first_index);
    Py_DECREF(hashes);
    return result;
}

/* End of the chunks. With delimit_final, a final record without a delimiter is written
 * with one (another stream follows), except one that a newline ends in text mode. */
static PyObject *Matcher_finish_chunks_in(Matcher *m, PyObject *args, PyObject *kwds,
                                          int *changed);

static PyObject *Matcher_finish_chunks(Matcher *m, PyObject *args, PyObject *kwds)
{
    if (enter(m) < 0) return NULL;
    int changed = 0;
    PyObject *result = Matcher_finish_chunks_in(m, args, kwds, &changed);
    return leave(m, result, changed);
}

static PyObject *Matcher_finish_chunks_in(Matcher *m, PyObject *args, PyObject *kwds,
                                          int *changed)
{
    static char *kwlist[] = {"delimit_final", NULL};
    int delimit_final = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "|p", kwlist, &delimit_final)) return NULL;
    if (m->delim == NULL || m->chunks_finished) {
        PyErr_SetString(PyExc_RuntimeError, "finish_chunks() needs an unfinished chunk path");
        return NULL;
    }
    if (fed_by(m, 2) < 0) return NULL;
    *changed = 1;
    m->chunks_finished = 1;
    PyObject *hashes;
    Py_ssize_t count = 0;
    int64_t first_index = m->next;
    if (m->tail_start < m->buf_len) { /* a final record without a delimiter */
        if (grow((void **)&m->rec_start, &m->rec_cap, m->rec_len + 1, sizeof(size_t)) < 0 ||
            grow((void **)&m->rec_end, &m->rec_end_cap, m->rec_len + 1, sizeof(size_t)) < 0)
            return NULL;
        size_t first = m->tail_start, len = m->buf_len - first;
        /* Text with another delimiter than a newline: a newline (or CRLF) ending the
         * input ends the last record; it is not part of its key (it is still written,
         * as read). */
        int newline_delimited = m->delim_len == 1 && m->delim[0] == '\n';
        size_t key_len = len;
        if (!m->byte_mode && !newline_delimited && len > 0 && m->buf[first + len - 1] == '\n') {
            key_len--;
            if (key_len > 0 && m->buf[first + key_len - 1] == '\r') key_len--;
        }
        if (delimit_final && key_len == len) { /* written as if the input had it */
            if (m->delim_len > SIZE_MAX - m->buf_len - 1 ||
                grow((void **)&m->buf, &m->buf_cap, m->buf_len + m->delim_len + 1, 1) < 0) {
                if (!PyErr_Occurred()) PyErr_NoMemory();
                return NULL;
            }
            memcpy(m->buf + m->buf_len, m->delim, m->delim_len);
            m->buf_len += m->delim_len;
        } else {
            m->final_without_delimiter = 1;
        }
        m->rec_start[m->rec_len] = first;
        m->rec_end[m->rec_len] = first + len;
        m->rec_len++;
        m->tail_start = m->buf_len;
        uint64_t h = record_hash(m, m->buf + first, key_len);
        hashes = PyBytes_FromStringAndSize((const char *)&h, 8);
        if (hashes == NULL) return NULL;
        count = push_core(m, &h, 1, 0);
    } else {
        hashes = PyBytes_FromStringAndSize(NULL, 0);
        if (hashes == NULL) return NULL;
    }
    Py_ssize_t rest = count < 0 ? -1 : finish_core(m, (size_t)count);
    PyObject *result =
        rest < 0 ? NULL : emit(m, m->keep, (size_t)(count + rest), hashes, first_index);
    Py_DECREF(hashes);
    return result;
}

/* ---- type plumbing ----------------------------------------------------------- */

static int Matcher_init(Matcher *m, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"window_size", "max_history", "seed",      "delimiter",
                             "skip_chars",  "byte_mode",   "inverse",   "run_heads",
                             "normalize",   NULL};
    Py_ssize_t width;
    PyObject *history = Py_None;
    unsigned long long seed = 0;
    uint64_t skip = 0;
    Py_buffer delim = {0};
    int byte_mode = 0, inverse = 0, run_heads = 0;
    unsigned normalize = 0;
    if (m->ready || m->broken) {
        PyErr_SetString(PyExc_RuntimeError, "Matcher is already initialised");
        return -1;
    }
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "n|OKz*O&pppO&", kwlist, &width, &history,
                                     &seed, &delim, to_u64, &skip, &byte_mode, &inverse,
                                     &run_heads, to_u32, &normalize))
        return -1;
    /* Everything is checked before anything is stored: a failed __init__ leaves the
     * object as tp_new made it (unusable until an __init__ succeeds). */
    int rc = -1;
    int64_t horizon = INT64_MAX;
    unsigned char *delim_copy = NULL;
    if (width < 1) {
        PyErr_SetString(PyExc_ValueError, "window_size must be at least 1");
        goto done;
    }
    if (history != Py_None) {
        long long value = PyLong_AsLongLong(history);
        if (value == -1 && PyErr_Occurred()) goto done;
        if (value < width) {
            PyErr_SetString(PyExc_ValueError, "max_history must be at least window_size");
            goto done;
        }
        horizon = value;
    }
    if (delim.buf != NULL) {
        if (delim.len == 0) {
            PyErr_SetString(PyExc_ValueError, "the delimiter must not be empty");
            goto done;
        }
        delim_copy = PyMem_Malloc((size_t)delim.len);
        if (delim_copy == NULL) {
            PyErr_NoMemory();
            goto done;
        }
        memcpy(delim_copy, delim.buf, (size_t)delim.len);
        m->delim_len = (size_t)delim.len;
    }
    m->width = width;
    m->horizon = horizon;
    m->limited = history != Py_None;
    m->seed = seed;
    m->skip = skip;
    m->byte_mode = byte_mode;
    m->inverse = inverse;
    m->run_heads = run_heads;
    m->normalize = normalize & NORM_ALL;
    m->delim = delim_copy;
    m->ready = 1;
    rc = 0;
done:
    if (delim.buf != NULL) PyBuffer_Release(&delim);
    return rc;
}

static PyObject *Matcher_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    Matcher *m = (Matcher *)type->tp_alloc(type, 0);
    if (m == NULL) return NULL;
    /* The state every method may meet, even before (or without) a successful __init__. */
    m->new_material = Py_None;
    Py_INCREF(Py_None);
    m->cover = -1;
    m->new_until = -1;
    m->library.stride = 2;
    m->chains[0].stride = m->chains[1].stride = 3;
    return (PyObject *)m;
}

static int Matcher_traverse(Matcher *m, visitproc visit, void *arg)
{
    Py_VISIT(Py_TYPE(m)); /* a heap type */
    Py_VISIT(m->new_material);
    return 0;
}

static int Matcher_clear(Matcher *m)
{
    Py_CLEAR(m->new_material);
    return 0;
}

static void Matcher_dealloc(Matcher *m)
{
    PyTypeObject *type = Py_TYPE(m);
    PyObject_GC_UnTrack(m);
    Matcher_clear(m);
    PyMem_Free(m->sources);
    PyMem_Free(m->coeffs);
    PyMem_Free(m->tail);
    PyMem_Free(m->recent);
    ft_free(&m->first);
    table_free(&m->chains[0]);
    table_free(&m->chains[1]);
    table_free(&m->library);
    PyMem_Free(m->delim);
    PyMem_Free(m->buf);
    PyMem_Free(m->rec_start);
    PyMem_Free(m->rec_end);
    PyMem_Free(m->scratch_hashes);
    PyMem_Free(m->scratch_windows);
    PyMem_Free(m->scratch_fps);
    PyMem_Free(m->keep);
    type->tp_free((PyObject *)m);
    Py_DECREF(type);
}

static PyObject *Matcher_source(Matcher *m, PyObject *arg)
{
    if (usable(m) < 0) return NULL;
    long long window = PyLong_AsLongLong(arg);
    if (window == -1 && PyErr_Occurred()) return NULL;
    if (window >= m->sources_base && window - m->sources_base < (int64_t)m->sources_len) {
        int64_t source = m->sources[window - m->sources_base];
        if (source != NO_SOURCE) return PyLong_FromLongLong(source);
    }
    Py_RETURN_NONE;
}

/* After finish() or finish_chunks(): what follows is a new stream. Its windows may
 * repeat every remembered window of the earlier streams, and none spans the boundary:
 * the last windows are admitted now (nothing later can overlap them). */
static PyObject *Matcher_new_stream(Matcher *m, PyObject *Py_UNUSED(ignored))
{
    if (enter(m) < 0) return NULL;
    if (m->tail_len || (m->fed_by == 2 && !m->chunks_finished)) {
        PyErr_SetString(PyExc_RuntimeError, "new_stream() comes after finish()");
        return leave(m, NULL, 0);
    }
    int64_t first = m->recent_end - (int64_t)m->recent_len;
    for (size_t k = 0; k < m->recent_len; k++)
        if (admit(m, m->recent[k], first + (int64_t)k) < 0) return leave(m, NULL, 1);
    m->recent_len = 0;
    /* the chunk path starts empty again */
    m->chunks_finished = 0;
    m->final_without_delimiter = 0;
    m->buf_len = m->tail_start = m->scan_from = 0;
    m->rec_len = 0;
    Py_INCREF(Py_None);
    return leave(m, Py_None, 1);
}

static PyObject *get_new_material(Matcher *m, void *c)
{
    PyObject *value = m->new_material != NULL ? m->new_material : Py_None;
    Py_INCREF(value);
    return value;
}

static int set_new_material(Matcher *m, PyObject *value, void *c)
{
    if (value == NULL || (value != Py_None && !PyList_Check(value))) {
        PyErr_SetString(PyExc_TypeError, "new_material must be a list or None");
        return -1;
    }
    Py_INCREF(value);
    Py_XSETREF(m->new_material, value);
    return 0;
}

static PyObject *get_decided(Matcher *m, void *c) { return PyLong_FromLongLong(m->next); }

static PyObject *get_window_size(Matcher *m, void *c) { return PyLong_FromSsize_t(m->width); }

static PyObject *get_max_history(Matcher *m, void *c)
{
    if (!m->limited) Py_RETURN_NONE;
    return PyLong_FromLongLong(m->horizon);
}

static PyObject *get_remembered(Matcher *m, void *c)
{
    size_t n = m->first.size + (size_t)m->first.has_zero + table_len(&m->chains[0]) +
               table_len(&m->chains[1]);
    return PyLong_FromSize_t(n);
}

static PyObject *get_table_bytes(Matcher *m, void *c)
{
    size_t n = m->first.cap * FT_SLOT;
    const Table *tables[] = {&m->chains[0], &m->chains[1], &m->library};
    for (size_t i = 0; i < 3; i++) n += tables[i]->cap * (size_t)tables[i]->stride * 8;
    return PyLong_FromSize_t(n);
}

static PyGetSetDef Matcher_getset[] = {
    {"new_material", (getter)get_new_material, (setter)set_new_material,
     "list: per decided record, whether a first-seen window covers it, or None", NULL},
    {"decided", (getter)get_decided, NULL, "how many tracked records have been decided", NULL},
    {"window_size", (getter)get_window_size, NULL, "W", NULL},
    {"max_history", (getter)get_max_history, NULL, "the history, None if unlimited", NULL},
    {"remembered_windows", (getter)get_remembered, NULL, "fingerprints held in history", NULL},
    {"table_bytes", (getter)get_table_bytes, NULL, "bytes held by the window tables", NULL},
    {NULL}};

static PyMethodDef Matcher_methods[] = {
    {"push", (PyCFunction)Matcher_push, METH_O,
     "push(hashes) -> list[bool]: add key hashes (a buffer of int64); newly decided flags"},
    {"source", (PyCFunction)Matcher_source, METH_O,
     "source(window) -> int | None: start of the earlier window a recent repeat window "
     "repeats (negative: a library window); None if it is not a repeat"},
    {"finish", (PyCFunction)Matcher_finish, METH_NOARGS,
     "finish() -> list[bool]: decide the records left at end of input"},
    {"fingerprints", (PyCFunction)Matcher_fingerprints, METH_VARARGS,
     "fingerprints(hashes, count) -> bytes: int64 fingerprints of the first count windows"},
    {"add_library_windows", (PyCFunction)Matcher_add_library_windows, METH_VARARGS,
     "add_library_windows(fingerprints, starts): windows seen for the whole run"},
    {"feed_chunk", (PyCFunction)Matcher_feed_chunk, METH_O,
     "feed_chunk(chunk) -> (output, hashes, skipped_runs, decided, kept); skipped_runs: "
     "int64 pairs (start, stop), or with run_heads a list of (start, stop, first record)"},
    {"finish_chunks", (PyCFunction)(void (*)(void))Matcher_finish_chunks,
     METH_VARARGS | METH_KEYWORDS,
     "finish_chunks(delimit_final=False) -> the same, for the rest at end of input"},
    {"new_stream", (PyCFunction)Matcher_new_stream, METH_NOARGS,
     "new_stream(): after finish() or finish_chunks(), a new stream follows"},
    {NULL}};

static PyType_Slot Matcher_slots[] = {
    {Py_tp_doc, "The exact window engine: key hashes or raw chunks in, decisions out."},
    {Py_tp_new, Matcher_new},
    {Py_tp_init, (initproc)Matcher_init},
    {Py_tp_dealloc, (destructor)Matcher_dealloc},
    {Py_tp_traverse, (traverseproc)Matcher_traverse},
    {Py_tp_clear, (inquiry)Matcher_clear},
    {Py_tp_methods, Matcher_methods},
    {Py_tp_getset, Matcher_getset},
    {0, NULL}};

static PyType_Spec Matcher_spec = {
    .name = "seqdedup._kernel.Matcher",
    .basicsize = sizeof(Matcher),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .slots = Matcher_slots,
};

/* ---- offered to the attribution unit -------------------------------------------- */

uint64_t seqdedup_xxh64(const unsigned char *p, size_t len, uint64_t seed)
{
    return xxh64(p, len, seed);
}

int seqdedup_is_matcher(PyObject *obj)
{
    PyObject *module = PyType_GetModuleByDef(Py_TYPE(obj), &seqdedup_kernel_module);
    if (module == NULL) { /* TypeError set */
        PyErr_Clear();
    } else {
        KernelState *state = PyModule_GetState(module);
        if (state != NULL && PyObject_TypeCheck(obj, state->matcher_type)) return 1;
    }
    PyErr_SetString(PyExc_TypeError, "expected a seqdedup._kernel.Matcher");
    return 0;
}

int seqdedup_matcher_sources(PyObject *matcher, const int64_t **sources, size_t *len,
                             int64_t *base)
{
    Matcher *m = (Matcher *)matcher;
    if (usable(m) < 0) return -1;
    if (m->busy) {
        PyErr_SetString(PyExc_RuntimeError, "Matcher is in use by another thread");
        return -1;
    }
    *sources = m->sources;
    *len = m->sources_len;
    *base = m->sources_base;
    return 0;
}

/* ---- module functions ------------------------------------------------------------ */

static PyObject *kernel_xxh64(PyObject *self, PyObject *args)
{
    Py_buffer data;
    unsigned long long seed = 0;
    if (!PyArg_ParseTuple(args, "y*|K", &data, &seed)) return NULL;
    uint64_t h;
    if (data.len >= GIL_MINSIZE) {
        Py_BEGIN_ALLOW_THREADS
        h = xxh64(data.buf, (size_t)data.len, seed);
        Py_END_ALLOW_THREADS
    } else {
        h = xxh64(data.buf, (size_t)data.len, seed);
    }
    PyBuffer_Release(&data);
    return PyLong_FromUnsignedLongLong(h);
}

static PyObject *kernel_hash_records(PyObject *self, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"records", "seed", "skip_chars", "byte_mode", "normalize", NULL};
    PyObject *records;
    unsigned long long seed = 0;
    uint64_t skip = 0;
    int byte_mode = 0;
    unsigned normalize = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O|KO&pO&", kwlist, &records, &seed, to_u64,
                                     &skip, &byte_mode, to_u32, &normalize))
        return NULL;
    PyObject *seq = PySequence_Fast(records, "records must be a sequence of bytes");
    if (seq == NULL) return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    if (n > PY_SSIZE_T_MAX / 8) {
        Py_DECREF(seq);
        return PyErr_NoMemory();
    }
    PyObject *out = PyBytes_FromStringAndSize(NULL, n * 8);
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
        uint64_t h = key_hash(p, len, skip, byte_mode, normalize & NORM_ALL, seed);
        memcpy(dst + 8 * i, &h, 8);
    }
    Py_DECREF(seq);
    return out;
}

/* Key hashes straight from a library row (library.encode_records: uint32 count, count
 * uint32 lengths, the records), without a Python object per record. Every length is
 * checked against what the blob holds: a corrupt row is a ValueError, never a read
 * past its end. */
static PyObject *kernel_hash_encoded(PyObject *self, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"encoded", "seed", "skip_chars", "byte_mode", "normalize", NULL};
    Py_buffer blob;
    unsigned long long seed = 0;
    uint64_t skip = 0;
    int byte_mode = 0;
    unsigned normalize = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "y*|KO&pO&", kwlist, &blob, &seed, to_u64,
                                     &skip, &byte_mode, to_u32, &normalize))
        return NULL;
    const unsigned char *base = blob.buf;
    size_t size = (size_t)blob.len;
    PyObject *out = NULL;
    if (size < 4) goto corrupt;
    uint32_t count = read32(base);
    if ((size - 4) / 4 < count) goto corrupt;
    size_t pos = 4 + 4 * (size_t)count; /* first record */
    size_t words = count; /* count * 8 overflows where size_t is 32 bits */
    if (words > (size_t)PY_SSIZE_T_MAX / 8) goto corrupt;
    out = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)count * 8);
    if (out == NULL) goto done;
    char *dst = PyBytes_AS_STRING(out);
    int ok = 1;
    /* Pure work on the row (held by `blob`) and the new bytes object nobody else sees. */
    PyThreadState *save = size >= GIL_MINSIZE ? PyEval_SaveThread() : NULL;
    for (uint32_t i = 0; i < count; i++) {
        size_t len = read32(base + 4 + 4 * (size_t)i);
        if (len > size - pos) {
            ok = 0;
            break;
        }
        const unsigned char *p = base + pos;
        uint64_t h = key_hash(p, len, skip, byte_mode, normalize & NORM_ALL, seed);
        memcpy(dst + 8 * (size_t)i, &h, 8);
        pos += len;
    }
    if (save != NULL) PyEval_RestoreThread(save);
    if (!ok || pos != size) goto corrupt;
    goto done;
corrupt:
    Py_CLEAR(out);
    PyErr_SetString(PyExc_ValueError, "encoded records: lengths do not match the data");
done:
    PyBuffer_Release(&blob);
    return out;
}

/* normalize(key, classes) -> bytes: the key with the classes' matches replaced. */
static PyObject *kernel_normalize(PyObject *self, PyObject *args)
{
    Py_buffer data;
    unsigned classes;
    if (!PyArg_ParseTuple(args, "y*O&", &data, to_u32, &classes)) return NULL;
    const unsigned char *p = data.buf;
    size_t n = (size_t)data.len;
    KeySink count = {NULL, NULL, 0};
    normalize_key(p, n, classes & NORM_ALL, &count);
    PyObject *out = count.len > (size_t)PY_SSIZE_T_MAX
                        ? PyErr_NoMemory()
                        : PyBytes_FromStringAndSize(NULL, (Py_ssize_t)count.len);
    if (out != NULL) {
        KeySink write = {(unsigned char *)PyBytes_AS_STRING(out), NULL, 0};
        normalize_key(p, n, classes & NORM_ALL, &write);
    }
    PyBuffer_Release(&data);
    return out;
}

/* What json_keys makes: --json-key keys from `paths`, or (ignore) --json-ignore keys
 * without the members named in `names`. */
typedef struct {
    int ignore;
    JkPath paths[JK_MAX_PATHS];
    const unsigned char *names[JK_MAX_PATHS];
    size_t name_lens[JK_MAX_PATHS];
    size_t count;
    size_t extra; /* key bytes beyond the record's length, at most */
} JkRequest;

/* The key of each record: bytes, the record itself (compared as text) or None. */
static PyObject *json_keys_of(PyObject *rec, const JkRequest *req)
{
    Py_ssize_t n = PySequence_Fast_GET_SIZE(rec);
    PyObject *out = PyList_New(n);
    unsigned char *buf = NULL;
    size_t cap = 0;
    if (out == NULL) return NULL;
    for (Py_ssize_t r = 0; r < n; r++) {
        PyObject *record = PySequence_Fast_GET_ITEM(rec, r);
        if (!PyBytes_Check(record)) {
            PyErr_SetString(PyExc_TypeError, "records must be bytes");
            goto fail;
        }
        size_t len = (size_t)PyBytes_GET_SIZE(record);
        if (len > SIZE_MAX - req->extra - 1) {
            PyErr_NoMemory();
            goto fail;
        }
        if (grow((void **)&buf, &cap, len + req->extra + 1, 1) < 0) goto fail;
        const unsigned char *text = (const unsigned char *)PyBytes_AS_STRING(record);
        size_t key_len = 0;
        int kind = req->ignore ? json_ignore_key(text, len, req->names, req->name_lens,
                                                 req->count, buf, cap, &key_len)
                               : json_key(text, len, req->paths, req->names, req->name_lens,
                                          req->count, buf, cap, &key_len);
        PyObject *key;
        if (kind == JK_TEXT) {
            key = record;
            Py_INCREF(key);
        } else if (kind == JK_KEY) {
            key = PyBytes_FromStringAndSize((const char *)buf, (Py_ssize_t)key_len);
            if (key == NULL) goto fail;
        } else {
            key = Py_None;
            Py_INCREF(key);
        }
        PyList_SET_ITEM(out, r, key);
    }
    PyMem_Free(buf);
    return out;
fail:
    PyMem_Free(buf);
    Py_DECREF(out);
    return NULL;
}

/* json_keys(records, paths, ignore=False) -> list: per record its key (bytes), the
 * record itself when it is compared as text, or None when Python must decide
 * (jsonkey.h). --json-key: paths are (text, components) pairs sorted by text; with
 * ignore, the names of the one-component --json-ignore paths. At most 64. */
static PyObject *kernel_json_keys(PyObject *self, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"records", "paths", "ignore", NULL};
    PyObject *records, *path_list;
    int ignore = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OO|p", kwlist, &records, &path_list, &ignore))
        return NULL;
    PyObject *rec = PySequence_Fast(records, "records must be a sequence of bytes");
    if (rec == NULL) return NULL;
    PyObject *pths = PySequence_Fast(path_list, "paths must be a sequence");
    PyObject *out = NULL;
    const unsigned char **parts = NULL;
    size_t *part_lens = NULL;
    JkRequest *req = PyMem_Calloc(1, sizeof *req); /* too large for the stack's comfort */
    if (req == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    if (pths == NULL) goto done;
    Py_ssize_t npaths = PySequence_Fast_GET_SIZE(pths);
    if (npaths > JK_MAX_PATHS || (!ignore && npaths < 1)) {
        PyErr_SetString(PyExc_ValueError, "json_keys takes at most 64 paths (and one key path)");
        goto done;
    }
    req->ignore = ignore;
    req->count = (size_t)npaths;
    req->extra = 2;
    if (ignore) {
        for (Py_ssize_t p = 0; p < npaths; p++) {
            PyObject *name = PySequence_Fast_GET_ITEM(pths, p);
            if (!PyBytes_Check(name)) {
                PyErr_SetString(PyExc_TypeError, "ignored names must be bytes");
                goto done;
            }
            req->names[p] = (const unsigned char *)PyBytes_AS_STRING(name);
            req->name_lens[p] = (size_t)PyBytes_GET_SIZE(name);
        }
        out = json_keys_of(rec, req);
        goto done;
    }
    size_t total_parts = 0;
    for (Py_ssize_t p = 0; p < npaths; p++) {
        PyObject *item = PySequence_Fast_GET_ITEM(pths, p);
        if (!PyTuple_Check(item) || PyTuple_GET_SIZE(item) != 2 ||
            !PyBytes_Check(PyTuple_GET_ITEM(item, 0)) || !PyTuple_Check(PyTuple_GET_ITEM(item, 1)) ||
            PyTuple_GET_SIZE(PyTuple_GET_ITEM(item, 1)) < 1 ||
            PyTuple_GET_SIZE(PyTuple_GET_ITEM(item, 1)) > JK_MAX_DEPTH) {
            PyErr_SetString(PyExc_TypeError, "a path is (bytes, tuple of 1 to 64 bytes)");
            goto done;
        }
        total_parts += (size_t)PyTuple_GET_SIZE(PyTuple_GET_ITEM(item, 1));
        req->extra += (size_t)PyBytes_GET_SIZE(PyTuple_GET_ITEM(item, 0)) + 4;
    }
    parts = PyMem_Malloc(total_parts * sizeof *parts + 1);
    part_lens = PyMem_Malloc(total_parts * sizeof *part_lens + 1);
    if (parts == NULL || part_lens == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    size_t at = 0;
    for (Py_ssize_t p = 0; p < npaths; p++) {
        PyObject *item = PySequence_Fast_GET_ITEM(pths, p);
        PyObject *components = PyTuple_GET_ITEM(item, 1);
        req->paths[p].parts = parts + at;
        req->paths[p].part_lens = part_lens + at;
        req->paths[p].depth = (size_t)PyTuple_GET_SIZE(components);
        for (Py_ssize_t c = 0; c < PyTuple_GET_SIZE(components); c++) {
            PyObject *part = PyTuple_GET_ITEM(components, c);
            if (!PyBytes_Check(part)) {
                PyErr_SetString(PyExc_TypeError, "path components must be bytes");
                goto done;
            }
            parts[at] = (const unsigned char *)PyBytes_AS_STRING(part);
            part_lens[at++] = (size_t)PyBytes_GET_SIZE(part);
        }
        req->names[p] = (const unsigned char *)PyBytes_AS_STRING(PyTuple_GET_ITEM(item, 0));
        req->name_lens[p] = (size_t)PyBytes_GET_SIZE(PyTuple_GET_ITEM(item, 0));
    }
    out = json_keys_of(rec, req);
done:
    PyMem_Free(req);
    PyMem_Free(parts);
    PyMem_Free(part_lens);
    Py_XDECREF(pths);
    Py_DECREF(rec);
    return out;
}

static PyObject *kernel_key_offset(PyObject *self, PyObject *args)
{
    Py_buffer data;
    uint64_t skip;
    int byte_mode = 0;
    if (!PyArg_ParseTuple(args, "y*O&|p", &data, to_u64, &skip, &byte_mode)) return NULL;
    size_t off = key_offset(data.buf, (size_t)data.len, skip, byte_mode);
    PyBuffer_Release(&data);
    return PyLong_FromSize_t(off);
}

static PyMethodDef kernel_methods[] = {
    {"xxh64", kernel_xxh64, METH_VARARGS, "xxh64(data, seed=0) -> int: XXH64 of data"},
    {"hash_records", (PyCFunction)(void (*)(void))kernel_hash_records,
     METH_VARARGS | METH_KEYWORDS,
     "hash_records(records, seed=0, skip_chars=0, byte_mode=False, normalize=0) -> bytes of "
     "int64"},
    {"hash_encoded", (PyCFunction)(void (*)(void))kernel_hash_encoded,
     METH_VARARGS | METH_KEYWORDS,
     "hash_encoded(encoded, seed=0, skip_chars=0, byte_mode=False, normalize=0) -> bytes of "
     "int64: "
     "the key hashes of a library row's records"},
    {"normalize", kernel_normalize, METH_VARARGS,
     "normalize(key, classes) -> bytes: the key with each match of the classes replaced"},
    {"json_keys", (PyCFunction)(void (*)(void))kernel_json_keys, METH_VARARGS | METH_KEYWORDS,
     "json_keys(records, paths, ignore=False) -> list: each record's --json-key (or, with "
     "ignore, --json-ignore) key, the record itself (compared as text) or None (for Python "
     "to decide)"},
    {"key_offset", kernel_key_offset, METH_VARARGS,
     "key_offset(record, skip_chars, byte_mode=False) -> where the key starts"},
    {NULL}};

/* Multi-phase initialisation: the types are created per module object (heap types);
 * the module state keeps the Matcher type, which the attribution unit checks against. */
static int kernel_exec(PyObject *module)
{
    KernelState *state = PyModule_GetState(module);
    PyObject *matcher = PyType_FromModuleAndSpec(module, &Matcher_spec, NULL);
    if (matcher == NULL) return -1;
    state->matcher_type = (PyTypeObject *)matcher; /* the state owns this reference */
    if (PyModule_AddType(module, state->matcher_type) < 0) return -1;
    PyObject *attributor = PyType_FromModuleAndSpec(module, &seqdedup_attributor_spec, NULL);
    if (attributor == NULL) return -1;
    int rc = PyModule_AddType(module, (PyTypeObject *)attributor);
    Py_DECREF(attributor);
    if (rc < 0) return -1;
    return PyModule_AddIntConstant(module, "GIL_MINSIZE", GIL_MINSIZE);
}

static int kernel_traverse(PyObject *module, visitproc visit, void *arg)
{
    KernelState *state = PyModule_GetState(module);
    if (state != NULL) Py_VISIT(state->matcher_type);
    return 0;
}

static int kernel_clear(PyObject *module)
{
    KernelState *state = PyModule_GetState(module);
    if (state != NULL) Py_CLEAR(state->matcher_type);
    return 0;
}

static void kernel_free(void *module) { (void)kernel_clear((PyObject *)module); }

static PyModuleDef_Slot kernel_slots[] = {{Py_mod_exec, kernel_exec}, {0, NULL}};

struct PyModuleDef seqdedup_kernel_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "seqdedup._kernel",
    .m_doc = "The compiled core of seqdedup's window engine.",
    .m_size = sizeof(KernelState),
    .m_methods = kernel_methods,
    .m_slots = kernel_slots,
    .m_traverse = kernel_traverse,
    .m_clear = kernel_clear,
    .m_free = kernel_free,
};

PyMODINIT_FUNC PyInit__kernel(void) { return PyModuleDef_Init(&seqdedup_kernel_module); }
