/*
 * Internal declarations shared by the C units of seqdedup._kernel (not an API).
 *
 *   _kernel.c              hashing, splitting, the window tables, the matcher, the module
 *   _kernel_attribution.c  attribution: duplicate runs cut into pieces, their sources,
 *                          the sequences table
 *
 * Here: the open-addressing table and growable arrays both use, and the few functions
 * one unit offers the other. Every allocation is checked; a failure sets MemoryError.
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
 * Open-addressing table keyed by 64-bit fingerprints, linear probing. A slot is
 * `stride` int64s: the key then stride-1 values. Key 0 marks an empty slot, so the
 * fingerprint 0 is kept beside the slots.
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

static inline size_t table_home(const Table *t, uint64_t key)
{
    return (size_t)((key * 0x9E3779B97F4A7C15ULL) >> t->shift);
}

static inline int64_t *table_find(Table *t, uint64_t key)
{
    if (key == 0) return t->has_zero ? t->zero_values : NULL;
    if (t->cap == 0) return NULL;
    size_t mask = t->cap - 1, i = table_home(t, key);
    for (;;) {
        int64_t *slot = t->slots + i * (size_t)t->stride;
        uint64_t k = (uint64_t)slot[0];
        if (k == key) return slot + 1;
        if (k == 0) return NULL;
        i = (i + 1) & mask;
    }
}

static inline void table_prefetch(const Table *t, uint64_t key)
{
    if (t->cap) PREFETCH(t->slots + table_home(t, key) * (size_t)t->stride);
}

/* Rebuild with 2^bits slots. Returns -1 (with MemoryError set) on failure. */
static inline int table_resize(Table *t, int bits)
{
    size_t cap = (size_t)1 << bits;
    size_t stride = (size_t)t->stride;
    if (cap > SIZE_MAX / stride / sizeof(int64_t)) {
        PyErr_NoMemory();
        return -1;
    }
    int64_t *slots = PyMem_Calloc(cap * stride, sizeof(int64_t));
    if (slots == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    int64_t *old = t->slots;
    size_t old_cap = t->cap;
    t->slots = slots;
    t->cap = cap;
    t->shift = 64 - bits;
    size_t mask = cap - 1;
    for (size_t s = 0; s < old_cap; s++) {
        const int64_t *src = old + s * stride;
        if (src[0] == 0) continue;
        size_t i = table_home(t, (uint64_t)src[0]);
        while (slots[i * stride] != 0) i = (i + 1) & mask;
        memcpy(slots + i * stride, src, stride * sizeof(int64_t));
    }
    PyMem_Free(old);
    return 0;
}

/* The values of `key`, inserting it (values zeroed, *created = 1) if absent; NULL with
 * MemoryError set if the table cannot grow. Keeps the load at most 3/4. */
static inline int64_t *table_upsert(Table *t, uint64_t key, int *created)
{
    *created = 0;
    if (key == 0) {
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
                PyErr_NoMemory();
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
        uint64_t k = (uint64_t)slot[0];
        if (k == key) return slot + 1;
        if (k == 0) {
            slot[0] = (int64_t)key;
            t->size++;
            *created = 1;
            return slot + 1;
        }
        i = (i + 1) & mask;
    }
}

static inline size_t table_len(const Table *t) { return t->size + (size_t)t->has_zero; }

/* Remove `key` if present (backward-shift deletion keeps every probe chain whole). */
static inline void table_remove(Table *t, uint64_t key)
{
    if (key == 0) {
        t->has_zero = 0;
        return;
    }
    int64_t *found = table_find(t, key);
    if (found == NULL) return;
    size_t stride = (size_t)t->stride, mask = t->cap - 1;
    size_t hole = (size_t)(found - 1 - t->slots) / stride;
    for (size_t j = (hole + 1) & mask;; j = (j + 1) & mask) {
        int64_t *slot = t->slots + j * stride;
        if (slot[0] == 0) break;
        size_t home = table_home(t, (uint64_t)slot[0]);
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
    PyMem_Free(t->slots);
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
        if (want > SIZE_MAX / 2) {
            PyErr_NoMemory();
            return -1;
        }
        want *= 2;
    }
    if (want > SIZE_MAX / item) {
        PyErr_NoMemory();
        return -1;
    }
    void *fresh = PyMem_Realloc(*data, want * item);
    if (fresh == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    *data = fresh;
    *cap = want;
    return 0;
}

/* ---------------------------------------------------------------------------------
 * Between the units.
 */
#define NO_SOURCE INT64_MIN /* a window that repeats no earlier one */

typedef struct {
    PyTypeObject *matcher_type;
} KernelState;

extern struct PyModuleDef seqdedup_kernel_module;
extern PyType_Spec seqdedup_attributor_spec;

uint64_t seqdedup_xxh64(const unsigned char *p, size_t len, uint64_t seed);
/* The W fingerprint coefficients (PyMem_Malloc'd; NULL with MemoryError set). */
uint64_t *seqdedup_coefficients(Py_ssize_t count);
/* Whether `obj` is a Matcher of this module (0 with TypeError set if not). */
int seqdedup_is_matcher(PyObject *obj);
/* The sources a Matcher noted for its recent windows: sources[k] belongs to window
 * base + k (NO_SOURCE: not a repeat). -1 with an error set when it is busy or unusable. */
int seqdedup_matcher_sources(PyObject *matcher, const int64_t **sources, size_t *len,
                             int64_t *base);

#endif /* SEQDEDUP_KERNEL_H */
