"""Configuration: defaults, bounds, layers, and errors that name the key and what is allowed."""

import pytest

from ai_assistant.conf import (
    AssistantConfig,
    ConfigError,
    describe_key,
    parse_override,
    resolve_config,
)


def test_documented_defaults():
    config = AssistantConfig()
    assert config.tick_rate == 5
    assert config.tick_rate_sleep == 60
    assert config.max_context_tokens == 100000
    assert config.compact_sleep_threshold == 0.7
    assert config.compact_emergency_threshold == 0.8
    assert config.compact_preserve_window == 20
    assert config.sleep_cooldown_minutes == 60
    assert config.min_activity_before_sleep == 10
    assert config.pre_compact_max_iterations == 5


def test_every_key_has_a_meaning():
    for name, field in AssistantConfig.model_fields.items():
        assert field.description, name


def test_layers_later_wins():
    config = resolve_config({"tick_rate": 7, "temperature": 0.1}, {"tick_rate": 9})
    assert config.tick_rate == 9
    assert config.temperature == 0.1


def test_unknown_game_default_names_key_and_source():
    with pytest.raises(ConfigError) as err:
        resolve_config({"tick_rat": 3})
    assert "AI_ASSISTANT_DEFAULTS" in str(err.value)
    assert "tick_rat" in str(err.value)
    assert "tick_rate" in str(err.value)  # lists what is allowed


def test_out_of_bounds_override_names_bounds():
    with pytest.raises(ConfigError) as err:
        resolve_config({}, {"tick_rate": 0})
    assert "tick_rate" in str(err.value) and ">= 1" in str(err.value)


def test_game_defaults_must_be_a_dict():
    with pytest.raises(ConfigError, match="must be a dict"):
        resolve_config(["tick_rate"])


def test_parse_override_types_and_errors():
    assert parse_override("tick_rate", " 12 ") == 12
    assert parse_override("respond_to_ambient", "true") is True
    assert parse_override("model", "none") is None
    with pytest.raises(ConfigError, match="Unknown key 'colour'"):
        parse_override("colour", "red")
    with pytest.raises(ConfigError, match=r"tick_rate must be a whole number \(got fast\)"):
        parse_override("tick_rate", "fast")
    with pytest.raises(ConfigError, match="<= 2.0"):
        parse_override("temperature", "3")


def test_a_bad_value_is_told_in_words_naming_the_key_and_what_is_allowed():
    """Not pydantic's "Input should be greater than or equal to 1": the key, the rule, the value
    typed, then what the key allows."""
    cases = [
        ("tick_rate", "0", "tick_rate must be at least 1 (got 0). Allowed: integer, >= 1"),
        ("temperature", "9", "temperature must be at most 2.0 (got 9)."),
        ("gossip_enabled", "maybe", "gossip_enabled must be true or false (got maybe)."),
        ("model", "", "model must not be empty (got '')."),
    ]
    for key, typed, told in cases:
        with pytest.raises(ConfigError) as err:
            parse_override(key, typed)
        assert str(err.value).startswith(told), str(err.value)
        assert "Input should" not in str(err.value) and "should have" not in str(err.value)
    with pytest.raises(ConfigError) as err:
        resolve_config({"tick_rate": 0})
    assert str(err.value).startswith("AI_ASSISTANT_DEFAULTS: tick_rate must be at least 1 (got 0)")


def test_parse_override_checks_against_existing_overrides():
    # the emergency threshold may not fall below the sleep threshold already set
    with pytest.raises(ConfigError, match="compact_emergency_threshold"):
        parse_override("compact_emergency_threshold", "0.5", {"compact_sleep_threshold": 0.6})


def test_describe_key():
    text = describe_key("tick_rate")
    assert text.startswith("tick_rate: integer") and "default 5" in text


def test_config_is_immutable():
    with pytest.raises(Exception):
        AssistantConfig().tick_rate = 3


def test_configuration_doc_lists_every_key_as_in_code():
    from pathlib import Path

    from ai_assistant.conf import markdown_table

    doc = (Path(__file__).resolve().parent.parent / "docs" / "configuration.md").read_text()
    assert markdown_table() in doc, "regenerate with: python -m ai_assistant.conf"


def test_resolved_configs_are_shared_and_bad_ones_still_refused():
    from ai_assistant.conf import ConfigError, resolve_config

    first = resolve_config({"tick_rate": 7}, {"max_react_iterations": 3})
    again = resolve_config({"tick_rate": 7}, {"max_react_iterations": 3})
    assert again is first and (first.tick_rate, first.max_react_iterations) == (7, 3)
    other = resolve_config({"tick_rate": 7}, {"max_react_iterations": 4})
    assert other is not first and other.max_react_iterations == 4
    for _ in range(2):  # a refused layer is refused every time, never remembered
        with pytest.raises(ConfigError, match="tick_rate"):
            resolve_config({"tick_rate": 0})
