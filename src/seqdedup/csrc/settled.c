/*
 * Settled records: new material never waits for its window (a Matcher made with
 * early=True; the run asks for it with a limited history, see stages.settles_early).
 *
 * A pending record j (its window not complete yet) can only be skipped by a window that
 * is not complete either, and every such window holds all the records from j to the
 * last one read. If one of those has a key never seen before, no such window can equal
 * an earlier one (which would hold that key), so j is certain: kept, unless a repeat
 * already decided covers it. The matcher notes, as keys come in, the last record whose
 * key was new; every pending record up to it is settled and can be written at once.
 *
 * The keys seen are 32-bit fingerprints in a set: a fingerprint shared by a new key
 * makes it look seen, which only delays a record. With a limited history the set has
 * two generations, each at least a history and a window long, so every key a remembered
 * window can hold is in it and memory stays bounded. With an unlimited history the set
 * stops at KEYS_MAX slots: from then on nothing is settled early (records wait for their
 * windows, as they would without this). Library windows are never forgotten and their
 * keys are not noted, so with a library loaded nothing is settled early either.
 */
#include "kernel.h"

#define KEYS_MAX ((size_t)1 << 20) /* 4 MB: about 786,000 keys (unlimited history) */

static inline uint32_t key_print(Hash128 h)
{
    uint32_t f = (uint32_t)(hash_mix(h) >> 32);
    return f ? f : 1;
}

static inline size_t key_home(size_t cap, uint32_t f)
{
    return (size_t)(((uint64_t)f * (uint64_t)cap) >> 32);
}

static int keyset_contains(const KeySet *s, uint32_t f)
{
    if (s->cap == 0) return 0;
    for (size_t i = key_home(s->cap, f);; i = (i + 1) & (s->cap - 1)) {
        uint32_t v = s->slots[i];
        if (v == f) return 1;
        if (v == 0) return 0;
    }
}

/* 2 there already, 1 added, 0 when it would grow past `limit` slots, -1 (MemoryError). */
static int keyset_add(KeySet *s, uint32_t f, size_t limit)
{
    if ((s->size + 1) * 4 > s->cap * 3) {
        size_t cap = s->cap ? 2 * s->cap : 64;
        if (cap > limit) return 0;
        uint32_t *slots = PyMem_RawCalloc(cap, sizeof(uint32_t));
        if (slots == NULL) return seqdedup_no_memory();
        for (size_t k = 0; k < s->cap; k++) {
            uint32_t v = s->slots[k];
            if (v == 0) continue;
            size_t i = key_home(cap, v);
            while (slots[i] != 0) i = (i + 1) & (cap - 1);
            slots[i] = v;
        }
        PyMem_RawFree(s->slots);
        s->slots = slots;
        s->cap = cap;
    }
    size_t i = key_home(s->cap, f);
    while (s->slots[i] != 0) {
        if (s->slots[i] == f) return 2;
        i = (i + 1) & (s->cap - 1);
    }
    s->slots[i] = f;
    s->size++;
    return 1;
}

static void keyset_free(KeySet *s)
{
    PyMem_RawFree(s->slots);
    s->slots = NULL;
    s->cap = s->size = 0;
}

void seqdedup_keys_free(Matcher *m)
{
    keyset_free(&m->seen[0]);
    keyset_free(&m->seen[1]);
}

int seqdedup_note_keys(Matcher *m, const Hash128 *h, size_t n, int64_t first)
{
    if (!m->early || m->settle_off) return 0;
    size_t limit = m->limited ? SIZE_MAX / 8 : KEYS_MAX;
    for (size_t k = 0; k < n; k++) {
        int64_t index = first + (int64_t)k;
        if (m->limited && index - m->seen_rotated >= m->horizon + m->width) {
            /* What was noted two generations ago is older than any window a remembered
             * one can hold: drop it. */
            KeySet *old = &m->seen[1 - m->seen_current];
            if (old->size) memset(old->slots, 0, old->cap * sizeof(uint32_t));
            old->size = 0;
            m->seen_current = 1 - m->seen_current;
            m->seen_rotated = index;
        }
        uint32_t f = key_print(h[k]);
        int added = keyset_add(&m->seen[m->seen_current], f, limit); /* one probe, mostly */
        if (added < 0) return -1;
        if (added == 0) { /* full: nothing is settled early any more */
            m->settle_off = 1;
            seqdedup_keys_free(m);
            return 0;
        }
        if (added == 1 && !keyset_contains(&m->seen[1 - m->seen_current], f))
            m->last_novel = index;
    }
    return 0;
}

int64_t seqdedup_settled(const Matcher *m)
{
    if (!m->early || m->settle_off || m->last_novel < m->next) return m->next;
    int64_t read = m->next + (int64_t)m->tail_len; /* records read so far */
    return m->last_novel + 1 < read ? m->last_novel + 1 : read;
}
