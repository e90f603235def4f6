/*
 * Column scanner for whitespace-separated text files (TREC runs and qrels).
 *
 * One call reads a whole buffer and returns the wanted columns as packed buffers that numpy wraps without
 * copying: fixed-width byte strings (plus a 64-bit FNV-1a hash of each, unless the caller does without them),
 * doubles, or 64-bit integers.
 * Errors carry the 1-based line number and 0-based field index so the caller can name file:line:field.
 * Large buffers are cut at newlines into chunks scanned on separate threads (the GIL is released); every
 * chunk writes straight into its slice of the shared outputs, so nothing is concatenated afterwards.
 * The pure-Python `scan_python` in scan.py has the same contract and is the tests' reference.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <errno.h>
#include <float.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#if defined(__unix__) || defined(__APPLE__)
#include <sys/mman.h>
#endif

#define MAX_COLS 16
#define MAX_CHUNKS 8
#define NUMBUF 128

static PyObject *ScanError;
static unsigned char SPACE[256];

static inline int is_space(unsigned char c) { return SPACE[c]; }

static const double POW10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                               1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

#if (defined(__x86_64__) || defined(__i386__)) && LDBL_MANT_DIG == 64
#define HAVE_X87_LONG_DOUBLE 1
static const long double POW10L[] = {1e0L,  1e1L,  1e2L,  1e3L,  1e4L,  1e5L,  1e6L,  1e7L,  1e8L,  1e9L,
                                     1e10L, 1e11L, 1e12L, 1e13L, 1e14L, 1e15L, 1e16L, 1e17L, 1e18L, 1e19L,
                                     1e20L, 1e21L, 1e22L, 1e23L, 1e24L, 1e25L, 1e26L, 1e27L};

/* 16 to 19 significant digits (scores printed with full double precision, as CLEF runs are): the mantissa and
   10^frac (frac <= 27: 5^27 < 2^64) are exact in x87's 64-bit significand, so the quotient is one correct
   rounding of the true value; rounding it again to double is then correct unless it lies exactly halfway
   between two doubles (its 11 extra bits are 10000000000), when the caller uses strtod. */
static int extended_decimal(uint64_t mant, int frac, double *out) {
    long double q = (long double)mant;
    if (frac) q = q / POW10L[frac];
    if (q != 0.0L) {
        uint64_t significand;
        memcpy(&significand, &q, sizeof(significand)); /* x87 layout: the 64-bit significand comes first */
        if ((significand & 0x7ffULL) == 0x400ULL) return 0;
    }
    *out = (double)q;
    return 1;
}
#endif

/* Plain decimals with at most 15 significant digits and at most 22 fraction digits are exact in one rounding
   (Clinger's fast path), so this gives the same double as strtod; 16 to 19 digits go through
   `extended_decimal` where the platform has x87 long doubles; anything else returns 0 and the caller uses
   strtod. */
static int fast_decimal(const char *s, Py_ssize_t n, double *out) {
    Py_ssize_t i = 0;
    int neg = 0;
    if (i < n && (s[i] == '+' || s[i] == '-')) neg = s[i++] == '-';
    uint64_t mant = 0;
    int digits = 0, frac = 0, seen = 0;
    while (i < n && s[i] >= '0' && s[i] <= '9') {
        if (mant || s[i] != '0') digits++;
        mant = mant * 10 + (uint64_t)(s[i] - '0');
        i++;
        seen = 1;
        if (digits > 19) return 0;
    }
    if (i < n && s[i] == '.') {
        i++;
        while (i < n && s[i] >= '0' && s[i] <= '9') {
            if (mant || s[i] != '0') digits++;
            mant = mant * 10 + (uint64_t)(s[i] - '0');
            frac++;
            i++;
            seen = 1;
            if (digits > 19) return 0;
        }
    }
    if (!seen || i != n) return 0;
    double v;
    if (digits <= 15 && frac <= 22) {
        v = (double)mant;
        if (frac) v = v / POW10[frac];
    } else {
#ifdef HAVE_X87_LONG_DOUBLE
        if (frac > 27 || !extended_decimal(mant, frac, &v)) return 0;
#else
        return 0;
#endif
    }
    *out = neg ? -v : v;
    return 1;
}

typedef struct {
    /* input */
    const unsigned char *data;
    Py_ssize_t begin, end;
    const char *spec;
    Py_ssize_t nspec, min_fields, max_fields;
    int skip_comments;
    /* pass 1 results */
    Py_ssize_t nrec, nlines;
    Py_ssize_t last_record_line; /* this chunk's line number (from its first line) of its last record, 0: none */
    Py_ssize_t widths[MAX_COLS];
    /* pass 2 targets */
    Py_ssize_t rec_offset, line_offset;
    const Py_ssize_t *out_widths;
    char **outs;
    uint64_t **hashes; /* NULL per string column when the caller asked for no hashes */
    char **nums;
    int32_t *line_numbers; /* 32-bit: the scan refuses inputs of 2**31 lines or more; NULL when not stored */
    int int_sizes[MAX_COLS]; /* bytes per value of each integer column: 1, 2, 4 or 8 */
    /* drop-behind: the buffer is a read-only file mapping; pass 2 releases the pages it has read as it goes, so
       the file and the columns it fills are never resident whole together (pass 1 keeps them: it allocates
       nothing, and each page is then faulted in once) */
    int drop_behind;
    Py_ssize_t dropped;
    /* first error in this chunk */
    const char *err_code;
    Py_ssize_t err_line, err_field, err_off, err_len;
} chunk_t;

#define DROP_STEP ((Py_ssize_t)4 << 20)

static void drop_pages(chunk_t *c, Py_ssize_t pos, Py_ssize_t step) {
#if defined(MADV_DONTNEED)
    if (!c->drop_behind || pos - c->dropped < step) return;
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t from = ((uintptr_t)(c->data + c->dropped) + page - 1) & ~(page - 1);
    uintptr_t to = (uintptr_t)(c->data + pos) & ~(page - 1);
    if (to > from) madvise((void *)from, to - from, MADV_DONTNEED);
    c->dropped = pos;
#else
    (void)c;
    (void)pos;
    (void)step;
#endif
}

/* Release the pages behind `pos` every DROP_STEP bytes. */
static void drop_scanned(chunk_t *c, Py_ssize_t pos) { drop_pages(c, pos, DROP_STEP); }

/* Release the rest of a scanned chunk (its last few MiB: with four chunks, two files of two threads each, they
   stayed resident until the maps were closed). */
static void drop_chunk(chunk_t *c) { drop_pages(c, c->end, 1); }

static void set_error(chunk_t *c, const char *code, Py_ssize_t line, Py_ssize_t field, Py_ssize_t off,
                      Py_ssize_t len) {
    c->err_code = code;
    c->err_line = line;
    c->err_field = field;
    c->err_off = off;
    c->err_len = len > 200 ? 200 : len;
}

/* Pass 1: count records and lines, check field counts, measure string widths. */
static void *pass1(void *arg) {
    chunk_t *c = (chunk_t *)arg;
    const unsigned char *data = c->data;
    Py_ssize_t pos = c->begin, lineno = 0;
    c->dropped = c->begin;
    while (pos < c->end) {
        lineno++;
        const unsigned char *nl = memchr(data + pos, '\n', (size_t)(c->end - pos));
        Py_ssize_t end = nl ? (Py_ssize_t)(nl - data) : c->end;
        Py_ssize_t p = pos, nf = 0;
        while (p < end && is_space(data[p])) p++;
        if (p < end && !(data[p] == '#' && c->skip_comments)) {
            while (p < end) {
                Py_ssize_t ts = p;
                while (p < end && !is_space(data[p])) p++;
                if (nf < c->nspec && p - ts > c->widths[nf]) c->widths[nf] = p - ts;
                nf++;
                while (p < end && is_space(data[p])) p++;
            }
            if (nf < c->min_fields || (c->max_fields >= 0 && nf > c->max_fields)) {
                Py_ssize_t le = end;
                if (le > pos && data[le - 1] == '\r') le--;
                set_error(c, "fields", lineno, nf, pos, le - pos);
                return NULL;
            }
            c->nrec++;
            c->last_record_line = lineno;
        }
        pos = end + 1;
        /* released behind pass 1 too: read again by pass 2 from the page cache, the file is never resident whole
           (beside the columns of the other file scanned at the same time and the imports, it was the peak of a
           small evaluation's memory) */
        drop_scanned(c, pos);
    }
    drop_chunk(c);
    c->nlines = lineno;
    return NULL;
}

/* Pass 2: tokenize again and write this chunk's slice of every output column. */
static void *pass2(void *arg) {
    chunk_t *c = (chunk_t *)arg;
    const unsigned char *data = c->data;
    char small[NUMBUF];
    char *big = NULL;
    Py_ssize_t big_size = 0;
    Py_ssize_t pos = c->begin, lineno = c->line_offset, r = c->rec_offset;
    c->dropped = c->begin;
    while (pos < c->end) {
        lineno++;
        const unsigned char *nl = memchr(data + pos, '\n', (size_t)(c->end - pos));
        Py_ssize_t end = nl ? (Py_ssize_t)(nl - data) : c->end;
        Py_ssize_t p = pos, nf = 0;
        while (p < end && is_space(data[p])) p++;
        if (p >= end || (data[p] == '#' && c->skip_comments)) {
            pos = end + 1;
            continue;
        }
        if (c->line_numbers != NULL) c->line_numbers[r] = (int32_t)lineno;
        while (p < end && nf < c->nspec) {
            Py_ssize_t ts = p;
            while (p < end && !is_space(data[p])) p++;
            const unsigned char *t = data + ts;
            Py_ssize_t n = p - ts;
            char kind = c->spec[nf];
            if (kind == 's') {
                Py_ssize_t w = c->out_widths[nf];
                char *dst = c->outs[nf] + r * w;
                memcpy(dst, t, (size_t)n);
                if (n < w) memset(dst + n, 0, (size_t)(w - n));
                if (c->hashes[nf] != NULL) {
                    uint64_t h = 1469598103934665603ULL;
                    for (Py_ssize_t k = 0; k < n; k++) {
                        h ^= t[k];
                        h *= 1099511628211ULL;
                    }
                    c->hashes[nf][r] = h;
                }
            } else if (kind == 'f') {
                double v;
                if (!fast_decimal((const char *)t, n, &v)) {
                    char *tmp = small;
                    if (n >= NUMBUF) {
                        if (n + 1 > big_size) {
                            char *grown = (char *)realloc(big, (size_t)n + 1);
                            if (grown == NULL) {
                                set_error(c, "memory", lineno, nf, ts, 0);
                                goto out;
                            }
                            big = grown;
                            big_size = n + 1;
                        }
                        tmp = big;
                    }
                    memcpy(tmp, t, (size_t)n);
                    tmp[n] = '\0';
                    char *endp = NULL;
                    v = strtod(tmp, &endp);
                    if (n == 0 || endp != tmp + n || isnan(v) || memchr(tmp, 'x', (size_t)n) ||
                        memchr(tmp, 'X', (size_t)n)) {
                        set_error(c, "float", lineno, nf, ts, n);
                        goto out;
                    }
                }
                ((double *)c->nums[nf])[r] = v;
            } else if (kind == 'i') {
                int ok = n > 0;
                Py_ssize_t k = (ok && (t[0] == '+' || t[0] == '-')) ? 1 : 0;
                if (k == n || n - k > 18) ok = 0; /* 18 digits always fit in int64 */
                int64_t v = 0;
                for (Py_ssize_t q = k; q < n && ok; q++) {
                    if (t[q] < '0' || t[q] > '9')
                        ok = 0;
                    else
                        v = v * 10 + (t[q] - '0');
                }
                if (!ok) {
                    set_error(c, "int", lineno, nf, ts, n);
                    goto out;
                }
                if (t[0] == '-') v = -v;
                /* the column's width was chosen from its longest token (`int_size`): every value fits */
                switch (c->int_sizes[nf]) {
                case 1: ((int8_t *)c->nums[nf])[r] = (int8_t)v; break;
                case 2: ((int16_t *)c->nums[nf])[r] = (int16_t)v; break;
                case 4: ((int32_t *)c->nums[nf])[r] = (int32_t)v; break;
                default: ((int64_t *)c->nums[nf])[r] = v;
                }
            }
            nf++;
            while (p < end && is_space(data[p])) p++;
        }
        r++;
        pos = end + 1;
        drop_scanned(c, pos);
    }
    drop_chunk(c);
out:
    free(big);
    return NULL;
}

static PyObject *raise_scan(const char *code, Py_ssize_t line, Py_ssize_t field, const char *tok,
                            Py_ssize_t toklen) {
    if (strcmp(code, "memory") == 0) return PyErr_NoMemory();
    PyObject *t = PyBytes_FromStringAndSize(tok, toklen);
    if (t == NULL) return NULL;
    PyObject *v = Py_BuildValue("(snnN)", code, line, field, t);
    if (v != NULL) {
        PyErr_SetObject(ScanError, v);
        Py_DECREF(v);
    }
    return NULL;
}

/* Bytes per value of an integer column whose longest token has `width` characters (sign included): 2 characters
   hold at most 99 in magnitude, 4 at most 9999, 9 at most 999999999, so int8, int16 and int32 take every value
   such tokens can hold; longer tokens (at most 18 digits, a sign besides) take int64. */
static int int_size(Py_ssize_t width) {
    if (width <= 2) return 1;
    if (width <= 4) return 2;
    if (width <= 9) return 4;
    return 8;
}

/* Run `fn` on every chunk: chunks 1.. on new threads, chunk 0 on this one. */
static void run_chunks(void *(*fn)(void *), chunk_t *chunks, int nchunks) {
    pthread_t threads[MAX_CHUNKS];
    int started[MAX_CHUNKS] = {0};
    for (int i = 1; i < nchunks; i++) started[i] = pthread_create(&threads[i], NULL, fn, &chunks[i]) == 0;
    fn(&chunks[0]);
    for (int i = 1; i < nchunks; i++) {
        if (started[i])
            pthread_join(threads[i], NULL);
        else
            fn(&chunks[i]);
    }
}

/* The first error in file order: chunks are in file order, so the first chunk that has one. */
static chunk_t *first_error(chunk_t *chunks, int nchunks) {
    for (int i = 0; i < nchunks; i++)
        if (chunks[i].err_code != NULL) return &chunks[i];
    return NULL;
}

/*
 * scan(data, spec, min_fields, max_fields, skip_comments, nthreads, drop_behind, with_hashes)
 *   drop_behind: data is a read-only mapping of a file: release its pages as they are scanned (never set it for
 *   memory of the process's own, whose pages MADV_DONTNEED would zero).
 *   with_hashes (default true): false leaves the string columns' hashes out, neither computed nor allocated (8
 *   bytes a line per string column that a caller joining on the strings themselves never reads).
 *   spec: one char per leading field: 's' string, 'f' float, 'i' integer, '.' ignored.
 *   max_fields < 0 means no upper limit.
 * Returns (n_records, line_numbers(int32 bytes) or None, columns) where columns has, per non-'.' spec char,
 * (width, bytes, hashes or None) / bytes(double) / (value size, bytes(int8, int16, int32 or int64)).
 * line_numbers is None when the records are lines 1 to n_records (no blank or comment line before the last
 * record): line = record + 1, 4 bytes a record not stored. An integer column takes the narrowest of the four
 * types that holds any token as long as its longest (`int_size`).
 */
static PyObject *scan(PyObject *self, PyObject *args) {
    Py_buffer buf;
    const char *spec;
    Py_ssize_t min_fields, max_fields;
    int skip_comments, nthreads = 1, drop_behind = 0, with_hashes = 1;
    if (!PyArg_ParseTuple(args, "y*snnp|ipp", &buf, &spec, &min_fields, &max_fields, &skip_comments, &nthreads,
                          &drop_behind, &with_hashes))
        return NULL;
    const unsigned char *data = (const unsigned char *)buf.buf;
    Py_ssize_t size = buf.len;
    Py_ssize_t nspec = (Py_ssize_t)strlen(spec);
    PyObject *result = NULL, *columns = NULL, *lines_obj = NULL;
    if (nspec > MAX_COLS) {
        PyErr_SetString(PyExc_ValueError, "too many columns in spec");
        goto done;
    }
    for (Py_ssize_t i = 0; i < nspec; i++) {
        if (strchr("sfi.", spec[i]) == NULL) {
            PyErr_Format(PyExc_ValueError, "unknown spec character %c", spec[i]);
            goto done;
        }
    }
    if (nthreads < 1) nthreads = 1;
    if (nthreads > MAX_CHUNKS) nthreads = MAX_CHUNKS;

    chunk_t chunks[MAX_CHUNKS];
    memset(chunks, 0, sizeof(chunks));
    int nchunks = 0;
    Py_ssize_t begin = 0;
    for (int i = 0; i < nthreads && begin < size; i++) {
        Py_ssize_t end = size;
        if (i < nthreads - 1) {
            Py_ssize_t target = begin + (size - begin) / (nthreads - i);
            const unsigned char *nl = target < size ? memchr(data + target, '\n', (size_t)(size - target)) : NULL;
            end = nl ? (Py_ssize_t)(nl - data) + 1 : size;
        }
        chunk_t *c = &chunks[nchunks++];
        c->data = data;
        c->begin = begin;
        c->end = end;
        c->spec = spec;
        c->nspec = nspec;
        c->min_fields = min_fields;
        c->max_fields = max_fields;
        c->skip_comments = skip_comments;
        c->drop_behind = drop_behind;
        begin = end;
    }
    if (nchunks == 0) {
        chunks[0].data = data;
        nchunks = 1;
    }

    Py_BEGIN_ALLOW_THREADS
    run_chunks(pass1, chunks, nchunks);
    Py_END_ALLOW_THREADS

    Py_ssize_t nrec = 0, nlines = 0, last_record_line = 0;
    Py_ssize_t widths[MAX_COLS] = {0};
    for (int i = 0; i < nchunks; i++) {
        chunk_t *c = &chunks[i];
        if (c->err_code != NULL) {
            raise_scan(c->err_code, c->err_line + nlines, c->err_field, (const char *)data + c->err_off,
                       c->err_len);
            goto done;
        }
        c->rec_offset = nrec;
        c->line_offset = nlines;
        nrec += c->nrec;
        if (c->last_record_line > 0) last_record_line = nlines + c->last_record_line;
        nlines += c->nlines;
        for (Py_ssize_t k = 0; k < nspec; k++)
            if (c->widths[k] > widths[k]) widths[k] = c->widths[k];
    }

    char *outs[MAX_COLS] = {0};
    uint64_t *hashes[MAX_COLS] = {0};
    char *nums[MAX_COLS] = {0};
    if (nlines >= (Py_ssize_t)INT32_MAX) {
        PyErr_SetString(PyExc_OverflowError, "input of 2**31 lines or more");
        goto done;
    }
    /* lines strictly increase, so the last record on line n_records means records on lines 1 to n_records */
    lines_obj = last_record_line == nrec ? Py_NewRef(Py_None)
                                         : PyBytes_FromStringAndSize(NULL, (Py_ssize_t)sizeof(int32_t) * nrec);
    columns = PyList_New(0);
    if (lines_obj == NULL || columns == NULL) goto done;
    for (Py_ssize_t k = 0; k < nspec; k++) {
        char kind = spec[k];
        PyObject *item = NULL;
        if (kind == '.') continue;
        if (kind == 's') {
            if (widths[k] == 0) widths[k] = 1;
            PyObject *sb = PyBytes_FromStringAndSize(NULL, widths[k] * nrec);
            PyObject *hb = with_hashes ? PyBytes_FromStringAndSize(NULL, (Py_ssize_t)sizeof(uint64_t) * nrec)
                                       : Py_NewRef(Py_None);
            if (sb == NULL || hb == NULL) {
                Py_XDECREF(sb);
                Py_XDECREF(hb);
                goto done;
            }
            outs[k] = PyBytes_AS_STRING(sb);
            hashes[k] = with_hashes ? (uint64_t *)PyBytes_AS_STRING(hb) : NULL;
            item = Py_BuildValue("(nNN)", widths[k], sb, hb);
        } else if (kind == 'f') {
            item = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)sizeof(double) * nrec);
            if (item != NULL) nums[k] = PyBytes_AS_STRING(item);
        } else {
            int value_size = int_size(widths[k]);
            for (int i = 0; i < nchunks; i++) chunks[i].int_sizes[k] = value_size;
            PyObject *ib = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)value_size * nrec);
            if (ib == NULL) goto done;
            nums[k] = PyBytes_AS_STRING(ib);
            item = Py_BuildValue("(iN)", value_size, ib);
        }
        if (item == NULL) goto done;
        int failed = PyList_Append(columns, item) < 0;
        Py_DECREF(item);
        if (failed) goto done;
    }
    for (int i = 0; i < nchunks; i++) {
        chunks[i].out_widths = widths;
        chunks[i].outs = outs;
        chunks[i].hashes = hashes;
        chunks[i].nums = nums;
        chunks[i].line_numbers = lines_obj == Py_None ? NULL : (int32_t *)PyBytes_AS_STRING(lines_obj);
    }

    Py_BEGIN_ALLOW_THREADS
    run_chunks(pass2, chunks, nchunks);
    Py_END_ALLOW_THREADS

    chunk_t *bad = first_error(chunks, nchunks);
    if (bad != NULL) {
        raise_scan(bad->err_code, bad->err_line, bad->err_field, (const char *)data + bad->err_off, bad->err_len);
        goto done;
    }
    result = Py_BuildValue("(nOO)", nrec, lines_obj, columns);

done:
    Py_XDECREF(lines_obj);
    Py_XDECREF(columns);
    PyBuffer_Release(&buf);
    return result;
}

/* One field of PostgreSQL's COPY text format from a fixed-width byte string (ends at its first NUL, as numpy's
   fixed-width bytes do): backslash, tab, newline and carriage return escaped, as ingest.copy_field escapes them. */
static char *put_copy_field(char *out, const char *s, Py_ssize_t width) {
    for (Py_ssize_t i = 0; i < width && s[i] != '\0'; i++) {
        char c = s[i];
        switch (c) {
        case '\\': *out++ = '\\'; *out++ = '\\'; break;
        case '\t': *out++ = '\\'; *out++ = 't'; break;
        case '\n': *out++ = '\\'; *out++ = 'n'; break;
        case '\r': *out++ = '\\'; *out++ = 'r'; break;
        default: *out++ = c;
        }
    }
    return out;
}

static char *put_int(char *out, long long value) {
    char digits[24];
    int n = 0;
    unsigned long long v = value < 0 ? 0ULL - (unsigned long long)value : (unsigned long long)value;
    do {
        digits[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    if (value < 0) *out++ = '-';
    while (n) *out++ = digits[--n];
    return out;
}

/* entry_lines(prefix, first_rank, docs, width, scores, flags, flag_width, start, stop) -> bytes: the COPY text
   lines ``<prefix><rank>\t<doc>\t<score>\t<flag>\n`` of rows start..stop-1 of a queue (rank first_rank + row),
   byte for byte what ingest.entry_lines_python writes: ``docs`` and ``flags`` fixed-width byte strings (numpy
   ``S<width>`` buffers; ``flags`` None: every flag NULL, ``\N``), ``scores`` native doubles written as repr()
   writes them. */
static PyObject *entry_lines(PyObject *self, PyObject *args) {
    Py_buffer prefix, docs, scores, flags;
    PyObject *flags_obj, *result = NULL;
    long long first_rank;
    Py_ssize_t width, flag_width, start, stop;
    if (!PyArg_ParseTuple(args, "y*Ly*ny*Onnn", &prefix, &first_rank, &docs, &width, &scores, &flags_obj,
                          &flag_width, &start, &stop))
        return NULL;
    int have_flags = flags_obj != Py_None;
    if (have_flags && PyObject_GetBuffer(flags_obj, &flags, PyBUF_SIMPLE) < 0) {
        PyBuffer_Release(&prefix);
        PyBuffer_Release(&docs);
        PyBuffer_Release(&scores);
        return NULL;
    }
    if (width < 1 || start < 0 || stop < start || docs.len < stop * width ||
        scores.len < stop * (Py_ssize_t)sizeof(double) ||
        (have_flags && (flag_width < 1 || flags.len < stop * flag_width))) {
        PyErr_SetString(PyExc_ValueError, "entry_lines: buffers shorter than the rows asked for");
        goto done;
    }
    Py_ssize_t per_row = prefix.len + 21 + 1 + 2 * width + 1 + 32 + 1 + (have_flags ? 2 * flag_width : 2) + 1;
    result = PyBytes_FromStringAndSize(NULL, (stop - start) * per_row);
    if (result == NULL) goto done;
    char *out = PyBytes_AS_STRING(result);
    const char *doc_base = (const char *)docs.buf;
    const char *flag_base = have_flags ? (const char *)flags.buf : NULL;
    const double *score_base = (const double *)scores.buf;
    for (Py_ssize_t row = start; row < stop; row++) {
        memcpy(out, prefix.buf, (size_t)prefix.len);
        out += prefix.len;
        out = put_int(out, first_rank + row);
        *out++ = '\t';
        out = put_copy_field(out, doc_base + row * width, width);
        *out++ = '\t';
        char *text = PyOS_double_to_string(score_base[row], 'r', 0, Py_DTSF_ADD_DOT_0, NULL);
        if (text == NULL) {
            Py_CLEAR(result);
            goto done;
        }
        size_t n = strlen(text);
        memcpy(out, text, n);
        out += n;
        PyMem_Free(text);
        *out++ = '\t';
        if (have_flags) {
            out = put_copy_field(out, flag_base + row * flag_width, flag_width);
        } else {
            *out++ = '\\';
            *out++ = 'N';
        }
        *out++ = '\n';
    }
    if (_PyBytes_Resize(&result, out - PyBytes_AS_STRING(result)) < 0) result = NULL;

done:
    if (have_flags) PyBuffer_Release(&flags);
    PyBuffer_Release(&prefix);
    PyBuffer_Release(&docs);
    PyBuffer_Release(&scores);
    return result;
}

static PyMethodDef methods[] = {
    {"scan", scan, METH_VARARGS, "Scan whitespace-separated columns from a buffer."},
    {"entry_lines", entry_lines, METH_VARARGS, "COPY text lines of a queue's entries."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef moduledef = {PyModuleDef_HEAD_INIT, "_textscan", NULL, -1, methods};

PyMODINIT_FUNC PyInit__textscan(void) {
    memset(SPACE, 0, sizeof(SPACE));
    SPACE[' '] = SPACE['\t'] = SPACE['\n'] = SPACE['\v'] = SPACE['\f'] = SPACE['\r'] = 1;
    PyObject *m = PyModule_Create(&moduledef);
    if (m == NULL) return NULL;
    ScanError = PyErr_NewException("_textscan.ScanError", PyExc_ValueError, NULL);
    if (ScanError == NULL) {
        Py_DECREF(m);
        return NULL;
    }
    Py_INCREF(ScanError);
    if (PyModule_AddObject(m, "ScanError", ScanError) < 0) {
        Py_DECREF(ScanError);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
