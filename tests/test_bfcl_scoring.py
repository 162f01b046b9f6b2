"""The BFCL benchmark's harness without the model: reading BFCL's files, its functions as tool schemas,
the fixed sample, and the AST rules a call is scored by.

The data is not in the repo (the benchmark's docstring says where to get it), so every case here is a
tiny hand-made one in BFCL's format; what is asserted is each rule the scorer claims to apply.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from benchmarks import bfcl
from benchmarks.bfcl_scoring import (
    CATEGORIES,
    Request,
    check_call,
    fixed_sample,
    ideal_call,
    input_schema,
    load_requests,
    score_run,
    standardize,
    unreachable,
)

WEATHER = {
    "name": "weather.get",
    "description": "Current weather in a city.",
    "parameters": {
        "type": "dict",
        "properties": {
            "city": {"type": "string", "description": "City, Country"},
            "days": {"type": "integer"},
            "threshold": {"type": "float"},
            "unit": {"type": "string", "enum": ["celsius", "fahrenheit"], "default": "fahrenheit"},
            "fields": {"type": "array", "items": {"type": "string"}},
            "window": {"type": "tuple", "items": {"type": "integer"}},
            "filters": {
                "type": "dict",
                "properties": {"kind": {"type": "string"}, "max": {"type": "integer"}},
            },
            "stops": {"type": "array", "items": {"type": "dict"}},
            "extra": {"type": "any"},
        },
        "required": ["city", "days"],
    },
}
ANSWERS: dict[str, list[Any]] = {
    "city": ["Paris, France", "Paris"],
    "days": [3],
    "threshold": [2.0, ""],
    "unit": ["celsius"],
    "fields": [["Wind speed", "rain"], ""],
    "window": [[1, 2], ""],
    "filters": [{"kind": ["storm"], "max": ["", 5]}, ""],
    "stops": [[{"name": ["Lyon"]}, {"name": ["Nice"]}], ""],
    "extra": ["", "x"],
}
RIGHT = {"city": "Paris, France", "days": 3, "unit": "celsius"}


def verdict(**arguments: Any) -> str:
    return check_call(WEATHER, ANSWERS, "weather.get", arguments).kind


def request(functions: list[dict[str, Any]] | None = None) -> Request:
    return Request(
        id="simple_python_0",
        category="simple",
        query="weather in Paris",
        functions=tuple(functions or [WEATHER]),
        expected="weather.get",
        answers=ANSWERS,
    )


# --- the AST rules ------------------------------------------------------------------------------------


def test_strings_are_compared_after_bfcls_standardisation() -> None:
    assert standardize("Washington, D.C.") == standardize("washington dc") == "washingtondc"
    assert standardize("April 1, 2024") == standardize("april 1 2024")
    assert verdict(**{**RIGHT, "city": "PARIS, france"}) == "right"
    assert verdict(**{**RIGHT, "city": "paris"}) == "right"
    assert verdict(**{**RIGHT, "city": "Paris, Texas"}) == "wrong value"


def test_the_right_call_passes_and_optional_parameters_with_an_empty_answer_may_be_left_out() -> None:
    assert verdict(**RIGHT) == "right"
    full = {
        **RIGHT,
        "threshold": 2.0,
        "fields": ["wind-speed", "Rain"],
        "window": [1, 2],
        "filters": {"kind": "Storm"},
        "stops": [{"name": "lyon"}, {"name": "Nice"}],
        "extra": "X",
    }
    assert verdict(**full) == "right"


def test_an_optional_parameter_whose_answers_lack_the_empty_string_must_be_given() -> None:
    assert verdict(city="Paris", days=3) == "missing optional"


def test_the_function_name_and_the_required_parameters_must_match() -> None:
    assert check_call(WEATHER, ANSWERS, "weather.forecast", RIGHT).kind == "wrong function"
    assert verdict(city="Paris", unit="celsius") == "missing required"


def test_a_parameter_the_function_does_not_declare_or_the_answers_do_not_list_is_wrong() -> None:
    assert verdict(**RIGHT, country="France") == "unexpected parameter"
    answers = {k: v for k, v in ANSWERS.items() if k != "extra"}
    assert check_call(WEATHER, answers, "weather.get", {**RIGHT, "extra": "x"}).kind == "unexpected parameter"


def test_types_are_strict_except_an_int_for_a_float() -> None:
    assert verdict(**RIGHT, threshold=2) == "right"
    assert verdict(**{**RIGHT, "days": 3.0}) == "wrong type"
    assert verdict(**{**RIGHT, "days": True}) == "wrong type"
    assert verdict(**{**RIGHT, "days": "3"}) == "wrong type"
    assert verdict(**RIGHT, fields="wind speed") == "wrong type"
    assert verdict(**RIGHT, fields=["wind", 3]) == "wrong type"


def test_a_value_of_the_possible_answers_own_type_is_compared_as_it_is() -> None:
    answers = {**ANSWERS, "days": ["$days"]}  # BFCL's "variable": a string where an integer is declared
    assert check_call(WEATHER, answers, "weather.get", {**RIGHT, "days": "$days"}).kind == "right"
    assert check_call(WEATHER, answers, "weather.get", {**RIGHT, "days": "$DAYS"}).kind == "wrong value"


def test_lists_compare_element_by_element_in_order() -> None:
    assert verdict(**RIGHT, fields=["rain", "wind speed"]) == "wrong value"
    assert verdict(**RIGHT, fields=["wind speed"]) == "wrong value"
    assert verdict(**RIGHT, window=[1, 2, 3]) == "wrong value"


def test_objects_compare_key_by_key() -> None:
    assert verdict(**RIGHT, filters={"kind": "storm", "max": 5}) == "right"
    assert verdict(**RIGHT, filters={"kind": "storm", "max": 6}) == "wrong value"
    assert verdict(**RIGHT, filters={"max": 5}) == "wrong value"  # "kind" has no "" among its answers
    assert verdict(**RIGHT, filters={"kind": "storm", "min": 1}) == "wrong value"


def test_lists_of_objects_compare_object_by_object() -> None:
    assert verdict(**RIGHT, stops=[{"name": "Nice"}, {"name": "Lyon"}]) == "wrong value"
    assert verdict(**RIGHT, stops=[{"name": "Lyon"}]) == "wrong value"


def test_a_run_is_right_with_exactly_one_call_and_the_first_call_is_judged_apart() -> None:
    r = request()
    assert score_run(r, []).verdict.kind == "no call"
    one = score_run(r, [("weather.get", RIGHT)])
    assert one.verdict.right and one.first.right
    two = score_run(r, [("weather.get", RIGHT), ("weather.get", {"city": "Lyon", "days": 1})])
    assert two.verdict.kind == "more than one call" and two.first.right
    assert score_run(r, [("weather.get", {"city": "Lyon", "days": 3})]).verdict.kind == "wrong value"


# --- BFCL's functions as tools ------------------------------------------------------------------------


def test_bfcls_types_become_json_schema_and_undeclared_parameters_are_refused() -> None:
    schema = input_schema(WEATHER)
    props = schema["properties"]
    assert schema["type"] == "object" and schema["additionalProperties"] is False
    assert schema["required"] == ["city", "days"]
    assert props["threshold"]["type"] == "number"
    assert props["window"] == {"type": "array", "items": {"type": "integer"}}
    assert props["filters"]["type"] == "object" and props["filters"]["properties"]["max"] == {
        "type": "integer"
    }
    assert "type" not in props["extra"]
    assert props["unit"]["enum"] == ["celsius", "fahrenheit"] and props["unit"]["default"] == "fahrenheit"
    validator = Draft202012Validator(schema)
    assert validator.is_valid({**RIGHT, "threshold": 2, "window": [1, 2], "extra": {"any": 1}})
    assert not validator.is_valid({**RIGHT, "country": "France"})


def test_the_flawless_call_passes_the_scorer_and_the_schema() -> None:
    r = request()
    call = ideal_call(r)
    assert call == {
        "city": "Paris, France",
        "days": 3,
        "threshold": 2.0,
        "unit": "celsius",
        "fields": ["Wind speed", "rain"],
        "window": [1, 2],
        "filters": {"kind": "storm"},
        "stops": [{"name": "Lyon"}, {"name": "Nice"}],
    }
    assert score_run(r, [("weather.get", call)]).verdict.right
    assert unreachable(r) == []
    params = WEATHER["parameters"]
    missing = {
        **WEATHER,
        "parameters": {
            **params,
            "properties": {**params["properties"], "country": {"type": "string"}},
            "required": ["city", "days", "country"],
        },
    }
    assert unreachable(request([missing])) == ["'country' is a required property"]


def test_the_tools_record_each_call_and_answer_with_a_small_object() -> None:
    log: list[tuple[str, dict[str, Any]]] = []
    other = {"name": "news", "description": "", "parameters": {"type": "dict", "properties": {}}}
    tools = bfcl.make_tools(request([WEATHER, other]), log)
    assert [t.name for t in tools] == ["weather.get", "news"]
    assert tools[0].fn(city="Paris", days=3) == {"status": "done", "function": "weather.get"}
    assert log == [("weather.get", {"city": "Paris", "days": 3})]


# --- the files and the sample -------------------------------------------------------------------------


def _write(folder: Path, name: str, rows: list[dict[str, Any]]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def _data(tmp_path: Path, per_category: int) -> Path:
    for category, name in CATEGORIES.items():
        questions, answers = [], []
        for i in range(per_category):
            turn = [{"role": "user", "content": f"{category} question {i}"}]
            if i == 0:
                turn.insert(0, {"role": "system", "content": "Today is 2024-02-21."})
            questions.append({"id": f"{category}_{i}", "question": [turn], "function": [WEATHER]})
            answers.append({"id": f"{category}_{i}", "ground_truth": [{"weather.get": ANSWERS}]})
        _write(tmp_path, name, questions)
        _write(tmp_path / "possible_answer", name, answers)
    return tmp_path


def test_the_files_are_read_with_a_system_message_before_the_users(tmp_path: Path) -> None:
    requests = load_requests(_data(tmp_path, 3))
    assert [r.id for r in requests[:3]] == ["simple_0", "simple_1", "simple_2"]
    assert requests[0].query == "Today is 2024-02-21.\n\nsimple question 0"
    assert requests[1].query == "simple question 1"
    assert requests[0].expected == "weather.get" and requests[0].answers == ANSWERS


def test_missing_data_says_where_to_get_it(tmp_path: Path) -> None:
    with pytest.raises(SystemExit, match="git clone https://github.com/ShishirPatil/gorilla"):
        load_requests(tmp_path)


def test_the_sample_is_fixed_per_category_and_spread_through_each_file(tmp_path: Path) -> None:
    requests = load_requests(_data(tmp_path, 100))
    sample = fixed_sample(requests)
    assert [r.id for r in fixed_sample(requests)] == [r.id for r in sample]
    by_category = {c: [r.id for r in sample if r.category == c] for c in CATEGORIES}
    assert {c: len(ids) for c, ids in by_category.items()} == {
        "simple": 60,
        "multiple": 50,
        "live_simple": 50,
    }
    assert by_category["multiple"][:3] == ["multiple_1", "multiple_3", "multiple_5"]
    assert by_category["multiple"][-1] == "multiple_99"
    assert len(fixed_sample(load_requests(_data(tmp_path / "small", 4)))) == 12  # all of a short file
