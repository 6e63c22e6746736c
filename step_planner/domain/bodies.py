"""Rigid bodies made of boxes, as a simulator needs them: the engine-neutral half of a scene's geometry.

WHY: the MuJoCo model (``execution/sim/scene_builder.py``) and the Gazebo world (``export-world``) are both
translations of one description, so the two simulators cannot drift apart. A body is a frame (position in its
parent, no rotation: every fixture of the scenes is axis-aligned) carrying boxes, optionally sliding on a
prismatic joint in its parent, with named points (sites) and child bodies. Units: metres, kilograms.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

DEFAULT_DENSITY = 1000.0  # kg/m^3 of a box without its own (MuJoCo's default geom density)


@dataclass(frozen=True)
class Box:
    """A box of a body: its centre in the body frame and its half extents (axis-aligned with the body)."""

    name: str
    pos: tuple[float, float, float]
    half: tuple[float, float, float]
    rgba: tuple[float, float, float, float]
    density: float | None = None  # kg/m^3; None: DEFAULT_DENSITY

    @property
    def mass(self) -> float:
        return float(np.prod(2 * np.asarray(self.half))) * (DEFAULT_DENSITY if self.density is None else self.density)


@dataclass(frozen=True)
class Slide:
    """A prismatic joint between a body and its parent: the body moves along ``axis`` (parent frame) by
    0..``travel`` from where it is described (its closed pose)."""

    name: str
    axis: tuple[float, float, float]
    travel: float  # m: the joint's range is [0, travel]
    damping: float  # N s/m
    friction: float  # N: dry friction (MuJoCo frictionloss, SDF dynamics/friction)
    armature: float  # kg: reflected inertia of the slide (MuJoCo only: SDF 1.9 has no such element)


@dataclass(frozen=True)
class Site:
    """A named point of a body (the drawer handle's grasp point)."""

    name: str
    pos: tuple[float, float, float]


@dataclass(frozen=True)
class Body:
    """A rigid body: welded to its parent unless it has a ``slide``."""

    name: str
    pos: tuple[float, float, float]  # in the parent frame (the world for a top-level body)
    boxes: tuple[Box, ...]
    slide: Slide | None = None
    sites: tuple[Site, ...] = ()
    children: tuple[Body, ...] = ()


@dataclass(frozen=True)
class MassProperties:
    mass: float
    com: np.ndarray  # (3,) in the body frame
    inertia: np.ndarray  # (3, 3) about the centre of mass, body axes


def box_inertia(mass: float, half: np.ndarray) -> np.ndarray:
    """Diagonal inertia of a solid box about its centre."""
    x, y, z = 2 * np.asarray(half, dtype=float)
    return mass / 12.0 * np.diag([y * y + z * z, x * x + z * z, x * x + y * y])


def cylinder_inertia(mass: float, radius: float, height: float) -> np.ndarray:
    """Diagonal inertia of a solid cylinder (axis z) about its centre."""
    side = mass * (3 * radius * radius + height * height) / 12.0
    return np.diag([side, side, mass * radius * radius / 2.0])


def mass_properties(boxes: tuple[Box, ...]) -> MassProperties:
    """Mass, centre of mass and inertia of a body's boxes (each solid at its density; parallel axes)."""
    masses = np.array([b.mass for b in boxes])
    centres = np.array([b.pos for b in boxes], dtype=float)
    total = float(masses.sum())
    com = masses @ centres / total
    inertia = np.zeros((3, 3))
    for m, c, b in zip(masses, centres, boxes, strict=True):
        d = c - com
        inertia += box_inertia(m, np.asarray(b.half)) + m * (d @ d * np.eye(3) - np.outer(d, d))
    return MassProperties(total, com, inertia)
