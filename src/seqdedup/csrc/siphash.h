/*
 * SipHash-2-4 with a 128-bit output (Aumasson and Bernstein, "SipHash: a fast
 * short-input PRF", 2012; the 128-bit variant of the reference implementation),
 * written from the paper's description: one-shot and streaming (a normalised key is
 * given in pieces; the result is the same however it is cut).
 *
 * Why this function decides what is skipped (docs/engine.md, "Identity"): it is a
 * pseudo-random function of the key for whoever does not know the 128-bit key, so two
 * different records of an input chosen without the run's secret get equal hashes with
 * probability 2^-128 per pair, plus the PRF advantage. A fast non-cryptographic hash
 * (XXH64) has seed-independent collisions and may never decide a skip.
 *
 * Self-contained (stdint and string only) so that the benchmark's C yardstick includes
 * the same definition as the kernel.
 */
#ifndef SEQDEDUP_SIPHASH_H
#define SEQDEDUP_SIPHASH_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

static inline uint64_t sip_rotl(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

/* A little-endian 64-bit word, whatever the host's byte order (memcpy keeps unaligned
 * reads defined; the compiler turns both into one load on little-endian hosts). */
static inline uint64_t sip_read64(const unsigned char *p)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
#else
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = (v << 8) | p[i];
    return v;
#endif
}

/* The last len % 8 bytes of p[0..len) as a little-endian word, where `readable` bytes
 * from p may be read (at least len): one load of 8 bytes, shifted or masked, wherever
 * 8 may be read (no loop whose length the processor must guess). */
static inline uint64_t sip_tail(const unsigned char *p, size_t len, size_t readable)
{
    size_t rest = len & 7;
    if (rest == 0) return 0;
    if (len >= 8) return sip_read64(p + len - 8) >> (8 * (8 - rest));
    if (readable >= 8) return sip_read64(p) & ((UINT64_C(1) << (8 * rest)) - 1);
    unsigned char last[8] = {0};
    memcpy(last, p, rest);
    return sip_read64(last);
}

typedef struct {
    uint64_t v0, v1, v2, v3;
    uint64_t tail;  /* the bytes of an unfinished word, little-endian */
    uint64_t total; /* bytes given so far (the last word carries it mod 256) */
} SipState;

#define SIP_ROUND(s)                                                                      \
    do {                                                                                  \
        (s).v0 += (s).v1;                                                                 \
        (s).v1 = sip_rotl((s).v1, 13);                                                    \
        (s).v1 ^= (s).v0;                                                                 \
        (s).v0 = sip_rotl((s).v0, 32);                                                    \
        (s).v2 += (s).v3;                                                                 \
        (s).v3 = sip_rotl((s).v3, 16);                                                    \
        (s).v3 ^= (s).v2;                                                                 \
        (s).v0 += (s).v3;                                                                 \
        (s).v3 = sip_rotl((s).v3, 21);                                                    \
        (s).v3 ^= (s).v0;                                                                 \
        (s).v2 += (s).v1;                                                                 \
        (s).v1 = sip_rotl((s).v1, 17);                                                    \
        (s).v1 ^= (s).v2;                                                                 \
        (s).v2 = sip_rotl((s).v2, 32);                                                    \
    } while (0)

/* Two compression rounds per message word. */
static inline void sip_word(SipState *s, uint64_t m)
{
    s->v3 ^= m;
    SIP_ROUND(*s);
    SIP_ROUND(*s);
    s->v0 ^= m;
}

static inline void sip_init(SipState *s, uint64_t k0, uint64_t k1)
{
    s->v0 = k0 ^ 0x736f6d6570736575ULL;
    s->v1 = k1 ^ 0x646f72616e646f6dULL ^ 0xee; /* 0xee: the 128-bit output */
    s->v2 = k0 ^ 0x6c7967656e657261ULL;
    s->v3 = k1 ^ 0x7465646279746573ULL;
    s->tail = 0;
    s->total = 0;
}

static inline void sip_update(SipState *s, const unsigned char *p, size_t len)
{
    size_t have = (size_t)(s->total & 7);
    s->total += (uint64_t)len;
    if (have) { /* complete the unfinished word first */
        while (have < 8 && len) {
            s->tail |= (uint64_t)(*p++) << (8 * have++);
            len--;
        }
        if (have < 8) return;
        sip_word(s, s->tail);
        s->tail = 0;
    }
    for (; len >= 8; p += 8, len -= 8) sip_word(s, sip_read64(p));
    for (size_t i = 0; i < len; i++) s->tail |= (uint64_t)p[i] << (8 * i);
}

/* Two whole words (a 128-bit value, lo first), where everything given so far was whole
 * words too: the same as sip_update of their 16 little-endian bytes. */
static inline void sip_words(SipState *s, uint64_t lo, uint64_t hi)
{
    s->total += 16;
    sip_word(s, lo);
    sip_word(s, hi);
}

/* The last word (the length mod 256 in its top byte), then four finalisation rounds
 * per 64-bit half of the output. */
static inline void sip_final(SipState *s, uint64_t *lo, uint64_t *hi)
{
    sip_word(s, s->tail | (s->total << 56));
    s->v2 ^= 0xee;
    SIP_ROUND(*s);
    SIP_ROUND(*s);
    SIP_ROUND(*s);
    SIP_ROUND(*s);
    *lo = s->v0 ^ s->v1 ^ s->v2 ^ s->v3;
    s->v1 ^= 0xdd;
    SIP_ROUND(*s);
    SIP_ROUND(*s);
    SIP_ROUND(*s);
    SIP_ROUND(*s);
    *hi = s->v0 ^ s->v1 ^ s->v2 ^ s->v3;
}

/* One-shot: the whole key at once (the common path: no unfinished word to carry), where
 * `readable` bytes from p may be read (at least len: a record inside a larger buffer). */
static inline void sip128_in(const unsigned char *p, size_t len, size_t readable, uint64_t k0,
                             uint64_t k1, uint64_t *lo, uint64_t *hi)
{
    SipState s;
    sip_init(&s, k0, k1);
    s.total = (uint64_t)len;
    const unsigned char *end = p + (len & ~(size_t)7);
    for (; p < end; p += 8) sip_word(&s, sip_read64(p));
    s.tail = sip_tail(p - (len & ~(size_t)7), len, readable);
    sip_final(&s, lo, hi);
}

static inline void sip128(const unsigned char *p, size_t len, uint64_t k0, uint64_t k1,
                          uint64_t *lo, uint64_t *hi)
{
    sip128_in(p, len, len, k0, k1, lo, hi);
}

#endif
