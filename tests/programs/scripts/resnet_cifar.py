"""A CIFAR-style ResNet (3 stages of BasicBlocks with BatchNorm, shortcut projections) trained
with SGD + Nesterov momentum, OneCycleLR and data augmentation (RandomCrop with padding,
RandomHorizontalFlip) on synthetic 32x32 RGB images of four pattern classes.

    python resnet_cifar.py --out runs/resnet
"""
import argparse
import json
import os
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision.transforms as transforms
from PIL import Image
from torch.utils.data import DataLoader, Dataset


class BasicBlock(nn.Module):
    expansion = 1

    def __init__(self, in_planes, planes, stride=1):
        super().__init__()
        self.conv1 = nn.Conv2d(in_planes, planes, 3, stride=stride, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.conv2 = nn.Conv2d(planes, planes, 3, stride=1, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.shortcut = nn.Sequential()
        if stride != 1 or in_planes != planes:
            self.shortcut = nn.Sequential(
                nn.Conv2d(in_planes, planes, 1, stride=stride, bias=False),
                nn.BatchNorm2d(planes),
            )

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return F.relu(out + self.shortcut(x))


class ResNet(nn.Module):
    def __init__(self, block, num_blocks, num_classes=4, width=8):
        super().__init__()
        self.in_planes = width
        self.conv1 = nn.Conv2d(3, width, 3, stride=1, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(width)
        self.layer1 = self._make_layer(block, width, num_blocks[0], stride=1)
        self.layer2 = self._make_layer(block, 2 * width, num_blocks[1], stride=2)
        self.layer3 = self._make_layer(block, 4 * width, num_blocks[2], stride=2)
        self.linear = nn.Linear(4 * width * block.expansion, num_classes)
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
            elif isinstance(m, nn.BatchNorm2d):
                nn.init.constant_(m.weight, 1)
                nn.init.constant_(m.bias, 0)

    def _make_layer(self, block, planes, num_blocks, stride):
        layers = []
        for s in [stride] + [1] * (num_blocks - 1):
            layers.append(block(self.in_planes, planes, s))
            self.in_planes = planes * block.expansion
        return nn.Sequential(*layers)

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.layer3(self.layer2(self.layer1(out)))
        out = F.adaptive_avg_pool2d(out, 1)
        return self.linear(torch.flatten(out, 1))


def build_model():
    return ResNet(BasicBlock, [1, 1, 1])


CLASSES = ("horizontal stripes", "vertical stripes", "checkerboard", "ring")


def synthetic_cifar(n, seed):
    """n random 32x32 RGB images of four pattern classes, each in a random colour, phase and
    stripe width, with noise: a stand-in for CIFAR that needs no download."""
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, len(CLASSES), size=n)
    yy, xx = np.mgrid[0:32, 0:32].astype(np.float32)
    images = np.empty((n, 32, 32, 3), dtype=np.uint8)
    for i, label in enumerate(labels):
        period = rng.uniform(5, 9)
        phase = rng.uniform(0, 2 * np.pi)
        if label == 0:
            wave = np.sin(2 * np.pi * yy / period + phase)
        elif label == 1:
            wave = np.sin(2 * np.pi * xx / period + phase)
        elif label == 2:
            wave = np.sin(2 * np.pi * xx / period + phase) * np.sin(2 * np.pi * yy / period)
        else:
            cy, cx = rng.uniform(10, 22, size=2)
            wave = np.sin(2 * np.pi * np.hypot(yy - cy, xx - cx) / period + phase)
        colour = rng.uniform(0.3, 1.0, size=3)
        pixels = 0.5 + 0.4 * wave[..., None] * colour + rng.normal(0, 0.1, size=(32, 32, 3))
        images[i] = np.clip(pixels * 255, 0, 255).astype(np.uint8)
    return images, labels


class PatternDataset(Dataset):
    """CIFAR-like: items are (PIL RGB image, int label) before the transform."""

    def __init__(self, n, transform=None, seed=0):
        self.images, self.labels = synthetic_cifar(n, seed)
        self.transform = transform

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, i):
        img = Image.fromarray(self.images[i], mode="RGB")
        if self.transform is not None:
            img = self.transform(img)
        return img, int(self.labels[i])


def train(model, loader, criterion, optimizer, scheduler, device):
    model.train()
    losses = []
    for inputs, targets in loader:
        inputs, targets = inputs.to(device), targets.to(device)
        optimizer.zero_grad()
        loss = criterion(model(inputs), targets)
        loss.backward()
        optimizer.step()
        scheduler.step()
        losses.append(loss.item())
    return losses


def test(model, loader, device):
    model.eval()
    correct = total = 0
    with torch.no_grad():
        for inputs, targets in loader:
            inputs, targets = inputs.to(device), targets.to(device)
            _, predicted = model(inputs).max(1)
            total += targets.size(0)
            correct += predicted.eq(targets).sum().item()
    return correct / total


def main():
    parser = argparse.ArgumentParser(description="CIFAR-style ResNet on synthetic images")
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--train-size", type=int, default=512)
    parser.add_argument("--test-size", type=int, default=200)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--lr", type=float, default=0.1)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default="runs/resnet")
    parser.add_argument("--device", default="cpu", help="cpu or cuda")
    args = parser.parse_args()
    torch.manual_seed(args.seed)
    os.makedirs(args.out, exist_ok=True)

    normalize = transforms.Normalize((0.5, 0.5, 0.5), (0.25, 0.25, 0.25))
    transform_train = transforms.Compose([
        transforms.RandomCrop(32, padding=4),
        transforms.RandomHorizontalFlip(),
        transforms.ToTensor(),
        normalize,
    ])
    transform_test = transforms.Compose([transforms.ToTensor(), normalize])
    trainset = PatternDataset(args.train_size, transform_train, seed=1)
    testset = PatternDataset(args.test_size, transform_test, seed=2)
    trainloader = DataLoader(trainset, batch_size=args.batch_size, shuffle=True, drop_last=True)
    testloader = DataLoader(testset, batch_size=100, shuffle=False)

    device = torch.device(args.device)
    model = build_model().to(device)
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9, weight_decay=5e-4,
                                nesterov=True)
    scheduler = torch.optim.lr_scheduler.OneCycleLR(
        optimizer, max_lr=args.lr, total_steps=args.epochs * len(trainloader))
    losses = []
    start = time.time()
    for epoch in range(args.epochs):
        losses += train(model, trainloader, criterion, optimizer, scheduler, device)
        acc = test(model, testloader, device)
        print(f"epoch {epoch}: loss {losses[-1]:.3f} test acc {100 * acc:.1f}% "
              f"({time.time() - start:.1f}s)")

    torch.save(model.state_dict(), os.path.join(args.out, "resnet.pth"))
    probe = next(iter(testloader))[0].to(device)
    with torch.no_grad():
        torch.save({"input": probe[:8], "output": model(probe[:8])},
                   os.path.join(args.out, "probe.pt"))
    with open(os.path.join(args.out, "metrics.json"), "w") as f:
        json.dump({"losses": losses, "accuracy": acc,
                   "running_var_mean": model.bn1.running_var.mean().item()}, f)


if __name__ == "__main__":
    main()
