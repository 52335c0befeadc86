/*
 * The record-hash candidates of benchmarks/bench_hashes.py, timed on the lines of one
 * file: each hashes every line, 128 bits out, `rounds` times over, and prints the
 * nanoseconds per line. Not part of the package.
 *
 *   hashes FILE ROUNDS
 *
 *   xxh64x2     XXH64 under two seeds (the record hash before SipHash; from the xxHash
 *               specification): fast, but with seed-independent collisions
 *   sip24       SipHash-2-4-128, the kernel's own (src/seqdedup/csrc/siphash.h)
 *   sip13       SipHash-1-3-128 (one compression round per word, three at the end)
 *   polyval     a polynomial at a secret point over GF(2^128) (x^128 + x^7 + x^2 + x + 1)
 *               with carry-less multiplication, 16 bytes a block and the length last:
 *               almost-universal, (blocks + 1) / 2^128 per pair (only where the CPU
 *               has PCLMULQDQ)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../src/seqdedup/csrc/siphash.h"

#if defined(__PCLMUL__)
#include <wmmintrin.h>
#endif

typedef void (*Hash)(const unsigned char *p, size_t len, uint64_t out[2]);

static const uint64_t K0 = 0x0123456789abcdefULL, K1 = 0xfedcba9876543210ULL;

/* ---- XXH64 twice ---------------------------------------------------------------- */
static const uint64_t P1 = 0x9E3779B185EBCA87ULL, P2 = 0xC2B2AE3D27D4EB4FULL,
                      P3 = 0x165667B19E3779F9ULL, P4 = 0x85EBCA77C2B2AE63ULL,
                      P5 = 0x27D4EB2F165667C5ULL;

static inline uint64_t rd32(const unsigned char *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}
static inline uint64_t xround(uint64_t acc, uint64_t w) { return sip_rotl(acc + w * P2, 31) * P1; }
static inline uint64_t xmerge(uint64_t acc, uint64_t v) { return (acc ^ xround(0, v)) * P1 + P4; }

static uint64_t xxh64(const unsigned char *p, size_t len, uint64_t seed)
{
    const unsigned char *end = p + len;
    uint64_t h;
    if (len >= 32) {
        uint64_t v1 = seed + P1 + P2, v2 = seed + P2, v3 = seed, v4 = seed - P1;
        for (; p + 32 <= end; p += 32) {
            v1 = xround(v1, sip_read64(p));
            v2 = xround(v2, sip_read64(p + 8));
            v3 = xround(v3, sip_read64(p + 16));
            v4 = xround(v4, sip_read64(p + 24));
        }
        h = sip_rotl(v1, 1) + sip_rotl(v2, 7) + sip_rotl(v3, 12) + sip_rotl(v4, 18);
        h = xmerge(xmerge(xmerge(xmerge(h, v1), v2), v3), v4);
    } else {
        h = seed + P5;
    }
    h += (uint64_t)len;
    for (; p + 8 <= end; p += 8) h = sip_rotl(h ^ xround(0, sip_read64(p)), 27) * P1 + P4;
    if (p + 4 <= end) {
        h = sip_rotl(h ^ (rd32(p) * P1), 23) * P2 + P3;
        p += 4;
    }
    for (; p < end; p++) h = sip_rotl(h ^ (*p * P5), 11) * P1;
    h ^= h >> 33;
    h *= P2;
    h ^= h >> 29;
    h *= P3;
    return h ^ (h >> 32);
}

static void xxh64x2(const unsigned char *p, size_t len, uint64_t out[2])
{
    out[0] = xxh64(p, len, K0);
    out[1] = xxh64(p, len, K1);
}

/* ---- SipHash ------------------------------------------------------------------- */
static void sip24(const unsigned char *p, size_t len, uint64_t out[2])
{
    sip128(p, len, K0, K1, &out[0], &out[1]);
}

static void sip13(const unsigned char *p, size_t len, uint64_t out[2])
{
    SipState s;
    sip_init(&s, K0, K1);
    const unsigned char *end = p + (len & ~(size_t)7);
    uint64_t m;
    for (; p < end; p += 8) {
        m = sip_read64(p);
        s.v3 ^= m;
        SIP_ROUND(s);
        s.v0 ^= m;
    }
    m = (uint64_t)len << 56;
    for (size_t i = 0; i < (len & 7); i++) m |= (uint64_t)p[i] << (8 * i);
    s.v3 ^= m;
    SIP_ROUND(s);
    s.v0 ^= m;
    s.v2 ^= 0xee;
    SIP_ROUND(s);
    SIP_ROUND(s);
    SIP_ROUND(s);
    out[0] = s.v0 ^ s.v1 ^ s.v2 ^ s.v3;
    s.v1 ^= 0xdd;
    SIP_ROUND(s);
    SIP_ROUND(s);
    SIP_ROUND(s);
    out[1] = s.v0 ^ s.v1 ^ s.v2 ^ s.v3;
}

/* ---- a polynomial over GF(2^128) ----------------------------------------------- */
#if defined(__PCLMUL__)
/* a * b modulo x^128 + x^7 + x^2 + x + 1 (bit i of the 128-bit value: x^i). */
static inline void gf_mul(uint64_t a[2], const uint64_t b[2])
{
    __m128i x = _mm_set_epi64x((long long)a[1], (long long)a[0]);
    __m128i y = _mm_set_epi64x((long long)b[1], (long long)b[0]);
    __m128i lo = _mm_clmulepi64_si128(x, y, 0x00), hi = _mm_clmulepi64_si128(x, y, 0x11);
    __m128i mid = _mm_xor_si128(_mm_clmulepi64_si128(x, y, 0x10), _mm_clmulepi64_si128(x, y, 0x01));
    uint64_t r[4], m[2];
    _mm_storeu_si128((__m128i *)r, lo);
    _mm_storeu_si128((__m128i *)(r + 2), hi);
    _mm_storeu_si128((__m128i *)m, mid);
    r[1] ^= m[0];
    r[2] ^= m[1];
    /* the high 128 bits H: H * x^128 = H * (x^7 + x^2 + x + 1), whose part past bit 127
     * (at most 7 bits) is folded once more the same way */
    uint64_t h0 = r[2], h1 = r[3];
    uint64_t over = (h1 >> 63) ^ (h1 >> 62) ^ (h1 >> 57);
    uint64_t t0 = h0 ^ (h0 << 1) ^ (h0 << 2) ^ (h0 << 7);
    uint64_t t1 = h1 ^ (h1 << 1 | h0 >> 63) ^ (h1 << 2 | h0 >> 62) ^ (h1 << 7 | h0 >> 57);
    a[0] = r[0] ^ t0 ^ over ^ (over << 1) ^ (over << 2) ^ (over << 7);
    a[1] = r[1] ^ t1;
}

static void polyval(const unsigned char *p, size_t len, uint64_t out[2])
{
    static const uint64_t point[2] = {0x0123456789abcdefULL, 0xfedcba9876543210ULL};
    uint64_t acc[2] = {0, 0};
    size_t i = 0;
    for (; i + 16 <= len; i += 16) {
        acc[0] ^= sip_read64(p + i);
        acc[1] ^= sip_read64(p + i + 8);
        gf_mul(acc, point);
    }
    if (i < len) {
        unsigned char last[16] = {0};
        memcpy(last, p + i, len - i);
        acc[0] ^= sip_read64(last);
        acc[1] ^= sip_read64(last + 8);
        gf_mul(acc, point);
    }
    acc[0] ^= (uint64_t)len;
    gf_mul(acc, point);
    out[0] = acc[0];
    out[1] = acc[1];
}
#endif

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: hashes FILE ROUNDS\n");
        return 2;
    }
    FILE *f = fopen(argv[1], "rb");
    if (f == NULL) {
        perror(argv[1]);
        return 1;
    }
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *data = malloc(size > 0 ? (size_t)size : 1);
    size_t *starts = malloc(((size_t)size + 2) * sizeof *starts);
    if (data == NULL || starts == NULL || fread(data, 1, (size_t)size, f) != (size_t)size) {
        fprintf(stderr, "cannot read %s\n", argv[1]);
        return 1;
    }
    fclose(f);
    size_t lines = 0;
    starts[lines++] = 0;
    for (size_t i = 0; i < (size_t)size; i++)
        if (data[i] == '\n') starts[lines++] = i + 1;
    if (starts[lines - 1] != (size_t)size) starts[lines++] = (size_t)size + 1;
    lines--; /* line k is data[starts[k] .. starts[k+1] - 1) */
    int rounds = atoi(argv[2]);
    struct {
        const char *name;
        Hash hash;
    } candidates[] = {{"xxh64x2", xxh64x2}, {"sip24", sip24}, {"sip13", sip13},
#if defined(__PCLMUL__)
                      {"polyval", polyval},
#endif
    };
    for (size_t c = 0; c < sizeof candidates / sizeof candidates[0]; c++) {
        uint64_t check = 0, out[2];
        double best = 1e30;
        for (int r = 0; r < rounds; r++) {
            double t = now();
            for (size_t k = 0; k < lines; k++) {
                candidates[c].hash(data + starts[k], starts[k + 1] - 1 - starts[k], out);
                check += out[0] ^ out[1];
            }
            t = now() - t;
            if (t < best) best = t;
        }
        printf("%s %.2f %016llx\n", candidates[c].name, best * 1e9 / (double)lines,
               (unsigned long long)check);
    }
    free(data);
    free(starts);
    return 0;
}
