"""Physics-simulated Panda executor (MuJoCo). Imported only on demand: ``step_planner`` never loads it.

MuJoCo picks its OpenGL backend when it is first imported, and a backend whose library is
missing breaks ``import mujoco`` itself. So the headless default is chosen here, and only if its
library exists: EGL (Debian: libegl1 libegl-mesa0 libgl1-mesa-dri), else OSMesa (libosmesa6).
Without either, physics still runs and only rendering fails, with a message naming the packages.
"""

import ctypes.util
import os

if "MUJOCO_GL" not in os.environ:
    if ctypes.util.find_library("EGL"):
        os.environ["MUJOCO_GL"] = "egl"
    elif ctypes.util.find_library("OSMesa"):
        os.environ["MUJOCO_GL"] = "osmesa"
