"""The NESTFUL benchmark's harness without the model: the vendored data, the spec-to-tool converter,
the fake executors' tokens, the scorer, the stratified sample, crash accounting, and a whole run of
the agent on a scripted provider.

The benchmark itself (`python benchmarks/nestful.py`) needs llama-cpp-python and an hour; what is
asserted here is that a flawless sequence scores 1.0 on every one of the 300 requests, that a wrong
reference costs the full sequence, and that a child dying by SIGSEGV or hanging costs one request.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from benchmarks import nestful
from benchmarks.local_model import RESULT_PREFIX
from benchmarks.nestful import (
    Executed,
    GoldCall,
    References,
    Request,
    fake_output,
    load_requests,
    load_specs,
    make_tools,
    perfect_run,
    renumber,
    run_request,
    score_calls,
    stratified_sample,
    text_token,
)
from pes_agent.testing import ScriptedProvider

REQUESTS = load_requests()
BY_ID = {r.id: r for r in REQUESTS}
SPECS = {source: load_specs(source) for source in nestful.SOURCES}


def _score(request: Request, executed: list[Executed]) -> nestful.Score:
    score, _ = score_calls(renumber(request.calls), executed, nestful.defaults_of(SPECS[request.source]))
    return score


# --- the data and the converter ----------------------------------------------------------------------


def test_the_vendored_data_holds_the_public_300_requests() -> None:
    assert Counter(r.source for r in REQUESTS) == {"executable": 85, "glaive": 169, "sgd": 46}
    assert len(BY_ID) == 300
    assert all(r.calls and r.query for r in REQUESTS)
    assert {s: len(v) for s, v in SPECS.items()} == {"executable": 39, "glaive": 64, "sgd": 30}
    assert (nestful.DATA_DIR / "LICENSE").is_file() and "053cbde" in (nestful.DATA_DIR / "NOTICE").read_text()


def test_every_spec_becomes_a_tool_with_valid_input_and_output_schemas() -> None:
    for _source, specs in SPECS.items():
        tools = make_tools(specs, "x", [])
        assert [t.name for t in tools] == [s["name"] for s in specs]
        for tool in tools:
            Draft202012Validator.check_schema(tool.input_schema)
            assert tool.output_schema is not None
            Draft202012Validator.check_schema(tool.output_schema)


def test_the_converter_keeps_required_enums_and_types() -> None:
    spec = {
        "name": "Buses.BuyBusTicket",
        "description": "Buy tickets",
        "arguments": {
            "origin": {"description": "Origin city", "required": True, "allowed_values": []},
            "group_size": {"required": True, "allowed_values": ["1", "2"]},
            "fare_type": {
                "required": False,
                "default_value": "Economy",
                "allowed_values": ["Economy", "Flexible"],
            },
        },
        "query_parameters": {"limit": {"type": "Number", "required": False}},
        "output_parameters": {
            "price": {"type": "number"},
            "stops": {"type": "array"},
            "ok": {"type": "Boolean"},
        },
    }
    schema = nestful.input_schema(spec)
    assert schema["required"] == ["origin", "group_size"]
    assert schema["additionalProperties"] is False
    assert schema["properties"]["origin"] == {"type": "string", "description": "Origin city"}
    assert schema["properties"]["group_size"]["enum"] == ["1", "2"]
    assert schema["properties"]["fare_type"]["default"] == "Economy"
    assert schema["properties"]["limit"]["type"] == "number"
    out = fake_output(nestful.output_schema(spec), "salt", 3, spec["name"])
    assert out["price"] == nestful.NUMBER_BASE + 3001
    assert out["stops"] == [text_token("salt", 3, spec["name"], "stops[0]")]
    assert out["ok"] is True


def test_fake_tools_record_calls_and_return_a_distinct_token_per_field() -> None:
    log: list[Executed] = []
    tools = {t.name: t for t in make_tools(SPECS["sgd"], "sgd-000", log)}
    first = tools["RentalCars.GetCarsAvailable"].fn(pickup_city="San Diego")
    second = tools["RentalCars.GetCarsAvailable"].fn(pickup_city="Boston")
    assert [c.name for c in log] == ["RentalCars.GetCarsAvailable"] * 2
    assert log[0].arguments == {"pickup_city": "San Diego"}
    leaves = [v for out in (first, second) for v in out.values()]
    assert len(set(leaves)) == len(leaves)
    assert first["pickup_location"] == text_token(
        "sgd-000", 1, "RentalCars.GetCarsAvailable", "pickup_location"
    )


# --- the scorer ---------------------------------------------------------------------------------------


def test_a_flawless_sequence_scores_one_on_every_request() -> None:
    for request in REQUESTS:
        executed, _ = perfect_run(request, SPECS[request.source])
        score = _score(request, executed)
        assert score == nestful.Score(1.0, 1.0, 1.0, True), request.id


UNREACHABLE = {"executable": 43, "glaive": 58, "sgd": 12}


def test_unreachable_requests_are_found_and_counted() -> None:
    unreachable = {r.id: perfect_run(r, SPECS[r.source])[1] for r in REQUESTS}
    unreachable = {k: v for k, v in unreachable.items() if v}
    # The specs' own gaps (a gold tool missing from the spec file, an undeclared argument or output
    # field, a value off its declared type or enum): counted so a reader knows the ceiling.
    assert Counter(k.split("-")[0] for k in unreachable) == UNREACHABLE
    assert any("no such tool" in p for v in unreachable.values() for p in v)
    assert any("names no declared output field" in p for v in unreachable.values() for p in v)


def test_gold_labels_are_renumbered_by_position_and_reused_labels_resolve_to_the_latest() -> None:
    calls = (
        GoldCall("a", {"x": 1}, "var1"),
        GoldCall("b", {"y": "$var1.out$"}, "var1"),
        GoldCall("c", {"z": "$var1.res$", "w": "id $var1.res$ and $var9.q$"}, "var3"),
    )
    assert renumber(calls)[2]["arguments"] == {"z": "$var2.res$", "w": "id $var2.res$ and $var9.q$"}


def test_a_wrong_reference_costs_the_full_sequence_but_not_the_names() -> None:
    request = BY_ID["sgd-000"]
    executed, problems = perfect_run(request, SPECS["sgd"])
    assert not problems and len(executed) == 2
    first = executed[0].output
    wrong = dict(executed[1].arguments)
    wrong["pickup_location"] = first["dropoff_date"] if "dropoff_date" in first else "San Diego"
    score = _score(request, [executed[0], Executed(executed[1].name, wrong, executed[1].output)])
    assert score.full is False and score.function_f1 == 1.0
    assert 0 < score.parameter_f1 < 1.0 and score.partial == 0.5


def test_a_reference_passed_as_a_typed_copy_or_inside_text_still_counts() -> None:
    out = {"rate": nestful.NUMBER_BASE + 1001, "name": text_token("r", 1, "t", "name"), "list": ["a"]}
    refs = References([Executed("t", {}, out)])
    assert refs.symbolic(str(nestful.NUMBER_BASE + 1001)) == "$var1.rate$"
    assert refs.symbolic(float(nestful.NUMBER_BASE + 1001)) == "$var1.rate$"
    assert refs.symbolic(f"5 * {nestful.NUMBER_BASE + 1001}") == "5 * $var1.rate$"
    assert refs.symbolic(f"id: {out['name']}") == "id: $var1.name$"
    assert refs.symbolic(out) == "$var1$"
    assert refs.symbolic(7) == 7 and refs.symbolic("Paris") == "Paris"


def test_missing_and_extra_calls_lower_recall_and_precision() -> None:
    request = BY_ID["sgd-000"]
    executed, _ = perfect_run(request, SPECS["sgd"])
    only_first = _score(request, executed[:1])
    assert only_first.function_f1 == pytest.approx(2 / 3) and only_first.full is False
    assert _score(request, []) == nestful.Score(0.0, 0.0, 0.0, False)
    extra = _score(request, [*executed, Executed("Buses.FindBus", {"from_location": "x"}, {})])
    assert extra.function_f1 == pytest.approx(0.8) and extra.full is False and extra.partial == 1.0


def test_values_compare_as_a_reader_would() -> None:
    assert nestful.normal(" San  Diego ") == nestful.normal("san diego")
    assert nestful.normal("2") == nestful.normal(2) == nestful.normal(2.0)
    assert nestful.normal(True) == nestful.normal("True")
    assert nestful.normal(["A", 1]) != nestful.normal(["A"])


# --- the sample ---------------------------------------------------------------------------------------


def test_the_stratified_sample_is_fixed_proportional_and_spread() -> None:
    sample = stratified_sample(REQUESTS, 40)
    assert Counter(r.source for r in sample) == {"executable": 11, "glaive": 23, "sgd": 6}
    assert len({r.id for r in sample}) == 40
    assert [r.id for r in stratified_sample(REQUESTS, 40)] == [r.id for r in sample]
    assert sample[0].id == "executable-003" and sample[-1].id == "sgd-042"
    assert len(stratified_sample(REQUESTS, 300)) == 300


# --- a whole run on the agent, scripted ---------------------------------------------------------------


def _plan(request: Request) -> str:
    steps = [
        {
            "id": f"step_{i}",
            "description": f"call {c.name}",
            "stepType": "tool",
            "requiredTools": [c.name],
            "dependencies": [f"step_{i - 1}"] if i > 1 else [],
        }
        for i, c in enumerate(request.calls, start=1)
    ]
    body = {"title": "t", "intent": request.query, "plan": "p", "todoList": steps}
    return f"---JSON_OUTPUT_START---\n{json.dumps(body)}\n---JSON_OUTPUT_END---"


def _call(name: str, arguments: dict[str, Any]) -> str:
    return "```json\n" + json.dumps({"toolCalls": [{"toolName": name, "arguments": arguments}]}) + "\n```"


SCRIPTED_CONFIG = {
    "storage": {"type": "memory"},
    "execution": {"closeStepOnToolSuccess": True},
    "retrieval": {"enabled": False},
}


async def _scripted(request: Request, second_arguments: dict[str, Any]) -> nestful.Outcome:
    executed, _ = perfect_run(request, SPECS[request.source])
    replies = [
        _plan(request),
        _call(executed[0].name, executed[0].arguments),
        _call(executed[1].name, second_arguments),
        "<mainContent>Done.</mainContent>",
    ]
    provider = ScriptedProvider(replies)
    outcome = await run_request(request, SCRIPTED_CONFIG, provider, provider_name="scripted")
    provider.assert_complete()
    return outcome


async def test_a_perfect_scripted_run_scores_one() -> None:
    request = BY_ID["sgd-000"]
    executed, _ = perfect_run(request, SPECS["sgd"])
    outcome = await _scripted(request, executed[1].arguments)
    assert outcome.crash is None and outcome.status == "success"
    assert (outcome.function_f1, outcome.parameter_f1, outcome.partial, outcome.full) == (1.0, 1.0, 1.0, True)
    assert [c["name"] for c in outcome.executed] == [c["name"] for c in outcome.expected]
    assert outcome.executed[1]["arguments"]["pickup_location"] == "$var1.pickup_location$"
    assert not outcome.success_while_wrong


async def test_a_scripted_run_with_a_typed_in_value_instead_of_the_reference_is_wrong() -> None:
    request = BY_ID["sgd-000"]
    executed, _ = perfect_run(request, SPECS["sgd"])
    second = {**executed[1].arguments, "pickup_location": "San Diego"}
    outcome = await _scripted(request, second)
    assert outcome.full is False and outcome.function_f1 == 1.0
    assert outcome.status == "success" and outcome.success_while_wrong
    assert json.loads(json.dumps(nestful.asdict(outcome)))["id"] == "sgd-000"


# --- crash accounting ---------------------------------------------------------------------------------


def _launcher(code: str) -> Any:
    return lambda ids: [sys.executable, "-c", code]


def test_a_child_killed_by_sigsegv_or_hanging_costs_one_request_each() -> None:
    requests = [BY_ID["sgd-000"], BY_ID["sgd-001"]]
    segv = "import os, signal; os.kill(os.getpid(), signal.SIGSEGV)"
    outcomes = nestful.run_all(requests, _launcher(segv), timeout_s=30)
    assert [o.crash for o in outcomes] == ["killed by SIGSEGV"] * 2
    assert [o.status for o in outcomes] == ["crash", "crash"] and not any(o.timed_out for o in outcomes)
    hang = "import time; time.sleep(30)"
    outcomes = nestful.run_all(requests[:1], _launcher(hang), timeout_s=0.5)
    assert outcomes[0].timed_out and outcomes[0].status == "timeout"
    summary = nestful.summarize("all", outcomes)
    assert summary.timeouts == 1 and summary.crashes == 0 and summary.mean_wall_s is None


def test_a_child_result_line_becomes_an_outcome() -> None:
    request = BY_ID["sgd-000"]
    line = nestful.crashed(request, "x", 1.0)
    payload = {**nestful.asdict(line), "crash": None, "status": "success", "seconds": 2.0}
    code = f"print({RESULT_PREFIX + json.dumps(payload)!r})"
    [outcome] = nestful.run_all([request], _launcher(code), timeout_s=30)
    assert outcome.crash is None and outcome.status == "success" and outcome.success_while_wrong


def test_the_report_table_names_every_measure() -> None:
    request = BY_ID["sgd-000"]
    outcomes = [nestful.crashed(request, "killed by SIGSEGV", 1.0)]
    table = nestful.summary_table(nestful.summaries(outcomes))
    for measure, _ in nestful.ROWS:
        assert measure in table
    assert "sgd" in table.splitlines()[0]


def test_a_second_sample_is_disjoint_from_the_first() -> None:
    args = nestful._parser().parse_args(["--sample", "40", "--after-sample", "40"])
    second, how = nestful.select(REQUESTS, args)
    first = {r.id for r in stratified_sample(REQUESTS, 40)}
    assert len(second) == 40 and not first & {r.id for r in second}
    assert Counter(r.source for r in second) == {"executable": 11, "glaive": 23, "sgd": 6}
    assert "outside the sample of 40" in how
