"""lm-eval itself on a model folder and task files, for the parity tests (test/integration/lmevalParity.test.ts).

Reads a JSON request on stdin and writes, to the file it names, every logged sample of every task
(per-choice log-likelihoods, generations, filtered answers, metrics) and the aggregated results,
as `lm_eval --log_samples` would. Runs lm-eval through `simple_evaluate` rather than its command
line, whose table printing needs a package (pytablewriter) the test environment does not have.

Request: {"make": [model], "runs": [run]}, where
  model: {"dir", "tokenizer_from": dir, "seed", "chat_template": str | null}: a random Llama made
         with transformers' own LlamaConfig and save_pretrained, with the demo's byte tokenizer and
         a window (4096) that holds BIG-Bench Hard and GSM8K prompts as bytes;
  run:   {"model": dir, "include_path": [dirs], "tasks": [names], "limit": n | null,
          "apply_chat_template": bool, "fewshot_as_multiturn": bool, "add_bos_token": bool | null,
          "num_fewshot": n | null, "cwd": dir, "out": file}
All in one process: importing torch and transformers is most of a small run's time.
"""

import json
import os
import shutil
import sys

import lm_eval
import torch
import transformers
from lm_eval.tasks import TaskManager


def make_model(spec):
    """A random Llama whose logits are far apart (a wide initializer), so that greedy decoding in
    float32 picks the same token here and in the runner."""
    torch.manual_seed(spec["seed"])
    config = transformers.LlamaConfig(
        vocab_size=258,
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=4096,
        initializer_range=0.3,
        bos_token_id=256,
        eos_token_id=257,
        tie_word_embeddings=True,
    )
    model = transformers.LlamaForCausalLM(config).to(torch.float32)
    model.save_pretrained(spec["dir"], safe_serialization=True)
    for name in ("tokenizer.json", "tokenizer_config.json"):
        shutil.copy(os.path.join(spec["tokenizer_from"], name), os.path.join(spec["dir"], name))
    if spec.get("chat_template"):
        with open(os.path.join(spec["dir"], "chat_template.jinja"), "w") as f:
            f.write(spec["chat_template"])


def jsonable(value):
    """Samples hold tuples and numpy scalars; JSON wants lists and floats."""
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if hasattr(value, "item"):
        return value.item()
    return value


def evaluate(request):
    model_args = f"pretrained={request['model']},dtype=float32"
    if request.get("add_bos_token") is not None:
        model_args += f",add_bos_token={request['add_bos_token']}"
    results = lm_eval.simple_evaluate(
        model="hf",
        model_args=model_args,
        tasks=request["tasks"],
        task_manager=TaskManager(include_path=request["include_path"]),
        limit=request.get("limit"),
        num_fewshot=request.get("num_fewshot"),
        apply_chat_template=request.get("apply_chat_template", False),
        fewshot_as_multiturn=request.get("fewshot_as_multiturn", False),
        log_samples=True,
        device="cpu",
        batch_size=request.get("batch_size", 16),
    )
    samples = {
        task: [
            {key: jsonable(s[key]) for key in s if key not in ("doc", "doc_hash", "prompt_hash", "target_hash")}
            for s in sorted(task_samples, key=lambda s: s["doc_id"])
        ]
        for task, task_samples in results["samples"].items()
    }
    out = {"results": jsonable(results["results"]), "groups": jsonable(results.get("groups", {})), "samples": samples}
    with open(request["out"], "w") as f:
        json.dump(out, f)


def main():
    request = json.load(sys.stdin)
    for spec in request.get("make", []):
        make_model(spec)
    home = os.getcwd()
    for run in request.get("runs", []):
        # lm-eval (through datasets) reads relative data_files from the working folder.
        os.chdir(run.get("cwd", home))
        evaluate(run)
        os.chdir(home)


if __name__ == "__main__":
    main()
