"""Write the SYNTHETIC OpenDART recording of examples/kr-filings (``recording/``): three
fictional companies (한빛전자, 새봄화학, 누리자동차; corp_codes 991000xx, stock codes 9000xx, which
OpenDART does not use), their 사업보고서 for FY2022 and FY2023, one 반기보고서 and one
주요사항보고서, as OpenDART would serve them (list rows, document XML in DART's element set,
fnlttSinglAcntAll answers). No sentence or number comes from a real filing; the figures are
invented and internally consistent (the text, the tables and the statements agree).

    python scripts/make_kr_recording.py examples/kr-filings/recording
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from xml.sax.saxutils import escape

JO = 1_000_000_000_000
EOK = 100_000_000

COMPANIES = [
    {
        "corp_code": "99100001",
        "corp_name": "한빛전자",
        "stock_code": "900001",
        "modify_date": "20240102",
    },
    {
        "corp_code": "99100002",
        "corp_name": "새봄화학",
        "stock_code": "900002",
        "modify_date": "20240102",
    },
    {
        "corp_code": "99100003",
        "corp_name": "누리자동차",
        "stock_code": "900003",
        "modify_date": "20240102",
    },
    {"corp_code": "99100004", "corp_name": "가람물산", "stock_code": "", "modify_date": "20240102"},
]

# consolidated figures in 원 by fiscal year: revenue, operating profit, net income, assets, liabilities
FIGURES = {
    "99100001": {
        2020: (
            25_100_000 * 10**6,
            2_510_000 * 10**6,
            1_902_000 * 10**6,
            38_100_000 * 10**6,
            8_900_000 * 10**6,
        ),
        2021: (
            27_900_100 * 10**6,
            3_120_400 * 10**6,
            2_544_700 * 10**6,
            41_230_500 * 10**6,
            9_120_300 * 10**6,
        ),
        2022: (
            30_214_700 * 10**6,
            4_331_900 * 10**6,
            3_922_400 * 10**6,
            44_820_100 * 10**6,
            9_530_600 * 10**6,
        ),
        2023: (
            25_893_548 * 10**6,
            656_700 * 10**6,
            1_547_300 * 10**6,
            45_567_800 * 10**6,
            9_231_400 * 10**6,
        ),
    },
    "99100002": {
        2020: (
            7_100_000 * 10**6,
            355_000 * 10**6,
            201_000 * 10**6,
            11_020_000 * 10**6,
            5_110_000 * 10**6,
        ),
        2021: (
            8_214_500 * 10**6,
            540_200 * 10**6,
            350_900 * 10**6,
            12_540_300 * 10**6,
            5_980_100 * 10**6,
        ),
        2022: (
            10_880_300 * 10**6,
            612_800 * 10**6,
            402_100 * 10**6,
            13_905_600 * 10**6,
            6_870_400 * 10**6,
        ),
        2023: (
            9_412_600 * 10**6,
            -121_400 * 10**6,
            -310_200 * 10**6,
            13_620_700 * 10**6,
            7_035_900 * 10**6,
        ),
    },
    "99100003": {
        2020: (
            21_050_000 * 10**6,
            840_000 * 10**6,
            610_000 * 10**6,
            30_400_000 * 10**6,
            17_900_000 * 10**6,
        ),
        2021: (
            23_900_000 * 10**6,
            1_130_500 * 10**6,
            801_400 * 10**6,
            32_150_800 * 10**6,
            18_430_200 * 10**6,
        ),
        2022: (
            27_301_800 * 10**6,
            1_902_300 * 10**6,
            1_413_200 * 10**6,
            35_820_600 * 10**6,
            19_640_900 * 10**6,
        ),
        2023: (
            31_204_500 * 10**6,
            2_815_600 * 10**6,
            2_101_900 * 10**6,
            39_401_300 * 10**6,
            20_980_700 * 10**6,
        ),
    },
}
#: 별도 (separate) revenue as a share of consolidated
SEPARATE_SHARE = {"99100001": 0.657, "99100002": 0.712, "99100003": 0.801}

FILINGS = [
    # corp_code, detail, report_nm, rcept_no, rcept_dt, bsns_year, reprt_code
    ("99100001", "A001", "사업보고서 (2022.12)", "20230310000102", "20230310", 2022, "11011"),
    ("99100001", "A001", "사업보고서 (2023.12)", "20240312000101", "20240312", 2023, "11011"),
    ("99100001", "A002", "반기보고서 (2024.06)", "20240814000103", "20240814", 2024, "11012"),
    ("99100002", "A001", "사업보고서 (2022.12)", "20230314000202", "20230314", 2022, "11011"),
    ("99100002", "A001", "사업보고서 (2023.12)", "20240315000201", "20240315", 2023, "11011"),
    ("99100003", "A001", "사업보고서 (2022.12)", "20230309000303", "20230309", 2022, "11011"),
    ("99100003", "A001", "사업보고서 (2023.12)", "20240311000301", "20240311", 2023, "11011"),
    (
        "99100003",
        "B001",
        "주요사항보고서(자기주식취득결정)",
        "20240520000302",
        "20240520",
        None,
        None,
    ),
]

# H1 2024 and H1/Q2 2023 for 한빛전자 (consolidated revenue, operating profit)
HALF = {
    "Q2": (7_406_800 * 10**6, 1_044_300 * 10**6),
    "H1": (14_182_300 * 10**6, 1_702_900 * 10**6),
    "Q2p": (6_013_900 * 10**6, -452_100 * 10**6),
    "H1p": (12_398_500 * 10**6, -870_500 * 10**6),
}


def won_text(amount: int) -> str:
    """25조 8,935억원 style (rounded down to 억)."""
    neg = amount < 0
    eok = abs(amount) // EOK
    jo, rest = divmod(eok, 10_000)
    parts = []
    if jo:
        parts.append(f"{jo}조")
    if rest:
        parts.append(f"{rest:,}억")
    return ("-" if neg else "") + " ".join(parts) + "원"


def mil(amount: int) -> str:
    """백만원 table cell; negatives with △."""
    m = round(amount / 10**6)
    return f"△{abs(m):,}" if m < 0 else f"{m:,}"


def pct(a: int, b: int) -> float:
    return round((a - b) / abs(b) * 100, 1)


def P(text: str) -> str:
    return f"<P>{escape(text)}</P>"


def TABLE(header: list[str], rows: list[list[str]]) -> str:
    th = "".join(f"<TH>{escape(h)}</TH>" for h in header)
    body = "".join("<TR>" + "".join(f"<TE>{escape(c)}</TE>" for c in r) + "</TR>" for r in rows)
    return f"<TABLE><THEAD><TR>{th}</TR></THEAD><TBODY>{body}</TBODY></TABLE>"


def SEC(level: int, title: str, *content: str) -> str:
    return f'<SECTION-{level}><TITLE ATOC="Y">{escape(title)}</TITLE>{"".join(content)}</SECTION-{level}>'


BUSINESS = {
    "99100001": {
        "what": "메모리 반도체(DRAM, NAND 플래시)와 중소형 OLED 디스플레이 패널을 설계, 생산, 판매",
        "founded": "1987년 4월 1일",
        "hq": "경기도 화성시 한빛로 100",
        "segments": [("메모리 반도체", 0.68), ("디스플레이 패널", 0.27), ("기타", 0.05)],
        "overview": [
            "당사의 메모리 사업부는 서버와 모바일 기기에 들어가는 DRAM과 데이터센터용 SSD에 쓰이는 NAND 플래시를 생산합니다.",
            "디스플레이 사업부는 스마트폰과 태블릿용 중소형 OLED 패널을 주로 공급하며, 차량용 디스플레이로 고객을 넓히고 있습니다.",
            "메모리 반도체 업황은 재고 조정과 가격 변동에 따라 실적이 크게 달라지는 경기 순환적 특성을 가집니다.",
        ],
        "materials": "주요 원재료는 실리콘 웨이퍼, 특수가스, 포토레지스트이며 웨이퍼는 국내외 3개 공급사로부터 장기계약으로 조달합니다.",
        "plants": "생산설비는 화성 제1공장(DRAM), 평택 제2공장(NAND 플래시), 구미 디스플레이 공장으로 구성되어 있습니다.",
        "customers": "주요 매출처는 글로벌 스마트폰 제조사와 클라우드 서비스 사업자이며, 상위 5개 고객이 매출의 약 41%를 차지합니다.",
        "rnd": ("연구개발비", 0.082, "차세대 고대역폭 메모리(HBM)와 저전력 DRAM 공정 개발"),
        "risk": "환율 변동 위험을 줄이기 위해 달러 매출과 달러 원재료 구매를 맞추는 자연 헤지를 우선하고, 남는 노출은 통화선도계약으로 관리합니다.",
        "contract": "당사는 2023년 11월 해외 장비사와 극자외선(EUV) 노광장비 4대 구매계약을 체결하였습니다.",
        "largest": ("한빛홀딩스", 23.4),
        "employees": (21_430, 11.2, 1.05),
        "auditor": "가람회계법인",
        "dividend": (1_450, 1_450),
    },
    "99100002": {
        "what": "에틸렌, 프로필렌 등 기초 석유화학 제품과 이차전지 양극재를 생산, 판매",
        "founded": "1972년 9월 15일",
        "hq": "울산광역시 남구 새봄로 25",
        "segments": [("기초소재(석유화학)", 0.61), ("전지소재(양극재)", 0.31), ("기타", 0.08)],
        "overview": [
            "기초소재 부문은 나프타를 분해해 에틸렌과 프로필렌을 만들고, 이를 원료로 폴리에틸렌과 폴리프로필렌을 생산합니다.",
            "전지소재 부문은 전기차 배터리에 쓰이는 하이니켈 양극재를 생산하며 2023년 광양 신공장을 가동하였습니다.",
            "석유화학 업황은 중국의 대규모 증설과 수요 둔화로 스프레드가 축소되어 2023년 수익성이 크게 악화되었습니다.",
        ],
        "materials": "주요 원재료는 나프타와 리튬, 니켈 전구체이며 나프타는 중동 정유사로부터 장기계약과 현물 구매를 병행해 조달합니다.",
        "plants": "생산설비는 울산 나프타분해설비(연산 에틸렌 120만톤)와 광양 양극재 공장(연산 6만톤)으로 구성되어 있습니다.",
        "customers": "양극재는 국내 배터리 3사에 공급하며, 석유화학 제품의 약 58%는 중국과 동남아시아로 수출됩니다.",
        "rnd": ("연구개발비", 0.021, "리튬인산철(LFP) 양극재와 재활용 플라스틱 소재 개발"),
        "risk": "리튬과 니켈 가격 변동은 판매가격 연동 계약으로 고객에게 전가하며, 나프타 가격 위험은 일부 스왑 계약으로 관리합니다.",
        "contract": "당사는 2023년 8월 국내 배터리 제조사와 5년간 양극재 15만톤 장기공급계약을 체결하였습니다.",
        "largest": ("새봄그룹", 35.1),
        "employees": (8_120, 14.6, 0.98),
        "auditor": "누리회계법인",
        "dividend": (2_000, 500),
    },
    "99100003": {
        "what": "승용차, 레저용 차량(SUV)과 전기차를 생산하여 국내외에 판매",
        "founded": "1967년 12월 29일",
        "hq": "서울특별시 서초구 누리대로 12",
        "segments": [("완성차", 0.83), ("부품 및 서비스", 0.12), ("금융", 0.05)],
        "overview": [
            "당사는 내연기관 승용차와 SUV, 전용 플랫폼 기반 전기차를 울산과 아산 공장에서 생산합니다.",
            "2023년 전기차 판매는 전년 대비 46% 늘어난 21만 대로 전체 판매의 17%를 차지하였습니다.",
            "북미와 유럽 판매 확대와 고부가 SUV 비중 상승으로 평균 판매단가가 높아졌습니다.",
        ],
        "materials": "주요 원재료는 강판, 알루미늄, 배터리 셀이며 배터리 셀은 2개 공급사로부터 조달합니다.",
        "plants": "생산설비는 울산공장(연산 140만 대), 아산공장(연산 30만 대)과 미국 앨라배마 공장으로 구성되어 있습니다.",
        "customers": "판매는 국내 직영 판매망과 해외 현지 딜러를 통해 이루어지며, 해외 판매 비중은 72%입니다.",
        "rnd": ("연구개발비", 0.034, "전기차 전용 플랫폼과 자율주행 소프트웨어 개발"),
        "risk": "원화 약세는 수출 채산성을 높이지만 해외 공장의 원재료 구매 비용을 늘리므로 통화별 순노출을 기준으로 헤지합니다.",
        "contract": "당사는 2023년 6월 미국 조지아주 전기차 전용 공장 건설 투자계약을 체결하였습니다.",
        "largest": ("누리홀딩스", 29.8),
        "employees": (71_050, 18.9, 1.12),
        "auditor": "가람회계법인",
        "dividend": (8_000, 6_000),
    },
}


def annual_xml(company: dict, year: int) -> str:
    code = company["corp_code"]
    name = company["corp_name"]
    b = BUSINESS[code]
    f = FIGURES[code]
    rev, op, ni, assets, liab = f[year]
    prev = f[year - 1]
    rnd_name, rnd_share, rnd_topic = b["rnd"]
    rnd = int(rev * rnd_share)
    seg_rows = [
        [s, f"{mil(int(rev * share))}", f"{share * 100:.1f}%"] for s, share in b["segments"]
    ]
    employees, tenure, pay = b["employees"]
    emp = employees + (year - 2023) * 350
    div_now, div_prev = b["dividend"] if year == 2023 else (b["dividend"][1], b["dividend"][1])
    op_word = "영업이익" if op >= 0 else "영업손실"
    body = [
        SEC(
            1,
            "I. 회사의 개요",
            SEC(
                2,
                "1. 회사의 개요",
                P(
                    f"{name}(이하 '당사')는 {b['founded']}에 설립되었으며, {b['what']}하는 것을 주요 사업으로 영위하고 있습니다."
                ),
                P(f"당사의 본점 소재지는 {b['hq']}이며, 유가증권시장(KOSPI)에 상장되어 있습니다."),
            ),
            SEC(
                2,
                "2. 회사의 연혁",
                P(f"{year}년 중 당사는 {b['contract']}"),
                P(
                    f"{year - 1}년에는 사업 구조를 재편하고 {b['segments'][1][0]} 부문 투자를 확대하였습니다."
                ),
            ),
            SEC(
                2,
                "3. 배당에 관한 사항",
                P("(단위 : 원)"),
                TABLE(
                    ["구분", f"제{year - 1969}기({year}년)", f"제{year - 1970}기({year - 1}년)"],
                    [["주당 현금배당금(보통주)", f"{div_now:,}", f"{div_prev:,}"]],
                ),
            ),
        ),
        SEC(
            1,
            "II. 사업의 내용",
            SEC(2, "1. 사업의 개요", *[P(t) for t in b["overview"]]),
            SEC(
                2,
                "2. 주요 제품 및 서비스",
                P(f"{year}년 부문별 매출액과 비중은 다음과 같습니다. (단위 : 백만원)"),
                TABLE(["부문", "매출액", "비중"], seg_rows),
            ),
            SEC(2, "3. 원재료 및 생산설비", P(b["materials"]), P(b["plants"])),
            SEC(2, "4. 매출 및 수주상황", P(b["customers"])),
            SEC(2, "5. 위험관리 및 파생거래", P(b["risk"])),
            SEC(
                2,
                "6. 주요계약 및 연구개발활동",
                P(b["contract"]),
                P(
                    f"{year}년 {rnd_name}는 {won_text(rnd)}으로 매출액 대비 {rnd_share * 100:.1f}% 수준이며, {rnd_topic}에 집중하였습니다."
                ),
            ),
        ),
        SEC(
            1,
            "III. 재무에 관한 사항",
            SEC(
                2,
                "1. 요약재무정보",
                P("(단위 : 백만원)"),
                TABLE(
                    ["과목", f"{year}년", f"{year - 1}년", f"{year - 2}년"],
                    [
                        ["매출액", mil(rev), mil(prev[0]), mil(f[year - 2][0])],
                        ["영업이익", mil(op), mil(prev[1]), mil(f[year - 2][1])],
                        ["당기순이익", mil(ni), mil(prev[2]), mil(f[year - 2][2])],
                        ["자산총계", mil(assets), mil(prev[3]), mil(f[year - 2][3])],
                        ["부채총계", mil(liab), mil(prev[4]), mil(f[year - 2][4])],
                    ],
                ),
            ),
            SEC(
                2,
                "2. 연결재무제표",
                P(
                    f"연결재무제표는 {year}년 12월 31일 기준으로 작성되었으며, 상세 내용은 첨부된 감사보고서를 참조하시기 바랍니다."
                ),
            ),
        ),
        SEC(
            1,
            "IV. 이사의 경영진단 및 분석의견",
            SEC(
                2,
                "1. 영업실적",
                P(
                    f"{year}년 연결 기준 매출액은 {won_text(rev)}으로 전년 대비 {abs(pct(rev, prev[0]))}% {'증가' if rev >= prev[0] else '감소'}하였습니다."
                ),
                P(
                    f"{op_word}은 {won_text(abs(op))}으로 전년의 {won_text(prev[1])} 대비 {'개선' if op >= prev[1] else '악화'}되었으며, 영업이익률은 {op / rev * 100:.1f}%로 전년 대비 {abs(round(op / rev * 100 - prev[1] / prev[0] * 100, 1))}%p {'상승' if op / rev >= prev[1] / prev[0] else '하락'}하였습니다."
                ),
                P(f"당기순이익은 {won_text(ni)}입니다."),
            ),
            SEC(
                2,
                "2. 유동성 및 자금조달",
                P(
                    f"{year}년 말 부채비율은 {liab / (assets - liab) * 100:.1f}%이며, 회사는 영업활동 현금흐름과 회사채 발행으로 설비투자 자금을 조달합니다."
                ),
            ),
        ),
        SEC(
            1,
            "V. 회계감사인의 감사의견 등",
            SEC(
                2,
                "1. 외부감사에 관한 사항",
                P(
                    f"당사의 외부감사인은 {b['auditor']}이며, {year}년 재무제표에 대하여 적정 의견을 받았습니다."
                ),
                P("핵심감사사항은 재고자산 평가와 수익 인식의 기간 귀속입니다."),
            ),
        ),
        SEC(
            1,
            "VI. 주주에 관한 사항",
            SEC(
                2,
                "1. 최대주주 및 특수관계인의 주식소유 현황",
                P(
                    f"{year}년 12월 31일 기준 최대주주는 {b['largest'][0]}이며 지분율은 {b['largest'][1]}%입니다."
                ),
                TABLE(
                    ["성명", "관계", "지분율"],
                    [
                        [b["largest"][0], "최대주주", f"{b['largest'][1]}%"],
                        ["국민연금공단", "5% 이상 주주", "7.2%"],
                    ],
                ),
            ),
        ),
        SEC(
            1,
            "VII. 임원 및 직원 등에 관한 사항",
            SEC(
                2,
                "1. 직원 등 현황",
                P(
                    f"{year}년 말 직원 수는 {emp:,}명이며, 평균 근속연수는 {tenure}년, 1인 평균 급여액은 {pay}억원입니다."
                ),
            ),
        ),
    ]
    return document(name, code, "사업보고서", "11011", body)


def half_xml(company: dict) -> str:
    name = company["corp_name"]
    q2, op2 = HALF["Q2"]
    h1, oph1 = HALF["H1"]
    q2p, _ = HALF["Q2p"]
    body = [
        SEC(
            1,
            "I. 회사의 개요",
            SEC(
                2,
                "1. 회사의 개요",
                P(f"{name}는 메모리 반도체와 디스플레이 패널을 생산하는 회사입니다."),
            ),
        ),
        SEC(
            1,
            "II. 사업의 내용",
            SEC(
                2,
                "1. 사업의 개요",
                P(
                    "2024년 상반기에는 인공지능 서버 수요 증가로 고대역폭 메모리(HBM) 판매가 크게 늘었습니다."
                ),
                P("DRAM 평균 판매가격은 2024년 2분기에 전분기 대비 약 15% 상승하였습니다."),
            ),
        ),
        SEC(
            1,
            "III. 재무에 관한 사항",
            SEC(
                2,
                "1. 요약재무정보",
                P("(단위 : 백만원)"),
                TABLE(
                    ["과목", "2024년 2분기", "2024년 상반기", "2023년 2분기", "2023년 상반기"],
                    [
                        ["매출액", mil(q2), mil(h1), mil(q2p), mil(HALF["H1p"][0])],
                        ["영업이익", mil(op2), mil(oph1), mil(HALF["Q2p"][1]), mil(HALF["H1p"][1])],
                    ],
                ),
            ),
        ),
        SEC(
            1,
            "IV. 이사의 경영진단 및 분석의견",
            SEC(
                2,
                "1. 영업실적",
                P(
                    f"2024년 상반기 연결 매출액은 {won_text(h1)}으로 전년 동기 대비 {pct(h1, HALF['H1p'][0])}% 증가하였고, 영업이익은 {won_text(oph1)}으로 흑자 전환하였습니다."
                ),
            ),
        ),
    ]
    return document(name, company["corp_code"], "반기보고서", "11012", body)


def major_event_xml(company: dict) -> str:
    name = company["corp_name"]
    body = [
        P("자기주식 취득 결정"),
        TABLE(
            ["구분", "내용"],
            [
                ["취득예정주식(보통주)", "3,000,000주"],
                ["취득예정금액", "600,000,000,000원"],
                ["취득예상기간", "2024년 05월 21일 ~ 2024년 08월 20일"],
                ["취득목적", "주주가치 제고"],
            ],
        ),
        P(
            f"{name}는 주주가치 제고를 위해 6,000억원 규모의 자기주식을 장내 매수로 취득하기로 결정하였습니다."
        ),
    ]
    return document(name, company["corp_code"], "주요사항보고서(자기주식취득결정)", "", body)


def document(name: str, code: str, doc_name: str, acode: str, body: list[str]) -> str:
    return (
        '<?xml version="1.0" encoding="utf-8"?>\n'
        f'<DOCUMENT><DOCUMENT-NAME ACODE="{acode}">{escape(doc_name)}</DOCUMENT-NAME>'
        f'<COMPANY-NAME AREGCIK="{code}">{escape(name)}</COMPANY-NAME>'
        f"<BODY>{''.join(body)}</BODY></DOCUMENT>\n"
    )


ACCOUNTS = [
    ("IS", "손익계산서", "ifrs-full_Revenue", "매출액", 0),
    ("IS", "손익계산서", "dart_OperatingIncomeLoss", "영업이익(손실)", 1),
    ("IS", "손익계산서", "ifrs-full_ProfitLoss", "당기순이익(손실)", 2),
    ("BS", "재무상태표", "ifrs-full_Assets", "자산총계", 3),
    ("BS", "재무상태표", "ifrs-full_Liabilities", "부채총계", 4),
    ("BS", "재무상태표", "ifrs-full_Equity", "자본총계", None),
]


def amount(value: int | None) -> str:
    return "" if value is None else str(value)


def statements(code: str, rcept_no: str, year: int, reprt_code: str, fs_div: str) -> dict:
    f = FIGURES[code]
    share = 1.0 if fs_div == "CFS" else SEPARATE_SHARE[code]
    rows = []
    for n, (sj, sj_nm, acc_id, acc_nm, i) in enumerate(ACCOUNTS, start=1):

        def value(y: int, i: int | None = i) -> int:
            v = f[y][3] - f[y][4] if i is None else f[y][i]
            return int(v * share)

        item = {
            "rcept_no": rcept_no,
            "reprt_code": reprt_code,
            "bsns_year": str(year),
            "corp_code": code,
            "sj_div": sj,
            "sj_nm": sj_nm,
            "account_id": acc_id,
            "account_nm": acc_nm,
            "account_detail": "-",
            "thstrm_nm": f"제 {year - 1969} 기",
            "frmtrm_nm": f"제 {year - 1970} 기",
            "ord": str(n),
            "currency": "KRW",
        }
        if reprt_code == "11011":
            item.update(
                thstrm_amount=amount(value(year)),
                frmtrm_amount=amount(value(year - 1)),
                bfefrmtrm_nm=f"제 {year - 1971} 기",
                bfefrmtrm_amount=amount(value(year - 2)),
            )
        else:  # 반기: H1 2024 (한빛전자 only)
            if sj == "IS" and i is not None and i < 2:
                q2, h1, q2p, h1p = (int(HALF[k][i] * share) for k in ("Q2", "H1", "Q2p", "H1p"))
                item.update(
                    thstrm_nm=f"제 {year - 1969} 기 반기",
                    thstrm_amount=str(q2),
                    thstrm_add_amount=str(h1),
                    frmtrm_q_nm=f"제 {year - 1970} 기 반기",
                    frmtrm_q_amount=str(q2p),
                    frmtrm_add_amount=str(h1p),
                )
            elif sj == "BS":
                item.update(
                    thstrm_amount=amount(int(value(2023) * 1.02)), frmtrm_amount=amount(value(2023))
                )
            else:
                continue
        rows.append(item)
    return {"status": "000", "message": "정상", "list": rows}


def main(out: Path) -> None:
    (out / "documents").mkdir(parents=True, exist_ok=True)
    (out / "statements").mkdir(parents=True, exist_ok=True)
    by_code = {c["corp_code"]: c for c in COMPANIES}
    (out / "companies.json").write_text(
        json.dumps(COMPANIES, ensure_ascii=False, indent=1) + "\n", "utf-8"
    )
    rows = []
    for code, detail, report_nm, rcept_no, rcept_dt, year, reprt_code in FILINGS:
        c = by_code[code]
        rows.append(
            {
                "corp_cls": "Y",
                "corp_name": c["corp_name"],
                "corp_code": code,
                "stock_code": c["stock_code"],
                "report_nm": report_nm,
                "rcept_no": rcept_no,
                "flr_nm": c["corp_name"],
                "rcept_dt": rcept_dt,
                "rm": "",
                "detail_type": detail,
                "bsns_year": year,
                "reprt_code": reprt_code,
            }
        )
        if detail == "A001":
            xml = annual_xml(c, year)
        elif detail == "A002":
            xml = half_xml(c)
        else:
            xml = major_event_xml(c)
        (out / "documents" / f"{rcept_no}.xml").write_text(xml, "utf-8")
        if reprt_code:
            for fs_div in ("CFS", "OFS"):
                body = statements(code, rcept_no, year, reprt_code, fs_div)
                (out / "statements" / f"{rcept_no}-{fs_div}.json").write_text(
                    json.dumps(body, ensure_ascii=False, indent=1) + "\n", "utf-8"
                )
    (out / "filings.json").write_text(
        json.dumps(rows, ensure_ascii=False, indent=1) + "\n", "utf-8"
    )


if __name__ == "__main__":
    main(Path(sys.argv[1] if len(sys.argv) > 1 else "examples/kr-filings/recording"))
