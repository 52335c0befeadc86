"""The Dask engine: one job over many files (partitions, owners, exchanges, the job's
library), run on a scheduler. Internal: ``seqdedup-dask`` is its face."""
