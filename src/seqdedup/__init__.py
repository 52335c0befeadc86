"""seqdedup: remove repeated sequences of records from a stream.

Importing the package is cheap (no numpy, no rich): heavy modules load only when a
large batch or a statistics table needs them.
"""

from seqdedup.api import Deduplicator, deduplicate
from seqdedup.config import Config
from seqdedup.errors import SeqdedupError, UsageError
from seqdedup.report import Stats

__version__ = "0.1.0"

__all__ = [
    "Config",
    "Deduplicator",
    "SeqdedupError",
    "Stats",
    "UsageError",
    "__version__",
    "deduplicate",
]
