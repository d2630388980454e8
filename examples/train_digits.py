"""ember's main job: train a small CNN on the 8x8 handwritten digits shipped with ember.

Written as a PyTorch user writes it (`import ember as torch`): Dataset, DataLoader,
nn.Module, CrossEntropyLoss, an optimiser, a progress bar (tqdm, if installed), per-epoch
loss and test accuracy, a checkpoint that PyTorch itself can load, and a PNG plot of the
training curves (matplotlib, if installed).

    python examples/train_digits.py [--epochs 8] [--out runs/digits] [--device cuda]
"""
import argparse
import os
import time

import ember as torch
from ember import nn
from ember.utils.data import DataLoader
from ember.vision import datasets, transforms

try:
    from tqdm import tqdm
except ImportError:  # the progress bar is optional
    tqdm = None


def digits_cnn_class(nn):
    """The model class, built from a library's `nn` (ember's here; PyTorch's too in
    benchmarks/bench_models.py, which times the same body in both)."""
    class DigitsCNN(nn.Module):
        def __init__(self):
            super().__init__()
            self.features = nn.Sequential(
                nn.Conv2d(1, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(),
                nn.Conv2d(16, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(),
                nn.MaxPool2d(2),
            )
            self.classifier = nn.Sequential(
                nn.Flatten(), nn.Dropout(0.25), nn.Linear(32 * 4 * 4, 64), nn.ReLU(),
                nn.Linear(64, 10),
            )

        def forward(self, x):
            return self.classifier(self.features(x))
    return DigitsCNN


DigitsCNN = digits_cnn_class(nn)


def evaluate(model, loader, device):
    model.eval()
    correct = total = 0
    with torch.no_grad():
        for images, labels in loader:
            images, labels = images.to(device), labels.to(device)
            correct += (model(images).argmax(1) == labels).sum().item()
            total += labels.numel()
    return correct / total


def plot(history, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no plot (pip install -e '.[examples]')")
        return
    fig, ax1 = plt.subplots(figsize=(6, 4))
    epochs = range(1, len(history["loss"]) + 1)
    ax1.plot(epochs, history["loss"], "o-", color="tab:blue", label="training loss")
    ax1.set_xlabel("epoch")
    ax1.set_ylabel("training loss", color="tab:blue")
    ax2 = ax1.twinx()
    ax2.plot(epochs, [100 * a for a in history["accuracy"]], "s-", color="tab:orange",
             label="test accuracy")
    ax2.set_ylabel("test accuracy (%)", color="tab:orange")
    ax1.set_title("ember: small CNN on the 8x8 digits")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    print(f"training curves: {path}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=8)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--lr", type=float, default=2e-3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default="runs/digits")
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    args = parser.parse_args()
    device = torch.device(args.device)
    torch.manual_seed(args.seed)
    os.makedirs(args.out, exist_ok=True)

    tf = transforms.Compose([transforms.ToTensor(), transforms.Normalize((0.3,), (0.35,))])
    train_set = datasets.Digits(train=True, transform=tf)
    test_set = datasets.Digits(train=False, transform=tf)
    train_loader = DataLoader(train_set, batch_size=args.batch_size, shuffle=True)
    test_loader = DataLoader(test_set, batch_size=256)

    model = DigitsCNN().to(device)
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=args.epochs)
    history = {"loss": [], "accuracy": []}
    start = time.perf_counter()
    for epoch in range(1, args.epochs + 1):
        model.train()
        batches = tqdm(train_loader, desc=f"epoch {epoch:2d}", leave=False) if tqdm else \
            train_loader
        total_loss = 0.0
        for images, labels in batches:
            images, labels = images.to(device), labels.to(device)
            optimizer.zero_grad()
            loss = criterion(model(images), labels)
            loss.backward()
            optimizer.step()
            total_loss += loss.item() * labels.numel()
            if tqdm:
                batches.set_postfix(loss=f"{loss.item():.3f}")
        scheduler.step()
        history["loss"].append(total_loss / len(train_set))
        history["accuracy"].append(evaluate(model, test_loader, device))
        print(f"epoch {epoch:2d}  loss {history['loss'][-1]:.4f}  "
              f"test accuracy {100 * history['accuracy'][-1]:.2f}%")
    elapsed = time.perf_counter() - start
    print(f"trained {args.epochs} epochs on {device} in {elapsed:.1f} s; final test accuracy "
          f"{100 * history['accuracy'][-1]:.2f}%")
    checkpoint = os.path.join(args.out, "digits_cnn.pt")
    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                "epoch": args.epochs, "history": history}, checkpoint)
    print(f"checkpoint (loads in PyTorch with torch.load; map_location='cpu' for a GPU run's "
          f"on a machine without one): {checkpoint}")
    plot(history, os.path.join(args.out, "training_curves.png"))


if __name__ == "__main__":
    main()
