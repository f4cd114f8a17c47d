"""Navigation expert: grid A* over the floor plan's occupancy grid, then a holonomic path follower.

The expert plans once from the spawn (privileged: the occupancy grid of the plan, the goal region),
shortcuts the 8-connected A* path with line-of-sight checks on the inflated grid, and drives the
base with velocity actions (action 0:3 = vx, vy in the robot frame, wz) along the waypoints, turning
to face the direction of travel (so the head camera looks where the robot goes) and, on arrival, the
destination. Arms and grippers hold their spawn pose.

Example:
    >>> import numpy as np
    >>> from bspatial.world.floorplans import get_floorplan
    >>> grid = get_floorplan("single_floor_house_toy_room").occupancy()
    >>> goal = np.zeros(grid.shape, bool); goal[grid.cell((1.5, 2.5))] = True
    >>> path = astar(grid, (2.0, -1.0), goal)
    >>> bool(np.allclose(path[-1], (1.5, 2.5), atol=0.1))
    True
"""

from __future__ import annotations

import heapq
import math

import numpy as np

from bspatial.catalog.schema import ACTION_SLICES
from bspatial.sim.backend import SimBackend
from bspatial.tasks.base import TaskInstance
from bspatial.world.floorplans import OccupancyGrid

CRUISE_SPEED_M_S = 0.6        # base cruise speed (BASE_MAX_SPEED is 1.0)
POSITION_GAIN = 1.5           # 1/s: speed = min(cruise, gain * distance to the final waypoint)
YAW_GAIN = 2.5                # 1/s proportional heading gain (BASE_MAX_YAW_RATE clips at 1.5 rad/s)
WAYPOINT_TOL_M = 0.15         # a waypoint counts as passed within this distance
TURN_FIRST_RAD = math.radians(60)  # heading error above which the base turns before translating
GOAL_MARGIN_M = 0.15          # the planner aims this far inside the goal criterion (robust to tracking error)


def astar(grid: OccupancyGrid, start_xy, goal_mask: np.ndarray) -> list[np.ndarray]:
    """Shortest 8-connected path of cell centres from ``start_xy`` to any cell of ``goal_mask``.

    The start cell may be blocked (the robot pressed against an inflated border); every other cell
    must be free. Raises ValueError when no free goal cell is reachable.
    """
    start = grid.cell(start_xy)
    if not grid.in_bounds(start):
        raise ValueError(f"start {tuple(start_xy)} lies outside the occupancy grid")
    goals = np.argwhere(goal_mask & ~grid.blocked)
    if not len(goals):
        raise ValueError("goal region has no free cell")
    blocked = grid.blocked
    nx, ny = grid.shape
    moves = [(di, dj, math.hypot(di, dj)) for di in (-1, 0, 1) for dj in (-1, 0, 1) if di or dj]

    def h(c):   # octile distance to the nearest goal cell (admissible)
        d = np.abs(goals - c)
        return float(np.min(d.max(1) + (math.sqrt(2) - 1) * d.min(1)))

    g = {start: 0.0}
    parent: dict[tuple[int, int], tuple[int, int]] = {}
    heap = [(h(start), 0.0, start)]
    while heap:
        _, cost, cur = heapq.heappop(heap)
        if cost > g.get(cur, math.inf):
            continue
        if goal_mask[cur] and not blocked[cur]:
            cells = [cur]
            while cells[-1] in parent:
                cells.append(parent[cells[-1]])
            return [grid.center(c) for c in reversed(cells)]
        for di, dj, step in moves:
            nb = (cur[0] + di, cur[1] + dj)
            if not (0 <= nb[0] < nx and 0 <= nb[1] < ny) or blocked[nb]:
                continue
            if di and dj and (blocked[cur[0] + di, cur[1]] or blocked[cur[0], cur[1] + dj]):
                continue        # no corner cutting
            new = cost + step
            if new < g.get(nb, math.inf):
                g[nb], parent[nb] = new, cur
                heapq.heappush(heap, (new + h(nb), new, nb))
    raise ValueError(f"no path from {tuple(np.round(start_xy, 2))} to the goal region")


def line_free(grid: OccupancyGrid, a, b) -> bool:
    """Whether the straight segment a -> b crosses only free cells (sampled every quarter cell)."""
    n = max(2, int(math.ceil(np.linalg.norm(np.subtract(b, a)) / (grid.resolution / 4))))
    for t in np.linspace(0.0, 1.0, n):
        if not grid.is_free(np.asarray(a) + t * (np.asarray(b) - np.asarray(a))):
            return False
    return True


def shortcut(grid: OccupancyGrid, path: list[np.ndarray]) -> list[np.ndarray]:
    """Greedy line-of-sight simplification: keep the farthest visible point from each kept point."""
    if len(path) <= 2:
        return list(path)
    out, i = [path[0]], 0
    while i < len(path) - 1:
        j = len(path) - 1
        while j > i + 1 and not line_free(grid, path[i], path[j]):
            j -= 1
        out.append(path[j])
        i = j
    return out


def _wrap(angle: float) -> float:
    return (angle + math.pi) % (2 * math.pi) - math.pi


class NavigationExpert:
    """Policy callable ``observation -> 23-dim action`` for a navigation :class:`TaskInstance`.

    Args:
        backend: the backend running the instance (for the hold action of arms and grippers).
        instance: a navigation instance (see :mod:`bspatial.tasks.navigation`).
    """

    def __init__(self, backend: SimBackend, instance: TaskInstance) -> None:
        from bspatial.tasks import navigation  # navigation imports this module's siblings only lazily

        self.sim, self.instance = backend, instance
        self.grid = navigation.plan_of(instance).occupancy()
        self.goal_mask = navigation.goal_mask(instance, margin=GOAL_MARGIN_M)
        self.face_xy = navigation.destination_point(instance)
        self._waypoints: list[np.ndarray] = []
        self._hold: np.ndarray | None = None

    def plan(self, start_xy) -> list[np.ndarray]:
        """A* + shortcut waypoints (world xy) from ``start_xy`` into the goal region."""
        return shortcut(self.grid, astar(self.grid, start_xy, self.goal_mask))[1:]

    def __call__(self, observation) -> np.ndarray:
        x, y, yaw = (float(v) for v in observation.state.base_pose)
        if observation.step == 0 or self._hold is None:
            self._hold = self.sim.hold_action()
            self._waypoints = self.plan((x, y))
        action = self._hold.copy()
        pos = np.array([x, y])
        while len(self._waypoints) > 1 and np.linalg.norm(self._waypoints[0] - pos) < WAYPOINT_TOL_M:
            self._waypoints.pop(0)
        if not self._waypoints:
            action[ACTION_SLICES["base"]] = 0.0
            return action
        target = self._waypoints[0]
        delta = target - pos
        dist = float(np.linalg.norm(delta))
        final = len(self._waypoints) == 1
        if final and dist < WAYPOINT_TOL_M / 3:
            heading = math.atan2(self.face_xy[1] - y, self.face_xy[0] - x)
            speed = 0.0
        else:
            heading = math.atan2(delta[1], delta[0])
            remaining = dist + sum(float(np.linalg.norm(b - a)) for a, b in zip(self._waypoints, self._waypoints[1:]))
            speed = min(CRUISE_SPEED_M_S, POSITION_GAIN * remaining)
        err = _wrap(heading - yaw)
        if abs(err) > TURN_FIRST_RAD and not (final and speed == 0.0):
            speed = 0.0          # turn towards the next leg before moving (keeps the body inside the corridor)
        v_world = speed * delta / max(dist, 1e-9)
        c, s = math.cos(yaw), math.sin(yaw)
        action[ACTION_SLICES["base"]] = (c * v_world[0] + s * v_world[1], -s * v_world[0] + c * v_world[1],
                                         YAW_GAIN * err)
        return action
