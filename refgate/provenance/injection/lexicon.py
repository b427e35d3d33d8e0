"""The word lists of the detector, read from ``lexicon/*.toml`` (data reviewed like code)."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

#: Tags that start a rule check (everything else is only looked at around an anchor).
ANCHORS = frozenset({"IGN", "TOOL", "AUTH", "SECRET_ANCHOR", "K_IGN", "K_AUTH", "K_SEND"})


def read_data(folder: str, name: str) -> dict[str, Any]:
    """One TOML file shipped with this package (``folder/name``)."""
    path = resources.files(__package__).joinpath(folder, name)
    return tomllib.loads(path.read_text(encoding="utf-8"))


def data_files(folder: str) -> list[str]:
    """Names of the TOML files of ``folder``, sorted."""
    root = resources.files(__package__).joinpath(folder)
    return sorted(p.name for p in root.iterdir() if p.name.endswith(".toml"))


@dataclass(frozen=True)
class Lexicon:
    words: dict[str, frozenset[str]]  # English word -> tags
    no_fuzzy: frozenset[str]
    fragment_stoplist: frozenset[str]
    ign_base: tuple[str, ...]
    colon_words: frozenset[str]
    k_stems: tuple[tuple[str, str], ...]  # (stem, tag)
    k_imperative: tuple[str, ...]
    k_colon_stems: tuple[str, ...]
    mention_cues: frozenset[str]  # English words and Korean stems
    negators: frozenset[str]
    nt_stems: frozenset[str]  # "don" of "don't" split at the apostrophe
    describers: frozenset[str]
    risky: tuple[str, ...]
    k_negated_endings: tuple[str, ...]
    k_prior_words: frozenset[str]  # whole Korean words pointing back at earlier text
    k_after_cues: tuple[str, ...]  # Korean words right after an example that mark a mention
    reporting_verbs: frozenset[str] = frozenset()
    defensive_objects: frozenset[str] = frozenset()
    noun_markers: frozenset[str] = frozenset()
    directed: frozenset[str] = frozenset()
    purpose: frozenset[str] = frozenset()
    k_quotatives: tuple[str, ...] = ()
    k_topic_nouns: tuple[str, ...] = ()
    ai_cues: frozenset[str] = frozenset()  # words that make a command one for a model
    k_ai_cues: tuple[str, ...] = ()
    command_verbs: tuple[str, ...] = ()  # English verbs that start a command (check "command")
    k_command_endings: tuple[str, ...] = ()  # Korean command endings
    k_not_commands: frozenset[str] = frozenset()  # Korean words ending like a command
    k_sentence_final: tuple[str, ...] = ()  # Korean endings that command only sentence-finally


@cache
def lexicon() -> Lexicon:
    en, ko = read_data("lexicon", "en.toml"), read_data("lexicon", "ko.toml")
    words: dict[str, set[str]] = {}
    for tag, items in en["words"].items():
        for w in items:
            words.setdefault(w, set()).add(tag)
    stems = tuple((s, tag) for tag, items in ko["stems"].items() for s in items)
    return Lexicon(
        words={w: frozenset(t) for w, t in words.items()},
        no_fuzzy=frozenset(en["matching"]["no_fuzzy"]),
        fragment_stoplist=frozenset(en["matching"]["fragment_stoplist"]),
        ign_base=tuple(en["words"]["IGN_BASE"]),
        colon_words=frozenset(en["matching"]["colon_words"])
        | frozenset(ko["matching"]["colon_words"]),
        k_stems=stems,
        k_imperative=tuple(ko["matching"]["imperative"]),
        k_colon_stems=tuple(ko["matching"]["colon_stems"]),
        mention_cues=frozenset(en["context"]["mention_cues"])
        | frozenset(ko["context"]["mention_cues"]),
        negators=frozenset(en["context"]["negators"]),
        nt_stems=frozenset(en["context"]["nt_stems"]),
        describers=frozenset(en["context"]["describers"]),
        risky=tuple(en["context"]["risky"]),
        k_negated_endings=tuple(ko["context"]["negated_endings"]),
        k_prior_words=frozenset(ko["matching"]["prior_words"]),
        k_after_cues=tuple(ko["context"]["after_cues"]),
        reporting_verbs=frozenset(en["context"]["reporting_verbs"]),
        defensive_objects=frozenset(en["context"]["defensive_objects"]),
        noun_markers=frozenset(en["context"]["noun_markers"]),
        directed=frozenset(en["context"]["directed"]),
        purpose=frozenset(en["context"]["purpose"]),
        k_quotatives=tuple(ko["context"]["quotatives"]),
        k_topic_nouns=tuple(ko["context"]["topic_nouns"]),
        ai_cues=frozenset(en["command"]["ai_cues"]),
        k_ai_cues=tuple(ko["command"]["ai_cues"]),
        command_verbs=tuple(en["command"]["verbs"]),
        k_command_endings=tuple(ko["command"]["endings"]),
        k_not_commands=frozenset(ko["command"]["not_commands"]),
        k_sentence_final=tuple(ko["command"]["sentence_final"]),
    )
