"""The asset gallery: a picture of every object category and room type."""
