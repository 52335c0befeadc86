/*
 * The confirmation (docs/engine.md, "Identity of windows"): a window's fingerprint names
 * one earlier window, and the window repeats it only when their W key hashes are equal.
 * The Matcher keeps the key hash of every tracked record a comparison may need (its log;
 * the library's region for loaded windows) and compares all W at a run's first window,
 * then only the newest record per window: window j-1 equal to window i-1 makes window j
 * equal to window i exactly when record j+W-1 equals record i+W-1. When the candidate's
 * records differ (a fingerprint shared by two windows), the window after the one that
 * window j-1 repeated is tried the same way, unless it runs into the next stream.
 *
 * With unlimited history a candidate is the first window with its fingerprint, which
 * repeated nothing: so of the decided records only those of such windows are kept
 * (spans, moved to the archive), and a long run of repeats costs no memory. A record
 * that is not kept can only be needed after a shared fingerprint, where failing the
 * comparison hides a repeat at most.
 */
#include "kernel.h"

/* The archived key hash of a record before log_base, if its span was kept. */
static int archived_key(const Matcher *m, int64_t position, Hash128 *out)
{
    size_t low = 0, high = m->spans_archived, hint = m->span_hint;
    if (hint < high && m->spans[hint].first <= position) { /* along a run: the same span */
        if (position <= m->spans[hint].last) {
            low = hint;
            high = hint + 1;
        } else {
            low = hint + 1;
        }
    }
    while (low < high) { /* the first span whose last record is at or after position */
        size_t middle = low + (high - low) / 2;
        if (m->spans[middle].last < position) low = middle + 1; else high = middle;
    }
    if (low >= m->spans_archived || m->spans[low].first > position) return 0;
    ((Matcher *)m)->span_hint = low; /* (a cache: not part of the state) */
    *out = m->archive[m->spans[low].at + (size_t)(position - m->spans[low].first)];
    return 1;
}

/* The key hash at a tracked position (negative: the library's region); 0 if it is not
 * held, which makes any comparison with it fail. */
static inline int key_at(const Matcher *m, int64_t position, Hash128 *out)
{
    if (position < 0) {
        if (position < -(int64_t)m->region_len) return 0;
        *out = m->region[(size_t)((int64_t)m->region_len + position)];
        return 1;
    }
    if (position < m->log_base) return m->spans_archived ? archived_key(m, position, out) : 0;
    if (position - m->log_base >= (int64_t)m->log_len) return 0;
    *out = m->log[position - m->log_base];
    return 1;
}

static inline int same_key(const Matcher *m, int64_t a, int64_t b)
{
    Hash128 x, y;
    return key_at(m, a, &x) && key_at(m, b, &y) && hash_equal(x, y);
}

/* Window j repeated nothing and does not continue the last span: a new one. */
int seqdedup_new_span(Matcher *m, int64_t j)
{
    if (grow((void **)&m->spans, &m->spans_cap, m->spans_len + 1, sizeof(KeySpan)) < 0)
        return -1;
    m->spans[m->spans_len++] = (KeySpan){j, j + m->width - 1, 0};
    m->spans_needed += m->width;
    return 0;
}

/* Move the kept records before `next` (decided) to the archive and drop the rest of
 * them from the log. Each record is moved once, and only when at least half of those
 * decided would go: the log and the archive hold at most twice what is needed. */
static int compact_log(Matcher *m)
{
    const int64_t to = m->next;
    int64_t decided = to - m->log_base;
    if (decided < m->compact_min || m->spans_needed > decided / 2) return 0;
    if (m->spans_len > m->spans_archived && m->spans[m->spans_len - 1].last >= to) {
        /* the last span goes on past the decided records: split it there */
        if (grow((void **)&m->spans, &m->spans_cap, m->spans_len + 1, sizeof(KeySpan)) < 0)
            return -1;
        KeySpan *last = &m->spans[m->spans_len - 1];
        m->spans[m->spans_len++] = (KeySpan){to, last->last, 0};
        last->last = to - 1;
    }
    size_t moving = 0;
    for (size_t s = m->spans_archived; s < m->spans_len && m->spans[s].first < to; s++)
        moving += (size_t)(m->spans[s].last - m->spans[s].first + 1);
    if (moving > SIZE_MAX / 2 - m->archive_len) return seqdedup_no_memory();
    if (grow((void **)&m->archive, &m->archive_cap, m->archive_len + moving, sizeof(Hash128)) < 0)
        return -1;
    size_t s = m->spans_archived;
    for (; s < m->spans_len && m->spans[s].first < to; s++) {
        KeySpan *span = &m->spans[s];
        size_t n = (size_t)(span->last - span->first + 1);
        memcpy(m->archive + m->archive_len, m->log + (span->first - m->log_base),
               n * sizeof(Hash128));
        span->at = m->archive_len;
        m->archive_len += n;
        m->spans_needed -= (int64_t)n;
    }
    m->spans_archived = s;
    memmove(m->log, m->log + decided, (m->log_len - (size_t)decided) * sizeof(Hash128));
    m->log_len -= (size_t)decided;
    m->log_base = to;
    return 0;
}

/* Whether window j holds the key hashes of window `source`: along a run of repeats only
 * the newest record (window j-1 was confirmed equal to window source-1), else all W. */
static int same_window(const Matcher *m, int64_t source, int64_t j)
{
    const int64_t w = m->width;
    if (m->witness_window == j - 1 && m->witness_source == source - 1)
        return same_key(m, source + w - 1, j + w - 1);
    for (int64_t k = 0; k < w; k++)
        if (!same_key(m, source + k, j + k)) return 0;
    return 1;
}

/* Where the stream holding `position` ends: the next stream's start (INT64_MAX for the
 * current one; 0 for the library's region, whose sentinels keep windows apart). */
static int64_t stream_limit(const Matcher *m, int64_t position)
{
    if (position < 0) return 0;
    size_t low = 0, high = m->stream_starts_len; /* the first start > position */
    while (low < high) {
        size_t middle = low + (high - low) / 2;
        if (m->stream_starts[middle] <= position) low = middle + 1; else high = middle;
    }
    return low < m->stream_starts_len ? m->stream_starts[low] : INT64_MAX;
}

/* Whether window j repeats its candidate (NO_SOURCE: none) or, when their records differ
 * (a fingerprint shared by different windows), the window after the one that window j-1
 * repeats (if it lies in one stream), whose start goes to *source. For W > 1 (see
 * seqdedup_confirm in kernel.h). */
int seqdedup_confirm_keys(Matcher *m, int64_t j, int64_t candidate, int64_t *source)
{
    const int64_t w = m->width;
    *source = candidate;
    if (candidate != NO_SOURCE && same_window(m, candidate, j)) {
        if (m->witness_window != j - 1 || m->witness_source != candidate - 1)
            m->witness_limit = stream_limit(m, candidate);
    } else if (m->witness_window == j - 1 && m->witness_source + w < m->witness_limit &&
               same_key(m, m->witness_source + w, j + w - 1)) {
        *source = m->witness_source + 1;
    } else {
        return 0;
    }
    m->witness_window = j;
    m->witness_source = *source;
    return 1;
}

/* Keep the key hashes of the next n tracked records for confirmation. What no later
 * window can be compared with goes first: with a limited history, what is older than
 * it (at most half the log is moved at a time, so each hash moves O(1) times); with an
 * unlimited one, the records of repeats (compact_log). */
int seqdedup_log_keys(Matcher *m, const Hash128 *hashes, size_t n)
{
    if (m->width == 1 || n == 0) return 0;
    if (!m->limited && compact_log(m) < 0) return -1;
    if (m->limited) {
        /* the oldest comparable start: window next - 1's source, at most a history back */
        int64_t keep_from = m->next - 1 - m->horizon;
        if (keep_from > m->log_base) {
            size_t drop = (size_t)(keep_from - m->log_base);
            if (drop > m->log_len) drop = m->log_len;
            if (drop >= 4096 && drop >= m->log_len / 2) {
                memmove(m->log, m->log + drop, (m->log_len - drop) * sizeof(Hash128));
                m->log_len -= drop;
                m->log_base += (int64_t)drop;
            }
        }
    }
    if (n > SIZE_MAX / 2 - m->log_len) return seqdedup_no_memory();
    if (grow((void **)&m->log, &m->log_cap, m->log_len + n, sizeof(Hash128)) < 0) return -1;
    memcpy(m->log + m->log_len, hashes, n * sizeof(Hash128));
    m->log_len += n;
    return 0;
}

/* After new_input(): where the next stream begins (a window never runs across it). */
int seqdedup_note_stream_start(Matcher *m)
{
    if (grow((void **)&m->stream_starts, &m->stream_starts_cap, m->stream_starts_len + 1,
             sizeof(int64_t)) < 0)
        return -1;
    m->stream_starts[m->stream_starts_len++] = m->next;
    return 0;
}
