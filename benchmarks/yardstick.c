/*
 * The yardstick of benchmarks/bench_yardstick.py: the skip rule of `seqdedup -q -w W`
 * on a named file (unlimited history), in the fewest lines of plain C that compute it
 * the way the engine does, so that seqdedup's CPU beside it measures the engine and not
 * the hash. Not part of the package: the benchmark compiles it with the system's
 * compiler and checks that its output equals seqdedup's.
 *
 *   yardstick W FILE > OUT
 *
 * Each line's key hash is 128 bits (two XXH64 lanes, from the xxHash specification, in
 * one pass); a window of W records is identified by two rolling polynomial
 * fingerprints modulo 2^61 - 1 over the key hash lanes (field.h, the kernel's own);
 * one open-addressing table maps a window's fingerprint to its earliest start. Window
 * j repeats when that start i has i + W <= j; a record inside a repeat is skipped.
 * The input is read whole, the output written in one buffered pass.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../src/seqdedup/csrc/field.h"

static const uint64_t P1 = 0x9E3779B185EBCA87ULL, P2 = 0xC2B2AE3D27D4EB4FULL,
                      P3 = 0x165667B19E3779F9ULL, P4 = 0x85EBCA77C2B2AE63ULL,
                      P5 = 0x27D4EB2F165667C5ULL;

static inline uint64_t rotl(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }
static inline uint64_t rd64(const unsigned char *p) { uint64_t v; memcpy(&v, p, 8); return v; }
static inline uint32_t rd32(const unsigned char *p) { uint32_t v; memcpy(&v, p, 4); return v; }
static inline uint64_t round1(uint64_t acc, uint64_t w) { return rotl(acc + w * P2, 31) * P1; }
static inline uint64_t merge(uint64_t acc, uint64_t v) { return (acc ^ round1(0, v)) * P1 + P4; }

static uint64_t finish(uint64_t h, const unsigned char *p, const unsigned char *end)
{
    for (; p + 8 <= end; p += 8) h = rotl(h ^ round1(0, rd64(p)), 27) * P1 + P4;
    if (p + 4 <= end) {
        h = rotl(h ^ ((uint64_t)rd32(p) * P1), 23) * P2 + P3;
        p += 4;
    }
    for (; p < end; p++) h = rotl(h ^ (*p * P5), 11) * P1;
    h ^= h >> 33;
    h *= P2;
    h ^= h >> 29;
    h *= P3;
    return h ^ (h >> 32);
}

/* XXH64 with two seeds in one pass over the bytes. */
static void hash128(const unsigned char *p, size_t len, uint64_t out[2])
{
    static const uint64_t seed[2] = {0x736571646564ULL, 0x7961726473746bULL};
    const unsigned char *end = p + len;
    uint64_t h[2];
    if (len >= 32) {
        uint64_t v[2][4];
        for (int k = 0; k < 2; k++) {
            v[k][0] = seed[k] + P1 + P2;
            v[k][1] = seed[k] + P2;
            v[k][2] = seed[k];
            v[k][3] = seed[k] - P1;
        }
        for (; p + 32 <= end; p += 32)
            for (int i = 0; i < 4; i++) {
                uint64_t w = rd64(p + 8 * i);
                v[0][i] = round1(v[0][i], w);
                v[1][i] = round1(v[1][i], w);
            }
        for (int k = 0; k < 2; k++) {
            uint64_t a = rotl(v[k][0], 1) + rotl(v[k][1], 7) + rotl(v[k][2], 12) + rotl(v[k][3], 18);
            for (int i = 0; i < 4; i++) a = merge(a, v[k][i]);
            h[k] = a;
        }
    } else {
        h[0] = seed[0] + P5;
        h[1] = seed[1] + P5;
    }
    for (int k = 0; k < 2; k++) out[k] = finish(h[k] + (uint64_t)len, p, end);
}

typedef struct {
    uint64_t a, b; /* a window's two fingerprint lanes (b + 1: 0 marks an empty slot) */
    int64_t start; /* the window's earliest start */
} Slot;

static Slot *table;
static size_t capacity, used;

static void *checked(void *p)
{
    if (p == NULL) {
        fputs("yardstick: out of memory\n", stderr);
        exit(1);
    }
    return p;
}

static size_t slot_of(uint64_t a, uint64_t b)
{
    size_t mask = capacity - 1, i = (size_t)(a ^ (b * P1)) & mask;
    while (table[i].b && (table[i].a != a || table[i].b != b + 1)) i = (i + 1) & mask;
    return i;
}

static void grow(void)
{
    Slot *old = table;
    size_t old_capacity = capacity;
    capacity = capacity ? capacity * 2 : 1 << 16;
    table = checked(calloc(capacity, sizeof *table));
    for (size_t i = 0; i < old_capacity; i++)
        if (old[i].b) table[slot_of(old[i].a, old[i].b - 1)] = old[i];
    free(old);
}

/* The earliest start of the window (a, b), made `start` when it is new. */
static int64_t earliest(uint64_t a, uint64_t b, int64_t start)
{
    if (2 * (used + 1) > capacity) grow();
    size_t i = slot_of(a, b);
    if (!table[i].b) {
        table[i] = (Slot){a, b + 1, start};
        used++;
    }
    return table[i].start;
}

int main(int argc, char **argv)
{
    if (argc != 3 || atoi(argv[1]) < 1) {
        fputs("usage: yardstick W FILE\n", stderr);
        return 1;
    }
    const int64_t w = atoi(argv[1]);
    int fd = open(argv[2], O_RDONLY);
    struct stat info;
    if (fd < 0 || fstat(fd, &info) != 0) {
        perror(argv[2]);
        return 1;
    }
    size_t size = (size_t)info.st_size;
    const unsigned char *data =
        size ? mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0) : (const unsigned char *)"";
    if (data == MAP_FAILED) {
        perror(argv[2]);
        return 1;
    }
    close(fd);
    static char buffer[1 << 20];
    setvbuf(stdout, buffer, _IOFBF, sizeof buffer);
    size_t n = 0, room = 1 << 16; /* the records: where each starts (and n + 1) and keys */
    size_t *starts = checked(malloc(room * sizeof *starts));
    uint64_t(*keys)[2] = checked(malloc(room * sizeof *keys));
    size_t at = 0;
    while (at < size) {
        const unsigned char *nl = memchr(data + at, '\n', size - at);
        size_t stop = nl ? (size_t)(nl - data) : size;
        if (n + 2 > room) {
            room *= 2;
            starts = checked(realloc(starts, room * sizeof *starts));
            keys = checked(realloc(keys, room * sizeof *keys));
        }
        starts[n] = at;
        hash128(data + at, stop - at, keys[n]);
        n++;
        at = stop + 1;
    }
    starts[n] = at;

    /* base and -base^W per lane (any base below p works) */
    const uint64_t base[2] = {0x1A2B3C4D5E6F7ULL % FP_PRIME, 0x7F6E5D4C3B2A1ULL % FP_PRIME};
    uint64_t drop[2], fp[2] = {0, 0};
    for (int k = 0; k < 2; k++) {
        uint64_t power = 1;
        for (int64_t i = 0; i < w; i++) power = fp_mul(power, base[k]);
        drop[k] = fp_sub(0, power);
    }
    unsigned char *skipped = checked(calloc(n + 1, 1));
    int64_t covered = 0; /* records before it lie inside a repeat window */
    for (int64_t r = 0; r < (int64_t)n; r++) {
        int gone = r >= w;
        for (int k = 0; k < 2; k++) /* the window that ends at r */
            fp[k] = fp_roll(fp[k], base[k], gone ? keys[r - w][k] : 0, gone ? drop[k] : 0,
                            keys[r][k]);
        int64_t j = r - w + 1; /* where it starts: record j is now decided */
        if (j < 0) continue;
        if (earliest(fp[0], fp[1], j) + w <= j) covered = r + 1;
        skipped[j] = j < covered;
    }
    for (int64_t j = (int64_t)n - w + 1; j < (int64_t)n; j++)
        if (j >= 0) skipped[j] = j < covered;

    int failed = 0;
    for (size_t r = 0; r < n && !failed; r++) {
        if (skipped[r]) continue;
        size_t len = starts[r + 1] - starts[r]; /* (with its delimiter) */
        if (starts[r] + len > size) len = size - starts[r]; /* (the last had none) */
        failed = fwrite(data + starts[r], 1, len, stdout) != len;
    }
    failed = failed || fflush(stdout) != 0;
    if (failed) perror("yardstick: write");
    free(skipped);
    free(keys);
    free(starts);
    if (size) munmap((void *)data, size);
    free(table);
    return failed;
}
