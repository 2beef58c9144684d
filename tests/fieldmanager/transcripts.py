"""Reference transcripts of a real kube-apiserver for the field manager tests."""

import json
import pathlib

REFERENCE = pathlib.Path("/work/shared/reference")


def reference(name: str) -> dict:
    return json.loads((REFERENCE / name).read_text())


def reference_body(name: str) -> dict:
    return reference(name)["response"]["body"]


def reference_item(name: str, item: str) -> dict:
    """One item, by name, of a list transcript."""
    return next(obj for obj in reference_body(name)["items"]
                if obj["metadata"]["name"] == item)
