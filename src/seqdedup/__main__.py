"""``python -m seqdedup``."""

from seqdedup.launch import seqdedup

if __name__ == "__main__":
    seqdedup()
