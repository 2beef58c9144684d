"""The kube-apiserver reference transcripts (``/work/shared/reference``), for tests."""

import json
import os

import pytest

REFERENCE = "/work/shared/reference"


def transcript(name: str) -> dict:
    """The transcript ``name`` (``{"request", "response"}``); skip the test when absent."""
    path = os.path.join(REFERENCE, name)
    if not os.path.exists(path):
        pytest.skip(f"reference transcript {name} not present")
    with open(path) as f:
        return json.load(f)
