"""Textures the asset library prints on its own models (not the builders' labels): a product name round a
bottle, a newspaper's front page, a recycling symbol, a woven wicker pattern.

Each is drawn with PIL, deterministic in its arguments and memoised, so every instance of a category shares
one :class:`~bspatial.world.spec.Texture` object; the names (``asset/...``) spell the arguments, because a
backend builds one material per texture name.
"""

from __future__ import annotations

import functools
import math

import numpy as np
from PIL import Image, ImageDraw

from bspatial.world.spec import Texture
from bspatial.world.textures import _bold_text

RGB255 = tuple[int, int, int]


def _texture(name: str, image: Image.Image) -> Texture:
    return Texture(name=name, image=np.asarray(image.convert("RGB"), dtype=np.uint8).copy())


@functools.lru_cache(maxsize=64)
def wrap_label(text: str, paper: RGB255, ink: RGB255, band: RGB255) -> Texture:
    """A label wrapped once round a bottle: the name printed twice (any half of the bottle shows it whole),
    between two coloured bands."""
    w, h = 128, 32   # drawn at half size, then doubled: the bitmap font's letters read at a distance
    img = Image.new("RGB", (w, h), paper)
    draw = ImageDraw.Draw(img)
    draw.rectangle([0, 0, w, 3], fill=band)
    draw.rectangle([0, h - 4, w, h], fill=band)
    for x0 in (0, w // 2):   # centred in its half; the default bitmap font is 6 px a letter
        _bold_text(draw, (x0 + max(1, (w // 2 - 6 * len(text)) // 2), 9), text, fill=ink, scale=1)
        draw.rectangle([x0 + 8, 22, x0 + w // 2 - 8, 23], fill=band)
    img = img.resize((2 * w, 2 * h), Image.NEAREST)
    # The wrap starts at the bottle's +x side; rolled by a quarter, the words centre on +x and -x, where the
    # gallery and the head camera look from (otherwise the seam between them faces the viewer).
    img = Image.fromarray(np.roll(np.asarray(img), w // 2, axis=1))
    return _texture(f"asset/label/{text}/{paper}/{ink}/{band}", img)


@functools.lru_cache(maxsize=8)
def front_page(paper: RGB255 = (236, 234, 226)) -> Texture:
    """A newspaper's folded front page, image top at the masthead: a black masthead, two headline blocks,
    a photo box and columns of grey text lines."""
    w, h = 128, 160
    img = Image.new("RGB", (w, h), paper)
    draw = ImageDraw.Draw(img)
    draw.rectangle([6, 6, w - 6, 24], fill=(25, 25, 25))
    _bold_text(draw, (28, 9), "DAILY NEWS", fill=paper, scale=1)
    draw.rectangle([6, 28, w - 6, 29], fill=(25, 25, 25))
    draw.rectangle([8, 34, w - 8, 46], fill=(40, 40, 40))          # the headline
    draw.rectangle([8, 50, int(w * 0.7), 58], fill=(60, 60, 60))    # the sub-headline
    for column in range(3):
        x0 = 8 + column * (w - 16) // 3
        for y in range(64, h - 6, 5):
            draw.rectangle([x0, y, x0 + (w - 16) // 3 - 5, y + 1], fill=(110, 110, 110))
    draw.rectangle([8, 64, int(w * 0.5), 104], fill=(120, 130, 140))   # a photo over the first columns
    return _texture(f"asset/front_page/{paper}", img)


@functools.lru_cache(maxsize=16)
def recycling_symbol(field: RGB255, ink: RGB255 = (250, 250, 250)) -> Texture:
    """The recycling symbol (three chasing arrows round a triangle) in ``ink`` on ``field``."""
    s = 128
    img = Image.new("RGB", (s, s), field)
    draw = ImageDraw.Draw(img)
    c, r = s / 2, s * 0.34
    corners = [(c + r * math.cos(a), c + 6 - r * math.sin(a)) for a in (math.pi / 2, math.pi * 7 / 6, -math.pi / 6)]
    for i in range(3):
        (x0, y0), (x1, y1) = corners[i], corners[(i + 1) % 3]
        # Each side: a thick bar from near one corner to near the next, an arrow head at its end.
        ax, ay = x0 + 0.12 * (x1 - x0), y0 + 0.12 * (y1 - y0)
        bx, by = x0 + 0.72 * (x1 - x0), y0 + 0.72 * (y1 - y0)
        draw.line([(ax, ay), (bx, by)], fill=ink, width=11)
        dx, dy = (x1 - x0), (y1 - y0)
        length = math.hypot(dx, dy)
        ux, uy = dx / length, dy / length
        tip = (bx + 22 * ux, by + 22 * uy)
        draw.polygon([tip, (bx - 15 * uy, by + 15 * ux), (bx + 15 * uy, by - 15 * ux)], fill=ink)
    return _texture(f"asset/recycling/{field}/{ink}", img)


@functools.lru_cache(maxsize=16)
def wicker(base: RGB255) -> Texture:
    """A basket weave: alternating over-under strands in two tones of ``base``, with dark gaps."""
    s, cell = 128, 16
    light = tuple(min(255, int(c * 1.2)) for c in base)
    dark = tuple(int(c * 0.7) for c in base)
    img = Image.new("RGB", (s, s), tuple(int(c * 0.4) for c in base))
    draw = ImageDraw.Draw(img)
    for i in range(s // cell):
        for j in range(s // cell):
            x, y = i * cell, j * cell
            if (i + j) % 2:
                draw.rectangle([x + 1, y + 3, x + cell - 2, y + cell - 4], fill=light)
            else:
                draw.rectangle([x + 3, y + 1, x + cell - 4, y + cell - 2], fill=dark)
    return Texture(name=f"asset/wicker/{base}", image=np.asarray(img, dtype=np.uint8).copy(), repeat=(1.0, 1.0))
