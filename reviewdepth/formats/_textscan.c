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

static inline int is_space(unsigned char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
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

    int64_t *starts = (int64_t *)malloc(sizeof(int64_t) * (size_t)(max_lines * (nspec ? nspec : 1)));
    int32_t *lens = (int32_t *)malloc(sizeof(int32_t) * (size_t)(max_lines * (nspec ? nspec : 1)));
    PyObject *lines_obj = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)sizeof(int64_t) * max_lines);
    PyObject *result = NULL, *columns = NULL;
    if (starts == NULL || lens == NULL || lines_obj == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    int64_t *line_numbers = (int64_t *)PyBytes_AS_STRING(lines_obj);
    Py_ssize_t widths[MAX_COLS] = {0};
    Py_ssize_t nrec = 0, lineno = 0, pos = 0;

    /* pass 1: split lines, check field counts, record token offsets */
    while (pos < size) {
        lineno++;
        Py_ssize_t end = pos;
        const unsigned char *nl = memchr(data + pos, '\n', (size_t)(size - pos));
        end = nl ? (Py_ssize_t)(nl - data) : size;
        Py_ssize_t p = pos, nf = 0;
        while (p < end && is_space(data[p])) p++;
        if (p < end) {
            if (data[p] == '#' && skip_comments) {
                pos = end + 1;
                continue;
            }
            Py_ssize_t base = nrec * nspec;
            while (p < end) {
                Py_ssize_t ts = p;
                while (p < end && !is_space(data[p])) p++;
                if (nf < nspec) {
                    starts[base + nf] = ts;
                    lens[base + nf] = (int32_t)(p - ts);
                    if (p - ts > widths[nf]) widths[nf] = p - ts;
                }
                nf++;
                while (p < end && is_space(data[p])) p++;
            }
            if (nf < min_fields || (max_fields >= 0 && nf > max_fields)) {
                Py_ssize_t ls = pos;
                Py_ssize_t le = end;
                if (le > ls && data[le - 1] == '\r') le--;
                raise_scan("fields", lineno, nf, (const char *)data + ls, le - ls > 200 ? 200 : le - ls);
                goto done;
            }
            line_numbers[nrec] = lineno;
            nrec++;
        }
        pos = end + 1;
    }

    /* pass 2: fill the columns */
    columns = PyList_New(0);
    if (columns == NULL) goto done;
    for (Py_ssize_t c = 0; c < nspec; c++) {
        char kind = spec[c];
        if (kind == '.') continue;
        PyObject *item = NULL;
        if (kind == 's') {
            Py_ssize_t w = widths[c] > 0 ? widths[c] : 1;
            PyObject *sb = PyBytes_FromStringAndSize(NULL, w * nrec);
            PyObject *hb = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)sizeof(uint64_t) * nrec);
            if (sb == NULL || hb == NULL) {
                Py_XDECREF(sb);
                Py_XDECREF(hb);
                goto done;
            }
            char *out = PyBytes_AS_STRING(sb);
            uint64_t *hashes = (uint64_t *)PyBytes_AS_STRING(hb);
            memset(out, 0, (size_t)(w * nrec));
            for (Py_ssize_t r = 0; r < nrec; r++) {
                const unsigned char *t = data + starts[r * nspec + c];
                int32_t n = lens[r * nspec + c];
                memcpy(out + r * w, t, (size_t)n);
                uint64_t h = 1469598103934665603ULL;
                for (int32_t k = 0; k < n; k++) {
                    h ^= t[k];
                    h *= 1099511628211ULL;
                }
                hashes[r] = h;
            }
            item = Py_BuildValue("(nNN)", w, sb, hb);
        } else if (kind == 'f' || kind == 'i') {
            PyObject *nb = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)8 * nrec);
            if (nb == NULL) goto done;
            char tmp[NUMBUF];
            for (Py_ssize_t r = 0; r < nrec; r++) {
                const char *t = (const char *)data + starts[r * nspec + c];
                int32_t n = lens[r * nspec + c];
                if (n >= NUMBUF) {
                    Py_DECREF(nb);
                    raise_scan(kind == 'f' ? "float" : "int", line_numbers[r], c, t, n > 200 ? 200 : n);
                    goto done;
                }
                memcpy(tmp, t, (size_t)n);
                tmp[n] = '\0';
                char *endp = NULL;
                errno = 0;
                if (kind == 'f') {
                    double v = strtod(tmp, &endp);
                    if (n == 0 || endp != tmp + n || isnan(v) || memchr(tmp, 'x', (size_t)n) ||
                        memchr(tmp, 'X', (size_t)n)) {
                        Py_DECREF(nb);
                        raise_scan("float", line_numbers[r], c, t, n);
                        goto done;
                    }
                    ((double *)PyBytes_AS_STRING(nb))[r] = v;
                } else {
                    long long v = 0;
                    int ok = n > 0;
                    int k = (n > 0 && (tmp[0] == '+' || tmp[0] == '-')) ? 1 : 0;
                    if (k == n) ok = 0;
                    for (int q = k; q < n && ok; q++)
                        if (tmp[q] < '0' || tmp[q] > '9') ok = 0;
                    if (ok) {
                        v = strtoll(tmp, &endp, 10);
                        if (errno == ERANGE) ok = 0;
                    }
                    if (!ok) {
                        Py_DECREF(nb);
                        raise_scan("int", line_numbers[r], c, t, n);
                        goto done;
                    }
                    ((int64_t *)PyBytes_AS_STRING(nb))[r] = (int64_t)v;
                }
            }
            item = nb;
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
    if (_PyBytes_Resize(&lines_obj, (Py_ssize_t)sizeof(int64_t) * nrec) < 0) {
        lines_obj = NULL;
        goto done;
    }
    result = Py_BuildValue("(nOO)", nrec, lines_obj, columns);

done:
    free(starts);
    free(lens);
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
    ScanError = PyErr_NewException("_textscan.ScanError", PyExc_ValueError, NULL);
    if (ScanError == NULL || PyModule_AddObject(m, "ScanError", ScanError) < 0) {
        Py_XDECREF(ScanError);
        Py_DECREF(m);
        return NULL;
    }
    Py_INCREF(ScanError);
    return m;
}
