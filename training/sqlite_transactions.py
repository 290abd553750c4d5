"""SQLite study storages whose transactions lock the database from their start.

Python's ``sqlite3`` driver opens a transaction only at the first write, so a
read and the write that depends on it run apart: two processes that read the
same waiting Optuna trial both mark it running and both run it (Optuna pops a
waiting trial with ``SELECT ... FOR UPDATE``, which SQLite ignores).
:func:`lock_transactions` applies SQLAlchemy's documented recipe for SQLite
transactions to a storage's engine: the driver's own transaction handling off,
and every transaction begun with ``BEGIN IMMEDIATE``, which takes the
database's write lock at once; other processes wait for it (up to the
connection's ``timeout``). Each Optuna storage call is one short transaction,
so the cost is that they run one at a time.
"""

from __future__ import annotations

from typing import Any

import optuna
from sqlalchemy import event

__all__ = ["lock_transactions"]


def lock_transactions(storage: optuna.storages.RDBStorage) -> None:
    """Begin every later transaction of a SQLite ``storage`` with ``BEGIN IMMEDIATE``.

    Call it once the storage is open: Optuna's own set-up reads the schema
    on one connection while it holds another, which a lock taken at the
    first read would block. The engine's pooled connections are dropped,
    so that every connection from now on has the hooks.
    """
    engine = storage.engine

    @event.listens_for(engine, "connect")
    def _driver_leaves_transactions_alone(dbapi_connection: Any, record: Any) -> None:
        dbapi_connection.isolation_level = None

    @event.listens_for(engine, "begin")
    def _begin_immediate(connection: Any) -> None:
        connection.exec_driver_sql("BEGIN IMMEDIATE")

    engine.dispose()
