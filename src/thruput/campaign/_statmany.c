/* Size and modification time of many files under one folder: for an append's check of
 * the raw files a monitor store already holds (thruput.campaign.store._stat), and for the
 * files of a unit as a worker reads them, each also asked into the page cache
 * (thruput.campaign.regions.read_unit). One fstatat(2) per file, by name in its open
 * folder (or openat, posix_fadvise and fstat), with no Python object per file but its
 * encoded path. Optional: without it, store._stat does the same in Python.
 *
 * stat_many(top, paths, load=False) -> (size, mtime_ns): two bytes objects of native
 * int64, one value per path; -1 for an empty path or one that cannot be stat-ed. With
 * load, each file is also asked into the page cache.
 * stat_joined(top, joined, first, count): the same of entries first .. first + count - 1
 * of paths NUL-joined in one bytes object (the sources of a store's record as its file
 * holds them: no str made of them at all).
 * find_any(joined, wanted): whether any of an append's new run ids is among the NUL-joined
 * ids of the record (thruput.campaign.store._refuse_stored_runs).
 * journal_scan(joined, files, folders): which of a record's NUL-joined sources the
 * directory's change journal names, in one pass (thruput.campaign.store.journaled).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Stat the n files names[i] (lengths[i] bytes; -1 for an empty one or one holding a
 * NUL) under the folder top_path into size and mtime. With load, each file is opened
 * (without blocking: a FIFO would wait for a writer), the kernel asked to load it into
 * the page cache (posix_fadvise WILLNEED: the read starts, the call returns) and stat-ed
 * by its descriptor; one that cannot be opened is stat-ed by name. Runs without the GIL. */
static void
stat_all(const char *top_path, const char **names, const Py_ssize_t *lengths, Py_ssize_t n,
         int64_t *size, int64_t *mtime, int load)
{
    int top_fd = open(top_path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    int fd = -1;                        /* the folder open now, and its name */
    const char *folder = NULL;
    Py_ssize_t folder_len = -1;
    for (Py_ssize_t i = 0; i < n; i++) {
        const char *path = names[i], *slash;
        Py_ssize_t len = lengths[i];
        struct stat st;
        size[i] = mtime[i] = -1;
        if (top_fd < 0 || len == 0 || (Py_ssize_t)strlen(path) != len)
            continue;                   /* nothing there, no file, or a NUL inside */
        slash = strrchr(path, '/');
        Py_ssize_t head = slash ? slash - path : 0;
        if (head != folder_len || (head && memcmp(path, folder, head) != 0)) {
            if (fd >= 0 && fd != top_fd)
                close(fd);
            fd = top_fd;
            if (head) {
                char buf[4096];
                if (head >= (Py_ssize_t)sizeof(buf)) {
                    fd = -1;
                } else {
                    memcpy(buf, path, head);
                    buf[head] = '\0';
                    fd = openat(top_fd, buf, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                }
            }
            folder = path;
            folder_len = head;
        }
        if (fd < 0)
            continue;                   /* no folder: no file in it */
        const char *name = slash ? slash + 1 : path;
        int ok = -1;
        if (load) {
            int file = openat(fd, name, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
            if (file >= 0) {
#ifdef POSIX_FADV_WILLNEED              /* (not on macOS: the file is stat-ed only) */
                posix_fadvise(file, 0, 0, POSIX_FADV_WILLNEED);
#endif
                ok = fstat(file, &st);
                close(file);
            }
        }
        if (ok != 0)
            ok = fstatat(fd, name, &st, 0);
        if (ok == 0) {
            size[i] = (int64_t)st.st_size;
            mtime[i] = (int64_t)st.st_mtim.tv_sec * 1000000000 + (int64_t)st.st_mtim.tv_nsec;
        }
    }
    if (fd >= 0 && fd != top_fd)
        close(fd);
    if (top_fd >= 0)
        close(top_fd);
}

static PyObject *
stat_many(PyObject *self, PyObject *args)
{
    PyObject *top_obj, *paths_obj, *top = NULL, *seq = NULL, *encoded = NULL;
    PyObject *size_out = NULL, *mtime_out = NULL, *result = NULL;
    const char **names = NULL;
    Py_ssize_t *lengths = NULL;
    int load = 0;

    if (!PyArg_ParseTuple(args, "OO|p", &top_obj, &paths_obj, &load))
        return NULL;
    if (!PyUnicode_FSConverter(top_obj, &top))
        return NULL;
    seq = PySequence_Fast(paths_obj, "paths must be a sequence of str");
    if (seq == NULL)
        goto done;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    encoded = PyList_New(n);            /* keeps every encoded path alive without the GIL */
    size_out = PyBytes_FromStringAndSize(NULL, n * (Py_ssize_t)sizeof(int64_t));
    mtime_out = PyBytes_FromStringAndSize(NULL, n * (Py_ssize_t)sizeof(int64_t));
    names = PyMem_Malloc((n ? n : 1) * sizeof(char *));
    lengths = PyMem_Malloc((n ? n : 1) * sizeof(Py_ssize_t));
    if (encoded == NULL || size_out == NULL || mtime_out == NULL || names == NULL || lengths == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *item = PySequence_Fast_GET_ITEM(seq, i), *bytes;
        if (!PyUnicode_Check(item)) {
            PyErr_SetString(PyExc_TypeError, "paths must be str");
            goto done;
        }
        bytes = PyUnicode_EncodeFSDefault(item);
        if (bytes == NULL)
            goto done;
        PyList_SET_ITEM(encoded, i, bytes);
        names[i] = PyBytes_AS_STRING(bytes);
        lengths[i] = PyBytes_GET_SIZE(bytes);
    }
    int64_t *size = (int64_t *)PyBytes_AS_STRING(size_out);
    int64_t *mtime = (int64_t *)PyBytes_AS_STRING(mtime_out);
    const char *top_path = PyBytes_AS_STRING(top);

    Py_BEGIN_ALLOW_THREADS
    stat_all(top_path, names, lengths, n, size, mtime, load);
    Py_END_ALLOW_THREADS

    result = PyTuple_Pack(2, size_out, mtime_out);
done:
    PyMem_Free(names);
    PyMem_Free(lengths);
    Py_XDECREF(top);
    Py_XDECREF(seq);
    Py_XDECREF(encoded);
    Py_XDECREF(size_out);
    Py_XDECREF(mtime_out);
    return result;
}


/* stat_joined(top, joined, first, count) -> (size, mtime_ns) as stat_many, of entries
 * first .. first + count - 1 of joined: paths in the file system's encoding, each
 * followed by a NUL but the last. A count larger than the entries there are is a
 * ValueError before anything is sized by it. */
static PyObject *
stat_joined(PyObject *self, PyObject *args)
{
    PyObject *top_obj, *top = NULL, *size_out = NULL, *mtime_out = NULL, *result = NULL;
    Py_buffer view = {0};
    Py_ssize_t first, count;
    const char **names = NULL;
    Py_ssize_t *lengths = NULL;
    char *copy = NULL;
    int bad = 0;

    if (!PyArg_ParseTuple(args, "Oy*nn", &top_obj, &view, &first, &count))
        return NULL;
    if (!PyUnicode_FSConverter(top_obj, &top))
        goto done;
    if (first < 0 || count < 0) {
        PyErr_SetString(PyExc_ValueError, "first and count must not be negative");
        goto done;
    }
    /* (count is checked against the bytes there are before it sizes anything) */
    if (count > view.len + 1) {
        PyErr_SetString(PyExc_ValueError, "fewer paths than count");
        goto done;
    }
    size_out = PyBytes_FromStringAndSize(NULL, count * (Py_ssize_t)sizeof(int64_t));
    mtime_out = PyBytes_FromStringAndSize(NULL, count * (Py_ssize_t)sizeof(int64_t));
    names = PyMem_Malloc((count ? count : 1) * sizeof(char *));
    lengths = PyMem_Malloc((count ? count : 1) * sizeof(Py_ssize_t));
    copy = PyMem_Malloc(view.len + 1);
    if (size_out == NULL || mtime_out == NULL || names == NULL || lengths == NULL || copy == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    int64_t *size = (int64_t *)PyBytes_AS_STRING(size_out);
    int64_t *mtime = (int64_t *)PyBytes_AS_STRING(mtime_out);
    const char *top_path = PyBytes_AS_STRING(top);

    Py_BEGIN_ALLOW_THREADS
    const char *buf = view.buf, *end = buf + view.len;
    const char *at = buf;
    for (Py_ssize_t k = 0; k < first && !bad; k++) {
        const char *nul = memchr(at, 0, end - at);
        if (nul == NULL)
            bad = 1;
        else
            at = nul + 1;
    }
    if (!bad && count) {
        /* a NUL-ended copy of the entries wanted: every name is then a C string */
        memcpy(copy, at, end - at);
        copy[end - at] = '\0';
        char *c = copy, *cend = copy + (end - at);
        for (Py_ssize_t i = 0; i < count; i++) {
            char *nul = memchr(c, 0, cend - c + 1);
            if (nul == NULL || (nul == cend && i + 1 < count)) {
                bad = 1;
                break;
            }
            names[i] = c;
            lengths[i] = nul - c;
            c = nul + 1;
        }
        if (!bad)
            stat_all(top_path, names, lengths, count, size, mtime, 0);
    }
    Py_END_ALLOW_THREADS

    if (bad) {
        PyErr_SetString(PyExc_ValueError, "fewer paths than first + count");
        goto done;
    }
    result = PyTuple_Pack(2, size_out, mtime_out);
done:
    PyBuffer_Release(&view);
    PyMem_Free(names);
    PyMem_Free(lengths);
    PyMem_Free(copy);
    Py_XDECREF(top);
    Py_XDECREF(size_out);
    Py_XDECREF(mtime_out);
    return result;
}

/* A set of bytes strings (an append's new run ids, the files and folders a journal
 * names): an open-addressing table of indexes into a sequence of bytes objects, sized by
 * their number, never by anything in the bytes searched. Strings are hashed eight bytes
 * at a time (the entries searched are tens of bytes each, millions of them). */
typedef struct {
    PyObject *seq;          /* PySequence_Fast of the strings */
    Py_ssize_t *slots;      /* index into seq + 1; 0: empty */
    Py_ssize_t size, n;
} table_t;

static uint64_t
hash_bytes(const char *s, Py_ssize_t n)
{
    uint64_t h = 0x9E3779B97F4A7C15ULL ^ (uint64_t)n, w;
    for (; n >= 8; s += 8, n -= 8) {
        memcpy(&w, s, 8);
        h = (h ^ w) * 0xff51afd7ed558ccdULL;
        h ^= h >> 32;
    }
    w = 0;
    memcpy(&w, s, (size_t)n);
    h = (h ^ w) * 0xc4ceb9fe1a85ec53ULL;
    return h ^ (h >> 29);
}

/* The table of the bytes objects of the sequence obj; what: the TypeError's message if
 * obj is not a sequence of bytes. */
static int
table_init(table_t *t, PyObject *obj, const char *what)
{
    t->slots = NULL;
    t->seq = PySequence_Fast(obj, what);
    if (t->seq == NULL)
        return -1;
    t->n = PySequence_Fast_GET_SIZE(t->seq);
    for (t->size = 8; t->size < 2 * t->n; t->size *= 2)
        ;
    t->slots = PyMem_Calloc(t->size, sizeof(Py_ssize_t));
    if (t->slots == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t i = 0; i < t->n; i++) {
        PyObject *item = PySequence_Fast_GET_ITEM(t->seq, i);
        if (!PyBytes_Check(item)) {
            PyErr_SetString(PyExc_TypeError, what);
            return -1;
        }
        Py_ssize_t k = (Py_ssize_t)(hash_bytes(PyBytes_AS_STRING(item), PyBytes_GET_SIZE(item))
                                    & (uint64_t)(t->size - 1));
        while (t->slots[k])
            k = (k + 1) & (t->size - 1);
        t->slots[k] = i + 1;
    }
    return 0;
}

/* Whether s (len bytes) is in the table; no Python object is made (runs without the GIL). */
static int
table_has(const table_t *t, const char *s, Py_ssize_t len)
{
    if (t->n == 0)
        return 0;
    PyObject **items = PySequence_Fast_ITEMS(t->seq);
    for (Py_ssize_t k = (Py_ssize_t)(hash_bytes(s, len) & (uint64_t)(t->size - 1)); t->slots[k];
         k = (k + 1) & (t->size - 1)) {
        PyObject *w = items[t->slots[k] - 1];
        if (PyBytes_GET_SIZE(w) == len && memcmp(PyBytes_AS_STRING(w), s, (size_t)len) == 0)
            return 1;
    }
    return 0;
}

static void
table_free(table_t *t)
{
    PyMem_Free(t->slots);
    Py_XDECREF(t->seq);
}

/* find_any(joined, wanted) -> the index of the first entry of joined (strings each
 * followed by a NUL but the last) that equals one of wanted (a sequence of bytes), or -1:
 * whether an append's new run ids are among the ids a store holds (its record's bytes),
 * without a Python object per stored id. */
static PyObject *
find_any(PyObject *self, PyObject *args)
{
    PyObject *wanted_obj, *result = NULL;
    Py_buffer view = {0};
    table_t wanted = {0};
    Py_ssize_t found = -1;

    if (!PyArg_ParseTuple(args, "y*O", &view, &wanted_obj))
        return NULL;
    if (table_init(&wanted, wanted_obj, "wanted must be a sequence of bytes") < 0)
        goto done;
    if (wanted.n) {
        Py_BEGIN_ALLOW_THREADS
        const char *at = view.buf, *end = at + view.len;
        for (Py_ssize_t entry = 0;; entry++) {
            const char *nul = memchr(at, 0, (size_t)(end - at));
            if (table_has(&wanted, at, (nul ? nul : end) - at)) {
                found = entry;
                break;
            }
            if (nul == NULL)
                break;
            at = nul + 1;
        }
        Py_END_ALLOW_THREADS
    }
    result = PyLong_FromSsize_t(found);
done:
    PyBuffer_Release(&view);
    table_free(&wanted);
    return result;
}

/* Whether the path s (len > 0 bytes) is written as a journal names files: relative, its
 * parts joined by single slashes, none of them "." or "..". */
static int
as_journaled(const char *s, Py_ssize_t len)
{
    const char *end = s + len;
    for (;;) {
        const char *slash = memchr(s, '/', (size_t)(end - s)), *stop = slash ? slash : end;
        Py_ssize_t n = stop - s;
        if (n == 0 || (n == 1 && s[0] == '.') || (n == 2 && s[0] == '.' && s[1] == '.'))
            return 0;
        if (slash == NULL)
            return 1;
        s = slash + 1;
    }
}

/* journal_scan(joined, files, folders) -> None if an entry of joined (a store's sources,
 * NUL-joined) is not written as a journal names files (as_journaled; an empty entry, a run
 * with no file, is allowed), else (hits, named): the indexes of the entries equal to one of
 * files or under one of folders (each ending in a slash), and whether no entry is empty.
 * One pass over joined, with no Python object per entry: what an append's check of the
 * stored files does with the journal (thruput.campaign.store.journaled). */
static PyObject *
journal_scan(PyObject *self, PyObject *args)
{
    PyObject *files_obj, *folders_obj, *result = NULL;
    Py_buffer view = {0};
    table_t files = {0}, folders = {0};
    Py_ssize_t *hits = NULL, n_hits = 0, room = 0;
    int ok = 1, named = 1, no_memory = 0;

    if (!PyArg_ParseTuple(args, "y*OO", &view, &files_obj, &folders_obj))
        return NULL;
    if (table_init(&files, files_obj, "files must be a sequence of bytes") < 0
        || table_init(&folders, folders_obj, "folders must be a sequence of bytes") < 0)
        goto done;
    Py_BEGIN_ALLOW_THREADS
    const char *at = view.buf, *end = at + view.len;
    for (Py_ssize_t entry = 0; view.len; entry++) {
        const char *nul = memchr(at, 0, (size_t)(end - at));
        Py_ssize_t len = (nul ? nul : end) - at;
        if (len == 0)
            named = 0;
        else if (!as_journaled(at, len)) {
            ok = 0;
            break;
        }
        int hit = table_has(&files, at, len);
        for (Py_ssize_t i = 0; !hit && folders.n && i < len; i++)
            hit = at[i] == '/' && table_has(&folders, at, i + 1);
        if (hit) {
            if (n_hits == room) {       /* (grows with the entries found, as a list would) */
                Py_ssize_t *more = realloc(hits, (size_t)(room = 2 * room + 64) * sizeof(Py_ssize_t));
                if (more == NULL) {
                    no_memory = 1;
                    break;
                }
                hits = more;
            }
            hits[n_hits++] = entry;
        }
        if (nul == NULL)
            break;
        at = nul + 1;
    }
    Py_END_ALLOW_THREADS
    if (no_memory) {
        PyErr_NoMemory();
        goto done;
    }
    if (!ok) {
        Py_INCREF(Py_None);
        result = Py_None;
        goto done;
    }
    PyObject *list = PyList_New(n_hits);
    if (list == NULL)
        goto done;
    for (Py_ssize_t i = 0; i < n_hits; i++) {
        PyObject *v = PyLong_FromSsize_t(hits[i]);
        if (v == NULL) {
            Py_DECREF(list);
            goto done;
        }
        PyList_SET_ITEM(list, i, v);
    }
    result = Py_BuildValue("(NO)", list, named ? Py_True : Py_False);
done:
    free(hits);
    PyBuffer_Release(&view);
    table_free(&files);
    table_free(&folders);
    return result;
}

static PyMethodDef methods[] = {
    {"stat_many", stat_many, METH_VARARGS,
     "stat_many(top, paths, load=False) -> (size, mtime_ns): int64 bytes, -1 where there is no file;\n"
     "load: each file also asked into the page cache (posix_fadvise WILLNEED)."},
    {"stat_joined", stat_joined, METH_VARARGS,
     "stat_joined(top, joined, first, count) -> stat_many of entries first.. of NUL-joined paths."},
    {"find_any", find_any, METH_VARARGS,
     "find_any(joined, wanted) -> index of the first NUL-joined entry equal to one of wanted (bytes), or -1."},
    {"journal_scan", journal_scan, METH_VARARGS,
     "journal_scan(joined, files, folders) -> None if a NUL-joined path is not as a journal names files,\n"
     "else (indexes of the entries equal to one of files or under one of folders, no entry empty)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_statmany",
    "fstatat(2) of many files by name in their open folders (thruput.campaign.store._stat).",
    -1, methods,
};

PyMODINIT_FUNC
PyInit__statmany(void)
{
    return PyModule_Create(&module);
}
