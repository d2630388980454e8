# A Gaussian VAE (rsample + analytic KL) and a REINFORCE policy (Categorical log_prob),
# written against torch.distributions as such scripts are: both must learn.
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Categorical, Independent, Normal, kl_divergence

torch.manual_seed(0)

# --- VAE on 2-D points near a line -----------------------------------------------------
data = torch.randn(256, 1) * torch.tensor([[2.0, 1.0]]) + 0.05 * torch.randn(256, 2)
enc, dec = nn.Linear(2, 2), nn.Linear(1, 2)
opt = torch.optim.Adam(list(enc.parameters()) + list(dec.parameters()), lr=0.05)
prior = Independent(Normal(torch.zeros(1), torch.ones(1)), 1)


def elbo_loss():
    stats = enc(data)
    q = Independent(Normal(stats[:, :1], F.softplus(stats[:, 1:]) + 1e-4), 1)
    z = q.rsample()
    recon = Independent(Normal(dec(z), 0.1 * torch.ones(2)), 1).log_prob(data)
    return -(recon - kl_divergence(q, prior)).mean()


first = elbo_loss().item()
for _ in range(300):
    loss = elbo_loss()
    opt.zero_grad()
    loss.backward()
    opt.step()
last = elbo_loss().item()
assert last < first - 50, (first, last)

# --- REINFORCE on a 3-armed bandit whose best arm is 2 -----------------------------------
logits = torch.zeros(3, requires_grad=True)
popt = torch.optim.SGD([logits], lr=0.1)
rewards = torch.tensor([0.0, 0.5, 1.0])
for _ in range(200):
    pi = Categorical(logits=logits)
    a = pi.sample((32,))
    loss = -(pi.log_prob(a) * rewards[a]).mean() - 0.01 * pi.entropy()
    popt.zero_grad()
    loss.backward()
    popt.step()
assert Categorical(logits=logits).probs[2] > 0.8, Categorical(logits=logits).probs
print("OK", round(first, 2), round(last, 2))
