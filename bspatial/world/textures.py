"""Procedural textures for household objects, drawn with PIL at build time (never downloaded).

Textures carry identity where shape alone does not: the printed label of a cereal or oatmeal box or a
bag of chips, a book's spine and title band, wood grain on countertops and desks, the pips of a die,
a pizza's toppings. Every function is deterministic in its arguments (colours and text), so the same
scene spec always yields the same pixels; colours are picked by the scene generator's seeded rng.

Example:
    >>> tex = label_texture("cereal", "CEREAL", (200, 40, 30))
    >>> tex.image.shape, tex.image.dtype
    ((128, 96, 3), dtype('uint8'))
"""

from __future__ import annotations

import functools

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from bspatial.world.spec import Texture

RGB = tuple[int, int, int]


def rgba(rgb: RGB, alpha: float = 1.0) -> tuple[float, float, float, float]:
    """0-255 RGB -> the 0-1 RGBA a :class:`~bspatial.world.spec.Part` takes."""
    return (rgb[0] / 255, rgb[1] / 255, rgb[2] / 255, alpha)


@functools.lru_cache(maxsize=1)
def _font() -> ImageFont.ImageFont:
    return ImageFont.load_default()


def _texture(name: str, image: Image.Image, repeat=(1.0, 1.0)) -> Texture:
    return Texture(name=name, image=np.asarray(image.convert("RGB"), dtype=np.uint8).copy(), repeat=repeat)


def _bold_text(draw: ImageDraw.ImageDraw, xy, text: str, fill: RGB, scale: int = 2) -> None:
    """Large block letters without a TrueType font: the default bitmap font drawn at an offset grid."""
    for dx in range(scale):
        for dy in range(scale):
            draw.text((xy[0] + dx, xy[1] + dy), text, fill=fill, font=_font())


def label_texture(name: str, text: str, base: RGB, *, accent: RGB = (250, 240, 210), size=(96, 128)) -> Texture:
    """A printed package label: coloured background, a light panel with the product name, a stripe.

    Used for boxes of cereal / oatmeal, bags of chips and soda cans; the big-lettered name and the
    bowl-like ellipse make the package read as food packaging in a 224x224 head frame.
    """
    w, h = size
    img = Image.new("RGB", size, base)
    draw = ImageDraw.Draw(img)
    draw.rectangle([0, int(h * 0.12), w, int(h * 0.16)], fill=accent)
    draw.rectangle([int(w * 0.08), int(h * 0.2), int(w * 0.92), int(h * 0.42)], fill=accent)
    _bold_text(draw, (int(w * 0.12), int(h * 0.25)), text[:10], fill=base)
    draw.ellipse([int(w * 0.2), int(h * 0.55), int(w * 0.8), int(h * 0.85)], fill=(240, 235, 225),
                 outline=(120, 80, 40), width=3)
    draw.ellipse([int(w * 0.3), int(h * 0.6), int(w * 0.7), int(h * 0.72)], fill=(215, 170, 90))
    return _texture(name, img)


def wood_texture(name: str, base: RGB = (150, 105, 65), *, seed: int = 0, repeat=(2.0, 2.0)) -> Texture:
    """Wood grain: wavy darker lines over a base tone (countertops, desks, bookcases, tables)."""
    return Texture(name=name, image=_wood_image(tuple(int(c) for c in base), int(seed)), repeat=repeat)


@functools.lru_cache(maxsize=512)
def _wood_image(base: RGB, seed: int) -> np.ndarray:
    # Cached: scene generators redraw layouts many times (split planning samples thousands of
    # instances) and the grain depends only on (base, seed). The array is read-only so that a
    # cached image can never be changed through one scene.
    rng = np.random.default_rng(seed)
    h, w = 128, 128
    y = np.arange(h)[:, None]
    x = np.arange(w)[None, :]
    phase = rng.uniform(0, 2 * np.pi)
    grain = np.sin(0.35 * y + 2.5 * np.sin(x / 17.0 + phase)) * 0.5 + 0.5
    shade = 0.82 + 0.18 * grain
    image = np.clip(np.asarray(base, float)[None, None, :] * shade[..., None], 0, 255).astype(np.uint8)
    image.flags.writeable = False
    return image


def book_texture(name: str, cover: RGB, *, title_band: RGB = (235, 215, 120)) -> Texture:
    """A book cover / spine: solid cloth colour, two gilt bands and a title block."""
    w, h = 48, 128
    img = Image.new("RGB", (w, h), cover)
    draw = ImageDraw.Draw(img)
    for y0 in (int(h * 0.08), int(h * 0.86)):
        draw.rectangle([0, y0, w, y0 + 4], fill=title_band)
    draw.rectangle([int(w * 0.2), int(h * 0.3), int(w * 0.8), int(h * 0.6)], fill=title_band)
    for i in range(3):
        y0 = int(h * 0.34) + 9 * i
        draw.line([int(w * 0.28), y0, int(w * 0.72), y0], fill=cover, width=2)
    return _texture(name, img)


def paperback_texture(name: str, cover: RGB) -> Texture:
    """A paperback's printed cover: picture panel and title lines on a glossy colour."""
    w, h = 96, 128
    img = Image.new("RGB", (w, h), cover)
    draw = ImageDraw.Draw(img)
    draw.rectangle([8, 10, w - 8, 34], fill=(250, 250, 245))
    draw.line([14, 18, w - 14, 18], fill=(30, 30, 30), width=3)
    draw.line([14, 27, w - 30, 27], fill=(30, 30, 30), width=2)
    draw.ellipse([20, 46, w - 20, h - 16], fill=(255 - cover[0], 255 - cover[1], 255 - cover[2]))
    return _texture(name, img)


def dice_texture(name: str, body: RGB = (245, 245, 240), pip: RGB = (20, 20, 20)) -> Texture:
    """A die face: five pips (the texture repeats on every face of a box)."""
    s = 64
    img = Image.new("RGB", (s, s), body)
    draw = ImageDraw.Draw(img)
    r = 6
    for cx, cy in ((16, 16), (48, 16), (32, 32), (16, 48), (48, 48)):
        draw.ellipse([cx - r, cy - r, cx + r, cy + r], fill=pip)
    return _texture(name, img)


def board_game_texture(name: str, colours: tuple[RGB, RGB]) -> Texture:
    """A board game lid: checkerboard with a coloured border and a title bar."""
    s = 128
    img = Image.new("RGB", (s, s), colours[0])
    draw = ImageDraw.Draw(img)
    step = 16
    for i in range(1, 7):
        for j in range(1, 7):
            if (i + j) % 2 == 0:
                draw.rectangle([i * step, j * step, (i + 1) * step, (j + 1) * step], fill=colours[1])
    draw.rectangle([0, 0, s, 12], fill=(250, 250, 250))
    return _texture(name, img)


def pizza_texture(name: str) -> Texture:
    """A pizza top: tomato red with cheese patches and pepperoni slices."""
    s = 64
    img = Image.new("RGB", (s, s), (200, 70, 40))
    draw = ImageDraw.Draw(img)
    for cx, cy in ((14, 20), (40, 12), (50, 40), (22, 48), (34, 30)):
        draw.ellipse([cx - 9, cy - 7, cx + 9, cy + 7], fill=(245, 220, 140))
    for cx, cy in ((26, 14), (48, 26), (12, 36), (38, 50)):
        draw.ellipse([cx - 5, cy - 5, cx + 5, cy + 5], fill=(150, 30, 25))
    return _texture(name, img)


def fabric_texture(name: str, base: RGB, *, stripe: RGB | None = None, repeat=(3.0, 3.0)) -> Texture:
    """Woven fabric (bedding, sofa): a fine check of two tones."""
    s = 32
    img = Image.new("RGB", (s, s), base)
    draw = ImageDraw.Draw(img)
    stripe = stripe or tuple(int(c * 0.85) for c in base)
    for i in range(0, s, 8):
        draw.line([i, 0, i, s], fill=stripe, width=2)
        draw.line([0, i, s, i], fill=stripe, width=2)
    return _texture(name, img, repeat)


def tile_texture(name: str, base: RGB = (205, 200, 190), grout: RGB = (150, 145, 140), repeat=(8.0, 8.0)) -> Texture:
    """Floor or wall tiles."""
    s = 64
    img = Image.new("RGB", (s, s), base)
    draw = ImageDraw.Draw(img)
    draw.rectangle([0, 0, s - 1, s - 1], outline=grout, width=2)
    return _texture(name, img, repeat)


def plank_floor_texture(name: str, base: RGB = (165, 120, 80), repeat=(6.0, 6.0)) -> Texture:
    """Floor planks: wood grain with plank seams."""
    wood = wood_texture(name, base, seed=7).image.copy()
    wood[::32, :, :] = (np.asarray(base) * 0.55).astype(np.uint8)
    wood[:, ::64, :] = (np.asarray(base) * 0.6).astype(np.uint8)
    return Texture(name=name, image=wood, repeat=repeat)
