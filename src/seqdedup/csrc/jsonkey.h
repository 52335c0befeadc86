/* --json-key and --json-ignore on the fast path: the key of a JSON-object record, made
 * from its text without building Python objects. Included by _kernel.c; plain C99, no
 * Python. (json_ignore_key, at the end, is the --json-ignore half.)
 *
 * The key is what seqdedup/jsonkeys.py makes: {"path":value,...} with the paths in
 * sorted order, compact, a path the record lacks left out. This scanner only answers
 * where the answer is certain and the same with either parser Python may use (orjson
 * or the standard library): a record whose first non-blank byte is printable ASCII and
 * not '{' is no JSON object (compared as its text); a plain ASCII object whose chosen
 * values are strings, integers of at most 15 digits, true, false or null gets its key
 * here. A string is written back as both parsers' serialisers write it: its escapes
 * are their own short forms, except "\/", which they write as "/". Everything else
 * (non-ASCII bytes, escapes in names, \u escapes, floats or long numbers, NaN, nesting
 * past 64, a chosen object or array) is left to Python: JK_DEFER.
 */
#ifndef SEQDEDUP_JSONKEY_H
#define SEQDEDUP_JSONKEY_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define JK_MAX_PATHS 64
#define JK_MAX_DEPTH 64

enum { JK_TEXT = 0, JK_KEY = 1, JK_DEFER = 2 };

typedef struct {
    const unsigned char *const *parts; /* the path's components */
    const size_t *part_lens;
    size_t depth;                      /* number of components */
} JkPath;

typedef struct {
    const unsigned char *s;
    size_t n, i;
    const JkPath *paths;
    size_t npaths;
    /* per path: where the chosen value lies (found), and whether it can be copied */
    size_t start[JK_MAX_PATHS], end[JK_MAX_PATHS];
    unsigned char found[JK_MAX_PATHS], simple[JK_MAX_PATHS];
    int defer;
} JkScan;

static inline void jk_blank(JkScan *j)
{
    while (j->i < j->n) {
        unsigned char c = j->s[j->i];
        if (c != ' ' && c != '\t' && c != '\n' && c != '\r') break;
        j->i++;
    }
}

/* A string at j->i (the opening quote). 1: valid; 0: invalid. *plain: no escape. */
static int jk_string(JkScan *j, int *plain)
{
    j->i++; /* the quote */
    *plain = 1;
    while (j->i < j->n) {
        unsigned char c = j->s[j->i];
        if (c == '"') {
            j->i++;
            return 1;
        }
        if (c < 0x20) return 0; /* a raw control character: invalid for both parsers */
        if (c == '\\') {
            *plain = 0;
            if (j->i + 1 >= j->n) return 0;
            unsigned char e = j->s[j->i + 1];
            if (e == 'u') { /* surrogates differ between parsers: not decided here */
                j->defer = 1;
                return 0;
            }
            if (e == 0 || strchr("\"\\/bfnrt", e) == NULL) return 0;
            j->i += 2;
            continue;
        }
        j->i++;
    }
    return 0; /* unterminated */
}

/* A number. 1: valid; 0: invalid. *simple: an integer of at most 15 digits, not -0. */
static int jk_number(JkScan *j, int *simple)
{
    size_t first = j->i;
    if (j->s[j->i] == '-') j->i++;
    if (j->i >= j->n) return 0;
    if (j->s[j->i] == 'I') { /* -Infinity: the standard library takes it */
        j->defer = 1;
        return 0;
    }
    if (j->s[j->i] == '0') {
        j->i++;
    } else if (j->s[j->i] >= '1' && j->s[j->i] <= '9') {
        while (j->i < j->n && j->s[j->i] >= '0' && j->s[j->i] <= '9') j->i++;
    } else {
        return 0;
    }
    size_t digits = j->i - first - (j->s[first] == '-');
    int integer = 1;
    if (j->i < j->n && j->s[j->i] == '.') {
        integer = 0;
        j->i++;
        size_t from = j->i;
        while (j->i < j->n && j->s[j->i] >= '0' && j->s[j->i] <= '9') j->i++;
        if (j->i == from) return 0;
    }
    if (j->i < j->n && (j->s[j->i] == 'e' || j->s[j->i] == 'E')) {
        integer = 0;
        j->i++;
        if (j->i < j->n && (j->s[j->i] == '+' || j->s[j->i] == '-')) j->i++;
        size_t from = j->i;
        while (j->i < j->n && j->s[j->i] >= '0' && j->s[j->i] <= '9') j->i++;
        if (j->i == from) return 0;
    }
    int negative_zero = j->s[first] == '-' && digits == 1 && j->s[first + 1] == '0';
    if (digits > 15) j->defer = 1; /* the parsers differ on big integers */
    *simple = integer && digits <= 15 && !negative_zero;
    return 1;
}

static int jk_literal(JkScan *j, const char *word)
{
    size_t len = strlen(word);
    if (j->n - j->i < len || memcmp(j->s + j->i, word, len) != 0) return 0;
    j->i += len;
    return 1;
}

static int jk_value(JkScan *j, size_t depth, uint64_t active);

/* An object at j->i; `active`: the paths whose first `depth` components led here. */
static int jk_object(JkScan *j, size_t depth, uint64_t active)
{
    if (depth > JK_MAX_DEPTH) { /* a deep nest is the parsers' to judge (and our stack's) */
        j->defer = 1;
        return 0;
    }
    j->i++; /* '{' */
    jk_blank(j);
    if (j->i < j->n && j->s[j->i] == '}') {
        j->i++;
        return 1;
    }
    for (;;) {
        if (j->i >= j->n || j->s[j->i] != '"') return 0;
        size_t name = j->i + 1;
        int plain;
        if (!jk_string(j, &plain)) return 0;
        size_t name_len = j->i - 1 - name;
        uint64_t next = 0;
        if (active && !plain) {
            j->defer = 1; /* an escaped name might be a chosen one */
            return 0;
        }
        for (size_t p = 0; p < j->npaths; p++) {
            if (!(active >> p & 1)) continue;
            const JkPath *path = &j->paths[p];
            if (path->part_lens[depth] == name_len &&
                memcmp(path->parts[depth], j->s + name, name_len) == 0) {
                next |= (uint64_t)1 << p;
                j->found[p] = 0; /* a later member of the same name replaces the earlier */
            }
        }
        jk_blank(j);
        if (j->i >= j->n || j->s[j->i] != ':') return 0;
        j->i++;
        jk_blank(j);
        if (j->i >= j->n) return 0;
        uint64_t chosen = 0, deeper = 0;
        for (size_t p = 0; p < j->npaths; p++) {
            if (!(next >> p & 1)) continue;
            if (j->paths[p].depth == depth + 1)
                chosen |= (uint64_t)1 << p;
            else
                deeper |= (uint64_t)1 << p;
        }
        size_t start = j->i;
        int simple = 0;
        unsigned char c = j->s[j->i];
        if (c == '"') {
            int string_plain;
            if (!jk_string(j, &string_plain)) return 0;
            simple = 1; /* escapes are rewritten when the key is written */
        } else if (c == '-' || (c >= '0' && c <= '9')) {
            if (!jk_number(j, &simple)) return 0;
        } else if (c == 't' || c == 'f' || c == 'n') {
            if (!jk_value(j, depth + 1, 0)) return 0;
            simple = 1;
        } else if (c == '{') {
            if (!jk_object(j, depth + 1, deeper)) return 0;
        } else if (!jk_value(j, depth + 1, 0)) {
            return 0;
        }
        for (size_t p = 0; p < j->npaths; p++) {
            if (chosen >> p & 1) {
                j->found[p] = 1;
                j->simple[p] = (unsigned char)simple;
                j->start[p] = start;
                j->end[p] = j->i;
            }
        }
        jk_blank(j);
        if (j->i >= j->n) return 0;
        if (j->s[j->i] == '}') {
            j->i++;
            return 1;
        }
        if (j->s[j->i] != ',') return 0;
        j->i++;
        jk_blank(j);
    }
}

static int jk_value(JkScan *j, size_t depth, uint64_t active)
{
    if (depth > JK_MAX_DEPTH) {
        j->defer = 1;
        return 0;
    }
    jk_blank(j);
    if (j->i >= j->n) return 0;
    unsigned char c = j->s[j->i];
    int ignored;
    switch (c) {
    case '{':
        return jk_object(j, depth, active);
    case '[':
        j->i++;
        jk_blank(j);
        if (j->i < j->n && j->s[j->i] == ']') {
            j->i++;
            return 1;
        }
        for (;;) {
            if (!jk_value(j, depth + 1, 0)) return 0;
            jk_blank(j);
            if (j->i >= j->n) return 0;
            if (j->s[j->i] == ']') {
                j->i++;
                return 1;
            }
            if (j->s[j->i] != ',') return 0;
            j->i++;
        }
    case '"':
        return jk_string(j, &ignored);
    case 't':
        return jk_literal(j, "true");
    case 'f':
        return jk_literal(j, "false");
    case 'n':
        return jk_literal(j, "null");
    case 'N':
    case 'I': /* NaN, Infinity: the standard library takes them */
        j->defer = 1;
        return 0;
    default:
        if (c == '-' || (c >= '0' && c <= '9')) return jk_number(j, &ignored);
        return 0;
    }
}

/* Copy a chosen value: inside a string "\/" becomes "/", the rest stays. */
static size_t jk_copy_value(const unsigned char *s, size_t start, size_t end, unsigned char *out)
{
    size_t o = 0;
    for (size_t k = start; k < end; k++) {
        if (s[k] == '\\') {
            if (s[k + 1] != '/') out[o++] = '\\';
            out[o++] = s[++k];
            continue;
        }
        out[o++] = s[k];
    }
    return o;
}

/* Decide record s[0..n): JK_TEXT (compared as its text), JK_KEY (*out_len bytes of key
 * written to out, which holds cap bytes), or JK_DEFER. Two paths may choose the same
 * value (a path named twice, or "a" beside "a.b"), so the key can be longer than the
 * record: a key that would not fit in cap is deferred, never written past it. */
static int json_key(const unsigned char *s, size_t n, const JkPath *paths,
                    const unsigned char *const *names, const size_t *name_lens, size_t npaths,
                    unsigned char *out, size_t cap, size_t *out_len)
{
    JkScan j;
    j.s = s;
    j.n = n;
    j.i = 0;
    j.paths = paths;
    j.npaths = npaths;
    j.defer = 0;
    memset(j.found, 0, sizeof j.found);
    jk_blank(&j);
    if (j.i == n) return JK_TEXT; /* blank: no JSON at all */
    if (s[j.i] != '{') {
        /* Printable ASCII that cannot start an object: no JSON object for either
         * parser. NUL, a BOM or another encoding might be (the standard library
         * guesses encodings). */
        return (s[j.i] >= 0x20 && s[j.i] < 0x7f) ? JK_TEXT : JK_DEFER;
    }
    for (size_t k = j.i; k < n; k++)
        if (s[k] >= 0x80) return JK_DEFER; /* UTF-8 is checked by the parsers */
    uint64_t all = npaths >= 64 ? ~(uint64_t)0 : (((uint64_t)1 << npaths) - 1);
    int valid = jk_object(&j, 0, all);
    if (j.defer) return JK_DEFER;
    if (valid) {
        jk_blank(&j);
        valid = j.i == n;
    }
    if (!valid) return JK_DEFER; /* invalid JSON: left to the parser to say */
    size_t need = 2; /* the braces */
    for (size_t p = 0; p < npaths; p++) {
        if (!j.found[p]) continue;
        size_t member = name_lens[p] + 4 + (j.end[p] - j.start[p]); /* "name": value, */
        if (member > cap || need > cap - member) return JK_DEFER;
        need += member;
    }
    size_t o = 0;
    out[o++] = '{';
    for (size_t p = 0; p < npaths; p++) { /* paths come sorted by their text */
        if (!j.found[p]) continue;
        if (!j.simple[p]) return JK_DEFER;
        if (o > 1) out[o++] = ',';
        out[o++] = '"';
        memcpy(out + o, names[p], name_lens[p]);
        o += name_lens[p];
        out[o++] = '"';
        out[o++] = ':';
        o += jk_copy_value(s, j.start[p], j.end[p], out + o);
    }
    out[o++] = '}';
    *out_len = o;
    return JK_KEY;
}

/* --json-ignore: a flat object is its members sorted by name, without those named in
 * `drop` (the one-component paths; a longer path can only reach into a nested value,
 * and every nested value is deferred). A nested value, an escaped name or more than
 * JK_MAX_MEMBERS members: JK_DEFER. The key is at most n bytes. */
#define JK_MAX_MEMBERS 256

typedef struct {
    size_t name, name_len, start, end;
} JkMember;

static int jk_names_hold(const unsigned char *const *names, const size_t *lens, size_t count,
                         const unsigned char *name, size_t len)
{
    for (size_t k = 0; k < count; k++)
        if (lens[k] == len && memcmp(names[k], name, len) == 0) return 1;
    return 0;
}

static int json_ignore_key(const unsigned char *s, size_t n, const unsigned char *const *drop,
                           const size_t *drop_lens, size_t ndrop, unsigned char *out,
                           size_t cap, size_t *out_len)
{
    JkScan j;
    memset(&j, 0, sizeof j);
    j.s = s;
    j.n = n;
    jk_blank(&j);
    if (j.i == n) return JK_TEXT;
    if (s[j.i] != '{') return (s[j.i] >= 0x20 && s[j.i] < 0x7f) ? JK_TEXT : JK_DEFER;
    for (size_t k = j.i; k < n; k++)
        if (s[k] >= 0x80) return JK_DEFER;
    JkMember members[JK_MAX_MEMBERS];
    size_t count = 0;
    j.i++;
    jk_blank(&j);
    if (j.i < n && s[j.i] == '}') {
        j.i++;
    } else {
        for (;;) {
            if (j.i >= n || s[j.i] != '"') return JK_DEFER;
            size_t name = j.i + 1;
            int plain;
            if (!jk_string(&j, &plain) || !plain) return JK_DEFER;
            size_t name_len = j.i - 1 - name;
            jk_blank(&j);
            if (j.i >= n || s[j.i] != ':') return JK_DEFER;
            j.i++;
            jk_blank(&j);
            if (j.i >= n) return JK_DEFER;
            size_t start = j.i;
            unsigned char c = s[j.i];
            int simple = 1;
            if (c == '{' || c == '[') return JK_DEFER; /* nested: the parsers sort it */
            if (c == '"') {
                if (!jk_string(&j, &plain)) return JK_DEFER;
            } else if (c == '-' || (c >= '0' && c <= '9')) {
                if (!jk_number(&j, &simple)) return JK_DEFER;
            } else if (!jk_value(&j, 1, 0)) {
                return JK_DEFER;
            }
            if (j.defer || !simple) return JK_DEFER;
            if (!jk_names_hold(drop, drop_lens, ndrop, s + name, name_len)) {
                /* a later member of the same name replaces the earlier */
                size_t m = 0;
                while (m < count && !(members[m].name_len == name_len &&
                                      memcmp(s + members[m].name, s + name, name_len) == 0))
                    m++;
                if (m == count) {
                    if (count == JK_MAX_MEMBERS) return JK_DEFER;
                    count++;
                }
                members[m].name = name;
                members[m].name_len = name_len;
                members[m].start = start;
                members[m].end = j.i;
            }
            jk_blank(&j);
            if (j.i >= n) return JK_DEFER;
            if (s[j.i] == '}') {
                j.i++;
                break;
            }
            if (s[j.i] != ',') return JK_DEFER;
            j.i++;
            jk_blank(&j);
        }
    }
    jk_blank(&j);
    if (j.i != n) return JK_DEFER;
    /* sort by name (insertion sort: objects are small) */
    for (size_t a = 1; a < count; a++) {
        JkMember key = members[a];
        size_t b = a;
        while (b > 0) {
            const JkMember *prev = &members[b - 1];
            size_t common = prev->name_len < key.name_len ? prev->name_len : key.name_len;
            int order = memcmp(s + prev->name, s + key.name, common);
            if (order < 0 || (order == 0 && prev->name_len <= key.name_len)) break;
            members[b] = members[b - 1];
            b--;
        }
        members[b] = key;
    }
    size_t need = 2; /* members are distinct parts of the record: at most n + 2 */
    for (size_t m = 0; m < count; m++) {
        size_t member = members[m].name_len + 4 + (members[m].end - members[m].start);
        if (member > cap || need > cap - member) return JK_DEFER;
        need += member;
    }
    size_t o = 0;
    out[o++] = '{';
    for (size_t m = 0; m < count; m++) {
        if (m) out[o++] = ',';
        out[o++] = '"';
        memcpy(out + o, s + members[m].name, members[m].name_len);
        o += members[m].name_len;
        out[o++] = '"';
        out[o++] = ':';
        o += jk_copy_value(s, members[m].start, members[m].end, out + o);
    }
    out[o++] = '}';
    *out_len = o;
    return JK_KEY;
}

#endif
