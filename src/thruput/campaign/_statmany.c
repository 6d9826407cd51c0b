/* Size and modification time of many files under one folder, for an append's check of
 * the raw files a monitor store already holds (thruput.campaign.store._stat): one
 * fstatat(2) per file, by name in its open folder, with no Python object per file but
 * its encoded path. Optional: without it, store._stat does the same in Python.
 *
 * stat_many(top, paths) -> (size, mtime_ns): two bytes objects of native int64, one
 * value per path; -1 for an empty path or one that cannot be stat-ed.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static PyObject *
stat_many(PyObject *self, PyObject *args)
{
    PyObject *top_obj, *paths_obj, *top = NULL, *seq = NULL, *encoded = NULL;
    PyObject *size_out = NULL, *mtime_out = NULL, *result = NULL;
    const char **names = NULL;
    Py_ssize_t *lengths = NULL;

    if (!PyArg_ParseTuple(args, "OO", &top_obj, &paths_obj))
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
        if (fstatat(fd, slash ? slash + 1 : path, &st, 0) == 0) {
            size[i] = (int64_t)st.st_size;
            mtime[i] = (int64_t)st.st_mtim.tv_sec * 1000000000 + (int64_t)st.st_mtim.tv_nsec;
        }
    }
    if (fd >= 0 && fd != top_fd)
        close(fd);
    if (top_fd >= 0)
        close(top_fd);
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

static PyMethodDef methods[] = {
    {"stat_many", stat_many, METH_VARARGS,
     "stat_many(top, paths) -> (size, mtime_ns): int64 bytes, -1 where there is no file."},
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
