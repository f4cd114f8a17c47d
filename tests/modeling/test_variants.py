import pytest
import torch
from torch import nn
from transformers import AutoModel

from bspatial.modeling import BSpatialVLAForActionPrediction
from bspatial.modeling.tiny_backbone import tiny_policy_config
from bspatial.modeling.variants import apply_lora, count_parameters, load_action_expert, lora_target_modules


def test_lora_targets_every_linear_of_both_towers_and_nothing_else(model):
    targets = lora_target_modules(model)
    linears = {n for n, m in model.named_modules() if isinstance(m, nn.Linear)}
    assert set(targets) == {n for n in linears if n.startswith(("vlm.language_model.", "vlm.visual."))}
    assert any(".linear_attn." in n for n in targets) and any(".self_attn." in n for n in targets)
    assert any(n.startswith("vlm.visual.merger.") for n in targets)
    assert not any("patch_embed" in n or n.startswith("action_expert") for n in targets)
    assert isinstance(model.vlm.visual.patch_embed.proj, nn.Conv3d)


def test_lora_parameter_count_matches_formula(model, batch):
    linears = {n: m for n, m in model.named_modules() if isinstance(m, nn.Linear)}
    targets = lora_target_modules(model)
    expert = sum(p.numel() for p in model.action_expert.parameters())
    base_total = sum(p.numel() for p in model.parameters())
    lora = sum(16 * (linears[n].in_features + linears[n].out_features) for n in targets)
    peft_model, report = apply_lora(model)
    assert report.trainable == lora + expert
    # The total adds the adapters and the trainable copy of the expert (modules_to_save).
    assert report.total == base_total + lora + expert
    assert report.fraction == pytest.approx((lora + expert) / report.total)
    assert count_parameters(peft_model).trainable == report.trainable
    # Gradients reach the adapters of both towers and the expert copy; base weights stay frozen.
    peft_model.compute_loss(batch).backward()
    grads = {n for n, p in peft_model.named_parameters() if p.grad is not None}
    assert any("language_model" in n and "lora_B" in n for n in grads)
    assert any("visual" in n and "lora_B" in n for n in grads)
    assert any("action_expert.modules_to_save" in n for n in grads)
    assert not any("base_layer" in n or "original_module" in n for n in grads)


def test_lora_merges_into_a_plain_checkpoint(tmp_path, model, batch, fixed_noise):
    peft_model, _ = apply_lora(model)
    with torch.no_grad():  # move the adapters and the expert away from their identity init
        for name, p in peft_model.named_parameters():
            if p.requires_grad:
                p.add_(0.01 * torch.randn_like(p))
    expected = peft_model.sample_actions(batch, noise=fixed_noise)
    merged = peft_model.merge_and_unload()
    assert isinstance(merged, BSpatialVLAForActionPrediction)
    merged.save_pretrained(tmp_path)
    loaded = AutoModel.from_pretrained(tmp_path)
    torch.testing.assert_close(loaded.sample_actions(batch, noise=fixed_noise), expected, atol=1e-5, rtol=1e-4)


def test_droid_style_init_reports_and_copies_the_expert(tmp_path, model):
    torch.manual_seed(7)
    donor = BSpatialVLAForActionPrediction(tiny_policy_config(action_dim=7))  # another robot's action width
    donor.save_pretrained(tmp_path)
    vlm_before = {k: v.clone() for k, v in model.vlm.state_dict().items()}
    report = load_action_expert(model, tmp_path)
    assert report.shape_mismatched == ["action_expert.action_in_proj.weight", "action_expert.action_out_proj.bias",
                                       "action_expert.action_out_proj.weight"]
    assert report.missing == [] and report.unexpected == []
    donor_state = donor.state_dict()
    for key in report.matched:
        assert torch.equal(model.state_dict()[key], donor_state[key]), key
    assert "action_expert.layers.0.cross_attn.k_proj.weight" in report.matched
    assert all(torch.equal(v, vlm_before[k]) for k, v in model.vlm.state_dict().items())
    with pytest.raises(ValueError, match="3 shape-mismatched"):
        load_action_expert(model, tmp_path, strict=True)


def test_droid_style_init_lists_missing_and_unexpected(model):
    donor = {k: v for k, v in model.state_dict().items() if k.startswith("action_expert.")}
    del donor["action_expert.final_norm.weight"]
    donor["action_expert.extra.weight"] = torch.zeros(2)
    report = load_action_expert(model, donor)
    assert report.missing == ["action_expert.final_norm.weight"]
    assert report.unexpected == ["action_expert.extra.weight"]
    assert "missing" in str(report)
