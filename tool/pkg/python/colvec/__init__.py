"""colvec: fast K-nearest-neighbour search inside SQLite.

A loadable SQLite extension (the ``colvec`` virtual-table module and its SQL
functions), packaged for Python::

    import sqlite3, colvec
    db = sqlite3.connect("app.db")
    colvec.load(db)
    db.execute("CREATE VIRTUAL TABLE docs USING colvec(embedding float[3])")

``loadable_path()`` gives the path to pass to any other SQLite binding's
``load_extension``.
"""

import os

__version__ = "@VERSION@"
__all__ = ["loadable_path", "load", "__version__"]


def loadable_path():
    """Returns the path of the compiled extension, without its file suffix
    (SQLite adds the platform's own: .so, .dylib or .dll)."""
    return os.path.normpath(os.path.join(os.path.dirname(__file__), "colvec"))


def load(conn):
    """Loads colvec into ``conn`` (a ``sqlite3.Connection`` or a binding with
    the same ``enable_load_extension``/``load_extension`` methods), then
    switches extension loading off again. Raises ``RuntimeError`` with the
    cause when this Python's SQLite cannot load extensions."""
    if not hasattr(conn, "enable_load_extension"):
        raise RuntimeError(
            "colvec: this Python's sqlite3 module cannot load extensions: it "
            "was built without them (the default of macOS's system Python "
            "and of some pyenv builds; build Python with "
            "--enable-loadable-sqlite-extensions, or use a Python that has "
            "them, such as the one from your Linux distribution or "
            "python.org)"
        )
    conn.enable_load_extension(True)
    try:
        conn.load_extension(loadable_path())
    finally:
        conn.enable_load_extension(False)
