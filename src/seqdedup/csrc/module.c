/*
 * The module seqdedup._kernel: errors kept while the GIL is let go, the method table
 * and multi-phase initialisation (heap types, module state).
 */
#include "kernel.h"
#include "functions.h"

#include <stdarg.h>
#include <stdio.h>

/* ---- errors kept while the GIL is let go (kernel.h) ---------------------------------- */

THREAD_LOCAL int seqdedup_unlocked;

static THREAD_LOCAL struct {
    PyObject *type; /* NULL: none kept (an exception type is immortal enough: a builtin) */
    char message[256];
} kept;

int seqdedup_fail(PyObject *type, const char *format, ...)
{
    char message[256];
    va_list args;
    va_start(args, format);
    vsnprintf(message, sizeof message, format, args);
    va_end(args);
    if (!seqdedup_unlocked) {
        PyErr_SetString(type, message);
    } else if (kept.type == NULL) { /* the first failure is the one to report */
        kept.type = type;
        memcpy(kept.message, message, sizeof message);
    }
    return -1;
}

int seqdedup_no_memory(void)
{
    if (!seqdedup_unlocked) {
        PyErr_NoMemory();
        return -1;
    }
    return seqdedup_fail(PyExc_MemoryError, "out of memory");
}

void seqdedup_raise_kept(void)
{
    if (kept.type == NULL) return;
    PyErr_SetString(kept.type, kept.message);
    kept.type = NULL;
}

static PyMethodDef kernel_methods[] = {
    {"literal_mask", seqdedup_py_literal_mask, METH_VARARGS,
     "literal_mask(region, bounds, literal, anchored, open) -> bytes: 1 per record (int64 "
     "start, end pairs) that contains the literal (or starts with it)"},
    {"hash_records", (PyCFunction)(void (*)(void))seqdedup_py_hash_records,
     METH_VARARGS | METH_KEYWORDS,
     "hash_records(records, seed=0, skip_chars=0, byte_mode=False, normalize=0, "
     "skip_fields=0) -> bytes: "
     "16 per record, the key's SipHash-2-4-128 keyed with the seed (k0: its low 64 bits)"},
    {"hash_encoded", (PyCFunction)(void (*)(void))seqdedup_py_hash_encoded,
     METH_VARARGS | METH_KEYWORDS,
     "hash_encoded(encoded, seed=0, skip_chars=0, byte_mode=False, normalize=0, "
     "skip_fields=0) -> bytes: "
     "the 16-byte key hashes of a library row's records"},
    {"library_windows", seqdedup_py_library_windows, METH_VARARGS,
     "library_windows(fingerprints, firsts, lengths, width, size) -> (fps, starts): the "
     "windows inside each library sequence, starts counted from the region's end"},
    {"hash_encoded_rows", (PyCFunction)(void (*)(void))seqdedup_py_hash_encoded_rows,
     METH_VARARGS | METH_KEYWORDS,
     "hash_encoded_rows(rows, separator, seed=0, skip_chars=0, byte_mode=False, normalize=0, "
     "skip_fields=0) -> bytes: the key hashes of each row's records, each row's followed by "
     "the 16-byte separator"},
    {"normalize", seqdedup_py_normalize, METH_VARARGS,
     "normalize(key, classes) -> bytes: the key with each match of the classes replaced"},
    {"json_keys", (PyCFunction)(void (*)(void))seqdedup_py_json_keys, METH_VARARGS | METH_KEYWORDS,
     "json_keys(records, paths, ignore=False) -> list: each record's --json-key (or, with "
     "ignore, --json-ignore) key, the record itself (compared as text) or None (for Python "
     "to decide)"},
    {"_key_offset", seqdedup_py_key_offset, METH_VARARGS,
     "_key_offset(record, skip_chars, byte_mode=False, skip_fields=0) -> where the key "
     "starts (tests)"},
    {"value_matches", seqdedup_py_value_matches, METH_VARARGS,
     "value_matches(record, classes) -> bytes: each match of the --normalize classes, left "
     "to right as normalize() replaces them, as int64 (start, end, class bit) triples"},
    {"first_match", seqdedup_py_first_match, METH_VARARGS,
     "first_match(record, classes) -> (start, end) of the first match of the --normalize "
     "classes, or None"},
    {"record_bounds", seqdedup_py_record_bounds, METH_VARARGS,
     "record_bounds(data, delimiter) -> bytes: int64 (start, end) of each record"},
    {"flag_positions", seqdedup_py_flag_positions, METH_O,
     "flag_positions(flags) -> bytes: the positions of the bytes that are not 0, as int64"},
    {"take", seqdedup_py_take, METH_VARARGS,
     "take(items, width, indices) -> bytes: the width-byte item k of items for each int64 "
     "k of indices, in order"},
    {"put", seqdedup_py_put, METH_VARARGS,
     "put(target, width, flags, values): the k-th width-byte item of values written over "
     "target's item at the k-th set flag, in place"},
    {"gather", seqdedup_py_gather, METH_VARARGS,
     "gather(data, bounds, indices, base) -> (bytes, bytes): the records of data at "
     "bounds[2k], bounds[2k + 1] for each int64 k of indices, joined, and where each ends "
     "in them counted from base (int64)"},
    {"token_counts", seqdedup_py_token_counts, METH_VARARGS,
     "token_counts(data, bounds, cumulative=False) -> bytes: each record's estimated "
     "tokens (int64), the records given as int64 (start, end) pairs; cumulative: the "
     "n + 1 sums of the first k instead"},
    {"shortest_period", seqdedup_py_shortest_period, METH_O,
     "shortest_period(keys) -> the smallest p with key i equal to key i-p for every i >= p "
     "(16-byte keys)"},
    {"stream_prefixes", seqdedup_py_stream_prefixes, METH_VARARGS,
     "stream_prefixes(records, sets, mins, maxes, name_from, name_to, ascii_only=False) -> "
     "(names, found, keys, unread): --stream-by's names by a prefix program (see "
     "streamby.decider.prefix_program); unread: the records left to the text pattern"},
    {"window_tally", seqdedup_py_window_tally, METH_VARARGS,
     "window_tally(keys, widths, seed=0) -> [(removed, runs, run lengths)]: per width (increasing), "
     "what the rule with an unlimited history removes from these 16-byte key hashes"},
    {"window_keys", seqdedup_py_window_keys, METH_VARARGS,
     "window_keys(hashes, fps, width, seed) -> bytes: per window a 128-bit key standing for "
     "its content (a keyed hash of its W key hashes), fingerprints confirmed by comparison"},
    {"first_windows", seqdedup_py_first_windows, METH_VARARGS,
     "first_windows(fps, positions, owners) -> (firsts, rows, routed): per window (int64 "
     "fingerprint pairs, int64 positions) the index of the first with its fingerprint; per "
     "owner (low lane % owners), the (fingerprint, position) rows of the first windows it "
     "owns and their indices"},
    {"split_hash", (PyCFunction)(void (*)(void))seqdedup_py_split_hash,
     METH_VARARGS | METH_KEYWORDS,
     "split_hash(data, delimiter, seed=0, skip_chars=0, byte_mode=False, normalize=0, "
     "skip_fields=0) -> "
     "(starts, hashes): each record's start (int64) and key hash (16 bytes)"},
    {"bounds_hash", (PyCFunction)(void (*)(void))seqdedup_py_bounds_hash,
     METH_VARARGS | METH_KEYWORDS,
     "bounds_hash(data, bounds, seed=0, skip_chars=0, byte_mode=False, normalize=0, "
     "skip_fields=0, passed=None) -> bytearray: the key hash (16 bytes) of each record "
     "(int64 pairs into data); 16 zero bytes where passed, a byte a record, is not 0"},
    {"earliest", seqdedup_py_earliest, METH_VARARGS,
     "earliest(rows, library) -> list of bytes: per list item of (fingerprint, position) "
     "int64 triples, (row index, earliest position) for rows whose fingerprint occurs "
     "earlier (library fingerprints, int64 pairs, at position -1)"},
    {"periodic_match", seqdedup_py_periodic_match, METH_VARARGS,
     "periodic_match(unit, data, offset) -> how many keys of data equal the unit's, "
     "repeated, from key offset of the repetition on"},
    {"mark_runs", seqdedup_py_mark_runs, METH_VARARGS,
     "mark_runs(out, runs, offsets, pieces, delimiter, prefix, suffix) -> bytes or None: "
     "the chunk's output with --annotate's default marker of each piece (6 int64 each), "
     "between prefix and suffix and followed by the delimiter, where the last run starting "
     "at or before its end lies in it (runs: int64 start, stop pairs; offsets: int64 "
     "each); None when a piece repeats a library"},
    {"skip_records", seqdedup_py_skip_records, METH_VARARGS,
     "skip_records(data, delimiter, offset, count) -> int: where the record count records "
     "after the one starting at byte offset starts, or -1 when fewer delimiters follow"},
    {"encode_joined", seqdedup_py_encode_joined, METH_VARARGS,
     "encode_joined(data, delimiter, count, skip=0) -> bytes: the library row of count "
     "records of data from record skip on, records joined by delimiter"},
    {"broken_fragments", seqdedup_py_broken_fragments, METH_VARARGS,
     "broken_fragments(ranked, chain_of, index_of, lengths) -> bytes: int64 (first, last) "
     "ranks of each fragment that is not its whole sequence (int32 buffers: key ids in stream "
     "order, negative between streams and for new keys; each id's chain and place; each "
     "chain's length, 0 for one not checked)"},
    {"chains", seqdedup_py_chains, METH_VARARGS,
     "chains(after, before) -> (members, starts, chain_of, index_of): int32 buffers in, "
     "each key id's one neighbour after and before (negative: none or many); out, the "
     "chains' key ids one after another, where each chain starts (and the end), each "
     "id's chain and place in it"},
    {"chain_counts", seqdedup_py_chain_counts, METH_VARARGS,
     "chain_counts(ids, members, starts) -> bytes: int64 per chain, the most times one of "
     "its keys occurs in ids (int32 buffers: key ids, negative ones skipped; the chains' "
     "keys one after another; where each chain starts, and the end)"},
    {"occurrences", seqdedup_py_occurrences, METH_O,
     "occurrences(hashes) -> (ids, previous, firsts, counts, lasts): per 16-byte hash its id "
     "(in the order of first occurrence) and its previous position (-1: none), int64 each; "
     "per id its first position, count and last position"},
    {"distinct_records", seqdedup_py_distinct_records, METH_VARARGS,
     "distinct_records(data, bounds, flags, seed) -> (ids, firsts): of the flagged records "
     "(int64 pairs into data, a byte a record), each one's id by its bytes (in the order of "
     "first occurrence), int64; per id the record where it first occurs, int64"},
    {"tally", seqdedup_py_tally, METH_VARARGS,
     "tally(ids, first, last, size, top) -> (distinct, pairs): of the int64 ids (0 .. size - 1) "
     "at positions first .. last, how many distinct and the top most frequent as int64 (id, "
     "count) pairs, ties in the order first met"},
    {"spread_tracebacks", seqdedup_py_spread_tracebacks, METH_VARARGS,
     "spread_tracebacks(data, bounds, flags, indented) -> heads: each flagged record's "
     "continuation (the indented records after it, and after a Traceback line the one "
     "that ends it) flagged in place; the heads: the flags as they were, not there"},
    {"literal_hits", seqdedup_py_literal_hits, METH_VARARGS,
     "literal_hits(region, bounds, floating, anchored) -> bytes: 1 per record (int64 pairs "
     "into region) whose bytes, letters folded, hold a floating literal or start with an "
     "anchored one (tuples of lower-case bytes), else 0"},
    {"fold_shape", seqdedup_py_fold_shape, METH_VARARGS,
     "fold_shape(keys, at, extent, count) -> (length, matched): of the count keys from "
     "key at, the shortest period of the first extent and how many repeat it"},
    {"distinct_copies", seqdedup_py_distinct_copies, METH_VARARGS,
     "distinct_copies(texts, length) -> how many different groups of length consecutive "
     "8-byte digests texts holds from its start (a shorter last group counts as its own)"},
    {NULL}};

/* Multi-phase initialisation: the types are created per module object (heap types);
 * the module state keeps the Matcher type, which the attribution unit checks against. */
static int kernel_exec(PyObject *module)
{
    KernelState *state = PyModule_GetState(module);
    PyObject *matcher = PyType_FromModuleAndSpec(module, &seqdedup_matcher_spec, NULL);
    if (matcher == NULL) return -1;
    state->matcher_type = (PyTypeObject *)matcher; /* the state owns this reference */
    if (PyModule_AddType(module, state->matcher_type) < 0) return -1;
    PyObject *attributor = PyType_FromModuleAndSpec(module, &seqdedup_attributor_spec, NULL);
    if (attributor == NULL) return -1;
    int rc = PyModule_AddType(module, (PyTypeObject *)attributor);
    Py_DECREF(attributor);
    if (rc < 0) return -1;
    PyObject *streams = PyType_FromModuleAndSpec(module, &seqdedup_stream_matcher_spec, NULL);
    if (streams == NULL) return -1;
    rc = PyModule_AddType(module, (PyTypeObject *)streams);
    Py_DECREF(streams);
    if (rc < 0) return -1;
    PyObject *sized = PyType_FromModuleAndSpec(module, &seqdedup_size_decider_spec, NULL);
    if (sized == NULL) return -1;
    state->size_decider_type = (PyTypeObject *)sized; /* the state owns this reference */
    if (PyModule_AddType(module, state->size_decider_type) < 0) return -1;
    PyObject *keys = PyType_FromModuleAndSpec(module, &seqdedup_key_table_spec, NULL);
    if (keys == NULL) return -1;
    rc = PyModule_AddType(module, (PyTypeObject *)keys);
    Py_DECREF(keys);
    if (rc < 0) return -1;
    return PyModule_AddIntConstant(module, "GIL_MINSIZE", GIL_MINSIZE);
}

static int kernel_traverse(PyObject *module, visitproc visit, void *arg)
{
    KernelState *state = PyModule_GetState(module);
    if (state != NULL) {
        Py_VISIT(state->matcher_type);
        Py_VISIT(state->size_decider_type);
    }
    return 0;
}

static int kernel_clear(PyObject *module)
{
    KernelState *state = PyModule_GetState(module);
    if (state != NULL) {
        Py_CLEAR(state->matcher_type);
        Py_CLEAR(state->size_decider_type);
    }
    return 0;
}

static void kernel_free(void *module) { (void)kernel_clear((PyObject *)module); }

/* Isolated: the types live in the module's state and nothing else is shared but the
 * thread-local kept error, so each interpreter, with its own GIL, has its own module. */
static PyModuleDef_Slot kernel_slots[] = {
    {Py_mod_exec, kernel_exec},
#if PY_VERSION_HEX >= 0x030C0000
    {Py_mod_multiple_interpreters, Py_MOD_PER_INTERPRETER_GIL_SUPPORTED},
#endif
    {0, NULL}};

struct PyModuleDef seqdedup_kernel_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "seqdedup._kernel",
    .m_doc = "The compiled core of seqdedup's window engine.",
    .m_size = sizeof(KernelState),
    .m_methods = kernel_methods,
    .m_slots = kernel_slots,
    .m_traverse = kernel_traverse,
    .m_clear = kernel_clear,
    .m_free = kernel_free,
};

PyMODINIT_FUNC PyInit__kernel(void) { return PyModuleDef_Init(&seqdedup_kernel_module); }
