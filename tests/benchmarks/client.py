"""A minimal keep-alive JSON client for the scenarios' set-up and sequential steps."""

from __future__ import annotations

import http.client
import json
import ssl
import threading
from dataclasses import dataclass

from . import objects


@dataclass(frozen=True)
class Credentials:
    """Where and as whom to connect; picklable, so worker processes get a copy."""

    port: int
    ca: str
    cert: str
    key: str
    host: str = "127.0.0.1"

    def context(self) -> ssl.SSLContext:
        context = ssl.create_default_context(cafile=self.ca)
        context.load_cert_chain(self.cert, self.key)
        return context


class Client:
    """One keep-alive HTTPS connection; ``request`` returns (status, decoded JSON body)."""

    def __init__(self, credentials: Credentials, timeout: float = 30):
        self.connection = http.client.HTTPSConnection(
            credentials.host, credentials.port, context=credentials.context(), timeout=timeout)

    def request(self, method: str, path: str, obj=None) -> tuple[int, dict | None]:
        body = None if obj is None else (obj if isinstance(obj, bytes) else objects.body(obj))
        headers = {"Content-Type": "application/json"} if body is not None else {}
        try:
            self.connection.request(method, path, body=body, headers=headers)
            response = self.connection.getresponse()
            data = response.read()
        except (OSError, http.client.HTTPException):
            self.connection.close()
            raise
        try:
            return response.status, json.loads(data) if data else None
        except ValueError:
            return response.status, None

    def close(self) -> None:
        self.connection.close()


def create_namespace(credentials: Credentials, name: str) -> None:
    client = Client(credentials)
    status, body = client.request("POST", "/api/v1/namespaces", {
        "apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    client.close()
    if status not in (201, 409):
        raise RuntimeError(f"creating namespace {name}: {status} {body}")


def send_all(credentials: Credentials, requests, threads: int = 8) -> list:
    """Send ``(method, path, body)`` requests over ``threads`` keep-alive connections
    (set-up only); returns the failures, ``(path, status, body)`` of each non-2xx answer."""
    pending = iter(list(requests))
    lock = threading.Lock()
    failures = []

    def work():
        client = Client(credentials)
        while True:
            with lock:
                item = next(pending, None)
            if item is None:
                break
            status, body = client.request(*item)
            if status >= 300:
                failures.append((item[1], status, body))
        client.close()

    workers = [threading.Thread(target=work) for _ in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    return failures


def populate(credentials: Credentials, namespace: str, count: int, threads: int = 8) -> None:
    """Create ``count`` ~1 KiB ConfigMaps ``cm-00000``... in ``namespace`` (set-up only)."""
    failures = [failure for failure in send_all(credentials, (
        ("POST", f"/api/v1/namespaces/{namespace}/configmaps",
         objects.configmap(f"cm-{i:05d}", seed=f"cm-{i:05d}")) for i in range(count)), threads)
        if failure[1] != 409]
    if failures:
        raise RuntimeError(f"{len(failures)} ConfigMaps not created, e.g. {failures[0]}")
