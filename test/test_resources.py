"""The one locator of package data: the source tree here, an override, a clear error otherwise."""

from pathlib import Path

import pytest

from step_planner import resources


@pytest.fixture(autouse=True)
def _fresh_cache():
    resources._share_dir.cache_clear()
    yield
    resources._share_dir.cache_clear()


def test_in_the_source_tree_the_config_next_to_the_package_is_used():
    root = Path(resources.__file__).resolve().parents[1]
    assert resources.share_dir() == root
    assert resources.config_path("primitives.yaml").is_file()
    assert resources.config_path("prompts").is_dir()


def test_an_override_is_used_when_it_holds_a_config(tmp_path, monkeypatch):
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "primitives.yaml").write_text("primitives: []\n")
    monkeypatch.setenv("STEP_PLANNER_SHARE", str(tmp_path))
    assert resources.config_dir() == tmp_path / "config"


def test_an_override_without_a_config_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.setenv("STEP_PLANNER_SHARE", str(tmp_path))
    with pytest.raises(resources.ResourceError, match="holds no config/primitives.yaml"):
        resources.config_dir()


def test_no_module_finds_package_data_relative_to_its_own_file():
    """Package data must come through the locator: parents[N] of a module breaks after colcon build."""
    package = Path(resources.__file__).resolve().parent
    offenders = [
        str(p.relative_to(package)) for p in package.rglob("*.py")
        if p.name != "resources.py" and "__file__).resolve().parents[" in p.read_text()
    ]
    assert offenders == []
