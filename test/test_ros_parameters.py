"""The node's parameters: YAML defaults = declared defaults; descriptors enforce ranges and read-only."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from step_planner.planner.config import PlannerConfig
from step_planner.ros import parameters as params

CONFIG = Path(__file__).resolve().parents[1] / "config" / "step_planner.yaml"


def test_yaml_defaults_equal_the_declared_ones():
    flat = params.flatten_yaml(yaml.safe_load(CONFIG.read_text()))
    assert set(flat) <= set(params.SPECS), f"undeclared in YAML: {set(flat) - set(params.SPECS)}"
    missing = {n for n in params.SPECS if n not in flat and params.SPECS[n].default != []}
    assert not missing, f"declared but not in {CONFIG.name}: {missing}"
    for name, value in flat.items():
        assert value == params.SPECS[name].default, name


def test_defaults_match_the_planner_and_llm_configs():
    defaults = {s.name: s.default for s in params.PARAMETERS}
    assert params.planner_config(defaults) == PlannerConfig.from_yaml(CONFIG.parent / "planner.yaml")
    llm = params.llm_settings(defaults)
    assert llm["base_url"] is None and "api_key" not in llm


def test_bad_values_are_named():
    problems = params.check({"goal_policy": "lifo", "planner.features": ["telepathy"], "llm.timeout_s": 0.0})
    assert any("goal_policy" in p and "lifo" in p for p in problems)
    assert any("telepathy" in p for p in problems)
    assert any("llm.timeout_s" in p for p in problems)


@pytest.mark.ros
def test_descriptors_on_a_real_node_refuse_out_of_range_and_read_only_changes():
    pytest.importorskip("step_planner_interfaces")
    import rclpy
    from rclpy.parameter import Parameter

    from step_planner.ros.node import StepPlannerNode

    context = rclpy.Context()
    rclpy.init(context=context)
    try:
        node = StepPlannerNode(context=context)
        try:
            (too_big,) = node.set_parameters([Parameter("planner.max_depth", value=99)])
            assert not too_big.successful
            (read_only,) = node.set_parameters([Parameter("backend", value="sim")])
            assert not read_only.successful
            (bad_choice,) = node.set_parameters([Parameter("llm.structured", value="xml")])
            assert not bad_choice.successful and "xml" in bad_choice.reason
            (ok,) = node.set_parameters([Parameter("planner.features", value=["control_flow"])])
            assert ok.successful
            descriptor = node.describe_parameter("llm.api_key_env")
            assert descriptor.read_only and "environment variable" in descriptor.description
        finally:
            node.destroy_node()
    finally:
        rclpy.try_shutdown(context=context)
