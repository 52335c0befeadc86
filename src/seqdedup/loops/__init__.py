"""``seqdedup loops``: an agent repeating itself, found in its transcript.

:mod:`.calls` gives each tool call its identity and shape, :mod:`.rule` finds the
loops (docs/loops.md states the rule), :mod:`.transcripts` reads the formats agents
write. The package returns data; the command line (``seqdedup.cli.loops``) formats it.
"""
