/*
 * The StreamMatcher's history (streamby.c has the type and the record path): with a
 * limited history, per position the previous end of the window that ended there and per
 * fingerprint its latest end, in two generations; and for every history, what a
 * candidate window is compared with before it counts (its key hashes, read back through
 * the key log).
 */
#include "streamby.h"

/* Limited history: position g's slot (the previous end of the window ending there). */
static int64_t *previous_at(StreamMatcher *s, int64_t g)
{
    return &s->previous[(size_t)g & (s->previous_cap - 1)];
}

/* Limited history: make room for position g, forgetting ends older than the history. */
int seqdedup_previous_append(StreamMatcher *s, int64_t g)
{
    while (s->previous_len && s->previous_base < g - s->history) {
        s->previous_base++;
        s->previous_len--;
    }
    if ((size_t)s->previous_len == s->previous_cap) {
        size_t cap = s->previous_cap ? s->previous_cap * 2 : 1024;
        if (cap > SIZE_MAX / sizeof(int64_t)) return (void)PyErr_NoMemory(), -1;
        int64_t *ring = PyMem_RawMalloc(cap * sizeof(int64_t));
        if (ring == NULL) return (void)PyErr_NoMemory(), -1;
        for (int64_t e = s->previous_base; e < s->previous_base + s->previous_len; e++)
            ring[(size_t)e & (cap - 1)] = *previous_at(s, e);
        PyMem_RawFree(s->previous);
        s->previous = ring;
        s->previous_cap = cap;
    }
    if (!s->previous_len) s->previous_base = g;
    s->previous_len++;
    *previous_at(s, g) = NO_END;
    return 0;
}

/* Whether the window ending at `end` holds the key hashes of lane `id`'s window (its
 * ring; `key` its newest): the newest record only when the lane's last window was
 * confirmed equal to the one ending at `end`'s predecessor in its stream, else all W,
 * read back through the key log (a record no longer held fails the comparison). */
int seqdedup_same_as_lane(const StreamMatcher *s, const Lane *l, int32_t id, int64_t end,
                          Hash128 key)
{
    const int32_t w = s->width;
    if (w == 1) return 1; /* the fingerprint is the key hash */
    Hash128 h;
    int64_t previous;
    if (!keylog_at(&s->keys, end, &h, &previous)) return 0;
    if (l->witness != NO_END && previous == l->witness) return hash_equal(h, key);
    const Hash128 *ring = s->ring_hash + (size_t)id * (size_t)w;
    for (int32_t k = 0; k < w; k++) { /* newest first */
        if (k > 0 && (previous == NO_PREVIOUS || !keylog_at(&s->keys, previous, &h, &previous)))
            return 0;
        if (!hash_equal(h, ring[(l->window.head + w - 1 - k) % w])) return 0;
    }
    return 1;
}

/* Limited history: whether the window `key` (ending at g, started at `start`) repeats
 * one that ended before it started, within the history; then it is admitted. */
int seqdedup_limited_repeat(StreamMatcher *s, Lane *l, int32_t id, Hash128 fingerprint,
                            Hash128 key, int64_t start, int64_t g, int64_t *source)
{
    Table *cur = &s->latest[s->current], *old = &s->latest[1 - s->current];
    int64_t *found = table_find(cur, fingerprint);
    if (found == NULL) found = table_find(old, fingerprint);
    int64_t latest = found != NULL ? found[0] : NO_END, end = latest;
    *source = NO_END;
    while (end != NO_END && end >= g - s->history && end >= s->previous_base) {
        if (end < start && seqdedup_same_as_lane(s, l, id, end, key)) {
            *source = end;
            break;
        }
        end = *previous_at(s, end);
    }
    *previous_at(s, g) = latest;
    int created;
    int64_t *slot = table_upsert(cur, fingerprint, &created);
    if (slot == NULL) return -1;
    slot[0] = g;
    if (g + 1 - s->rotated_at >= s->history) {
        /* what was last written two rotations ago is older than the history */
        table_clear(old);
        s->current = 1 - s->current;
        s->rotated_at = g + 1;
    }
    return 0;
}
