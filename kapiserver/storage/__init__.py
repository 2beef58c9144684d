"""Storage: a revisioned key-value store with etcd's semantics (``storage.Interface``).

Every write gets the next value of one global, strictly increasing revision; an object's
``resourceVersion`` is the revision of its last write. Backends — the embedded SQLite
log (``sqlite``) and etcd v3 (``etcd``) — implement ``Store``; nothing above this package
knows which one runs. Keys follow kube-apiserver's layout (``registry.keys``).
"""

from .interface import (ADDED, DELETED, MODIFIED, Compacted, Conflict, Event, KeyExists,
                        KeyNotFound, KeyValue, ListResult, Store, StorageError)

__all__ = ["ADDED", "DELETED", "MODIFIED", "Compacted", "Conflict", "Event", "KeyExists",
           "KeyNotFound", "KeyValue", "ListResult", "Store", "StorageError"]
