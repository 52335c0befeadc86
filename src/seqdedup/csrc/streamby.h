/* The StreamMatcher's state (streamby.c: the type and the record path; streamby_history.c:
 * what a window is compared with, the history's lookups). Internal, not an API. */
#ifndef SEQDEDUP_STREAMS_H
#define SEQDEDUP_STREAMS_H

#include "attribution.h" /* Vec */
#include "first_table.h"
#include "keylog.h"
#include "siphash.h"

#define DECIDED 1
#define SKIPPED 2
#define NO_LANE (-1)
#define NO_END (-1)

/* The fingerprint of the last W hashes of a ring of W (rolled as records come). */
typedef struct {
    uint64_t lo, hi;
    int32_t filled, head;     /* hashes in the ring (at most W), its oldest slot */
} Rolling;

typedef struct {
    int64_t last;             /* position of its last record */
    Rolling window;           /* its last W records (a whole window once filled == W) */
    SipState content;         /* the open run's content: its key hashes, keyed-hashed */
    int64_t total, skipped;   /* records of this stretch, and of them skipped */
    int32_t prev, next;       /* the activity list, least recently active first */
    int32_t undecided;        /* the newest records of the ring not decided yet */
    int64_t witness;          /* the end of the window its last window repeats (confirmed
                               * by keys), NO_END when that window is no repeat */
    int8_t active, run_open;
    /* report_runs: the open run's first and last positions, its length and the end of
     * the window its first record starts, which it repeats; the first of its records
     * still held (its first, or with fold parts the first of its current part) */
    int64_t run_first, run_last, run_length, run_source, run_held;
} Lane;

#define AHEAD 16 /* records between a fingerprint's prefetch and its lookup */
/* A closed run as report_runs hands it over: lane, first and last positions, length,
 * the source window's last and first positions, its content (two words). */
#define RUN_FIELDS 8
/* A folded part as fold hands it over: its run's RUN_FIELDS (the last position and the
 * length so far: the part's last and the run's records up to it; the content 0 before
 * the run ends), then the part's first position, its records, whether it ends the run. */
#define PART_FIELDS (RUN_FIELDS + 3)

/* A stream's name as the matcher keeps it (streamby_names.c): while it is active, its
 * lane; while it is one of the first `max_rows` names, its statistics row. */
typedef struct {
    uint64_t hash;            /* keyed hash of the name */
    char *bytes;              /* its own copy (NULL: the entry is free) */
    Py_ssize_t len;
    int32_t lane;             /* NO_LANE: not active */
    int32_t row;              /* -1: no row of its own */
    int32_t next_free;        /* free entries: the next one */
} NameEntry;

typedef struct {
    NameEntry *entries;       /* stable indices: the slots and lanes point here */
    size_t entries_len, entries_cap;
    int32_t free_entry;       /* -1: none */
    int32_t *slots;           /* open addressing by hash, linear probing; -1 empty */
    size_t slot_cap, used;    /* slot_cap: 0 or a power of two */
    int32_t *lane_entry;      /* per lane: the entry of the name it serves */
    size_t lane_entry_cap;
    int32_t *free_lanes;      /* lanes of streams that ended, reused last freed first */
    size_t free_len, free_cap;
    int32_t next_lane;        /* lanes never used start here */
    int32_t rows;             /* rows given so far */
    Hash128 seed;
} NameTable;

typedef struct {
    PyObject_HEAD
    int32_t width;
    int64_t idle;             /* -1: streams never end for idleness */
    int64_t max_lanes;        /* -1: no limit on active streams */
    int count_runs;
    int report_runs;          /* each closed run handed over whole (markers, --top) */
    int fold;                 /* report_runs in parts (fold lines): each with its records */
    int64_t fold_every;       /* a part's records (-1: a part is the whole run) */
    int force_collisions;     /* tests: every fingerprint of W > 1 the same */
    int busy, ready, broken;
    uint64_t *coeffs;         /* 2W, from matcher.c: [0] and [W] are B^(W-1) per lane */
    uint64_t base_lo, base_hi;
    uint64_t drop_lo, drop_hi; /* -B^W per lane: what takes the leaving record out */
    Hash128 content_key;      /* a run's content hash: the seed, apart from the key hashes' */
    Lane *lanes;
    Hash128 *ring_hash;       /* W per lane */
    int64_t *ring_pos;
    /* per lane, AHEAD records ahead of the decisions and never reset (so equal to the
     * lane's own window whenever that is whole) */
    Rolling *ahead;
    Hash128 *ahead_hash;      /* W per lane */
    size_t lane_cap;
    int32_t lru_head, lru_tail, active_count;
    FirstTable first;         /* unlimited: fingerprint -> first end */
    int64_t history;          /* -1: unlimited */
    Table latest[2];          /* limited: fingerprint -> latest end, two generations */
    int current;
    int64_t rotated_at;
    int64_t *previous;        /* limited: per position, the previous end of its window */
    size_t previous_cap;      /* a power of two */
    int64_t previous_base, previous_len;
    unsigned char *queue;     /* per position from queue_base: DECIDED | SKIPPED */
    int64_t *source_at;       /* report_runs, per queued position: the end of the window
                               * it starts repeats (NO_END: none) */
    size_t queue_len, queue_cap;
    int64_t queue_base, position;
    KeyLog keys;              /* W > 1: per position the key and the stream's record before */
    int64_t keys_span;        /* positions the key log keeps (-1: all of them) */
    Vec ended;                /* (lane, total, skipped) per stream that ended */
    Vec runs;                 /* (lo, hi) content of each closed run (count_runs) */
    Vec closed;               /* report_runs: RUN_FIELDS per closed run, until taken */
    Vec *part_records;        /* fold, per lane: the current part's (position, key lo, hi) */
    Vec parts;                /* fold: PART_FIELDS per part handed over, until taken */
    Vec part_positions;       /* fold: those parts' records' positions, */
    Vec part_keys;            /* and their key hashes (two words each) */
    NameTable names;          /* push_named: the names, kept here */
} StreamMatcher;

/* streamby_history.c */
/* Limited history: make room for position g, forgetting ends older than the history. */
int seqdedup_previous_append(StreamMatcher *s, int64_t g);
/* Whether the window ending at `end` holds the key hashes of lane `id`'s window. */
int seqdedup_same_as_lane(const StreamMatcher *s, const Lane *l, int32_t id, int64_t end,
                          Hash128 key);
/* Limited history: the end of the remembered window that the window of lane `id`
 * (fingerprint, newest key, from `start` to g) repeats, or NO_END; then it is admitted.
 * -1 with MemoryError set. */
int seqdedup_limited_repeat(StreamMatcher *s, Lane *l, int32_t id, Hash128 fingerprint,
                            Hash128 key, int64_t start, int64_t g, int64_t *source);

/* streamby.c, for streamby_names.c */
int seqdedup_stream_enter(StreamMatcher *s);
/* Every record's lane from `lanes` (int32; with `translate`, indices into it, -1 the
 * stream before, `current` before the first), then each record decided. */
int seqdedup_stream_push(StreamMatcher *s, const Py_buffer *hashes, const Py_buffer *lanes,
                         const Py_buffer *translate, int32_t current, Py_ssize_t n);
int seqdedup_stream_end_all(StreamMatcher *s);
/* Leave a call (its result -1: the matcher is broken); the decided flags, or NULL. */
PyObject *seqdedup_stream_leave(StreamMatcher *s, int rc);

/* streamby_names.c */
PyObject *seqdedup_stream_push_named(StreamMatcher *s, PyObject *args);
PyObject *seqdedup_stream_end_named(StreamMatcher *s, PyObject *ignored);
void seqdedup_names_free(NameTable *t);

#endif /* SEQDEDUP_STREAMS_H */
