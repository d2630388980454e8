"""A tour of the behaviours ember's users rely on (../shared/SEEDS.md), run with
`import ember as torch`: NumPy sharing, views, dtypes, devices, autograd."""
import numpy as np

import ember as torch

# Tensors and NumPy share memory both ways.
a = np.ones(5)
t = torch.from_numpy(a)
np.add(a, 1, out=a)
print(t)                                   # tensor([2., 2., 2., 2., 2.], dtype=torch.float64)

x = torch.rand(5, 3)
print(x.size(), torch.zeros(5, 3, dtype=torch.long).dtype, torch.tensor([2.5, 3.5]))
print(x.view(15).shape, x.view(-1, 5).shape, x[:, 1].shape)

# Autograd: the worked example gives 4.5 everywhere.
x = torch.ones(2, 2, requires_grad=True)
y = x + 2
z = y * y * 3
out = z.mean()
print(y, out)
out.backward()
print(x.grad)

# .data is not tracked by autograd; detach() is.
a = torch.tensor([7.0, 0, 0], requires_grad=True)
b = a + 2
loss = torch.mean(b * b)
b.detach().zero_()
try:
    loss.backward()
except RuntimeError as e:
    print("RuntimeError:", str(e).split(":")[0])

with torch.no_grad():
    print((x ** 2).requires_grad)          # False
print((x ** 2).requires_grad)              # True

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
print(device, torch.ones(2, device=device).to("cpu", torch.double))
