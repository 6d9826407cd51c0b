/*
 * _pingscan: one pass over a Unix ping log that reads every reply line in C.
 *
 * The optional accelerator of thruput.formats.ping (the pure-Python readers there are the
 * reference and the fallback when this module is not built). scan(text) walks the lines of
 * `text` (split on "\n" only, as the reference's regexes do) and decides for each whether
 * it is a reply line of exactly the shape of ping.UNIX_LINES' first alternative:
 *
 *     ^(?:\[(\d+\.\d+)\] )?(\d+) bytes from (?:(?! bytes from )[^\n])*?[:,] (?:icmp_)?seq=(\d+)\.?
 *      (?: (?:ttl|hlim)=(\d+))?(?: time=(\d+(?:\.\d*)?) ?ms)?
 *      (?: \((DUP!|BAD CHECKSUM!)\))?$
 *
 * The tail after "[:,] " never holds ':' or ',', so the only split the lazy address can
 * end at is the last ':' or ',' of the line; every optional part starts with its own
 * keyword, so the match is decided left to right without backtracking.
 *
 * Numbers are converted from exactly the digits the regex group would hold, correctly
 * rounded as float(str) does (an exact fast path, else PyOS_string_to_double, float()'s
 * own reader: locale-independent, inf on overflow), so the values are those of the
 * reference bit for bit. Integers are
 * returned as doubles too: the caller casts them with NumPy as the reference does.
 *
 * Returns a tuple of
 *   reply_lines  bytes, int64[n]: 1-based line numbers of the replies
 *   numbers      bytes, float64[n][5]: timestamp (NaN if absent), size, seq,
 *                ttl (-1 if absent), rtt (NaN if absent)
 *   flags        bytes, int8[n]: 0 none, 1 "(DUP!)", 2 "(BAD CHECKSUM!)"
 *   other_lines  bytes, int64[m]: 1-based line numbers of every other line
 *   other_texts  list of m str: those lines' text (without the "\n")
 *
 * Byte safety: every read is bounded by the line's length (no reliance on a terminator);
 * non-ASCII text is scanned as UTF-8 (the ASCII bytes the shape tests never occur inside
 * a multi-byte sequence, so the decision per line is the same as on code points).
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#define N_NUMBERS 5
#define MAX_STACK_DIGITS 63

typedef struct {
    char *data;
    Py_ssize_t len;  /* bytes used */
    Py_ssize_t cap;  /* bytes allocated */
} Buf;

static int
buf_append(Buf *b, const void *item, Py_ssize_t size)
{
    if (b->len + size > b->cap) {
        Py_ssize_t cap = b->cap ? b->cap : 4096;
        while (cap < b->len + size) {
            if (cap > PY_SSIZE_T_MAX / 2) {
                PyErr_NoMemory();
                return -1;
            }
            cap *= 2;
        }
        char *data = PyMem_Realloc(b->data, (size_t)cap);
        if (data == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        b->data = data;
        b->cap = cap;
    }
    memcpy(b->data + b->len, item, (size_t)size);
    b->len += size;
    return 0;
}

static PyObject *
buf_to_bytes(Buf *b)
{
    return PyBytes_FromStringAndSize(b->len ? b->data : "", b->len);
}

static inline int
is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* Index after the run of ASCII digits starting at i (i itself if none). */
static inline Py_ssize_t
skip_digits(const char *s, Py_ssize_t i, Py_ssize_t n)
{
    while (i < n && is_digit(s[i]))
        i++;
    return i;
}

static inline int
starts_with(const char *s, Py_ssize_t i, Py_ssize_t n, const char *word, Py_ssize_t k)
{
    return n - i >= k && memcmp(s + i, word, (size_t)k) == 0;
}

/* Exact powers of ten as doubles (10**22 is the largest one a double holds exactly). */
static const double POW10[] = {
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
    1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
};
#define MAX_EXACT_MANTISSA (UINT64_C(1) << 53)

/* float(s[a:b]) for a span of digits with at most one '.'; -1 with an exception set on
   failure (memory).

   Fast path (Clinger): when the digits without the dot form an integer m <= 2**53 and
   there are at most 22 digits after the dot, m and 10**k are exact doubles and IEEE
   division rounds correctly, so m / 10**k is the correctly rounded value, the one
   float() gives. Otherwise the span is copied, terminated and read by
   PyOS_string_to_double (float()'s own reader), so nothing past b is read. */
static int
to_double(const char *s, Py_ssize_t a, Py_ssize_t b, double *out)
{
    uint64_t m = 0;
    Py_ssize_t i, digits = 0, frac = -1;
    for (i = a; i < b && digits <= 19; i++) {
        if (s[i] == '.') {
            frac = 0;
            continue;
        }
        m = m * 10 + (uint64_t)(s[i] - '0');
        digits++;
        if (frac >= 0)
            frac++;
    }
    if (i == b && digits <= 19 && m <= MAX_EXACT_MANTISSA && frac <= 22) {
        *out = frac > 0 ? (double)m / POW10[frac] : (double)m;
        return 0;
    }

    char stack[MAX_STACK_DIGITS + 1];
    Py_ssize_t k = b - a;
    char *copy = k <= MAX_STACK_DIGITS ? stack : PyMem_Malloc((size_t)k + 1);
    if (copy == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    memcpy(copy, s + a, (size_t)k);
    copy[k] = '\0';
    char *end = NULL;
    double value = PyOS_string_to_double(copy, &end, NULL);
    int ok = !(value == -1.0 && PyErr_Occurred());
    if (ok && end != copy + k) {
        PyErr_Format(PyExc_ValueError, "_pingscan: could not read the number %.40s", copy);
        ok = 0;
    }
    if (copy != stack)
        PyMem_Free(copy);
    if (!ok)
        return -1;
    *out = value;
    return 0;
}

/* Spans of the numbers of a reply line (start, end); start -1 when absent. */
typedef struct {
    Py_ssize_t a[N_NUMBERS], b[N_NUMBERS];
    int8_t flag;
} Reply;

/* 1 if s[0:n] is a reply line (spans in *r), else 0. */
static int
match_reply(const char *s, Py_ssize_t n, Reply *r)
{
    Py_ssize_t i = 0, j, k;
    for (k = 0; k < N_NUMBERS; k++)
        r->a[k] = r->b[k] = -1;
    r->flag = 0;

    /* (?:\[(\d+\.\d+)\] )? : a '[' that does not open it makes the line no reply, as the
       size's \d+ cannot match '[' either */
    if (n > 0 && s[0] == '[') {
        j = skip_digits(s, 1, n);
        if (j == 1 || j >= n || s[j] != '.')
            return 0;
        k = skip_digits(s, j + 1, n);
        if (k == j + 1 || !starts_with(s, k, n, "] ", 2))
            return 0;
        r->a[0] = 1;
        r->b[0] = k;
        i = k + 2;
    }
    /* (\d+) bytes from */
    j = skip_digits(s, i, n);
    if (j == i || !starts_with(s, j, n, " bytes from ", 12))
        return 0;
    r->a[1] = i;
    r->b[1] = j;
    i = j + 12;
    /* (?:(?! bytes from )[^\n])*?[:,]  : the last ':' or ',' of the line (the tail holds
       none), with no " bytes from " in between: that is two replies merged on one line by
       a lost newline, not one reply (ping.MERGED_REPLIES reads it) */
    for (k = n - 1; k >= i; k--)
        if (s[k] == ':' || s[k] == ',')
            break;
    if (k < i || k + 1 >= n || s[k + 1] != ' ')
        return 0;
    for (j = i; j + 12 <= k; j++)
        if (s[j] == ' ' && memcmp(s + j, " bytes from ", 12) == 0)
            return 0;
    i = k + 2;
    /* (?:icmp_)?seq=(\d+)\.? */
    if (starts_with(s, i, n, "icmp_", 5))
        i += 5;
    if (!starts_with(s, i, n, "seq=", 4))
        return 0;
    i += 4;
    j = skip_digits(s, i, n);
    if (j == i)
        return 0;
    r->a[2] = i;
    r->b[2] = j;
    i = j;
    if (i < n && s[i] == '.')
        i++;
    /* (?: (?:ttl|hlim)=(\d+))? */
    if (starts_with(s, i, n, " ttl=", 5) || starts_with(s, i, n, " hlim=", 6)) {
        i += s[i + 1] == 't' ? 5 : 6;
        j = skip_digits(s, i, n);
        if (j == i)
            return 0;
        r->a[3] = i;
        r->b[3] = j;
        i = j;
    }
    /* (?: time=(\d+(?:\.\d*)?) ?ms)? */
    if (starts_with(s, i, n, " time=", 6)) {
        i += 6;
        j = skip_digits(s, i, n);
        if (j == i)
            return 0;
        if (j < n && s[j] == '.')
            j = skip_digits(s, j + 1, n);
        r->a[4] = i;
        r->b[4] = j;
        i = j;
        if (i < n && s[i] == ' ')
            i++;
        if (!starts_with(s, i, n, "ms", 2))
            return 0;
        i += 2;
    }
    /* (?: \((DUP!|BAD CHECKSUM!)\))? */
    if (starts_with(s, i, n, " (DUP!)", 7)) {
        r->flag = 1;
        i += 7;
    }
    else if (starts_with(s, i, n, " (BAD CHECKSUM!)", 16)) {
        r->flag = 2;
        i += 16;
    }
    return i == n;
}

/* The text of one line as str: from the str itself when it is ASCII, else decoded. */
static PyObject *
line_text(const char *s, Py_ssize_t n, int ascii)
{
    if (ascii)
        return PyUnicode_FromKindAndData(PyUnicode_1BYTE_KIND, s, n);
    return PyUnicode_DecodeUTF8(s, n, "strict");
}

static PyObject *
scan_buffer(const char *s, Py_ssize_t size, int ascii)
{
    Buf lines = {0}, numbers = {0}, flags = {0}, others = {0};
    PyObject *texts = PyList_New(0), *result = NULL;
    if (texts == NULL)
        return NULL;
    /* the reference's line count: count("\n"), plus one unless the text ends with it */
    Py_ssize_t start = 0;
    int64_t line = 0;
    do {
        const char *eol = memchr(s + start, '\n', (size_t)(size - start));
        Py_ssize_t end = eol ? eol - s : size;
        const char *p = s + start;
        Py_ssize_t n = end - start;
        Reply r;
        line++;
        if (match_reply(p, n, &r)) {
            double values[N_NUMBERS] = {NAN, 0.0, 0.0, -1.0, NAN};
            for (int k = 0; k < N_NUMBERS; k++)
                if (r.a[k] >= 0 && to_double(p, r.a[k], r.b[k], &values[k]) < 0)
                    goto done;
            if (buf_append(&lines, &line, sizeof line) < 0
                || buf_append(&numbers, values, sizeof values) < 0
                || buf_append(&flags, &r.flag, 1) < 0)
                goto done;
        }
        else {
            PyObject *text = line_text(p, n, ascii);
            if (text == NULL)
                goto done;
            int failed = PyList_Append(texts, text) < 0;
            Py_DECREF(text);
            if (failed || buf_append(&others, &line, sizeof line) < 0)
                goto done;
        }
        start = end + 1;
    } while (start < size);
    result = Py_BuildValue("(NNNNO)", buf_to_bytes(&lines), buf_to_bytes(&numbers),
                           buf_to_bytes(&flags), buf_to_bytes(&others), texts);
done:
    PyMem_Free(lines.data);
    PyMem_Free(numbers.data);
    PyMem_Free(flags.data);
    PyMem_Free(others.data);
    Py_DECREF(texts);
    return result;
}

static PyObject *
scan(PyObject *module, PyObject *text)
{
    (void)module;
    if (!PyUnicode_Check(text)) {
        PyErr_SetString(PyExc_TypeError, "scan() expects str");
        return NULL;
    }
#if PY_VERSION_HEX < 0x030C0000
    if (PyUnicode_READY(text) < 0)
        return NULL;
#endif
    if (PyUnicode_IS_ASCII(text))
        return scan_buffer((const char *)PyUnicode_DATA(text), PyUnicode_GET_LENGTH(text), 1);
    /* non-ASCII: a temporary UTF-8 copy (lone surrogates raise UnicodeEncodeError, and the
       caller falls back to the pure-Python reader) */
    PyObject *utf8 = PyUnicode_AsUTF8String(text);
    if (utf8 == NULL)
        return NULL;
    PyObject *result = scan_buffer(PyBytes_AS_STRING(utf8), PyBytes_GET_SIZE(utf8), 0);
    Py_DECREF(utf8);
    return result;
}

static PyMethodDef methods[] = {
    {"scan", scan, METH_O,
     "scan(text) -> (reply_lines, numbers, flags, other_lines, other_texts)\n\n"
     "Every reply line of a Unix ping log (line numbers, float64 numbers [timestamp, size,\n"
     "seq, ttl, rtt] and flags as bytes for numpy.frombuffer) and every other line\n"
     "(line numbers and texts). See thruput.formats.ping."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_pingscan",
    "C scanner of ping reply lines (optional accelerator of thruput.formats.ping).",
    -1, methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC
PyInit__pingscan(void)
{
    return PyModule_Create(&module);
}
