"""Room shell and furniture builders shared by the task scene generators.

Everything returns backend-neutral :mod:`bspatial.world.spec` values. Furniture is static (fixed to the
world); a builder whose furniture holds things (countertop, shelves, fridge, cabinet, bookcase) also
returns the geometry a task needs (top height and polygon, shelf heights, interior footprint).

Layout convention of the manipulation scenes: the robot spawns at the origin facing +x, so the
robot's left is +y and its right is -y; furniture stands in front of it (x > 0).

Example:
    >>> counter = countertop("countertop_0", front_x=0.55, depth=0.7, width=1.8)
    >>> round(counter.surface.height, 3), counter.obj.category
    (0.9, 'countertop')
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from bspatial.world.spec import (CameraSpec, Ceiling, LightSpec, ObjectSpec, Part, Pose, RobotSpawn, SceneSpec,
                               Surface, Texture, table_object)
from bspatial.world.textures import fabric_texture, plank_floor_texture, rgba, tile_texture, wood_texture

WALL_HEIGHT = 2.4          # m, household ceiling height
WALL_THICKNESS = 0.1
COUNTERTOP_HEIGHT = 0.90   # standard kitchen counter
DESK_HEIGHT = 0.75
TABLE_HEIGHT = 0.75
BED_HEIGHT = 0.55          # top of the mattress
TOP_CAMERA = "top"
TOP_CAMERA_HEIGHT = 4.0

# CPU render profile: one shadow-casting light plus a shadowless fill.
DEFAULT_LIGHTS = (
    LightSpec(position=(1.0, 1.0, 3.5), direction=(0.15, -0.25, -1.0), cast_shadow=True, diffuse=0.6),
    LightSpec(position=(-1.0, -1.0, 3.0), direction=(0.3, 0.3, -1.0), cast_shadow=False, diffuse=0.35),
)


@dataclass(frozen=True)
class Room:
    """The walled rectangle a scene lives in: x in [x_min, x_max], y in [y_min, y_max]."""

    x_min: float = -1.5
    x_max: float = 3.0
    y_min: float = -2.5
    y_max: float = 2.5

    def wall_objects(self, *, rgb=(222, 216, 202)) -> tuple[ObjectSpec, ...]:
        """Four static wall slabs (BEHAVIOR category ``walls``), inner faces on the room's bounds."""
        t, h = WALL_THICKNESS, WALL_HEIGHT
        cx, cy = (self.x_min + self.x_max) / 2, (self.y_min + self.y_max) / 2
        lx, ly = self.x_max - self.x_min + 2 * t, self.y_max - self.y_min + 2 * t
        texture = tile_texture("wall_paint", base=rgb, grout=tuple(int(c * 0.93) for c in rgb), repeat=(6.0, 3.0))
        slabs = {"back": ((self.x_max + t / 2, cy), (t, ly)), "front": ((self.x_min - t / 2, cy), (t, ly)),
                 "left": ((cx, self.y_max + t / 2), (lx, t)), "right": ((cx, self.y_min - t / 2), (lx, t))}
        return tuple(
            ObjectSpec(name=f"wall_{side}", category="walls", static=True,
                       parts=(Part("box", (size[0], size[1], h), Pose((0, 0, h / 2)), rgba=rgba(rgb), texture=texture),),
                       pose=Pose((pos[0], pos[1], 0.0)))
            for side, (pos, size) in slabs.items())

    def wall_plane(self, side: str) -> tuple[np.ndarray, np.ndarray]:
        """(point, inward unit normal) of a wall's inner face; ``side`` is back/front/left/right."""
        planes = {"back": ((self.x_max, 0.0, 0.0), (-1.0, 0.0, 0.0)), "front": ((self.x_min, 0.0, 0.0), (1.0, 0.0, 0.0)),
                  "left": ((0.0, self.y_max, 0.0), (0.0, -1.0, 0.0)), "right": ((0.0, self.y_min, 0.0), (0.0, 1.0, 0.0))}
        if side not in planes:
            raise ValueError(f"side must be one of {sorted(planes)}, got {side!r}")
        point, normal = planes[side]
        return np.array(point), np.array(normal)


def room_ceiling(bounds, lights=()) -> Ceiling:
    """The ceiling of a room whose walls stand on ``bounds`` (x0, x1, y0, y1: inner faces, or the centre lines of
    walls it shares), at :data:`WALL_HEIGHT` (on the walls' tops), with a light fixture at each of ``lights`` (xy).

    It reaches half a wall thickness past ``bounds``: neighbouring ceilings meet over their shared wall and
    none leaves a crack along an outer wall. Where two overlap they lie in one plane with one colour and (no
    light reaches a ceiling's underside but the camera's headlight) one shade, so the overlap does not show.

    Example:
        >>> room_ceiling((0.0, 4.0, 0.0, 3.0), lights=((2.0, 1.5),)).bounds
        (-0.05, 4.05, -0.05, 3.05)
    """
    x0, x1, y0, y1 = bounds
    reach = WALL_THICKNESS / 2
    return Ceiling((x0 - reach, x1 + reach, y0 - reach, y1 + reach), WALL_HEIGHT, lights=tuple(lights))


def make_scene(name: str, objects, *, room: Room = Room(), surfaces=(), robot: RobotSpawn | None = None,
               top_center=(1.0, 0.0)) -> SceneSpec:
    """A scene in ``room``: walls, plank floor, a ceiling with a light fixture over the room's middle, the CPU light
    rig and a top-down camera named ``top`` (above the ceiling, which it does not see)."""
    bounds = (room.x_min, room.x_max, room.y_min, room.y_max)
    middle = ((room.x_min + room.x_max) / 2, (room.y_min + room.y_max) / 2)
    return SceneSpec(
        name=name, objects=tuple(room.wall_objects()) + tuple(objects), surfaces=tuple(surfaces),
        cameras=(CameraSpec(TOP_CAMERA, (top_center[0], top_center[1], TOP_CAMERA_HEIGHT), (top_center[0], top_center[1], 0.0)),),
        lights=DEFAULT_LIGHTS, robot=robot if robot is not None else RobotSpawn(),
        floor_size=(2 * max(abs(room.x_min), abs(room.x_max)) + 2, 2 * max(abs(room.y_min), abs(room.y_max)) + 2),
        floor_texture=plank_floor_texture("floor_planks"), ceilings=(room_ceiling(bounds, lights=(middle,)),))


def rect_polygon(x0: float, x1: float, y0: float, y1: float) -> np.ndarray:
    """Counter-clockwise rectangle [x0, x1] x [y0, y1] as an (4, 2) polygon."""
    return np.array([[x0, y0], [x1, y0], [x1, y1], [x0, y1]], float)


# ----------------------------------------------------------------------------- support furniture


@dataclass(frozen=True)
class Support:
    """A piece of furniture with a usable top: the object, its top :class:`Surface` and its xy bounds."""

    obj: ObjectSpec
    surface: Surface
    bounds: tuple[float, float, float, float]   # x0, x1, y0, y1 of the top face

    @property
    def height(self) -> float:
        return self.surface.height


def countertop(name: str, *, front_x: float, depth: float, width: float, y_center: float = 0.0,
               height: float = COUNTERTOP_HEIGHT, seed: int = 0) -> Support:
    """A kitchen counter: cabinet body with door panels under a wood-grain top."""
    top_t = 0.04
    wood = wood_texture(f"{name}_wood", (170, 125, 80), seed=seed)
    body_rgb = (235, 232, 225)
    parts = [Part("box", (depth, width, top_t), Pose((0, 0, height - top_t / 2)), rgba=rgba((255, 255, 255)), texture=wood),
             Part("box", (depth - 0.05, width, height - top_t), Pose((0.025, 0, (height - top_t) / 2)), rgba=rgba(body_rgb))]
    n_doors = max(1, int(width / 0.5))
    for i in range(n_doors):       # door seams and handles: a kitchen-cabinet front
        y = -width / 2 + (i + 0.5) * width / n_doors
        parts.append(Part("box", (0.01, width / n_doors - 0.02, height - top_t - 0.1),
                          Pose((-depth / 2 + 0.02, y, (height - top_t) / 2)), rgba=rgba((215, 210, 200)), collide=False))
        parts.append(Part("box", (0.02, 0.1, 0.015), Pose((-depth / 2 + 0.01, y, height - 0.15)),
                          rgba=rgba((90, 90, 95)), collide=False))
    cx = front_x + depth / 2
    obj = ObjectSpec(name=name, category="countertop", parts=tuple(parts), pose=Pose((cx, y_center, 0.0)), static=True)
    bounds = (front_x, front_x + depth, y_center - width / 2, y_center + width / 2)
    return Support(obj, Surface(f"{name}/top", name, height, rect_polygon(*bounds)), bounds)


def table(name: str, category: str, *, center_xy, size_xy, height: float, rgb=(160, 115, 70), seed: int = 0) -> Support:
    """A four-legged table (desk, breakfast table, coffee table) with a wood-grain top."""
    obj = table_object(name, category, size_xy, height, center_xy, top_rgba=rgba((255, 255, 255)),
                       leg_rgba=rgba(tuple(int(c * 0.6) for c in rgb)), texture=wood_texture(f"{name}_wood", rgb, seed=seed))
    x, y = center_xy
    bounds = (x - size_xy[0] / 2, x + size_xy[0] / 2, y - size_xy[1] / 2, y + size_xy[1] / 2)
    return Support(obj, Surface(f"{name}/top", name, height, rect_polygon(*bounds)), bounds)


def bed(name: str, *, center_xy, size_xy=(1.4, 2.0), blanket_rgb=(70, 110, 170)) -> Support:
    """A bed: frame, mattress, blanket over the foot end, pillows and a headboard at the +x end."""
    lx, ly = size_xy
    frame_h, mattress_h = 0.3, BED_HEIGHT - 0.3
    parts = (
        Part("box", (lx, ly, frame_h), Pose((0, 0, frame_h / 2)), rgba=rgba((110, 75, 45)),
             texture=wood_texture(f"{name}_wood", (120, 80, 50))),
        Part("box", (lx - 0.04, ly - 0.04, mattress_h), Pose((0, 0, frame_h + mattress_h / 2)), rgba=rgba((240, 240, 235))),
        Part("box", (lx * 0.62, ly - 0.02, 0.01), Pose((-lx * 0.19, 0, BED_HEIGHT + 0.005)), rgba=rgba((255, 255, 255)),
             texture=fabric_texture(f"{name}_blanket", blanket_rgb), collide=False),
        Part("box", (0.08, ly + 0.04, 1.0), Pose((lx / 2 + 0.04, 0, 0.5)), rgba=rgba((100, 68, 40))),
        Part("box", (0.3, ly * 0.4, 0.1), Pose((lx / 2 - 0.2, ly * 0.22, BED_HEIGHT + 0.05)), rgba=rgba((250, 250, 250))),
        Part("box", (0.3, ly * 0.4, 0.1), Pose((lx / 2 - 0.2, -ly * 0.22, BED_HEIGHT + 0.05)), rgba=rgba((250, 250, 250))),
    )
    x, y = center_xy
    obj = ObjectSpec(name=name, category="bed", parts=parts, pose=Pose((x, y, 0.0)), static=True)
    # Usable top: the mattress in front of the pillows.
    bounds = (x - lx / 2 + 0.05, x + lx / 2 - 0.4, y - ly / 2 + 0.05, y + ly / 2 - 0.05)
    return Support(obj, Surface(f"{name}/top", name, BED_HEIGHT, rect_polygon(*bounds)), bounds)


# ----------------------------------------------------------------------------- shelving (open-front boxes)


@dataclass(frozen=True)
class Shelving:
    """An open-front box with horizontal layers (bookcase, fridge, bottom cabinet).

    Attributes:
        obj: the static object.
        layer_tops: world z of the top face of each layer's floor, bottom layer first.
        layer_ceilings: world z of the underside of whatever is above each layer.
        interior: (x0, x1, y0, y1) world xy of the inside.
        column_edges: y values splitting the interior into columns (left to right as the robot sees it:
            decreasing y), including the outer walls.
    """

    obj: ObjectSpec
    layer_tops: tuple[float, ...]
    layer_ceilings: tuple[float, ...]
    interior: tuple[float, float, float, float]
    column_edges: tuple[float, ...]


def shelving(name: str, category: str, *, front_x: float, y_center: float, width: float, depth: float,
             height: float, n_layers: int, n_columns: int = 1, base: float = 0.06, panel: float = 0.025,
             rgb=(150, 105, 65), texture: Texture | None = None, door_rgb=None) -> Shelving:
    """Open-front shelving facing the robot (-x); layers evenly spaced between the base and the top."""
    t = panel
    x_c = depth / 2
    colour = rgba((255, 255, 255)) if texture is not None else rgba(rgb)
    parts = [Part("box", (t, width, height), Pose((depth - t / 2, 0, height / 2)), rgba=colour, texture=texture),
             Part("box", (depth, t, height), Pose((x_c, width / 2 - t / 2, height / 2)), rgba=colour, texture=texture),
             Part("box", (depth, t, height), Pose((x_c, -width / 2 + t / 2, height / 2)), rgba=colour, texture=texture),
             Part("box", (depth, width, t), Pose((x_c, 0, height - t / 2)), rgba=colour, texture=texture),
             Part("box", (depth, width, base), Pose((x_c, 0, base / 2)), rgba=colour, texture=texture)]
    pitch = (height - t - base) / n_layers
    tops, ceilings = [], []
    for k in range(n_layers):
        floor_top = base + k * pitch
        if k > 0:
            parts.append(Part("box", (depth - t, width - 2 * t, t), Pose((x_c - t / 2, 0, floor_top - t / 2)),
                              rgba=colour, texture=texture))
        tops.append(floor_top)
        ceilings.append(base + (k + 1) * pitch - (t if k < n_layers - 1 else 0.0))
    inner_w = width - 2 * t
    edges = [width / 2 - t - i * inner_w / n_columns for i in range(n_columns + 1)]
    for e in edges[1:-1]:
        parts.append(Part("box", (depth - t, t, height - t - base), Pose((x_c - t / 2, e, base + (height - t - base) / 2)),
                          rgba=colour, texture=texture))
    if door_rgb is not None:      # an opened door swung 90 degrees to the robot's right
        parts.append(Part("box", (width * 0.95, 0.04, height - 0.02), Pose((-width * 0.475, -width / 2 - 0.02, height / 2)),
                          rgba=rgba(door_rgb)))
        parts.append(Part("box", (0.03, 0.03, 0.5), Pose((-width * 0.9, -width / 2 + 0.01, height * 0.55)),
                          rgba=rgba((170, 170, 175)), collide=False))
    obj = ObjectSpec(name=name, category=category, parts=tuple(parts), pose=Pose((front_x, y_center, 0.0)), static=True)
    interior = (front_x, front_x + depth - t, y_center - width / 2 + t, y_center + width / 2 - t)
    return Shelving(obj, tuple(tops), tuple(ceilings), interior, tuple(y_center + e for e in edges))


def bookcase(name: str, *, front_x: float, y_center: float = 0.0, rows: int = 3, columns: int = 2) -> Shelving:
    """A wooden bookcase, ``rows`` x ``columns`` open cells (1.2 m tall so the head camera sees every cell)."""
    return shelving(name, "bookcase", front_x=front_x, y_center=y_center, width=1.0, depth=0.32, height=1.2,
                    n_layers=rows, n_columns=columns, texture=wood_texture(f"{name}_wood", (125, 85, 50), seed=3))


def fridge(name: str, *, front_x: float, y_center: float = 0.0, n_layers: int = 6) -> Shelving:
    """An opened fridge: white cabinet, glass-grey shelves, door swung open to the robot's right."""
    return shelving(name, "fridge", front_x=front_x, y_center=y_center, width=0.72, depth=0.6, height=1.75,
                    n_layers=n_layers, base=0.1, panel=0.03, rgb=(238, 240, 242), door_rgb=(228, 230, 233))


def bottom_cabinet(name: str, *, front_x: float, y_center: float = 0.0, n_layers: int = 5) -> Shelving:
    """An open kitchen bottom cabinet with ``n_layers`` layers (door removed)."""
    return shelving(name, "bottom_cabinet", front_x=front_x, y_center=y_center, width=0.8, depth=0.5, height=0.9,
                    n_layers=n_layers, base=0.05, panel=0.02, rgb=(205, 190, 160),
                    texture=wood_texture(f"{name}_wood", (200, 180, 145), seed=5))


# ----------------------------------------------------------------------------- reference furniture / appliances


def _static(name: str, category: str, parts, xy, z: float = 0.0, yaw: float = 0.0) -> ObjectSpec:
    return ObjectSpec(name=name, category=category, parts=tuple(parts), pose=Pose.from_xy_yaw(xy[0], xy[1], z, yaw),
                      static=True)


def sofa(name: str, xy, *, yaw: float = 0.0, rgb=(90, 100, 120), length: float = 1.8) -> ObjectSpec:
    """A three-seat sofa; at yaw 0 its back is on the +x side (it faces -x, towards the robot)."""
    fab = fabric_texture(f"{name}_fabric", rgb)
    white = rgba((255, 255, 255))
    parts = [Part("box", (0.85, length, 0.42), Pose((0, 0, 0.21)), rgba=white, texture=fab),
             Part("box", (0.2, length, 0.45), Pose((0.325, 0, 0.645)), rgba=white, texture=fab)]
    for s in (-1, 1):
        parts.append(Part("box", (0.85, 0.18, 0.22), Pose((0, s * (length / 2 - 0.09), 0.53)), rgba=white, texture=fab))
    for i in (-1, 0, 1):
        parts.append(Part("box", (0.6, length / 3 - 0.06, 0.1), Pose((-0.08, i * length / 3 * 0.9, 0.47)),
                          rgba=rgba(tuple(min(255, int(c * 1.15)) for c in rgb))))
    return _static(name, "sofa", parts, xy, yaw=yaw)


def straight_chair(name: str, xy, *, yaw: float = 0.0, rgb=(30, 30, 30)) -> ObjectSpec:
    """A dining chair; at yaw 0 its backrest is on the +x side."""
    c = rgba(rgb)
    parts = [Part("box", (0.44, 0.44, 0.05), Pose((0, 0, 0.45)), rgba=c),
             Part("box", (0.04, 0.44, 0.5), Pose((0.2, 0, 0.72)), rgba=c)]
    for sx in (-1, 1):
        for sy in (-1, 1):
            parts.append(Part("box", (0.04, 0.04, 0.43), Pose((sx * 0.19, sy * 0.19, 0.215)), rgba=c))
    return _static(name, "straight_chair", parts, xy, yaw=yaw)


def microwave(name: str, xy, z: float) -> ObjectSpec:
    """A countertop microwave: box with a dark window and a keypad on the robot-facing side."""
    return _static(name, "microwave", (
        Part("box", (0.36, 0.5, 0.3), Pose((0, 0, 0.15)), rgba=rgba((225, 225, 228))),
        Part("box", (0.01, 0.3, 0.2), Pose((-0.18, 0.05, 0.15)), rgba=rgba((25, 25, 30)), collide=False),
        Part("box", (0.01, 0.1, 0.22), Pose((-0.18, -0.18, 0.15)), rgba=rgba((120, 120, 125)), collide=False)), xy, z)


def burner(name: str, xy, z: float) -> ObjectSpec:
    """A single electric burner: black square plate with a red-brown coil ring."""
    return _static(name, "burner", (
        Part("box", (0.3, 0.3, 0.03), Pose((0, 0, 0.015)), rgba=rgba((20, 20, 22))),
        Part("cylinder", (0.1, 0.004), Pose((0, 0, 0.032)), rgba=rgba((130, 50, 35)), collide=False),
        Part("cylinder", (0.06, 0.005), Pose((0, 0, 0.033)), rgba=rgba((20, 20, 22)), collide=False)), xy, z)


def frying_pan(name: str, xy, z: float) -> ObjectSpec:
    """A frying pan: dark disc with a low rim and a long handle towards the robot's right."""
    return _static(name, "frying_pan", (
        Part("cylinder", (0.13, 0.04), Pose((0, 0, 0.02)), rgba=rgba((45, 45, 50))),
        Part("cylinder", (0.115, 0.002), Pose((0, 0, 0.041)), rgba=rgba((75, 75, 80)), collide=False),
        Part("box", (0.04, 0.18, 0.02), Pose((0, -0.21, 0.035)), rgba=rgba((25, 25, 25)))), xy, z)


def cutting_board(name: str, xy, z: float, *, size=(0.3, 0.42)) -> ObjectSpec:
    """A wooden cutting board (BEHAVIOR ``cutting_board``; ``chopping_board`` is the food-task one)."""
    return _static(name, "cutting_board", (Part("box", (size[0], size[1], 0.02), Pose((0, 0, 0.01)), rgba=rgba((255, 255, 255)),
                                                texture=wood_texture(f"{name}_wood", (205, 160, 105), seed=11)),), xy, z)


def coffee_maker(name: str, xy, z: float) -> ObjectSpec:
    """A drip coffee maker: tall black body with a glass carafe under the head."""
    return _static(name, "coffee_maker", (
        Part("box", (0.22, 0.2, 0.36), Pose((0.04, 0, 0.18)), rgba=rgba((30, 30, 32))),
        Part("box", (0.14, 0.2, 0.06), Pose((-0.1, 0, 0.33)), rgba=rgba((30, 30, 32))),
        Part("cylinder", (0.06, 0.14), Pose((-0.09, 0, 0.08)), rgba=rgba((90, 60, 35))),
        Part("box", (0.16, 0.22, 0.02), Pose((-0.03, 0, 0.01)), rgba=rgba((50, 50, 52)))), xy, z)


def electric_kettle(name: str, xy, z: float, *, rgb=(200, 205, 210)) -> ObjectSpec:
    """An electric kettle on its base: cylinder body, lid knob, handle and spout."""
    return _static(name, "electric_kettle", (
        Part("cylinder", (0.09, 0.02), Pose((0, 0, 0.01)), rgba=rgba((30, 30, 30))),
        Part("cylinder", (0.08, 0.2), Pose((0, 0, 0.12)), rgba=rgba(rgb)),
        Part("cylinder", (0.02, 0.03), Pose((0, 0, 0.235)), rgba=rgba((30, 30, 30))),
        Part("box", (0.03, 0.03, 0.16), Pose((0.1, 0, 0.13)), rgba=rgba((30, 30, 30))),
        Part("box", (0.06, 0.03, 0.03), Pose((-0.1, 0, 0.18)), rgba=rgba(rgb))), xy, z)


def bottle_of_coffee(name: str, xy, z: float) -> ObjectSpec:
    """A bottle of cold-brew coffee: dark brown bottle, cream label, black cap."""
    return _static(name, "bottle_of_coffee", (
        Part("cylinder", (0.04, 0.18), Pose((0, 0, 0.09)), rgba=rgba((60, 35, 20))),
        Part("cylinder", (0.0405, 0.07), Pose((0, 0, 0.09)), rgba=rgba((235, 225, 200)), collide=False),
        Part("cylinder", (0.022, 0.05), Pose((0, 0, 0.205)), rgba=rgba((60, 35, 20))),
        Part("cylinder", (0.024, 0.02), Pose((0, 0, 0.24)), rgba=rgba((15, 15, 15)))), xy, z)


def coffee_table(name: str, xy, *, size=(0.6, 1.0)) -> ObjectSpec:
    """A low coffee table (0.45 m)."""
    return table(name, "coffee_table", center_xy=xy, size_xy=size, height=0.45, rgb=(110, 75, 45), seed=13).obj
