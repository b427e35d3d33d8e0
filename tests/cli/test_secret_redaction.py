"""Secrets are masked in every error before it is shown or stored (issue 46, item 5): a model
server whose 401 echoes the key leaves it neither on stderr nor in the workspace's state
(``checkpoints.sqlite`` holds the failed node's error). One function, ``redact_secrets``."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from refgate.redaction import MASK, redact_exception, redact_secrets, register_secret
from refgate.testing_openai import OpenAIStub, http_error
from tests.support.serving import FIRST_QUESTION

#: An OpenAI-shaped key, and one of a local server that no pattern knows.
KEYS = ["sk-proj-Zx9Qw8Er7Ty6Ui5Op4As3Df2Gh1Jk0LmNbVcXz", "vllm-local-8f3a9c2d71e4b6a0"]


def _echoing_401(key: str):
    message = f"Incorrect API key provided: {key}. You can find your API key in your account."
    return lambda request: http_error(401, message)


@pytest.mark.parametrize("key", KEYS, ids=["sk-key", "plain-key"])
def test_a_401_echoing_the_key_shows_and_stores_no_key(sample, key):
    with OpenAIStub(responder=_echoing_401(key)) as stub:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("REFGATE_", "OPENAI_"))}
        env.update(stub.env(api_key=key), REFGATE_MODEL="stub-model", REFGATE_MAX_RETRIES="0")
        done = subprocess.run(
            [sys.executable, "-m", "refgate.cli", "ask", "-w", str(sample), FIRST_QUESTION],
            env=env, capture_output=True, text=True, timeout=240,
        )  # fmt: skip
        assert stub.chat_requests(), "the model server was never asked"
    assert done.returncode == 1, done.stderr
    assert "401" in done.stderr and MASK in done.stderr  # the reason is still shown
    assert key not in done.stdout + done.stderr
    stored = [p for p in (sample / ".refgate").rglob("*") if p.is_file()]
    assert any(p.name == "checkpoints.sqlite" for p in stored)
    for path in stored:
        assert key.encode() not in path.read_bytes(), path


def test_redact_secrets_masks_known_values_and_credential_shapes(monkeypatch):
    monkeypatch.setenv("ACME_API_KEY", "acme-9f8e7d6c5b4a")
    register_secret("toml-configured-key-123")
    text = (
        "key acme-9f8e7d6c5b4a and toml-configured-key-123; header Authorization: Bearer "
        "abcDEF123456789xyz; url postgresql://bob:hunter2pass@db/x; api_key=qwerty123456; "
        "aws AKIAIOSFODNN7EXAMPLE; github ghp_0123456789abcdefghijABCDEFGHIJ"
    )
    out = redact_secrets(text)
    for secret in ("acme-9f8e7d6c5b4a", "toml-configured-key-123", "abcDEF123456789xyz",
                   "hunter2pass", "qwerty123456", "AKIAIOSFODNN7EXAMPLE", "ghp_0123"):  # fmt: skip
        assert secret not in out
    assert "postgresql://bob:" in out and "Authorization: Bearer" in out
    # ordinary error text is left alone
    plain = "FileNotFoundError: data/macro.csv (max_tokens=4096, 12 tokens)"
    assert redact_secrets(plain) == plain


def test_redact_exception_masks_the_message_and_its_cause():
    try:
        try:
            raise ValueError("bad key sk-abcdefghijklmnop1234")
        except ValueError as inner:
            raise RuntimeError("call failed: sk-abcdefghijklmnop1234") from inner
    except RuntimeError as exc:
        redact_exception(exc)
        assert "sk-abcdefghijklmnop1234" not in repr(exc)
        assert "sk-abcdefghijklmnop1234" not in repr(exc.__cause__)
