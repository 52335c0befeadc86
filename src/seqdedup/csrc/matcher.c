/*
 * The exact window rule (the matcher): turn key hashes into keep/skip decisions.
 *
 *   - a record's key hash has two 64-bit lanes; a window's fingerprint has one lane
 *     per lane of the keys, sum(h[j+k].lane * R[lane][k]) mod p over its W records,
 *     p = 2^61 - 1, R[lane][k] = B_lane^(W-1-k) for a secret base per lane: the same
 *     definition as the Python engine, computed here rolling from window to window;
 *   - a fingerprint only names a candidate: a window repeats an earlier one when their
 *     key hashes are equal, compared here (one record per window along a run of
 *     repeats, all W at its start), so a shared fingerprint can never skip a record;
 *   - unlimited history: the first-start table maps a fingerprint to the start of its
 *     first window; window j repeats iff that start is <= j - W;
 *   - limited history: the rule window by window (admit j - W, look up j), in two
 *     table generations rotated every history-length, so memory stays bounded.
 *
 * A Matcher is used by one call at a time (`busy`); an error half-way through a call
 * that changes it (memory, overflow) marks it broken: every later call raises, so it
 * never gives wrong answers from half-updated state.
 */
#include "kernel.h"
#include "first_table.h"

/* Whether the object may be used: initialised and not broken (else an error is set). */
int seqdedup_matcher_usable(const Matcher *m)
{
    if (!m->ready) {
        PyErr_SetString(PyExc_RuntimeError, "Matcher is not initialised");
        return -1;
    }
    if (m->broken) {
        PyErr_SetString(PyExc_RuntimeError,
                        "Matcher is unusable after an earlier error in one of its calls; "
                        "make a new one");
        return -1;
    }
    return 0;
}

/* Enter a call: refuse an object that is not seqdedup_matcher_usable, or in use. */
int seqdedup_matcher_enter(Matcher *m)
{
    if (seqdedup_matcher_usable(m) < 0) return -1;
    if (m->busy) {
        PyErr_SetString(PyExc_RuntimeError, "Matcher is in use by another thread");
        return -1;
    }
    m->busy = 1;
    return 0;
}

/* Leave a call; `result` NULL after the state may have changed: the object is broken. */
PyObject *seqdedup_matcher_leave(Matcher *m, PyObject *result, int changed)
{
    m->busy = 0;
    if (result == NULL && changed) m->broken = 1;
    return result;
}

static uint64_t splitmix64(uint64_t z)
{
    z += 0x9E3779B97F4A7C15ULL;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

uint64_t *seqdedup_coefficients(Py_ssize_t width, Hash128 seeds)
{
    Py_ssize_t count = 2 * width;
    if ((size_t)width > SIZE_MAX / 2 / sizeof(uint64_t) ||
        (size_t)count > SIZE_MAX / sizeof(uint64_t))
        return (void)seqdedup_no_memory(), NULL;
    uint64_t *out = PyMem_RawMalloc((size_t)count * sizeof(uint64_t) + 1);
    if (out == NULL) return (void)seqdedup_no_memory(), NULL;
    /* Lane l's coefficients are the powers of its base B_l, R[l][k] = B_l^(W-1-k) mod p,
     * so that the next window's fingerprint follows from the last one (see
     * rolling_fingerprints). B_l is drawn from lane l's seed, from 2 to p - 2: secret
     * whenever the seed is, which is what keeps an input from aiming at its roots. */
    const uint64_t lane_seeds[2] = {seeds.lo, seeds.hi};
    for (int lane = 0; lane < 2; lane++) {
        uint64_t base = 2 + splitmix64(lane_seeds[lane] ^ 0x5851F42D4C957F2DULL) % (FP_PRIME - 3);
        uint64_t power = 1;
        for (Py_ssize_t k = width - 1; k >= 0; k--) {
            out[lane * width + k] = power;
            power = fp_mul(power, base);
        }
    }
    return out;
}

/* The fingerprints of the `count` windows starting at h[0 .. count-1]: the first in
 * full, then each from the one before, fp(j+1) = (fp(j) - h[j] * B^(W-1)) * B + h[j+W]
 * per lane (mod p): two multiplications per lane instead of W. */
void seqdedup_rolling_fingerprints(const Hash128 *h, size_t count, const uint64_t *coeffs,
                                   Py_ssize_t width, Hash128 *out)
{
    if (count == 0) return;
    if (width == 1) { /* a 1-record window is its key hash */
        memcpy(out, h, count * sizeof(Hash128));
        return;
    }
    Hash128 fp = seqdedup_fingerprint(h, coeffs, width);
    out[0] = fp;
    const uint64_t base_lo = coeffs[width - 2], base_hi = coeffs[2 * width - 2];
    /* -B^W per lane: B^(W-1) (the leaving record's coefficient) times B, negated */
    const uint64_t drop_lo = fp_sub(0, fp_mul(coeffs[0], base_lo));
    const uint64_t drop_hi = fp_sub(0, fp_mul(coeffs[width], base_hi));
    for (size_t k = 1; k < count; k++) {
        const Hash128 gone = h[k - 1], come = h[k - 1 + (size_t)width];
        fp.lo = fp_roll(fp.lo, base_lo, gone.lo, drop_lo, come.lo);
        fp.hi = fp_roll(fp.hi, base_hi, gone.hi, drop_hi, come.hi);
        out[k] = fp;
    }
}

/* The tests' hook (force_collisions): every window of W >= 2 gets one fingerprint, as if
 * an input had found the bases' roots, so that only the confirmation tells them apart. */
void seqdedup_collide(const Matcher *m, Hash128 *fps, size_t count)
{
    const Hash128 shared = {1, 1};
    if (m->width > 1)
        for (size_t k = 0; k < count; k++) fps[k] = shared;
}

int seqdedup_ensure_coefficients(Matcher *m)
{
    if (m->coeffs == NULL) m->coeffs = seqdedup_coefficients(m->width, m->seed);
    return m->coeffs ? 0 : -1;
}

static inline void note_source(Matcher *m, int64_t window, int64_t source)
{
    m->sources[window - m->sources_base] = source;
}

/* Keep the sources of the last W-1 windows and make room for `count` more. After a
 * new stream nothing is kept: the windows before it cannot cover what comes next. */
static int prepare_sources(Matcher *m, size_t count)
{
    size_t keep = m->sources_len < (size_t)m->width - 1 ? m->sources_len : (size_t)m->width - 1;
    if (m->sources_base + (int64_t)m->sources_len != m->next) keep = 0;
    if (keep && keep < m->sources_len)
        memmove(m->sources, m->sources + m->sources_len - keep, keep * sizeof(int64_t));
    m->sources_base = m->next - (int64_t)keep;
    m->sources_len = keep;
    if (count > SIZE_MAX - keep) return seqdedup_no_memory();
    if (grow((void **)&m->sources, &m->sources_cap, keep + count, sizeof(int64_t)) < 0) return -1;
    for (size_t k = 0; k < count; k++) m->sources[keep + k] = NO_SOURCE;
    m->sources_len = keep + count;
    return 0;
}

static int note_new(Matcher *m, int flag)
{
    if (m->new_material == NULL || m->new_material == Py_None) return 0;
    return PyList_Append(m->new_material, flag ? Py_True : Py_False);
}

/* Decide windows next .. next+count-1 from their fingerprints; keep[k] for record
 * next+k. Unlimited history. */
static int decide_unlimited(Matcher *m, const Hash128 *fps, size_t count, unsigned char *keep)
{
    const int64_t width = m->width;
    int64_t cover = m->cover;
    enum { AHEAD = 8 };
    for (size_t k = 0; k < count; k++) {
        if (k + AHEAD < count) ft_prefetch(&m->first, fps[k + AHEAD]);
        int64_t j = m->next + (int64_t)k;
        int64_t first = 0, source; /* (set by ft_first_start unless it fails) */
        if (ft_first_start(&m->first, fps[k], j, &first) < 0) return -1;
        if (!seqdedup_confirm(m, j, j - first >= width ? first : NO_SOURCE, &source)) {
            keep[k] = j > cover;
            m->new_until = j + width - 1;
            if (width > 1 && seqdedup_note_new_window(m, j) < 0) return -1;
        } else {
            cover = j + width - 1;
            keep[k] = 0;
            note_source(m, j, source);
        }
        if (note_new(m, j <= m->new_until) < 0) return -1;
    }
    m->cover = cover;
    return 0;
}

/* Limited history: window `admitted` has ended, later windows may repeat it. A chain
 * goes on while occurrences are less than a history apart. */
static int admit(Matcher *m, Hash128 key, int64_t admitted)
{
    Table *cur = &m->chains[m->current], *old = &m->chains[1 - m->current];
    int created;
    int64_t *slot = table_upsert(cur, key, &created); /* one probe if present */
    if (slot == NULL) return -1;
    const int64_t *chain = created ? table_find(old, key) : slot;
    slot[0] = (chain != NULL && admitted - chain[1] <= m->horizon) ? chain[0] : admitted;
    slot[1] = admitted;
    return 0;
}

/* The same under limited history: `all` holds the fingerprints of windows
 * low .. next+count-1 (the last recent ones first). */
static int decide_limited(Matcher *m, const Hash128 *all, int64_t low, size_t count,
                          unsigned char *keep)
{
    const int64_t width = m->width, horizon = m->horizon;
    int64_t cover = m->cover;
    enum { AHEAD = 8 };
    for (size_t k = 0; k < count; k++) {
        int64_t j = m->next + (int64_t)k;
        Table *cur = &m->chains[m->current], *old = &m->chains[1 - m->current];
        if (k + AHEAD < count) { /* the probes coming up: the table is larger than cache */
            Hash128 ahead = all[j + AHEAD - low];
            table_prefetch(cur, ahead);
            table_prefetch(old, ahead);
            if (j + AHEAD - width >= low) table_prefetch(cur, all[j + AHEAD - width - low]);
        }
        if (j - width >= low && admit(m, all[j - width - low], j - width) < 0) return -1;
        Hash128 fp = all[j - low];
        int64_t *lib = m->library.cap || m->library.has_zero ? table_find(&m->library, fp) : NULL;
        int64_t *chain = table_find(cur, fp);
        if (chain == NULL) chain = table_find(old, fp);
        /* library windows come first and are never forgotten; a chain is remembered
         * while its latest window is, and its first one, while remembered, is the source */
        int64_t in_library = lib != NULL ? lib[0] : NO_SOURCE, in_chain = NO_SOURCE;
        if (chain != NULL && j - chain[1] <= horizon)
            in_chain = j - chain[0] <= horizon ? chain[0] : chain[1];
        int64_t source;
        int repeat = seqdedup_confirm(m, j, in_library != NO_SOURCE ? in_library : in_chain, &source);
        if (repeat) {
            cover = j + width - 1;
            keep[k] = 0;
            note_source(m, j, source);
        } else {
            keep[k] = j > cover;
            m->new_until = j + width - 1;
        }
        if (note_new(m, j <= m->new_until) < 0) return -1;
        if (j + 1 - m->rotated_at >= horizon) {
            /* Two generations, each a history long: whatever was last written two
             * rotations ago is older than the history, so dropping it forgets nothing
             * still remembered. */
            table_clear(old);
            m->current = 1 - m->current;
            m->rotated_at = j + 1;
        }
    }
    m->cover = cover;
    return 0;
}

/* Take `n` more hashes; decide every window completed. The flags of the decided
 * records go to m->keep from index `at` on; returns their number, or -1 on error. */
Py_ssize_t seqdedup_push_core(Matcher *m, const Hash128 *hashes, size_t n, size_t at)
{
    size_t width = (size_t)m->width;
    if (seqdedup_note_keys(m, hashes, n, m->next + (int64_t)m->tail_len) < 0) return -1;
    if (seqdedup_log_keys(m, hashes, n) < 0) return -1;
    if (n > SIZE_MAX / 2 - m->tail_len) return seqdedup_no_memory();
    size_t total = m->tail_len + n;
    if (total > SIZE_MAX / 2 / sizeof(Hash128)) return seqdedup_no_memory();
    if (total < width) { /* no window completes: everything waits in the tail */
        if (grow((void **)&m->tail, &m->tail_cap, total, sizeof(Hash128)) < 0) return -1;
        if (n) memcpy(m->tail + m->tail_len, hashes, n * sizeof(Hash128));
        m->tail_len = total;
        return 0;
    }
    if (seqdedup_ensure_coefficients(m) < 0) return -1;
    size_t count = total - width + 1;
    size_t recent = m->limited ? m->recent_len : 0;
    if (count > SIZE_MAX - at) return seqdedup_no_memory();
    if (grow((void **)&m->scratch_fps, &m->scratch_fps_cap, recent + count, sizeof(Hash128)) < 0 ||
        grow((void **)&m->keep, &m->keep_cap, at + count, 1) < 0)
        return -1;
    if (prepare_sources(m, count) < 0) return -1;
    /* The key hashes from record next on: the log holds them in order (W > 1); at W = 1
     * nothing waits (no tail), so they are the ones given. */
    const Hash128 *all = m->log_len ? m->log + (m->next - m->log_base) : hashes;
    Hash128 *fps = m->scratch_fps;
    unsigned char *keep = m->keep + at;
    if (recent) memcpy(fps, m->recent, recent * sizeof(Hash128));
    const Hash128 *windows = fps; /* their fingerprints, the recent ones first */
    if (width == 1 && !recent) {
        windows = all; /* a 1-record window's fingerprint is its key hash */
    } else {
        seqdedup_rolling_fingerprints(all, count, m->coeffs, m->width, fps + recent);
        if (m->force_collisions) seqdedup_collide(m, fps + recent, count);
    }
    if (m->limited) {
        if (decide_limited(m, windows, m->next - (int64_t)recent, count, keep) < 0) return -1;
        /* keep the last W fingerprints for admission */
        size_t have = recent + count, keep_n = have < width ? have : width;
        if (grow((void **)&m->recent, &m->recent_cap, keep_n, sizeof(Hash128)) < 0) return -1;
        memmove(m->recent, windows + have - keep_n, keep_n * sizeof(Hash128));
        m->recent_len = keep_n;
        m->recent_end = m->next + (int64_t)count;
    } else if (decide_unlimited(m, windows, count, keep) < 0) {
        return -1;
    }
    size_t rest = total - count; /* = W - 1 */
    if (grow((void **)&m->tail, &m->tail_cap, rest, sizeof(Hash128)) < 0) return -1;
    if (rest) memcpy(m->tail, all + count, rest * sizeof(Hash128)); /* tail is NULL at W=1 */
    m->tail_len = rest;
    m->next += (int64_t)count;
    return (Py_ssize_t)count;
}

/* End of input: the records left (no window starts at them), flags from m->keep[at]. */
Py_ssize_t seqdedup_finish_core(Matcher *m, size_t at)
{
    size_t count = m->tail_len;
    if (count > SIZE_MAX - at || grow((void **)&m->keep, &m->keep_cap, at + count + 1, 1) < 0) {
        if (!PyErr_Occurred()) PyErr_NoMemory();
        return -1;
    }
    for (size_t k = 0; k < count; k++) {
        int64_t j = m->next + (int64_t)k;
        m->keep[at + k] = j > m->cover;
        if (note_new(m, j <= m->new_until) < 0) return -1;
    }
    m->next += (int64_t)count;
    m->tail_len = 0;
    return (Py_ssize_t)count;
}

/* The hashes of a buffer, copied to aligned scratch (a buffer may be unaligned). */
static Hash128 *scratch_copy(Matcher *m, const Py_buffer *view)
{
    size_t n = (size_t)view->len / sizeof(Hash128);
    if (grow((void **)&m->scratch_hashes, &m->scratch_hashes_cap, n + 1, sizeof(Hash128)) < 0)
        return NULL;
    if (n) memcpy(m->scratch_hashes, view->buf, n * sizeof(Hash128));
    return m->scratch_hashes;
}

static PyObject *flags_to_list(const unsigned char *keep, size_t count)
{
    PyObject *list = PyList_New((Py_ssize_t)count);
    if (list == NULL) return NULL;
    for (size_t k = 0; k < count; k++) {
        PyObject *flag = keep[k] ? Py_True : Py_False;
        Py_INCREF(flag);
        PyList_SET_ITEM(list, (Py_ssize_t)k, flag);
    }
    return list;
}

/* A buffer of native int64/uint64 values, `unit` bytes per value (8, or 16 for two
 * lanes): raw bytes (a multiple of `unit` long), or a typed buffer of 8-byte integers
 * (array('q'), an int64 numpy array); never floats or other widths whose byte length
 * happens to be a multiple of 8. */
int seqdedup_get_words(PyObject *obj, Py_buffer *view, Py_ssize_t unit)
{
    if (PyObject_GetBuffer(obj, view, PyBUF_FORMAT | PyBUF_C_CONTIGUOUS) < 0) return -1;
    const char *f = view->format;
    if (f != NULL && (f[0] == '@' || f[0] == '=' || f[0] == '<' || f[0] == '>')) {
        int foreign = (f[0] == '<' && PY_BIG_ENDIAN) || (f[0] == '>' && PY_LITTLE_ENDIAN);
        f = foreign ? "x" : f + 1;
    }
    int raw = f == NULL || strcmp(f, "B") == 0 || strcmp(f, "b") == 0 || strcmp(f, "c") == 0;
    int words = view->itemsize == 8 && f != NULL &&
                (strcmp(f, "q") == 0 || strcmp(f, "Q") == 0 || strcmp(f, "l") == 0 ||
                 strcmp(f, "L") == 0);
    if (!(raw || words) || view->len % unit) {
        PyBuffer_Release(view);
        PyErr_SetString(PyExc_ValueError, unit == 8 ? "expected a buffer of 8-byte integers"
                                                    : "hashes must be a buffer of 16-byte "
                                                      "values (two 8-byte lanes each)");
        return -1;
    }
    return 0;
}

int seqdedup_get_hashes(PyObject *obj, Py_buffer *view) { return seqdedup_get_words(obj, view, 16); }

/* push() and the chunk path keep different records: one matcher takes one of them. */
int seqdedup_matcher_fed_by(Matcher *m, int how)
{
    if (m->sized != NULL && how != 2) {
        PyErr_SetString(PyExc_RuntimeError, "a Matcher with a SizeDecider takes chunks only");
        return -1;
    }
    if (m->fed_by != 0 && m->fed_by != how) {
        PyErr_SetString(PyExc_RuntimeError, "push() and feed_chunk() cannot be mixed");
        return -1;
    }
    m->fed_by = how;
    return 0;
}

PyObject *seqdedup_matcher_push(Matcher *m, PyObject *arg)
{
    if (seqdedup_matcher_enter(m) < 0) return NULL;
    if (seqdedup_matcher_fed_by(m, 1) < 0) return seqdedup_matcher_leave(m, NULL, 0);
    Py_buffer view;
    if (seqdedup_get_hashes(arg, &view) < 0) return seqdedup_matcher_leave(m, NULL, 0);
    Hash128 *hashes = scratch_copy(m, &view);
    size_t n = (size_t)view.len / sizeof(Hash128);
    PyBuffer_Release(&view);
    if (hashes == NULL) return seqdedup_matcher_leave(m, NULL, 0);
    Py_ssize_t count = seqdedup_push_core(m, hashes, n, 0);
    return seqdedup_matcher_leave(m, count < 0 ? NULL : flags_to_list(m->keep, (size_t)count), 1);
}

PyObject *seqdedup_matcher_finish(Matcher *m, PyObject *Py_UNUSED(ignored))
{
    if (seqdedup_matcher_enter(m) < 0) return NULL;
    if (seqdedup_matcher_fed_by(m, 1) < 0) return seqdedup_matcher_leave(m, NULL, 0);
    Py_ssize_t count = seqdedup_finish_core(m, 0);
    return seqdedup_matcher_leave(m, count < 0 ? NULL : flags_to_list(m->keep, (size_t)count), 1);
}

static PyObject *Matcher_fingerprints_in(Matcher *m, PyObject *args);

PyObject *seqdedup_matcher_fingerprints(Matcher *m, PyObject *args)
{
    if (seqdedup_matcher_enter(m) < 0) return NULL;
    return seqdedup_matcher_leave(m, Matcher_fingerprints_in(m, args), 0); /* only scratch changes */
}

static PyObject *Matcher_fingerprints_in(Matcher *m, PyObject *args)
{
    PyObject *obj;
    Py_ssize_t count;
    if (!PyArg_ParseTuple(args, "On", &obj, &count)) return NULL;
    Py_buffer view;
    if (seqdedup_get_hashes(obj, &view) < 0) return NULL;
    Py_ssize_t n = view.len / (Py_ssize_t)sizeof(Hash128);
    if (count < 0 || (count > 0 && (n < m->width || count > n - (m->width - 1)))) {
        PyBuffer_Release(&view);
        PyErr_SetString(PyExc_ValueError, "not enough hashes for that many windows");
        return NULL;
    }
    if (seqdedup_ensure_coefficients(m) < 0) {
        PyBuffer_Release(&view);
        return NULL;
    }
    Hash128 *h = scratch_copy(m, &view);
    PyBuffer_Release(&view);
    if (h == NULL) return NULL;
    if (count > PY_SSIZE_T_MAX / 16) return PyErr_NoMemory();
    PyObject *out = PyBytes_FromStringAndSize(NULL, count * 16);
    if (out == NULL) return NULL;
    char *dst = PyBytes_AS_STRING(out);
    Hash128 *fps = NULL;
    if (count > 0) {
        fps = PyMem_RawMalloc((size_t)count * sizeof(Hash128));
        if (fps == NULL) {
            Py_DECREF(out);
            return PyErr_NoMemory();
        }
        seqdedup_rolling_fingerprints(h, (size_t)count, m->coeffs, m->width, fps);
        if (m->force_collisions) seqdedup_collide(m, fps, (size_t)count);
        memcpy(dst, fps, (size_t)count * sizeof(Hash128));
    }
    PyMem_RawFree(fps);
    return out;
}

PyObject *seqdedup_matcher_source(Matcher *m, PyObject *arg)
{
    if (seqdedup_matcher_usable(m) < 0) return NULL;
    long long window = PyLong_AsLongLong(arg);
    if (window == -1 && PyErr_Occurred()) return NULL;
    if (window >= m->sources_base && window - m->sources_base < (int64_t)m->sources_len) {
        int64_t source = m->sources[window - m->sources_base];
        if (source != NO_SOURCE) return PyLong_FromLongLong(source);
    }
    Py_RETURN_NONE;
}

/* After finish() or finish_chunks(): what follows is a new stream. Its windows may
 * repeat every remembered window of the earlier streams, and none spans the boundary:
 * the last windows are admitted now (nothing later can overlap them). */
PyObject *seqdedup_matcher_new_input(Matcher *m, PyObject *Py_UNUSED(ignored))
{
    if (seqdedup_matcher_enter(m) < 0) return NULL;
    if (m->tail_len || (m->fed_by == 2 && !m->chunks_finished)) {
        PyErr_SetString(PyExc_RuntimeError, "new_input() comes after finish()");
        return seqdedup_matcher_leave(m, NULL, 0);
    }
    int64_t first = m->recent_end - (int64_t)m->recent_len;
    for (size_t k = 0; k < m->recent_len; k++)
        if (admit(m, m->recent[k], first + (int64_t)k) < 0) return seqdedup_matcher_leave(m, NULL, 1);
    if (seqdedup_note_stream_start(m) < 0) return seqdedup_matcher_leave(m, NULL, 1);
    m->recent_len = 0;
    /* the chunk path starts empty again */
    m->chunks_finished = 0;
    m->final_without_delimiter = 0;
    m->buf_len = m->tail_start = m->scan_from = 0;
    m->rec_len = m->rec_classified = 0;
    Py_INCREF(Py_None);
    return seqdedup_matcher_leave(m, Py_None, 1);
}
