"""The package's version (read by the build from here)."""

__version__ = "0.1.0"
