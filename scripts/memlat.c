/* Memory latency probe behind the figures of docs/performance.md (not part of the build or
 * the tests).
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
 * The address-translation probe of docs/performance.md, "Why the 16M figures stay above the floors".
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
 * mapping, whose lines are never read: what a burst of software prefetches costs the core.
 *
 *   gcc -O2 -o /tmp/memlat scripts/memlat.c && /tmp/memlat batch
 *
 * The memory floor of a batched forwarding pipeline (docs/performance.md, "The floor this
 * machine sets").
 * Maps 4 GB (the size of the 16M benchmark's tables), advised for huge pages and written once,
 * then runs batches of 64 "packets" the way the engine's pipeline does, without its work:
 * pass 1 spends C cycles of dependent arithmetic on each packet (its parse and hash) and
 * then prefetches its first-level lines; pass 2 reads them and prefetches the second-level
 * lines, whose addresses depend on what the first-level reads returned (a bucket, then the
 * entry it points at); pass 3 reads those. Each packet touches P random lines on distinct
 * random pages, ceil(P/2) of them first-level. Each level's requests go out either right after
 * each packet's work ("interleaved") or for the whole batch after it ("burst"). Prints TSC
 * cycles per packet for each P, C and order (best of three runs of 20,000 batches):
 * C alone (P = 0) is the compute, and the excess over it what P cold pages cost a packet
 * when the batch overlaps them as well as the pipeline can.
 *
 *   gcc -O2 -o /tmp/memlat scripts/memlat.c && /tmp/memlat batch same-page
 *
 * The same, with each second-level line on the page of the first-level line it depends on (a
 * bucket and its entry on one 4 KB page): P lines on ceil(P/2) pages. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <string.h>
#include <time.h>
#include <x86intrin.h>
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
/* Maps `bytes` aligned to 2 MB, advised for transparent huge pages and filled with `fill`
 * (so every page is present); NULL on failure, reported. */
static char *map_huge(size_t bytes, int fill) {
    size_t huge_page = 2ul << 20;
    char *raw = mmap(0, bytes + huge_page, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED) {
        perror("memlat: mmap");
        return NULL;
    }
    char *p = (char *)(((uintptr_t)raw + huge_page - 1) & ~(uintptr_t)(huge_page - 1));
    madvise(p, bytes, MADV_HUGEPAGE);
    memset(p, fill, bytes);
    return p;
}

static int tlb_probe(void) {
    size_t bytes = 1ul << 30, huge_page = 2ul << 20;
    char *p = map_huge(bytes, 0);
    if (!p)
        return 1;
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

#define BATCH 64
#define MAXP 8

static uint64_t mix(uint64_t x) {
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    return x;
}

/* C cycles of dependent arithmetic (4-cycle multiply-add steps) seeded by `x`. */
static uint64_t work(uint64_t x, int steps) {
    for (int j = 0; j < steps; j++) {
        x = x * 0x9e3779b97f4a7c15ull + (uint64_t)j;
        __asm__ volatile("" : "+r"(x));
    }
    return x;
}

/* The `batch` mode (see the top of the file); `same_page`: second-level lines on their
 * first-level line's page. */
static int batch_probe(int same_page) {
    size_t bytes = 4ul << 30, lines = bytes / 64;
    char *p = map_huge(bytes, 1);
    if (!p)
        return 1;
    const int ps[] = {0, 1, 2, 3, 4, 5, 6, 8};
    const int cs[] = {0, 400, 800};
    const int batches = 20000;
    uint64_t sink = 0, seq = 1;
    static uint64_t addr[BATCH][MAXP];
    printf("TSC cycles per packet, batches of %d, lines on random pages of 4 GB%s\n", BATCH,
           same_page ? ", second level on the first level's page" : "");
    printf("%-28s", "P (cold lines per packet)");
    for (unsigned i = 0; i < sizeof ps / sizeof ps[0]; i++)
        printf("%7d", ps[i]);
    printf("\n");
    for (unsigned row = 0; row < 2 * sizeof cs / sizeof cs[0]; row++) {
        unsigned ci = row / 2;
        int burst = row % 2;
        char label[64];
        snprintf(label, sizeof label, "C = %d, %s", cs[ci], burst ? "burst" : "interleaved");
        printf("%-28s", label);
        for (unsigned pi = 0; pi < sizeof ps / sizeof ps[0]; pi++) {
            int np = ps[pi], first = (np + 1) / 2;
            uint64_t best = UINT64_MAX;
            for (int rep = 0; rep < 3; rep++) {
                uint64_t t0 = __rdtsc();
                for (int b = 0; b < batches; b++) {
                    for (int k = 0; k < BATCH; k++) {
                        sink += work(seq, cs[ci] / 4);
                        for (int l = 0; l < first; l++) {
                            addr[k][l] = (mix(seq++) % lines) * 64;
                            if (!burst)
                                _mm_prefetch(p + addr[k][l], _MM_HINT_T0);
                        }
                    }
                    if (burst)
                        for (int k = 0; k < BATCH; k++)
                            for (int l = 0; l < first; l++)
                                _mm_prefetch(p + addr[k][l], _MM_HINT_T0);
                    for (int k = 0; k < BATCH; k++)
                        for (int l = first; l < np; l++) {
                            uint64_t v = *(volatile uint64_t *)(p + addr[k][l - first]);
                            uint64_t r = mix(v ^ seq++);
                            addr[k][l] = same_page
                                             ? (addr[k][l - first] & ~(uint64_t)4095) | (r % 64) * 64
                                             : (r % lines) * 64;
                            if (!burst)
                                _mm_prefetch(p + addr[k][l], _MM_HINT_T0);
                        }
                    if (burst)
                        for (int k = 0; k < BATCH; k++)
                            for (int l = first; l < np; l++)
                                _mm_prefetch(p + addr[k][l], _MM_HINT_T0);
                    for (int k = 0; k < BATCH; k++)
                        for (int l = first; l < np; l++)
                            sink += *(volatile uint64_t *)(p + addr[k][l]);
                    /* The first-level lines no second-level address came from (odd P). */
                    for (int k = 0; k < BATCH; k++)
                        for (int l = np - first > 0 ? np - first : 0; l < first; l++)
                            sink += *(volatile uint64_t *)(p + addr[k][l]);
                }
                uint64_t c = (__rdtsc() - t0) / ((uint64_t)batches * BATCH);
                if (c < best)
                    best = c;
            }
            printf("%7lu", (unsigned long)best);
            fflush(stdout);
        }
        printf("\n");
    }
    printf("(%lu)\n", (unsigned long)(sink & 1));
    return 0;
}

int main(int argc, char **argv) {
    if (argc == 2 && strcmp(argv[1], "tlb") == 0)
        return tlb_probe();
    if (argc == 2 && strcmp(argv[1], "batch") == 0)
        return batch_probe(0);
    if (argc == 3 && strcmp(argv[1], "batch") == 0 && strcmp(argv[2], "same-page") == 0)
        return batch_probe(1);
    if (argc != 3) {
        fprintf(stderr, "usage: memlat MB HUGE(0|1) | memlat tlb | memlat batch [same-page]\n");
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
