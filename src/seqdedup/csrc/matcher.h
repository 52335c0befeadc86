/*
 * The Matcher's state (the exact window rule and its chunk path) and the structures it
 * holds: the keys seen, the first-start table of unlimited history, the spans of
 * records later windows are compared with. Internal, included by kernel.h after the
 * table and the growable arrays it uses.
 */
#ifndef SEQDEDUP_MATCHER_H
#define SEQDEDUP_MATCHER_H

/* ---------------------------------------------------------------------------------
 * Keys seen (settled.c): 32-bit fingerprints of key hashes in an open-addressing set
 * (0 marks an empty slot; a fingerprint 0 is stored as 1). A key not in it is certainly
 * new; one in it may be new too (a shared fingerprint), which only delays a record.
 */
typedef struct {
    uint32_t *slots;
    size_t cap, size; /* cap a power of two, or 0 */
} KeySet;

/* ---------------------------------------------------------------------------------
 * The first-start table of unlimited history: the one structure that grows with the
 * input, so its slots are packed: 21 bytes, the 128-bit fingerprint then the start in
 * 40 bits (offset by FT_BIAS so that negative library starts fit). Kept at most 3/4
 * full and grown by half. Large tables live in their own mappings, and while the table
 * grows the old one is returned to the system as it is read, so a growth never holds
 * both whole.
 */
#define FT_SLOT 21
#define FT_BIAS ((int64_t)1 << 39)
#define FT_MMAP_MIN ((size_t)1 << 20)

typedef struct {
    unsigned char *slots;
    size_t cap, size; /* cap: any size (grown by half), 0 before the first insertion */
    int mapped;       /* slots come from mmap, not PyMem_Raw* */
    int has_zero;
    int64_t zero_start;
} FirstTable;

/* A stretch of records first..last (inclusive) that windows repeating nothing cover:
 * the only earlier records a comparison needs (unlimited history; see confirm.c). Once
 * decided, their key hashes move to the archive, from index `at`. */
typedef struct {
    int64_t first, last;
    size_t at;
} KeySpan;

/* ---------------------------------------------------------------------------------
 * The matcher.
 */
typedef struct {
    PyObject_HEAD
    Py_ssize_t width;     /* W */
    int64_t horizon;      /* max history; INT64_MAX when unlimited */
    int limited;
    uint64_t *coeffs;     /* 2W coefficients (W per lane), made at the first complete window */
    /* hashes of the records whose window is not complete yet (at most W-1) */
    Hash128 *tail;
    size_t tail_len, tail_cap;
    /* limited history: fingerprints of the last W windows, not admitted yet */
    Hash128 *recent;
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
    /* confirmation (W >= 2): the key hashes of the tracked records from log_base on
     * (all of them with unlimited history, the last history and window with a limited
     * one), and the library's key region (region[k] is position k - region_len) */
    Hash128 *log;
    size_t log_len, log_cap;
    int64_t log_base;
    /* unlimited history: of the records before log_base, those of windows that repeated
     * nothing (spans[0 .. spans_archived), their key hashes in archive); the spans
     * after those are the decided records from log_base on, still in the log */
    Hash128 *archive;
    size_t archive_len, archive_cap;
    KeySpan *spans;
    size_t spans_len, spans_cap, spans_archived, span_hint;
    int64_t spans_needed; /* records in the spans not archived yet */
    int64_t compact_min;  /* decided records in the log before it is compacted (tests: 1) */
    Hash128 *region;
    size_t region_len;
    Py_buffer region_view; /* the region held in place (its obj NULL: region is a copy) */
    int64_t witness_window; /* the last window confirmed equal to an earlier one */
    int64_t witness_source; /* ... and that earlier one's start */
    int64_t witness_limit;  /* ... and where that one's stream ends (the next begins) */
    int64_t *stream_starts; /* where each stream after the first begins, in order */
    size_t stream_starts_len, stream_starts_cap;
    uint64_t force_collisions; /* tests: 1 makes every fingerprint of W >= 2 equal */
    PyObject *new_material;   /* list or None */
    PyObject *stretches;      /* the chunk path's last new-material stretches (or NULL) */
    /* chunk path */
    unsigned char *delim;
    size_t delim_len;
    uint64_t skip;          /* --skip-chars */
    uint64_t fields;        /* --skip-fields (before the characters) */
    int byte_mode;
    unsigned normalize; /* --normalize classes (NORM_*), 0: none */
    int inverse;
    int run_heads; /* each skipped run also carries its first record's bytes (RUN_HEADS)
                    * or all its records' (RUN_RECORDS) */
    Hash128 seed;         /* one per lane */
    unsigned char *buf;   /* undecided complete records, then the incomplete tail */
    size_t buf_len, buf_cap;
    size_t tail_start;    /* start of the incomplete record in buf */
    size_t scan_from;     /* where the delimiter search resumes */
    size_t *rec_start, *rec_end; /* undecided complete records, oldest first */
    size_t rec_len, rec_cap, rec_end_cap;
    /* filtered chunk path (split_chunk, then decide_split with Python's filter mask) */
    int filtered;                /* made with filtered=True: the two-step chunk path */
    unsigned char *rec_tracked;  /* per pending record: tracked (1) or passed through */
    size_t rec_tracked_cap;
    size_t rec_classified;       /* pending records whose mask is known (the oldest) */
    size_t final_suffix;         /* after a final record without a delimiter: the newline
                                  * (or CRLF) that ended the input, written after it */
    int64_t released_total;      /* records released so far, for record numbers */
    size_t *tracked_at;          /* scratch: pending index of each decided tracked record */
    size_t tracked_at_cap;
    unsigned char *released_flags; /* scratch: kept (or passed through) per released record */
    size_t released_flags_cap;
    int final_without_delimiter; /* the last pending record had no delimiter */
    int chunks_finished;
    int fed_by;           /* 0: nothing yet; 1: push(); 2: the chunk path (never both) */
    /* settled records (settled.c): a pending record is certain to be kept, before its
     * window completes, once a record at or after it has a key never seen before */
    int early;            /* made with early=True: the chunk path writes settled records */
    int settle_off;       /* a library is loaded, or the unlimited key set is full */
    KeySet seen[2];       /* keys seen; with a limited history two generations */
    int seen_current;
    int64_t seen_rotated; /* tracked index where the current generation began */
    int64_t last_novel;   /* tracked index of the last record whose key was new, or -1 */
    size_t early_out;     /* pending records (the oldest) already written as settled */
    /* scratch, grown as needed and reused: fresh large blocks cost page faults */
    Hash128 *scratch_hashes, *scratch_fps;
    size_t scratch_hashes_cap, scratch_fps_cap;
    unsigned char *keep;  /* decisions of the records decided by the last call */
    size_t keep_cap;
    /* -w auto (a minimum size) on the chunk path: the SizeDecider that decides instead
     * of the window rule (attach_sized), and each chunk's key sizes for it */
    PyObject *sized;
    int64_t *scratch_sizes;
    size_t scratch_sizes_cap;
    int ready;            /* __init__ succeeded */
    int broken;           /* an error left the state half-updated: unusable */
    int busy;             /* a call is running (it may have released the GIL) */
} Matcher;

#endif /* SEQDEDUP_MATCHER_H */
