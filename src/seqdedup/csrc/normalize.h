/* --normalize: replace timestamps, uuids, IP addresses, hex ids, numbers, paths and quoted
 * values in a key by one placeholder per class. Included by _kernel.c; plain C99, no Python.
 *
 * The definition is the regular expressions of seqdedup/normalize.py (the Python
 * engine uses them; the tests compare both on random input). One pass, left to right:
 * at each position the first class that matches (timestamp, uuid, ip, hex, number, path,
 * quoted, of those asked for) replaces its match, and the scan goes on after it; where none
 * matches, one byte is copied. Every pattern is possessive (greedy, never gives back),
 * so each matcher below is a straight scan. Boundaries look at the key's own bytes:
 * the key starts and ends the text.
 */
#ifndef SEQDEDUP_NORMALIZE_H
#define SEQDEDUP_NORMALIZE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

enum {
    NORM_TIMESTAMP = 1,
    NORM_UUID = 2,
    NORM_IP = 4,
    NORM_HEX = 8,
    NORM_NUMBER = 16,
    NORM_PATH = 32,
    NORM_QUOTED = 64,
    NORM_CLASSES = 127, /* every class ("all" of --normalize is the first five) */
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

/* One of `count` three-letter names (concatenated in `names`) at i? */
static int nd_name(const unsigned char *s, size_t n, size_t i, const char *names, size_t count)
{
    if (i > n || n - i < 3) return 0;
    for (size_t m = 0; m < count; m++)
        if (memcmp(s + i, names + 3 * m, 3) == 0) return 1;
    return 0;
}

static int nd_month(const unsigned char *s, size_t n, size_t i)
{
    return nd_name(s, n, i, "JanFebMarAprMayJunJulAugSepOctNovDec", 12);
}

static int nd_weekday(const unsigned char *s, size_t n, size_t i)
{
    return nd_name(s, n, i, "MonTueWedThuFriSatSun", 7);
}

/* Two digits at i whose value lies in [low, high] (a month, a day, an hour ...)? */
static int nd_two_in(const unsigned char *s, size_t n, size_t i, int low, int high)
{
    if (!nd_digits_exact(s, n, i, 2)) return 0;
    int value = (s[i] - '0') * 10 + (s[i + 1] - '0');
    return value >= low && value <= high;
}


/* (?:[.,]\d+)?+ (or only '.' when comma is 0): the end after it. */
static inline size_t nd_fraction(const unsigned char *s, size_t n, size_t i, int comma)
{
    unsigned char c = nd_at(s, n, i);
    if ((c == '.' || (comma && c == ',')) && nd_digit(nd_at(s, n, i + 1)))
        return i + 1 + nd_digit_run(s, n, i + 1);
    return i;
}

/* \d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?+)?+ at i (ISO's clock: seconds optional): its end, or 0. */
static size_t nd_clock(const unsigned char *s, size_t n, size_t i)
{
    if (!(nd_digits_exact(s, n, i, 2) && nd_at(s, n, i + 2) == ':' && nd_digits_exact(s, n, i + 3, 2)))
        return 0;
    size_t q = i + 5;
    if (nd_at(s, n, q) == ':' && nd_digits_exact(s, n, q + 1, 2)) q = nd_fraction(s, n, q + 3, 1);
    return q;
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
    size_t q = p + 10, clock;
    unsigned char sep = nd_at(s, n, q);
    if ((sep == 'T' || sep == ' ') && (clock = nd_clock(s, n, q + 1)) != 0) {
        q = clock;
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
    } else if (sep == '-' && nd_digits_exact(s, n, q + 1, 2) && nd_at(s, n, q + 3) == '.' &&
               nd_digits_exact(s, n, q + 4, 2) && nd_at(s, n, q + 6) == '.' &&
               nd_digits_exact(s, n, q + 7, 2)) { /* DB2: -15.42.50.675872 */
        q = nd_fraction(s, n, q + 9, 0);
    }
    return nd_digit(nd_at(s, n, q)) ? 0 : q;
}

/* \d{4}([/.])\d{2}\1\d{2}(?:[T ]clock)?+ , not after a digit, not before a digit or
 * [-/.] and a digit (Go's log: 2009/11/10 23:00:00; 2005.06.03). */
static size_t nd_ymd(const unsigned char *s, size_t n, size_t p)
{
    if (p > 0 && nd_digit(s[p - 1])) return 0;
    unsigned char sep = nd_at(s, n, p + 4);
    if (!((sep == '/' || sep == '.') && nd_digits_exact(s, n, p, 4) &&
          nd_digits_exact(s, n, p + 5, 2) && nd_at(s, n, p + 7) == sep &&
          nd_digits_exact(s, n, p + 8, 2)))
        return 0;
    size_t q = p + 10, clock;
    unsigned char t = nd_at(s, n, q);
    if ((t == 'T' || t == ' ') && (clock = nd_clock(s, n, q + 1)) != 0) q = clock;
    unsigned char after = nd_at(s, n, q);
    if (nd_digit(after)) return 0;
    if ((after == '-' || after == '/' || after == '.') && nd_digit(nd_at(s, n, q + 1))) return 0;
    return q; /* (2026.12.06.1 is a version, 2026/12/06/x a path) */
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
    size_t m = p;
    if (nd_weekday(s, n, p) && nd_at(s, n, p + 3) == ' ') m = p + 4; /* (possessive) */
    if (!nd_month(s, n, m)) return 0;
    size_t q = m + 3, spaces = 0;
    while (spaces < 2 && nd_at(s, n, q) == ' ') q++, spaces++;
    size_t day = nd_digits_upto(s, n, q, 2);
    if (!spaces || !day) return 0;
    q += day;
    if (!(nd_at(s, n, q) == ' ' && nd_digits_exact(s, n, q + 1, 2) && nd_at(s, n, q + 3) == ':' &&
          nd_digits_exact(s, n, q + 4, 2) && nd_at(s, n, q + 6) == ':' &&
          nd_digits_exact(s, n, q + 7, 2)))
        return 0;
    q = nd_fraction(s, n, q + 9, 0);
    if (nd_at(s, n, q) == ' ' && nd_digits_exact(s, n, q + 1, 4) && !nd_digit(nd_at(s, n, q + 5)))
        q += 5; /* ctime's year */
    return nd_digit(nd_at(s, n, q)) ? 0 : q;
}

/* HH:MM:SS in range at i (hours 00-23, minutes and seconds 00-59)? */
static int nd_hms(const unsigned char *s, size_t n, size_t i, unsigned char colon)
{
    size_t step = colon ? 3 : 2;
    return nd_two_in(s, n, i, 0, 23) && (!colon || nd_at(s, n, i + 2) == colon) &&
           nd_two_in(s, n, i + step, 0, 59) && (!colon || nd_at(s, n, i + step + 2) == colon) &&
           nd_two_in(s, n, i + 2 * step, 0, 59);
}

/* At the key's start only: Go's glog (I1206 03:27:25.123456), 20171223-22:15:29:606,
 * 081109 203615, epoch seconds or milliseconds; an epoch also beside a date. */
static size_t nd_glog(const unsigned char *s, size_t n, size_t p)
{
    unsigned char c = nd_at(s, n, p);
    if (p != 0 || !(c == 'I' || c == 'W' || c == 'E' || c == 'F')) return 0;
    if (!(nd_two_in(s, n, 1, 1, 12) && nd_two_in(s, n, 3, 1, 31) && nd_at(s, n, 5) == ' ' &&
          nd_hms(s, n, 6, ':')))
        return 0;
    size_t q = nd_fraction(s, n, 14, 0);
    return nd_digit(nd_at(s, n, q)) ? 0 : q;
}

static size_t nd_compact(const unsigned char *s, size_t n, size_t p)
{
    if (p != 0 || !(nd_digits_exact(s, n, 0, 4) && nd_two_in(s, n, 4, 1, 12) &&
                    nd_two_in(s, n, 6, 1, 31) && nd_at(s, n, 8) == '-' && nd_hms(s, n, 9, ':')))
        return 0;
    size_t q = 17;
    if (nd_at(s, n, q) == ':' && nd_digits_exact(s, n, q + 1, 3)) q += 4;
    return nd_digit(nd_at(s, n, q)) ? 0 : q;
}

static size_t nd_yymmdd(const unsigned char *s, size_t n, size_t p)
{
    if (p != 0 || !(nd_digits_exact(s, n, 0, 2) && nd_two_in(s, n, 2, 1, 12) &&
                    nd_two_in(s, n, 4, 1, 31) && nd_at(s, n, 6) == ' ' && nd_hms(s, n, 7, 0)))
        return 0;
    return nd_digit(nd_at(s, n, 13)) ? 0 : 13;
}

/* [1-3]\d{9}(?:\d{3})?+ , not before a digit: at the key's start, or (not after a letter,
 * digit or '.') followed by a space and a date (\d{4}[-/.]\d{2}[-/.]\d{2}, no digit after). */
static size_t nd_epoch(const unsigned char *s, size_t n, size_t p)
{
    unsigned char c = nd_at(s, n, p);
    if (!(c >= '1' && c <= '3' && nd_digits_exact(s, n, p + 1, 9))) return 0;
    size_t q = p + 10;
    if (nd_digits_exact(s, n, q, 3)) q += 3;
    if (p == 0) return nd_digit(nd_at(s, n, q)) ? 0 : q;
    unsigned char before = s[p - 1];
    if (nd_alnum(before) || before == '.') return 0;
    unsigned char a = nd_at(s, n, q + 5), b = nd_at(s, n, q + 8);
    int date = nd_at(s, n, q) == ' ' && nd_digits_exact(s, n, q + 1, 4) &&
               (a == '-' || a == '/' || a == '.') && nd_digits_exact(s, n, q + 6, 2) &&
               (b == '-' || b == '/' || b == '.') && nd_digits_exact(s, n, q + 9, 2) &&
               !nd_digit(nd_at(s, n, q + 11));
    return date ? q : 0;
}

/* A short date beside a time: \d{2}([-/.])\d{2}(?:\1\d{2})?+ \d{1,2}+:\d{2}:\d{2}(?:[.,]\d+)?+ ,
 * not after or before a digit (10.30 16:49:06, 17/06/09 20:10:40, 03-17 16:13:38.811). */
static size_t nd_short_date(const unsigned char *s, size_t n, size_t p)
{
    if (p > 0 && nd_digit(s[p - 1])) return 0;
    unsigned char sep = nd_at(s, n, p + 2);
    if (!((sep == '-' || sep == '/' || sep == '.') && nd_digits_exact(s, n, p, 2) &&
          nd_digits_exact(s, n, p + 3, 2)))
        return 0;
    size_t q = p + 5;
    if (nd_at(s, n, q) == sep && nd_digits_exact(s, n, q + 1, 2)) q += 3;
    if (nd_at(s, n, q) != ' ') return 0;
    q += 1;
    size_t hour = nd_digits_upto(s, n, q, 2);
    if (!hour) return 0;
    q += hour;
    if (!(nd_at(s, n, q) == ':' && nd_digits_exact(s, n, q + 1, 2) && nd_at(s, n, q + 3) == ':' &&
          nd_digits_exact(s, n, q + 4, 2)))
        return 0;
    q = nd_fraction(s, n, q + 6, 1);
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

/* A path's byte: a letter, a digit or one of ._~+@%-/ */
static inline int nd_path_byte(unsigned char c)
{
    return nd_alnum(c) || (c != 0 && strchr("._~+@%-/", c) != NULL);
}

/* A path: '/' and a run of path bytes holding a letter or digit, not after a path byte
 * (/var/log/app.log, the //host/x of a URL; not the /24 of 10.0.0.0/24 nor a lone /). */
static size_t nd_path(const unsigned char *s, size_t n, size_t p)
{
    if (p > 0 && nd_path_byte(s[p - 1])) return 0;
    size_t q = p + 1;
    int named = 0;
    while (q < n && nd_path_byte(s[q])) named |= nd_alnum(s[q++]);
    return named ? q : 0;
}

/* A quoted value: "..." or '...' on one line, opening at the key's start or after '=',
 * ':', a space or a tab (so a JSON object's names stay, its string values do not),
 * closed by the first same quote, not followed by a letter or digit. */
static size_t nd_quoted(const unsigned char *s, size_t n, size_t p)
{
    if (p > 0 && !(s[p - 1] == '=' || s[p - 1] == ':' || s[p - 1] == ' ' || s[p - 1] == '\t'))
        return 0;
    unsigned char quote = s[p];
    size_t q = p + 1;
    while (q < n && s[q] != quote && s[q] != '\n') q++;
    if (q >= n || s[q] != quote || nd_alnum(nd_at(s, n, q + 1))) return 0;
    return q + 1;
}

/* A byte's kind as the byte before a start: 0 none of the below, 1 a letter, 2 a digit. */
static inline unsigned nd_kind(unsigned char c) { return nd_alpha(c) ? 1u : nd_digit(c) ? 2u : 0u; }

/* Whether a match of the classes may start at a byte, by the kind of the byte before it
 * (row 0 also at the key's start) and the byte: its byte can start one, and inside a
 * word only a timestamp can start (after a letter one that starts with a digit, after
 * a digit a syslog month or weekday); every other class needs a word boundary before it. Made
 * once per set of classes (the same every time, so a second making changes nothing):
 * the scan then costs two lookups a byte. */
static const unsigned char *nd_start_table(unsigned classes)
{
    static unsigned char tables[NORM_CLASSES + 1][3 * 256 + 256];
    static unsigned char ready[NORM_CLASSES + 1];
    classes &= NORM_CLASSES;
    unsigned char *table = tables[classes];
    if (!ready[classes]) {
        for (int c = 0; c < 256; c++) {
            unsigned char b = (unsigned char)c;
            int digit = nd_digit(b), hex = nd_hex(b), month = b >= 'A' && b <= 'W';
            int stamp = (classes & NORM_TIMESTAMP) != 0;
            table[c] = (unsigned char)((stamp && (digit || month)) ||
                                       ((classes & (NORM_UUID | NORM_HEX)) && hex) ||
                                       ((classes & NORM_IP) && (hex || b == ':')) ||
                                       ((classes & NORM_NUMBER) && digit) ||
                                       ((classes & NORM_PATH) && b == '/') ||
                                       ((classes & NORM_QUOTED) && (b == '"' || b == '\'')));
            table[256 + c] = (unsigned char)(stamp && digit);  /* after a letter */
            table[512 + c] = (unsigned char)(stamp && month);  /* after a digit */
            table[768 + c] = (unsigned char)nd_kind(b);
        }
        ready[classes] = 1;
    }
    return table;
}

/* Which of s[p .. p+64) may start a match (bit k: s[p+k]; see nd_start_table), found
 * without a branch per byte: whether a byte starts a match is data the branch predictor
 * cannot learn, and a mispredicted branch a byte was most of the scan's time. */
static inline uint64_t nd_candidates(const unsigned char *s, size_t n, size_t p,
                                     const unsigned char *table)
{
    size_t count = n - p < 64 ? n - p : 64;
    uint64_t bits = 0;
    for (size_t k = 0; k < count; k++) {
        unsigned kind = p + k > 0 ? table[768 + s[p + k - 1]] : 0;
        bits |= (uint64_t)table[256 * kind + s[p + k]] << k;
    }
    return bits;
}

static inline unsigned nd_lowest_bit(uint64_t bits) /* bits != 0 */
{
#if defined(__GNUC__) || defined(__clang__)
    return (unsigned)__builtin_ctzll(bits);
#else
    unsigned k = 0;
    while (!(bits & 1)) bits >>= 1, k++;
    return k;
#endif
}

/* The end of the match of the classes that starts at s[p] (0: none), the first class in
 * the order timestamp, uuid, ip, hex, number, path, quoted; its placeholder in
 * *placeholder. */
static inline size_t nd_match(const unsigned char *s, size_t n, size_t p, unsigned classes,
                              const char **placeholder)
{
    unsigned char c = s[p];
    size_t end = 0;
    /* Each class begins with a fixed shape: so many digits (or hex digits) and then a
     * given byte. The runs of digits and of hex digits at p (counted to 9: no shape
     * needs more) and the bytes after them say which classes can match here; only
     * those are tried ("288ms" tries only a number, a hex id only a hex id). */
    size_t digits = 0, hex;
    while (digits < 9 && p + digits < n && nd_digit(s[p + digits])) digits++;
    for (hex = digits; hex < 9 && p + hex < n && nd_hex(s[p + hex]); hex++) continue;
    unsigned char after_digits = nd_at(s, n, p + digits), after_hex = nd_at(s, n, p + hex);
    if (classes & NORM_TIMESTAMP) { /* (in normalize.py's order) */
        int dash = after_digits == '-', dot = after_digits == '.', slash = after_digits == '/';
        if (digits == 4 && dash) end = nd_iso(s, n, p);
        if (!end && digits == 4 && (slash || dot)) end = nd_ymd(s, n, p);
        if (!end && digits == 2 && slash) end = nd_clf(s, n, p);
        if (!end && c >= 'A' && c <= 'W') end = nd_syslog(s, n, p);
        if (!end && p == 0 && c >= 'A' && c <= 'W') end = nd_glog(s, n, p);
        if (!end && p == 0 && digits == 8 && dash) end = nd_compact(s, n, p);
        if (!end && p == 0 && digits == 6 && after_digits == ' ') end = nd_yymmdd(s, n, p);
        if (!end && digits == 9) end = nd_epoch(s, n, p);
        if (!end && digits == 2 && (dash || dot || slash)) end = nd_short_date(s, n, p);
        if (!end && (digits == 1 || digits == 2) && after_digits == ':') end = nd_time(s, n, p);
        if (end) *placeholder = "<TIMESTAMP>";
    }
    if (!end && (classes & NORM_UUID) && hex == 8 && after_hex == '-') {
        end = nd_uuid(s, n, p);
        if (end) *placeholder = "<UUID>";
    }
    if (!end && (classes & NORM_IP)) {
        if (digits >= 1 && digits <= 3 && after_digits == '.') end = nd_ipv4(s, n, p);
        if (!end && hex <= 4 && after_hex == ':') end = nd_ipv6(s, n, p);
        if (end) *placeholder = "<IP>";
    }
    if (!end && (classes & NORM_HEX) &&
        (hex >= 8 || (c == '0' && (nd_at(s, n, p + 1) | 0x20) == 'x'))) {
        end = nd_hexid(s, n, p);
        if (end) *placeholder = "<HEX>";
    }
    if (!end && (classes & NORM_NUMBER) && digits) {
        end = nd_number(s, n, p);
        if (end) *placeholder = "<NUMBER>";
    }
    if (!end && (classes & NORM_PATH) && c == '/') {
        end = nd_path(s, n, p);
        if (end) *placeholder = "<PATH>";
    }
    if (!end && (classes & NORM_QUOTED) && (c == '"' || c == '\'')) {
        end = nd_quoted(s, n, p);
        if (end) *placeholder = "<QUOTED>";
    }
    return end;
}

/* Where a scan stands: the block of 64 bytes from `base` and its candidates not yet
 * tried (the candidates do not change with the matches: they look at the text's own
 * bytes, so one block serves every match inside it). */
typedef struct {
    size_t base;
    uint64_t bits;
} NdCursor;

/* The next match of the classes at or after `from` (>= where the cursor was last left):
 * its start in *start and its placeholder in *placeholder, its end returned (0: none). */
static size_t nd_next_match(const unsigned char *s, size_t n, size_t from, unsigned classes,
                            NdCursor *cursor, size_t *start, const char **placeholder)
{
    const unsigned char *table = nd_start_table(classes);
    if (from >= cursor->base + 64) { /* (also the first call: base + 64 <= from) */
        cursor->base = from;
        cursor->bits = from < n ? nd_candidates(s, n, from, table) : 0;
    } else if (from > cursor->base) { /* candidates before `from` are passed */
        cursor->bits &= ~(uint64_t)0 << (from - cursor->base);
    }
    for (;;) {
        for (; cursor->bits; cursor->bits &= cursor->bits - 1) {
            size_t at = cursor->base + nd_lowest_bit(cursor->bits);
            size_t end = nd_match(s, n, at, classes, placeholder);
            if (end) {
                *start = at;
                return end;
            }
        }
        if (cursor->base + 64 >= n) return 0;
        cursor->base += 64;
        cursor->bits = nd_candidates(s, n, cursor->base, table);
    }
}

/* The first match of the classes in s[0..n), as the normalising scan finds it: its
 * start in *start and its end returned (0: none). */
static size_t nd_first_match(const unsigned char *s, size_t n, unsigned classes, size_t *start)
{
    const char *placeholder = NULL;
    NdCursor cursor = {0, 0};
    cursor.bits = n ? nd_candidates(s, n, 0, nd_start_table(classes)) : 0;
    return nd_next_match(s, n, 0, classes, &cursor, start, &placeholder);
}

/* Normalise s[0..n) into the sink (KeySink and sink_put come from the includer):
 * literal stretches go in whole, each match as its placeholder; the scan goes on after
 * a match (a match is never empty). */
static void normalize_key(const unsigned char *s, size_t n, unsigned classes, KeySink *sink)
{
    size_t literal = 0, start = 0, end;
    const char *placeholder = NULL;
    NdCursor cursor = {0, 0};
    cursor.bits = n ? nd_candidates(s, n, 0, nd_start_table(classes)) : 0;
    while ((end = nd_next_match(s, n, literal, classes, &cursor, &start, &placeholder)) != 0) {
        sink_put(sink, s + literal, start - literal);
        sink_put(sink, (const unsigned char *)placeholder, strlen(placeholder));
        literal = end;
    }
    sink_put(sink, s + literal, n - literal);
}

#endif
