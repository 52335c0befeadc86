"""``--stream-by``: interleaved sources (pods, processes, threads), the skip rule per
stream with one shared history. One home for the feature: :mod:`.decider` (each
record's stream name and key text, and the rule per stream), :mod:`.path` (the feeding
path of such a run: decided per stream, written in input order) and :mod:`.fold`
(``--fold`` for its duplicate runs). The kernel's side is ``csrc/streamby.c`` with
``streamby_history.c`` and ``streamby_prefix.c``."""
