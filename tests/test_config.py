"""Loading ArtInstanceConfig: formats, spellings, ${VAR}, the original's shape, errors and secrets."""

from __future__ import annotations

import json
import traceback
from pathlib import Path
from typing import Any

import pytest

from pes_agent.config import (
    ArtInstanceConfig,
    ExecutionConfig,
    ProviderSelection,
    ResolvedExecution,
    ThreadConfig,
    config_from_dict,
    load_config,
    require_provider,
    resolve_execution,
)
from pes_agent.errors import ConfigError

REPO = Path(__file__).resolve().parents[1]
KEY = "sk-live-abcdef0123456789SECRET"


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def load_error(path: Path) -> ConfigError:
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    return caught.value


def dict_error(data: dict[str, Any]) -> ConfigError:
    with pytest.raises(ConfigError) as caught:
        config_from_dict(data, source="pes.yaml")
    return caught.value


def everything_about(error: BaseException) -> str:
    """All a user could see of an error: its text, attributes and full traceback with its chain."""
    return "\n".join([str(error), repr(error), repr(vars(error)), *traceback.format_exception(error)])


# --- formats and spellings ------------------------------------------------------------------------

YAML = """
providers:
  main: {adapter: openai, model: gpt-4o-mini, base_url: "http://127.0.0.1:8000/v1", temperature: 0.2}
storage: {type: memory}
execution: {max_iterations: 7, taef_max_retries: 0, tool_schema_mode: flexible}
gate: {unknown_keys: reject, fuzzy_threshold: 0.8}
arg_fill: {max_attempts: 2}
tools: ["pes_agent.demo.tools:calculator"]
"""
JSON = {
    "providers": {
        "main": {
            "adapter": "openai",
            "model": "gpt-4o-mini",
            "baseUrl": "http://127.0.0.1:8000/v1",
            "temperature": 0.2,
        }
    },
    "storage": {"type": "memory"},
    "execution": {"maxIterations": 7, "taefMaxRetries": 0, "toolSchemaMode": "flexible"},
    "gate": {"unknownKeys": "reject", "fuzzyThreshold": 0.8},
    "argFill": {"maxAttempts": 2},
    "tools": ["pes_agent.demo.tools:calculator"],
}
TOML = """
tools = ["pes_agent.demo.tools:calculator"]
[providers.main]
adapter = "openai"
model = "gpt-4o-mini"
baseURL = "http://127.0.0.1:8000/v1"
temperature = 0.2
[storage]
type = "memory"
[execution]
maxIterations = 7
taef_max_retries = 0
toolSchemaMode = "flexible"
[gate]
unknownKeys = "reject"
fuzzy_threshold = 0.8
[arg_fill]
maxAttempts = 2
"""


def test_json_yaml_and_toml_in_either_spelling_give_the_same_config(tmp_path: Path) -> None:
    from_yaml = load_config(write(tmp_path, "a.yaml", YAML))
    from_json = load_config(write(tmp_path, "a.json", json.dumps(JSON)))
    from_toml = load_config(write(tmp_path, "a.toml", TOML))
    from_yml = load_config(write(tmp_path, "a.yml", YAML))

    assert from_yaml == from_json == from_toml == from_yml
    assert from_yaml.providers["main"].base_url == "http://127.0.0.1:8000/v1"
    assert from_yaml.execution.max_iterations == 7
    assert from_yaml.execution.taef_max_retries == 0
    assert from_yaml.gate.unknown_keys == "reject"
    assert from_yaml.arg_fill.max_attempts == 2


def test_thread_defaults_accept_both_spellings() -> None:
    camel = config_from_dict(
        {
            "threadDefaults": {
                "providerConfig": {"providerName": "x", "modelId": "m"},
                "historyLimit": 3,
                "execution": {"maxIterations": 2},
            }
        }
    )
    snake = config_from_dict(
        {
            "thread_defaults": {
                "provider_config": {"provider_name": "x", "model_id": "m"},
                "history_limit": 3,
                "execution": {"max_iterations": 2},
            }
        }
    )
    assert camel == snake
    assert camel.thread_defaults is not None and camel.thread_defaults.provider_config is not None
    assert camel.thread_defaults.provider_config.model_id == "m"


def test_unknown_extension_and_missing_file_are_config_errors(tmp_path: Path) -> None:
    error = load_error(write(tmp_path, "pes.ini", "[x]"))
    assert "'.ini'" in str(error) and ".yaml" in str(error) and "pes.ini" in str(error)

    missing = tmp_path / "nowhere" / "pes.yaml"
    error = load_error(missing)
    assert str(missing) in str(error) and "not found" in str(error)


def test_syntax_errors_name_the_file_and_position(tmp_path: Path) -> None:
    error = load_error(write(tmp_path, "bad.json", '{"storage": {"type": "memory",}}'))
    assert "bad.json" in str(error) and "line 1" in str(error)
    error = load_error(write(tmp_path, "bad.yaml", "storage:\n  type: [memory\n"))
    assert "bad.yaml" in str(error) and "invalid YAML" in str(error)
    error = load_error(write(tmp_path, "list.yaml", "- a\n- b\n"))
    assert "top level must be a mapping" in str(error)


def test_an_empty_yaml_file_is_all_defaults(tmp_path: Path) -> None:
    assert load_config(write(tmp_path, "empty.yaml", "")) == ArtInstanceConfig()


# --- ${VAR} interpolation -------------------------------------------------------------------------


def test_env_variables_are_interpolated_with_defaults_and_escapes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PES_MODEL", "qwen2.5:7b")
    monkeypatch.setenv("PES_ITER", "9")
    monkeypatch.delenv("PES_UNSET", raising=False)
    path = write(
        tmp_path,
        "env.yaml",
        """
providers:
  main: {model: "${PES_MODEL}", base_url: "http://${PES_HOST:-127.0.0.1}:8000/v1"}
execution: {maxIterations: "${PES_ITER}"}
system_prompt: "costs $${PRICE} and ${PES_UNSET:-}"
""",
    )
    config = load_config(path)
    assert config.providers["main"].model == "qwen2.5:7b"
    assert config.providers["main"].base_url == "http://127.0.0.1:8000/v1"
    assert config.execution.max_iterations == 9
    assert config.system_prompt == "costs ${PRICE} and "


def test_missing_env_variable_names_file_key_and_variable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("PES_NO_SUCH_KEY", raising=False)
    path = write(tmp_path, "pes.yaml", "providers:\n  main:\n    model: m\n    apiKey: ${PES_NO_SUCH_KEY}\n")
    error = load_error(path)
    assert str(error).startswith(
        f"{path}: `providers.main.apiKey`: environment variable PES_NO_SUCH_KEY is not set"
    )
    assert "export PES_NO_SUCH_KEY" in str(error)
    assert error.key_path == "providers.main.apiKey" and error.value == "PES_NO_SUCH_KEY"


def test_missing_variable_in_a_prompt_hints_at_template_syntax(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("query", raising=False)
    error = dict_error({"prompts": {"planning": "Plan for ${query}"}})
    assert "`prompts.planning`" in str(error) and "write `$query`" in str(error)


# --- errors: one clear line per problem -----------------------------------------------------------


def test_unknown_key_suggests_the_field_in_the_users_spelling() -> None:
    camel = dict_error({"execution": {"maxIteration": 3}})
    assert str(camel).startswith(
        "pes.yaml: `execution.maxIteration`: unknown key; did you mean `maxIterations`?"
    )
    assert camel.allowed is not None and "taefMaxRetries" in camel.allowed

    snake = dict_error({"execution": {"max_iteratons": 3}})
    assert "did you mean `max_iterations`?" in str(snake)
    assert snake.allowed is not None and "taef_max_retries" in snake.allowed


def test_unknown_keys_from_the_original_say_why() -> None:
    mcp = str(dict_error({"mcpConfig": {"servers": []}}))
    assert "allowed keys: enabled, discoveryEndpoint, mcpServers" in mcp
    assert "`prompts.execution`" in str(dict_error({"persona": {"prompts": {"execution": "x"}}}))


def test_wrong_type_names_the_value_and_what_is_expected() -> None:
    error = dict_error({"providers": {"main": {"model": "m", "temperature": "hot"}}})
    assert str(error) == "pes.yaml: `providers.main.temperature`: expected a number, got 'hot'"
    assert (error.source, error.key_path, error.value, error.allowed) == (
        "pes.yaml",
        "providers.main.temperature",
        "hot",
        ["a number"],
    )


def test_out_of_range_value_names_the_bound() -> None:
    error = dict_error({"execution": {"maxIterations": 0}})
    assert (
        str(error) == "pes.yaml: `execution.maxIterations`: 0 is out of range; expected a whole number >= 1"
    )


def test_bad_literal_lists_the_allowed_values() -> None:
    error = dict_error({"execution": {"tool_schema_mode": "loose"}})
    assert (
        str(error)
        == "pes.yaml: `execution.tool_schema_mode`: 'loose' is not allowed; allowed: strict, flexible"
    )
    assert error.allowed == ["strict", "flexible"]


@pytest.mark.parametrize("kind", ["indexedDB", "supabase", "redis"])
def test_unknown_storage_type_is_refused(kind: str) -> None:
    error = dict_error({"storage": {"type": kind}})
    assert error.key_path == "storage.type" and error.value == kind
    assert error.allowed == ["sqlite", "memory", "postgres"]
    assert "allowed: sqlite, memory, postgres" in str(error)


def test_default_provider_must_name_a_configured_provider() -> None:
    error = dict_error({"providers": {"a": {"model": "m"}, "b": {"model": "m"}}, "defaultProvider": "c"})
    assert str(error) == "pes.yaml: `defaultProvider`: no provider named 'c' is configured; allowed: a, b"
    assert error.allowed == ["a", "b"]


def test_no_providers_loads_and_require_provider_explains() -> None:
    config = config_from_dict({"storage": {"type": "memory"}})
    with pytest.raises(ConfigError, match="no provider configured; add one under `providers`"):
        require_provider(config, None)


def test_a_single_provider_is_the_default() -> None:
    config = config_from_dict({"providers": {"only": {"model": "m"}}})
    assert config.default_provider == "only"
    assert require_provider(config, None)[0] == "only"


def test_require_provider_names_the_configured_ones() -> None:
    config = config_from_dict({"providers": {"a": {"model": "m"}, "b": {"model": "m"}}})
    with pytest.raises(ConfigError, match="several providers are configured \\(a, b\\)"):
        require_provider(config, None)
    with pytest.raises(ConfigError, match="no provider named 'z' is configured; configured: a, b"):
        require_provider(config, "z")
    assert require_provider(config, "b") == ("b", config.providers["b"])


def test_openai_adapter_needs_a_model_unless_the_thread_defaults_name_one() -> None:
    error = dict_error({"providers": {"main": {"adapter": "openai", "baseUrl": "http://x"}}})
    assert error.key_path == "providers.main.model" and "needs the model" in str(error)
    config = config_from_dict(
        {
            "providers": {"main": {"baseUrl": "http://x"}},
            "threadDefaults": {"providerConfig": {"providerName": "main", "modelId": "m"}},
        }
    )
    assert config.providers["main"].model is None


def test_llamacpp_needs_a_model_path() -> None:
    error = dict_error({"providers": {"local": {"adapter": "llamacpp"}}})
    assert error.key_path == "providers.local.modelPath" and "GGUF" in str(error)


def test_both_spellings_of_one_key_are_refused() -> None:
    error = dict_error({"execution": {"maxIterations": 2, "max_iterations": 3}})
    assert "given twice (also as `maxIterations`)" in str(error)


def test_every_problem_is_one_line_and_attributes_come_from_the_first(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "multi.yaml",
        """
providers:
  main: {model: m, temperature: hot}
execution: {maxIterations: 0, toolSchemaMode: loose}
gate: {fuzzyTreshold: 0.5}
""",
    )
    error = load_error(path)
    lines = str(error).splitlines()
    assert lines[0] == f"{path}: 4 problems in the configuration:"
    assert sorted(line.split("`")[1] for line in lines[1:]) == [
        "execution.maxIterations",
        "execution.toolSchemaMode",
        "gate.fuzzyTreshold",
        "providers.main.temperature",
    ]
    assert all(line.startswith(f"  {path}: `") for line in lines[1:])
    assert error.source == str(path) and error.key_path == lines[1].split("`")[1]


def test_bad_template_override_fails_at_load() -> None:
    error = dict_error({"prompts": {"planning": "Plan $query with $nonsense"}})
    assert error.key_path == "prompts.planning" and "$nonsense" in str(error) and "$query" in str(error)


# --- the TypeScript original's shape --------------------------------------------------------------


def test_original_shape_maps_onto_ours() -> None:
    config = config_from_dict(
        {
            "storage": {"type": "memory", "dbName": "ARTDB"},
            "providers": {
                "availableProviders": [
                    {
                        "name": "or",
                        "adapter": "openrouter",
                        "baseOptions": {"apiKey": KEY, "defaultModel": "x/y"},
                    },
                    {
                        "name": "local",
                        "adapter": "ollama",
                        "baseOptions": {"ollamaBaseUrl": "http://h:11434/"},
                        "isLocal": True,
                    },
                    {
                        "name": "own",
                        "adapter": "OpenAIAdapter",
                        "baseOptions": {
                            "model": "gpt-4o",
                            "apiBaseUrl": "http://127.0.0.1:9/v1",
                            "defaultTemperature": 0.1,
                        },
                    },
                ],
                "maxParallelApiInstancesPerProvider": 5,
            },
            "providerConfig": {
                "providerName": "local",
                "modelId": "qwen2.5:7b",
                "adapterOptions": {"apiKey": KEY},
            },
            "stateSavingStrategy": "explicit",
        }
    )
    assert config.storage.type == "memory"
    assert {n: (p.adapter, p.base_url, p.model) for n, p in config.providers.items()} == {
        "or": ("openai", "https://openrouter.ai/api/v1", "x/y"),
        "local": ("openai", "http://h:11434/v1", None),
        "own": ("openai", "http://127.0.0.1:9/v1", "gpt-4o"),
    }
    assert config.providers["own"].temperature == 0.1
    assert config.thread_defaults == ThreadConfig(
        provider_config=ProviderSelection(
            provider_name="local", model_id="qwen2.5:7b", adapter_options={"apiKey": KEY}
        )
    )
    assert require_provider(config)[0] == "local"


def test_original_shape_errors_point_at_what_the_user_wrote() -> None:
    error = dict_error(
        {
            "providers": {
                "availableProviders": [
                    {"name": "a", "adapter": "openai", "baseOptions": {"model": "m", "temperature": "warm"}}
                ]
            }
        }
    )
    assert error.key_path == "providers.availableProviders[0].baseOptions.temperature"
    assert "expected a number, got 'warm'" in str(error)


@pytest.mark.parametrize("adapter", ["anthropic", "AnthropicAdapter", "gemini", "GeminiAdapter"])
def test_original_anthropic_and_gemini_adapters_map_to_the_native_ones(adapter: str) -> None:
    config = config_from_dict(
        {
            "providers": {
                "availableProviders": [{"name": "x", "adapter": adapter, "baseOptions": {"model": "m"}}]
            }
        }
    )
    provider = config.providers["x"]
    assert provider.adapter == adapter.lower().removesuffix("adapter")
    assert (provider.model, provider.base_url, provider.preset) == ("m", None, None)


def test_an_unknown_original_adapter_is_refused_with_the_supported_names() -> None:
    error = dict_error({"providers": {"availableProviders": [{"name": "x", "adapter": "cohere"}]}})
    assert error.key_path == "providers.availableProviders[0].adapter" and error.value == "cohere"
    assert "not supported; supported: openai, anthropic, gemini, llamacpp, scripted, groq" in str(error)


PRESET_DEFAULTS = {
    "groq": ("https://api.groq.com/openai/v1", "GROQ_API_KEY", "json_schema"),
    "deepseek": ("https://api.deepseek.com/v1", "DEEPSEEK_API_KEY", "json_object"),
    "openrouter": ("https://openrouter.ai/api/v1", "OPENROUTER_API_KEY", "json_schema"),
    "ollama": ("http://localhost:11434/v1", None, "json_schema"),
}


def preset_view(config: Any, name: str) -> tuple[Any, ...]:
    p = config.providers[name]
    return p.adapter, p.preset, p.base_url, p.api_key_env, p.structured_output_dialect


@pytest.mark.parametrize("preset", sorted(PRESET_DEFAULTS))
def test_a_preset_is_the_openai_adapter_with_the_services_defaults_in_both_shapes(preset: str) -> None:
    ours = config_from_dict({"providers": {"p": {"adapter": preset, "model": "m"}}})
    theirs = config_from_dict(
        {
            "providers": {
                "availableProviders": [{"name": "p", "adapter": preset, "baseOptions": {"model": "m"}}]
            }
        }
    )
    url, key_env, dialect = PRESET_DEFAULTS[preset]
    assert preset_view(ours, "p") == preset_view(theirs, "p") == ("openai", preset, url, key_env, dialect)


def test_a_presets_defaults_are_each_overridable_in_both_shapes() -> None:
    options = {
        "model": "m",
        "baseURL": "http://127.0.0.1:9/v1",
        "apiKeyEnv": "MY_GROQ",
        "structuredOutputDialect": "json_object",
    }
    ours = config_from_dict({"providers": {"p": {"adapter": "groq", **options}}})
    theirs = config_from_dict(
        {
            "providers": {
                "availableProviders": [{"name": "p", "adapter": "GroqAdapter", "baseOptions": options}]
            }
        }
    )
    expected = ("openai", "groq", "http://127.0.0.1:9/v1", "MY_GROQ", "json_object")
    assert preset_view(ours, "p") == preset_view(theirs, "p") == expected


@pytest.mark.parametrize(
    ("adapter", "dialect"), [("openai", "tool"), ("anthropic", "json_object"), ("gemini", "tool")]
)
def test_a_dialect_the_adapter_does_not_speak_is_refused(adapter: str, dialect: str) -> None:
    error = dict_error(
        {"providers": {"p": {"adapter": adapter, "model": "m", "structured_output_dialect": dialect}}}
    )
    assert error.key_path == "providers.p.structured_output_dialect" and dialect in str(error)


@pytest.mark.parametrize("adapter", ["anthropic", "gemini", "deepseek"])
def test_hosted_adapters_need_a_model(adapter: str) -> None:
    error = dict_error({"providers": {"p": {"adapter": adapter}}})
    assert error.key_path == "providers.p.model"


def test_original_top_level_provider_config_cannot_also_be_in_thread_defaults() -> None:
    error = dict_error(
        {"providerConfig": {"providerName": "a"}, "threadDefaults": {"providerConfig": {"providerName": "a"}}}
    )
    assert error.key_path == "providerConfig" and "given twice" in str(error)


# --- secrets --------------------------------------------------------------------------------------


def test_literal_api_key_never_shows_in_repr_str_or_dumps(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "k.yaml",
        f"providers:\n  main: {{model: m, apiKey: {KEY}}}\n"
        f"storage: {{type: postgres, dsn: 'postgresql://u:{KEY}@db/x'}}\n",
    )
    config = load_config(path)
    seen = [
        repr(config),
        str(config),
        repr(config.model_dump()),
        config.model_dump_json(),
        repr(config.providers["main"].api_key),
        str(config.providers["main"].api_key),
    ]
    assert not [text for text in seen if KEY in text]
    assert config.model_dump()["providers"]["main"]["api_key"] == "**********"
    assert config.providers["main"].api_key is not None
    assert config.providers["main"].api_key.get_secret_value() == KEY
    assert config.storage.dsn is not None and KEY in config.storage.dsn.get_secret_value()


def test_key_from_env_dumps_as_its_reference(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PES_TEST_KEY", KEY)
    config = config_from_dict(
        {
            "providers": {"main": {"model": "m", "api_key": "${PES_TEST_KEY}"}},
            "threadDefaults": {
                "providerConfig": {"providerName": "main", "adapterOptions": {"apiKey": "${PES_TEST_KEY}"}}
            },
        }
    )
    assert config.model_dump(mode="json")["providers"]["main"]["api_key"] == "${PES_TEST_KEY}"
    assert '"adapter_options":{"apiKey":"${PES_TEST_KEY}"}' in config.model_dump_json()
    assert KEY not in repr(config) + config.model_dump_json() + repr(config.model_dump())
    assert config.providers["main"].api_key is not None
    assert config.providers["main"].api_key.get_secret_value() == KEY


@pytest.mark.parametrize(
    "bad",
    [
        {"temperature": "hot"},  # another field of the same provider is invalid
        {"apiKey": [KEY]},  # the key itself has the wrong type
        {"apiKey": {"value": KEY}},
        {"apiKye": KEY},  # a misspelled key name
    ],
)
def test_api_key_never_shows_in_errors(tmp_path: Path, bad: dict[str, Any]) -> None:
    provider = {"model": "m", "apiKey": KEY, **bad}
    if "apiKye" in bad:
        del provider["apiKey"]
    path = write(
        tmp_path,
        "pes.json",
        json.dumps({"providers": {"main": provider}, "execution": {"maxIterations": -1}}),
    )
    error = load_error(path)
    assert KEY not in everything_about(error)
    assert "providers.main" in str(error)


def test_api_key_never_shows_in_original_shape_errors() -> None:
    error = dict_error(
        {
            "providers": {
                "availableProviders": [
                    {
                        "name": "a",
                        "adapter": "openai",
                        "baseOptions": {"apiKey": 12345678901234, "model": "m"},
                    }
                ]
            },
            "providerConfig": {"providerName": "a", "adapterOptions": {"apiKey": KEY}, "modelId": 5},
        }
    )
    assert "12345678901234" not in everything_about(error)
    assert KEY not in everything_about(error)


def test_yaml_syntax_error_does_not_echo_the_line(tmp_path: Path) -> None:
    error = load_error(write(tmp_path, "k.yaml", f"providers:\n  main:\n    apiKey: {KEY}: oops\n"))
    assert "line 3" in str(error) and KEY not in everything_about(error)


# --- scripted providers ---------------------------------------------------------------------------


def test_script_path_is_resolved_against_the_config_file(tmp_path: Path) -> None:
    (tmp_path / "replies").mkdir()
    write(tmp_path, "replies/r.json", json.dumps(["hello", {"text": "x", "thinking": "y"}]))
    nested = tmp_path / "conf"
    nested.mkdir()
    config = load_config(
        write(nested, "pes.yaml", "providers:\n  s: {adapter: scripted, script: ../replies/r.json}\n")
    )
    assert config.providers["s"].script == str(tmp_path / "replies" / "r.json")

    error = load_error(
        write(nested, "gone.yaml", "providers:\n  s: {adapter: scripted, script: nope.json}\n")
    )
    assert error.key_path == "providers.s.script" and str(nested / "nope.json") in str(error)


def test_scripted_without_script_is_allowed() -> None:
    assert config_from_dict({"providers": {"s": {"adapter": "scripted"}}}).providers["s"].script is None


# --- shipped examples -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name",
    [
        "openai.example.yaml",
        "providers.example.yaml",
        "original-shape.example.json",
        "demo.yaml",
        "mcp-demo.yaml",
    ],
)
def test_shipped_examples_load(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    config = load_config(REPO / "config" / name)
    assert config.providers
    assert KEY not in repr(config) + config.model_dump_json()


def test_openai_example_reads_the_key_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    config = load_config(REPO / "config" / "openai.example.yaml")
    name, provider = require_provider(config)
    assert (name, provider.adapter, provider.model) == ("main", "openai", "gpt-4o-mini")
    assert provider.api_key is not None and provider.api_key.get_secret_value() == KEY
    assert config.tools == ["pes_agent.demo.tools:calculator"]


# --- execution limits resolve field by field ------------------------------------------------------


def test_resolve_execution_precedence_field_by_field() -> None:
    call = ExecutionConfig(max_iterations=2)
    thread = ExecutionConfig(max_iterations=3, tool_schema_mode="flexible")
    instance = config_from_dict(
        {
            "execution": {
                "maxIterations": 4,
                "toolSchemaMode": "strict",
                "taefMaxRetries": 0,
                "toolResultMaxLength": 1000,
            }
        }
    ).execution

    resolved = resolve_execution(call, thread, instance)
    assert resolved == ResolvedExecution(
        max_iterations=2, tool_schema_mode="flexible", taef_max_retries=0, tool_result_max_length=1000
    )
    assert resolve_execution(None, thread, instance).max_iterations == 3
    assert resolve_execution(None, None, instance).max_iterations == 4
    assert resolve_execution(None, None, None) == ResolvedExecution()
    assert resolve_execution(ExecutionConfig(taef_max_retries=0), instance).taef_max_retries == 0
