"""Dataset cards from hub_cards/: the configs YAML the Hub reads, counts, quality, and template errors."""

import pytest
import yaml

from bspatial.construction.publishing.cards import render_dataset_card, size_category


def _front_matter(card: str) -> dict:
    assert card.startswith("---\n")
    return yaml.safe_load(card.split("---\n")[1])


@pytest.mark.parametrize("suite", ["vqa", "ir"])
def test_card_front_matter_lists_every_config_with_its_parquet(suite):
    card = render_dataset_card(suite, configs=["all", "reach_plate"], counts={"all": 1500, "reach_plate": 40},
                               preset="mini", seed=3, fingerprint="f00d", version="9.9", quality_markdown="| q |")
    meta = _front_matter(card)
    assert [c["config_name"] for c in meta["configs"]] == ["all", "reach_plate"]
    assert meta["configs"][1]["data_files"] == [{"split": "test", "path": "reach_plate/test-00000-of-00001.parquet"}]
    assert meta["size_categories"] == ["1K<n<10K"]
    assert "$" not in card.replace("$ ", "")          # every placeholder was filled
    assert "`bspatial build --preset mini --seed 3`" in card and "`f00d`" in card
    assert "| reach_plate | 40 |" in card


def test_size_buckets():
    assert [size_category(n) for n in (0, 999, 1000, 99_999, 100_000)] == \
        ["n<1K", "n<1K", "1K<n<10K", "10K<n<100K", "n>100K"]


def test_unknown_placeholder_and_bad_arguments_raise(tmp_path):
    template = tmp_path / "t.md"
    template.write_text("---\nconfigs:\n$configs_yaml\n---\n$not_a_field\n")
    with pytest.raises(KeyError, match="not_a_field"):
        render_dataset_card("vqa", configs=["a"], counts={"a": 1}, preset="p", seed=0, fingerprint="f",
                            version="v", template=template)
    with pytest.raises(ValueError, match="suite must be one of .*got 'audio'"):
        render_dataset_card("audio", configs=["a"], counts={}, preset="p", seed=0, fingerprint="f", version="v")
    with pytest.raises(ValueError, match="configs must name at least one config"):
        render_dataset_card("ir", configs=[], counts={}, preset="p", seed=0, fingerprint="f", version="v")
