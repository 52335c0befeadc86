/* The SizeDecider's state (sized.c: the rule; sized_type.c: the Python type). Internal,
 * not an API. */
#ifndef SEQDEDUP_SIZED_H
#define SEQDEDUP_SIZED_H

#include "kernel.h"

#define SIZE_CAP 4096
#define NOWHERE INT64_MIN
#define MAX_WIDTH ((int64_t)1 << 20)

typedef struct {
    int64_t position;
    Hash128 key;
} Waiting;

typedef struct {
    Waiting *items;
    size_t head, len, cap;
} Queue;

typedef struct {
    PyObject_HEAD
    int64_t width, min_size, history, cap; /* history -1: unlimited */
    uint64_t base;
    uint64_t *powers; /* base^n, n <= cap */
    /* per record from `offset` on: key hash, prefix sums of sizes and of the polynomial
     * (one more than records), whether its M stretch repeats */
    int64_t offset;
    Hash128 *keys;
    int64_t *sums;
    uint64_t *poly;
    uint8_t *m_repeat;
    size_t held, records_cap, sums_cap, poly_cap, flags_cap;
    Hash128 *region; /* a loaded library's key hashes: records -region_len .. -1 */
    size_t region_len;
    int64_t total, stream, m_start, n_next, cover, swept;
    /* stretches by key -> where one content starts; M and N share one table with an
     * unlimited history (a content is an M, or an N, stretch wherever it occurs) */
    Table tables[2];
    Table *m_table, *n_table;
    /* each key hash met -> the last record with it (a library's: -1, kept); a record
     * whose key is not here decides it and every record waiting before it */
    Table seen;
    int64_t released; /* the next record without a keep flag */
    Queue waiting_m, waiting_n; /* limited history: stretches not admitted yet */
    uint8_t *out; /* this call's keep flags */
    size_t out_len, out_cap;
    /* saving a library (track_new): per record from fresh_from on, whether a first-seen
     * M or N stretch holds it; the last record each kind flagged */
    uint8_t *fresh;
    size_t fresh_len, fresh_cap;
    int64_t fresh_from, marked[2];
    int tracking;
    int force_collisions; /* (tests) every fingerprint 0: stretches of a length share keys */
    int ready, busy, broken;
} SizeDecider;

/* sized.c: each returns -1 with an exception set on failure */
int sized_put_flag(SizeDecider *d, int keep);
int sized_reserve(SizeDecider *d, size_t count);
int sized_append(SizeDecider *d, Hash128 key, int64_t size);
int sized_steps(SizeDecider *d, int64_t first);
int sized_release(SizeDecider *d, int64_t last);
int sized_sweep(SizeDecider *d);
int sized_library_sequence(SizeDecider *d, int64_t first, const Hash128 *keys,
                           const int64_t *sizes, int64_t count);

#endif
