# Save a checkpoint mid-training, resume from it, and land where uninterrupted training lands.
import os
import sys
import tempfile

import torch
import torch.nn as nn


def make():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8), nn.ReLU(), nn.Linear(8, 1))
    return model, torch.optim.Adam(model.parameters(), lr=0.01)


def step(model, opt, i):
    g = torch.Generator().manual_seed(i)
    x = torch.randn(16, 4, generator=g)
    loss = ((model(x) - x.sum(1, keepdim=True)) ** 2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    return loss.item()


model, opt = make()
for i in range(10):
    step(model, opt, i)
path = os.path.join(tempfile.mkdtemp(), "ckpt.pth")
torch.save({"epoch": 10, "model_state_dict": model.state_dict(),
            "optimizer_state_dict": opt.state_dict()}, path)
straight = [step(model, opt, i) for i in range(10, 20)]

model2, opt2 = make()
ckpt = torch.load(path)
model2.load_state_dict(ckpt["model_state_dict"])
opt2.load_state_dict(ckpt["optimizer_state_dict"])
resumed = [step(model2, opt2, i) for i in range(ckpt["epoch"], 20)]
assert all(abs(a - b) < 1e-6 for a, b in zip(straight, resumed)), (straight, resumed)
torch.save(model, path)  # a whole pickled model, loaded back with weights_only=False
whole = torch.load(path, weights_only=False)
assert isinstance(whole, nn.Sequential)
print("OK resumed", len(resumed))
