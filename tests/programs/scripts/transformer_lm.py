"""A small GPT (causal transformer language model, in the style of nanoGPT / minGPT) trained on
characters: pre-norm blocks with F.scaled_dot_product_attention(is_causal=True), GELU MLPs,
tied token embedding and head, AdamW with two parameter groups (no weight decay on biases,
LayerNorms and embeddings), linear warmup then cosine decay through LambdaLR, gradient
clipping, and sampling with torch.multinomial at the end.

    python transformer_lm.py --out runs/gpt
"""
import argparse
import json
import math
import os
from dataclasses import dataclass

import torch
import torch.nn as nn
from torch.nn import functional as F

TEXT = ("the quick brown fox jumps over the lazy dog. " * 3
        + "pack my box with five dozen liquor jugs. " * 3
        + "how vexingly quick daft zebras jump! " * 3)
CHARS = sorted(set(TEXT))


@dataclass
class GPTConfig:
    block_size: int = 32
    vocab_size: int = len(CHARS)
    n_layer: int = 2
    n_head: int = 2
    n_embd: int = 32
    dropout: float = 0.0
    bias: bool = True


class CausalSelfAttention(nn.Module):
    def __init__(self, config):
        super().__init__()
        assert config.n_embd % config.n_head == 0
        self.c_attn = nn.Linear(config.n_embd, 3 * config.n_embd, bias=config.bias)
        self.c_proj = nn.Linear(config.n_embd, config.n_embd, bias=config.bias)
        self.resid_dropout = nn.Dropout(config.dropout)
        self.n_head, self.n_embd, self.dropout = config.n_head, config.n_embd, config.dropout

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        y = F.scaled_dot_product_attention(q, k, v, attn_mask=None,
                                           dropout_p=self.dropout if self.training else 0,
                                           is_causal=True)
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        return self.resid_dropout(self.c_proj(y))


class MLP(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.c_fc = nn.Linear(config.n_embd, 4 * config.n_embd, bias=config.bias)
        self.gelu = nn.GELU(approximate="tanh")  # GPT-2's own GELU
        self.c_proj = nn.Linear(4 * config.n_embd, config.n_embd, bias=config.bias)
        self.dropout = nn.Dropout(config.dropout)

    def forward(self, x):
        return self.dropout(self.c_proj(self.gelu(self.c_fc(x))))


class Block(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.ln_1 = nn.LayerNorm(config.n_embd, bias=config.bias)
        self.attn = CausalSelfAttention(config)
        self.ln_2 = nn.LayerNorm(config.n_embd, bias=config.bias)
        self.mlp = MLP(config)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class GPT(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config
        self.transformer = nn.ModuleDict(dict(
            wte=nn.Embedding(config.vocab_size, config.n_embd),
            wpe=nn.Embedding(config.block_size, config.n_embd),
            drop=nn.Dropout(config.dropout),
            h=nn.ModuleList([Block(config) for _ in range(config.n_layer)]),
            ln_f=nn.LayerNorm(config.n_embd, bias=config.bias),
        ))
        self.lm_head = nn.Linear(config.n_embd, config.vocab_size, bias=False)
        self.transformer.wte.weight = self.lm_head.weight  # weight tying
        self.apply(self._init_weights)
        for pn, p in self.named_parameters():
            if pn.endswith("c_proj.weight"):
                torch.nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * config.n_layer))

    def _init_weights(self, module):
        if isinstance(module, nn.Linear):
            torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)
            if module.bias is not None:
                torch.nn.init.zeros_(module.bias)
        elif isinstance(module, nn.Embedding):
            torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)

    def forward(self, idx, targets=None):
        b, t = idx.size()
        pos = torch.arange(0, t, dtype=torch.long, device=idx.device)
        x = self.transformer.drop(self.transformer.wte(idx) + self.transformer.wpe(pos))
        for block in self.transformer.h:
            x = block(x)
        logits = self.lm_head(self.transformer.ln_f(x))
        loss = None
        if targets is not None:
            loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))
        return logits, loss

    def configure_optimizers(self, weight_decay, learning_rate, betas):
        param_dict = {pn: p for pn, p in self.named_parameters() if p.requires_grad}
        decay_params = [p for n, p in param_dict.items() if p.dim() >= 2]
        nodecay_params = [p for n, p in param_dict.items() if p.dim() < 2]
        optim_groups = [
            {"params": decay_params, "weight_decay": weight_decay},
            {"params": nodecay_params, "weight_decay": 0.0},
        ]
        print(f"num decayed parameter tensors: {len(decay_params)}, with "
              f"{sum(p.numel() for p in decay_params):,} parameters")
        print(f"num non-decayed parameter tensors: {len(nodecay_params)}, with "
              f"{sum(p.numel() for p in nodecay_params):,} parameters")
        return torch.optim.AdamW(optim_groups, lr=learning_rate, betas=betas)

    @torch.no_grad()
    def generate(self, idx, max_new_tokens, temperature=1.0, top_k=None):
        for _ in range(max_new_tokens):
            idx_cond = idx if idx.size(1) <= self.config.block_size else \
                idx[:, -self.config.block_size:]
            logits, _ = self(idx_cond)
            logits = logits[:, -1, :] / temperature
            if top_k is not None:
                v, _ = torch.topk(logits, min(top_k, logits.size(-1)))
                logits[logits < v[:, [-1]]] = -float("Inf")
            probs = F.softmax(logits, dim=-1)
            idx_next = torch.multinomial(probs, num_samples=1)
            idx = torch.cat((idx, idx_next), dim=1)
        return idx


def build_model():
    return GPT(GPTConfig())


def main():
    parser = argparse.ArgumentParser(description="character-level GPT")
    parser.add_argument("--max-iters", type=int, default=100)
    parser.add_argument("--warmup-iters", type=int, default=10)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--learning-rate", type=float, default=3e-3)
    parser.add_argument("--weight-decay", type=float, default=0.1)
    parser.add_argument("--seed", type=int, default=1337)
    parser.add_argument("--out", default="runs/gpt")
    parser.add_argument("--device", default="cpu", help="cpu or cuda")
    args = parser.parse_args()
    torch.manual_seed(args.seed)
    os.makedirs(args.out, exist_ok=True)

    stoi = {ch: i for i, ch in enumerate(CHARS)}
    data = torch.tensor([stoi[c] for c in TEXT], dtype=torch.long)
    config = GPTConfig()
    device = torch.device(args.device)
    model = GPT(config).to(device)
    print(f"number of parameters: {sum(p.numel() for p in model.parameters()) / 1e3:.1f}K")

    def get_batch():
        ix = torch.randint(len(data) - config.block_size, (args.batch_size,))
        x = torch.stack([data[i:i + config.block_size] for i in ix])
        y = torch.stack([data[i + 1:i + 1 + config.block_size] for i in ix])
        return x.to(device), y.to(device)

    optimizer = model.configure_optimizers(args.weight_decay, args.learning_rate, (0.9, 0.99))

    def lr_lambda(it):
        if it < args.warmup_iters:
            return (it + 1) / args.warmup_iters
        progress = (it - args.warmup_iters) / max(1, args.max_iters - args.warmup_iters)
        return 0.1 + 0.9 * 0.5 * (1.0 + math.cos(math.pi * progress))

    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lr_lambda)
    losses, lrs = [], []
    model.train()
    for it in range(args.max_iters):
        x, y = get_batch()
        _, loss = model(x, y)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        lrs.append(scheduler.get_last_lr()[0])
        scheduler.step()
        losses.append(loss.item())
        if it % 50 == 0 or it == args.max_iters - 1:
            print(f"iter {it}: loss {loss.item():.4f}, lr {lrs[-1]:.2e}")

    model.eval()
    start = torch.tensor([[stoi[c] for c in "the quick"]], dtype=torch.long, device=device)
    sample = model.generate(start, 40, temperature=0.5, top_k=5)
    text = "".join(CHARS[i] for i in sample[0].tolist())
    print(text)
    torch.save(model.state_dict(), os.path.join(args.out, "ckpt.pt"))
    probe = data[:config.block_size].unsqueeze(0).to(device)
    with torch.no_grad():
        torch.save({"input": probe, "output": model(probe)[0]}, os.path.join(args.out, "probe.pt"))
    with open(os.path.join(args.out, "metrics.json"), "w") as f:
        json.dump({"losses": losses, "lrs": lrs, "sample": text,
                   "weight_decay": [g["weight_decay"] for g in optimizer.param_groups],
                   "group_sizes": [len(g["params"]) for g in optimizer.param_groups]}, f)


if __name__ == "__main__":
    main()
