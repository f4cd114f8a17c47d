"""`bspatial sim gallery`: pictures of every object category and room type (:mod:`bspatial.construction.gallery.pictures`)."""

from __future__ import annotations

from pathlib import Path

import typer


def sim_gallery(
    out: Path = typer.Option(..., "--out", help="Folder for objects/*.png, rooms/*.png, contact_sheet.png, categories.md."),
    categories: str = typer.Option("", "--categories", help="Comma-separated object categories (default: all)."),
    rooms: str = typer.Option("", "--rooms", help="Comma-separated room types ('all', the default, for every type; 'none' for no rooms)."),
    seed: int = typer.Option(0, "--seed", min=0, help="Appearance seed of the category pictures."),
) -> None:
    """Write one PNG per object category (3 instances, near and far) and per room type, plus a contact sheet."""
    from bspatial.construction.gallery.pictures import write_gallery

    chosen = [c for c in categories.split(",") if c] or None
    room_list = [] if rooms == "none" else None if rooms == "all" else ([r for r in rooms.split(",") if r] or None)
    try:
        written = write_gallery(out, categories=chosen, rooms=room_list, seed=seed)
    except ValueError as error:
        typer.echo(f"error: {error}", err=True)
        raise typer.Exit(code=2) from None
    typer.echo(f"wrote {len(written)} files to {out}")
