"""Where the settings files are: the user's, and the project's (searched upward); and
the user's cache folder.

Looked for in every run of ``seqdedup`` (only ``os``: nothing else is imported for
it), and by shell completion for the profiles they define.
"""

from __future__ import annotations

import os

PROJECT_FILE = ".seqdedup.toml"  # a project's settings


def user_settings_file() -> str:
    """``$XDG_CONFIG_HOME/seqdedup/config.toml`` (default ``~/.config/...``)."""
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return os.path.join(base, "seqdedup", "config.toml")


def cache_folder() -> str:
    """``$XDG_CACHE_HOME/seqdedup`` (default ``~/.cache/seqdedup``): what may be made
    again (the MCP server's store, the report page's chart script)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "seqdedup")


def project_file() -> str | None:
    """The project's settings file: ``.seqdedup.toml`` in the current directory or the
    nearest one above it, as ruff and editorconfig look; the search stops at a
    repository's root (a ``.git``), the home directory and a file-system boundary. In
    the current directory its name is given as is (messages say ``.seqdedup.toml``)."""
    here = current = os.getcwd()
    home = os.path.realpath(os.path.expanduser("~"))
    device = os.stat(current).st_dev
    while True:
        candidate = os.path.join(current, PROJECT_FILE)
        if os.path.isfile(candidate):
            return PROJECT_FILE if current == here else candidate
        if os.path.exists(os.path.join(current, ".git")) or os.path.realpath(current) == home:
            return None
        parent = os.path.dirname(current)
        if parent == current or os.stat(parent).st_dev != device:
            return None
        current = parent


def settings_files(config: str | None, no_config: bool) -> tuple[list[str], str | None, str | None]:
    """The settings files to read, in the order they apply: ``--config FILE`` alone (the
    user's choice: trusted), none with ``--no-config``, else the user's
    (``$XDG_CONFIG_HOME/seqdedup/config.toml``, default ``~/.config/...``) and the
    project's (``./.seqdedup.toml``) where they exist; and which is the user's and which
    the project's. (Looked for in every run: nothing is imported for it.)"""
    if no_config:
        return [], None, None
    if config is not None:
        return [config], config, None
    user = user_settings_file()
    project = project_file()
    paths = [path for path in (user, project) if path is not None and os.path.isfile(path)]
    return paths, user, project
