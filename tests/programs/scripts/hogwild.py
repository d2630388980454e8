"""Hogwild! training (PyTorch's examples/mnist_hogwild): one model in shared memory
(model.share_memory()), several torch.multiprocessing Processes each running its own optimizer
on it without locks; the parent then tests the model the workers trained. Data: the 8x8 digits.

    python hogwild.py --data digits.npz --num-processes 2 --out runs/hogwild
"""
import argparse
import json
import os

import numpy as np
import torch
import torch.multiprocessing as mp
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.utils.data import DataLoader, TensorDataset


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, kernel_size=3, padding=1)
        self.fc1 = nn.Linear(8 * 4 * 4, 32)
        self.fc2 = nn.Linear(32, 10)

    def forward(self, x):
        x = F.relu(F.max_pool2d(self.conv1(x), 2))
        x = x.view(-1, 8 * 4 * 4)
        x = F.relu(self.fc1(x))
        return F.log_softmax(self.fc2(x), dim=1)


def build_model():
    return Net()


def load_digits(path, split):
    data = np.load(path)
    images = torch.from_numpy(data[f"{split}_images"]).float().div(255).unsqueeze(1)
    return TensorDataset((images - 0.3) / 0.35, torch.from_numpy(data[f"{split}_labels"]).long())


def train(rank, args, model):
    torch.manual_seed(args.seed + rank)
    train_loader = DataLoader(load_digits(args.data, "train"), batch_size=args.batch_size,
                              shuffle=True)
    optimizer = optim.SGD(model.parameters(), lr=args.lr, momentum=args.momentum)
    model.train()
    for epoch in range(1, args.epochs + 1):
        for batch_idx, (data, target) in enumerate(train_loader):
            optimizer.zero_grad()
            loss = F.nll_loss(model(data), target)
            loss.backward()
            optimizer.step()
        print(f"{os.getpid()}\tTrain Epoch: {epoch} \tLoss: {loss.item():.6f}", flush=True)


def test(args, model):
    test_loader = DataLoader(load_digits(args.data, "test"), batch_size=256)
    model.eval()
    test_loss = correct = 0
    with torch.no_grad():
        for data, target in test_loader:
            output = model(data)
            test_loss += F.nll_loss(output, target, reduction="sum").item()
            correct += output.max(1)[1].eq(target).sum().item()
    n = len(test_loader.dataset)
    print(f"\nTest set: Average loss: {test_loss / n:.4f}, Accuracy: {correct}/{n} "
          f"({100. * correct / n:.0f}%)\n")
    return test_loss / n, correct / n


def main():
    parser = argparse.ArgumentParser(description="Hogwild training on the 8x8 digits")
    parser.add_argument("--data", required=True)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--lr", type=float, default=0.05)
    parser.add_argument("--momentum", type=float, default=0.5)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--num-processes", type=int, default=2)
    parser.add_argument("--out", default="runs/hogwild")
    args = parser.parse_args()
    torch.manual_seed(args.seed)
    os.makedirs(args.out, exist_ok=True)

    model = Net()
    # gradients are allocated lazily, so they are not shared here
    model.share_memory()
    initial_loss, initial_accuracy = test(args, model)

    processes = []
    for rank in range(args.num_processes):
        p = mp.Process(target=train, args=(rank, args, model))
        p.start()
        processes.append(p)
    for p in processes:
        p.join()
    exitcodes = [p.exitcode for p in processes]

    # the parent never ran an optimizer step: what it tests is what the workers wrote
    test_loss, accuracy = test(args, model)
    torch.save(model.state_dict(), os.path.join(args.out, "hogwild.pt"))
    probe = load_digits(args.data, "test").tensors[0][:16]
    with torch.no_grad():
        torch.save({"input": probe, "output": model(probe)}, os.path.join(args.out, "probe.pt"))
    with open(os.path.join(args.out, "metrics.json"), "w") as f:
        json.dump({"losses": [initial_loss, test_loss], "accuracy": accuracy,
                   "initial_accuracy": initial_accuracy, "exitcodes": exitcodes,
                   "is_shared": all(p.is_shared() for p in model.parameters())}, f)


if __name__ == "__main__":
    main()
