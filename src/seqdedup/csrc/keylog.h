/* The key log of the StreamMatcher (streamby.c): per input position the record's key hash
 * and the position of the record before it in its stream (NO_PREVIOUS at a stream's
 * start), so that a window known by its end can be read back and compared record by
 * record. A ring of positions base .. base + len - 1; with a limited history the oldest
 * go once no window still remembered can hold them. Static inline: one user. */
#ifndef SEQDEDUP_KEYLOG_H
#define SEQDEDUP_KEYLOG_H

#include "kernel.h"

#define NO_PREVIOUS (-1)

typedef struct {
    Hash128 *hash;
    int64_t *previous;
    size_t cap; /* a power of two, or 0 */
    int64_t base, len;
} KeyLog;

static inline size_t keylog_slot(const KeyLog *log, int64_t position)
{
    return (size_t)position & (log->cap - 1);
}

/* The key hash and previous position at `position`; 0 when it is not held. */
static inline int keylog_at(const KeyLog *log, int64_t position, Hash128 *hash, int64_t *previous)
{
    if (position < log->base || position - log->base >= log->len) return 0;
    size_t slot = keylog_slot(log, position);
    *hash = log->hash[slot];
    *previous = log->previous[slot];
    return 1;
}

/* Append position base + len, first forgetting the positions before `keep_from`.
 * -1 with MemoryError set. */
static inline int keylog_append(KeyLog *log, Hash128 hash, int64_t previous, int64_t keep_from)
{
    if (keep_from > log->base) {
        int64_t drop = keep_from - log->base < log->len ? keep_from - log->base : log->len;
        log->base += drop;
        log->len -= drop;
    }
    if ((size_t)log->len == log->cap) {
        size_t cap = log->cap ? log->cap * 2 : 1024;
        if (cap > SIZE_MAX / sizeof(Hash128)) return seqdedup_no_memory();
        Hash128 *hashes = PyMem_RawMalloc(cap * sizeof(Hash128));
        int64_t *previous_of = PyMem_RawMalloc(cap * sizeof(int64_t));
        if (hashes == NULL || previous_of == NULL) {
            PyMem_RawFree(hashes);
            PyMem_RawFree(previous_of);
            return seqdedup_no_memory();
        }
        for (int64_t p = log->base; p < log->base + log->len; p++) {
            size_t from = keylog_slot(log, p), to = (size_t)p & (cap - 1);
            hashes[to] = log->hash[from];
            previous_of[to] = log->previous[from];
        }
        PyMem_RawFree(log->hash);
        PyMem_RawFree(log->previous);
        log->hash = hashes;
        log->previous = previous_of;
        log->cap = cap;
    }
    int64_t position = log->base + log->len;
    log->hash[keylog_slot(log, position)] = hash;
    log->previous[keylog_slot(log, position)] = previous;
    log->len++;
    return 0;
}

static inline void keylog_free(KeyLog *log)
{
    PyMem_RawFree(log->hash);
    PyMem_RawFree(log->previous);
    log->hash = NULL;
    log->previous = NULL;
    log->cap = 0;
    log->len = 0;
}

#endif /* SEQDEDUP_KEYLOG_H */
