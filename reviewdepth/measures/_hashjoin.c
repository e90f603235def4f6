/*
 * Hash join of a run with its qrels on (query code, docno), with both duplicate checks, in one linear pass each.
 *
 * The sort-based join in ranking.py (`keyed_rows` + `searchsorted`) sorts the keys of both files twice over;
 * here the work is one pass per query: that query's qrels rows go into an open-addressing table (a repeated pair
 * is the first qrels row found already present), then its kept run rows, in ascending file order, probe that
 * table for their qrels row and go into a second table (a repeated pair is the first run row found already
 * present: the earliest line completing a pair, the line trec_eval's error would point at; across queries the
 * lowest such row wins). Tables per query stay in the CPU caches for typical runs (hundreds to tens of
 * thousands of documents per query); one huge query still works, with its slots prefetched ahead.
 * Rows are taken query by query straight from the columns when each query is one contiguous block (the usual
 * layout of both files), else through a counting sort of the row numbers by query (4 bytes per row).
 *
 * Docnos come as numpy fixed-width byte strings; numpy drops trailing NUL bytes, so equality and the hash use the
 * bytes before the trailing NULs, which makes docnos of different column widths (run vs qrels) compare as numpy
 * and Python's bytes() do. Equal keys are confirmed by comparing query codes and docno bytes, so the result is
 * exact whatever the hash does. A table holds a 32-bit row number and a 32-bit tag of each key's hash (about 11
 * bytes per row of the largest query at the load factor used) and is freed before returning.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* One 64-bit slot per entry: the key's hash tag in the high half, row + 1 in the low half (0 = empty), so a
   probe touches one cache line. */
typedef struct {
    uint64_t *slots;
    uint64_t capacity;
} Table;

#define LOOKAHEAD 16
#define SMALL_TABLE_SLOTS (64 * 1024) /* 512 KiB of slots */

typedef struct {
    const int32_t *codes;
    const unsigned char *docnos;
    Py_ssize_t width;
} Side;

static inline Py_ssize_t docno_length(const unsigned char *s, Py_ssize_t width) {
    while (width > 0 && s[width - 1] == 0) width--;
    return width;
}

static inline uint64_t finish(uint64_t h) {
    h ^= h >> 32;
    h *= 0xd6e8feb86659fd93ULL;
    h ^= h >> 32;
    h *= 0xd6e8feb86659fd93ULL;
    h ^= h >> 32;
    return h;
}

static inline uint64_t key_hash(int32_t code, const unsigned char *s, Py_ssize_t len) {
    uint64_t h = ((uint64_t)code + 1) * 0x9E3779B97F4A7C15ULL ^ (uint64_t)len;
    Py_ssize_t i = 0;
    for (; i + 8 <= len; i += 8) {
        uint64_t w;
        memcpy(&w, s + i, 8);
        h = (h ^ w) * 0xff51afd7ed558ccdULL;
        h ^= h >> 31;
    }
    if (i < len) {
        uint64_t w = 0;
        memcpy(&w, s + i, (size_t)(len - i));
        h = (h ^ w) * 0xff51afd7ed558ccdULL;
        h ^= h >> 31;
    }
    return finish(h);
}

/* load factor <= 0.5: a linear probe for an absent key (every insert) then reads 2.5 slots on average, against
   6 at 0.7 */
static inline uint64_t capacity_for(Py_ssize_t n) { return 2 * (uint64_t)n + 16; }

static int table_init(Table *t, Py_ssize_t largest) {
    t->capacity = 0;
    t->slots = malloc(capacity_for(largest) * sizeof(uint64_t));
    return t->slots == NULL ? -1 : 0;
}

static void table_reset(Table *t, Py_ssize_t n) {
    t->capacity = capacity_for(n);
    memset(t->slots, 0, t->capacity * sizeof(uint64_t));
}

static void table_free(Table *t) {
    free(t->slots);
    t->slots = NULL;
}

static inline uint64_t home_slot(const Table *t, uint64_t h) {
    return (uint64_t)(((unsigned __int128)h * t->capacity) >> 64);
}

static inline int bytes_equal(const unsigned char *a, const unsigned char *b, Py_ssize_t n) {
    Py_ssize_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t x, y;
        memcpy(&x, a + i, 8);
        memcpy(&y, b + i, 8);
        if (x != y) return 0;
    }
    for (; i < n; i++)
        if (a[i] != b[i]) return 0;
    return 1;
}

static inline int same_key(const Side *a, Py_ssize_t ra, const Side *b, Py_ssize_t rb, Py_ssize_t len_b) {
    if (a->codes[ra] != b->codes[rb]) return 0;
    const unsigned char *da = a->docnos + ra * a->width;
    if (docno_length(da, a->width) != len_b) return 0;
    return bytes_equal(da, b->docnos + rb * b->width, len_b);
}

/* The row of `owner` holding the key of row `row` of `probe`, or -1. */
static inline Py_ssize_t table_find(const Table *t, const Side *owner, const Side *probe, Py_ssize_t row,
                                    uint64_t h, Py_ssize_t len) {
    uint64_t tag = h << 32; /* the low half: the home slot already spends the high bits */
    uint64_t i = home_slot(t, h);
    for (;;) {
        uint64_t slot = t->slots[i];
        if (slot == 0) return -1;
        Py_ssize_t r = (Py_ssize_t)(slot & 0xffffffffULL) - 1;
        if ((slot & 0xffffffff00000000ULL) == tag && same_key(owner, r, probe, row, len)) return r;
        if (++i == t->capacity) i = 0;
    }
}

/* Insert row `row` of `side`; returns the row already holding its key, or -1 when it was new. */
static inline Py_ssize_t table_insert(Table *t, const Side *side, Py_ssize_t row, uint64_t h, Py_ssize_t len) {
    uint64_t tag = h << 32;
    uint64_t i = home_slot(t, h);
    for (;;) {
        uint64_t slot = t->slots[i];
        if (slot == 0) {
            t->slots[i] = tag | ((uint64_t)row + 1);
            return -1;
        }
        Py_ssize_t r = (Py_ssize_t)(slot & 0xffffffffULL) - 1;
        if ((slot & 0xffffffff00000000ULL) == tag && same_key(side, r, side, row, len)) return r;
        if (++i == t->capacity) i = 0;
    }
}

typedef struct {
    Py_ssize_t row, len;
    uint64_t hash;
} Pending;

/* The rows of each query code, ascending: a range of the columns when the code's rows are contiguous for every
   code (`rows` NULL), else `rows[start[c]..start[c+1]]` from a stable counting sort. */
typedef struct {
    Py_ssize_t *start; /* ncodes + 1 */
    Py_ssize_t *first; /* ncodes: first row of each code in the blocked layout */
    uint32_t *rows;
    Py_ssize_t largest;
} Groups;

static void groups_free(Groups *g) {
    free(g->start);
    free(g->first);
    free(g->rows);
}

static int groups_build(Groups *g, const int32_t *codes, Py_ssize_t n, const unsigned char *keep,
                        Py_ssize_t ncodes) {
    g->start = calloc((size_t)ncodes + 1, sizeof(Py_ssize_t));
    g->first = malloc(((size_t)ncodes + 1) * sizeof(Py_ssize_t));
    g->rows = NULL;
    g->largest = 0;
    if (g->start == NULL || g->first == NULL) return -1;
    Py_ssize_t *last = malloc(((size_t)ncodes + 1) * sizeof(Py_ssize_t));
    if (last == NULL) return -1;
    for (Py_ssize_t c = 0; c < ncodes; c++) g->first[c] = -1;
    for (Py_ssize_t i = 0; i < n; i++) {
        if (keep != NULL && !keep[i]) continue;
        int32_t c = codes[i];
        if (g->first[c] < 0) g->first[c] = i;
        last[c] = i;
        g->start[c + 1]++;
    }
    int blocked = 1;
    for (Py_ssize_t c = 0; c < ncodes; c++) {
        Py_ssize_t count = g->start[c + 1];
        if (count > g->largest) g->largest = count;
        if (count && last[c] - g->first[c] + 1 != count) blocked = 0;
        g->start[c + 1] += g->start[c];
    }
    free(last);
    if (blocked) return 0;
    g->rows = malloc((size_t)(n > 0 ? n : 1) * sizeof(uint32_t));
    Py_ssize_t *fill = malloc(((size_t)ncodes + 1) * sizeof(Py_ssize_t));
    if (g->rows == NULL || fill == NULL) {
        free(fill);
        return -1;
    }
    memcpy(fill, g->start, (size_t)ncodes * sizeof(Py_ssize_t));
    for (Py_ssize_t i = 0; i < n; i++) {
        if (keep != NULL && !keep[i]) continue;
        g->rows[fill[codes[i]]++] = (uint32_t)i;
    }
    free(fill);
    return 0;
}

static inline Py_ssize_t group_row(const Groups *g, Py_ssize_t c, Py_ssize_t k) {
    return g->rows != NULL ? (Py_ssize_t)g->rows[g->start[c] + k] : g->first[c] + k;
}

/* Insert the rows of code c of `side` into `t` (reset for them) in ascending order; stop at the first row whose
   key is already present and return it (with the row holding the key in *earlier), else -1. With `probe` set,
   each new row's match in `probe` (a table of `owner` rows) is written to qrow. */
static Py_ssize_t insert_group(Table *t, const Side *side, const Groups *g, Py_ssize_t c, const Table *probe,
                               const Side *owner, int32_t *qrow, Py_ssize_t *earlier) {
    Py_ssize_t n = g->start[c + 1] - g->start[c];
    table_reset(t, n);
    if (t->capacity <= SMALL_TABLE_SLOTS && (probe == NULL || probe->capacity <= SMALL_TABLE_SLOTS)) {
        /* the tables sit in the L2 cache: no prefetching, no look-ahead ring */
        for (Py_ssize_t k = 0; k < n; k++) {
            Py_ssize_t row = group_row(g, c, k);
            const unsigned char *d = side->docnos + row * side->width;
            Py_ssize_t len = docno_length(d, side->width);
            uint64_t h = key_hash(side->codes[row], d, len);
            Py_ssize_t found = table_insert(t, side, row, h, len);
            if (found >= 0) {
                *earlier = found;
                return row;
            }
            if (qrow != NULL) qrow[row] = probe != NULL ? (int32_t)table_find(probe, owner, side, row, h, len) : -1;
        }
        return -1;
    }
    /* a large query's table outgrows the caches: hash LOOKAHEAD rows ahead and prefetch their slots, so the
       memory waits overlap instead of queueing one behind the other */
    Pending ring[LOOKAHEAD];
    Py_ssize_t next = 0;
    for (Py_ssize_t k = 0; k < n; k++) {
        while (next < n && next < k + LOOKAHEAD) {
            Pending *p = &ring[next % LOOKAHEAD];
            Py_ssize_t row = group_row(g, c, next);
            const unsigned char *d = side->docnos + row * side->width;
            p->row = row;
            p->len = docno_length(d, side->width);
            p->hash = key_hash(side->codes[row], d, p->len);
            __builtin_prefetch(&t->slots[home_slot(t, p->hash)], 1);
            if (probe != NULL) __builtin_prefetch(&probe->slots[home_slot(probe, p->hash)], 0);
            next++;
        }
        Pending *p = &ring[k % LOOKAHEAD];
        Py_ssize_t found = table_insert(t, side, p->row, p->hash, p->len);
        if (found >= 0) {
            *earlier = found;
            return p->row;
        }
        if (qrow != NULL)
            qrow[p->row] = probe != NULL ? (int32_t)table_find(probe, owner, side, p->row, p->hash, p->len) : -1;
    }
    return -1;
}

static int get_side(PyObject *codes_obj, PyObject *docnos_obj, Py_ssize_t width, Py_buffer *codes,
                    Py_buffer *docnos, Side *side, Py_ssize_t *n) {
    if (PyObject_GetBuffer(codes_obj, codes, PyBUF_C_CONTIGUOUS) < 0) return -1;
    if (PyObject_GetBuffer(docnos_obj, docnos, PyBUF_C_CONTIGUOUS) < 0) {
        PyBuffer_Release(codes);
        return -1;
    }
    *n = codes->len / (Py_ssize_t)sizeof(int32_t);
    if (width < 1 || docnos->len != *n * width || codes->len != *n * (Py_ssize_t)sizeof(int32_t)) {
        PyErr_SetString(PyExc_ValueError, "codes must be int32 and docnos one fixed-width string per code");
        PyBuffer_Release(codes);
        PyBuffer_Release(docnos);
        return -1;
    }
    if (*n >= (Py_ssize_t)UINT32_MAX) {
        PyErr_SetString(PyExc_OverflowError, "too many rows for the hash join");
        PyBuffer_Release(codes);
        PyBuffer_Release(docnos);
        return -1;
    }
    side->codes = (const int32_t *)codes->buf;
    side->docnos = (const unsigned char *)docnos->buf;
    side->width = width;
    return 0;
}

static int codes_in_range(const Side *side, Py_ssize_t n, Py_ssize_t ncodes) {
    for (Py_ssize_t i = 0; i < n; i++)
        if (side->codes[i] < 0 || side->codes[i] >= ncodes) return 0;
    return 1;
}

static PyObject *join(PyObject *self, PyObject *args) {
    PyObject *qc_obj, *qd_obj, *rc_obj, *rd_obj, *keep_obj;
    Py_ssize_t qwidth, rwidth, ncodes;
    if (!PyArg_ParseTuple(args, "nOOnOOnO", &ncodes, &qc_obj, &qd_obj, &qwidth, &rc_obj, &rd_obj, &rwidth,
                          &keep_obj))
        return NULL;
    Py_buffer qc, qd, rc, rd, kb;
    Side qs, rs;
    Py_ssize_t nq, nr;
    if (get_side(qc_obj, qd_obj, qwidth, &qc, &qd, &qs, &nq) < 0) return NULL;
    if (get_side(rc_obj, rd_obj, rwidth, &rc, &rd, &rs, &nr) < 0) {
        PyBuffer_Release(&qc);
        PyBuffer_Release(&qd);
        return NULL;
    }
    const unsigned char *keep = NULL;
    int have_keep = keep_obj != Py_None;
    PyObject *out = NULL, *qrow_obj = NULL;
    Groups qg = {0}, rg = {0};
    Table qt = {0}, rt = {0};
    if (have_keep) {
        if (PyObject_GetBuffer(keep_obj, &kb, PyBUF_C_CONTIGUOUS) < 0) {
            have_keep = 0;
            goto release;
        }
        keep = (const unsigned char *)kb.buf;
        if (kb.len != nr) {
            PyErr_SetString(PyExc_ValueError, "keep must have one byte per run row");
            goto release;
        }
    }
    if (ncodes < 0 || !codes_in_range(&qs, nq, ncodes) || !codes_in_range(&rs, nr, ncodes)) {
        PyErr_SetString(PyExc_ValueError, "query codes must lie in [0, ncodes)");
        goto release;
    }
    qrow_obj = PyByteArray_FromStringAndSize(NULL, nr * (Py_ssize_t)sizeof(int32_t));
    if (qrow_obj == NULL) goto release;
    int32_t *qrow = (int32_t *)PyByteArray_AS_STRING(qrow_obj);
    if (groups_build(&qg, qs.codes, nq, NULL, ncodes) < 0 || groups_build(&rg, rs.codes, nr, keep, ncodes) < 0 ||
        table_init(&qt, qg.largest) < 0 || table_init(&rt, rg.largest) < 0) {
        PyErr_NoMemory();
        goto release;
    }
    Py_ssize_t qdup = -1, rdup = -1, rfirst = -1;
    Py_BEGIN_ALLOW_THREADS
    if (keep != NULL)
        for (Py_ssize_t i = 0; i < nr; i++)
            if (!keep[i]) qrow[i] = -1;
    for (Py_ssize_t c = 0; c < ncodes; c++) {
        Py_ssize_t earlier, found = -1;
        int have_qrels = qg.start[c + 1] > qg.start[c];
        if (have_qrels) {
            found = insert_group(&qt, &qs, &qg, c, NULL, NULL, NULL, &earlier);
            if (found >= 0 && (qdup < 0 || found < qdup)) qdup = found;
        }
        if (qdup >= 0 || rg.start[c + 1] == rg.start[c]) continue; /* after a qrels duplicate only qrels matter */
        found = insert_group(&rt, &rs, &rg, c, have_qrels ? &qt : NULL, &qs, qrow, &earlier);
        if (found >= 0 && (rdup < 0 || found < rdup)) {
            rdup = found;
            rfirst = earlier;
        }
    }
    Py_END_ALLOW_THREADS
    out = Py_BuildValue("nnnO", qdup, rdup, rfirst, qrow_obj);
release:
    Py_XDECREF(qrow_obj);
    table_free(&qt);
    table_free(&rt);
    groups_free(&qg);
    groups_free(&rg);
    if (have_keep) PyBuffer_Release(&kb);
    PyBuffer_Release(&qc);
    PyBuffer_Release(&qd);
    PyBuffer_Release(&rc);
    PyBuffer_Release(&rd);
    return out;
}

static PyMethodDef methods[] = {
    {"join", join, METH_VARARGS,
     "join(ncodes, qrels_codes, qrels_docnos, qrels_width, run_codes, run_docnos, run_width, keep) -> "
     "(qrels_duplicate_row, run_duplicate_row, run_duplicate_first, qrels_row_per_run_row as int32 bytes)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef moduledef = {PyModuleDef_HEAD_INIT, "_hashjoin", NULL, -1, methods};

PyMODINIT_FUNC PyInit__hashjoin(void) { return PyModule_Create(&moduledef); }
