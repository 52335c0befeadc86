"""The rule and its twins: the window matchers (the kernel's and Python's), the rule
with a minimum size, histories, fingerprints, attribution, pieces, the stream deciders,
and ``Decisions`` (the engine over keys). Internal except ``Decisions``."""
