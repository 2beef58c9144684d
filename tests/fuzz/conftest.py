"""The fuzzer's budget: ``--fuzz-examples N`` or ``KAPISERVER_FUZZ_EXAMPLES=N``.

``N`` is how many requests each family of cases sends to each operation. CI runs with
the default (a fixed seed: every run sends the same requests); any other budget draws
new requests on every run (``KAPISERVER_FUZZ_SEED`` fixes them again).
"""

import os

import pytest

#: Examples per operation and family in CI: the whole suite stays well under 2 minutes.
CI_EXAMPLES = 1


def pytest_addoption(parser):
    parser.addoption("--fuzz-examples", type=int, default=None,
                     help="requests per operation and family of the API fuzzer "
                          f"(default {CI_EXAMPLES}, or KAPISERVER_FUZZ_EXAMPLES)")


@pytest.fixture(scope="session")
def fuzz_examples(request) -> int:
    option = request.config.getoption("--fuzz-examples", default=None)
    if option is not None:
        return option
    return int(os.environ.get("KAPISERVER_FUZZ_EXAMPLES") or CI_EXAMPLES)
