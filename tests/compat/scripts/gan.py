# A tiny GAN: two networks, two optimisers, detach() between them, BCE losses.
import torch
import torch.nn as nn

torch.manual_seed(0)
G = nn.Sequential(nn.Linear(2, 16), nn.LeakyReLU(0.2), nn.Linear(16, 2))
D = nn.Sequential(nn.Linear(2, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1), nn.Sigmoid())
opt_g = torch.optim.Adam(G.parameters(), lr=2e-3, betas=(0.5, 0.999))
opt_d = torch.optim.Adam(D.parameters(), lr=2e-3, betas=(0.5, 0.999))
criterion = nn.BCELoss()
for it in range(60):
    real = torch.randn(32, 2) * 0.5 + torch.tensor([2.0, -1.0])
    fake = G(torch.randn(32, 2))
    opt_d.zero_grad()
    loss_d = criterion(D(real), torch.ones(32, 1)) + criterion(D(fake.detach()), torch.zeros(32, 1))
    loss_d.backward()
    opt_d.step()
    opt_g.zero_grad()
    loss_g = criterion(D(fake), torch.ones(32, 1))
    loss_g.backward()
    opt_g.step()
print(f"OK d={loss_d.item():.3f} g={loss_g.item():.3f}")
