"""Physics-simulated Panda executor (MuJoCo). Imported only on demand: ``step_planner`` never loads it.

The GL backend must be chosen before mujoco is first imported, hence the default here.
"""

import os

os.environ.setdefault("MUJOCO_GL", "egl")
