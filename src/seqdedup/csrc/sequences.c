/*
 * The sequences table of attribution: each distinct piece content (identified by a
 * hash of its key hashes) and how often it was seen, the least recently seen evicted
 * past the limit, like seqdedup.attribution.SequenceTable. `identified` counts every
 * content ever identified, evicted ones too.
 */
#include "attribution.h"

static void lru_unlink(Sequences *s, int64_t node)
{
    int64_t p = s->prev[node], n = s->next[node];
    if (p >= 0) s->next[p] = n; else s->head = n;
    if (n >= 0) s->prev[n] = p; else s->tail = p;
}

static void lru_append(Sequences *s, int64_t node)
{
    s->prev[node] = s->tail;
    s->next[node] = -1;
    if (s->tail >= 0) s->next[s->tail] = node; else s->head = node;
    s->tail = node;
}

int64_t seqdedup_sequences_observe(Sequences *s, Hash128 identity, int *made)
{
    *made = 0;
    int limited = s->limit != UNLIMITED;
    int64_t *entry = table_find(&s->counts, identity);
    if (entry != NULL) {
        entry[0]++;
        if (limited) {
            lru_unlink(s, entry[1]);
            lru_append(s, entry[1]);
        }
        return entry[0];
    }
    int created;
    if (!limited) {
        entry = table_upsert(&s->counts, identity, &created);
        if (entry == NULL) return -1;
        entry[0] = 2;
        s->identified++;
        *made = 1;
        return 2;
    }
    if (s->identifying) {
        if (table_upsert(&s->known, identity, &created) == NULL) return -1;
        s->identified += created;
    }
    int64_t node;
    if ((int64_t)table_len(&s->counts) >= s->limit) { /* full: the least recent goes */
        node = s->head;
        lru_unlink(s, node);
        table_remove(&s->counts, s->node_key[node]);
    } else {
        size_t want = s->nodes + 1;
        if (grow((void **)&s->prev, &s->prev_cap, want, sizeof(int64_t)) < 0 ||
            grow((void **)&s->next, &s->next_cap, want, sizeof(int64_t)) < 0 ||
            grow((void **)&s->node_key, &s->key_cap, want, sizeof(Hash128)) < 0)
            return -1;
        node = (int64_t)s->nodes++;
    }
    entry = table_upsert(&s->counts, identity, &created);
    if (entry == NULL) return -1;
    entry[0] = 2;
    entry[1] = node;
    s->node_key[node] = identity;
    lru_append(s, node);
    *made = 1;
    return 2;
}

void seqdedup_sequences_free(Sequences *s)
{
    table_free(&s->counts);
    table_free(&s->known);
    PyMem_RawFree(s->prev);
    PyMem_RawFree(s->next);
    PyMem_RawFree(s->node_key);
    s->prev = s->next = NULL;
    s->node_key = NULL;
    s->nodes = s->prev_cap = s->next_cap = s->key_cap = 0;
}
