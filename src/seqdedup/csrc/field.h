/* Arithmetic modulo the prime 2^61 - 1 for the window fingerprints (kernel.h includes
 * it; static inline: on the hot path). Values are 64-bit integers; see each function for
 * the ranges it takes. */
#ifndef SEQDEDUP_FIELD_H
#define SEQDEDUP_FIELD_H

#include <stdint.h>

/* Arithmetic modulo the Mersenne prime 2^61 - 1, a field, where a polynomial of degree
 * W - 1 has at most W - 1 roots (modulo 2^64 it may vanish for every odd base: the
 * Thue-Morse construction). Values are kept reduced, below FP_PRIME. */
#define FP_PRIME ((((uint64_t)1) << 61) - 1)

static inline uint64_t fp_reduce(uint64_t x)
{
    x = (x & FP_PRIME) + (x >> 61); /* 2^61 = 1 (mod p) */
    return x >= FP_PRIME ? x - FP_PRIME : x;
}

static inline uint64_t fp_add(uint64_t a, uint64_t b)
{
    uint64_t r = a + b;
    return r >= FP_PRIME ? r - FP_PRIME : r;
}

static inline uint64_t fp_sub(uint64_t a, uint64_t b) { return a >= b ? a - b : a + FP_PRIME - b; }

/* A key hash lane as the fingerprint takes it: its low 61 bits (a value from 0 to p). */
static inline uint64_t fp_input(uint64_t lane) { return lane & FP_PRIME; }

/* One step of a rolling fingerprint lane: fp * B + gone * drop + come (mod p), where
 * drop = -B^W (mod p) takes the leaving record out; fp, B, drop < p; gone and come are
 * key hash lanes (fp_input of each is taken). One reduction for the whole step. */
static inline uint64_t fp_roll(uint64_t fp, uint64_t base, uint64_t gone, uint64_t drop,
                               uint64_t come)
{
#if defined(__SIZEOF_INT128__)
    unsigned __int128 t = (unsigned __int128)fp * base +
                          (unsigned __int128)fp_input(gone) * drop + fp_input(come);
    uint64_t lo = (uint64_t)t, hi = (uint64_t)(t >> 64); /* t below 2^123: hi below 2^59 */
    uint64_t x = (lo & FP_PRIME) + ((hi << 3) | (lo >> 61)); /* (t mod 2^61) + (t >> 61) */
    x = (x & FP_PRIME) + (x >> 61);                          /* below 2^61 + 4 */
    return x >= FP_PRIME ? x - FP_PRIME : x;
#else
    return fp_add(fp_add(fp_mul(fp, base), fp_mul(fp_input(gone), drop)), fp_input(come));
#endif
}

/* a * b mod p, for a, b <= p. */
static inline uint64_t fp_mul(uint64_t a, uint64_t b)
{
#if defined(__SIZEOF_INT128__)
    unsigned __int128 t = (unsigned __int128)a * b; /* below 2^122 */
    return fp_reduce(((uint64_t)t & FP_PRIME) + (uint64_t)(t >> 61));
#else
    /* a = a1 2^32 + a0, b = b1 2^32 + b0 (a1, b1 < 2^29); 2^64 = 8 and 2^61 = 1 (mod p) */
    uint64_t a0 = a & 0xFFFFFFFFu, a1 = a >> 32, b0 = b & 0xFFFFFFFFu, b1 = b >> 32;
    uint64_t mid = a1 * b0 + a0 * b1; /* below 2^62 */
    uint64_t low = a0 * b0;
    uint64_t sum = 8 * (a1 * b1) + (mid >> 29) + ((mid & 0x1FFFFFFFu) << 32) +
                   (low & FP_PRIME) + (low >> 61); /* below 2^63 */
    return fp_reduce(sum);
#endif
}

#endif /* SEQDEDUP_FIELD_H */
