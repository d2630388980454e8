"""Hugging Face transformers' models on ember through `python -m ember.compat` (skipped when
transformers is not installed): GPT-2 trained a few AdamW steps, greedy generation, BERT
classification and Llama (grouped-query attention, flex_attention) forward and backward,
from the same weights as in PyTorch, which must give the same losses and tokens.

transformers 5 imports FSDP2 (`torch.distributed._composable.fsdp`, `torch.distributed.fsdp`)
and distributed checkpointing (`torch.distributed.checkpoint.hf_storage`) at import whenever
`torch.distributed.is_available()`, as it is on ember: both exist, so the scripts import it as
a user would; `generate` also asks whether the model is wrapped in FSDP1's
`FullyShardedDataParallel`. `from_pretrained` builds the model on the meta device, then loads
the saved weights into it: a tiny GPT-2 and Llama go through `save_pretrained` and back."""
import importlib.util
import numpy as np
import pytest

from tests.compat._script_result import script_result

pytestmark = pytest.mark.skipif(importlib.util.find_spec("transformers") is None,
                                reason="transformers is not installed")

# what both scripts start with: which library runs
HEADER = r'''
import json, os, sys, numpy as np, torch
on_ember = "ember" in getattr(torch, "__file__", "")
if not on_ember:
    sys.modules["torchvision"] = None  # transformers needs no vision; keep PyTorch's alone
'''

SCRIPT = HEADER + r'''
from transformers import (BertConfig, BertForSequenceClassification, GPT2Config,
                          GPT2LMHeadModel, LlamaConfig, LlamaForCausalLM)
weights = sys.argv[1]

def same_weights(name, model):
    path = os.path.join(weights, name + ".npz")
    if os.path.exists(path):
        saved = np.load(path)
        model.load_state_dict({k: torch.tensor(saved[k]) for k in saved.files}, strict=False)
    else:
        np.savez(path, **{k: v.detach().numpy() for k, v in model.state_dict().items()})
    return model

out = {}
ids = torch.tensor(np.random.RandomState(1).randint(0, 100, (4, 16)))
gpt = same_weights("gpt2", GPT2LMHeadModel(GPT2Config(
    n_layer=2, n_embd=64, n_head=2, vocab_size=100, n_positions=64, resid_pdrop=0.0,
    embd_pdrop=0.0, attn_pdrop=0.0)))
opt = torch.optim.AdamW(gpt.parameters(), lr=1e-2)
out["gpt2"] = []
for _ in range(3):
    loss = gpt(input_ids=ids, labels=ids).loss
    loss.backward()
    opt.step()
    opt.zero_grad()
    out["gpt2"].append(loss.item())
gpt.eval()
out["generate"] = gpt.generate(ids[:1, :5], max_new_tokens=5, do_sample=False).tolist()
mask = torch.ones(4, 16, dtype=torch.long)
mask[0, 11:] = 0
bert = same_weights("bert", BertForSequenceClassification(BertConfig(
    vocab_size=100, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
    intermediate_size=64, num_labels=3, hidden_dropout_prob=0.0,
    attention_probs_dropout_prob=0.0)))
loss = bert(input_ids=ids, attention_mask=mask, labels=torch.tensor([0, 2, 1, 1])).loss
loss.backward()
out["bert"] = [loss.item(), bert.bert.embeddings.word_embeddings.weight.grad.abs().sum().item()]
# PyTorch's eager flex_attention takes seconds per call on the CPU (and has no backward
# there): ember's runs alone, held against PyTorch's sdpa, the same attention
for impl in ("sdpa", "flex_attention") if on_ember else ("sdpa",):
    llama = same_weights("llama", LlamaForCausalLM(LlamaConfig(
        vocab_size=100, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64,
        attn_implementation=impl)))
    if impl == "flex_attention":
        with torch.no_grad():
            out[impl] = [llama(input_ids=ids, attention_mask=mask, labels=ids).loss.item()]
        continue
    loss = llama(input_ids=ids, attention_mask=mask, labels=ids).loss
    loss.backward()
    out[impl] = [loss.item(), llama.model.embed_tokens.weight.grad.abs().sum().item()]
print("RESULT " + json.dumps(out))
'''


PRETRAINED = HEADER + r'''
from transformers import GPT2Config, GPT2LMHeadModel, LlamaConfig, LlamaForCausalLM
work = sys.argv[1]
ids = torch.tensor(np.random.RandomState(2).randint(0, 100, (2, 12)))
out = {}
for name, cls, config in [
        ("gpt2", GPT2LMHeadModel, GPT2Config(n_layer=2, n_embd=32, n_head=2, vocab_size=100,
                                             n_positions=32)),
        ("llama", LlamaForCausalLM, LlamaConfig(vocab_size=100, hidden_size=32,
                                                intermediate_size=64, num_hidden_layers=2,
                                                num_attention_heads=4, num_key_value_heads=2,
                                                max_position_embeddings=32))]:
    saved = os.path.join(work, name + "_pretrained")
    if not os.path.exists(saved):  # PyTorch's run writes the checkpoint both runs load
        torch.manual_seed(0)
        cls(config).save_pretrained(saved)
    model = cls.from_pretrained(saved)
    model.eval()
    with torch.no_grad():
        logits = model(input_ids=ids).logits
    out[name] = [str(next(model.parameters()).device), logits.numpy().tolist()]
print("RESULT " + json.dumps(out))
'''


def _run(tmp_path, *launcher, script="hf.py"):
    return script_result(tmp_path / script, [tmp_path], *launcher)


def test_transformers_models_train_and_generate_as_in_pytorch(tmp_path):
    pytest.importorskip("torch")
    (tmp_path / "hf.py").write_text(SCRIPT)
    theirs = _run(tmp_path)  # PyTorch first: it writes the weights both runs load
    ours = _run(tmp_path, "-m", "ember.compat")
    assert ours["generate"] == theirs["generate"]
    for key in ("gpt2", "bert", "sdpa"):
        np.testing.assert_allclose(ours[key], theirs[key], rtol=2e-5, err_msg=key)
    np.testing.assert_allclose(ours["flex_attention"][0], theirs["sdpa"][0], rtol=2e-5)
    assert ours["gpt2"][-1] < ours["gpt2"][0]  # training lowers the loss


def test_from_pretrained_builds_on_meta_and_loads_the_saved_weights(tmp_path):
    pytest.importorskip("torch")
    (tmp_path / "pretrained.py").write_text(PRETRAINED)
    theirs = _run(tmp_path, script="pretrained.py")  # PyTorch's run saves the checkpoints
    ours = _run(tmp_path, "-m", "ember.compat", script="pretrained.py")
    for name in ("gpt2", "llama"):
        assert ours[name][0] == "cpu"  # loaded off the meta device
        np.testing.assert_allclose(ours[name][1], theirs[name][1], rtol=1e-5, atol=1e-6,
                                   err_msg=name)
