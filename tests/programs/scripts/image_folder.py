"""A folder of images through torchvision.datasets.ImageFolder and a DataLoader with two
worker processes. The script first draws its data set with PIL (circles, squares and
triangles, as PNG files in class folders under a temporary directory), then trains a small CNN
with augmentation and reports per-class accuracy.

    python image_folder.py --out runs/shapes
"""
import argparse
import json
import os
import random
import shutil
import tempfile

import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision.transforms as transforms
from PIL import Image, ImageDraw
from torch.utils.data import DataLoader
from torchvision.datasets import ImageFolder

CLASSES = ("circle", "square", "triangle")


def draw_dataset(root, per_class, seed):
    rnd = random.Random(seed)
    for name in CLASSES:
        os.makedirs(os.path.join(root, name), exist_ok=True)
        for i in range(per_class):
            background = tuple(rnd.randrange(0, 80) for _ in range(3))
            colour = tuple(rnd.randrange(120, 256) for _ in range(3))
            img = Image.new("RGB", (24, 24), background)
            draw = ImageDraw.Draw(img)
            r = rnd.randrange(5, 9)
            cx, cy = rnd.randrange(r + 1, 23 - r), rnd.randrange(r + 1, 23 - r)
            if name == "circle":
                draw.ellipse([cx - r, cy - r, cx + r, cy + r], fill=colour)
            elif name == "square":
                draw.rectangle([cx - r, cy - r, cx + r, cy + r], fill=colour)
            else:
                draw.polygon([(cx, cy - r), (cx - r, cy + r), (cx + r, cy + r)], fill=colour)
            img.save(os.path.join(root, name, f"{i:03d}.png"))


class Net(nn.Module):
    def __init__(self, num_classes=3):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1)
        self.conv2 = nn.Conv2d(8, 16, 3, padding=1)
        self.pool = nn.MaxPool2d(2, 2)
        self.fc1 = nn.Linear(16 * 6 * 6, 32)
        self.fc2 = nn.Linear(32, num_classes)

    def forward(self, x):
        x = self.pool(F.relu(self.conv1(x)))
        x = self.pool(F.relu(self.conv2(x)))
        x = x.view(x.size(0), -1)
        return self.fc2(F.relu(self.fc1(x)))


def build_model():
    return Net()


def main():
    parser = argparse.ArgumentParser(description="ImageFolder + DataLoader(num_workers=2)")
    parser.add_argument("--per-class", type=int, default=48)
    parser.add_argument("--epochs", type=int, default=6)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default="runs/shapes")
    args = parser.parse_args()
    torch.manual_seed(args.seed)
    os.makedirs(args.out, exist_ok=True)

    root = tempfile.mkdtemp(prefix="shapes-")
    try:
        draw_dataset(os.path.join(root, "train"), args.per_class, seed=1)
        draw_dataset(os.path.join(root, "val"), 20, seed=2)
        normalize = transforms.Normalize(mean=[0.3, 0.3, 0.3], std=[0.3, 0.3, 0.3])
        train_set = ImageFolder(os.path.join(root, "train"), transforms.Compose([
            transforms.RandomHorizontalFlip(), transforms.ToTensor(), normalize]))
        val_set = ImageFolder(os.path.join(root, "val"),
                              transforms.Compose([transforms.ToTensor(), normalize]))
        print(train_set)
        print(f"classes {train_set.classes} -> {train_set.class_to_idx}")
        train_loader = DataLoader(train_set, batch_size=16, shuffle=True,
                                  num_workers=args.workers, persistent_workers=True)
        val_loader = DataLoader(val_set, batch_size=30, num_workers=args.workers)

        model = Net(len(train_set.classes))
        criterion = nn.CrossEntropyLoss()
        optimizer = torch.optim.Adam(model.parameters(), lr=5e-3)
        losses = []
        for epoch in range(args.epochs):
            model.train()
            running = 0.0
            for inputs, labels in train_loader:
                optimizer.zero_grad()
                loss = criterion(model(inputs), labels)
                loss.backward()
                optimizer.step()
                running += loss.item()
            losses.append(running / len(train_loader))
            print(f"[{epoch + 1}] loss: {losses[-1]:.3f}")

        model.eval()
        correct = {c: 0 for c in train_set.classes}
        total = {c: 0 for c in train_set.classes}
        with torch.no_grad():
            for images, labels in val_loader:
                _, predictions = torch.max(model(images), 1)
                for label, prediction in zip(labels, predictions):
                    name = train_set.classes[label]
                    correct[name] += int(label == prediction)
                    total[name] += 1
        for name in train_set.classes:
            print(f"Accuracy for class: {name:8s} is {100 * correct[name] / total[name]:.1f} %")
        accuracy = sum(correct.values()) / sum(total.values())
        files = sorted(os.path.relpath(p, root) for p, _ in train_set.samples)
        probe = torch.stack([val_set[i][0] for i in (0, 25, 50)])
    finally:
        shutil.rmtree(root)
    torch.save(model.state_dict(), os.path.join(args.out, "shapes_cnn.pt"))
    with torch.no_grad():
        torch.save({"input": probe, "output": model(probe)}, os.path.join(args.out, "probe.pt"))
    with open(os.path.join(args.out, "metrics.json"), "w") as f:
        json.dump({"losses": losses, "accuracy": accuracy, "classes": train_set.classes,
                   "num_train": len(train_set), "first_files": files[:2]}, f)


if __name__ == "__main__":
    main()
