"""The local-model benchmark's pure parts, without the model: the tasks, how runs are judged, the given
plan, crash accounting by the child supervisor, and the report's targets.

The benchmark itself (`python benchmarks/local_model.py`) needs llama-cpp-python and minutes; what is
asserted here is that its verdicts are the ones a reader would reach, and that a child process dying
by SIGSEGV, hanging or exiting costs one task and never the harness.
"""

from __future__ import annotations

import json
import signal
import sys
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from benchmarks import local_model
from benchmarks.local_holdout import HOLDOUT, HOLDOUT_2, HOLDOUT_3, HOLDOUT_4
from benchmarks.local_implied import IMPLIED_BY_ID
from benchmarks.local_model import (
    RESULT_PREFIX,
    Summary,
    describe_exit,
    given_warning,
    harness_tools,
    summarize,
    summary_line,
    summary_table,
    supervise,
)
from benchmarks.local_tasks import (
    MAIN_JOB,
    TASKS,
    TASKS_BY_ID,
    Call,
    MadeCall,
    Outcome,
    RunRecord,
    Says,
    Task,
    answer_right,
    call_matches,
    calls_right,
    crashed,
    given_plan,
    invalid_calls,
    mentions,
    plan_tools,
    query_clauses,
    score,
)
from pes_agent.llm.plans import parse_plan

TOOLS = {spec.name: spec for spec in harness_tools([])}
SCHEMAS = {name: spec.input_schema for name, spec in TOOLS.items()}
DEMO_TOOLS = {"calculator", "word_count", "transform_text"}


def _leaves(value: Any) -> list[Any]:
    if isinstance(value, Mapping):
        return [leaf for v in value.values() for leaf in _leaves(v)]
    if isinstance(value, list):
        return [leaf for v in value for leaf in _leaves(v)]
    return [value]


def _outputs(task: Task) -> list[Any]:
    """The expected calls run on the real tool functions, in order."""
    return [TOOLS[call.tool].fn(**call.args) for call in task.calls]


# --- the tasks ---------------------------------------------------------------------------------------


def test_the_task_set_is_large_varied_and_keeps_the_readme_job() -> None:
    assert len(TASKS) >= 20
    assert len({t.id for t in TASKS}) == len(TASKS)
    assert TASKS[0].query == MAIN_JOB
    beyond_demo = {t.domain for t in TASKS if {c.tool for c in t.calls} - DEMO_TOOLS}
    assert len(beyond_demo) >= 3, beyond_demo
    assert any({c.tool for c in t.calls} <= DEMO_TOOLS for t in TASKS[1:])
    assert {t.domain for t in TASKS[:4]} == {"text", "units", "lookup", "dates"}  # --tasks 4 covers all


def test_the_held_out_sets_share_no_query_and_no_id_with_the_tuned_set() -> None:
    for held in (HOLDOUT, HOLDOUT_2, HOLDOUT_3, HOLDOUT_4):
        assert len(held) >= 12
        assert not {t.id for t in held} & {t.id for t in TASKS}
        assert not {t.query for t in held} & {t.query for t in TASKS}
        assert {t.domain for t in held} == {"text", "units", "lookup", "dates"}
    assert len({t.id for t in HOLDOUT + HOLDOUT_2 + HOLDOUT_3 + HOLDOUT_4}) == len(
        HOLDOUT + HOLDOUT_2 + HOLDOUT_3 + HOLDOUT_4
    )


@pytest.mark.parametrize("task", TASKS + HOLDOUT + HOLDOUT_2 + HOLDOUT_3 + HOLDOUT_4, ids=lambda t: t.id)
def test_each_task_is_consistent_with_its_tools(task: Task) -> None:
    assert 2 <= len(task.calls) <= 3
    assert len(query_clauses(task.query)) == len(task.calls), "one `, then` clause per call"
    for call in task.calls:
        assert not list(Draft202012Validator(SCHEMAS[call.tool]).iter_errors(dict(call.args))), call
        assert call_matches(call, call.tool, call.args), call
    outputs = _outputs(task)
    plain_answer = " ".join(str(leaf) for output in outputs for leaf in _leaves(output))
    assert answer_right(task, plain_answer), (plain_answer, task.answer)


@pytest.mark.parametrize(
    "task", [t for t in TASKS + HOLDOUT + HOLDOUT_2 + HOLDOUT_3 + HOLDOUT_4 if t.chained], ids=lambda t: t.id
)
def test_a_later_call_needs_an_earlier_output(task: Task) -> None:
    outputs = _outputs(task)

    def uses_earlier(i: int) -> bool:
        earlier = [leaf for output in outputs[:i] for leaf in _leaves(output)]
        for value in task.calls[i].args.values():
            for leaf in earlier:
                if isinstance(leaf, str) and value == leaf:
                    return True
                if isinstance(leaf, (int, float)) and str(leaf).removesuffix(".0") in str(value):
                    return True
        return False

    assert any(uses_earlier(i) for i in range(1, len(task.calls))), (task.id, outputs)


IMPLIED_TOOLS = {spec.name: spec for spec in harness_tools([], implied=True)}


def test_the_implied_sets_tools_have_one_name_each() -> None:
    names = [spec.name for spec in harness_tools([], implied=True)]
    assert len(names) == len(set(names))


@pytest.mark.parametrize("task", IMPLIED_BY_ID.values(), ids=lambda t: t.id)
def test_each_implied_task_is_achievable_with_its_tools_as_declared(task: Task) -> None:
    outputs = []
    for call in task.calls:
        schema = IMPLIED_TOOLS[call.tool].input_schema
        assert not list(Draft202012Validator(schema).iter_errors(dict(call.args))), call
        assert call_matches(call, call.tool, call.args), call
        outputs.append(IMPLIED_TOOLS[call.tool].fn(**call.args))
    plain_answer = " ".join(str(leaf) for output in outputs for leaf in _leaves(output))
    assert answer_right(task, plain_answer), (plain_answer, task.answer)


# --- judging calls -----------------------------------------------------------------------------------


def test_arithmetic_is_judged_by_value_and_rounded_values_pass_within_tolerance() -> None:
    times = Call("calculator", {"expression": "42 * 3"})
    assert call_matches(times, "calculator", {"expression": "42*3"})
    assert call_matches(times, "calculator", {"expression": "126"})
    assert not call_matches(times, "calculator", {"expression": "42 + 3"})
    assert not call_matches(times, "calculator", {"expression": "forty two"})
    assert not call_matches(times, "word_count", {"expression": "126"})
    doubled = Call("calculator", {"expression": "3.11 * 2"})
    assert call_matches(doubled, "calculator", {"expression": "3.10686 * 2"})
    population = Call("calculator", {"expression": "124.5 * 2"})
    assert not call_matches(population, "calculator", {"expression": "125 * 2"})


def test_a_flag_is_judged_as_a_flag() -> None:
    express = Call("order_supplies", {"sku": "BK-4410", "gift_wrap": True})
    assert call_matches(express, "order_supplies", {"sku": "BK-4410", "gift_wrap": True})
    assert not call_matches(express, "order_supplies", {"sku": "BK-4410", "gift_wrap": False})
    assert not call_matches(express, "order_supplies", {"sku": "BK-4410", "gift_wrap": "True"})
    assert not call_matches(express, "order_supplies", {"sku": "BK-4410", "gift_wrap": 1})


def test_texts_are_trimmed_enums_exact_dates_either_order() -> None:
    upper = Call("transform_text", {"text": "desserts", "mode": "upper"})
    assert call_matches(upper, "transform_text", {"text": " 'desserts.' ", "mode": "upper"})
    assert not call_matches(upper, "transform_text", {"text": "Desserts", "mode": "upper"})
    assert not call_matches(upper, "transform_text", {"text": "desserts", "mode": "lower"})
    assert not call_matches(upper, "transform_text", {"text": "desserts"})
    convert = Call("convert_units", {"value": 5, "from_unit": "kilometers", "to_unit": "miles"})
    km_mi = {"from_unit": "kilometers", "to_unit": "miles"}
    mi_km = {"from_unit": "miles", "to_unit": "kilometers"}
    assert call_matches(convert, "convert_units", {"value": 5.0, **km_mi})
    assert not call_matches(convert, "convert_units", {"value": 5, **mi_km})
    assert not call_matches(convert, "convert_units", {"value": "5", **km_mi})
    between = Call("days_between", {"start": "2025-03-01", "end": "2025-04-15"})
    assert call_matches(between, "days_between", {"start": "2025-04-15", "end": "2025-03-01"})
    assert not call_matches(between, "days_between", {"start": "2025-03-01", "end": "2025-04-16"})


def test_a_written_out_list_matches_in_any_order_and_only_with_the_same_items() -> None:
    bins = Call("collection_schedule", {"postcode": "4021", "bins": ["paper", "glass", "plastic"]})
    assert call_matches(
        bins, "collection_schedule", {"postcode": "4021", "bins": ["glass", "plastic", "paper"]}
    )
    assert not call_matches(bins, "collection_schedule", {"postcode": "4021", "bins": ["paper", "glass"]})
    assert not call_matches(
        bins, "collection_schedule", {"postcode": "4021", "bins": "paper, glass, plastic"}
    )


def test_calls_are_right_only_when_exactly_the_expected_ones_in_order() -> None:
    task = TASKS_BY_ID["u01"]
    convert = ("convert_units", {"value": 5, "from_unit": "kilometers", "to_unit": "miles"})
    double = ("calculator", {"expression": "3.11 * 2"})
    assert calls_right(task, [convert, double]) == (True, 2)
    assert calls_right(task, [double, convert]) == (False, 1)
    assert calls_right(task, [convert, double, double]) == (False, 2)
    assert calls_right(task, [convert]) == (False, 1)
    assert calls_right(task, []) == (False, 0)


# --- judging the answer ------------------------------------------------------------------------------


def test_numbers_are_found_as_tokens_rounded_or_as_words() -> None:
    assert mentions("12 * 7 is 84 and the text has 4 words.", Says(4))
    assert not mentions("12 * 7 is 84.", Says(4))
    assert not mentions("It is 184.", Says(84))
    assert mentions("The text has four words.", Says(4))
    assert mentions("That is 1,080 hours.", Says(1080))
    assert mentions("It is 37.8 degrees.", Says(37.78))
    assert not mentions("It is 38 degrees.", Says(37.78))
    assert mentions("About 1640 feet each.", Says(1640.42))
    assert mentions("It costs $117.50.", Says(117.5))
    assert not mentions("On 2025-03-15.", Says(-3))
    assert mentions("It is -5 now.", Says(-5))


def test_texts_names_and_dates_are_found_as_a_reader_would() -> None:
    assert mentions("The result is DESSERTS.", Says("DESSERTS", "text"))
    assert not mentions("The result is desserts.", Says("DESSERTS", "text"))
    assert mentions("It is a friday.", Says("Friday", "name"))
    assert not mentions("It is Fridays.", Says("Friday", "name"))
    assert mentions("The date is 2026-01-01.", Says("2026-01-01", "date"))
    assert mentions("That is March 15, 2025.", Says("2025-03-15", "date"))
    assert mentions("That is 15 Mar 2025.", Says("2025-03-15", "date"))
    assert not mentions("That is 2025-03-16.", Says("2025-03-15", "date"))
    main_job = TASKS_BY_ID["t01"]
    assert answer_right(main_job, "12 * 7 = 84; 'the answer is 84' has 4 words.")
    assert not answer_right(main_job, "12 * 7 = 84.")


# --- plans, invalid calls, a whole run -------------------------------------------------------------


def test_plan_tools_read_both_spellings() -> None:
    todo = [{"required_tools": ["calculator"]}, {"requiredTools": ["word_count", "calculator"]}, {}]
    assert plan_tools(todo) == ["calculator", "word_count", "calculator"]


def test_invalid_calls_are_those_failing_the_tool_schema() -> None:
    executed: Sequence[tuple[str, Mapping[str, Any]]] = [
        ("weekday", {"date": "2025-12-25"}),
        ("weekday", {"date": "\\d\\d\\d\\d-\\d-\\d-\\d-\\d"}),
        ("convert_units", {"value": 5, "from_unit": "km", "to_unit": "miles"}),
        ("add_days", {"date": "2025-01-01"}),
        ("country_facts", {"country": "Japan"}),
        ("teleport", {}),
    ]
    invalid = invalid_calls(executed, SCHEMAS)
    assert len(invalid) == 4, invalid
    assert invalid[0].startswith("weekday(") and "does not match" in invalid[0]
    assert "'km' is not one of" in invalid[1]
    assert "'days' is a required property" in invalid[2]
    assert invalid[3] == "teleport: not a known tool"


def _record(calls: Sequence[MadeCall], status: str, answer: str, plan: Sequence[str] | None) -> RunRecord:
    todo = None if plan is None else [{"required_tools": [tool]} for tool in plan]
    executed = [(c.tool, c.args) for c in calls if c.status == "success"]
    return RunRecord(
        setting="plans",
        todo_list=todo,
        calls=calls,
        executed=executed,
        status=status,
        answer=answer,
        seconds=1.5,
        model_calls=3,
    )


def test_a_run_is_scored_on_calls_answer_plan_and_honesty() -> None:
    task = TASKS_BY_ID["t01"]
    calc = MadeCall(tool="calculator", args={"expression": "12*7"}, status="success")
    words = MadeCall(tool="word_count", args={"text": "'the answer is 84'"}, status="success")
    bad = MadeCall(tool="word_count", args={"txt": "x"}, status="error")
    planned = ["calculator", "word_count"]
    good = score(task, _record([calc, bad, words], "success", "84, and 4 words", planned), SCHEMAS)
    assert (good.right, good.plan_right, good.dishonest, good.failed_calls) == (True, True, False, 1)
    assert good.failed == ['word_count({"txt": "x"}): error']  # what the gate refused, to read later
    assert good.invalid_executed == []

    silent = score(task, _record([calc, words], "success", "Done.", ["word_count", "calculator"]), SCHEMAS)
    assert silent.calls_right and not silent.answer_right and not silent.right
    assert not silent.plan_right and silent.dishonest

    failed = score(task, _record([], "error:unparseable_plan", "", None), SCHEMAS)
    assert failed.plan is None and not failed.plan_right and not failed.dishonest


def test_the_given_plan_is_the_standard_plan_json_with_one_chained_step_per_call() -> None:
    for task in TASKS + HOLDOUT + HOLDOUT_2 + HOLDOUT_3 + HOLDOUT_4:
        parsed = parse_plan(given_plan(task))
        assert [tool for item in parsed.items for tool in item.required_tools] == [c.tool for c in task.calls]
        assert [list(item.dependencies) for item in parsed.items][1:] == [
            [item.id] for item in parsed.items[:-1]
        ]
        assert all(item.step_type == "tool" and item.description for item in parsed.items)
    plan = json.loads(given_plan(TASKS_BY_ID["t01"]))
    assert set(plan) == {"title", "intent", "plan", "todoList"}
    descriptions = [s["description"] for s in plan["todoList"]]
    assert descriptions == ["Compute 12 * 7", "Count the words in 'the answer is 84'"]


def test_the_harness_tools_record_every_call_that_reaches_a_function() -> None:
    log: list[tuple[str, Mapping[str, Any]]] = []
    tools = {spec.name: spec for spec in harness_tools(log)}
    own = {"convert_units", "country_facts", "product_price", "days_between", "add_days", "weekday"}
    assert set(tools) == DEMO_TOOLS | own
    assert tools["add_days"].fn(date="2025-02-01", days=42) == {"date": "2025-03-15"}
    assert tools["calculator"].fn(expression="12 * 7") == 84
    assert log == [("add_days", {"date": "2025-02-01", "days": 42}), ("calculator", {"expression": "12 * 7"})]


# --- crash accounting: a child per setting, a fresh one after each death ----------------------------

FAKE_CHILD = r"""
import json, os, signal, sys, time
ids, mode, on = sys.argv[1].split(","), sys.argv[2], sys.argv[3]
print("llama.cpp chatter on stdout", flush=True)
for task_id in ids:
    if task_id == on and mode == "segv":
        os.kill(os.getpid(), signal.SIGSEGV)
    if task_id == on and mode == "hang":
        time.sleep(60)
    if task_id == on and mode == "exit":
        sys.exit(3)
    print(PREFIX + json.dumps({"task": task_id, "pid": os.getpid()}), flush=True)
""".replace("PREFIX", repr(RESULT_PREFIX))


def _supervised(
    mode: str, on: str, ids: Sequence[str], timeout_s: float = 30.0
) -> tuple[list[Any], list[list[str]]]:
    """Results of `supervise` over the fake child, and the task ids each child was launched with."""
    launched: list[list[str]] = []

    def launch(remaining: Sequence[str]) -> list[str]:
        launched.append(list(remaining))
        return [sys.executable, "-c", FAKE_CHILD, ",".join(remaining), mode, on]

    return list(supervise(ids, launch, timeout_s=timeout_s)), launched


def test_a_child_killed_by_sigsegv_costs_its_task_and_a_fresh_child_continues() -> None:
    results, launched = _supervised("segv", "b", ["a", "b", "c", "d"])
    assert [r[0] for r in results] == ["a", "b", "c", "d"]
    assert results[1][1] == "killed by SIGSEGV"
    assert [r[1]["task"] for r in (results[0], results[2], results[3])] == ["a", "c", "d"]
    assert results[0][1]["pid"] != results[2][1]["pid"] == results[3][1]["pid"]
    assert launched == [["a", "b", "c", "d"], ["c", "d"]]


def test_a_hung_child_is_killed_after_the_timeout_and_an_exiting_one_is_reported() -> None:
    results, launched = _supervised("hang", "a", ["a", "b"], timeout_s=1.0)
    assert results[0][:2] == ("a", "no result within 1 s") and results[0][2] < 30
    assert results[1][1]["task"] == "b" and launched == [["a", "b"], ["b"]]
    results, _ = _supervised("exit", "c", ["a", "b", "c"])
    shown = [r[1] if isinstance(r[1], str) else r[1]["task"] for r in results]
    assert shown == ["a", "b", "exited with status 3"]
    assert describe_exit(-signal.SIGSEGV) == "killed by SIGSEGV"
    assert describe_exit(0) == "exited with status 0"


# --- the report --------------------------------------------------------------------------------------


def _outcome(
    task: str, setting: str, *, right: bool, seconds: float = 2.0, status: str = "success"
) -> Outcome:
    tools = [c.tool for c in TASKS_BY_ID[task].calls]
    return Outcome(
        task=task,
        setting=setting,
        plan=tools,
        plan_right=True,
        calls_right=right,
        calls_matched=len(tools) if right else 0,
        answer_right=right,
        right=right,
        made=[],
        failed_calls=0,
        invalid_executed=[],
        status=status,
        dishonest=status == "success" and not right,
        seconds=seconds,
        model_calls=3,
        answer="",
    )


def test_crashes_count_against_a_setting_and_are_left_out_of_the_mean_wall() -> None:
    outcomes = [
        _outcome("t01", "plans", right=True, seconds=4.0),
        crashed("u01", "plans", "killed by SIGSEGV", 0.5),
        _outcome("l01", "plans", right=False, seconds=6.0),
        _outcome("d01", "plans", right=True, seconds=5.0, status="error:x"),
    ]
    summary = summarize("plans", outcomes)
    assert summary == Summary(
        setting="plans",
        runs=4,
        plans_right=3,
        fully_right=2,
        invalid_executed=0,
        crashes=1,
        dishonest=1,
        mean_wall_s=5.0,
        mean_cpu_s=0.0,
        calls_matched=4,
        calls_expected=8,
    )
    line = summary_line(summary)
    assert "right tools in plans 3/4 (75%) (target >= 80 %): MISS" in line
    assert "fully right 2/4 (50%) (target >= 60 %): MISS" in line
    assert "invalid calls executed 0 (target 0);" in line and "crashes 1 (target 0): MISS" in line
    assert "dishonest status 1 (target 0): MISS" in line and line.endswith("5.0 s (target <= 8 s)")
    table = summary_table([summary])
    assert "crashes                 0        1  MISS" in table


def test_a_report_is_saved_as_json_and_markdown(tmp_path: Path) -> None:
    outcomes = [_outcome("t01", "plans", right=True), _outcome("t01", "given", right=False)]
    outcomes[1] = replace(outcomes[1], plan=[], plan_right=False)  # the product ignored the given plan
    run = {
        "date": "2026-11-25 10:00:00 UTC",
        "stamp": "20261125T100000Z",
        "machine": local_model.machine(),
        "model": "m.gguf",
        "decoding": "constrained decoding",
        "settings": ["plans", "given"],
    }
    tasks = [TASKS_BY_ID["t01"]]
    text = local_model.report(run, tasks, outcomes)
    assert "SUMMARY plans:" in text and "SUMMARY given:" in text
    assert given_warning(outcomes)
    assert "WARNING given: the product did not run the given plan in 1 of 1" in text
    json_path, md_path = local_model.save(run, outcomes, text, tasks, tmp_path, "baseline")
    assert json_path.name == "local_model-20261125T100000Z-baseline.json"
    saved = json.loads(json_path.read_text(encoding="utf-8"))
    assert saved["machine"]["cpus"] and [o["setting"] for o in saved["outcomes"]] == ["plans", "given"]
    assert saved["summary"][0]["fully_right"] == 1
    assert "### t01 · given · wrong" in md_path.read_text(encoding="utf-8")


def test_unknown_settings_are_refused() -> None:
    with pytest.raises(SystemExit, match="unknown"):
        local_model._options(local_model._parser().parse_args(["--settings", "plans,guess"]))


def test_the_first_option_check_runs_tasks_without_a_model(tmp_path: Path) -> None:
    """``--first-option``: whole runs in this process, every grammar's first option taken; the
    README job's plan comes out right with no model at all (its arithmetic is a composition, whose
    first option is no expression)."""
    code = local_model.main(
        ["--first-option", "--set", "dev", "--tasks", "1", "--settings", "plans", "--out-dir", str(tmp_path)]
    )
    saved = json.loads(next(tmp_path.glob("*.json")).read_text(encoding="utf-8"))
    assert code == 0 and saved["model"] == "none: the first option of every grammar"
    (outcome,) = saved["outcomes"]
    assert outcome["plan_right"] and outcome["crash"] is None
