"""SQLite store: the only writer of the database. Schema versioned with PRAGMA user_version."""

from linerate.store.db import Store, default_db_path

__all__ = ["Store", "default_db_path"]
