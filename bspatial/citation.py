"""How to cite BEHAVIOR-Spatial; shared by the metric modules, dataset builders and cards."""

CITATION = """
@misc{behaviorspatial2026,
  title = {BEHAVIOR-Spatial: Does Spatial Understanding in Vision-Language Models Reach Robot Actions?},
  year = {2026},
  note = {Benchmark paper; see the behavior-spatial package README},
}
"""
HOMEPAGE = "https://github.com/behavior-spatial/behavior-spatial"
