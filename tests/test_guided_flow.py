"""Which earlier values and which of the request's values an argument is offered: what a user sees
as the right value reaching the right argument."""

from __future__ import annotations

from typing import Any

from pes_agent.guided.arguments import EarlierResult, guided_arguments_schema


def _options(schema: dict[str, Any], name: str) -> list[Any]:
    prop = schema["properties"][name]
    if "enum" in prop:
        return list(prop["enum"])
    return [o for alt in prop.get("anyOf", []) for o in alt.get("enum", [])]


def test_a_word_of_the_tool_s_name_does_not_name_an_earlier_result() -> None:
    station = EarlierResult(
        step_id="s1",
        description="look up the station York",
        output={"station_id": "ST-9", "trainTypes": "regional"},
        text="",
    )
    schema = {"type": "object", "properties": {"station": {"type": "string"}}, "required": ["station"]}
    part = "show the train timetable for that station"
    got = guided_arguments_schema(schema, part, part, [station], tool_names=("TrainTimetable",))
    assert "ST-9" in _options(got, "station")


def test_a_lookup_made_beside_this_one_for_the_same_part_gives_it_nothing() -> None:
    part = "Find buses from Ashby to Crewe on 3 June 2026"
    first = EarlierResult(
        step_id="s1",
        description=part,
        output={"stop_id": "BS-1"},
        text="",
        direct=False,
        inputs={"name": "Ashby"},
    )
    schema = {
        "type": "object",
        "properties": {"name": {"type": "string", "description": "Name of the town"}},
        "required": ["name"],
    }
    got = _options(guided_arguments_schema(schema, part, part, [first]), "name")
    assert got[0] == "Crewe"
    assert "BS-1" not in got


def test_a_name_or_place_is_offered_no_date() -> None:
    schema = {
        "type": "object",
        "properties": {"town": {"type": "string", "description": "Name of the town"}},
        "required": ["town"],
    }
    part = "What will the weather be in Lyon on 12 May 2026?"
    got = _options(guided_arguments_schema(schema, part, part, []), "town")
    assert "Lyon" in got
    assert not {"12 May 2026", "2026-05-12"} & set(got)


def test_an_argument_about_when_still_takes_a_date() -> None:
    schema = {
        "type": "object",
        "properties": {"when": {"type": "string", "description": "Day of the appointment"}},
        "required": ["when"],
    }
    part = "Book the vet in Lyon on 12 May 2026"
    assert "12 May 2026" in _options(guided_arguments_schema(schema, part, part, []), "when")
