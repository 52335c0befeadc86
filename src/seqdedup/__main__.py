"""``python -m seqdedup``."""

from seqdedup.cli.launch import seqdedup

if __name__ == "__main__":
    seqdedup()
