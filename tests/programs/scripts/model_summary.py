"""Model introspection in the style of torchinfo / torchsummary and torchviz: forward hooks on
every module from named_modules() record output shapes and parameter counts, and a summary
table is printed; the hooks' RemovableHandles take them off again. Then the autograd graph of
the loss is walked from loss.grad_fn through next_functions, as torchviz draws it, and a few
training steps with a full backward hook show the gradients reaching the first layer.

    python model_summary.py --out runs/summary
"""
import argparse
import json
import os
from collections import Counter, OrderedDict

import torch
import torch.nn as nn
from torch.utils.hooks import RemovableHandle


class SmallNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(inplace=True),
            nn.MaxPool2d(2),
            nn.Conv2d(8, 16, 3, padding=1, bias=False), nn.BatchNorm2d(16), nn.ReLU(inplace=True),
            nn.AdaptiveAvgPool2d((2, 2)),
        )
        self.embedding = nn.Embedding(5, 4)
        self.classifier = nn.Sequential(
            nn.Flatten(), nn.Dropout(0.2), nn.Linear(16 * 2 * 2 + 4, 32), nn.GELU(),
            nn.Linear(32, 3),
        )

    def forward(self, x, tag):
        h = torch.cat([self.features(x).flatten(1), self.embedding(tag)], dim=1)
        return self.classifier(h)


def build_model():
    return SmallNet()


def summary(model, *inputs):
    """Run the model once with hooks on every module; return the rows and remove the hooks."""
    rows = OrderedDict()
    handles = []

    def register_hook(name, module):
        def hook(module, input, output):
            params = sum(p.numel() for p in module.parameters(recurse=False))
            trainable = sum(p.numel() for p in module.parameters(recurse=False) if p.requires_grad)
            rows[name] = {"type": type(module).__name__,
                          "input_shape": [list(i.shape) for i in input if torch.is_tensor(i)],
                          "output_shape": list(output.shape), "params": params,
                          "trainable": trainable}
        return module.register_forward_hook(hook)

    for name, module in model.named_modules():
        if name:  # not the root
            handles.append(register_hook(name, module))
    assert all(isinstance(h, RemovableHandle) for h in handles)
    was_training = model.training
    model.eval()
    with torch.no_grad():
        model(*inputs)
    model.train(was_training)
    for h in handles:
        h.remove()
    return rows


def print_summary(rows, model):
    line = "-" * 72
    print(line)
    print(f"{'Layer (type)':<34}{'Output Shape':<24}{'Param #':>14}")
    print("=" * 72)
    for name, row in rows.items():
        print(f"{name + ' (' + row['type'] + ')':<34}{str(row['output_shape']):<24}"
              f"{row['params']:>14,}")
    total = sum(p.numel() for p in model.parameters())
    trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
    buffers = sum(b.numel() for b in model.buffers())
    print("=" * 72)
    print(f"Total params: {total:,}")
    print(f"Trainable params: {trainable:,}")
    print(f"Non-trainable params: {total - trainable:,}")
    print(f"Buffers: {buffers:,}")
    print(line)
    return total, trainable


def walk_graph(root):
    """torchviz's traversal: every grad_fn node once, and the leaves (AccumulateGrad) reached."""
    seen, order, stack = set(), [], [root]
    while stack:
        fn = stack.pop()
        if fn is None or fn in seen:
            continue
        seen.add(fn)
        order.append(type(fn).__name__)
        for next_fn, _ in fn.next_functions:
            stack.append(next_fn)
    return order


def main():
    parser = argparse.ArgumentParser(description="summary table, hooks and autograd graph")
    parser.add_argument("--steps", type=int, default=25)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default="runs/summary")
    args = parser.parse_args()
    torch.manual_seed(args.seed)
    os.makedirs(args.out, exist_ok=True)

    model = SmallNet()
    for p in model.embedding.parameters():  # a frozen layer shows as non-trainable
        p.requires_grad_(False)
    x, tag = torch.randn(2, 3, 8, 8), torch.tensor([1, 3])
    rows = summary(model, x, tag)
    total, trainable = print_summary(rows, model)

    # the hooks are gone: a forward pass now records nothing
    calls = []
    handle = model.classifier.register_forward_hook(lambda m, i, o: calls.append(o.shape))
    model(x, tag)
    handle.remove()
    model(x, tag)
    print(f"hook calls before and after remove(): {len(calls)}")

    loss = model(x, tag).logsumexp(1).mean()
    nodes = walk_graph(loss.grad_fn)
    print(f"autograd graph: {len(nodes)} nodes, root {nodes[0]}")
    for name, count in sorted(Counter(nodes).items()):
        print(f"  {name:<32}{count}")

    # training, with a full backward hook on the first convolution
    grad_norms = []
    first_conv = model.features[0]
    handle = first_conv.register_full_backward_hook(
        lambda module, grad_input, grad_output: grad_norms.append(grad_output[0].norm().item()))
    targets = torch.randint(0, 3, (16,))
    inputs = torch.randn(16, 3, 8, 8) + targets.view(-1, 1, 1, 1).float()
    tags = torch.randint(0, 5, (16,))
    optimizer = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.05,
                                momentum=0.9)
    losses = []
    for _ in range(args.steps):
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(model(inputs, tags), targets)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    handle.remove()
    print(f"backward hook calls: {len(grad_norms)}")
    torch.save(model.state_dict(), os.path.join(args.out, "smallnet.pt"))
    model.eval()
    with torch.no_grad():
        torch.save({"input": inputs[:4], "tag": tags[:4], "output": model(inputs[:4], tags[:4])},
                   os.path.join(args.out, "probe.pt"))
    with open(os.path.join(args.out, "summary.json"), "w") as f:
        json.dump(rows, f, indent=1)
    with open(os.path.join(args.out, "metrics.json"), "w") as f:
        json.dump({"losses": losses, "total": total, "trainable": trainable,
                   "grad_norms": grad_norms, "graph_nodes": len(nodes)}, f)


if __name__ == "__main__":
    main()
