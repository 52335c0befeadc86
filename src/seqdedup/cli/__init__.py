"""The commands: each parses its command line, makes one call into the layers below
and prints what it returns (``seqdedup``, ``seqdedup diff``, ``seqdedup-library``,
``seqdedup-expand``, ``seqdedup-dask``, ``seqdedup-mcp``); settings files, completion,
hints, progress and the standard streams. The top layer: nothing below imports it."""
