/*
 * The module functions of the units that have no type of their own (module.c puts
 * them in the method table): each unit defines its own; see kernel.h for the rest.
 */
#ifndef SEQDEDUP_FUNCTIONS_H
#define SEQDEDUP_FUNCTIONS_H

#include <Python.h>

/* fold.c */
PyObject *seqdedup_py_shortest_period(PyObject *self, PyObject *arg);
PyObject *seqdedup_py_periodic_match(PyObject *self, PyObject *args);
PyObject *seqdedup_py_fold_shape(PyObject *self, PyObject *args);
PyObject *seqdedup_py_distinct_copies(PyObject *self, PyObject *args);
/* bounds.c */
PyObject *seqdedup_py_record_bounds(PyObject *self, PyObject *args);
/* tokens.c */
PyObject *seqdedup_py_token_counts(PyObject *self, PyObject *args);
/* suggest.c */
PyObject *seqdedup_py_window_tally(PyObject *self, PyObject *args);
/* dask_steps.c */
PyObject *seqdedup_py_first_windows(PyObject *self, PyObject *arg);
PyObject *seqdedup_py_window_keys(PyObject *self, PyObject *args);
PyObject *seqdedup_py_earliest(PyObject *self, PyObject *args);
PyObject *seqdedup_py_split_hash(PyObject *self, PyObject *args, PyObject *kwds);
PyObject *seqdedup_py_bounds_hash(PyObject *self, PyObject *args, PyObject *kwds);
/* hash.c */
PyObject *seqdedup_py_value_matches(PyObject *self, PyObject *args);
/* bounds.c */
PyObject *seqdedup_py_flag_positions(PyObject *self, PyObject *arg);
PyObject *seqdedup_py_take(PyObject *self, PyObject *args);
PyObject *seqdedup_py_put(PyObject *self, PyObject *args);
PyObject *seqdedup_py_gather(PyObject *self, PyObject *args);
/* encoded.c */
PyObject *seqdedup_py_hash_encoded(PyObject *self, PyObject *args, PyObject *kwds);
PyObject *seqdedup_py_hash_encoded_rows(PyObject *self, PyObject *args, PyObject *kwds);
PyObject *seqdedup_py_library_windows(PyObject *self, PyObject *args);
PyObject *seqdedup_py_encode_joined(PyObject *self, PyObject *args);
PyObject *seqdedup_py_mark_runs(PyObject *self, PyObject *args);
PyObject *seqdedup_py_skip_records(PyObject *self, PyObject *args);
/* streamby_prefix.c */
PyObject *seqdedup_py_stream_prefixes(PyObject *self, PyObject *args);

/* jsonkey.c */
PyObject *seqdedup_py_json_keys(PyObject *self, PyObject *args, PyObject *kwds);
/* keytable.c */
PyObject *seqdedup_py_broken_fragments(PyObject *self, PyObject *args);
PyObject *seqdedup_py_chains(PyObject *self, PyObject *args);
PyObject *seqdedup_py_chain_counts(PyObject *self, PyObject *args);
PyObject *seqdedup_py_occurrences(PyObject *self, PyObject *arg);
PyObject *seqdedup_py_distinct_records(PyObject *self, PyObject *args);
PyObject *seqdedup_py_tally(PyObject *self, PyObject *args);
/* literal.c */
PyObject *seqdedup_py_literal_mask(PyObject *self, PyObject *args);
PyObject *seqdedup_py_literal_hits(PyObject *self, PyObject *args);
PyObject *seqdedup_py_spread_tracebacks(PyObject *self, PyObject *args);

#endif
