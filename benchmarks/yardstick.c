/*
 * The yardstick of benchmarks/bench_yardstick.py: the skip rule of `seqdedup -q -w W`
 * on a named file (unlimited history), in the fewest lines of plain C that compute it
 * the way the engine does, so that seqdedup's CPU beside it measures the engine and not
 * the hash. Not part of the package: the benchmark compiles it with the system's
 * compiler and checks that its output equals seqdedup's.
 *
 *   yardstick W FILE > OUT
 *
 * Each line's key hash is 128 bits (SipHash-2-4-128, the kernel's siphash.h); a window of W records is identified by two rolling polynomial
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
#include "../src/seqdedup/csrc/siphash.h"

/* SipHash-2-4-128 keyed with a fixed key (the kernel's own definition, siphash.h). */
static void hash128(const unsigned char *p, size_t len, uint64_t out[2])
{
    sip128(p, len, 0x736571646564ULL, 0x7961726473746bULL, &out[0], &out[1]);
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
    size_t mask = capacity - 1, i = (size_t)(a ^ (b * 0x9E3779B185EBCA87ULL)) & mask;
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
