/* Memory latency probe for the README's figures (not part of the build or the tests).
 *
 *   gcc -O2 -o /tmp/memlat scripts/memlat.c && /tmp/memlat 2560 1
 *
 * Maps MB megabytes (argument 1) aligned to 2 MB, advised for transparent huge pages when
 * argument 2 is 1 (MADV_NOHUGEPAGE when 0), links every cache line into one random cycle,
 * then prints (a) the time of one dependent read (a pointer chase, 2M steps) and (b) the time
 * per line with 16 independent chases interleaved (what the core gets with 16 misses in
 * flight, its fill buffers' worth). */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static uint64_t rng = 88172645463325252ull;
static uint64_t xorshift(void) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: memlat MB HUGE(0|1)\n");
        return 2;
    }
    size_t mb = strtoul(argv[1], 0, 10);
    int huge = atoi(argv[2]);
    size_t bytes = mb << 20, lines = bytes / 64, huge_page = 2 << 20;
    if (lines < 16) {
        fprintf(stderr, "memlat: MB must be at least 1\n");
        return 2;
    }
    char *map = mmap(0, bytes + huge_page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (map == MAP_FAILED) {
        perror("memlat: mmap");
        return 1;
    }
    char *p = (char *)(((uintptr_t)map + huge_page - 1) & ~(uintptr_t)(huge_page - 1));
    madvise(p, bytes, huge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
    uint64_t *perm = malloc(lines * 8);
    if (!perm) {
        fprintf(stderr, "memlat: out of memory\n");
        return 1;
    }
    for (size_t i = 0; i < lines; i++) perm[i] = i;
    for (size_t i = lines - 1; i > 0; i--) {
        size_t j = xorshift() % (i + 1);
        uint64_t t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
    for (size_t i = 0; i < lines; i++) *(uint64_t *)(p + perm[i] * 64) = perm[(i + 1) % lines] * 64;
    free(perm);
    size_t n = 2000000;
    uint64_t x = 0;
    double t0 = now();
    for (size_t i = 0; i < n; i++) x = *(uint64_t *)(p + x);
    double dependent = (now() - t0) / n * 1e9;
    uint64_t c[16];
    for (int k = 0; k < 16; k++) c[k] = (xorshift() % lines) * 64;
    t0 = now();
    for (size_t i = 0; i < n / 16; i++)
        for (int k = 0; k < 16; k++) c[k] = *(uint64_t *)(p + c[k]);
    double parallel = (now() - t0) / n * 1e9;
    uint64_t sink = x;
    for (int k = 0; k < 16; k++) sink += c[k];
    printf("%zu MB, huge pages %s: dependent read %.1f ns; 16 chases in flight %.1f ns per line (%u)\n",
           mb, huge ? "advised" : "off", dependent, parallel, (unsigned)(sink & 1));
    return 0;
}
