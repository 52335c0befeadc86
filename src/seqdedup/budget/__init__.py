"""``--budget``: a log seen as events of kinds, the units chosen while the output fits,
the removed-text store and the restore of a reduced text. Internal:
:func:`seqdedup.reduce_to_budget` and :func:`seqdedup.expand` are its face."""
