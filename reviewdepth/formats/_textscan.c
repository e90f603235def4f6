/*
 * Column scanner for whitespace-separated text files (TREC runs and qrels).
 *
 * One call reads a whole buffer and returns the wanted columns as packed
 * buffers that numpy wraps without copying: fixed-width byte strings (plus a
 * 64-bit FNV-1a hash of each), doubles, or 64-bit integers.  Errors carry the
 * 1-based line number and 0-based field index so the caller can name
 * file:line:field.  The pure-Python fallback in scan.py has the same contract
 * and is used by the tests as the reference.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MAX_COLS 16
#define NUMBUF 128

static PyObject *ScanError;

static unsigned char SPACE[256];

static inline int is_space(unsigned char c) { return SPACE[c]; }

static const double POW10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                               1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

/* Plain decimals with at most 15 significant digits and a power of ten <= 22 are exact in one rounding
   (Clinger's fast path), so this gives the same double as strtod; anything else returns 0 and the caller
   uses strtod. */
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
        if (digits > 15) return 0;
    }
    if (i < n && s[i] == '.') {
        i++;
        while (i < n && s[i] >= '0' && s[i] <= '9') {
            if (mant || s[i] != '0') digits++;
            mant = mant * 10 + (uint64_t)(s[i] - '0');
            frac++;
            i++;
            seen = 1;
            if (digits > 15) return 0;
        }
    }
    if (!seen || i != n || frac > 22) return 0;
    double v = (double)mant;
    if (frac) v = v / POW10[frac];
    *out = neg ? -v : v;
    return 1;
}

static PyObject *raise_scan(const char *code, Py_ssize_t line, Py_ssize_t field,
                            const char *tok, Py_ssize_t toklen) {
    PyObject *t = PyBytes_FromStringAndSize(tok, toklen);
    if (t == NULL) return NULL;
    PyObject *v = Py_BuildValue("(snnN)", code, line, field, t);
    if (v != NULL) {
        PyErr_SetObject(ScanError, v);
        Py_DECREF(v);
    }
    return NULL;
}

/*
 * scan(data, spec, min_fields, max_fields, skip_comments)
 *   spec: one char per leading field: 's' string, 'f' float, 'i' integer, '.' ignored.
 *   max_fields < 0 means no upper limit.
 * Returns (n_records, line_numbers(int64 bytes), columns) where columns is a list
 * with, per non-'.' spec char, (width, bytes, hashes) / bytes(double) / bytes(int64).
 */
static PyObject *scan(PyObject *self, PyObject *args) {
    Py_buffer buf;
    const char *spec;
    Py_ssize_t min_fields, max_fields;
    int skip_comments;
    if (!PyArg_ParseTuple(args, "y*snnp", &buf, &spec, &min_fields, &max_fields, &skip_comments))
        return NULL;
    const unsigned char *data = (const unsigned char *)buf.buf;
    Py_ssize_t size = buf.len;
    Py_ssize_t nspec = (Py_ssize_t)strlen(spec);
    if (nspec > MAX_COLS) {
        PyBuffer_Release(&buf);
        PyErr_SetString(PyExc_ValueError, "too many columns in spec");
        return NULL;
    }
    Py_ssize_t max_lines = 1;
    for (const unsigned char *p = data; (p = memchr(p, '\n', (size_t)(data + size - p))) != NULL; p++)
        max_lines++;

    PyObject *lines_obj = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)sizeof(int64_t) * max_lines);
    PyObject *result = NULL, *columns = NULL;
    char *outs[MAX_COLS] = {0};
    uint64_t *hashes[MAX_COLS] = {0};
    char *nums[MAX_COLS] = {0};
    if (lines_obj == NULL) goto done;
    int64_t *line_numbers = (int64_t *)PyBytes_AS_STRING(lines_obj);
    Py_ssize_t widths[MAX_COLS] = {0};
    Py_ssize_t nrec = 0, lineno = 0, pos = 0;
    const char *err_code = NULL;
    Py_ssize_t err_line = 0, err_field = 0, err_off = 0, err_len = 0;

    /* pass 1: split lines, check field counts, measure string widths (nothing stored per token:
       touching fresh memory costs more than tokenizing twice) */
    Py_BEGIN_ALLOW_THREADS
    while (pos < size) {
        lineno++;
        const unsigned char *nl = memchr(data + pos, '\n', (size_t)(size - pos));
        Py_ssize_t end = nl ? (Py_ssize_t)(nl - data) : size;
        Py_ssize_t p = pos, nf = 0;
        while (p < end && is_space(data[p])) p++;
        if (p < end) {
            if (data[p] == '#' && skip_comments) {
                pos = end + 1;
                continue;
            }
            while (p < end) {
                Py_ssize_t ts = p;
                while (p < end && !is_space(data[p])) p++;
                if (nf < nspec && p - ts > widths[nf]) widths[nf] = p - ts;
                nf++;
                while (p < end && is_space(data[p])) p++;
            }
            if (nf < min_fields || (max_fields >= 0 && nf > max_fields)) {
                Py_ssize_t ls = pos;
                Py_ssize_t le = end;
                if (le > ls && data[le - 1] == '\r') le--;
                err_code = "fields";
                err_line = lineno;
                err_field = nf;
                err_off = ls;
                err_len = le - ls > 200 ? 200 : le - ls;
                goto pass1_end;
            }
            line_numbers[nrec] = lineno;
            nrec++;
        }
        pos = end + 1;
    }
pass1_end:;
    Py_END_ALLOW_THREADS
    if (err_code != NULL) {
        raise_scan(err_code, err_line, err_field, (const char *)data + err_off, err_len);
        goto done;
    }

    /* pass 2: allocate the columns, then tokenize again and fill them */
    columns = PyList_New(0);
    if (columns == NULL) goto done;
    for (Py_ssize_t c = 0; c < nspec; c++) {
        char kind = spec[c];
        PyObject *item = NULL;
        if (kind == '.') continue;
        if (kind == 's') {
            if (widths[c] == 0) widths[c] = 1;
            PyObject *sb = PyBytes_FromStringAndSize(NULL, widths[c] * nrec);
            PyObject *hb = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)sizeof(uint64_t) * nrec);
            if (sb == NULL || hb == NULL) {
                Py_XDECREF(sb);
                Py_XDECREF(hb);
                goto done;
            }
            outs[c] = PyBytes_AS_STRING(sb);
            hashes[c] = (uint64_t *)PyBytes_AS_STRING(hb);
            item = Py_BuildValue("(nNN)", widths[c], sb, hb);
        } else if (kind == 'f' || kind == 'i') {
            item = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)8 * nrec);
            if (item != NULL) nums[c] = PyBytes_AS_STRING(item);
        } else {
            PyErr_Format(PyExc_ValueError, "unknown spec character %c", kind);
            goto done;
        }
        if (item == NULL) goto done;
        if (PyList_Append(columns, item) < 0) {
            Py_DECREF(item);
            goto done;
        }
        Py_DECREF(item);
    }
    Py_BEGIN_ALLOW_THREADS
    {
        Py_ssize_t r = 0;
        char small[NUMBUF];
        char *big = NULL;
        Py_ssize_t big_size = 0;
        pos = 0;
        while (pos < size && r < nrec) {
            const unsigned char *nl = memchr(data + pos, '\n', (size_t)(size - pos));
            Py_ssize_t end = nl ? (Py_ssize_t)(nl - data) : size;
            Py_ssize_t p = pos, nf = 0;
            while (p < end && is_space(data[p])) p++;
            if (p >= end || (data[p] == '#' && skip_comments)) {
                pos = end + 1;
                continue;
            }
            while (p < end && nf < nspec) {
                Py_ssize_t ts = p;
                while (p < end && !is_space(data[p])) p++;
                const unsigned char *t = data + ts;
                Py_ssize_t n = p - ts;
                char kind = spec[nf];
                if (kind == 's') {
                    Py_ssize_t w = widths[nf];
                    char *dst = outs[nf] + r * w;
                    memcpy(dst, t, (size_t)n);
                    if (n < w) memset(dst + n, 0, (size_t)(w - n));
                    uint64_t h = 1469598103934665603ULL;
                    for (Py_ssize_t k = 0; k < n; k++) {
                        h ^= t[k];
                        h *= 1099511628211ULL;
                    }
                    hashes[nf][r] = h;
                } else if (kind == 'f' || kind == 'i') {
                    const char *code = kind == 'f' ? "float" : "int";
                    if (n == 0) {
                        err_code = code;
                        err_line = line_numbers[r];
                        err_field = nf;
                        err_off = (const unsigned char *)t - data;
                        err_len = n > 200 ? 200 : n;
                        goto pass2_end;
                    }
                    char *tmp = small;
                    if (n >= NUMBUF) {
                        if (n + 1 > big_size) {
                            char *grown = (char *)realloc(big, (size_t)n + 1);
                            if (grown == NULL) {
                                err_code = "memory";
                                goto pass2_end;
                            }
                            big = grown;
                            big_size = n + 1;
                        }
                        tmp = big;
                    }
                    memcpy(tmp, t, (size_t)n);
                    tmp[n] = '\0';
                    char *endp = NULL;
                    errno = 0;
                    if (kind == 'f') {
                        double v;
                        if (fast_decimal((const char *)t, n, &v)) {
                            ((double *)nums[nf])[r] = v;
                            nf++;
                            while (p < end && is_space(data[p])) p++;
                            continue;
                        }
                        v = strtod(tmp, &endp);
                        if (endp != tmp + n || isnan(v) || memchr(tmp, 'x', (size_t)n) ||
                            memchr(tmp, 'X', (size_t)n)) {
                            err_code = code;
                            err_line = line_numbers[r];
                            err_field = nf;
                            err_off = (const unsigned char *)t - data;
                            err_len = n > 200 ? 200 : n;
                            goto pass2_end;
                        }
                        ((double *)nums[nf])[r] = v;
                    } else {
                        int ok = 1;
                        int k = (tmp[0] == '+' || tmp[0] == '-') ? 1 : 0;
                        if (k == n) ok = 0;
                        for (Py_ssize_t q = k; q < n && ok; q++)
                            if (tmp[q] < '0' || tmp[q] > '9') ok = 0;
                        long long v = 0;
                        if (ok) {
                            v = strtoll(tmp, &endp, 10);
                            if (errno == ERANGE) ok = 0;
                        }
                        if (!ok) {
                            err_code = code;
                            err_line = line_numbers[r];
                            err_field = nf;
                            err_off = (const unsigned char *)t - data;
                            err_len = n > 200 ? 200 : n;
                            goto pass2_end;
                        }
                        ((int64_t *)nums[nf])[r] = (int64_t)v;
                    }
                }
                nf++;
                while (p < end && is_space(data[p])) p++;
            }
            r++;
            pos = end + 1;
        }
pass2_end:;
        free(big);
    }
    Py_END_ALLOW_THREADS
    if (err_code != NULL) {
        if (strcmp(err_code, "memory") == 0)
            PyErr_NoMemory();
        else
            raise_scan(err_code, err_line, err_field, (const char *)data + err_off, err_len);
        goto done;
    }
    if (_PyBytes_Resize(&lines_obj, (Py_ssize_t)sizeof(int64_t) * nrec) < 0) {
        lines_obj = NULL;
        goto done;
    }
    result = Py_BuildValue("(nOO)", nrec, lines_obj, columns);

done:
    Py_XDECREF(lines_obj);
    Py_XDECREF(columns);
    PyBuffer_Release(&buf);
    return result;
}

static PyMethodDef methods[] = {
    {"scan", scan, METH_VARARGS, "Scan whitespace-separated columns from a buffer."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef moduledef = {PyModuleDef_HEAD_INIT, "_textscan", NULL, -1, methods};

PyMODINIT_FUNC PyInit__textscan(void) {
    PyObject *m = PyModule_Create(&moduledef);
    if (m == NULL) return NULL;
    memset(SPACE, 0, sizeof(SPACE));
    SPACE[' '] = SPACE['\t'] = SPACE['\n'] = SPACE['\v'] = SPACE['\f'] = SPACE['\r'] = 1;
    ScanError = PyErr_NewException("_textscan.ScanError", PyExc_ValueError, NULL);
    if (ScanError == NULL || PyModule_AddObject(m, "ScanError", ScanError) < 0) {
        Py_XDECREF(ScanError);
        Py_DECREF(m);
        return NULL;
    }
    Py_INCREF(ScanError);
    return m;
}
