/*
 * The judgment chain's step for many judgments at once (reviewdepth.store.chain, `_link`):
 *
 *     hash_k = SHA-256( hash_{k-1} + "\n" + seq|len:doc_id|len:label|relevant|grade + tail )
 *
 * with lengths in characters (code points), relevant as ~ / 1 / 0, grade as ~ or its decimal text, and `tail`
 * the judgment's fixed fields already formatted (`_tail`). Python does the same with an f-string, hashlib and
 * hexdigest per judgment; here the text is assembled in one reused buffer and hashed in one call. The hash is
 * the system OpenSSL's SHA256 (the library Python's hashlib already loaded, found at import with dlopen; it uses
 * the CPU's SHA instructions), or, where there is none, the portable SHA-256 below (FIPS 180-4), which is about
 * as fast as the Python step. The pure-Python step stays the reference: the tests compare both with it.
 *
 * link(previous: str, first_seq: int, doc_ids, labels, relevant, grades, tail: str, portable: bool = False)
 *     the hex digests of the judgments seq first_seq, first_seq + 1, ..., each chained to the one before
 *     (``portable``: the SHA-256 below even where OpenSSL's was found; for the tests).
 * SHA256_SOURCE: "libcrypto" or "portable", what `link` hashes with by default.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <dlfcn.h>
#include <stdint.h>
#include <string.h>

/* OpenSSL's low-level SHA256_Init/Update/Final: its one-shot SHA256() looks the algorithm up again at every call
   in OpenSSL 3 (locks, string compares, an allocation), which cost more than the hash of a judgment itself */
typedef int (*sha256_init_t)(void *context);
typedef int (*sha256_update_t)(void *context, const void *data, size_t n);
typedef int (*sha256_final_t)(unsigned char *digest, void *context);
static sha256_init_t libcrypto_init = NULL;
static sha256_update_t libcrypto_update = NULL;
static sha256_final_t libcrypto_final = NULL;
#define LIBCRYPTO_CONTEXT_BYTES 256 /* sizeof(SHA256_CTX) is 112 */

/* ---- SHA-256 (FIPS 180-4) ---- */

typedef struct {
    uint32_t state[8];
    uint64_t length; /* bytes hashed so far */
    unsigned char block[64];
    size_t used;     /* bytes waiting in block */
} sha256_t;

static const uint32_t ROUND_CONSTANTS[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

static const uint32_t INITIAL_STATE[8] = {
    0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
};

static inline uint32_t rotr(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

static void compress(uint32_t state[8], const unsigned char *p) {
    uint32_t w[64];
    for (int t = 0; t < 16; t++)
        w[t] = ((uint32_t)p[4 * t] << 24) | ((uint32_t)p[4 * t + 1] << 16) | ((uint32_t)p[4 * t + 2] << 8) |
               (uint32_t)p[4 * t + 3];
    for (int t = 16; t < 64; t++) {
        uint32_t s0 = rotr(w[t - 15], 7) ^ rotr(w[t - 15], 18) ^ (w[t - 15] >> 3);
        uint32_t s1 = rotr(w[t - 2], 17) ^ rotr(w[t - 2], 19) ^ (w[t - 2] >> 10);
        w[t] = w[t - 16] + s0 + w[t - 7] + s1;
    }
    uint32_t a = state[0], b = state[1], c = state[2], d = state[3];
    uint32_t e = state[4], f = state[5], g = state[6], h = state[7];
    for (int t = 0; t < 64; t++) {
        uint32_t big1 = rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25);
        uint32_t choose = (e & f) ^ (~e & g);
        uint32_t t1 = h + big1 + choose + ROUND_CONSTANTS[t] + w[t];
        uint32_t big0 = rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22);
        uint32_t majority = (a & b) ^ (a & c) ^ (b & c);
        uint32_t t2 = big0 + majority;
        h = g;
        g = f;
        f = e;
        e = d + t1;
        d = c;
        c = b;
        b = a;
        a = t1 + t2;
    }
    state[0] += a;
    state[1] += b;
    state[2] += c;
    state[3] += d;
    state[4] += e;
    state[5] += f;
    state[6] += g;
    state[7] += h;
}

static void sha256_init(sha256_t *s) {
    memcpy(s->state, INITIAL_STATE, sizeof(INITIAL_STATE));
    s->length = 0;
    s->used = 0;
}

static void sha256_update(sha256_t *s, const unsigned char *data, size_t n) {
    s->length += n;
    if (s->used) {
        size_t take = 64 - s->used < n ? 64 - s->used : n;
        memcpy(s->block + s->used, data, take);
        s->used += take;
        data += take;
        n -= take;
        if (s->used < 64) return;
        compress(s->state, s->block);
        s->used = 0;
    }
    while (n >= 64) {
        compress(s->state, data);
        data += 64;
        n -= 64;
    }
    memcpy(s->block, data, n);
    s->used = n;
}

static void sha256_final(sha256_t *s, unsigned char digest[32]) {
    uint64_t bits = s->length * 8;
    unsigned char pad[72] = {0x80};
    size_t padding = (s->used < 56 ? 56 : 120) - s->used;
    for (int i = 0; i < 8; i++) pad[padding + i] = (unsigned char)(bits >> (56 - 8 * i));
    sha256_update(s, pad, padding + 8);
    for (int i = 0; i < 8; i++)
        for (int j = 0; j < 4; j++) digest[4 * i + j] = (unsigned char)(s->state[i] >> (24 - 8 * j));
}

/* the hex digest of data[0:n] */
static void sha256_hex(const unsigned char *data, size_t n, int portable, char out[64]) {
    static const char digits[] = "0123456789abcdef";
    unsigned char digest[32];
    if (libcrypto_final != NULL && !portable) {
        _Alignas(16) unsigned char context[LIBCRYPTO_CONTEXT_BYTES];
        libcrypto_init(context);
        libcrypto_update(context, data, n);
        libcrypto_final(digest, context);
    } else {
        sha256_t s;
        sha256_init(&s);
        sha256_update(&s, data, n);
        sha256_final(&s, digest);
    }
    for (int i = 0; i < 32; i++) {
        out[2 * i] = digits[digest[i] >> 4];
        out[2 * i + 1] = digits[digest[i] & 15];
    }
}

/* ---- the canonical text of one judgment, in a growing buffer ---- */

typedef struct {
    char *data;
    size_t used, size;
} buffer_t;

static int put(buffer_t *b, const char *text, size_t n) {
    if (b->used + n > b->size) {
        size_t size = b->size ? b->size : 256;
        while (size < b->used + n) size *= 2;
        char *grown = PyMem_Realloc(b->data, size);
        if (grown == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        b->data = grown;
        b->size = size;
    }
    memcpy(b->data + b->used, text, n);
    b->used += n;
    return 0;
}

static int put_integer(buffer_t *b, long long value) {
    /* decimal text as str(int) writes it (snprintf cost as much as the hash) */
    char text[24];
    int at = (int)sizeof text;
    unsigned long long magnitude = value < 0 ? 0ULL - (unsigned long long)value : (unsigned long long)value;
    do {
        text[--at] = (char)('0' + magnitude % 10);
        magnitude /= 10;
    } while (magnitude);
    if (value < 0) text[--at] = '-';
    return put(b, text + at, sizeof text - (size_t)at);
}

/* <length in characters>:<UTF-8 text> */
static int put_text(buffer_t *b, PyObject *value, const char *field) {
    if (!PyUnicode_Check(value)) {
        PyErr_Format(PyExc_TypeError, "%s must be str, not %.80s", field, Py_TYPE(value)->tp_name);
        return -1;
    }
    Py_ssize_t n;
    const char *utf8 = PyUnicode_AsUTF8AndSize(value, &n); /* fails as str.encode() does (lone surrogates) */
    if (utf8 == NULL) return -1;
    if (put_integer(b, (long long)PyUnicode_GET_LENGTH(value)) < 0 || put(b, ":", 1) < 0) return -1;
    return put(b, utf8, (size_t)n);
}

/* ~ for None, else the value's decimal text (str() of an int; any int-like value the Python step accepts) */
static int put_grade(buffer_t *b, PyObject *grade) {
    if (grade == Py_None) return put(b, "~", 1);
    if (PyLong_CheckExact(grade)) {
        int overflow = 0;
        long long value = PyLong_AsLongLongAndOverflow(grade, &overflow);
        if (!overflow) {
            if (value == -1 && PyErr_Occurred()) return -1;
            return put_integer(b, value);
        }
    }
    PyObject *text = PyObject_Str(grade);
    if (text == NULL) return -1;
    Py_ssize_t n;
    const char *utf8 = PyUnicode_AsUTF8AndSize(text, &n);
    int status = utf8 == NULL ? -1 : put(b, utf8, (size_t)n);
    Py_DECREF(text);
    return status;
}

static PyObject *chain_link(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *previous, *doc_arg, *label_arg, *relevant_arg, *grade_arg, *tail;
    long long first_seq;
    int portable = 0;
    if (!PyArg_ParseTuple(args, "ULOOOOU|p", &previous, &first_seq, &doc_arg, &label_arg, &relevant_arg, &grade_arg,
                          &tail, &portable))
        return NULL;
    PyObject *docs = NULL, *labels = NULL, *relevant = NULL, *grades = NULL, *out = NULL;
    buffer_t text = {NULL, 0, 0};
    docs = PySequence_Fast(doc_arg, "doc_ids must be a sequence");
    labels = PySequence_Fast(label_arg, "labels must be a sequence");
    relevant = PySequence_Fast(relevant_arg, "relevant must be a sequence");
    grades = PySequence_Fast(grade_arg, "grades must be a sequence");
    if (docs == NULL || labels == NULL || relevant == NULL || grades == NULL) goto done;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(docs);
    if (PySequence_Fast_GET_SIZE(labels) != n || PySequence_Fast_GET_SIZE(relevant) != n ||
        PySequence_Fast_GET_SIZE(grades) != n) {
        PyErr_SetString(PyExc_ValueError, "doc_ids, labels, relevant and grades must have the same length");
        goto done;
    }
    Py_ssize_t tail_size, head_size;
    const char *tail_utf8 = PyUnicode_AsUTF8AndSize(tail, &tail_size);
    const char *head_utf8 = PyUnicode_AsUTF8AndSize(previous, &head_size);
    if (tail_utf8 == NULL || head_utf8 == NULL) goto done;
    out = PyList_New(n);
    if (out == NULL) goto done;
    char head[64];
    for (Py_ssize_t i = 0; i < n; i++) {
        text.used = 0;
        /* the previous hash: the caller's for the first judgment, then each one's own hex digest */
        if (i == 0 ? put(&text, head_utf8, (size_t)head_size) : put(&text, head, 64)) goto fail;
        if (put(&text, "\n", 1) || put_integer(&text, first_seq + i) || put(&text, "|", 1)) goto fail;
        if (put_text(&text, PySequence_Fast_GET_ITEM(docs, i), "doc_id") || put(&text, "|", 1)) goto fail;
        if (put_text(&text, PySequence_Fast_GET_ITEM(labels, i), "label") || put(&text, "|", 1)) goto fail;
        PyObject *decided = PySequence_Fast_GET_ITEM(relevant, i);
        if (decided == Py_None) {
            if (put(&text, "~", 1)) goto fail;
        } else {
            int truth = PyObject_IsTrue(decided);
            if (truth < 0 || put(&text, truth ? "1" : "0", 1)) goto fail;
        }
        if (put(&text, "|", 1) || put_grade(&text, PySequence_Fast_GET_ITEM(grades, i))) goto fail;
        if (put(&text, tail_utf8, (size_t)tail_size)) goto fail;
        sha256_hex((const unsigned char *)text.data, text.used, portable, head);
        PyObject *digest = PyUnicode_FromStringAndSize(head, 64);
        if (digest == NULL) goto fail;
        PyList_SET_ITEM(out, i, digest);
    }
    goto done;
fail:
    Py_CLEAR(out);
done:
    PyMem_Free(text.data);
    Py_XDECREF(docs);
    Py_XDECREF(labels);
    Py_XDECREF(relevant);
    Py_XDECREF(grades);
    return out;
}

static PyMethodDef methods[] = {
    {"link", chain_link, METH_VARARGS,
     "link(previous, first_seq, doc_ids, labels, relevant, grades, tail) -> list of hex digests"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_chainlink", "The judgment chain's step, compiled.", -1,
                                    methods};

PyMODINIT_FUNC PyInit__chainlink(void) {
    /* OpenSSL's libcrypto, which Python's hashlib links: already in the process when hashlib was imported */
    static const char *names[] = {"libcrypto.so.3", "libcrypto.so.1.1", "libcrypto.dylib", NULL};
    for (int i = 0; names[i] != NULL && libcrypto_final == NULL; i++) {
        void *library = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
        if (library == NULL) continue;
        void *init = dlsym(library, "SHA256_Init"), *update = dlsym(library, "SHA256_Update");
        void *final = dlsym(library, "SHA256_Final");
        if (init == NULL || update == NULL || final == NULL) continue;
        memcpy(&libcrypto_init, &init, sizeof init);
        memcpy(&libcrypto_update, &update, sizeof update);
        memcpy(&libcrypto_final, &final, sizeof final);
    }
    if (libcrypto_final != NULL) {
        /* functions of those names that are not SHA-256 would corrupt every chain: check them on a text of two
           blocks against the portable implementation */
        static const unsigned char text[] = "the judgment chain: a text longer than one 64-byte block of SHA-256, 1234";
        char theirs[64], ours[64];
        sha256_hex(text, sizeof text - 1, 0, theirs);
        sha256_hex(text, sizeof text - 1, 1, ours);
        if (memcmp(theirs, ours, 64) != 0) libcrypto_final = NULL;
    }
    PyObject *m = PyModule_Create(&module);
    if (m == NULL) return NULL;
    if (PyModule_AddStringConstant(m, "SHA256_SOURCE", libcrypto_final != NULL ? "libcrypto" : "portable") < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
