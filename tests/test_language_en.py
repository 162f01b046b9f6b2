"""What guided mode knows of English, rule by rule, with the phrases each rule exists for.

Every function of ``pes_agent.guided.language.en`` is a closed word class or a written form (dates,
possessives, "X of Y"); this table is where a rule's reason lives, and a rule no phrase here needs
should go.
"""

from __future__ import annotations

import pytest

from pes_agent.guided.language import language

EN = language()


@pytest.mark.parametrize(
    ("sentence", "context"),
    [
        ("A cake needs 3 pounds of flour.", True),  # a statement: its values serve the next ask
        ("Our team flies to Portugal next week", True),
        ("The office is in Lisbon", True),
        ("It weighs 4 pounds", True),
        ("Convert that to kilograms", False),  # an instruction opens with its action
        ("I need the weather in Oslo", False),  # "I" asks
        ("Is the office in Lisbon?", False),  # a question is never context
        ("What is the weather there", False),
        ("Hi, my router light has been red since breakfast", True),  # a greeting, then a statement
        ("Hello, book a table for two", False),  # a greeting, then the ask
        ("Ana-Lucía Gómez looked after our boys in April", True),  # a named subject, then the past
        ("Siobhán Ní Bhriain did my crown last spring", True),
        ("Email Omar Haddad the minutes", False),  # an action's verb, then its object
        ("Please find cancelled flights", False),
        ("Show Tom's booked lessons", False),
        ("Last Saturday I met a grey tabby", False),  # a day, then "I": no named subject
    ],
)
def test_a_statement_is_context_and_an_ask_is_not(sentence: str, context: bool) -> None:
    assert EN.is_context(sentence) is context


@pytest.mark.parametrize(
    ("sentence", "question"),
    [
        ("What does a headlamp cost in pounds", True),  # a clause split off loses its "?"
        ("How warm is it in Lima", True),
        ("Is it raining in Nairobi?", True),
        ("Can I borrow Dune right now", True),  # a yes-or-no question opens with its auxiliary
        ("Does the pharmacy have aspirin", True),
        ("Convert 5 km to miles", False),
        ("Hello there", False),
    ],
)
def test_a_question_is_known_with_or_without_its_mark(sentence: str, question: bool) -> None:
    assert EN.is_question(sentence) is question


@pytest.mark.parametrize(
    ("text", "dates"),
    [
        ("on 2025-06-03", [("2025-06-03", "2025-06-03")]),
        ("on 01/15/2024", [("01/15/2024", "2024-01-15")]),  # month first, as in the US
        ("on 25/12/2024", [("25/12/2024", "2024-12-25")]),  # a first number over 12 is the day
        ("on January 1st 2024", [("January 1st 2024", "2024-01-01")]),
        ("on Jan 5, 2024", [("Jan 5, 2024", "2024-01-05")]),
        ("on 18 March 2025", [("18 March 2025", "2025-03-18")]),
        ("on the 3rd of June 2025", [("3rd of June 2025", "2025-06-03")]),
        ("on 02/30/2024", []),  # no such day
        ("in December", []),  # a month alone is no date
    ],
)
def test_dates_are_read_whole_and_as_iso(text: str, dates: list[tuple[str, str]]) -> None:
    assert [(d.text, d.iso) for d in EN.dates(text)] == dates


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("What is the weather in the capital of Japan", ["capital"]),
        ("Is it raining in Kenya's capital", ["capital"]),
        ("tell me its price in euros", ["price"]),
        ("between Lena Brook's start date and 2025-01-01", ["start", "date"]),
        ("the share price of Halvard Foods", ["share", "price"]),
        ("Scale the recipe to 6 servings", []),
        ("Order 2 of the Summit Headlamp", []),  # a number of things is no field of them
        ("an item with an original price of 100 dollars", []),  # a value given, not asked for
        ("a discount rate of $5.50", []),
        ("an invoice with a description of 'Website design'", []),
        ("Where was the author of 'Dune' born", ["author"]),
        ("Text me a definition of 'serendipity'", ["a", "definition"]),  # asked: no "with" gives it
        ("Can you tell me what my account balance is", ["account", "balance"]),  # "what … is" asks
        ("What's the weather like in Oslo", []),  # "what is", no possessive
        ("and my email is ana@example.org", []),  # "my X is …" gives X, it does not ask for it
        ("Her start date was in March", []),
    ],
)
def test_words_asked_for_as_something_of_something(text: str, words: list[str]) -> None:
    assert [w for w in EN.of_words(text) if w not in ("the", "in")] == words


@pytest.mark.parametrize(
    ("name", "core"), [("Lena Brook's", "Lena Brook"), ("James'", "James"), ("Tel Aviv", "Tel Aviv")]
)
def test_a_name_loses_its_possessive(name: str, core: str) -> None:
    assert EN.name_core(name) == core


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("prices", "price"),
        ("counting", "count"),
        ("converted", "convert"),
        ("watches", "watch"),
        ("squared", "square"),
        ("priced", "price"),
        ("passes", "pass"),  # a double s is no plural
        ("classes", "class"),
        ("adoption", "adopt"),  # "put in an adoption application": the adopting tool
        ("adoptable", "adopt"),
        ("collection", "collect"),
        ("refundable", "refund"),
    ],
)
def test_forms_of_a_word_meet_at_one_stem(a: str, b: str) -> None:
    assert EN.stem(a) == EN.stem(b)


def test_a_short_word_keeps_its_ending() -> None:
    assert EN.stem("action") == "action"  # no "act" of three letters left by "-tion"
    assert EN.stem("station") != EN.stem("state")
    assert EN.stem("suitable") != EN.stem("suit")


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("calculate the sales tax for that amount with a tax rate of 5%", ["amount"]),
        ("book the same date again", ["date"]),
        ("convert those prices to euros", ["prices"]),
        ("find hotels that accept dogs and say whether that is fine", []),  # a relative clause
        ("Find restaurants that serve vegan food", []),
        ("check that the price is right", []),
    ],
)
def test_words_pointing_back_to_something_found(text: str, words: list[str]) -> None:
    assert EN.back_words(text) == words


def test_a_month_of_a_year_is_read_with_its_iso_form() -> None:
    assert [(m.text, m.iso) for m in EN.months("the readings for March 2026, and for Dec. 2025")] == [
        ("March 2026", "2026-03"),
        ("Dec. 2025", "2025-12"),
    ]
    assert EN.months("on March 3, 2026") == []  # a whole date is a date


@pytest.mark.parametrize(
    ("description", "values"),
    [
        ("Kind of pet. 'cat' means a house cat, 'dog' any dog.", ["cat", "dog"]),
        ("Sort order, either 'newest' or 'oldest'.", ["newest", "oldest"]),
        ("Floor covering e.g. Oak parquet, Vinyl etc.", ["Oak parquet", "Vinyl"]),
        ("Unit of the amount. Supports 'litre', 'gallon', etc.", ["litre", "gallon"]),
        ("A neighbourhood such as Old Town or Harbourside.", ["Old Town", "Harbourside"]),
        ("The day of the visit, format YYYY-MM-DD", []),
    ],
)
def test_the_values_a_description_names_for_its_argument(description: str, values: list[str]) -> None:
    assert EN.mentioned_values(description) == values


def test_counts_in_words_are_read_from_two_up_and_not_inside_a_compound() -> None:
    assert [(c.text, c.value) for c in EN.counts("two adults and Three children")] == [
        ("two", 2),
        ("Three", 3),
    ]
    assert EN.counts("one of them uses two-factor codes") == []
    # joined to a unit, a count is still the number: "a six-day pass" is six days
    assert [(c.text, c.value) for c in EN.counts("a six-day pass and a twelve-hour shift")] == [
        ("six", 6),
        ("twelve", 12),
    ]


@pytest.mark.parametrize(
    ("sentence", "asks"),
    [
        ("How much is a six-day pass", True),
        ("How many days did we wait", True),
        ("What would two passes come to in euros", True),
        ("What does a wash-and-fold cost?", True),
        ("What is the weather in Oslo", False),
        ("Find the cost centre for Sales", False),  # no question
    ],
)
def test_a_question_for_an_amount_or_a_count(sentence: str, asks: bool) -> None:
    assert EN.asks_amount(sentence) is asks


@pytest.mark.parametrize(
    ("text", "clock"),
    [
        ("Tuesday at half past two in the afternoon", "14:30"),
        ("a quarter to nine in the morning", "08:45"),
        ("seven o'clock", "07:00"),
        ("10 in the evening", "22:00"),
        ("at noon", "12:00"),
    ],
)
def test_a_clock_time_said_in_words(text: str, clock: str) -> None:
    assert [t.iso for t in EN.times(text)] == [clock]


def test_a_bare_number_word_is_no_time() -> None:
    assert EN.times("two adults and three children") == []


@pytest.mark.parametrize(
    ("sentence", "ask"),
    [
        ("She doesn't do email, so could you text it to her on 555-0186", "text it to her on 555-0186"),
        ("My dad is insisting on paying, so please email the price to him", "email the price to him"),
        ("Could you book room LR-2204", "Could you book room LR-2204"),
        ("Our team flies to Portugal next week", "Our team flies to Portugal next week"),
        ("How much is a ticket to Cork, please?", "How much is a ticket to Cork, please?"),
    ],
)
def test_the_request_inside_a_sentence_that_opens_as_a_statement(sentence: str, ask: str) -> None:
    assert EN.ask_of(sentence) == ask
    assert not EN.is_context(sentence) or sentence.startswith("Our")


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("What would 3 hours of parking on Quay Street cost me", []),  # a quantity, not an ask
        ("two cups of flour", []),
        ("the capital of Japan", ["the", "capital"]),
        ("a list of hotels", ["a", "list"]),
        ("List the 10 largest cities of Brazil", ["largest", "cities"]),  # a count of what is asked
    ],
)
def test_a_quantitys_unit_before_of_is_asked_for_by_no_one(text: str, words: list[str]) -> None:
    assert EN.of_words(text) == words
