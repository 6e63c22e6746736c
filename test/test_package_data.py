"""setup.py installs every file of config/ (every subfolder the code reads) and every launch file.

After ``colcon build`` the code reads its data from ``share/step_planner`` (through the ament index), so a
config file that setup.py's data_files misses works in the source tree and breaks in every install.
"""

from __future__ import annotations

import runpy
from pathlib import Path

import pytest
import setuptools

ROOT = Path(__file__).resolve().parents[1]
SHARE = "share/step_planner"


def installed_files(monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """{install path relative to the prefix: source path} from setup.py's data_files."""
    captured: dict = {}
    monkeypatch.setattr(setuptools, "setup", lambda **kwargs: captured.update(kwargs))
    monkeypatch.chdir(ROOT)
    runpy.run_path(str(ROOT / "setup.py"), run_name="__main__")
    return {f"{dest}/{Path(src).name}": src for dest, sources in captured["data_files"] for src in sources}


def package_data() -> list[str]:
    files = [p for p in (ROOT / "config").rglob("*") if p.is_file() and "__pycache__" not in p.parts]
    files = [p for p in files if not any(part.startswith(".") for part in p.relative_to(ROOT).parts)]
    return sorted(str(p.relative_to(ROOT)) for p in [*files, *(ROOT / "launch").glob("*.launch.py")])


def test_every_config_and_launch_file_is_installed_at_the_same_relative_path(monkeypatch):
    installed = installed_files(monkeypatch)
    expected = {f"{SHARE}/{rel}": rel for rel in package_data()}
    missing = sorted(set(expected) - set(installed))
    assert not missing, f"setup.py data_files does not install {missing}"
    assert {k: v for k, v in installed.items() if k.startswith(f"{SHARE}/config")} == {
        k: v for k, v in expected.items() if k.startswith(f"{SHARE}/config")}
    assert len(package_data()) > 20 and any("/replay/" in k for k in installed)  # not vacuously equal


def test_the_ament_marker_and_manifest_are_installed(monkeypatch):
    installed = installed_files(monkeypatch)
    assert installed["share/ament_index/resource_index/packages/step_planner"] == "resource/step_planner"
    assert installed[f"{SHARE}/package.xml"] == "package.xml"


def test_the_hmi_page_is_package_data_beside_its_server(monkeypatch):
    """The page's HTML/JS/CSS are code: setup.py installs them with step_planner.hmi (not from config/), and
    the server serves them from the folder beside its module."""
    captured: dict = {}
    monkeypatch.setattr(setuptools, "setup", lambda **kwargs: captured.update(kwargs))
    monkeypatch.chdir(ROOT)
    runpy.run_path(str(ROOT / "setup.py"), run_name="__main__")
    page = ROOT / "step_planner" / "hmi" / "page"
    shipped = sorted(p.name for p in page.iterdir() if p.is_file())
    assert shipped == ["hmi.css", "hmi.js", "index.html"]
    patterns = captured["package_data"]["step_planner.hmi"]
    matched = sorted({p.name for pattern in patterns for p in (ROOT / "step_planner" / "hmi").glob(pattern)})
    assert matched == shipped
    assert not (ROOT / "config" / "hmi").exists()
    assert "recursive-include step_planner/hmi/page" in (ROOT / "MANIFEST.in").read_text()
    from step_planner.hmi.server import PAGE_DIR, PAGE_FILES

    assert page == PAGE_DIR and {name for name, _ in PAGE_FILES.values()} == set(shipped)
