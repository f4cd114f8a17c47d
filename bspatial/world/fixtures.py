"""Room-defining fixtures and furniture: the pieces that tell a viewer which room they are in.

The support furniture of the task scenes (countertop, tables, bed, shelving) lives in
:mod:`bspatial.world.furniture` and the navigation plans' pieces (toilet, bathtub, pedestal sink, car,
garage door, oven, shelf) in :mod:`bspatial.world.floorplans`; this module adds what the furnished rooms of
:mod:`bspatial.world.rooms` need besides: a shower stall, a kitchen sink run, a wardrobe, a nightstand with
a lamp, a child's bed, toys, a computer desk and swivel chair, a TV on a stand, a dining set, a washer and
dryer, a workbench with a toolbox and wall shelves, a bicycle, a floor lamp, rugs, a picture, a door leaf.

Convention (as the wall-standing pieces of the other two modules): built at the origin with yaw 0, the
piece's back is on local +x (it stands against a wall on its +x side and faces -x); the frame sits on
the floor under the middle of its footprint. Categories are BEHAVIOR categories (validated by bddl).
Every builder is deterministic in its arguments; colours and sizes come from the caller's seeded rng.

Example:
    >>> w = wardrobe("wardrobe_0")
    >>> w.category, w.static
    ('wardrobe', True)
"""

from __future__ import annotations

import math

from bspatial.world.furniture import bed, straight_chair, table
from bspatial.world.spec import ObjectSpec, Part, Pose
from bspatial.world.textures import RGB, fabric_texture, rgba, tile_texture, wood_texture

_ALONG_Y = (math.cos(math.pi / 4), math.sin(math.pi / 4), 0.0, 0.0)   # a cylinder's axis onto y (wheels)
_ALONG_X = (math.cos(math.pi / 4), 0.0, math.sin(math.pi / 4), 0.0)   # a cylinder's axis onto x (front doors)
STEEL = (195, 197, 202)
DARK = (35, 35, 40)


def _fixture(name: str, category: str, parts) -> ObjectSpec:
    return ObjectSpec(name=name, category=category, parts=tuple(parts), static=True)


def _flat(size, pos, rgb, *, collide: bool = False, texture=None) -> Part:
    """A decoration box (door seams, handles, screens): drawn, never touched."""
    return Part("box", size, Pose(pos), rgba=rgba(rgb) if texture is None else rgba((255, 255, 255)),
                texture=texture, collide=collide)


# ----------------------------------------------------------------------------- bathroom


def shower_stall(name: str, *, size: float = 0.9) -> ObjectSpec:
    """A corner shower: white tray, tiled back wall, frosted glass front and side, chrome head and mixer."""
    glass = (0.78, 0.86, 0.9, 0.35)
    tiles = tile_texture(f"{name}_tiles", base=(230, 240, 245), grout=(170, 185, 190), repeat=(4.0, 6.0))
    h = 2.0
    parts = [Part("box", (size, size, 0.08), Pose((0, 0, 0.04)), rgba=rgba((248, 248, 248))),
             _flat((size - 0.12, size - 0.12, 0.005), (0, 0, 0.083), (185, 200, 210)),
             Part("box", (0.03, size, h), Pose((size / 2 - 0.015, 0, h / 2)), rgba=rgba((255, 255, 255)), texture=tiles),
             Part("box", (0.012, size, h - 0.1), Pose((-size / 2 + 0.006, 0, h / 2 + 0.05)), rgba=glass),
             Part("box", (size, 0.012, h - 0.1), Pose((0, -size / 2 + 0.006, h / 2 + 0.05)), rgba=glass),
             Part("box", (0.03, 0.03, h), Pose((-size / 2, -size / 2, h / 2)), rgba=rgba(STEEL)),
             _flat((0.3, 0.02, 0.02), (size / 2 - 0.18, 0, 1.9), STEEL),
             Part("cylinder", (0.09, 0.02), Pose((size / 2 - 0.3, 0, 1.88)), rgba=rgba(STEEL), collide=False),
             _flat((0.04, 0.12, 0.08), (size / 2 - 0.05, 0, 1.1), STEEL)]
    return _fixture(name, "shower_stall", parts)


def towel_rack(name: str, *, towel_rgb: RGB = (90, 150, 200)) -> ObjectSpec:
    """A wall towel rail with a hanging towel."""
    return _fixture(name, "towel_rack", (
        _flat((0.04, 0.6, 0.02), (0.02, 0, 1.2), STEEL, collide=True),
        _flat((0.03, 0.5, 0.55), (-0.01, 0, 0.95), towel_rgb)))


# ----------------------------------------------------------------------------- kitchen


def sink_counter(name: str, *, width: float = 1.2, seed: int = 0) -> ObjectSpec:
    """A kitchen sink run (category ``drop_in_sink``): cabinet base, stone top with a steel basin, a tall tap."""
    depth, height = 0.6, 0.9
    stone = tile_texture(f"{name}_stone", base=(205, 200, 190), grout=(195, 190, 180), repeat=(2.0, 2.0))
    body = (225, 222, 215) if seed % 2 else (120, 140, 150)
    parts = [Part("box", (depth - 0.05, width, height - 0.04), Pose((0.025, 0, (height - 0.04) / 2)), rgba=rgba(body)),
             Part("box", (depth, width, 0.04), Pose((0, 0, height - 0.02)), rgba=rgba((255, 255, 255)), texture=stone),
             _flat((0.4, 0.55, 0.01), (-0.02, 0, height + 0.001), (150, 152, 158)),
             _flat((0.34, 0.49, 0.012), (-0.02, 0, height + 0.002), (95, 97, 102)),
             Part("cylinder", (0.015, 0.32), Pose((0.22, 0, height + 0.16)), rgba=rgba(STEEL), collide=False),
             _flat((0.2, 0.025, 0.025), (0.13, 0, height + 0.31), STEEL)]
    for i, y in enumerate((-width / 4, width / 4)):
        parts.append(_flat((0.01, width / 2 - 0.03, height - 0.16), (-depth / 2 + 0.02, y, (height - 0.04) / 2),
                           tuple(int(c * 0.9) for c in body)))
        parts.append(_flat((0.02, 0.12, 0.015), (-depth / 2 + 0.01, y, height - 0.14), (80, 80, 85)))
    return _fixture(name, "drop_in_sink", parts)


def dishwasher(name: str) -> ObjectSpec:
    """A built-in dishwasher: steel front with a control strip and a bar handle."""
    return _fixture(name, "dishwasher", (
        Part("box", (0.6, 0.6, 0.86), Pose((0, 0, 0.43)), rgba=rgba(STEEL)),
        _flat((0.01, 0.58, 0.08), (-0.3, 0, 0.8), DARK),
        _flat((0.03, 0.4, 0.02), (-0.31, 0, 0.72), (120, 120, 125))))


# ----------------------------------------------------------------------------- bedroom / child's room


def wardrobe(name: str, *, width: float = 1.2, rgb: RGB = (150, 110, 75), seed: int = 0) -> ObjectSpec:
    """A two-door wardrobe, 2 m tall: wood body, door seam, two long handles, plinth."""
    depth, h = 0.6, 2.0
    wood = wood_texture(f"{name}_wood", rgb, seed=seed)
    dark = tuple(int(c * 0.55) for c in rgb)
    return _fixture(name, "wardrobe", (
        Part("box", (depth, width, h - 0.08), Pose((0, 0, 0.08 + (h - 0.08) / 2)), rgba=rgba((255, 255, 255)), texture=wood),
        Part("box", (depth - 0.04, width - 0.04, 0.08), Pose((0.02, 0, 0.04)), rgba=rgba(dark)),
        _flat((0.005, 0.01, h - 0.2), (-depth / 2 - 0.002, 0, h / 2 + 0.04), dark),
        _flat((0.03, 0.02, 0.4), (-depth / 2 - 0.015, 0.06, 1.1), (200, 200, 205)),
        _flat((0.03, 0.02, 0.4), (-depth / 2 - 0.015, -0.06, 1.1), (200, 200, 205))))


def nightstand(name: str, *, rgb: RGB = (140, 100, 65), lamp_rgb: RGB = (240, 225, 190), seed: int = 0) -> ObjectSpec:
    """A bedside table with a drawer and a table lamp (base, stem, shade) on top."""
    wood = wood_texture(f"{name}_wood", rgb, seed=seed)
    return _fixture(name, "nightstand", (
        Part("box", (0.42, 0.45, 0.55), Pose((0, 0, 0.275)), rgba=rgba((255, 255, 255)), texture=wood),
        _flat((0.005, 0.38, 0.005), (-0.212, 0, 0.38), tuple(int(c * 0.5) for c in rgb)),
        Part("sphere", (0.018,), Pose((-0.22, 0, 0.45)), rgba=rgba((60, 60, 60)), collide=False),
        Part("cylinder", (0.06, 0.03), Pose((0, 0, 0.565)), rgba=rgba(DARK), collide=False),
        Part("cylinder", (0.01, 0.25), Pose((0, 0, 0.7)), rgba=rgba((190, 170, 120)), collide=False),
        Part("cylinder", (0.12, 0.16), Pose((0, 0, 0.86)), rgba=rgba(lamp_rgb), collide=False)))


def double_bed(name: str, *, size=(2.05, 1.6), blanket_rgb: RGB = (70, 110, 170)) -> ObjectSpec:
    """A double bed with its headboard on local +x (:func:`bspatial.world.furniture.bed`)."""
    return bed(name, center_xy=(0.0, 0.0), size_xy=size, blanket_rgb=blanket_rgb).obj


def child_bed(name: str, *, blanket_rgb: RGB = (240, 120, 160)) -> ObjectSpec:
    """A small child's bed (1.6 x 0.9 m) with a low safety rail on its open side and a bright blanket."""
    base = bed(name, center_xy=(0.0, 0.0), size_xy=(1.6, 0.9), blanket_rgb=blanket_rgb).obj
    rail = (Part("box", (0.9, 0.04, 0.2), Pose((0.2, -0.47, 0.65)), rgba=rgba((250, 210, 80))),
            Part("box", (0.9, 0.04, 0.2), Pose((0.2, 0.47, 0.65)), rgba=rgba((250, 210, 80))))
    return ObjectSpec(name=name, category="bed", parts=base.parts + rail, static=True)


def toy_train(name: str) -> ObjectSpec:
    """A wooden toy train on the floor: engine with chimney and two coloured wagons on wheels, along local y."""
    parts = []
    colours = ((220, 50, 40), (40, 120, 220), (250, 200, 40))
    for k, rgb in enumerate(colours):
        y = -0.22 + 0.22 * k
        parts.append(Part("box", (0.14, 0.18, 0.1), Pose((0, y, 0.08)), rgba=rgba(rgb)))
        for dy in (-0.05, 0.05):
            for dx in (-0.075, 0.075):
                parts.append(Part("cylinder", (0.03, 0.02), Pose((dx, y + dy, 0.03), _ALONG_X), rgba=rgba(DARK),
                                  collide=False))
    parts += [Part("box", (0.12, 0.08, 0.1), Pose((0, -0.26, 0.18)), rgba=rgba((220, 50, 40))),
              Part("cylinder", (0.025, 0.08), Pose((0, -0.16, 0.17)), rgba=rgba(DARK), collide=False)]
    return _fixture(name, "toy_train", parts)


def toy_car(name: str, *, rgb: RGB = (40, 170, 90)) -> ObjectSpec:
    """A child's ride-on toy car: rounded body, seat, steering wheel, four fat wheels."""
    c = rgba(rgb)
    parts = [Part("box", (0.45, 0.7, 0.22), Pose((0, 0, 0.2)), rgba=c),
             Part("box", (0.4, 0.3, 0.15), Pose((0, 0.05, 0.38)), rgba=c),
             Part("cylinder", (0.07, 0.015), Pose((0, -0.15, 0.4)), rgba=rgba(DARK), collide=False)]
    for sx in (-0.24, 0.24):
        for sy in (-0.25, 0.25):
            parts.append(Part("cylinder", (0.09, 0.06), Pose((sx, sy, 0.09), _ALONG_X), rgba=rgba(DARK)))
    return _fixture(name, "toy_car", parts)


def toy_figure(name: str, *, rgb: RGB = (250, 150, 40)) -> ObjectSpec:
    """A big plush toy figure sitting on the floor (a bright animal: body, head, round ears, arms)."""
    c, light = rgba(rgb), rgba(tuple(min(255, v + 60) for v in rgb))
    return _fixture(name, "toy_figure", (
        Part("sphere", (0.16,), Pose((0, 0, 0.16)), rgba=c),
        Part("sphere", (0.12,), Pose((0, 0, 0.4)), rgba=c),
        Part("sphere", (0.05,), Pose((0, 0.09, 0.52)), rgba=light, collide=False),
        Part("sphere", (0.05,), Pose((0, -0.09, 0.52)), rgba=light, collide=False),
        Part("capsule", (0.04, 0.12), Pose((-0.02, 0.17, 0.22)), rgba=c, collide=False),
        Part("capsule", (0.04, 0.12), Pose((-0.02, -0.17, 0.22)), rgba=c, collide=False),
        Part("sphere", (0.045,), Pose((-0.11, 0, 0.38)), rgba=light, collide=False)))


def play_rug(name: str, *, size=(1.4, 1.4)) -> ObjectSpec:
    """A bright foam play mat of coloured squares (category ``carpet``)."""
    lx, ly = size
    colours = ((230, 70, 70), (70, 160, 230), (250, 210, 60), (90, 200, 110))
    parts = []
    n = 4
    for i in range(n):
        for j in range(n):
            parts.append(_flat((lx / n, ly / n, 0.012), (-lx / 2 + (i + 0.5) * lx / n, -ly / 2 + (j + 0.5) * ly / n, 0.007),
                               colours[(i + 2 * j) % 4]))
    return _fixture(name, "carpet", parts)


# ----------------------------------------------------------------------------- office


def computer_desk(name: str, *, width: float = 1.4, rgb: RGB = (120, 85, 55), seed: int = 0) -> tuple[ObjectSpec, ...]:
    """A desk with a monitor (keyboard and mouse in front of it) on top and a computer tower beside the legs.

    Three objects (``desk``, ``monitor``, ``desktop_computer``), in one frame: place them together.
    """
    depth = 0.7
    desk = table(name, "desk", center_xy=(0.0, 0.0), size_xy=(depth, width), height=0.75, rgb=rgb, seed=seed).obj
    monitor = _fixture(f"{name}_monitor", "monitor", (
        Part("box", (0.03, 0.62, 0.38), Pose((0.17, 0, 1.05)), rgba=rgba((25, 25, 28))),
        _flat((0.005, 0.58, 0.34), (0.153, 0, 1.05), (40, 80, 140)),
        _flat((0.006, 0.3, 0.12), (0.152, -0.1, 1.12), (230, 230, 235)),
        Part("box", (0.04, 0.06, 0.12), Pose((0.2, 0, 0.81)), rgba=rgba((60, 60, 65)), collide=False),
        Part("box", (0.2, 0.25, 0.01), Pose((0.2, 0, 0.755)), rgba=rgba((60, 60, 65)), collide=False),
        _flat((0.16, 0.45, 0.02), (-0.08, 0, 0.76), (45, 45, 50)),
        _flat((0.09, 0.06, 0.03), (-0.08, -0.35, 0.765), (45, 45, 50))))
    tower = _fixture(f"{name}_computer", "desktop_computer", (
        Part("box", (0.45, 0.2, 0.45), Pose((0.05, width / 2 - 0.2, 0.225)), rgba=rgba((40, 40, 45))),
        _flat((0.005, 0.02, 0.02), (-0.176, width / 2 - 0.2, 0.4), (60, 200, 90))))
    return desk, monitor, tower


def swivel_chair(name: str, *, rgb: RGB = (30, 30, 35)) -> ObjectSpec:
    """An office swivel chair: five-star base on casters, gas lift, seat, tall backrest on local +x, armrests."""
    c, steel = rgba(rgb), rgba((150, 150, 155))
    parts = [Part("cylinder", (0.03, 0.35), Pose((0, 0, 0.25)), rgba=steel),
             Part("box", (0.48, 0.48, 0.08), Pose((0, 0, 0.48)), rgba=c),
             Part("box", (0.06, 0.46, 0.55), Pose((0.23, 0, 0.85)), rgba=c),
             Part("box", (0.3, 0.04, 0.04), Pose((0, 0.25, 0.66)), rgba=c, collide=False),
             Part("box", (0.3, 0.04, 0.04), Pose((0, -0.25, 0.66)), rgba=c, collide=False)]
    for k in range(5):
        a = 2 * math.pi * k / 5
        parts.append(Part("box", (0.3, 0.04, 0.03), Pose((0.15 * math.cos(a), 0.15 * math.sin(a), 0.06),
                                                         (math.cos(a / 2), 0, 0, math.sin(a / 2))), rgba=steel, collide=False))
        parts.append(Part("sphere", (0.03,), Pose((0.29 * math.cos(a), 0.29 * math.sin(a), 0.03)), rgba=rgba(DARK)))
    return _fixture(name, "swivel_chair", parts)


# ----------------------------------------------------------------------------- living room / dining room


def tv_stand(name: str, *, width: float = 1.5, rgb: RGB = (70, 55, 45), seed: int = 0) -> ObjectSpec:
    """A low media console with a flat TV (category ``standing_tv``): black bezel, a lit picture, a foot."""
    wood = wood_texture(f"{name}_wood", rgb, seed=seed)
    tv_w = min(1.3, width - 0.1)
    return _fixture(name, "standing_tv", (
        Part("box", (0.42, width, 0.5), Pose((0, 0, 0.25)), rgba=rgba((255, 255, 255)), texture=wood),
        _flat((0.005, width - 0.1, 0.005), (-0.212, 0, 0.25), tuple(int(c * 0.5) for c in rgb)),
        Part("box", (0.12, 0.35, 0.03), Pose((0.05, 0, 0.515)), rgba=rgba(DARK), collide=False),
        Part("box", (0.04, 0.06, 0.12), Pose((0.05, 0, 0.58)), rgba=rgba(DARK), collide=False),
        Part("box", (0.05, tv_w, tv_w * 0.58), Pose((0.05, 0, 0.64 + tv_w * 0.29)), rgba=rgba((15, 15, 18))),
        _flat((0.005, tv_w - 0.05, tv_w * 0.58 - 0.05), (0.023, 0, 0.64 + tv_w * 0.29), (50, 110, 170)),
        _flat((0.006, tv_w * 0.5, tv_w * 0.2), (0.022, -tv_w * 0.15, 0.64 + tv_w * 0.2), (70, 150, 80))))


def dining_set(name: str, *, size=(1.6, 0.9), rgb: RGB = (150, 105, 65), chair_rgb: RGB = (60, 40, 30),
               seed: int = 0, ends: bool = True, wall_side: bool = False) -> tuple[ObjectSpec, ...]:
    """A dining table (``breakfast_table``, long side along local y) and its ``straight_chair`` objects.

    Two chairs on each long side and, with ``ends``, one at each end; ``wall_side`` leaves the +x long side
    empty (the table stands against a wall there). Objects in one frame: place them together.
    """
    lx, ly = size[1], size[0]
    out = [table(name, "breakfast_table", center_xy=(0.0, 0.0), size_xy=(lx, ly), height=0.75, rgb=rgb, seed=seed).obj]
    seats = [((-lx / 2 - 0.25, y), math.pi) for y in (-ly / 4, ly / 4)]
    if not wall_side:
        seats += [((lx / 2 + 0.25, y), 0.0) for y in (-ly / 4, ly / 4)]
    if ends:
        seats += [((0.0, -ly / 2 - 0.25), -math.pi / 2), ((0.0, ly / 2 + 0.25), math.pi / 2)]
    for k, ((x, y), yaw) in enumerate(seats):
        out.append(straight_chair(f"{name}_chair_{k}", (x, y), yaw=yaw, rgb=chair_rgb))
    return tuple(out)


def sideboard(name: str, *, width: float = 1.4, rgb: RGB = (110, 75, 50), seed: int = 0) -> ObjectSpec:
    """A dining-room sideboard (category ``bottom_cabinet``): low wood cabinet, three doors, a bowl on top."""
    wood = wood_texture(f"{name}_wood", rgb, seed=seed)
    parts = [Part("box", (0.45, width, 0.85), Pose((0, 0, 0.425)), rgba=rgba((255, 255, 255)), texture=wood),
             Part("cylinder", (0.16, 0.08), Pose((0, 0.2, 0.89)), rgba=rgba((230, 230, 225)), collide=False)]
    for k in range(3):
        y = -width / 3 + k * width / 3
        parts.append(_flat((0.005, width / 3 - 0.04, 0.7), (-0.227, y, 0.43), tuple(int(c * 0.8) for c in rgb)))
        parts.append(Part("sphere", (0.02,), Pose((-0.24, y + width / 8, 0.6)), rgba=rgba((200, 180, 120)), collide=False))
    return _fixture(name, "bottom_cabinet", parts)


def area_rug(name: str, *, size=(2.0, 1.4), rgb: RGB = (150, 60, 55)) -> ObjectSpec:
    """A patterned rug (category ``carpet``): fabric field with a border."""
    lx, ly = size
    return _fixture(name, "carpet", (
        _flat((lx, ly, 0.01), (0, 0, 0.006), tuple(int(c * 0.6) for c in rgb)),
        _flat((lx - 0.2, ly - 0.2, 0.01), (0, 0, 0.008), rgb, texture=fabric_texture(f"{name}_fabric", rgb, repeat=(4.0, 4.0)))))


def floor_lamp(name: str, *, shade_rgb: RGB = (245, 235, 205)) -> ObjectSpec:
    """A standing lamp: weighted base, thin pole, drum shade at 1.5 m."""
    return _fixture(name, "floor_lamp", (
        Part("cylinder", (0.15, 0.03), Pose((0, 0, 0.015)), rgba=rgba(DARK)),
        Part("cylinder", (0.015, 1.45), Pose((0, 0, 0.75)), rgba=rgba((170, 150, 110))),
        Part("cylinder", (0.2, 0.28), Pose((0, 0, 1.6)), rgba=rgba(shade_rgb), collide=False)))


def picture(name: str, *, size=(0.8, 0.6), colours: tuple[RGB, RGB] = ((60, 120, 170), (230, 190, 90))) -> ObjectSpec:
    """A framed picture hung on the wall behind it (local +x), centre at 1.5 m: a landscape in two tones."""
    w, h = size
    return _fixture(name, "picture", (
        _flat((0.03, w, h), (0.015, 0, 1.5), (40, 30, 25)),
        _flat((0.005, w - 0.08, h * 0.45), (-0.002, 0, 1.5 + h * 0.2), colours[0]),
        _flat((0.005, w - 0.08, h * 0.4), (-0.002, 0, 1.5 - h * 0.22), colours[1])))


# ----------------------------------------------------------------------------- utility room / garage


def washer(name: str, *, dryer: bool = False) -> ObjectSpec:
    """A front-loading washing machine (or ``clothes_dryer``): white box, round dark door, control panel."""
    white = rgba((240, 241, 243))
    return _fixture(name, "clothes_dryer" if dryer else "washer", (
        Part("box", (0.6, 0.6, 0.85), Pose((0, 0, 0.425)), rgba=white),
        Part("cylinder", (0.19, 0.02), Pose((-0.3, 0, 0.4), _ALONG_X), rgba=rgba((170, 172, 178)), collide=False),
        Part("cylinder", (0.14, 0.025), Pose((-0.3, 0, 0.4), _ALONG_X),
             rgba=rgba((60, 70, 85) if not dryer else (90, 90, 95)), collide=False),
        _flat((0.01, 0.58, 0.1), (-0.3, 0, 0.77), (205, 207, 210)),
        Part("cylinder", (0.03, 0.02), Pose((-0.31, 0.2, 0.77), _ALONG_X), rgba=rgba((90, 90, 95)), collide=False)))


def laundry_sink(name: str) -> ObjectSpec:
    """A utility sink on legs (category ``furniture_sink``): deep white basin and a tap."""
    w = rgba((238, 238, 236))
    parts = [Part("box", (0.55, 0.6, 0.35), Pose((0, 0, 0.72)), rgba=w),
             _flat((0.42, 0.48, 0.01), (-0.02, 0, 0.9), (180, 185, 190)),
             Part("cylinder", (0.015, 0.25), Pose((0.22, 0, 1.02)), rgba=rgba(STEEL), collide=False)]
    for sx in (-0.24, 0.24):
        for sy in (-0.26, 0.26):
            parts.append(Part("box", (0.04, 0.04, 0.55), Pose((sx, sy, 0.275)), rgba=w))
    return _fixture(name, "furniture_sink", parts)


def workbench(name: str, *, width: float = 1.6, seed: int = 0) -> ObjectSpec:
    """A garage workbench (category ``toolbox``): heavy top, legs, pegboard with tools, a red toolbox on top.

    Catalogued by its toolbox (bddl has no workbench category): the part a viewer names first.
    """
    wood = wood_texture(f"{name}_wood", (175, 135, 90), seed=seed)
    parts = [Part("box", (0.7, width, 0.06), Pose((0, 0, 0.87)), rgba=rgba((255, 255, 255)), texture=wood),
             Part("box", (0.6, width - 0.1, 0.03), Pose((0, 0, 0.2)), rgba=rgba((120, 90, 60))),
             Part("box", (0.03, width, 0.9), Pose((0.335, 0, 1.35)), rgba=rgba((200, 175, 135))),
             Part("box", (0.3, 0.5, 0.22), Pose((0.05, width / 4, 1.01)), rgba=rgba((200, 30, 30))),
             _flat((0.31, 0.51, 0.02), (0.05, width / 4, 1.06), (40, 40, 40))]
    for sx in (-0.3, 0.3):
        for sy in (-width / 2 + 0.05, width / 2 - 0.05):
            parts.append(Part("box", (0.06, 0.06, 0.84), Pose((sx, sy, 0.42)), rgba=rgba((90, 90, 95))))
    for k, (dy, dz, length) in enumerate(((-0.5, 1.5, 0.3), (-0.3, 1.45, 0.25), (-0.1, 1.55, 0.35), (0.2, 1.4, 0.22))):
        parts.append(_flat((0.02, 0.04, length), (0.31, dy, dz), ((60, 60, 65), (200, 40, 30), (230, 180, 30), (60, 60, 65))[k]))
    return _fixture(name, "toolbox", parts)


def wall_shelf(name: str, *, width: float = 1.2, rgb: RGB = (150, 150, 155),
               items: tuple[RGB, ...] = ((200, 160, 100), (60, 120, 200), (220, 220, 220))) -> ObjectSpec:
    """Two wall-hung shelf boards (category ``shelf``) at 1.45 m and 1.8 m with brackets and stored boxes."""
    parts = []
    for z in (1.45, 1.8):
        parts.append(Part("box", (0.3, width, 0.025), Pose((0, 0, z)), rgba=rgba(rgb)))
        for y in (-width / 2 + 0.08, width / 2 - 0.08):
            parts.append(_flat((0.02, 0.02, 0.15), (0.14, y, z - 0.08), tuple(int(c * 0.6) for c in rgb)))
    for k, c in enumerate(items):
        y = -width / 3 + k * width / 3
        parts.append(Part("box", (0.22, 0.22, 0.2), Pose((0, y, 1.56 if k % 2 else 1.91)), rgba=rgba(c), collide=False))
    return _fixture(name, "shelf", parts)


def bicycle(name: str, *, rgb: RGB = (30, 90, 180)) -> ObjectSpec:
    """A bicycle standing along local y: two wheels, frame, saddle, handlebar."""
    c = rgba(rgb)
    parts = []
    for y in (-0.52, 0.52):
        parts.append(Part("cylinder", (0.34, 0.04), Pose((0, y, 0.34), _ALONG_X), rgba=rgba((20, 20, 20))))
        parts.append(Part("cylinder", (0.28, 0.045), Pose((0, y, 0.34), _ALONG_X), rgba=rgba((150, 150, 150)), collide=False))
    parts += [Part("capsule", (0.02, 0.95), Pose((0, 0, 0.62), (math.cos(math.pi / 4), math.sin(math.pi / 4), 0, 0)), rgba=c),
              Part("capsule", (0.02, 0.4), Pose((0, -0.25, 0.48)), rgba=c, collide=False),
              Part("box", (0.12, 0.22, 0.05), Pose((0, -0.28, 0.9)), rgba=rgba((20, 20, 20)), collide=False),
              Part("capsule", (0.015, 0.5), Pose((0, 0.45, 0.95), _ALONG_X), rgba=rgba((60, 60, 60)), collide=False)]
    return _fixture(name, "bicycle", parts)


# ----------------------------------------------------------------------------- doors


def door_leaf(name: str, *, width: float = 0.9, rgb: RGB = (235, 230, 220)) -> ObjectSpec:
    """An opened interior door (category ``door``) standing in the local xz plane (thin along y): panel with
    two recessed fields and a handle; the hinge edge is at local x = +width/2."""
    c, field_rgb = rgba(rgb), tuple(int(v * 0.9) for v in rgb)
    return _fixture(name, "door", (
        Part("box", (width, 0.04, 2.0), Pose((0, 0, 1.0)), rgba=c),
        _flat((width - 0.2, 0.045, 0.7), (0, 0, 1.5), field_rgb),
        _flat((width - 0.2, 0.045, 0.7), (0, 0, 0.55), field_rgb),
        Part("capsule", (0.012, 0.1), Pose((-width / 2 + 0.08, 0, 1.0), _ALONG_X), rgba=rgba((180, 170, 120)),
             collide=False)))
