"""Put the object into the instructed layer of a shelved container (fridge, cabinet).

The pointing model names the object and, asked *where* the instruction puts it, a pixel on the goal; the
goal's depth is useless from the head camera (the layer floor is hidden behind the layer above, or above
the camera), so the goal's height comes from the shelf itself: the head camera's depth, turned into
base-frame points, shows each layer floor as a horizontal surface whose front edges line up on the
container's face; the floors are evenly spaced, so the instructed layer (counted from the bottom) is the
lowest floor plus whole pitches, even when some floors are hidden. The goal is where the pointer's ray
meets that floor's plane. When the head camera cannot see the goal (a layer above the camera), the
program raises the other hand and asks again through its wrist camera.

The object is taken from above at its near edge, so most of it sticks out ahead of the fingers. The API
leaves the hand's orientation to the arm, so the program reads it back after every move and aims the
held object, not the hand (the object's offset in the hand frame is fixed once grasped). It slides the
object into the layer at the floor's height, keeping the hand out of a layer too low for it, sets it down,
lets go, backs out and, if only the object's front went in, pushes it deeper with the closed hand. Low
layers need the torso bent, which over a container in front tips the hand back over the object; they are
reached side-on (a quarter turn, the arm's side to the container), where the bend tips the hand along the
face instead.
"""

import math
import re

import numpy as np

HEAD = "head"
WHERE = "where does the instruction put the object: "
FLOOR_MIN_Z = 0.02      # horizontal surfaces lower than this are the room floor
BIN_M = 0.01            # height histogram bin for finding horizontal surfaces
FLAT_TOL_M = 0.003      # a surface's points lie this close to its height
MIN_FLAT_POINTS = 30    # ... and there are at least this many of them
MIN_FLAT_DEPTH_M = 0.03  # ... spread at least this far in x (a face seen edge-on is not a floor)
MERGE_M = 0.04          # surfaces closer in height than this are one (a board's top and its lip)
FACE_TOL_M = 0.03       # a shelf floor's front edge lies this close to the container face
BAND_M = 0.10           # shelf points are taken this far either side of the goal's lateral position
NEAR_ROBOT_M = 0.55     # points nearer than this are the robot's own hands
OBJECT_RADIUS_M = 0.15  # the object's points lie this close (xy) to the pointed point
HAND_RADIUS_M = 0.08    # points this close (xy) to a hand's end-effector and not below it are the hand

STANDOFF_M = 0.45       # the grasp point this far ahead of the base after the first drive
GRASP_INSET_M = 0.01    # the fingers land this far inside the object's near edge
GRASP_DEPTH_M = 0.03    # the closed hand pushes this far below the seen top (the assisted grasp engages on contact)
LIFT_M = 0.12           # lift after the grasp
TRANSIT_M_S = 0.4       # hand speed away from contact (the step budget is tight for the long carry)
CARRY_X_M = 0.40        # the held object is carried with the hand this far ahead of the base
FACE_STANDOFF_M = 0.50  # the base stops this far in front of the container face ...
HIGH_LAYER_M = 1.0      # ... or, for layers above this (reached with the arm raised, farther out) ...
HIGH_FACE_STANDOFF_M = 0.62  # ... this far (nearer, the base meets the counter beside the fridge)
PRE_ENTRY_M = 0.15      # the hand first goes this far in front of the face, at the layer's height
FACE_GAP_M = 0.04       # the object's front stays this far out of the face until it is at the layer's height
ENTRY_M = 0.04          # the object's bottom travels this far above the layer floor
RELEASE_M = 0.015       # ... and is released this far above it
INSET_M = 0.08          # the object's centre ends this far inside the face ...
HAND_CLEAR_M = 0.02     # ... unless the hand must stay this far in front of the face (no room in the layer):
HAND_LENGTH_M = 0.115   # the wrist is this far behind the end-effector point along the hand ...
HAND_MARGIN_M = 0.04    # ... the hand reaches this much higher than its axis ...
BOARD_M = 0.03          # ... and must pass under the floor above, this thick
PUSH_Z_M = 0.05         # a half-inserted object is pushed in by the closed hand this high above the floor
PLACE_TRIES = 4         # aims per held-object placement ...
PLACE_TOL_M = 0.01      # ... until the hand is this close to where the object needs it
LOW_LAYER_M = 0.45      # layers below this are reached side-on with the torso bent ...
SIDE_FACE_M = 0.50      # ... the base centre this far from the face ...
SIDE_AHEAD_M = 0.50     # ... and the goal this far ahead of it
BACK_OFF_M = 0.12       # the open hand backs out of the face this far
LOOK_ARM = "left"       # the arm whose wrist camera looks for a goal the head camera cannot see, ...
LOOK = {"left": [0.3, 0.1, 1.45], "right": [0.3, -0.1, 1.45]}  # ... raised here


# ---------------------------------------------------------------------------- perception

def cloud(api, camera):
    """(H, W, 3) base-frame points seen by every pixel of ``camera`` (NaN where nothing is seen).

    A pinhole camera's rays are affine in the pixel once scaled to unit depth along the optical axis,
    so three corner rays and the centre ray give every pixel's ray; depth is along the optical axis.
    """
    depth = np.asarray(api.get_depth(camera), float)
    h, w = depth.shape
    centre = api.pixel_to_ray(w / 2, h / 2, camera)
    origin, axis = np.array(centre["origin"]), np.array(centre["direction"])

    def unit_depth(u, v):
        d = np.array(api.pixel_to_ray(u, v, camera)["direction"])
        return d / float(d @ axis)

    corner = unit_depth(0.5, 0.5)
    du = (unit_depth(w - 0.5, 0.5) - corner) / (w - 1)
    dv = (unit_depth(0.5, h - 0.5) - corner) / (h - 1)
    cols, rows = np.meshgrid(np.arange(w), np.arange(h))
    points = origin + (corner + cols[..., None] * du + rows[..., None] * dv) * depth[..., None]
    points[depth <= 0] = np.nan
    return points


def shelf_floors(points):
    """(heights, front-edge x) of the horizontal surfaces among ``points`` (N, 3) whose front edges line
    up (a container's layer floors, its base and its top), lowest first."""
    pts = points[np.isfinite(points).all(axis=1) & (points[:, 2] > FLOOR_MIN_Z)]
    if len(pts) < MIN_FLAT_POINTS:
        return [], []
    z = pts[:, 2]
    bins = np.floor(z / BIN_M).astype(int)
    counts = np.bincount(bins - bins.min())
    found = []
    for k in np.nonzero(counts >= MIN_FLAT_POINTS)[0]:
        low = (k + bins.min()) * BIN_M
        near = pts[(z >= low - BIN_M) & (z < low + 2 * BIN_M)]
        flat = near[np.abs(near[:, 2] - np.median(near[:, 2])) < FLAT_TOL_M]
        if len(flat) < MIN_FLAT_POINTS:
            continue
        x10, x90 = np.percentile(flat[:, 0], [10, 90])
        if x90 - x10 < MIN_FLAT_DEPTH_M:
            continue
        found.append((float(np.median(flat[:, 2])), float(np.percentile(flat[:, 0], 2)), len(flat)))
    merged = []
    for surface in sorted(found):
        if merged and surface[0] - merged[-1][0] < MERGE_M:
            if surface[2] > merged[-1][2]:
                merged[-1] = surface
            continue
        merged.append(surface)
    if not merged:
        return [], []
    face = float(np.median([s[1] for s in merged]))
    kept = [s for s in merged if abs(s[1] - face) < FACE_TOL_M]
    return [s[0] for s in kept], [s[1] for s in kept]


def layer_height(floors, layer):
    """(top of layer ``layer``, pitch) from evenly spaced shelf floors, counting layers from the bottom.

    The lowest floor seen may not be the first (a hand hides it): floors continue downwards in steps of the
    pitch while they stay above the room floor. A floor seen near the computed height is preferred (the
    container's top is not evenly spaced, but it is never asked for).
    """
    floors = sorted(floors)
    if len(floors) < 2:
        raise ValueError(f"need two shelf floors to count layers, saw {floors}")
    gaps = np.diff(floors)
    # The smallest gap is one pitch; a hidden floor makes a gap of two (the container's top, a bit more).
    multiples = np.maximum(np.round(gaps / gaps.min()), 1)
    pitch = float(np.median(gaps / multiples))
    first = floors[0] - pitch * math.floor((floors[0] - FLOOR_MIN_Z) / pitch)
    guess = first + (layer - 1) * pitch
    nearest = min(floors, key=lambda f: abs(f - guess))
    return (nearest if abs(nearest - guess) < pitch / 4 else guess), pitch


def ray_at_height(ray, z):
    """The point where ``ray`` (pixel_to_ray's dict) crosses the plane at height ``z``, or None."""
    origin, direction = np.array(ray["origin"]), np.array(ray["direction"])
    if abs(direction[2]) < 1e-6:
        return None
    t = (z - origin[2]) / direction[2]
    return None if t <= 0 else origin + t * direction


def object_extent(points, point, max_z=math.inf):
    """(near x, far x, centre y, top z, support z) of the object the base-frame ``point`` lies on, from the
    ``points`` (N, 3) around it: the support is the most common height in a ring around the object,
    the object is every point near ``point`` above the support (and at most ``max_z`` high: a hand on top
    of it is not the object). None when nothing stands out."""
    pts = points[np.isfinite(points).all(axis=1)]
    xy = np.linalg.norm(pts[:, :2] - np.asarray(point)[:2], axis=1)
    ring = pts[(xy > OBJECT_RADIUS_M) & (xy < OBJECT_RADIUS_M + 0.08) & (pts[:, 2] < point[2])]
    if len(ring) < MIN_FLAT_POINTS:
        return None
    heights = np.round(ring[:, 2] / BIN_M).astype(int)
    support = float(np.median(ring[heights == np.bincount(heights - heights.min()).argmax() + heights.min(), 2]))
    body = pts[(xy < OBJECT_RADIUS_M) & (pts[:, 2] > support + 0.008) & (pts[:, 2] <= max_z)]
    if len(body) < MIN_FLAT_POINTS:
        return None
    return (float(body[:, 0].min()), float(body[:, 0].max()), float((body[:, 1].min() + body[:, 1].max()) / 2),
            float(body[:, 2].max()), support)


def layer_of(instruction):
    """The layer number the instruction names ("layer 3"), or None."""
    found = re.search(r"layer\s+(\d+)", instruction)
    return int(found.group(1)) if found else None


def rotation(quat):
    """The rotation matrix of a (w, x, y, z) quaternion."""
    w, x, y, z = quat
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                     [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                     [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])


# ---------------------------------------------------------------------------- program

def hand(api, arm):
    """(position, rotation) of ``arm``'s hand in the base frame."""
    eef = api.get_state()["eef"][arm]
    return np.array(eef["position"]), rotation(eef["quat"])


def find_goal(api, arm):
    """(camera, pixel) of the pointer's goal: the head camera's, else a raised hand's wrist camera's."""
    where = WHERE + api.instruction
    found = api.point_at(where, HEAD)
    if found:
        return HEAD, found[0]
    api.move_ee_to(LOOK[arm], arm=arm)
    camera = f"{arm}_wrist"
    found = api.point_at(where, camera)
    return (camera, found[0]) if found else (None, None)


def place_hand(api, arm, offset, goal, speed=None, torso=False):
    """Move ``arm``'s hand to base-frame ``goal`` less the held object's offset as it hangs now: the
    hand's orientation is the arm's to choose, so aim, read the orientation reached and aim again (a goal
    out of reach for the hand as it is turned may be in reach once it has turned on the way)."""
    result, before = None, None
    for _ in range(PLACE_TRIES):
        position, R = hand(api, arm)
        target = goal(R @ offset)
        if result is not None and (np.linalg.norm(target - position) < PLACE_TOL_M
                                   or np.linalg.norm(position - before) < PLACE_TOL_M):
            break                                   # there, or stuck: aiming again only spends the budget
        before = position
        result = api.move_ee_to(target.tolist(), arm=arm, speed=speed, use_torso=torso)
    return result


def observe_object(api, max_z=math.inf):
    """(near x, far x, centre y, top z, support z) of what the pointer names for the instruction, or None."""
    seen = api.point_at(api.instruction, HEAD)
    pointed = api.pixel_to_point(seen[0][0], seen[0][1], HEAD) if seen else None
    if pointed is None or pointed[2] > max_z:
        return None
    points = cloud(api, HEAD).reshape(-1, 3)
    for eef in api.get_state()["eef"].values():       # the hands (and arms above them) are not the object
        x, y, z = eef["position"]
        points = points[~((np.hypot(points[:, 0] - x, points[:, 1] - y) < HAND_RADIUS_M) & (points[:, 2] > z - 0.04))]
    return object_extent(points, pointed, max_z)


def survey(api, layer, look_arm):
    """The instructed layer as seen now: {floor_z, pitch, face_x, goal_y, floors}, or None (logged).

    The pointer's goal pixel fixes where along the container; the head camera's points around it give
    the shelf floors and the face; the goal is the pointer's ray at the instructed floor's height.
    """
    camera, pixel = find_goal(api, look_arm)
    if camera is None:
        api.log("the pointer found no goal")
        return None
    hit = api.pixel_to_point(pixel[0], pixel[1], camera)
    ray = api.pixel_to_ray(pixel[0], pixel[1], camera)
    points = cloud(api, HEAD).reshape(-1, 3)
    band_y = hit[1] if hit is not None else float(ray["origin"][1])
    floors, fronts = shelf_floors(points[(np.abs(points[:, 1] - band_y) < BAND_M) & (points[:, 0] > NEAR_ROBOT_M)])
    if len(floors) < 2:
        api.log("no shelf floors seen", floors=floors, camera=camera)
        return None
    floor_z, pitch = layer_height(floors, layer)
    goal = ray_at_height(ray, floor_z)
    shelf = {"floor_z": floor_z, "pitch": pitch, "face_x": float(np.median(fronts)),
             "goal_y": float(goal[1]) if goal is not None else band_y, "floors": floors, "camera": camera}
    api.log("shelf", **shelf)
    return shelf


def drive(api, dx, dy):
    """Sideways first, then forward (a diagonal drive clips furniture corners); False if either failed."""
    sideways = api.move_base(0.0, dy, 0.0)
    forward = api.move_base(dx, 0.0, 0.0)
    if not (sideways.success and forward.success):
        api.log("drive", sideways=sideways.reason, forward=forward.reason)
    return sideways.success and forward.success


def run(api):
    layer = layer_of(api.instruction)
    extent = observe_object(api)
    shelf = survey(api, layer, LOOK_ARM) if layer is not None and extent is not None else None
    if shelf is None:
        api.log("no layer in the instruction, no object or no shelf", layer=layer, extent=extent)
        api.wait(1.0)
        return
    near_x, far_x, obj_y, top, support = extent
    arm = "left" if shelf["goal_y"] >= 0 else "right"   # the arm on the goal's side: the idle one stays clear
    lateral = 0.22 if arm == "left" else -0.22

    # Grasp from above, just inside the object's near edge: the rest of the object sticks out ahead.
    dx, dy = near_x + GRASP_INSET_M - STANDOFF_M, obj_y - lateral
    drive(api, dx, dy)
    extent = observe_object(api, top + 0.02) or extent              # re-observed in the new frame
    near_x, far_x, obj_y, top, support = extent
    grasp_x = near_x + GRASP_INSET_M
    api.close_gripper(arm)
    api.move_ee_to([grasp_x - 0.05, obj_y, top + 0.12], arm=arm, speed=TRANSIT_M_S)
    api.move_ee_to([grasp_x, obj_y, top + 0.04], arm=arm, speed=TRANSIT_M_S)
    api.move_ee_to([grasp_x, obj_y, top - GRASP_DEPTH_M], arm=arm, speed=0.08)
    if not api.get_state()["holding"][arm]:
        api.log("no grasp")
        return
    # The fingers touched the object GRASP_INSET_M inside its near edge (they may have nudged it there).
    position, R = hand(api, arm)
    radius = (far_x - near_x) / 2
    centre = np.array([position[0] - GRASP_INSET_M + radius, position[1], support])   # its bottom centre
    offset = R.T @ (centre - position)                              # fixed in the hand while it is held
    api.log("grasp", eef=position.tolist(), offset=offset.tolist())
    api.move_ee_by([0, 0, LIFT_M], arm=arm, speed=TRANSIT_M_S)

    # Carry: hand pulled in, base to the container face with the arm in line with the goal, look again.
    position, R = hand(api, arm)
    api.move_ee_to([CARRY_X_M, position[1], position[2]], arm=arm, speed=TRANSIT_M_S)
    floor_z, pitch = shelf["floor_z"], shelf["pitch"]   # heights do not move with the base
    # (The container may be out of the head camera's view here: go by the first survey, then look again.)
    face_x, goal_y = shelf["face_x"] - dx, shelf["goal_y"] - dy
    if floor_z < LOW_LAYER_M:
        # A low layer needs the torso bent, which tilts the hand back over the object when the robot faces
        # the container; side-on, the bend tilts it along the face instead. The arm's side faces the
        # container after a quarter turn, the goal SIDE_AHEAD_M ahead; the head no longer sees it.
        turn = -math.pi / 2 if arm == "left" else math.pi / 2
        side = -1.0 if arm == "right" else 1.0          # the container is on this side of the turned base
        # One drive and turn together (the step budget is tight): the goal must end up at (SIDE_AHEAD_M,
        # side * SIDE_FACE_M) in the turned frame, so the base goes to goal - R(turn) @ that.
        c, s = math.cos(turn), math.sin(turn)
        ahead, out = SIDE_AHEAD_M, side * SIDE_FACE_M
        moved = api.move_base(face_x - (c * ahead - s * out), goal_y - (s * ahead + c * out), turn)
        if not moved.success:
            api.log("drive", reason=moved.reason)
        into = np.array([0.0, side, 0.0])
        along = np.array([1.0, 0.0, 0.0])
        face_d, goal_a, torso = SIDE_FACE_M, SIDE_AHEAD_M, True
    else:
        standoff = FACE_STANDOFF_M if floor_z < HIGH_LAYER_M else HIGH_FACE_STANDOFF_M
        drive(api, face_x - standoff, goal_y - lateral)
        shelf = survey(api, layer, "right" if arm == "left" else "left")
        if shelf is None:
            return
        into, along = np.array([1.0, 0.0, 0.0]), np.array([0.0, 1.0, 0.0])
        face_d, goal_a, torso = shelf["face_x"], shelf["goal_y"], False
    insert(api, arm, offset, radius, into, along, face_d, goal_a, floor_z, pitch, torso)


def insert(api, arm, offset, radius, into, along, face_d, goal_a, floor_z, pitch, torso):
    """Slide the held object into the layer whose floor is at ``floor_z``: ``into`` points into the
    container (base frame), whose face lies at depth ``face_d`` along it; the goal is at ``goal_a`` along
    ``along``. In front of the face at the layer's height, slide in, set down, let go, back out."""
    up = np.array([0.0, 0.0, 1.0])

    def at(depth, across, z):
        return into * depth + along * across + up * z

    entry_z, release_z = floor_z + ENTRY_M, floor_z + RELEASE_M
    # The hand first goes to the layer's height itself: on the way it turns as the arm likes, and only
    # then is it known where the held object hangs from it.
    position, _ = hand(api, arm)
    for depth in (float(position @ into), face_d - PRE_ENTRY_M):
        api.move_ee_to(at(depth, goal_a, entry_z + ENTRY_M).tolist(), arm=arm, speed=TRANSIT_M_S, use_torso=torso)
    position, R = hand(api, arm)
    lift = max(entry_z, position[2] + float((R @ offset)[2]))
    out_d = lambda o: face_d - FACE_GAP_M - radius - float(o @ into)
    steps = [("above", lambda o: at(out_d(o), goal_a - float(o @ along), lift - o[2]), TRANSIT_M_S),
             ("outside", lambda o: at(out_d(o), goal_a - float(o @ along), entry_z - o[2]), TRANSIT_M_S)]
    for name, goal_of, speed in steps:
        result = place_hand(api, arm, offset, goal_of, speed, torso)
        api.log(name, ok=bool(result.success), reason=result.reason, eef=hand(api, arm)[0].tolist())
    # Does the hand fit under the floor above as it holds the object now? Else it stays out of the layer.
    position, R = hand(api, arm)
    hand_top = position[2] + max(0.0, float((R @ [0.0, 0.0, HAND_LENGTH_M])[2])) + HAND_MARGIN_M
    fits = hand_top < floor_z + pitch - BOARD_M and not torso   # bent over, the arm is too low to enter
    hand_d = math.inf if fits else face_d - HAND_CLEAR_M
    api.log("layer room", hand_top=hand_top, ceiling=floor_z + pitch - BOARD_M, hand_fits=bool(fits))
    in_d = lambda o: min(face_d + INSET_M - float(o @ into), hand_d)
    steps = [("inside", lambda o: at(in_d(o), goal_a - float(o @ along), entry_z - o[2]), 0.15),
             ("down", lambda o: at(in_d(o), goal_a - float(o @ along), release_z - o[2]), 0.05)]
    for name, goal_of, speed in steps:
        result = place_hand(api, arm, offset, goal_of, speed, torso)
        api.log(name, ok=bool(result.success), reason=result.reason, eef=hand(api, arm)[0].tolist())
    api.open_gripper(arm)
    api.move_ee_by((-BACK_OFF_M * into).tolist(), arm=arm, use_torso=torso)
    if not fits:
        # Only the object's front went in: push it deeper with the closed fingers, the hand still out.
        position, _ = hand(api, arm)
        api.close_gripper(arm)
        api.move_ee_to(at(float(position @ into), goal_a, floor_z + PUSH_Z_M).tolist(), arm=arm, use_torso=torso)
        api.move_ee_to(at(hand_d, goal_a, floor_z + PUSH_Z_M).tolist(), arm=arm, speed=0.08, use_torso=torso)
        api.move_ee_by((-BACK_OFF_M * into).tolist(), arm=arm, use_torso=torso)
    api.wait(2.0)
