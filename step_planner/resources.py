"""Where the package's data lives: ``config/`` (and ``launch/``) of the source tree or of the install.

One locator for every module. In a source checkout (an editable install, the tests) the data is
next to the package; after ``colcon build`` the module runs from ``install/.../site-packages``,
where no ``config/`` is beside it, and the data is found through the ament index
(``share/step_planner``). ``STEP_PLANNER_SHARE`` overrides both (a relocated install, a test).
"""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path

PACKAGE = "step_planner"
_SOURCE_ROOT = Path(__file__).resolve().parents[1]


class ResourceError(RuntimeError):
    """The package data cannot be found (a broken install); the message says where it looked."""


def _is_share(folder: Path) -> bool:
    return (folder / "config" / "primitives.yaml").is_file()


@lru_cache(maxsize=1)
def _share_dir(override: str) -> Path:
    looked: list[str] = []
    if override:
        if _is_share(Path(override)):
            return Path(override)
        raise ResourceError(f"STEP_PLANNER_SHARE={override} holds no config/primitives.yaml")
    if _is_share(_SOURCE_ROOT) and (_SOURCE_ROOT / "package.xml").is_file():
        return _SOURCE_ROOT
    looked.append(str(_SOURCE_ROOT))
    try:
        from ament_index_python.packages import PackageNotFoundError, get_package_share_directory
    except ImportError:
        looked.append("the ament index (ament_index_python is not installed)")
    else:
        try:
            share = Path(get_package_share_directory(PACKAGE))
        except (PackageNotFoundError, LookupError, ValueError, OSError) as exc:
            looked.append(f"the ament index ({exc}; is AMENT_PREFIX_PATH set, install/setup.bash sourced?)")
        else:
            if _is_share(share):
                return share
            looked.append(f"{share} (from the ament index, but without config/primitives.yaml)")
    raise ResourceError("cannot find step_planner's config/: looked in " + "; ".join(looked))


def share_dir() -> Path:
    """The folder holding ``config/`` and ``launch/`` (the source root or ``share/step_planner``)."""
    return _share_dir(os.environ.get("STEP_PLANNER_SHARE", ""))


def config_dir() -> Path:
    return share_dir() / "config"


def config_path(*parts: str) -> Path:
    """A file or folder under ``config/``, e.g. ``config_path("scenes", "drawer_desk.yaml")``."""
    return config_dir().joinpath(*parts)


def benchmarks_data_dir() -> Path:
    """The benchmarks' own data (``benchmarks/data``: word lists and suites the planner must never read). It is not
    installed, so it exists only in a source checkout; callers say what they need it for when it is missing."""
    return _SOURCE_ROOT / "benchmarks" / "data"


INTERFACES = "step_planner_interfaces"


@lru_cache(maxsize=1)
def interfaces_dir() -> Path:
    """The folder holding step_planner_interfaces' ``msg/`` (the .msg files episodes register as types).

    The source tree's copy next to the package in a checkout, else the ament index (a colcon install or
    the venv ``make interfaces`` installs into).
    """
    source = _SOURCE_ROOT / INTERFACES
    if (source / "msg").is_dir() and (source / "package.xml").is_file():
        return source
    try:
        from ament_index_python.packages import get_package_share_directory

        share = Path(get_package_share_directory(INTERFACES))
    except Exception as exc:  # not installed, or AMENT_PREFIX_PATH unset
        raise ResourceError(f"cannot find {INTERFACES}'s msg/: not in {source} and not in the ament index "
                            f"({exc}; is AMENT_PREFIX_PATH set, install/setup.bash sourced?)") from exc
    if not (share / "msg").is_dir():
        raise ResourceError(f"{share} (from the ament index) has no msg/ folder")
    return share
