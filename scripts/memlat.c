/* Memory latency probe for the README's figures (not part of the build or the tests).
 *
 *   gcc -O2 -o /tmp/memlat scripts/memlat.c && /tmp/memlat 2560 1
 *
 * Maps MB megabytes (argument 1) aligned to 2 MB, advised for transparent huge pages when
 * argument 2 is 1 (MADV_NOHUGEPAGE when 0), links every cache line into one random cycle,
 * then prints (a) the time of one dependent read (a pointer chase, 2M steps) and (b) the time
 * per line with 16 independent chases interleaved (what the core gets with 16 misses in
 * flight, its fill buffers' worth).
 *
 *   gcc -O2 -o /tmp/memlat scripts/memlat.c && /tmp/memlat tlb
 *
 * The address-translation probe of the README's "Why the 16M figures stay above the floors".
 * Maps 1 GB aligned to 2 MB and advised for transparent huge pages (the kernel's AnonHugePages
 * line is printed, to show they were granted), then reads the same amount of data, 65,536
 * cache lines (4 MB), laid out three ways, each as a dependent chain of random reads:
 *   A  the lines back to back: 4 MB, 2 huge pages, 1,024 4 KB pages;
 *   B  one line on each of 65,536 4 KB pages: 256 MB, 128 huge pages;
 *   C  32 lines on each of 2,048 4 KB pages spread over the whole 1 GB (4 per huge page).
 * If the TLB cached the guest's 2 MB translations, B (128 huge pages) would read as fast as A;
 * if it caches 4 KB ones (a hypervisor backing guest memory with 4 KB pages), B misses the TLB
 * on every read and pays a page walk, while C (2,048 pages, the size of a second-level TLB)
 * stays close to A. Last, it times a tight loop of prefetches, one per random 4 KB page of the
 * mapping, whose lines are never read: what a burst of software prefetches costs the core. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <string.h>
#include <time.h>
#include <xmmintrin.h>

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

#define LINES 65536
#define STEPS 4000000

/* The `tlb` mode (see the top of the file). */
static int tlb_probe(void) {
    size_t bytes = 1ul << 30, huge_page = 2ul << 20;
    char *raw = mmap(0, bytes + huge_page, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED) {
        perror("memlat: mmap");
        return 1;
    }
    char *p = (char *)(((uintptr_t)raw + huge_page - 1) & ~(uintptr_t)(huge_page - 1));
    madvise(p, bytes, MADV_HUGEPAGE);
    memset(p, 0, bytes);
    FILE *m = fopen("/proc/meminfo", "r");
    char l[256];
    while (m && fgets(l, sizeof l, m))
        if (strncmp(l, "AnonHugePages", 13) == 0)
            printf("%s", l);
    if (m)
        fclose(m);
    static uint64_t off[LINES];
    const char *names[3] = {"A (4 MB, 1,024 4 KB pages)", "B (65,536 4 KB pages, 128 huge)",
                            "C (2,048 4 KB pages, 512 huge)"};
    for (int pat = 0; pat < 3; pat++) {
        for (uint64_t i = 0; i < LINES; i++)
            off[i] = pat == 0 ? i * 64
                   : pat == 1 ? i * 4096
                              : (i / 32) * (huge_page / 4) + (i % 32) * 64;
        /* One random cycle through the lines: each holds the offset of the next. */
        for (uint64_t i = LINES - 1; i > 0; i--) {
            uint64_t j = xorshift() % (i + 1), t = off[i];
            off[i] = off[j];
            off[j] = t;
        }
        for (uint64_t i = 0; i < LINES; i++)
            *(uint64_t *)(p + off[i]) = off[(i + 1) % LINES];
        uint64_t x = off[0];
        double t0 = now();
        for (int i = 0; i < STEPS; i++)
            x = *(volatile uint64_t *)(p + x);
        double ns = (now() - t0) * 1e9 / STEPS;
        printf("dependent read, layout %-34s %6.1f ns (%lu)\n", names[pat], ns, x & 1);
    }
    static uint64_t pages[STEPS];
    for (int i = 0; i < STEPS; i++)
        pages[i] = (xorshift() % (bytes / 4096)) * 4096 + (xorshift() % 64) * 64;
    double t0 = now();
    for (int i = 0; i < STEPS; i++)
        _mm_prefetch(p + pages[i], _MM_HINT_T0);
    double ns = (now() - t0) * 1e9 / STEPS;
    printf("prefetch instructions to random 4 KB pages of 1 GB, back to back: %.1f ns each\n", ns);
    return 0;
}

int main(int argc, char **argv) {
    if (argc == 2 && strcmp(argv[1], "tlb") == 0)
        return tlb_probe();
    if (argc != 3) {
        fprintf(stderr, "usage: memlat MB HUGE(0|1) | memlat tlb\n");
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
