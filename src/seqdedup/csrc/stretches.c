/*
 * The chunk path's new material for the library saved: the stretches of records that
 * first-seen windows cover, handed to Python as library rows encode them (no Python
 * object per record).
 */
#include "kernel.h"

/* One stretch of records k .. stop-1 as a library row holds them (library.store's
 * encode_records): (start, stop, lengths as little-endian uint32, the records joined). */
static PyObject *encoded_stretch(const Matcher *m, size_t k, size_t stop, int64_t first_index)
{
    size_t total = 0;
    for (size_t r = k; r < stop; r++) {
        size_t len = m->rec_end[r] - m->rec_start[r];
        if (len > UINT32_MAX) {
            PyErr_SetString(PyExc_OverflowError, "a record of 4 GiB or more cannot be saved");
            return NULL;
        }
        total += len;
    }
    PyObject *lengths = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(4 * (stop - k)));
    PyObject *contents = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)total);
    if (lengths == NULL || contents == NULL) {
        Py_XDECREF(lengths);
        Py_XDECREF(contents);
        return NULL;
    }
    unsigned char *l = (unsigned char *)PyBytes_AS_STRING(lengths);
    char *c = PyBytes_AS_STRING(contents);
    for (size_t r = k; r < stop; r++) {
        size_t len = m->rec_end[r] - m->rec_start[r];
        for (int b = 0; b < 4; b++) *l++ = (unsigned char)(len >> (8 * b));
        memcpy(c, m->buf + m->rec_start[r], len);
        c += len;
    }
    return Py_BuildValue("(LLNN)", (long long)(first_index + (int64_t)k),
                         (long long)(first_index + (int64_t)stop), lengths, contents);
}

/* With new_material a list (a library is saved): the stretches of new material among
 * the `count` records decided now, whose flags the decision appended to it (then
 * dropped), encoded as encoded_stretch says. Unfiltered only: there record k is tracked
 * record first_index + k. */
int seqdedup_take_stretches(Matcher *m, size_t count, int64_t first_index)
{
    PyObject *flags = m->new_material;
    if (flags == NULL || !PyList_Check(flags) || m->filtered) return 0;
    Py_ssize_t n = PyList_GET_SIZE(flags);
    if ((size_t)n < count) {
        PyErr_SetString(PyExc_RuntimeError, "new_material holds fewer flags than records decided");
        return -1;
    }
    size_t base = (size_t)n - count;
    PyObject *list = m->stretches != NULL ? m->stretches : PyList_New(0);
    m->stretches = NULL;
    if (list == NULL) return -1;
    for (size_t k = 0; k < count;) {
        if (PyList_GET_ITEM(flags, (Py_ssize_t)(base + k)) != Py_True) {
            k++;
            continue;
        }
        size_t stop = k;
        while (stop < count && PyList_GET_ITEM(flags, (Py_ssize_t)(base + stop)) == Py_True) stop++;
        PyObject *stretch = encoded_stretch(m, k, stop, first_index);
        if (stretch == NULL || PyList_Append(list, stretch) < 0) {
            Py_XDECREF(stretch);
            Py_DECREF(list);
            return -1;
        }
        Py_DECREF(stretch);
        k = stop;
    }
    m->stretches = list;
    return PyList_SetSlice(flags, 0, n, NULL);
}
