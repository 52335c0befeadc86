/* The first-start table (matcher.c, matcher_type.c): static inline, on the hot path. */
#ifndef SEQDEDUP_FIRST_TABLE_H
#define SEQDEDUP_FIRST_TABLE_H

#include "kernel.h"

#if defined(__linux__) || defined(__APPLE__)
#include <sys/mman.h>
#include <unistd.h>
#define HAVE_MMAP 1
#endif


static inline Hash128 ft_key(const unsigned char *slot)
{
    Hash128 key;
    memcpy(&key.lo, slot, 8);
    memcpy(&key.hi, slot + 8, 8);
    return key;
}

static inline int64_t ft_start(const unsigned char *slot)
{
    uint64_t v = (uint64_t)slot[16] | ((uint64_t)slot[17] << 8) | ((uint64_t)slot[18] << 16) |
                 ((uint64_t)slot[19] << 24) | ((uint64_t)slot[20] << 32);
    return (int64_t)v - FT_BIAS;
}

static inline void ft_set(unsigned char *slot, Hash128 key, int64_t start)
{
    uint64_t v = (uint64_t)(start + FT_BIAS);
    memcpy(slot, &key.lo, 8);
    memcpy(slot + 8, &key.hi, 8);
    for (int b = 0; b < 5; b++) slot[16 + b] = (unsigned char)(v >> (8 * b));
}

/* A key's home slot: its mixed lanes scaled to the capacity (any capacity, not only a
 * power of two, so that the table can grow by half instead of doubling). */
static inline size_t ft_home(const FirstTable *t, Hash128 key)
{
    uint64_t x = hash_mix(key), cap = (uint64_t)t->cap;
#if defined(__SIZEOF_INT128__)
    return (size_t)(((unsigned __int128)x * cap) >> 64);
#else
    uint64_t x_hi = x >> 32, x_lo = x & 0xFFFFFFFFu, c_hi = cap >> 32, c_lo = cap & 0xFFFFFFFFu;
    uint64_t mid = x_hi * c_lo + ((x_lo * c_lo) >> 32);
    uint64_t mid2 = x_lo * c_hi + (mid & 0xFFFFFFFFu);
    return (size_t)(x_hi * c_hi + (mid >> 32) + (mid2 >> 32));
#endif
}

static inline size_t ft_next(const FirstTable *t, size_t i) { return i + 1 == t->cap ? 0 : i + 1; }

static inline void ft_prefetch(const FirstTable *t, Hash128 key)
{
    if (t->cap) PREFETCH(t->slots + ft_home(t, key) * FT_SLOT);
}

/* Zeroed memory for `bytes`; sets *mapped. NULL on failure (no exception set). */
static inline unsigned char *ft_alloc(size_t bytes, int *mapped)
{
#ifdef HAVE_MMAP
    if (bytes >= FT_MMAP_MIN) {
        void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANON, -1, 0);
        *mapped = 1;
        if (p == MAP_FAILED) return NULL;
#ifdef MADV_HUGEPAGE
        /* Probes land anywhere in the table: huge pages spare most of its TLB misses and
         * page faults (a hint; where the system has none, nothing changes). */
        (void)madvise(p, bytes, MADV_HUGEPAGE);
#endif
        return p;
    }
#endif
    *mapped = 0;
    return PyMem_RawCalloc(bytes, 1);
}

static inline void ft_release(unsigned char *slots, size_t bytes, int mapped)
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
    PyMem_RawFree(slots);
}

static inline int ft_resize(FirstTable *t, size_t cap)
{
    if (cap > SIZE_MAX / FT_SLOT) return seqdedup_no_memory();
    int mapped;
    unsigned char *slots = ft_alloc(cap * FT_SLOT, &mapped);
    if (slots == NULL) return seqdedup_no_memory();
    unsigned char *old = t->slots;
    size_t old_cap = t->cap;
    int old_mapped = t->mapped;
    t->slots = slots;
    t->cap = cap;
    t->mapped = mapped;
#ifdef HAVE_MMAP
    size_t page = (size_t)sysconf(_SC_PAGESIZE), freed = 0;
#endif
    for (size_t s = 0; s < old_cap; s++) {
        const unsigned char *src = old + s * FT_SLOT;
        Hash128 key = ft_key(src);
        if (!hash_is_zero(key)) {
            size_t i = ft_home(t, key);
            while (!hash_is_zero(ft_key(slots + i * FT_SLOT))) i = ft_next(t, i);
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

/* Room for `size` keys without growing (one resize instead of a growth by half at a
 * time, each rehashing every key: a library's windows are known before they go in). */
static inline int ft_reserve(FirstTable *t, size_t size)
{
    if (size > SIZE_MAX / 2 / FT_SLOT) return seqdedup_no_memory();
    size_t cap = size / 3 * 4 + 16;
    return cap > t->cap ? ft_resize(t, cap) : 0;
}

/* The first start of `key`, inserting `start` for it if it is new. */
static inline int ft_first_start(FirstTable *t, Hash128 key, int64_t start, int64_t *first)
{
    if (start < -FT_BIAS || start >= FT_BIAS) {
        return seqdedup_fail(PyExc_OverflowError,
                             "more than 2^39 records in one run with unlimited history");
    }
    if (hash_is_zero(key)) {
        if (!t->has_zero) {
            t->has_zero = 1;
            t->zero_start = start;
        }
        *first = t->zero_start;
        return 0;
    }
    if ((t->size + 1) * 4 > t->cap * 3) {
        /* Grown by half: right after a growth the table is half full, so a window
         * costs 21 / (1/2 .. 3/4) = 28 .. 42 bytes (doubling would reach 56). */
        size_t cap = t->cap < 16 ? 16 : t->cap + t->cap / 2;
        while (cap / 4 * 3 < t->size + 1) {
            if (cap > SIZE_MAX / 2 / FT_SLOT) return seqdedup_no_memory();
            cap += cap / 2;
        }
        if (ft_resize(t, cap) < 0) return -1;
    }
    size_t i = ft_home(t, key);
    for (;;) {
        unsigned char *slot = t->slots + i * FT_SLOT;
        Hash128 k = ft_key(slot);
        if (hash_equal(k, key)) {
            *first = ft_start(slot);
            return 0;
        }
        if (hash_is_zero(k)) {
            ft_set(slot, key, start);
            t->size++;
            *first = start;
            return 0;
        }
        i = ft_next(t, i);
    }
}

static inline void ft_free(FirstTable *t)
{
    ft_release(t->slots, t->cap * FT_SLOT, t->mapped);
    t->slots = NULL;
    t->cap = t->size = 0;
    t->has_zero = 0;
}

#endif /* SEQDEDUP_FIRST_TABLE_H */
