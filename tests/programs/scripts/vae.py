"""A variational autoencoder (as in PyTorch's examples/vae) on the 8x8 handwritten digits:
reparameterisation trick, BCE reconstruction + KL divergence, samples from the prior saved as
an image grid.

    python vae.py --data digits.npz --out runs/vae
"""
import argparse
import json
import os

import numpy as np
import torch
from torch import nn, optim
from torch.nn import functional as F
from torch.utils.data import DataLoader, TensorDataset
from torchvision.utils import save_image


class VAE(nn.Module):
    def __init__(self, pixels=64, hidden=128, latent=8):
        super().__init__()
        self.fc1 = nn.Linear(pixels, hidden)
        self.fc21 = nn.Linear(hidden, latent)
        self.fc22 = nn.Linear(hidden, latent)
        self.fc3 = nn.Linear(latent, hidden)
        self.fc4 = nn.Linear(hidden, pixels)

    def encode(self, x):
        h1 = F.relu(self.fc1(x))
        return self.fc21(h1), self.fc22(h1)

    def reparameterize(self, mu, logvar):
        std = torch.exp(0.5 * logvar)
        eps = torch.randn_like(std)
        return mu + eps * std

    def decode(self, z):
        h3 = F.relu(self.fc3(z))
        return torch.sigmoid(self.fc4(h3))

    def forward(self, x):
        mu, logvar = self.encode(x.view(-1, 64))
        z = self.reparameterize(mu, logvar)
        return self.decode(z), mu, logvar


def build_model():
    return VAE()


def loss_function(recon_x, x, mu, logvar):
    bce = F.binary_cross_entropy(recon_x, x.view(-1, 64), reduction="sum")
    kld = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
    return bce + kld


def main():
    parser = argparse.ArgumentParser(description="VAE on the 8x8 digits")
    parser.add_argument("--data", required=True)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--epochs", type=int, default=6)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", default="runs/vae")
    args = parser.parse_args()
    torch.manual_seed(args.seed)
    os.makedirs(args.out, exist_ok=True)

    data = np.load(args.data)
    train = torch.from_numpy(data["train_images"]).float().div(255).unsqueeze(1)
    test = torch.from_numpy(data["test_images"]).float().div(255).unsqueeze(1)
    train_loader = DataLoader(TensorDataset(train), batch_size=args.batch_size, shuffle=True)
    model = VAE()
    optimizer = optim.Adam(model.parameters(), lr=3e-3)

    model.eval()
    with torch.no_grad():
        recon, mu, logvar = model(test)
        initial_test_loss = loss_function(recon, test, mu, logvar).item() / len(test)
    history = []
    for epoch in range(1, args.epochs + 1):
        model.train()
        train_loss = 0
        for (batch,) in train_loader:
            optimizer.zero_grad()
            recon_batch, mu, logvar = model(batch)
            loss = loss_function(recon_batch, batch, mu, logvar)
            loss.backward()
            train_loss += loss.item()
            optimizer.step()
        history.append(train_loss / len(train_loader.dataset))
        model.eval()
        with torch.no_grad():
            recon, mu, logvar = model(test)
            test_loss = loss_function(recon, test, mu, logvar).item() / len(test)
        print(f"====> Epoch: {epoch} Average loss: {history[-1]:.4f} Test loss: {test_loss:.4f}")

    with torch.no_grad():
        sample = model.decode(torch.randn(64, 8)).cpu()
        save_image(sample.view(64, 1, 8, 8), os.path.join(args.out, "sample.png"))
        comparison = torch.cat([test[:8], recon.view(-1, 1, 8, 8)[:8]])
        save_image(comparison, os.path.join(args.out, "reconstruction.png"), nrow=8)
        torch.save(model.state_dict(), os.path.join(args.out, "vae.pt"))
        mu, _ = model.encode(test[:16].view(-1, 64))
        torch.save({"input": test[:16], "output": model.decode(mu)},
                   os.path.join(args.out, "probe.pt"))
    with open(os.path.join(args.out, "metrics.json"), "w") as f:
        json.dump({"losses": history, "initial_test_loss": initial_test_loss,
                   "test_loss": test_loss}, f)


if __name__ == "__main__":
    main()
