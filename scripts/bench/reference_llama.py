#!/usr/bin/python3
"""The Python reference of `npm run bench`, row 4: multiple-choice scoring in plain PyTorch.

A Llama forward pass written from the equations of Hugging Face's modeling_llama.py (RMSNorm,
rotary embeddings with rotate-half, grouped-query attention, SwiGLU MLP), no transformers. The
weights come from the model folder's config.json and model.safetensors, whose header is parsed
here (8-byte little-endian length, JSON header, raw data). Items are read from a runner `score`
job (native-runner/PROTOCOL.md) and scored the way lm-eval's Hugging Face backend scores them
when it does not batch: every choice is its own full sequence, (context ++ choice) without its
last token, one forward pass per choice, log_softmax over the whole sequence, and the choice's
score is the sum of the log-probabilities of its tokens.

    /usr/bin/python3 scripts/bench/reference_llama.py --model DIR --job JOB.json --out OUT.json \
        [--threads N] [--repeats R] [--limit N]

OUT.json: the torch version and thread count, load time, seconds of each repeat over all items
(best first is not assumed: `seconds` lists them in order), and the scores in the runner's
scores.jsonl shape ({id, choices: [{logprob, tokens, greedy}]}) from the last repeat.
"""
import argparse
import json
import math
import struct
import sys
import time

import torch

DTYPES = {"F32": torch.float32, "F16": torch.float16, "BF16": torch.bfloat16}


def read_safetensors(path):
    """Every tensor of a .safetensors file as float32, by name."""
    with open(path, "rb") as f:
        data = f.read()
    (header_len,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8 : 8 + header_len].decode("utf-8"))
    base = 8 + header_len
    tensors = {}
    for name, spec in header.items():
        if name == "__metadata__":
            continue
        dtype = DTYPES.get(spec["dtype"])
        if dtype is None:
            raise ValueError(f"{path}: tensor {name} has dtype {spec['dtype']}; F32, F16 and BF16 are read")
        start, end = spec["data_offsets"]
        raw = bytearray(data[base + start : base + end])
        count = math.prod(spec["shape"])
        t = torch.frombuffer(raw, dtype=dtype, count=count) if count > 0 else torch.empty(0, dtype=dtype)
        tensors[name] = t.reshape(spec["shape"]).to(torch.float32)
    return tensors


class Llama:
    """LlamaForCausalLM's forward pass for one sequence, float32, no cache."""

    def __init__(self, folder):
        with open(f"{folder}/config.json", encoding="utf-8") as f:
            c = json.load(f)
        if c.get("model_type") != "llama":
            raise ValueError(f"{folder}: model_type {c.get('model_type')!r}; this reference implements llama only")
        if c.get("rope_scaling") is not None:
            raise ValueError(f"{folder}: rope_scaling is not implemented by this reference")
        self.hidden = c["hidden_size"]
        self.heads = c["num_attention_heads"]
        self.kv_heads = c.get("num_key_value_heads") or self.heads
        self.head_dim = c.get("head_dim") or self.hidden // self.heads
        self.layers_n = c["num_hidden_layers"]
        self.eps = c.get("rms_norm_eps", 1e-6)
        self.theta = c.get("rope_theta", 10000.0)
        w = read_safetensors(f"{folder}/model.safetensors")
        self.embed = w["model.embed_tokens.weight"]
        tied = c.get("tie_word_embeddings", False)
        self.lm_head = self.embed if tied or "lm_head.weight" not in w else w["lm_head.weight"]
        self.norm = w["model.norm.weight"]
        self.layers = []
        for i in range(self.layers_n):
            p = f"model.layers.{i}."
            self.layers.append({
                "input_norm": w[p + "input_layernorm.weight"],
                "post_norm": w[p + "post_attention_layernorm.weight"],
                **{k: w[p + "self_attn." + k + ".weight"] for k in ("q_proj", "k_proj", "v_proj", "o_proj")},
                **{k + "_bias": w.get(p + "self_attn." + k + ".bias") for k in ("q_proj", "k_proj", "v_proj", "o_proj")},
                **{k: w[p + "mlp." + k + ".weight"] for k in ("gate_proj", "up_proj", "down_proj")},
                **{k + "_bias": w.get(p + "mlp." + k + ".bias") for k in ("gate_proj", "up_proj", "down_proj")},
            })
        # LlamaRotaryEmbedding: inv_freq = 1 / theta^(2i/d), angles repeated for both halves
        self.inv_freq = 1.0 / (self.theta ** (torch.arange(0, self.head_dim, 2, dtype=torch.int64).float() / self.head_dim))
        self.parameters = sum(t.numel() for name, t in w.items() if not (tied and name == "lm_head.weight"))

    def rms_norm(self, x, weight):
        # LlamaRMSNorm: x / sqrt(mean(x^2) + eps), in float32, times the weight
        return weight * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps))

    @staticmethod
    def rotate_half(x):
        half = x.shape[-1] // 2
        return torch.cat((-x[..., half:], x[..., :half]), dim=-1)

    def forward(self, ids):
        """Logits [T, vocab] of a sequence of token ids [T]."""
        T = ids.shape[0]
        h = self.embed[ids]
        angles = torch.outer(torch.arange(T, dtype=torch.float32), self.inv_freq)
        emb = torch.cat((angles, angles), dim=-1)
        cos, sin = emb.cos(), emb.sin()  # [T, head_dim], broadcast over heads
        mask = torch.full((T, T), float("-inf")).triu(1)
        group = self.heads // self.kv_heads
        scale = self.head_dim ** -0.5
        for layer in self.layers:
            x = self.rms_norm(h, layer["input_norm"])
            q = torch.nn.functional.linear(x, layer["q_proj"], layer["q_proj_bias"]).view(T, self.heads, self.head_dim).transpose(0, 1)
            k = torch.nn.functional.linear(x, layer["k_proj"], layer["k_proj_bias"]).view(T, self.kv_heads, self.head_dim).transpose(0, 1)
            v = torch.nn.functional.linear(x, layer["v_proj"], layer["v_proj_bias"]).view(T, self.kv_heads, self.head_dim).transpose(0, 1)
            q = q * cos + self.rotate_half(q) * sin
            k = k * cos + self.rotate_half(k) * sin
            # repeat_kv: query head i reads key/value head i // group
            k = k.repeat_interleave(group, dim=0)
            v = v.repeat_interleave(group, dim=0)
            scores = torch.matmul(q, k.transpose(1, 2)) * scale + mask
            probs = torch.softmax(scores, dim=-1, dtype=torch.float32)
            attn = torch.matmul(probs, v).transpose(0, 1).reshape(T, self.heads * self.head_dim)
            h = h + torch.nn.functional.linear(attn, layer["o_proj"], layer["o_proj_bias"])
            x = self.rms_norm(h, layer["post_norm"])
            gate = torch.nn.functional.linear(x, layer["gate_proj"], layer["gate_proj_bias"])
            up = torch.nn.functional.linear(x, layer["up_proj"], layer["up_proj_bias"])
            h = h + torch.nn.functional.linear(torch.nn.functional.silu(gate) * up, layer["down_proj"], layer["down_proj_bias"])
        return torch.nn.functional.linear(self.rms_norm(h, self.norm), self.lm_head)


def score_choice(model, context, continuation):
    """lm-eval's loglikelihood of one (context, continuation) request, as a full sequence."""
    whole = context + continuation
    inp = torch.tensor(whole[:-1], dtype=torch.int64)
    logprobs = torch.log_softmax(model.forward(inp), dim=-1)
    rows = logprobs[len(context) - 1 :]
    target = torch.tensor(continuation, dtype=torch.int64)
    picked = rows.gather(1, target.unsqueeze(1)).squeeze(1)
    greedy = bool((rows.argmax(dim=-1) == target).all())
    return {"logprob": float(picked.sum()), "tokens": len(continuation), "greedy": greedy}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", required=True, help="Hugging Face folder: config.json, model.safetensors")
    parser.add_argument("--job", required=True, help="a runner score job (its items are scored)")
    parser.add_argument("--out", required=True)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--limit", type=int, default=0, help="score only the first N items (0: all)")
    args = parser.parse_args()

    torch.set_num_threads(args.threads)
    with open(args.job, encoding="utf-8") as f:
        items = json.load(f)["items"]
    if args.limit > 0:
        items = items[: args.limit]
    t0 = time.perf_counter()
    model = Llama(args.model)
    load_seconds = time.perf_counter() - t0

    seconds = []
    scores = []
    with torch.inference_mode():
        score_choice(model, items[0]["context"], items[0]["choices"][0])  # warm-up
        for _ in range(args.repeats):
            t0 = time.perf_counter()
            scores = [{"id": it["id"], "choices": [score_choice(model, it["context"], ch) for ch in it["choices"]]} for it in items]
            seconds.append(time.perf_counter() - t0)

    result = {
        "torch": torch.__version__,
        "python": sys.version.split()[0],
        "threads": torch.get_num_threads(),
        "parameters": model.parameters,
        "items": len(items),
        "load_seconds": load_seconds,
        "seconds": seconds,
        "scores": scores,
    }
    with open(args.out, "w", encoding="utf-8") as f:
        json.dump(result, f)


if __name__ == "__main__":
    main()
