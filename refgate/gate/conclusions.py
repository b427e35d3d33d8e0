"""Conclusions by meaning: a sentence that tells the reader what to do or what to believe about
an investment, in English or Korean. Four kinds:

- ``recommendation``: a call to act on a holding ("Increase your position immediately.",
  "Avoid the company's bonds.", "We recommend buying", "비중 확대를 권고합니다");
- ``rating``: an investment rating or target ("The stock is a strong buy.", "Outperform",
  "목표주가 9만 원", "투자의견은 BUY입니다");
- ``risk_verdict``: a judgement that something is safe or risky as an investment ("This bond is a
  safe investment.", "default risk is negligible", "이 채권은 안전합니다");
- ``absence``: a claim that a risk item does not exist ("The company has no contingent
  liabilities.", "우발채무가 없습니다").

The rules read the structure of such sentences (a verb of holding with its object, a rating word
in predicate position, a safety predicate with an investment subject, a negated risk noun), not
one phrasing each. Measured on real analytic text that is not a conclusion (FOMC minutes and
statements, TAT-QA annual-report paragraphs, a DART filing's sections) and on analyst-style
conclusions, tuning and held-out apart: ``benchmarks/conclusion_flagging.py``.
"""

from __future__ import annotations

import re

_I = re.IGNORECASE

#: Things one holds or trades: the object of a recommendation verb.
_HOLDING = (
    r"(?:(?:the|its|their|your|our|this|these|those|a|an)\s+)?(?:\w+(?:'s)?\s+){0,3}"
    r"(?:stocks?|shares?|equit(?:y|ies)|bonds?|notes|debentures?|positions?|stakes?|exposure|"
    r"holdings?|securities|paper|credit|names?|issuer|ETFs?|funds?|portfolio|allocation|"
    r"weighting|investments?|calls?|puts?|options|futures|treasur(?:y|ies)|gilts|the\s+name|"
    r"the\s+company|the\s+sector|the\s+stock|it|them)\b"
)
_ACT = (
    r"(?:buy(?:ing)?|sell(?:ing)?|hold(?:ing)?|avoid(?:ing)?|accumulat(?:e|ing)|add(?:ing)?\s+to|"
    r"increas(?:e|ing)|reduc(?:e|ing)|trim(?:ming)?|cut(?:ting)?|exit(?:ing)?|dump(?:ing)?|"
    r"short(?:ing)?|overweight(?:ing)?|underweight(?:ing)?|purchas(?:e|ing)|invest(?:ing)?\s+in|"
    r"(?:stay|steer)(?:ing)?\s+(?:away\s+from|clear\s+of)|get(?:ting)?\s+out\s+of|take\s+profits?|"
    r"lock\s+in\s+gains|rotat(?:e|ing)\s+(?:into|out\s+of)|load(?:ing)?\s+up\s+on|"
    r"liquidat(?:e|ing)|double\s+down\s+on|unload(?:ing)?|stay\s+long|go(?:ing)?\s+long|"
    r"go(?:ing)?\s+short|keep|own(?:ing)?|pick(?:ing)?\s+up|switch(?:ing)?\s+(?:in)?to)"
)
_RECOMMENDATION_EN = re.compile(
    # an imperative at the start of a sentence: "Avoid the company's bonds."
    rf"^\s*(?:(?:now|so|therefore|thus|hence|clearly|simply|just|please)\s*,?\s+)?"
    rf"(?:we\s+would\s+)?{_ACT}\s+(?:{_HOLDING}|(?:on\s+|in\s+|of\s+)?[A-Z])"
    r"|^\s*(?:take\s+profits?|lock\s+in\s+(?:gains|profits))\b"
    r"|^\s*(?:add|put|include|move)\s+.{1,60}?\s+(?:to|in|into)\s+(?:\w+\s+){0,2}"
    r"(?:portfolios?|holdings|allocations?|positions?|watch\s*lists?)\b"
    r"|^\s*(?:switch|rotate|move)\s+(?:from|out\s+of)\s+\S"
    # a modal of advice with the verb: "investors should trim exposure"
    rf"|\b(?:should|must|ought\s+to|need\s+to|have\s+to|had\s+better|would\s+do\s+well\s+to|"
    rf"(?:is|are)\s+(?:advised|encouraged|urged)\s+to|it\s+(?:is|would\s+be)\s+(?:wise|prudent|"
    rf"advisable|sensible|time)\s+to|now\s+is\s+the\s+time\s+to|the\s+time\s+to)\s+"
    rf"(?:\w+\s+){{0,2}}{_ACT}\b"
    # a verb of advice: "we recommend buying", "we advise clients to sell"
    rf"|\b(?:recommend(?:s|ed|ing)?|advis(?:e|es|ed|ing)|suggest(?:s|ed)?|urg(?:e|es|ed)|"
    rf"prefer|favou?r)\s+(?:\w+\s+){{0,3}}(?:to\s+)?{_ACT}\b"
    rf"|\b(?:we|i)\s+(?:strongly\s+)?(?:recommend|advise|urge)\b"
    rf"|\b(?:our|my)\s+(?:recommendation|advice|call|top\s+pick|preference)\s+(?:is|remains)\b"
    rf"|\b(?:a|our)\s+top\s+pick\b|\bbuy\s+(?:the\s+)?dip\b",
    _I,
)
_RATING_WORD = (
    r"(?:strong\s+buy|strong\s+sell|buy|sell|hold|accumulate|outperform|underperform|"
    r"market[\s-]perform|sector[\s-]perform|overweight|underweight|equal[\s-]weight|neutral|"
    r"reduce|add|conviction\s+buy)"
)
_RATING_EN = re.compile(
    rf"\b(?:is|are|remains?|stays?|looks?\s+like|as)\s+(?:a|an)\s+(?:\w+\s+)?{_RATING_WORD}\b"
    rf"|\b(?:rate|rating|rated|reiterate|reiterating|maintain|maintaining|initiate|initiating|"
    rf"upgrade|upgrading|upgraded|downgrade|downgrading|downgraded|reaffirm|assign|assigning)\s+"
    rf"(?:\w+\s+){{0,4}}(?:(?:to|at|with|a|an)\s+)?(?:an?\s+)?['\"]?{_RATING_WORD}['\"]?\b"
    rf"|\b{_RATING_WORD}\s+(?:rating|recommendation|call)\b"
    r"|\b(?:price\s+target|target\s+price|fair\s+value\s+estimate)\s+(?:of|is|at|to|remains|for"
    r"|on)\b"
    r"|\b(?:upgrade|downgrade)[sd]?\s+(?:the\s+)?(?:stock|shares|bonds?|company|name)\b",
    _I,
)
#: A rating label moved to or from (capitalised, as notes write them): "to Neutral from Buy".
_RATING_MOVE = re.compile(
    r"\b(?:to|at)\s+['\"]?(?:Strong Buy|Buy|Sell|Strong Sell|Hold|Outperform|Underperform|"
    r"Overweight|Underweight|Neutral|Market Perform|Sector Perform|Equal[ -]Weight|Reduce|"
    r"Accumulate)['\"]?(?:\s+from\b|\s*[.,;]|\s*$)"
)
_INVESTMENT = (
    r"(?:investment|bet|buy|holding|asset|bond|stock|security|choice|play|option|pick|"
    r"place\s+to\s+park|haven|credit|issuer|name|store\s+of\s+value)"
)
_RISK_EN = re.compile(
    rf"\b(?:is|are|remains?|looks?|seems?|stays?)\s+(?:a\s+|an\s+)?(?:very\s+|extremely\s+|"
    rf"relatively\s+|completely\s+|perfectly\s+|fairly\s+)?(?:safe|secure|risk[\s-]free|"
    rf"low[\s-]risk|high[\s-]risk|risky|dangerous|speculative|rock[\s-]solid|bulletproof|"
    rf"sound|solid|reliable|junk|toxic|overvalued|undervalued|cheap|expensive|"
    rf"attractive|unattractive|compelling)\s+{_INVESTMENT}\b"
    rf"|\b(?:is|are)\s+(?:completely\s+|perfectly\s+|entirely\s+)?(?:safe|risk[\s-]free|"
    rf"secure|bulletproof|rock[\s-]solid)\s*(?:to\s+(?:own|hold|buy)|for\s+(?:investors|"
    rf"savers|retirees|income))?\s*[.!]?\s*$"
    r"|\b(?:default|credit|bankruptcy|insolvency|solvency|liquidity|downside)\s+risk\s+"
    r"(?:(?:at|of|for|in)\s+(?:\w+\s+){0,3})?"
    r"(?:is|are|remains?|looks?)\s+(?:negligible|minimal|low|limited|remote|high|elevated|"
    r"significant|severe|substantial|nil|non-existent)\b"
    r"|\b(?:poses?|carr(?:y|ies)|presents?|has|have)\s+(?:no|little|minimal|negligible|"
    r"virtually\s+no|significant|substantial|serious|considerable)\s+(?:\w+\s+)?"
    r"(?:risk|danger|downside)\b"
    r"|\bno\s+(?:real\s+)?(?:risk|chance|danger)\s+of\s+(?:default|loss|bankruptcy|a\s+cut)"
    r"|\b(?:risk|chance|probability|likelihood)\s+of\s+(?:a\s+)?(?:default|bankruptcy|insolvency|"
    r"loss|downgrade)\s+(?:\w+\s+){0,4}(?:is|are|remains?|looks?)\s+(?:very\s+)?(?:negligible|"
    r"minimal|low|limited|remote|high|elevated|significant|nil|zero)\b"
    r"|\b(?:will|would|could)\s+(?:never|not)\s+default\b"
    r"|\b(?:is|are)\s+(?:unlikely|certain|sure|bound|likely)\s+to\s+(?:default|go\s+bankrupt|"
    r"collapse|fail|double|soar|crash|outperform|underperform)\b"
    r"|\b(?:guaranteed|certain|assured|sure)\s+(?:return|returns|profit|gain|gains|income|"
    r"upside)\b|\bcan(?:not|'t)\s+(?:lose|go\s+wrong)\b",
    _I,
)
_RISK_ITEM_EN = (
    r"(?:contingent\s+liabilit(?:y|ies)|liabilit(?:y|ies)|debts?|borrowings?|leverage|"
    r"off[\s-]balance[\s-]sheet\s+\w+|litigation|lawsuits?|legal\s+(?:risk|exposure|proceedings)|"
    r"pending\s+(?:litigation|claims|cases)|claims\s+against|exposure|impairments?|write[\s-]downs?|"
    r"going[\s-]concern\s+(?:doubts?|issues?|risks?|uncertaint(?:y|ies))|covenant\s+(?:breach(?:es)?|issues?|risk)|"
    r"defaults?|impairment\s+(?:charges?|losses)|overdue\s+\w+|non[\s-]performing\s+\w+|guarantees?|pledges?|collateral|"
    r"material\s+weakness(?:es)?|accounting\s+(?:issues?|irregularities)|red\s+flags?|"
    r"related[\s-]party\s+(?:transactions|risk)|refinancing\s+risk|risks?|concerns?|"
    r"problems?|issues?|regulatory\s+(?:risk|issues?|problems?)|environmental\s+liabilit\w+)"
)
_ABSENCE_EN = re.compile(
    rf"\b(?:has|have|had|carr(?:y|ies)|faces?|bears?|shows?)\s+(?:absolutely\s+|virtually\s+|"
    rf"essentially\s+)?(?:no|zero|nil)\s+(?:\w+\s+){{0,2}}{_RISK_ITEM_EN}\b"
    rf"|\bthere\s+(?:is|are|were|was|have\s+been|has\s+been|will\s+be)\s+(?:absolutely\s+|"
    rf"virtually\s+)?no\s+(?:\w+\s+){{0,2}}"
    rf"{_RISK_ITEM_EN}\b"
    rf"|\b(?:is|are)\s+(?:completely\s+|entirely\s+|totally\s+)?(?:free\s+of|debt[\s-]free|"
    rf"clean\s+of|without\s+any)\s*(?:\w+\s+){{0,2}}(?:{_RISK_ITEM_EN})?"
    rf"|\bno\s+(?:\w+\s+){{0,2}}{_RISK_ITEM_EN}\s+(?:exists?|exist|to\s+(?:speak\s+of|worry\s+about|"
    rf"report)|(?:is|are|were|was|have\s+been|has\s+been)\s+(?:outstanding|pending|present|known|"
    rf"disclosed|expected|anticipated|recognized|recorded|identified|found|reported))\b"
    rf"|\b(?:nothing|none)\s+to\s+worry\s+about\b|\bclean\s+bill\s+of\s+health\b",
    _I,
)

# ---- Korean ---------------------------------------------------------------------------------
_KO_ACT = (
    r"(?:매수|매도|매입|매각|비중\s*(?:확대|축소|유지)|보유|편입|처분|손절|차익\s*실현|투자|"
    r"추가\s*매수|분할\s*매수|정리|청산|회피|피하|담으|사들이|팔|사)"
)
_RECOMMENDATION_KO = re.compile(
    rf"{_KO_ACT}\s*(?:을|를|는|은)?\s*(?:적극\s*)?(?:권고|권유|추천|권장|제안|조언|권합니다|권해|권한다)"
    r"|(?:사|팔아|매수해|매도해|정리해|처분해|줄여|늘려|피해|담아|보유해|투자해)야\s*(?:합니다|한다|할)"
    r"|(?:사\s*두|담아\s*두|매수하|매도하|정리하|처분하|팔|피하|줄이|늘리)는\s*(?:것이|편이|게)\s*"
    r"(?:좋|바람직|유리|현명|낫)"
    rf"|{_KO_ACT}\s*하시기\s*바랍니다"
    rf"|{_KO_ACT}\s*(?:하|해)\s*(?:야\s*(?:합니다|한다|할\s*것)|십시오|세요|시길|기\s*바랍니다|는\s*것이\s*"
    rf"(?:좋|바람직|유리|현명))"
    rf"|{_KO_ACT}\s*(?:할|하실)\s*(?:것을|때)"
    rf"|(?:피하|팔|사|담으|정리하|줄이|늘리|처분하|매도하|매수하)(?:십시오|세요|셔야|는\s*것이\s*"
    rf"(?:좋|바람직|현명))"
    r"|(?:비중|포지션|보유\s*물량|지분)(?:을|를)?\s*(?:즉시\s*|당장\s*|적극\s*)?(?:늘리|줄이|확대하|축소하)"
    r"(?:십시오|세요|셔야|야|는\s*것이)"
    r"|(?:권고|추천|권장|제안)(?:합니다|드립니다|한다|하는\s*바)"
    r"|(?:투자자|고객|주주)(?:들)?(?:은|는|에게)\s*.{0,20}(?:해야|하기를|할\s*것을)",
)
_RATING_KO = re.compile(
    r"투자\s*의견|목표\s*(?:주가|가격|가)|적정\s*주가|(?:매수|매도|중립|보유|비중\s*확대|비중\s*축소|"
    r"시장\s*수익률\s*상회|시장\s*수익률\s*하회|Buy|BUY|Sell|SELL|Hold|HOLD|Outperform|Trading\s*Buy)"
    r"\s*(?:의견|등급|으로|로)\s*(?:을|를)?\s*(?:유지|제시|상향|하향|부여|개시|커버리지)"
    r"|(?:BUY|SELL|HOLD|Buy|Sell|Hold|매수|매도|중립)(?:입니다|이다|를\s*유지|\s*의견)"
    r"|(?:상향|하향)\s*조정(?:합니다|한다)|최선호\s*주|탑\s*픽|Top\s*Pick",
)
_RISK_KO = re.compile(
    r"리스크가\s*(?:없|낮|높|크|큽|커|적)|(?:부실|부도|파산|신용|재무|유동성|투자|손실)\s*위험(?:이|은|도)\s*"
    r"(?:크|큽|커|높|낮|없|적|거의\s*없|매우\s*(?:크|큽|높|낮))"
    r"|(?:안전|안정적|위험|부실|위태|불안)\s*(?:한|합니다|하다|해요|"
    r"입니다|이다|하지\s*않|합니다\.|할\s*것)"
    r"|(?:안전한|위험한|우량한|유망한|매력적인|저평가된|고평가된)\s*(?:투자|종목|채권|주식|자산|"
    r"투자처|선택)"
    r"|(?:부도|파산|디폴트|상환\s*불능|채무\s*불이행)\s*(?:위험|가능성)(?:은|이|는)?\s*(?:없|낮|희박|"
    r"거의\s*없|매우\s*낮|높|크)"
    r"|(?:손실|원금\s*손실)\s*(?:위험|가능성)(?:은|이)?\s*(?:없|거의\s*없|낮)"
    r"|(?:투자|보유)\s*(?:해도|하셔도)\s*(?:안전|괜찮|문제\s*없)"
    r"|(?:수익|이익)(?:이|을)?\s*(?:보장|확실)",
)
_RISK_ITEM_KO = (
    r"(?:우발\s*채무|우발\s*부채|부채|채무|차입금|소송|분쟁|손상|담보|보증|연체|부실|리스크|위험|"
    r"우려|문제|제재|횡령|배임|감사\s*의견|계속\s*기업|재무\s*위험|유동성\s*위험|부외\s*부채|"
    r"약정|충당\s*부채|이슈|불확실성|미지급\s*금|미지급\s*채무)"
)
_ABSENCE_KO = re.compile(
    rf"{_RISK_ITEM_KO}(?:\s*[가-힣]{{1,5}}){{0,2}}?\s*(?:이|가|은|는|도)?\s*(?:전혀\s*|일체\s*|사실상\s*|거의\s*)?"
    rf"(?:없습니다|없다|없음|없으며|없고|없어|존재하지\s*않|발생하지\s*않|해당\s*(?:사항\s*)?없)"
    rf"|{_RISK_ITEM_KO}\s*(?:으로부터|로부터|에서)\s*자유롭",
)

#: Each kind of conclusion (see the module doc), as a finding names it.
KIND_WORDS: dict[str, str] = {
    "recommendation": "recommendation",
    "rating": "rating",
    "risk_verdict": "risk verdict",
    "absence": "absence claim",
}
#: Each kind's rules, tried in this order.
RULES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("recommendation", _RECOMMENDATION_EN),
    ("recommendation", _RECOMMENDATION_KO),
    ("rating", _RATING_EN),
    ("rating", _RATING_KO),
    ("rating", _RATING_MOVE),
    ("risk_verdict", _RISK_EN),
    ("risk_verdict", _RISK_KO),
    ("absence", _ABSENCE_EN),
    ("absence", _ABSENCE_KO),
)

#: Reported speech and questions are not the writer's conclusion.
_REPORTED = re.compile(
    r"^\s*(?:participants|members|the\s+committee|committee\s+members|several|many|some|most|"
    r"a\s+few|a\s+number\s+of|staff|the\s+staff|one\s+participant|others|policymakers|"
    r"directors|officials)\b[^.]{0,80}\b(?:noted|said|stated|observed|remarked|judged|agreed|"
    r"expected|indicated|pointed\s+out|reported|commented|suggested|emphasized|stressed|"
    r"anticipated|viewed|saw|thought|felt)\b",
    _I,
)


def conclusion_kind(sentence: str) -> str | None:
    """The kind of conclusion ``sentence`` states (see the module doc), else None."""
    text = " ".join(str(sentence).split())
    if not text or text.endswith("?") or _REPORTED.search(text):
        return None
    for kind, rule in RULES:
        if rule.search(text):
            return kind
    return None
