"""DCGAN (as in PyTorch's DCGAN tutorial) on the 8x8 handwritten digits: a ConvTranspose2d
generator and a strided-Conv2d discriminator with BatchNorm and LeakyReLU, weights_init applied
with model.apply, BCELoss, Adam(betas=(0.5, 0.999)), a fixed noise vector to watch progress.

    python dcgan.py --data digits.npz --out runs/dcgan
"""
import argparse
import json
import os

import numpy as np
import torch
import torch.nn as nn
import torch.optim as optim
import torch.utils.data
import torchvision.utils as vutils

nz, ngf, ndf, nc = 16, 32, 32, 1


def weights_init(m):
    classname = m.__class__.__name__
    if classname.find("Conv") != -1:
        nn.init.normal_(m.weight.data, 0.0, 0.02)
    elif classname.find("BatchNorm") != -1:
        nn.init.normal_(m.weight.data, 1.0, 0.02)
        nn.init.constant_(m.bias.data, 0)


class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.main = nn.Sequential(
            nn.ConvTranspose2d(nz, ngf * 2, 4, 1, 0, bias=False),   # 4x4
            nn.BatchNorm2d(ngf * 2),
            nn.ReLU(True),
            nn.ConvTranspose2d(ngf * 2, ngf, 4, 2, 1, bias=False),  # 8x8
            nn.BatchNorm2d(ngf),
            nn.ReLU(True),
            nn.Conv2d(ngf, nc, 3, 1, 1, bias=False),
            nn.Tanh(),
        )

    def forward(self, input):
        return self.main(input)


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.main = nn.Sequential(
            nn.Conv2d(nc, ndf, 4, 2, 1, bias=False),                # 4x4
            nn.LeakyReLU(0.2, inplace=True),
            nn.Conv2d(ndf, ndf * 2, 4, 2, 1, bias=False),           # 2x2
            nn.BatchNorm2d(ndf * 2),
            nn.LeakyReLU(0.2, inplace=True),
            nn.Conv2d(ndf * 2, 1, 2, 1, 0, bias=False),
            nn.Sigmoid(),
        )

    def forward(self, input):
        return self.main(input).view(-1, 1).squeeze(1)


def build_model():
    return Generator()


def main():
    parser = argparse.ArgumentParser(description="DCGAN on the 8x8 digits")
    parser.add_argument("--data", required=True)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--niter", type=int, default=4, help="epochs")
    parser.add_argument("--lr", type=float, default=0.002)
    parser.add_argument("--beta1", type=float, default=0.5)
    parser.add_argument("--manualSeed", type=int, default=999)
    parser.add_argument("--out", default="runs/dcgan")
    opt = parser.parse_args()
    torch.manual_seed(opt.manualSeed)
    os.makedirs(opt.out, exist_ok=True)

    images = np.load(opt.data)["train_images"].astype(np.float32) / 127.5 - 1.0
    dataset = torch.utils.data.TensorDataset(torch.from_numpy(images).unsqueeze(1))
    dataloader = torch.utils.data.DataLoader(dataset, batch_size=opt.batch_size, shuffle=True,
                                             drop_last=True)
    real_mean = dataset.tensors[0].mean(0)

    netG = Generator()
    netG.apply(weights_init)
    netD = Discriminator()
    netD.apply(weights_init)
    criterion = nn.BCELoss()
    fixed_noise = torch.randn(64, nz, 1, 1)
    real_label, fake_label = 1.0, 0.0
    optimizerD = optim.Adam(netD.parameters(), lr=opt.lr, betas=(opt.beta1, 0.999))
    optimizerG = optim.Adam(netG.parameters(), lr=opt.lr, betas=(opt.beta1, 0.999))

    def distance_to_data():
        """How far the generator's mean image is from the data's mean image."""
        netG.eval()
        with torch.no_grad():
            d = (netG(fixed_noise).mean(0) - real_mean).abs().mean().item()
        netG.train()
        return d

    history = {"distance": [distance_to_data()], "loss_D": [], "loss_G": [], "D_x": []}
    for epoch in range(opt.niter):
        for i, (real_cpu,) in enumerate(dataloader, 0):
            # (1) Update D network: maximize log(D(x)) + log(1 - D(G(z)))
            netD.zero_grad()
            batch_size = real_cpu.size(0)
            label = torch.full((batch_size,), real_label, dtype=real_cpu.dtype)
            output = netD(real_cpu)
            errD_real = criterion(output, label)
            errD_real.backward()
            D_x = output.mean().item()
            noise = torch.randn(batch_size, nz, 1, 1)
            fake = netG(noise)
            label.fill_(fake_label)
            output = netD(fake.detach())
            errD_fake = criterion(output, label)
            errD_fake.backward()
            errD = errD_real + errD_fake
            optimizerD.step()
            # (2) Update G network: maximize log(D(G(z)))
            netG.zero_grad()
            label.fill_(real_label)
            output = netD(fake)
            errG = criterion(output, label)
            errG.backward()
            optimizerG.step()
            history["loss_D"].append(errD.item())
            history["loss_G"].append(errG.item())
            history["D_x"].append(D_x)
        history["distance"].append(distance_to_data())
        print(f"[{epoch}/{opt.niter}] Loss_D: {errD.item():.4f} Loss_G: {errG.item():.4f} "
              f"D(x): {D_x:.4f} distance to data {history['distance'][-1]:.4f}")
        vutils.save_image(netG(fixed_noise).detach(), f"{opt.out}/fake_samples_epoch_{epoch:03d}.png",
                          normalize=True)

    torch.save(netG.state_dict(), f"{opt.out}/netG_epoch_{opt.niter - 1}.pth")
    torch.save(netD.state_dict(), f"{opt.out}/netD_epoch_{opt.niter - 1}.pth")
    netG.eval()
    with torch.no_grad():
        torch.save({"input": fixed_noise[:8], "output": netG(fixed_noise[:8])},
                   f"{opt.out}/probe.pt")
    with open(f"{opt.out}/metrics.json", "w") as f:
        json.dump(history, f)


if __name__ == "__main__":
    main()
