/* The data rows of a monitor campaign's runs.csv cut into typed rows in one pass, and
 * ISO 8601 start times made datetime64[ns], for thruput.campaign.monitor._split_rows and
 * start_times. Optional: without it those do the same in Python, and they stay the
 * reference: each function here takes only the inputs it is sure to read exactly as
 * the Python code does and answers None for any other, which is then read in Python.
 *
 * cut(body, row_type, first_line, quoted, nan) -> list of row_type, or None
 *     body: runs.csv's data lines (an ASCII str with no carriage return or NUL), each one
 *     row of 15 cells; every cell stripped of blanks as str.strip does. A line holding a
 *     double quote is given to quoted(line), which answers its cells (the csv module's)
 *     or None. slot becomes an int (-1 if empty), socket_buffer, size and rate floats
 *     (nan if empty), as int() and float() make them; line numbers start at first_line.
 *     None if a line has another number of cells, a slot is not digits (or has more than
 *     18), a number is not one PyOS_string_to_double reads whole (nor 63 characters at
 *     most). The cells are not checked otherwise (the caller does, by columns).
 * iso_ns(texts) -> bytearray of native int64 ns since 1970, or None
 *     texts: a list of str, each YYYY-MM-DDTHH:MM:SS[.f{1,9}][Z] of a real date and time
 *     in 1678-2261 (datetime64[ns]'s range), read as NumPy reads it naive (UTC); None if
 *     any text is another.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdint.h>
#include <string.h>

#define WIDTH 15                /* cells of a runs.csv row (monitor.MONITOR_MANIFEST_COLUMNS) */
#define CACHED 16               /* distinct values remembered per repetitive column */

/* Columns whose values repeat (role, path_name, direction, test, tool, outcome, reason):
 * one str per distinct value, shared by the rows (up to CACHED of them a column). */
static const int repeats[WIDTH] = {0, 1, 0, 0, 0, 0, 1, 1, 1, 1, 0, 0, 0, 1, 1};

typedef struct {
    PyObject *value[CACHED];
    Py_ssize_t n;
} Cache;

static int
is_blank(char c)                /* what str.strip takes off an ASCII str but line ends */
{
    return c == ' ' || c == '\t' || c == '\x0b' || c == '\x0c' || (c >= '\x1c' && c <= '\x1f');
}

/* A new reference to the str of bytes [s, s + n), from the column's cache if it has one. */
static PyObject *
text_of(const char *s, Py_ssize_t n, Cache *cache)
{
    if (cache == NULL)
        return PyUnicode_FromStringAndSize(s, n);
    for (Py_ssize_t i = 0; i < cache->n; i++) {
        PyObject *v = cache->value[i];
        if (PyUnicode_GET_LENGTH(v) == n && memcmp(PyUnicode_1BYTE_DATA(v), s, n) == 0) {
            Py_INCREF(v);
            return v;
        }
    }
    PyObject *v = PyUnicode_FromStringAndSize(s, n);
    if (v != NULL && cache->n < CACHED) {
        Py_INCREF(v);
        cache->value[cache->n++] = v;
    }
    return v;
}

/* The slot: -1 if empty, its value if 1-18 digits; NULL with no error set otherwise. */
static PyObject *
slot_of(const char *s, Py_ssize_t n)
{
    long long v = 0;
    if (n == 0)
        return PyLong_FromLong(-1);
    if (n > 18)
        return NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return NULL;
        v = v * 10 + (s[i] - '0');
    }
    return PyLong_FromLongLong(v);
}

/* A number: nan if empty, else float() of it; NULL with no error set if it is not one. */
static PyObject *
number_of(const char *s, Py_ssize_t n, PyObject *nan)
{
    char buf[64];
    char *end;
    if (n == 0) {
        Py_INCREF(nan);
        return nan;
    }
    if (n <= 15) {              /* digits only: the integer, exact in a double as strtod's */
        int64_t v = 0;
        Py_ssize_t i = 0;
        while (i < n && s[i] >= '0' && s[i] <= '9')
            v = v * 10 + (s[i++] - '0');
        if (i == n)
            return PyFloat_FromDouble((double)v);
    }
    if (n >= (Py_ssize_t)sizeof buf)
        return NULL;
    memcpy(buf, s, n);
    buf[n] = '\0';
    double v = PyOS_string_to_double(buf, &end, NULL);
    if ((v == -1.0 && PyErr_Occurred()) || end != buf + n) {
        PyErr_Clear();
        return NULL;
    }
    return PyFloat_FromDouble(v);
}

/* Where each of a line's cells begins and ends, stripped; 0 if it has not WIDTH cells. */
static int
split_cells(const char *s, Py_ssize_t n, const char **begin, Py_ssize_t *len)
{
    Py_ssize_t start = 0, k = 0;
    for (Py_ssize_t i = 0; i <= n; i++) {
        if (i < n && s[i] != ',')
            continue;
        if (k == WIDTH)
            return 0;
        Py_ssize_t a = start, b = i;
        while (a < b && is_blank(s[a]))
            a++;
        while (b > a && is_blank(s[b - 1]))
            b--;
        begin[k] = s + a;
        len[k++] = b - a;
        start = i + 1;
    }
    return k == WIDTH;
}

/* The row of a line's cells, or NULL: with an error set if Python raised one, without if
 * a cell is not read here (the caller answers None). */
static PyObject *
row_of(PyTypeObject *row_type, const char **begin, const Py_ssize_t *len, long line,
       Cache *caches, PyObject *nan)
{
    PyObject *row = row_type->tp_alloc(row_type, WIDTH + 1);
    if (row == NULL)
        return NULL;
    for (int k = 0; k < WIDTH; k++) {
        PyObject *v;
        if (k == 4)
            v = slot_of(begin[k], len[k]);
        else if (k >= 10 && k <= 12)
            v = number_of(begin[k], len[k], nan);
        else
            v = text_of(begin[k], len[k], repeats[k] ? &caches[k] : NULL);
        if (v == NULL) {
            Py_DECREF(row);
            return NULL;
        }
        PyTuple_SET_ITEM(row, k, v);
    }
    PyObject *number = PyLong_FromLong(line);
    if (number == NULL) {
        Py_DECREF(row);
        return NULL;
    }
    PyTuple_SET_ITEM(row, WIDTH, number);
    /* Only str, int and float inside: no cycle can pass through the row, so the cyclic
     * garbage collector need never visit it (as CPython itself untracks such a tuple, but
     * not one of a subclass): at 2 x 10^5 rows it otherwise spends 0.06 s walking them at
     * the first collection after a normalize, and again at every full one. */
    PyObject_GC_UnTrack(row);
    return row;
}

/* The cells quoted(line) answers, stripped, into begin/len (pointing into the cells, which
 * *keep holds); 1 if there are WIDTH of them, all ASCII, 0 if not, -1 on an error. */
static int
quoted_cells(PyObject *quoted, const char *s, Py_ssize_t n, PyObject **keep,
             const char **begin, Py_ssize_t *len)
{
    PyObject *line = PyUnicode_FromStringAndSize(s, n);
    if (line == NULL)
        return -1;
    PyObject *cells = PyObject_CallOneArg(quoted, line);
    Py_DECREF(line);
    if (cells == NULL)
        return -1;
    *keep = cells;
    if (!PyList_Check(cells) || PyList_GET_SIZE(cells) != WIDTH)
        return 0;
    for (int k = 0; k < WIDTH; k++) {
        PyObject *cell = PyList_GET_ITEM(cells, k);
        if (!PyUnicode_Check(cell) || !PyUnicode_IS_ASCII(cell))
            return 0;
        const char *a = (const char *)PyUnicode_1BYTE_DATA(cell);
        const char *b = a + PyUnicode_GET_LENGTH(cell);
        while (a < b && is_blank(*a))
            a++;
        while (b > a && is_blank(b[-1]))
            b--;
        begin[k] = a;
        len[k] = b - a;
    }
    return 1;
}

static PyObject *
cut(PyObject *self, PyObject *args)
{
    PyObject *body, *quoted, *nan;
    PyTypeObject *row_type;
    long first_line;
    if (!PyArg_ParseTuple(args, "UO!lOO!", &body, &PyType_Type, &row_type, &first_line,
                          &quoted, &PyFloat_Type, &nan))
        return NULL;
    if (!PyType_IsSubtype(row_type, &PyTuple_Type)) {
        PyErr_SetString(PyExc_TypeError, "row_type must be a tuple type");
        return NULL;
    }
    if (!PyUnicode_IS_ASCII(body))
        Py_RETURN_NONE;
    const char *s = (const char *)PyUnicode_1BYTE_DATA(body);
    Py_ssize_t n = PyUnicode_GET_LENGTH(body);
    if (memchr(s, '\r', n) != NULL || memchr(s, '\0', n) != NULL)
        Py_RETURN_NONE;

    Cache caches[WIDTH];
    memset(caches, 0, sizeof caches);
    PyObject *rows = PyList_New(0), *result = NULL;
    if (rows == NULL)
        return NULL;
    const char *begin[WIDTH];
    Py_ssize_t len[WIDTH];
    long line = first_line;
    Py_ssize_t pos = 0;
    while (pos < n) {           /* (a last line end ends the last line: no row after it) */
        const char *nl = memchr(s + pos, '\n', n - pos);
        Py_ssize_t end = nl ? nl - s : n;
        PyObject *keep = NULL;
        int ok;
        if (memchr(s + pos, '"', end - pos) != NULL)
            ok = quoted_cells(quoted, s + pos, end - pos, &keep, begin, len);
        else
            ok = split_cells(s + pos, end - pos, begin, len);
        PyObject *row = ok == 1 ? row_of(row_type, begin, len, line, caches, nan) : NULL;
        Py_XDECREF(keep);
        if (row == NULL || PyList_Append(rows, row) < 0) {
            Py_XDECREF(row);
            if (PyErr_Occurred())
                goto done;
            result = Py_None;               /* a cell not read here */
            Py_INCREF(result);
            goto done;
        }
        Py_DECREF(row);
        line++;
        pos = end + 1;
    }
    result = rows;
    rows = NULL;
done:
    Py_XDECREF(rows);
    for (int k = 0; k < WIDTH; k++)
        for (Py_ssize_t i = 0; i < caches[k].n; i++)
            Py_DECREF(caches[k].value[i]);
    return result;
}

/* Days from 1970-01-01 to a proleptic Gregorian date (H. Hinnant's days_from_civil). */
static int64_t
days_from_civil(int64_t y, int64_t m, int64_t d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

/* The digits s[0..n) as a number, or -1 if one is not a digit. */
static int64_t
digits(const char *s, int n)
{
    int64_t v = 0;
    for (int i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        v = v * 10 + (s[i] - '0');
    }
    return v;
}

/* ns since 1970 of one text, or 0 in *ok if it is not one read here. */
static int64_t
ns_of(PyObject *text, int *ok)
{
    static const int month_days[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    *ok = 0;
    if (!PyUnicode_Check(text) || !PyUnicode_IS_ASCII(text))
        return 0;
    const char *s = (const char *)PyUnicode_1BYTE_DATA(text);
    Py_ssize_t n = PyUnicode_GET_LENGTH(text);
    if (n > 0 && s[n - 1] == 'Z')
        n--;
    if (n < 19 || s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' || s[16] != ':')
        return 0;
    int64_t y = digits(s, 4), mo = digits(s + 5, 2), d = digits(s + 8, 2);
    int64_t h = digits(s + 11, 2), mi = digits(s + 14, 2), sec = digits(s + 17, 2);
    if (y < 1678 || y > 2261 || mo < 1 || mo > 12 || d < 1 || h < 0 || h > 23 || mi < 0
            || mi > 59 || sec < 0 || sec > 59)
        return 0;
    int leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    if (d > month_days[mo - 1] + (mo == 2 && leap))
        return 0;
    int64_t frac = 0;
    if (n > 19) {               /* .f{1,9} */
        int places = (int)(n - 20);
        if (s[19] != '.' || places < 1 || places > 9 || (frac = digits(s + 20, places)) < 0)
            return 0;
        for (int i = places; i < 9; i++)
            frac *= 10;
    }
    *ok = 1;
    return ((days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + sec) * 1000000000) + frac;
}

static PyObject *
iso_ns(PyObject *self, PyObject *texts)
{
    if (!PyList_Check(texts)) {
        PyErr_SetString(PyExc_TypeError, "texts must be a list");
        return NULL;
    }
    Py_ssize_t n = PyList_GET_SIZE(texts);
    PyObject *out = PyByteArray_FromStringAndSize(NULL, n * (Py_ssize_t)sizeof(int64_t));
    if (out == NULL)
        return NULL;
    int64_t *ns = (int64_t *)PyByteArray_AS_STRING(out);
    for (Py_ssize_t i = 0; i < n; i++) {
        int ok;
        ns[i] = ns_of(PyList_GET_ITEM(texts, i), &ok);
        if (!ok) {
            Py_DECREF(out);
            Py_RETURN_NONE;
        }
    }
    return out;
}

static PyMethodDef methods[] = {
    {"cut", cut, METH_VARARGS,
     "cut(body, row_type, first_line, quoted, nan) -> runs.csv rows of row_type, or None."},
    {"iso_ns", iso_ns, METH_O,
     "iso_ns(texts) -> int64 ns of ISO 8601 UTC times (bytearray), or None."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_rowscan",
    "runs.csv rows and their start times in C (thruput.campaign.monitor._split_rows).",
    -1, methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC
PyInit__rowscan(void)
{
    return PyModule_Create(&module);
}
