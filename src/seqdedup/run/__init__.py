"""One run assembled in one place: its plan, its stages, the paths that feed it, its
ledger (statistics, markers, fold lines, ``--top``), following a file, and the
``--stream-by`` paths. Internal: :mod:`seqdedup.api` is its face."""
