import os

import pytest


@pytest.fixture
def examples():
    return os.environ.get(
        "TX_EXAMPLES",
        os.path.join(os.path.dirname(__file__), "..", "..", "examples"))


@pytest.fixture
def llama_text(examples):
    with open(os.path.join(examples, "llama_decoder_layer.mlir")) as f:
        return f.read()
