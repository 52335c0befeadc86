/*
 * Attribution's state and what its units share (sequences.c, attribution.c,
 * attributor.c). See attribution.c for what attribution is.
 */
#ifndef SEQDEDUP_ATTRIBUTION_H
#define SEQDEDUP_ATTRIBUTION_H

#include "kernel.h"

#define TRIM_SLACK 65536          /* key hashes held past what a limited history needs */
#define INDEX_LIMIT ((int64_t)1 << 19) /* windows indexed (per history, or in all) */
#define LOCKSTEP 8                /* records compared at once while many candidates run */
#define UNLIMITED INT64_MAX
#define PIECE_FIELDS 6            /* start, end, source, count, identity (two lanes) */

/* ---- int64 vectors -------------------------------------------------------------- */

typedef struct {
    int64_t *data;
    size_t len, cap;
} Vec;

static inline int vec_reserve(Vec *v, size_t extra)
{
    if (extra > SIZE_MAX / 2 - v->len) return seqdedup_no_memory();
    return grow((void **)&v->data, &v->cap, v->len + extra, sizeof(int64_t));
}

static inline int vec_push(Vec *v, int64_t x)
{
    if (v->len == v->cap && vec_reserve(v, 1) < 0) return -1;
    v->data[v->len++] = x;
    return 0;
}

static inline void vec_drop_front(Vec *v, size_t n)
{
    if (n >= v->len) {
        v->len = 0;
        return;
    }
    memmove(v->data, v->data + n, (v->len - n) * sizeof(int64_t));
    v->len -= n;
}

static inline void vec_free(Vec *v)
{
    PyMem_RawFree(v->data);
    v->data = NULL;
    v->len = v->cap = 0;
}

/* Records whose key hashes a vector holds (two lanes each). */
static inline int64_t held_keys(const Vec *v) { return (int64_t)(v->len / 2); }

/* A record position as a table key. */
static inline Hash128 position_key(int64_t position)
{
    Hash128 key = {(uint64_t)position, 0};
    return key;
}

/* ---- the sequences table: identity -> count, least recently seen evicted ------------ */

typedef struct {
    int64_t limit;    /* UNLIMITED, or at least 1 */
    Table counts;     /* identity (128 bits) -> (count, node); node: its place in the LRU list */
    Table known;      /* with a limit and `identifying`: every identity ever counted */
    int identifying;  /* count `identified` (the sequences table; not --top's table) */
    int64_t identified;
    /* LRU list over nodes (most recently seen at the tail) */
    int64_t *prev, *next;
    Hash128 *node_key;
    size_t nodes, prev_cap, next_cap, key_cap;
    int64_t head, tail;
} Sequences;

/* One more sighting of a sequence: its count so far (2 at its first repeat: the
 * first occurrence counts, and when the sighting made its entry), or -1 with
 * MemoryError set. */
int64_t seqdedup_sequences_observe(Sequences *s, Hash128 identity, int *created);
void seqdedup_sequences_free(Sequences *s);

/* ---- the attributor ---------------------------------------------------------------- */

typedef struct {
    PyObject_HEAD
    PyObject *matcher;  /* whose sources say which earlier window each repeat repeats */
    int64_t width;
    int64_t limit;      /* max candidates, UNLIMITED */
    int64_t history;    /* max history, UNLIMITED */
    int64_t keep_back;  /* key hashes kept behind the last decided record; -1: all */
    Hash128 seed;       /* for piece identities (lane seeds) */
    int report;         /* hand the pieces to Python (else only count them) */
    int top;            /* count pieces in `tops` too; without `report`, hand over those
                         * that make an entry there (--top reads only those) */
    int run_firsts;     /* hand over only the piece each run begins with (--fold alone) */
    int piece_first;    /* the open piece begins its run */
    uint64_t *coeffs;
    Vec keys;           /* key hashes of tracked records offset .. (two lanes each) */
    int64_t offset;
    Vec library;        /* key hashes of the loaded sequences, ending at index -1 (two lanes) */
    Vec numbers;        /* input record numbers of tracked records offset .. */
    int numbered;
    int64_t decided;
    int64_t piece_start, piece_end; /* piece_start -1: no open piece */
    Vec cands;          /* the open piece's candidate sources, aligned with its start */
    Vec ends;           /* where each earlier input stream ended */
    /* occurrence index: fingerprint -> (first node, count) and nodes (window, next) */
    Table occurring[2];
    Vec occ_nodes[2];
    int current;
    int64_t generation_end;
    int64_t run_start;  /* where the skipped run reaching the last batch's end began */
    int64_t indexed;    /* windows before this one are indexed (or lie in no run) */
    int64_t index_size; /* windows indexed in the current generation */
    Sequences sequences;
    Sequences tops;     /* --top: identity -> pieces seen + 1, least recently seen evicted */
    Vec out;            /* pieces closed by this call */
    const int64_t *sources; /* the matcher's (or a copy), for the add_runs call running */
    size_t sources_len;
    int64_t sources_base;
    Vec found, rooms, lengths, heap; /* scratch */
    int64_t work;       /* keys compared or hashed so far: tests check it grows linearly */
    int ready, broken, busy;
} Attributor;

/* Take the next `size` tracked records, given as their runs of skipped records
 * (runs[2k], runs[2k+1]): tracked indices, half-open, in order, with the matcher's
 * sources of its recent windows (sources[k] for window sources_base + k) as they were
 * after it decided them. Runs without the GIL when the caller lets it go: it touches
 * no Python object and fails through seqdedup_fail (kernel.h). */
int seqdedup_add_runs(Attributor *a, int64_t size, const int64_t *runs, size_t nruns,
                      const int64_t *sources, size_t sources_len, int64_t sources_base);
/* Close the open piece against its earliest remaining candidate. */
int seqdedup_close_piece(Attributor *a);

#endif /* SEQDEDUP_ATTRIBUTION_H */
