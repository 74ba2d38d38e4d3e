"""Golden importance for `ablation.candidates: all` (test/integration/allLayerParity.test.ts).

A tiny Llama made with transformers' own LlamaConfig and `save_pretrained` (float32 safetensors,
seeded random weights), loaded back in float64. For the candidates of `candidates: all` in the
runner's order (each layer in turn: the attention's q, k, v and o projection weights, then the
MLP's gate, up and down; each matrix row-major), r = -theta * g with g the sum over the runner's
batches (sequences sorted by length, stable, cut into batch_size) of the gradient of the batch's
mean next-token cross-entropy over its real tokens, by torch autograd.

    python allLayerGolden.py SPEC.json OUT_DIR

SPEC.json: {"sequences": [[token ids]], "batch_size": B}. Writes OUT_DIR/model/ (the Hugging Face
folder), OUT_DIR/rise.f64 (little-endian float64) and OUT_DIR/expected.json ({"parameters",
"candidates": [{"name", "numel"}]}).
"""

import json
import math
import os
import sys

import torch
from transformers import AutoModelForCausalLM, LlamaConfig


def tiny_llama():
    config = LlamaConfig(
        vocab_size=300,
        hidden_size=64,
        intermediate_size=96,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=256,
        rms_norm_eps=1e-5,
        bos_token_id=256,
        eos_token_id=257,
        tie_word_embeddings=False,
    )
    model = AutoModelForCausalLM.from_config(config, torch_dtype=torch.float32)
    gen = torch.Generator().manual_seed(7)
    with torch.no_grad():
        for name, p in model.named_parameters():
            noise = torch.randn(p.shape, generator=gen, dtype=torch.float32)
            if name.endswith("norm.weight"):
                p.copy_(1.0 + 0.2 * noise)
            elif name == "model.embed_tokens.weight":
                p.copy_(noise)
            elif name == "lm_head.weight":
                p.copy_(noise * 3.0 / math.sqrt(config.hidden_size))
            else:
                p.copy_(noise * 1.5 / math.sqrt(p.shape[1]))
    return model


def all_layer_candidates(model):
    out = []
    for i, layer in enumerate(model.model.layers):
        for part in ("q_proj", "k_proj", "v_proj", "o_proj"):
            out.append((f"model.layers.{i}.self_attn.{part}.weight", getattr(layer.self_attn, part).weight))
        for part in ("gate_proj", "up_proj", "down_proj"):
            out.append((f"model.layers.{i}.mlp.{part}.weight", getattr(layer.mlp, part).weight))
    return out


def loss_rise(model, candidates, sequences, batch_size):
    for p in model.parameters():
        p.requires_grad_(False)
    for _, w in candidates:
        w.requires_grad_(True)
    order = sorted(range(len(sequences)), key=lambda s: len(sequences[s]))
    for start in range(0, len(order), batch_size):
        batch = [sequences[s] for s in order[start : start + batch_size]]
        inputs = torch.zeros((len(batch), max(len(s) for s in batch) - 1), dtype=torch.long)
        for r, s in enumerate(batch):
            inputs[r, : len(s) - 1] = torch.tensor(s[:-1])
        logprobs = torch.log_softmax(model(input_ids=inputs).logits, dim=-1)
        total = torch.zeros((), dtype=torch.float64)
        for r, s in enumerate(batch):
            total = total - logprobs[r, torch.arange(len(s) - 1), torch.tensor(s[1:])].sum()
        (total / sum(len(s) - 1 for s in batch)).backward()
    return torch.cat([(-(w.detach() * w.grad)).reshape(-1) for _, w in candidates])


def main():
    spec_file, out_dir = sys.argv[1], sys.argv[2]
    with open(spec_file) as f:
        spec = json.load(f)
    torch.set_num_threads(max(1, min(2, os.cpu_count() or 1)))
    os.makedirs(out_dir, exist_ok=True)
    folder = os.path.join(out_dir, "model")
    tiny_llama().save_pretrained(folder, safe_serialization=True)
    model = AutoModelForCausalLM.from_pretrained(folder, torch_dtype=torch.float64)
    model.eval()
    candidates = all_layer_candidates(model)
    rise = loss_rise(model, candidates, spec["sequences"], spec["batch_size"])
    rise.numpy().astype("<f8").tofile(os.path.join(out_dir, "rise.f64"))
    parameters = sum(p.numel() for p in model.parameters())
    with open(os.path.join(out_dir, "expected.json"), "w") as f:
        json.dump({"parameters": parameters, "candidates": [{"name": n, "numel": w.numel()} for n, w in candidates]}, f)


if __name__ == "__main__":
    main()
