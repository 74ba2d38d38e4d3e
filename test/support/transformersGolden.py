"""Golden values from transformers itself for test/integration/transformersParity.test.ts.

For each model family the runner loads (native-runner/src/config.cpp), a tiny model made with
transformers' own config class and saved with `save_pretrained` (safetensors, float32; seeded
random weights, every tensor random: biases, norms and q/k norms included, so no switch hides
behind an initial 0 or 1). The folder is then loaded back with `from_pretrained` in float64, and
that model gives:

- the score of every choice of the spec's items, as lm-eval's Hugging Face backend scores it:
  (context ++ choice) without its last token, log_softmax at every position, the sum over the
  choice's tokens (and each token's own log-probability), and whether each token is the argmax
  (lm-eval's `is_greedy`);
- per ability, r = -theta * g for every MLP candidate weight (gate, up, down of each layer, in
  that order, each row-major), g the sum over the runner's batches (sequences sorted by length,
  stable, cut into batch_size) of the gradient of the batch's mean next-token cross-entropy over
  its real tokens (docs/method.md, step 2), by torch autograd: written as little-endian float64;
- greedy generations of the spec's `generate` requests, with each step's margin;
- for a mixture of experts, the same weights again in OUT_DIR/<family>/fused/ with the experts fused
  as transformers holds them in memory (a checkpoint saved from its state_dict);
- per ability and rule (`paper`: |r|, `signed`: r) the scores of every item with that rule's top n
  weights at the spec's last k zeroed (n = floor(k * P), ties to the smaller index).

    python transformersGolden.py SPEC.json OUT_DIR

SPEC.json: {"items": [{"id", "context", "choices"}], "abilities": [{"id", "sequences"}],
"k": [...], "batch_size": B, "methods": ["paper", "signed"], "generate": [{"id", "context",
"max_tokens"}], "stop": [token ids]}. Writes OUT_DIR/<family>/model/ (the
Hugging Face folder), OUT_DIR/<family>/<ability>.rise.f64 and OUT_DIR/expected.json.
"""

import json
import math
import os
import shutil
import sys

import numpy as np
import torch
from safetensors.torch import save_file
import transformers
from transformers import (
    AutoModelForCausalLM,
    Gemma2Config,
    Gemma3TextConfig,
    GraniteConfig,
    Olmo2Config,
    Phi3Config,
    LlamaConfig,
    MistralConfig,
    MixtralConfig,
    Qwen2Config,
    Qwen3Config,
    Qwen3MoeConfig,
)

VOCAB = 300
COMMON = dict(
    vocab_size=VOCAB,
    hidden_size=64,
    intermediate_size=128,
    num_hidden_layers=2,
    num_attention_heads=4,
    num_key_value_heads=2,
    max_position_embeddings=256,
    rms_norm_eps=1e-5,
    bos_token_id=256,
    eos_token_id=257,
)


def families():
    """(name, config): every family of config.cpp, with the switches real checkpoints use."""
    return [
        # Llama with every bias it can have and tied embeddings (Llama 3.2's small models tie)
        ("llama", LlamaConfig(**COMMON, attention_bias=True, mlp_bias=True, tie_word_embeddings=True)),
        # Llama 3.1: rope_scaling type llama3. original_max_position_embeddings 64 puts the
        # head's frequencies in all three of its ranges (kept, blended, divided by factor) at the
        # lengths the test reads.
        (
            "llama3",
            LlamaConfig(
                **COMMON,
                rope_parameters={
                    "rope_type": "llama3",
                    "rope_theta": 500000.0,
                    "factor": 8.0,
                    "low_freq_factor": 1.0,
                    "high_freq_factor": 4.0,
                    "original_max_position_embeddings": 64,
                },
            ),
        ),
        # Mistral with a sliding window shorter than the test's sequences
        ("mistral", MistralConfig(**COMMON, sliding_window=8)),
        # Qwen2: q/k/v biases, tied, a window in the layers from max_window_layers on
        (
            "qwen2",
            Qwen2Config(
                **COMMON,
                tie_word_embeddings=True,
                use_sliding_window=True,
                sliding_window=6,
                max_window_layers=1,
                rope_parameters={"rope_type": "default", "rope_theta": 1000000.0},
            ),
        ),
        # Qwen3: q/k norm, head_dim 32 (4 heads x 32 = 128, not the hidden size 64)
        (
            "qwen3",
            Qwen3Config(
                **COMMON,
                head_dim=32,
                rope_parameters={"rope_type": "default", "rope_theta": 1000000.0},
            ),
        ),
        # Granite: Llama's biases, and its four multipliers away from 1 (the attention's scale in
        # place of 1/sqrt(head_dim) = 0.25)
        (
            "granite",
            GraniteConfig(
                **COMMON,
                attention_bias=True,
                mlp_bias=True,
                embedding_multiplier=2.5,
                residual_multiplier=0.6,
                attention_multiplier=0.4,
                logits_scaling=1.5,
            ),
        ),
        # OLMo 2: norms after attention and MLP (none before), q/k norms over the whole projections
        ("olmo2", Olmo2Config(**COMMON, attention_bias=True)),
        # Phi-3: fused qkv_proj and gate_up_proj (one candidate), a sliding window of 8 in every layer
        ("phi3", Phi3Config(**COMMON, sliding_window=8, pad_token_id=0)),
        # Gemma 2: sqrt(hidden) embedding scale, 1 + weight norms before and after attention and
        # MLP, GeGLU (tanh), tied by default; a query_pre_attn_scalar that is not head_dim, both
        # soft-caps low enough to bite, and the default layer types (layer 0 slides, window 8,
        # layer 1 attends fully)
        (
            "gemma2",
            Gemma2Config(
                **COMMON,
                head_dim=16,
                query_pre_attn_scalar=24,
                attn_logit_softcapping=3.0,
                final_logit_softcapping=6.0,
                sliding_window=8,
                pad_token_id=0,
            ),
        ),
        # Gemma 3: Gemma 2's layout with q/k norms (1 + weight) and no soft-caps; a sliding layer
        # with its own RoPE (theta 1e4) and a full one with theta 1e6 and linear scaling
        (
            "gemma3",
            Gemma3TextConfig(
                **COMMON,
                head_dim=16,
                query_pre_attn_scalar=24,
                sliding_window=8,
                layer_types=["sliding_attention", "full_attention"],
                rope_parameters={
                    "full_attention": {"rope_type": "linear", "factor": 4.0, "rope_theta": 1000000.0},
                    "sliding_attention": {"rope_type": "default", "rope_theta": 10000.0},
                },
                pad_token_id=0,
            ),
        ),
        # Mixtral: 4 experts, each token to 2 (renormalised), a sliding window of 8 in every layer
        ("mixtral", MixtralConfig(**COMMON, num_local_experts=4, num_experts_per_tok=2, sliding_window=8)),
        # Qwen3-MoE: Qwen3's attention, 5 experts of 48, each token to 3, not renormalised (the default)
        (
            "qwen3_moe",
            Qwen3MoeConfig(
                **COMMON,
                head_dim=32,
                num_experts=5,
                num_experts_per_tok=3,
                moe_intermediate_size=48,
                rope_parameters={"rope_type": "default", "rope_theta": 1000000.0},
            ),
        ),
    ]


def randomize(model, seed):
    """Every tensor random, at scales that keep activations of order 1 and the next-token
    distribution peaked (so that log-likelihoods differ from one token to the next)."""
    gen = torch.Generator().manual_seed(seed)
    hidden = model.config.hidden_size
    with torch.no_grad():
        for name, p in model.named_parameters():
            noise = torch.randn(p.shape, generator=gen, dtype=torch.float32)
            if name.endswith("norm.weight"):  # Gemma's norms scale by 1 + weight
                p.copy_((0.0 if model.config.model_type.startswith("gemma") else 1.0) + 0.2 * noise)
            elif name.endswith(".bias"):
                p.copy_(0.2 * noise)
            elif name == "model.embed_tokens.weight":
                p.copy_(noise)
            elif name == "lm_head.weight":
                p.copy_(noise * 3.0 / math.sqrt(hidden))
            else:  # projections [out, in], and experts fused as [experts, out, in]
                p.copy_(noise * 1.5 / math.sqrt(p.shape[-1]))
        if model.config.tie_word_embeddings:  # the shared matrix at lm_head's scale
            model.model.embed_tokens.weight.mul_(3.0 / math.sqrt(hidden))


def choice_scores(model, items):
    """Every choice of every item as one row of one batch: (context ++ choice) without its last
    token, right-padded with 0 and no attention mask (under the causal mask a row's real positions
    never see its padding), the rows' log_softmax read at the choice's positions."""
    rows = [(item["context"], choice) for item in items for choice in item["choices"]]
    longest = max(len(c) + len(t) - 1 for c, t in rows)
    inputs = torch.zeros((len(rows), longest), dtype=torch.long)
    for r, (context, choice) in enumerate(rows):
        inputs[r, : len(context) + len(choice) - 1] = torch.tensor((context + choice)[:-1])
    with torch.no_grad():
        logprobs = torch.log_softmax(model(input_ids=inputs).logits, dim=-1)
    out, r = [], 0
    for item in items:
        choices = []
        for choice in item["choices"]:
            at = logprobs[r, len(item["context"]) - 1 :]
            tokens = [float(at[j, t]) for j, t in enumerate(choice)]
            greedy = all(int(torch.argmax(at[j])) == t for j, t in enumerate(choice))
            choices.append({"logprob": math.fsum(tokens), "token_logprobs": tokens, "greedy": greedy})
            r += 1
        out.append({"id": item["id"], "choices": choices})
    return out


def greedy_generations(model, requests, stop):
    """Greedy decoding as the runner's generate items: at each step the argmax of the last row's
    logits (ties to the lowest id, torch.argmax's rule), from a full forward pass over context ++
    the tokens so far (no cache: the cache is the runner's to get right), until max_tokens or a
    token in `stop`. With each step's margin, the top logit minus the runner-up: where it is
    within float32 rounding the runner may fairly pick the other."""
    out = []
    for request in requests:
        tokens, margins = list(request["context"]), []
        generated = []
        with torch.no_grad():
            for _ in range(request["max_tokens"]):
                logits = model(input_ids=torch.tensor([tokens])).logits[0, -1]
                top = torch.topk(logits, 2).values
                next_token = int(torch.argmax(logits))
                margins.append(float(top[0] - top[1]))
                generated.append(next_token)
                tokens.append(next_token)
                if next_token in stop:
                    break
        out.append({"id": request["id"], "generated": generated, "margins": margins})
    return out


def candidate_weights(model):
    """The candidates in the runner's order, as (name, parameter, view): layers in order; gate, up,
    down within a layer (Phi-3: its fused gate_up, then down); a mixture of experts: each expert's
    gate, up, down, expert by expert, named as save_pretrained writes them, though transformers
    holds them fused (experts.gate_up_proj [E, 2I, H], experts.down_proj [E, H, I]). view(t) is
    the candidate's part of the parameter t, or of its gradient."""
    out = []
    whole = lambda t: t  # noqa: E731
    for i, layer in enumerate(model.model.layers):
        experts = getattr(layer.mlp, "experts", None)
        if experts is not None:
            mixtral = model.config.model_type == "mixtral"
            size = experts.down_proj.shape[-1]
            for e in range(experts.down_proj.shape[0]):
                prefix = f"model.layers.{i}.block_sparse_moe.experts.{e}." if mixtral else f"model.layers.{i}.mlp.experts.{e}."
                names = ("w1", "w3", "w2") if mixtral else ("gate_proj", "up_proj", "down_proj")
                out.append((prefix + names[0] + ".weight", experts.gate_up_proj, lambda t, e=e: t[e, :size]))
                out.append((prefix + names[1] + ".weight", experts.gate_up_proj, lambda t, e=e: t[e, size:]))
                out.append((prefix + names[2] + ".weight", experts.down_proj, lambda t, e=e: t[e]))
            continue
        parts = ("gate_up_proj", "down_proj") if hasattr(layer.mlp, "gate_up_proj") else ("gate_proj", "up_proj", "down_proj")
        for part in parts:
            out.append((f"model.layers.{i}.mlp.{part}.weight", getattr(layer.mlp, part).weight, whole))
    return out


def loss_rise(model, sequences, batch_size):
    """r = -theta * sum over batches of dL(B)/dtheta, flattened in candidate order (float64)."""
    candidates = candidate_weights(model)
    for p in model.parameters():
        p.requires_grad_(False)
        p.grad = None
    for _, w, _ in candidates:
        w.requires_grad_(True)
    order = sorted(range(len(sequences)), key=lambda s: len(sequences[s]))  # stable
    for start in range(0, len(order), batch_size):
        batch = [sequences[s] for s in order[start : start + batch_size]]
        longest = max(len(s) for s in batch) - 1
        inputs = torch.zeros((len(batch), longest), dtype=torch.long)
        for r, s in enumerate(batch):  # right-padded with 0, each row without its last token
            inputs[r, : len(s) - 1] = torch.tensor(s[:-1])
        # No attention mask, as the runner: under the causal mask a real position never sees the
        # padding after it. (With one, a sliding window leaves a padding query with no key at all:
        # its softmax is NaN, and so, through 0 * NaN, is the gradient.)
        logprobs = torch.log_softmax(model(input_ids=inputs).logits, dim=-1)
        total = torch.zeros((), dtype=torch.float64)
        for r, s in enumerate(batch):
            targets = torch.tensor(s[1:])
            total = total - logprobs[r, torch.arange(len(s) - 1), targets].sum()
        (total / sum(len(s) - 1 for s in batch)).backward()  # the batch's mean; grads add up
    rise = torch.cat([(-(view(w.detach()) * view(w.grad))).reshape(-1) for _, w, view in candidates])
    for _, w, _ in candidates:
        w.grad = None
        w.requires_grad_(False)
    return rise


def ranking(importance):
    """Indices by importance, largest first, ties to the smaller index."""
    values = importance.numpy()
    return np.lexsort((np.arange(values.size), -values))


def ablated_scores(model, items, indices):
    candidates = candidate_weights(model)
    saved = [w.detach().clone() for w in {id(w): w for _, w, _ in candidates}.values()]
    offsets = np.cumsum([0] + [view(w).numel() for _, w, view in candidates])
    with torch.no_grad():
        for c, (_, w, view) in enumerate(candidates):
            inside = indices[(indices >= offsets[c]) & (indices < offsets[c + 1])] - offsets[c]
            view(w).view(-1)[torch.from_numpy(inside.astype(np.int64))] = 0.0  # a view of a contiguous block: in place
        scores = choice_scores(model, items)
        for w, original in zip({id(w): w for _, w, _ in candidates}.values(), saved):
            w.copy_(original)
    return scores


def save_fused_experts(model, model_dir, fused_dir):
    """A mixture of experts' weights under the names and shapes transformers holds in memory
    (mlp.gate.weight, mlp.experts.gate_up_proj [E, 2I, H], mlp.experts.down_proj [E, H, I]), as a
    checkpoint saved from the state_dict has them: the folder, or None for a dense model."""
    if not getattr(model.config, "num_experts_per_tok", None):
        return None
    os.makedirs(fused_dir, exist_ok=True)
    shutil.copy(os.path.join(model_dir, "config.json"), fused_dir)
    tensors = {name: t.detach().contiguous() for name, t in model.state_dict().items()}
    save_file(tensors, os.path.join(fused_dir, "model.safetensors"), metadata={"format": "pt"})
    return fused_dir


def main():
    spec_file, out_dir = sys.argv[1], sys.argv[2]
    with open(spec_file) as f:
        spec = json.load(f)
    torch.set_num_threads(max(1, min(2, os.cpu_count() or 1)))
    expected = {"torch": torch.__version__, "transformers": transformers.__version__, "families": {}}
    wanted = spec.get("families")  # a subset by name, else all
    for seed, (name, config) in enumerate(families(), start=1):
        if wanted is not None and name not in wanted:
            continue
        model_dir = os.path.join(out_dir, name, "model")
        torch.manual_seed(seed)
        made = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
        randomize(made, seed)
        made.save_pretrained(model_dir)
        fused_dir = save_fused_experts(made, model_dir, os.path.join(out_dir, name, "fused"))
        del made
        # what transformers reads back from the folder, in float64
        # (the experts of a mixture in eager mode too: the modeling file's own loop over the experts,
        # where the default grouped_mm has no float64 kernel)
        eager = {"experts_implementation": "eager"} if getattr(config, "num_experts_per_tok", None) else {}
        model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float64, attn_implementation="eager", **eager)
        model.eval()
        parameters = sum(p.numel() for p in model.parameters())  # tied once
        family = {
            "model": model_dir,
            "fused_model": fused_dir,
            "config": json.load(open(os.path.join(model_dir, "config.json"))),
            "parameters": parameters,
            "candidates": [{"name": n, "numel": view(w).numel()} for n, w, view in candidate_weights(model)],
            "scores": choice_scores(model, spec["items"]),
            "generations": greedy_generations(model, spec.get("generate", []), spec.get("stop", [])),
            "abilities": {},
        }
        last_n = math.floor(spec["k"][-1] * parameters)
        for ability in spec["abilities"]:
            rise = loss_rise(model, ability["sequences"], spec["batch_size"])
            rise_file = os.path.join(out_dir, name, f"{ability['id']}.rise.f64")
            rise.numpy().astype("<f8").tofile(rise_file)
            variants = {}
            for method in spec["methods"]:
                importance = rise.abs() if method == "paper" else rise
                top = ranking(importance)[:last_n]
                variants[method] = ablated_scores(model, spec["items"], top)
            family["abilities"][ability["id"]] = {"rise": rise_file, "ablated": variants}
        expected["families"][name] = family
        del model
    with open(os.path.join(out_dir, "expected.json"), "w") as f:
        json.dump(expected, f)


if __name__ == "__main__":
    main()
