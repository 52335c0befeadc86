/* --normalize: replace timestamps, uuids, IP addresses, hex ids, numbers, paths and quoted
 * values in a key by one placeholder per class, and runs of spaces by one space. Included by _kernel.c; plain C99, no Python.
 *
 * The definition is the regular expressions of seqdedup/normalize.py (the Python
 * engine uses them; the tests compare both on random input). One pass, left to right:
 * at each position the first class that matches (timestamp, uuid, ip, hex, number, path,
 * quoted, space, of those asked for) replaces its match, and the scan goes on after it; where none
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
    NORM_SPACE = 128,
    NORM_CLASSES = 255, /* every class ("all" of --normalize is the first five) */
};

#include "timestamps.h" /* (the byte helpers and the timestamp matchers) */

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
static inline int nd_path_byte(unsigned char c) { return nd_class[c] & ND_PATHBYTE; }

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
 * and the byte: its byte can start one, and inside a word only a timestamp can start
 * (after a letter one that starts with a digit, after a digit a syslog month or
 * weekday); every other class needs a word boundary before it. A letter starts a
 * timestamp only as a month's or a weekday's first (A D F J M N O S T W), and at the
 * key's start (its own row) as any capital up to W (glog's I, W, E, F: the matcher
 * tries every capital there). Made once per set of classes (the same every time, so a
 * second making changes nothing): the scan then costs two lookups a byte. */
#define ND_KIND_ROW (3 * 256)  /* each byte's kind as the byte before a start */
#define ND_START_ROW (4 * 256) /* the key's first byte */

static const unsigned char *nd_start_table(unsigned classes)
{
    static unsigned char tables[NORM_CLASSES + 1][5 * 256];
    static unsigned char ready[NORM_CLASSES + 1];
    classes &= NORM_CLASSES;
    unsigned char *table = tables[classes];
    if (!ready[classes]) {
        for (int c = 0; c < 256; c++) {
            unsigned char b = (unsigned char)c;
            int digit = nd_digit(b), hex = nd_hex(b), capital = b >= 'A' && b <= 'W';
            int month = b != 0 && strchr("ADFJMNOSTW", b) != NULL; /* (or a weekday) */
            int stamp = (classes & NORM_TIMESTAMP) != 0;
            /* (a run of spaces may start anywhere, inside a word's end too) */
            int space = (classes & NORM_SPACE) && (b == ' ' || b == '\t');
            int other = ((classes & (NORM_UUID | NORM_HEX)) && hex) ||
                        ((classes & NORM_IP) && (hex || b == ':')) ||
                        ((classes & NORM_NUMBER) && digit) ||
                        ((classes & NORM_PATH) && b == '/') ||
                        ((classes & NORM_QUOTED) && (b == '"' || b == '\'')) || space;
            table[c] = (unsigned char)((stamp && (digit || month)) || other);
            table[256 + c] = (unsigned char)((stamp && digit) || space);  /* after a letter */
            table[512 + c] = (unsigned char)((stamp && month) || space);  /* after a digit */
            table[ND_KIND_ROW + c] = (unsigned char)nd_kind(b);
            table[ND_START_ROW + c] = (unsigned char)((stamp && (digit || capital)) || other);
        }
        ready[classes] = 1;
    }
    return table;
}

#if defined(__SSE2__)
#define ND_WIDE 1
#include <emmintrin.h>

/* 16 bytes from p against the bytes a start may be (bit k: p[k]), as 16-bit masks;
 * the classes (a set of NORM_ bits) say which are wanted. Signed compares: a byte from
 * 0x80 up is negative, none of them. */
static inline void nd_starts16(const unsigned char *p, unsigned classes, unsigned *letter,
                               unsigned *digit, unsigned *r0, unsigned *r1, unsigned *r2)
{
    __m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
    __m128i lower = _mm_or_si128(v, _mm_set1_epi8(0x20));
    __m128i from_a = _mm_cmpgt_epi8(lower, _mm_set1_epi8('a' - 1));
    unsigned d = (unsigned)_mm_movemask_epi8(_mm_and_si128(
        _mm_cmpgt_epi8(v, _mm_set1_epi8('0' - 1)), _mm_cmplt_epi8(v, _mm_set1_epi8('9' + 1))));
    unsigned l = (unsigned)_mm_movemask_epi8(
        _mm_and_si128(from_a, _mm_cmplt_epi8(lower, _mm_set1_epi8('z' + 1))));
    unsigned month = 0, hex = 0, other = 0, space = 0;
    if (classes & NORM_TIMESTAMP) { /* (a month's or a weekday's first letter) */
        __m128i m = _mm_setzero_si128();
        static const char initials[] = "ADFJMNOSTW";
        for (int i = 0; i < 10; i++) m = _mm_or_si128(m, _mm_cmpeq_epi8(v, _mm_set1_epi8(initials[i])));
        month = (unsigned)_mm_movemask_epi8(m);
    }
    if (classes & (NORM_UUID | NORM_HEX | NORM_IP))
        hex = d | (unsigned)_mm_movemask_epi8(
                      _mm_and_si128(from_a, _mm_cmplt_epi8(lower, _mm_set1_epi8('f' + 1))));
    if (classes & NORM_IP) other |= hex | (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8(':')));
    if (classes & (NORM_UUID | NORM_HEX)) other |= hex;
    if (classes & NORM_NUMBER) other |= d;
    if (classes & NORM_PATH) other |= (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8('/')));
    if (classes & NORM_QUOTED)
        other |= (unsigned)_mm_movemask_epi8(_mm_or_si128(
            _mm_cmpeq_epi8(v, _mm_set1_epi8('"')), _mm_cmpeq_epi8(v, _mm_set1_epi8('\''))));
    if (classes & NORM_SPACE)
        space = (unsigned)_mm_movemask_epi8(_mm_or_si128(
            _mm_cmpeq_epi8(v, _mm_set1_epi8(' ')), _mm_cmpeq_epi8(v, _mm_set1_epi8('\t'))));
    unsigned stamp = classes & NORM_TIMESTAMP ? ~0u : 0u;
    *letter = l;
    *digit = d;
    *r0 = (stamp & (d | month)) | other | space; /* (after neither a letter nor a digit) */
    *r1 = (stamp & d) | space;                    /* (after a letter) */
    *r2 = (stamp & month) | space;                /* (after a digit) */
}
#endif

/* Which of s[p .. p+64) may start a match (bit k: s[p+k]; see nd_start_table), found
 * without a branch per byte: whether a byte starts a match is data the branch predictor
 * cannot learn, and a mispredicted branch a byte was most of the scan's time. Where SSE2
 * is there, 16 bytes at a time as masks of the bytes a start may be, and of the letters
 * and digits the byte before a start is; the rest (a key's last bytes) a byte at a
 * time from the table. */
static inline uint64_t nd_candidates(const unsigned char *s, size_t n, size_t p,
                                     const unsigned char *table, unsigned classes)
{
    size_t count = n - p < 64 ? n - p : 64, k = 0;
    uint64_t bits = 0;
#if defined(ND_WIDE)
    uint64_t letters = 0, digits = 0, r0 = 0, r1 = 0, r2 = 0;
    for (; k + 16 <= count; k += 16) {
        unsigned letter, digit, a, b, c;
        nd_starts16(s + p + k, classes, &letter, &digit, &a, &b, &c);
        letters |= (uint64_t)letter << k;
        digits |= (uint64_t)digit << k;
        r0 |= (uint64_t)a << k;
        r1 |= (uint64_t)b << k;
        r2 |= (uint64_t)c << k;
    }
    if (k > 0) {
        unsigned before = p > 0 ? table[ND_KIND_ROW + s[p - 1]] : 0; /* (1 letter, 2 digit) */
        uint64_t after_letter = (letters << 1) | (before == 1);
        uint64_t after_digit = (digits << 1) | (before == 2);
        bits = (~(after_letter | after_digit) & r0) | (after_letter & r1) | (after_digit & r2);
        if (k < 64) bits &= ((uint64_t)1 << k) - 1;
        if (p == 0) bits = (bits & ~(uint64_t)1) | table[ND_START_ROW + s[0]];
    }
#endif
    for (; k < count; k++) {
        unsigned row = p + k > 0 ? 256u * table[ND_KIND_ROW + s[p + k - 1]] : ND_START_ROW;
        bits |= (uint64_t)table[row + s[p + k]] << k;
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

/* What a match becomes, with its length (not counted again at every match), and its
 * class. */
typedef struct {
    const char *text;
    size_t length;
    unsigned class_bit;
} NdPlaceholder;

#define ND_PLACEHOLDER(text, bit) {text, sizeof text - 1, bit}
static const NdPlaceholder ND_TIMESTAMP = ND_PLACEHOLDER("<TIMESTAMP>", NORM_TIMESTAMP);
static const NdPlaceholder ND_UUID = ND_PLACEHOLDER("<UUID>", NORM_UUID);
static const NdPlaceholder ND_IP = ND_PLACEHOLDER("<IP>", NORM_IP);
static const NdPlaceholder ND_HEX = ND_PLACEHOLDER("<HEX>", NORM_HEX);
static const NdPlaceholder ND_NUMBER = ND_PLACEHOLDER("<NUMBER>", NORM_NUMBER);
static const NdPlaceholder ND_PATH = ND_PLACEHOLDER("<PATH>", NORM_PATH);
static const NdPlaceholder ND_QUOTED = ND_PLACEHOLDER("<QUOTED>", NORM_QUOTED);
static const NdPlaceholder ND_SPACE = ND_PLACEHOLDER(" ", NORM_SPACE);

/* The end of the match of the classes that starts at s[p] (0: none), the first class in
 * the order timestamp, uuid, ip, hex, number, path, quoted, space; its placeholder in
 * *placeholder. */
static inline size_t nd_match(const unsigned char *s, size_t n, size_t p, unsigned classes,
                              const NdPlaceholder **placeholder)
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
        if (end) *placeholder = &ND_TIMESTAMP;
    }
    if (!end && (classes & NORM_UUID) && hex == 8 && after_hex == '-') {
        end = nd_uuid(s, n, p);
        if (end) *placeholder = &ND_UUID;
    }
    if (!end && (classes & NORM_IP)) {
        if (digits >= 1 && digits <= 3 && after_digits == '.') end = nd_ipv4(s, n, p);
        if (!end && hex <= 4 && after_hex == ':') end = nd_ipv6(s, n, p);
        if (end) *placeholder = &ND_IP;
    }
    if (!end && (classes & NORM_HEX) &&
        (hex >= 8 || (c == '0' && (nd_at(s, n, p + 1) | 0x20) == 'x'))) {
        end = nd_hexid(s, n, p);
        if (end) *placeholder = &ND_HEX;
    }
    if (!end && (classes & NORM_NUMBER) && digits) {
        end = nd_number(s, n, p);
        if (end) *placeholder = &ND_NUMBER;
    }
    if (!end && (classes & NORM_PATH) && c == '/') {
        end = nd_path(s, n, p);
        if (end) *placeholder = &ND_PATH;
    }
    if (!end && (classes & NORM_QUOTED) && (c == '"' || c == '\'')) {
        end = nd_quoted(s, n, p);
        if (end) *placeholder = &ND_QUOTED;
    }
    if (!end && (classes & NORM_SPACE) && (c == ' ' || c == '\t')) {
        size_t q = p; /* two or more spaces and tabs, or one tab: one space */
        while (q < n && (s[q] == ' ' || s[q] == '\t')) q++;
        if (q - p >= 2 || c == '\t') {
            end = q;
            *placeholder = &ND_SPACE;
        }
    }
    return end;
}

/* Where a scan stands: the block of 64 bytes from `base` and its candidates not yet
 * tried (the candidates do not change with the matches: they look at the text's own
 * bytes, so one block serves every match inside it). */
typedef struct {
    size_t base;
    uint64_t bits;
    const unsigned char *table; /* (nd_start_table's, made once per scan) */
} NdCursor;

/* The next match of the classes at or after `from` (>= where the cursor was last left):
 * its start in *start and its placeholder in *placeholder, its end returned (0: none). */
static size_t nd_next_match(const unsigned char *s, size_t n, size_t from, unsigned classes,
                            NdCursor *cursor, size_t *start, const NdPlaceholder **placeholder)
{
    const unsigned char *table = cursor->table;
    if (from >= cursor->base + 64) { /* (also the first call: base + 64 <= from) */
        cursor->base = from;
        cursor->bits = from < n ? nd_candidates(s, n, from, table, classes) : 0;
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
        cursor->bits = nd_candidates(s, n, cursor->base, table, classes);
    }
}

/* The first match of the classes in s[0..n), as the normalising scan finds it: its
 * start in *start and its end returned (0: none). */
static size_t nd_first_match(const unsigned char *s, size_t n, unsigned classes, size_t *start)
{
    const NdPlaceholder *placeholder = NULL;
    NdCursor cursor = {0, 0, nd_start_table(classes)};
    cursor.bits = n ? nd_candidates(s, n, 0, cursor.table, classes) : 0;
    return nd_next_match(s, n, 0, classes, &cursor, start, &placeholder);
}

/* Each match of the classes in s[0..n), left to right as the normalising scan finds
 * them: (start, end, class bit) into `out` (room for n triples: a match is never
 * empty); how many. */
static size_t nd_matches(const unsigned char *s, size_t n, unsigned classes, int64_t *out)
{
    size_t from = 0, start = 0, end, found = 0;
    const NdPlaceholder *placeholder = NULL;
    NdCursor cursor = {0, 0, nd_start_table(classes)};
    cursor.bits = n ? nd_candidates(s, n, 0, cursor.table, classes) : 0;
    while ((end = nd_next_match(s, n, from, classes, &cursor, &start, &placeholder)) != 0) {
        out[3 * found] = (int64_t)start;
        out[3 * found + 1] = (int64_t)end;
        out[3 * found + 2] = (int64_t)placeholder->class_bit;
        found++;
        from = end;
    }
    return found;
}

/* Normalise s[0..n) into the sink (KeySink and sink_put come from the includer):
 * literal stretches go in whole, each match as its placeholder; the scan goes on after
 * a match (a match is never empty). */
static void normalize_key(const unsigned char *s, size_t n, unsigned classes, KeySink *sink)
{
    size_t literal = 0, start = 0, end;
    const NdPlaceholder *placeholder = NULL;
    NdCursor cursor = {0, 0, nd_start_table(classes)};
    cursor.bits = n ? nd_candidates(s, n, 0, cursor.table, classes) : 0;
    while ((end = nd_next_match(s, n, literal, classes, &cursor, &start, &placeholder)) != 0) {
        sink_put(sink, s + literal, start - literal);
        sink_put(sink, (const unsigned char *)placeholder->text, placeholder->length);
        literal = end;
    }
    sink_put(sink, s + literal, n - literal);
}

#endif
