/* The floor of a one-shot evaluation: a plain C pass over the same files.
 *
 *     cc -O2 -o floor bench/floor.c -lm && ./floor QRELS RUN...
 *
 * Reads the qrels (each topic's judgments sorted by docno, topics in a hash table), then each run
 * file whole: splits
 * every line on whitespace, parses the topic, the docno and the score, sorts each topic's lines in
 * trec_eval's order (score descending, docno descending byte-wise) and computes AP and nDCG@10
 * (trec_eval's: gain = grade, log2(rank + 1) discount, relevant = grade > 0) per topic; prints
 * each run's tag, its number of topics and the means. No checks, no error messages, no ranking
 * beyond the sort, no storage: what any evaluation must at least do, so that each path's distance
 * to it can be given in ns per line (bench/bench_shapes.py compiles and times it with gcc).
 * Assumes the qrels and the run list each topic in one block (gen_synth.py's files do).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct { const char *key; int len; int value; } Slot;
static Slot *slots;
static size_t cap;

static unsigned long long hash(const char *s, int n) {
    unsigned long long h = 1469598103934665603ULL;
    for (int i = 0; i < n; i++) { h ^= (unsigned char)s[i]; h *= 1099511628211ULL; }
    return h;
}

static Slot *find(const char *key, int len) {
    size_t i = hash(key, len) & (cap - 1);
    while (slots[i].key && !(slots[i].len == len && memcmp(slots[i].key, key, len) == 0)) i = (i + 1) & (cap - 1);
    return &slots[i];
}

static char *slurp(const char *path, size_t *size) {
    FILE *f = fopen(path, "rb");
    if (!f) { perror(path); exit(1); }
    fseek(f, 0, SEEK_END);
    *size = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc(*size + 1);
    if (fread(buf, 1, *size, f) != *size) { perror(path); exit(1); }
    buf[*size] = 0;
    fclose(f);
    return buf;
}

/* the next whitespace-separated field of [*p, end): its start and length */
static const char *field(const char **p, const char *end, int *len) {
    const char *s = *p;
    while (s < end && (*s == ' ' || *s == '\t')) s++;
    const char *e = s;
    while (e < end && *e != ' ' && *e != '\t' && *e != '\n') e++;
    *len = (int)(e - s);
    *p = e;
    return s;
}

typedef struct { double score; const char *doc; int dlen; int grade; } Row;
typedef struct { const char *doc; int dlen; int grade; } Judged;

static int bytes_cmp(const char *a, int na, const char *b, int nb) {
    int c = memcmp(a, b, na < nb ? na : nb);
    return c ? c : na - nb;
}

static int by_trec_eval(const void *a, const void *b) {
    const Row *x = a, *y = b;
    if (x->score != y->score) return x->score < y->score ? 1 : -1;
    return bytes_cmp(y->doc, y->dlen, x->doc, x->dlen);
}

static int by_doc(const void *a, const void *b) {
    const Judged *x = a, *y = b;
    return bytes_cmp(x->doc, x->dlen, y->doc, y->dlen);
}

static int desc_int(const void *a, const void *b) { return *(const int *)b - *(const int *)a; }

/* a topic's judgments (sorted by docno, for a binary search), number relevant, ideal DCG@10 */
typedef struct { size_t start, count; int rel; double idcg10; } Topic;
static Topic *topics;
static int n_topics;

static Topic *topic_of(const char *t, int tlen, int add) {
    Slot *s = find(t, tlen);
    if (s->key) return &topics[s->value];
    if (!add) return NULL;
    s->key = t; s->len = tlen; s->value = n_topics;
    return &topics[n_topics++];
}

static int grade_of(const Topic *tp, const Judged *J, const char *d, int dl) {
    size_t lo = tp->start, hi = tp->start + tp->count;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int c = bytes_cmp(J[mid].doc, J[mid].dlen, d, dl);
        if (c == 0) return J[mid].grade;
        if (c < 0) lo = mid + 1; else hi = mid;
    }
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 3) { fprintf(stderr, "usage: floor QRELS RUN...\n"); return 2; }
    size_t qsize;
    char *q = slurp(argv[1], &qsize);
    size_t lines = 0;
    for (size_t i = 0; i < qsize; i++) lines += q[i] == '\n';
    cap = 1; while (cap < 2 * lines + 2) cap <<= 1;
    slots = calloc(cap, sizeof(Slot));
    topics = calloc(lines + 1, sizeof(Topic));
    Judged *J = malloc((lines + 1) * sizeof(Judged));
    int *grades = malloc((lines + 1) * sizeof(int));
    /* qrels (topic 0 doc grade), each topic's lines in one block */
    size_t nj = 0;
    const char *p = q, *end = q + qsize;
    Topic *cur = NULL;
    while (p < end) {
        const char *nl = memchr(p, '\n', end - p); if (!nl) nl = end;
        int tl, il, dl, gl;
        const char *t = field(&p, nl, &tl), *it = field(&p, nl, &il), *d = field(&p, nl, &dl), *g = field(&p, nl, &gl);
        (void)it; (void)il; (void)gl;
        if (tl && dl) {
            Topic *tp = topic_of(t, tl, 1);
            if (tp != cur) { tp->start = nj; cur = tp; }
            J[nj].doc = d; J[nj].dlen = dl; J[nj].grade = atoi(g);
            if (J[nj].grade > 0) tp->rel++;
            tp->count++; nj++;
        }
        p = nl + 1;
    }
    for (int i = 0; i < n_topics; i++) {
        Topic *tp = &topics[i];
        qsort(J + tp->start, tp->count, sizeof(Judged), by_doc);
        for (size_t k = 0; k < tp->count; k++) grades[k] = J[tp->start + k].grade;
        qsort(grades, tp->count, sizeof(int), desc_int);
        for (size_t k = 0; k < tp->count && k < 10; k++) if (grades[k] > 0) tp->idcg10 += grades[k] / log2(k + 2.0);
    }
    for (int a = 2; a < argc; a++) {
        size_t size;
        char *buf = slurp(argv[a], &size);
        size_t n_lines = 0;
        for (size_t i = 0; i < size; i++) n_lines += buf[i] == '\n';
        Row *rows = malloc((n_lines + 1) * sizeof(Row));
        double sum_ap = 0, sum_ndcg = 0;
        int topics_seen = 0;
        char tag[256] = "";
        const char *bt = NULL; int btl = 0; size_t nb = 0;
        Topic *tp = NULL;
        p = buf; end = buf + size;
        for (;;) {
            const char *nl = p < end ? memchr(p, '\n', end - p) : NULL; if (p < end && !nl) nl = end;
            int tl = 0, xl, dl = 0, rl, sl, gl;
            const char *t = NULL, *d = NULL, *sc = NULL, *tg = NULL;
            if (p < end) {
                t = field(&p, nl, &tl); field(&p, nl, &xl); d = field(&p, nl, &dl); field(&p, nl, &rl);
                sc = field(&p, nl, &sl); tg = field(&p, nl, &gl);
                if (!tag[0] && gl < 255) { memcpy(tag, tg, gl); tag[gl] = 0; }
            }
            int next = p >= end || !bt || tl != btl || memcmp(t, bt, tl);
            if (bt && next) {  /* a topic ends: evaluate it */
                if (tp) {
                    qsort(rows, nb, sizeof(Row), by_trec_eval);
                    double ap = 0, dcg = 0; int found = 0;
                    for (size_t i = 0; i < nb; i++) {
                        if (rows[i].grade > 0) { found++; ap += (double)found / (i + 1); if (i < 10) dcg += rows[i].grade / log2(i + 2.0); }
                    }
                    sum_ap += tp->rel ? ap / tp->rel : 0;
                    sum_ndcg += tp->idcg10 > 0 ? dcg / tp->idcg10 : 0;
                    topics_seen++;
                }
                nb = 0;
            }
            if (p >= end) break;
            if (tl && dl) {
                if (next) { bt = t; btl = tl; tp = topic_of(t, tl, 0); }
                rows[nb].score = strtod(sc, NULL); rows[nb].doc = d; rows[nb].dlen = dl;
                rows[nb].grade = tp ? grade_of(tp, J, d, dl) : 0;
                nb++;
            }
            p = nl + 1;
        }
        printf("%s %d AP=%.17g nDCG@10=%.17g\n", tag, topics_seen, topics_seen ? sum_ap / topics_seen : 0.0,
               topics_seen ? sum_ndcg / topics_seen : 0.0);
        free(rows);
        free(buf);
    }
    return 0;
}
