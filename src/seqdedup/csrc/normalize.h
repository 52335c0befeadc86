/* --normalize: replace timestamps, uuids, IP addresses, hex ids and numbers in a key by
 * one placeholder per class. Included by _kernel.c; plain C99, no Python.
 *
 * The definition is the regular expressions of seqdedup/normalize.py (the Python
 * engine uses them; the tests compare both on random input). One pass, left to right:
 * at each position the first class that matches (timestamp, uuid, ip, hex, number, of
 * those asked for) replaces its match, and the scan goes on after it; where none
 * matches, one byte is copied. Every pattern is possessive (greedy, never gives back),
 * so each matcher below is a straight scan. Boundaries look at the key's own bytes:
 * the key starts and ends the text.
 */
#ifndef SEQDEDUP_NORMALIZE_H
#define SEQDEDUP_NORMALIZE_H

#include <stddef.h>
#include <string.h>

enum {
    NORM_TIMESTAMP = 1,
    NORM_UUID = 2,
    NORM_IP = 4,
    NORM_HEX = 8,
    NORM_NUMBER = 16,
    NORM_ALL = 31,
};

static inline int nd_digit(unsigned char c) { return c >= '0' && c <= '9'; }
static inline int nd_hex(unsigned char c)
{
    return nd_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}
static inline int nd_alpha(unsigned char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
static inline int nd_alnum(unsigned char c) { return nd_digit(c) || nd_alpha(c); }

/* The byte at i, or 0 past the end (0 is none of the classes' characters). */
static inline unsigned char nd_at(const unsigned char *s, size_t n, size_t i)
{
    return i < n ? s[i] : 0;
}

/* Exactly `count` digits at i? */
static inline int nd_digits_exact(const unsigned char *s, size_t n, size_t i, size_t count)
{
    if (i > n || count > n - i) return 0;
    for (size_t k = 0; k < count; k++)
        if (!nd_digit(s[i + k])) return 0;
    return 1;
}

/* How many digits start at i, at most `most` (possessive {1,most}). */
static inline size_t nd_digits_upto(const unsigned char *s, size_t n, size_t i, size_t most)
{
    size_t k = 0;
    while (k < most && i + k < n && nd_digit(s[i + k])) k++;
    return k;
}

static inline size_t nd_digit_run(const unsigned char *s, size_t n, size_t i)
{
    return nd_digits_upto(s, n, i, (size_t)-1);
}

static int nd_month(const unsigned char *s, size_t n, size_t i)
{
    static const char months[] = "JanFebMarAprMayJunJulAugSepOctNovDec";
    if (i > n || n - i < 3) return 0;
    for (size_t m = 0; m < 12; m++)
        if (memcmp(s + i, months + 3 * m, 3) == 0) return 1;
    return 0;
}

/* (?:[.,]\d+)?+ (or only '.' when comma is 0): the end after it. */
static inline size_t nd_fraction(const unsigned char *s, size_t n, size_t i, int comma)
{
    unsigned char c = nd_at(s, n, i);
    if ((c == '.' || (comma && c == ',')) && nd_digit(nd_at(s, n, i + 1)))
        return i + 1 + nd_digit_run(s, n, i + 1);
    return i;
}

/* ISO 8601: \d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?+)?+
 * (?:Z|[+-]\d{2}(?::?\d{2})?+)?+)?+ , not after or before a digit. */
static size_t nd_iso(const unsigned char *s, size_t n, size_t p)
{
    if (p > 0 && nd_digit(s[p - 1])) return 0;
    if (!(nd_digits_exact(s, n, p, 4) && nd_at(s, n, p + 4) == '-' &&
          nd_digits_exact(s, n, p + 5, 2) && nd_at(s, n, p + 7) == '-' &&
          nd_digits_exact(s, n, p + 8, 2)))
        return 0;
    size_t q = p + 10;
    unsigned char sep = nd_at(s, n, q);
    if ((sep == 'T' || sep == ' ') && nd_digits_exact(s, n, q + 1, 2) &&
        nd_at(s, n, q + 3) == ':' && nd_digits_exact(s, n, q + 4, 2)) {
        q += 6;
        if (nd_at(s, n, q) == ':' && nd_digits_exact(s, n, q + 1, 2)) q = nd_fraction(s, n, q + 3, 1);
        unsigned char z = nd_at(s, n, q);
        if (z == 'Z') {
            q += 1;
        } else if ((z == '+' || z == '-') && nd_digits_exact(s, n, q + 1, 2)) {
            q += 3;
            if (nd_at(s, n, q) == ':' && nd_digits_exact(s, n, q + 1, 2))
                q += 3;
            else if (nd_digits_exact(s, n, q, 2))
                q += 2;
        }
    }
    return nd_digit(nd_at(s, n, q)) ? 0 : q;
}

/* Common log format: \d{2}/Mon/\d{4}:\d{2}:\d{2}:\d{2}(?: [+-]\d{4})?+ , not after or
 * before a digit. */
static size_t nd_clf(const unsigned char *s, size_t n, size_t p)
{
    if (p > 0 && nd_digit(s[p - 1])) return 0;
    if (!(nd_digits_exact(s, n, p, 2) && nd_at(s, n, p + 2) == '/' && nd_month(s, n, p + 3) &&
          nd_at(s, n, p + 6) == '/' && nd_digits_exact(s, n, p + 7, 4) &&
          nd_at(s, n, p + 11) == ':' && nd_digits_exact(s, n, p + 12, 2) &&
          nd_at(s, n, p + 14) == ':' && nd_digits_exact(s, n, p + 15, 2) &&
          nd_at(s, n, p + 17) == ':' && nd_digits_exact(s, n, p + 18, 2)))
        return 0;
    size_t q = p + 20;
    unsigned char sign = nd_at(s, n, q + 1);
    if (nd_at(s, n, q) == ' ' && (sign == '+' || sign == '-') && nd_digits_exact(s, n, q + 2, 4))
        q += 6;
    return nd_digit(nd_at(s, n, q)) ? 0 : q;
}

/* syslog: Mon {1,2}+\d{1,2}+ \d{2}:\d{2}:\d{2}(?:\.\d+)?+ , not after a letter, not
 * before a digit. */
static size_t nd_syslog(const unsigned char *s, size_t n, size_t p)
{
    if (p > 0 && nd_alpha(s[p - 1])) return 0;
    if (!nd_month(s, n, p)) return 0;
    size_t q = p + 3, spaces = 0;
    while (spaces < 2 && nd_at(s, n, q) == ' ') q++, spaces++;
    size_t day = nd_digits_upto(s, n, q, 2);
    if (!spaces || !day) return 0;
    q += day;
    if (!(nd_at(s, n, q) == ' ' && nd_digits_exact(s, n, q + 1, 2) && nd_at(s, n, q + 3) == ':' &&
          nd_digits_exact(s, n, q + 4, 2) && nd_at(s, n, q + 6) == ':' &&
          nd_digits_exact(s, n, q + 7, 2)))
        return 0;
    q = nd_fraction(s, n, q + 9, 0);
    return nd_digit(nd_at(s, n, q)) ? 0 : q;
}

/* A time of day: \d{1,2}+:\d{2}:\d{2}(?:[.,]\d+)?+ , not after or before a digit. */
static size_t nd_time(const unsigned char *s, size_t n, size_t p)
{
    if (p > 0 && nd_digit(s[p - 1])) return 0;
    size_t hour = nd_digits_upto(s, n, p, 2);
    if (!hour) return 0;
    size_t q = p + hour;
    if (!(nd_at(s, n, q) == ':' && nd_digits_exact(s, n, q + 1, 2) && nd_at(s, n, q + 3) == ':' &&
          nd_digits_exact(s, n, q + 4, 2)))
        return 0;
    q = nd_fraction(s, n, q + 6, 1);
    return nd_digit(nd_at(s, n, q)) ? 0 : q;
}

/* \h{count} exactly at i? */
static inline int nd_hex_exact(const unsigned char *s, size_t n, size_t i, size_t count)
{
    if (i > n || count > n - i) return 0;
    for (size_t k = 0; k < count; k++)
        if (!nd_hex(s[i + k])) return 0;
    return 1;
}

/* 8-4-4-4-12 hex digits, not after or before a letter or digit. */
static size_t nd_uuid(const unsigned char *s, size_t n, size_t p)
{
    if (p > 0 && nd_alnum(s[p - 1])) return 0;
    static const size_t groups[5] = {8, 4, 4, 4, 12};
    size_t q = p;
    for (size_t g = 0; g < 5; g++) {
        if (g && nd_at(s, n, q++) != '-') return 0;
        if (!nd_hex_exact(s, n, q, groups[g])) return 0;
        q += groups[g];
    }
    return nd_alnum(nd_at(s, n, q)) ? 0 : q;
}

/* IPv4: four groups of {1,3}+ digits joined by '.', an optional :port ({1,5}+
 * digits); not after a letter, digit or '.', not before a letter, digit or ".digit". */
static size_t nd_ipv4(const unsigned char *s, size_t n, size_t p)
{
    if (p > 0 && (nd_alnum(s[p - 1]) || s[p - 1] == '.')) return 0;
    size_t q = p;
    for (int g = 0; g < 4; g++) {
        if (g && nd_at(s, n, q++) != '.') return 0;
        size_t len = nd_digits_upto(s, n, q, 3);
        if (!len) return 0;
        q += len;
    }
    if (nd_at(s, n, q) == ':') {
        size_t port = nd_digits_upto(s, n, q + 1, 5);
        if (port) q += 1 + port;
    }
    unsigned char c = nd_at(s, n, q);
    if (nd_alnum(c) || (c == '.' && nd_digit(nd_at(s, n, q + 1)))) return 0;
    return q;
}

/* IPv6: the longest run of hex digits and ':' from p, when it is a full address
 * (8 groups of 1-4 hex digits) or a compressed one (one "::", at most 7 groups) and
 * holds a digit; not after a letter, digit, ':' or '.', not before a letter, digit or
 * '.'. */
static size_t nd_ipv6(const unsigned char *s, size_t n, size_t p)
{
    if (p > 0 && (nd_alnum(s[p - 1]) || s[p - 1] == ':' || s[p - 1] == '.')) return 0;
    /* Its first group (at most 4 hex digits, none before "::") ends at a ':': a word
     * of letters or a long hex id is passed over without scanning all of it. */
    size_t head = 0;
    while (head < 4 && p + head < n && nd_hex(s[p + head])) head++;
    if (nd_at(s, n, p + head) != ':') return 0;
    size_t q = p;
    int digit = 0;
    while (q < n && (nd_hex(s[q]) || s[q] == ':')) digit |= nd_digit(s[q++]);
    unsigned char after = nd_at(s, n, q);
    if (!digit || nd_alnum(after) || after == '.') return 0;
    /* groups between single colons; one "::" at most */
    size_t groups = 0, run = 0;
    int compressed = 0;
    for (size_t i = p; i < q; i++) {
        if (s[i] != ':') {
            if (++run > 4) return 0;
            continue;
        }
        if (run) {
            groups++;
            run = 0;
        }
        if (i + 1 < q && s[i + 1] == ':') { /* "::" */
            if (compressed || (i + 2 < q && s[i + 2] == ':')) return 0;
            compressed = 1;
            i++;
        } else if (i == p || i + 1 == q || s[i - 1] == ':') {
            return 0; /* a single ':' at either end, or after "::" with no group */
        }
    }
    if (run) groups++;
    if (compressed ? groups > 7 : groups != 8) return 0;
    return q;
}

/* 0x-prefixed hex, or a run of 8 or more hex digits holding a digit; not after or
 * before a letter or digit. */
static size_t nd_hexid(const unsigned char *s, size_t n, size_t p)
{
    if (p > 0 && nd_alnum(s[p - 1])) return 0;
    size_t q = p;
    if (s[p] == '0' && (nd_at(s, n, p + 1) == 'x' || nd_at(s, n, p + 1) == 'X') &&
        nd_hex(nd_at(s, n, p + 2))) {
        q = p + 2;
        while (q < n && nd_hex(s[q])) q++;
        return nd_alnum(nd_at(s, n, q)) ? 0 : q;
    }
    int digit = 0;
    while (q < n && nd_hex(s[q])) digit |= nd_digit(s[q++]);
    if (q - p < 8 || !digit || nd_alnum(nd_at(s, n, q))) return 0;
    return q;
}

/* A decimal integer or decimal (\d+(?:\.\d+)?+), not after a letter, digit or '.',
 * not before ".digit" (so 1.2.3 is no number). */
static size_t nd_number(const unsigned char *s, size_t n, size_t p)
{
    if (p > 0 && (nd_alnum(s[p - 1]) || s[p - 1] == '.')) return 0;
    size_t q = p + nd_digit_run(s, n, p);
    if (q == p) return 0;
    if (nd_at(s, n, q) == '.' && nd_digit(nd_at(s, n, q + 1))) q = q + 1 + nd_digit_run(s, n, q + 1);
    if (nd_at(s, n, q) == '.' && nd_digit(nd_at(s, n, q + 1))) return 0;
    return q;
}

/* Which bytes can start a match of these classes (made once per set of classes; the
 * same every time, so a second making changes nothing): most bytes are passed over at
 * once. */
static const unsigned char *nd_start_table(unsigned classes)
{
    static unsigned char tables[NORM_ALL + 1][256];
    static unsigned char ready[NORM_ALL + 1];
    classes &= NORM_ALL;
    unsigned char *table = tables[classes];
    if (!ready[classes]) {
        for (int c = 0; c < 256; c++) {
            unsigned char b = (unsigned char)c;
            int digit = nd_digit(b), hex = nd_hex(b);
            table[c] = (unsigned char)(((classes & NORM_TIMESTAMP) && (digit || (b >= 'A' && b <= 'S'))) ||
                                       ((classes & (NORM_UUID | NORM_HEX)) && hex) ||
                                       ((classes & NORM_IP) && (hex || b == ':')) ||
                                       ((classes & NORM_NUMBER) && digit));
        }
        ready[classes] = 1;
    }
    return table;
}

/* Whether a match of the classes may start at s[p]: its byte can start one, and inside
 * a word only a timestamp can start (after a letter one that starts with a digit, after
 * a digit a syslog month); every other class needs a word boundary before it. */
static inline int nd_may_start(const unsigned char *s, size_t p, unsigned classes,
                               const unsigned char *can_start)
{
    unsigned char c = s[p];
    if (!can_start[c]) return 0;
    if (p > 0 && nd_alnum(s[p - 1]))
        return (classes & NORM_TIMESTAMP) &&
               (nd_alpha(s[p - 1]) ? nd_digit(c) : (c >= 'A' && c <= 'S'));
    return 1;
}

/* The end of the match of the classes that starts at s[p] (0: none), the first class in
 * the order timestamp, uuid, ip, hex, number; its placeholder in *placeholder. */
static inline size_t nd_match(const unsigned char *s, size_t n, size_t p, unsigned classes,
                              const char **placeholder)
{
    unsigned char c = s[p];
    size_t end = 0;
    /* Cheap first-byte tests keep the common byte (a letter, a space) fast. */
    if (classes & NORM_TIMESTAMP) {
        if (nd_digit(c)) end = nd_iso(s, n, p);
        if (!end && nd_digit(c)) end = nd_clf(s, n, p);
        if (!end && c >= 'A' && c <= 'S') end = nd_syslog(s, n, p);
        if (!end && nd_digit(c)) end = nd_time(s, n, p);
        if (end) *placeholder = "<TIMESTAMP>";
    }
    if (!end && (classes & NORM_UUID) && nd_hex(c)) {
        end = nd_uuid(s, n, p);
        if (end) *placeholder = "<UUID>";
    }
    if (!end && (classes & NORM_IP)) {
        if (nd_digit(c)) end = nd_ipv4(s, n, p);
        if (!end && (nd_hex(c) || c == ':')) end = nd_ipv6(s, n, p);
        if (end) *placeholder = "<IP>";
    }
    if (!end && (classes & NORM_HEX) && nd_hex(c)) {
        end = nd_hexid(s, n, p);
        if (end) *placeholder = "<HEX>";
    }
    if (!end && (classes & NORM_NUMBER) && nd_digit(c)) {
        end = nd_number(s, n, p);
        if (end) *placeholder = "<NUMBER>";
    }
    return end;
}

/* The first match of the classes in s[0..n), as the normalising scan finds it: its
 * start in *start and its end returned (0: none). */
static size_t nd_first_match(const unsigned char *s, size_t n, unsigned classes, size_t *start)
{
    const unsigned char *can_start = nd_start_table(classes);
    const char *placeholder = NULL;
    for (size_t p = 0; p < n; p++) {
        if (!nd_may_start(s, p, classes, can_start)) continue;
        size_t end = nd_match(s, n, p, classes, &placeholder);
        if (end) {
            *start = p;
            return end;
        }
    }
    return 0;
}

/* Normalise s[0..n) into the sink (KeySink and sink_put come from the includer):
 * literal stretches go in whole, each match as its placeholder. */
static void normalize_key(const unsigned char *s, size_t n, unsigned classes, KeySink *sink)
{
    const unsigned char *can_start = nd_start_table(classes);
    size_t p = 0, literal = 0;
    while (p < n) {
        if (!nd_may_start(s, p, classes, can_start)) {
            p++;
            continue;
        }
        const char *placeholder = NULL;
        size_t end = nd_match(s, n, p, classes, &placeholder);
        if (end) {
            sink_put(sink, s + literal, p - literal);
            sink_put(sink, (const unsigned char *)placeholder, strlen(placeholder));
            p = literal = end;
        } else {
            p++;
        }
    }
    sink_put(sink, s + literal, n - literal);
}

#endif
