/* --normalize's timestamp class, as straight scans of the patterns of
 * seqdedup/config/normalize.py (ISO 8601, dates with slashes or dots, common log format,
 * syslog, glog, compact dates, epochs, short dates, times of day), and the byte helpers
 * every class's scan uses. Included by normalize.h (which holds the other classes and
 * the scan); plain C99, no Python. Each matcher takes the text s[0..n) and a start p and
 * returns the end of its match, or 0. */
#ifndef SEQDEDUP_TIMESTAMPS_H
#define SEQDEDUP_TIMESTAMPS_H

#include <stddef.h>
#include <string.h>

/* Each byte's classes, one look-up where a chain of compares would be (the scans test
 * them byte by byte): a digit, a hex digit, a letter, a path's byte (a letter, a digit
 * or one of ._~+@%-/). Made by the compiler: no table to fill at run time. */
enum { ND_DIGIT = 1, ND_HEXDIGIT = 2, ND_LETTER = 4, ND_PATHBYTE = 8 };
#define ND_IS_DIGIT(c) ((c) >= '0' && (c) <= '9')
#define ND_IS_LETTER(c) (((c) >= 'a' && (c) <= 'z') || ((c) >= 'A' && (c) <= 'Z'))
#define ND_CLASS(c)                                                                             \
    ((ND_IS_DIGIT(c) ? ND_DIGIT : 0) |                                                          \
     (ND_IS_DIGIT(c) || ((c) >= 'a' && (c) <= 'f') || ((c) >= 'A' && (c) <= 'F') ? ND_HEXDIGIT  \
                                                                                   : 0) |      \
     (ND_IS_LETTER(c) ? ND_LETTER : 0) |                                                        \
     (ND_IS_DIGIT(c) || ND_IS_LETTER(c) || (c) == '.' || (c) == '_' || (c) == '~' ||            \
              (c) == '+' || (c) == '@' || (c) == '%' || (c) == '-' || (c) == '/'                \
          ? ND_PATHBYTE                                                                         \
          : 0))
#define ND_CLASS4(c) ND_CLASS(c), ND_CLASS((c) + 1), ND_CLASS((c) + 2), ND_CLASS((c) + 3)
#define ND_CLASS16(c) ND_CLASS4(c), ND_CLASS4((c) + 4), ND_CLASS4((c) + 8), ND_CLASS4((c) + 12)
#define ND_CLASS64(c) ND_CLASS16(c), ND_CLASS16((c) + 16), ND_CLASS16((c) + 32), ND_CLASS16((c) + 48)
static const unsigned char nd_class[256] = {ND_CLASS64(0), ND_CLASS64(64), ND_CLASS64(128),
                                            ND_CLASS64(192)};

static inline int nd_digit(unsigned char c) { return nd_class[c] & ND_DIGIT; }
static inline int nd_hex(unsigned char c) { return nd_class[c] & ND_HEXDIGIT; }
static inline int nd_alpha(unsigned char c) { return nd_class[c] & ND_LETTER; }
static inline int nd_alnum(unsigned char c) { return nd_class[c] & (ND_DIGIT | ND_LETTER); }

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

#endif
