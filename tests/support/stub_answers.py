"""Replies of the scripted OpenAI server (``refgate.testing_openai.OpenAIStub``) that the CLI,
API and eval tests share: a plan, a harvest, and answers about real GDP in 2009Q3 citing the
last valueRef the prompt shows (the sample's value, or a wrong one)."""

from __future__ import annotations

from tests.support.evidence import ids_in

PLAN = '{"lens": "single value", "criteria": []}'
HARVEST = "nothing worth remembering"
GDP_QUESTION = "What was real GDP in 2009Q3?"


def good(req) -> str:
    """The right value (12,990.3 billion USD), citing the prompt's last valueRef."""
    return f"Real GDP in 2009Q3 was 12,990.3 billion USD [{ids_in(req.text, 'val')[-1]}]."


def bad(req) -> str:
    """A wrong value (15,000 billion USD) citing the same valueRef: the GATE blocks it."""
    return f"Real GDP in 2009Q3 was 15,000 billion USD [{ids_in(req.text, 'val')[-1]}]."
