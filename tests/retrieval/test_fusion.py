"""Fusion math and MMR on small hand-built lists, and the hybrid search path that uses them."""

from __future__ import annotations

import numpy as np
import pytest
from langchain_core.documents import Document

from refgate.retrieval import DocumentIndex, HashingEmbeddings
from refgate.retrieval.fusion import (
    DENSE_WEIGHT,
    LONG_QUERY_WEIGHT,
    LONG_QUERY_WORDS,
    SHORT_QUERY_WORDS,
    UNIFORM_CORPUS,
    UNIFORM_WEIGHT,
    VARIED_CORPUS,
    VARIED_WEIGHT,
    base_dense_weight,
    convex_fuse,
    corpus_homogeneity,
    decisive_weight,
    decisiveness,
    dense_weight_for,
    normalise_scores,
    rrf_fuse,
)
from refgate.retrieval.mmr import DEFAULT_LAMBDA, LAMBDA_GRID, mmr_select, redundancy_matrix


def test_rrf_fuse_sums_reciprocal_ranks_with_optional_weights():
    fused = dict(rrf_fuse([[1, 2, 3], [3, 1]], k=60))
    assert fused[1] == pytest.approx(1 / 61 + 1 / 62)
    assert fused[3] == pytest.approx(1 / 63 + 1 / 61)
    assert fused[2] == pytest.approx(1 / 62)
    assert [r for r, _ in rrf_fuse([[1, 2, 3], [3, 1]])] == [1, 3, 2]
    weighted = dict(rrf_fuse([[1, 2], [2, 1]], k=0, weights=[1.0, 0.5]))
    assert weighted[1] == pytest.approx(1 + 0.5 / 2) and weighted[2] == pytest.approx(1 / 2 + 0.5)
    with pytest.raises(ValueError):
        rrf_fuse([[1]], weights=[1.0, 2.0])


def test_normalise_scores_uses_the_floor_not_the_candidates_minimum():
    cos = np.array([0.6, 0.5, 0.4])
    assert normalise_scores(cos, floor=-1.0) == pytest.approx([1.0, 1.5 / 1.6, 1.4 / 1.6])
    assert normalise_scores(np.array([4.0, 2.0, 0.0]), floor=0.0) == pytest.approx([1, 0.5, 0])
    assert normalise_scores(np.array([0.0, 0.0]), floor=0.0) == pytest.approx([0, 0])
    assert normalise_scores(np.array([]), floor=0.0).size == 0


def test_convex_fuse_keeps_score_gaps_that_rank_fusion_discards():
    # dense barely separates three near-identical texts (cosines 0.62 / 0.61 / 0.60);
    # BM25 clearly prefers row 30, which dense ranks last
    rows = [10, 20, 30]
    dense = [0.62, 0.61, 0.60]
    bm25 = [1.0, 1.0, 9.0]
    fused = convex_fuse(rows, dense, bm25, alpha=0.7)
    assert fused[0][0] == 30
    # by hand: 0.7 * (0.60 + 1) / (0.62 + 1) + 0.3 * 9 / 9
    assert fused[0][1] == pytest.approx(0.7 * 1.60 / 1.62 + 0.3)
    assert fused[-1][0] == 20
    # reciprocal rank fusion of the same lists ties row 30 with row 10 (ranks 3+1 vs 1+2/3)
    rrf = rrf_fuse([[10, 20, 30], [30, 10, 20]])
    assert rrf[0][0] == 10
    # the weights are the extremes: alpha 1 is dense order, alpha 0 is BM25 order
    assert [r for r, _ in convex_fuse(rows, dense, bm25, alpha=1.0)] == [10, 20, 30]
    assert [r for r, _ in convex_fuse(rows, dense, bm25, alpha=0.0)][0] == 30
    assert all(0.0 <= s <= 1.0 for _, s in fused)


def test_convex_fuse_without_lexical_matches_is_dense_order_and_validates():
    assert [r for r, _ in convex_fuse([1, 2, 3], [0.1, 0.3, 0.2], [0, 0, 0])] == [2, 3, 1]
    assert convex_fuse([], [], []) == []
    with pytest.raises(ValueError):
        convex_fuse([1], [0.1], [1.0], alpha=1.5)
    with pytest.raises(ValueError):
        convex_fuse([1, 2], [0.1], [1.0, 2.0])


def _unit(*rows):
    m = np.array(rows, dtype=np.float32)
    return m / np.linalg.norm(m, axis=1, keepdims=True)


def test_mmr_relevance_is_min_max_scaled_over_the_pool():
    # relevances on a narrow band (a fused score): scaling by the max alone would leave a tiny
    # relevance range for lambda to weigh, and cosine would decide everything
    vecs = _unit([1, 0, 0], [0.99, 0.14, 0], [0, 1, 0])
    rel = np.array([0.95, 0.94, 0.90])
    assert mmr_select(rel, vecs, 3, lambda_mult=0.7) == [0, 1, 2]  # 0.7*0.8 > 0.7*0 + 0.3*0.99
    assert mmr_select(rel, vecs, 3, lambda_mult=0.7, relevance_scale="max")[:2] == [0, 2]
    with pytest.raises(ValueError):
        mmr_select(rel, vecs, 2, relevance_scale="rank")


def test_mmr_near_duplicate_penalty_spares_distinct_relevant_chunks():
    # 1 is a near-copy of 0; 2 is related to 0 (cosine 0.9) but says something else;
    # 3 and 4 are unrelated to 0 and less relevant
    vecs = _unit([1, 0, 0], [1, 0.01, 0], [0.9, 0.436, 0], [0, 0, 1], [0, 0.6, 0.8])
    rel = np.array([1.0, 0.95, 0.9, 0.6, 0.1])
    red = redundancy_matrix(vecs, near_duplicate=0.95)
    assert red[0, 1] > 0.99 and red[0, 2] == 0.0 and red[0, 3] == 0.0
    # full cosine redundancy pushes the related-but-distinct chunk 2 behind the unrelated 3 ...
    assert mmr_select(rel, vecs, 2, lambda_mult=0.5) == [0, 3]
    # ... the near-duplicate penalty keeps 2 and demotes only the copy 1, to the very end
    assert mmr_select(rel, vecs, 5, lambda_mult=0.5, near_duplicate=0.95) == [0, 2, 3, 4, 1]
    with pytest.raises(ValueError):
        redundancy_matrix(vecs, near_duplicate=1.0)


def test_default_lambda_is_relevance_order_and_a_lower_one_diversifies():
    # chosen with the fusion rule on the tuning splits (benchmarks/long_documents.py)
    assert DEFAULT_LAMBDA == 1.0 and 0.9 in LAMBDA_GRID
    # 1 is an exact copy of 0, 2 a distinct chunk slightly less relevant, 3 the pool's floor:
    # the default still puts the distinct chunk before the copy (0.9*0.93 - 0.1*0.3 > 0.9*0.99 - 0.1)
    vecs = _unit([1, 0, 0], [1, 0, 0], [0.3, 0.954, 0], [0, 0, 1])
    rel = np.array([1.0, 0.99, 0.93, 0.0])
    assert mmr_select(rel, vecs, 3, lambda_mult=0.9) == [0, 2, 1]
    assert mmr_select(rel, vecs, 3) == [0, 1, 2]  # the default: relevance order
    assert mmr_select(rel, vecs, 3, lambda_mult=1.0) == [0, 1, 2]


def test_default_lambda_keeps_a_relevant_chunk_that_resembles_the_first():
    # 1 is relevant and close to 0 (cosine 0.95: FOMC statements repeating an announcement are),
    # 2 unrelated and clearly less relevant: the default keeps 1, lambda 0.7 swaps it out
    vecs = _unit([1, 0, 0], [0.95, 0.312, 0], [0.2, 0, 0.98], [0, 1, 0])
    rel = np.array([1.0, 0.9, 0.7, 0.0])
    assert mmr_select(rel, vecs, 2) == [0, 1]
    assert mmr_select(rel, vecs, 2, lambda_mult=0.7) == [0, 2]


def test_mmr_edge_cases():
    vecs = _unit([1, 0], [0, 1])
    assert mmr_select(np.array([]), np.zeros((0, 2)), 3) == []
    assert mmr_select(np.array([0.2, 0.2]), vecs, 5) == [0, 1]  # equal relevance, k > n
    with pytest.raises(ValueError):
        mmr_select(np.array([1.0]), vecs[:1], 1, lambda_mult=1.5)


TEXTS = {
    "a": "The committee raised the federal funds rate target to 2 percent citing inflation.",
    "b": "Inflation pressures eased and the committee kept the policy rate unchanged.",
    "c": "Housing starts declined and mortgage delinquencies rose across many regions.",
    "d": "Swap lines with foreign central banks were extended to support dollar funding.",
    "e": "Energy prices surged because crude oil supply was disrupted by a hurricane.",
}


@pytest.fixture()
def small(tmp_path):
    docs = [Document(page_content=t, metadata={"doc_id": d}) for d, t in TEXTS.items()]
    return DocumentIndex.build(docs, tmp_path / "i", embeddings=HashingEmbeddings(64))


def test_hybrid_hits_carry_both_scores_and_the_fused_score(small):
    q = "swap lines foreign central banks"
    hits = small.search(q, k=5, mmr=False)
    assert hits[0].doc_id == "d"
    assert all(h.dense_score is not None and h.bm25_score is not None for h in hits)
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    assert all(0.0 <= h.score <= 1.0 for h in hits)
    # the top hit's fused score, recomputed from its own two scores
    cos_max = max(h.dense_score for h in hits)
    bm_max = max(h.bm25_score for h in hits)
    top = hits[0]
    base = base_dense_weight(small.homogeneity)  # a 4-word query: the corpus's base weight
    assert small.homogeneity is not None and 0.6 <= base <= 0.85
    # then moved by how decisive each list is, over every chunk the query reaches (all five)
    cosines = [h.score for h in small.search(q, k=5, mode="dense", mmr=False)]
    bm25 = [h.score for h in small.search(q, k=5, mode="bm25", mmr=False)]
    alpha = decisive_weight(base, cosines, bm25 + [0.0] * (5 - len(bm25)))
    assert alpha != pytest.approx(base)
    assert top.score == pytest.approx(
        alpha * (top.dense_score + 1) / (cos_max + 1) + (1 - alpha) * top.bm25_score / bm_max,
        abs=1e-6,
    )
    # a chunk that BM25 does not match still gets its cosine and a BM25 score of 0
    assert any(h.bm25_score == 0.0 for h in hits)


def test_fusion_options(small):
    q = "committee inflation rate"
    convex = small.search(q, k=5, mmr=False)
    rrf = small.search(q, k=5, mmr=False, fusion="rrf")
    assert {h.chunk_id for h in convex} == {h.chunk_id for h in rrf}
    assert rrf[0].score <= 2 / 61  # an RRF score
    dense_only = small.search(q, k=5, mmr=False, dense_weight=1.0)
    assert [h.chunk_id for h in dense_only] == [
        h.chunk_id for h in small.search(q, k=5, mmr=False, mode="dense")
    ]
    bm25_first = small.search(q, k=1, mmr=False, dense_weight=0.0)[0]
    assert bm25_first.chunk_id == small.search(q, k=1, mode="bm25", mmr=False)[0].chunk_id
    assert small.search(q, k=3, near_duplicate=0.9)
    with pytest.raises(ValueError, match="fusion"):
        small.search(q, fusion="borda")


def test_the_cosine_is_normalised_from_the_floor_search_is_given(small):
    q = "committee inflation rate"
    hits = small.search(q, k=5, mmr=False, dense_weight=0.6, dense_floor=0.0)
    cos_max = max(h.score for h in small.search(q, k=100, mode="dense", mmr=False))
    bm_max = max(h.score for h in small.search(q, k=100, mode="bm25", mmr=False))
    for h in hits:
        assert h.score == pytest.approx(
            0.6 * max(h.dense_score, 0.0) / cos_max + 0.4 * h.bm25_score / bm_max, abs=1e-6
        )
    default = small.search(q, k=5, mmr=False, dense_weight=0.6)
    assert [h.score for h in default] != [h.score for h in hits]


def test_decisiveness_is_how_far_the_best_stands_out():
    standout = [10.0] + [1.0 + 0.01 * i for i in range(30)]
    flat = [1.0 + 0.01 * i for i in range(31)]
    assert decisiveness(standout) > 4 * decisiveness(flat) > 0
    # in standard deviations: scaling a list does not change it
    assert decisiveness([3 * x for x in standout]) == pytest.approx(decisiveness(standout))
    assert decisiveness([1.0, 1.0, 1.0]) == 0.0
    assert decisiveness([2.0, 1.0]) == 0.0  # too short to say


def test_the_dense_weight_moves_toward_the_decisive_list():
    standout = [10.0] + [1.0 + 0.01 * i for i in range(30)]
    flat = [1.0 + 0.01 * i for i in range(31)]
    dense_sure = decisive_weight(0.7, standout, flat)
    bm25_sure = decisive_weight(0.7, flat, standout)
    assert bm25_sure < 0.7 < dense_sure < 1.0
    assert decisive_weight(0.7, standout, standout) == pytest.approx(0.7)  # equally sure
    assert decisive_weight(0.7, flat, standout, power=0.0) == 0.7  # the rule switched off
    # a stronger power moves it further
    assert decisive_weight(0.7, flat, standout, power=2.0) < bm25_sure
    assert decisive_weight(0.7, flat, standout, power=2.0) < decisive_weight(
        0.7, flat, standout, power=1.0
    )
    # BM25 matched nothing: the dense list decides
    assert decisive_weight(0.7, flat, [0.0] * 31) == pytest.approx(1.0, abs=0.01)


def test_search_uses_the_decisive_weight_unless_a_weight_is_given(small):
    q = "swap lines foreign central banks"
    default = small.search(q, k=5, mmr=False)
    fixed = small.search(q, k=5, mmr=False, decisive=0.0)
    cosines = [h.score for h in small.search(q, k=5, mode="dense", mmr=False)]
    bm25 = [h.score for h in small.search(q, k=5, mode="bm25", mmr=False)]
    base = dense_weight_for(q, small.homogeneity)
    alpha = decisive_weight(base, cosines, bm25 + [0.0] * (5 - len(bm25)))
    by_hand = small.search(q, k=5, mmr=False, dense_weight=alpha)
    assert [(h.chunk_id, h.score) for h in default] == [(h.chunk_id, h.score) for h in by_hand]
    assert [h.score for h in fixed] != [h.score for h in default]
    assert [(h.chunk_id, h.score) for h in fixed] == [
        (h.chunk_id, h.score) for h in small.search(q, k=5, mmr=False, dense_weight=base)
    ]


def test_dense_weight_follows_the_query_length():
    words = lambda n: " ".join(["rate"] * n)  # noqa: E731
    assert dense_weight_for(words(5)) == DENSE_WEIGHT == 0.7
    assert dense_weight_for(words(SHORT_QUERY_WORDS)) == pytest.approx(0.7)
    assert dense_weight_for(words(22)) == pytest.approx(0.7 + 7 / 15 * 0.25)
    assert dense_weight_for(words(LONG_QUERY_WORDS)) == pytest.approx(LONG_QUERY_WEIGHT) == 0.95
    assert dense_weight_for(words(80)) == pytest.approx(0.95)
    # words, not characters or punctuation: "1/4" and "U.S." are two words each
    assert dense_weight_for("What is U.S. 1/4?") == pytest.approx(0.7)


def test_dense_weight_follows_the_corpus_homogeneity():
    assert base_dense_weight(None) == DENSE_WEIGHT
    assert base_dense_weight(0.1) == base_dense_weight(VARIED_CORPUS) == VARIED_WEIGHT == 0.85
    assert base_dense_weight(0.95) == base_dense_weight(UNIFORM_CORPUS) == UNIFORM_WEIGHT == 0.6
    assert base_dense_weight(0.5) == pytest.approx(0.85 - 0.5 * 0.25)
    # the query's length raises the corpus's base weight towards 0.95
    words = lambda n: " ".join(["rate"] * n)  # noqa: E731
    assert dense_weight_for(words(5), 0.9) == pytest.approx(0.6)
    assert dense_weight_for(words(22), 0.9) == pytest.approx(0.6 + 7 / 15 * 0.35)
    assert dense_weight_for(words(22), 0.2) == pytest.approx(0.85 + 7 / 15 * 0.10)
    assert dense_weight_for(words(40), 0.2) == dense_weight_for(words(40), 0.9) == 0.95


def test_corpus_homogeneity_is_the_mean_cosine_between_two_different_rows():
    rng = np.random.default_rng(0)
    v = rng.normal(size=(7, 5))
    unit = v / np.linalg.norm(v, axis=1, keepdims=True)
    pairs = [float(unit[i] @ unit[j]) for i in range(7) for j in range(7) if i != j]
    assert corpus_homogeneity(v) == pytest.approx(np.mean(pairs))
    assert corpus_homogeneity(np.ones((4, 3))) == pytest.approx(1.0)
    assert corpus_homogeneity(np.eye(3)) == pytest.approx(0.0)
    assert corpus_homogeneity(v[:1]) == 0.0


def test_an_index_measures_its_homogeneity_once_per_build_and_update(tmp_path):
    alike = [f"The Committee decided to keep the target range at {n} percent." for n in range(6)]
    mixed = [
        "Revenue grew 12 percent on higher cloud subscriptions.",
        "The hurricane damaged refineries along the Gulf Coast.",
        "Goodwill impairment testing uses discounted cash flows.",
        "A term auction facility lends to depository institutions.",
        "Jamo and syllables: 한국어 문장을 여기에 둔다.",
        "Pension obligations rose as discount rates fell.",
    ]
    emb = HashingEmbeddings(64)

    def index(texts, name):
        docs = [Document(page_content=t, metadata={"doc_id": f"d{i}"}) for i, t in enumerate(texts)]
        return DocumentIndex.build(docs, tmp_path / name, embeddings=emb)

    uniform, varied = index(alike, "u"), index(mixed, "v")
    assert uniform.homogeneity > varied.homogeneity
    vecs = np.stack([varied.chunk_vector(i) for i in range(len(varied))])
    assert varied.homogeneity == pytest.approx(corpus_homogeneity(vecs))
    # reopened: the same figure; updated with other documents: measured again
    assert DocumentIndex.load(tmp_path / "v", embeddings=emb).homogeneity == pytest.approx(
        varied.homogeneity
    )
    before = uniform.homogeneity
    uniform.update(
        [Document(page_content=t, metadata={"doc_id": f"d{i}"}) for i, t in enumerate(mixed)]
    )
    assert uniform.homogeneity == pytest.approx(varied.homogeneity)
    assert uniform.homogeneity != pytest.approx(before)


def test_a_verbose_query_is_fused_with_the_higher_dense_weight(small):
    q = (
        "Assume that you are an analyst and answer the following question using only the "
        "statements: which swap lines with foreign central banks were extended to support the "
        "dollar funding of banks abroad?"
    )
    alpha = dense_weight_for(q, small.homogeneity)
    assert alpha == pytest.approx(0.95)
    hits = small.search(q, k=5, mmr=False, decisive=0.0)  # the length rule alone
    cos_max = max(h.dense_score for h in hits)
    bm_max = max(h.bm25_score for h in hits)
    for h in hits:
        assert h.score == pytest.approx(
            alpha * (h.dense_score + 1) / (cos_max + 1) + (1 - alpha) * h.bm25_score / bm_max,
            abs=1e-6,
        )
    assert [h.chunk_id for h in hits] == [
        h.chunk_id for h in small.search(q, k=5, mmr=False, dense_weight=alpha)
    ]
    # the decisive rule starts from that weight
    assert [h.score for h in small.search(q, k=5, mmr=False)] != [h.score for h in hits]
