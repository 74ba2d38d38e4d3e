"""A random-weight Llama checkpoint of a given shape, made by PyTorch on the GPU host itself, so that
nothing of an 8B model's size travels (scripts/bench/gpu-8b.sh). Writes DIR/config.json and
DIR/model.safetensors (bfloat16; the weights ~ N(0, 0.02), norms 1), each through a temporary file
renamed into place.

    python3 make_random_model.py DIR CONFIG.json [--seed N]
"""
import argparse
import json
import os
import time

import torch
from safetensors.torch import save_file


def layer_shapes(c):
    """The tensors of one decoder layer of a Llama, by Hugging Face name: [out, in]."""
    h, i = c["hidden_size"], c["intermediate_size"]
    hd = c.get("head_dim") or h // c["num_attention_heads"]
    q, kv = c["num_attention_heads"] * hd, c["num_key_value_heads"] * hd
    return {
        "self_attn.q_proj.weight": [q, h],
        "self_attn.k_proj.weight": [kv, h],
        "self_attn.v_proj.weight": [kv, h],
        "self_attn.o_proj.weight": [h, q],
        "mlp.gate_proj.weight": [i, h],
        "mlp.up_proj.weight": [i, h],
        "mlp.down_proj.weight": [h, i],
        "input_layernorm.weight": [h],
        "post_attention_layernorm.weight": [h],
    }


def random_weights(c, device, generator):
    def tensor(shape):
        if len(shape) == 1:
            return torch.ones(shape, dtype=torch.bfloat16, device=device)
        return torch.empty(shape, dtype=torch.bfloat16, device=device).normal_(0.0, 0.02, generator=generator)

    v, h = c["vocab_size"], c["hidden_size"]
    weights = {"model.embed_tokens.weight": tensor([v, h]), "model.norm.weight": tensor([h])}
    for layer in range(c["num_hidden_layers"]):
        for name, shape in layer_shapes(c).items():
            weights[f"model.layers.{layer}.{name}"] = tensor(shape)
    if not c.get("tie_word_embeddings", False):
        weights["lm_head.weight"] = tensor([v, h])
    return weights


def write_atomic(path, write):
    tmp = f"{path}.tmp{os.getpid()}"
    write(tmp)
    os.replace(tmp, path)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("dir")
    parser.add_argument("config")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    with open(args.config) as f:
        config = json.load(f)
    os.makedirs(args.dir, exist_ok=True)
    t0 = time.monotonic()
    device = "cuda" if torch.cuda.is_available() else "cpu"
    generator = torch.Generator(device=device).manual_seed(args.seed)
    weights = random_weights(config, device, generator)
    host = {name: t.cpu() for name, t in weights.items()}
    del weights
    made = time.monotonic() - t0
    write_atomic(os.path.join(args.dir, "model.safetensors"), lambda p: save_file(host, p, metadata={"format": "pt"}))
    write_atomic(os.path.join(args.dir, "config.json"), lambda p: open(p, "w").write(json.dumps({**config, "torch_dtype": "bfloat16"}, indent=2)))
    parameters = sum(t.numel() for t in host.values())
    print(json.dumps({"parameters": parameters, "made_seconds": round(made, 2), "seconds": round(time.monotonic() - t0, 2)}))


if __name__ == "__main__":
    main()
