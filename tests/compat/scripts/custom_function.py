# The "defining new autograd functions" tutorial: a custom Function with its own backward.
import math

import torch


class LegendrePolynomial3(torch.autograd.Function):
    @staticmethod
    def forward(ctx, input):
        ctx.save_for_backward(input)
        return 0.5 * (5 * input ** 3 - 3 * input)

    @staticmethod
    def backward(ctx, grad_output):
        input, = ctx.saved_tensors
        return grad_output * 1.5 * (5 * input ** 2 - 1)


dtype = torch.float
x = torch.linspace(-math.pi, math.pi, 200, dtype=dtype)
y = torch.sin(x)
a, b, c, d = (torch.full((), v, dtype=dtype, requires_grad=True) for v in (0.0, -1.0, 0.0, 0.3))
learning_rate = 5e-6
for t in range(300):
    P3 = LegendrePolynomial3.apply
    y_pred = a + b * P3(c + d * x)
    loss = (y_pred - y).pow(2).sum()
    loss.backward()
    with torch.no_grad():
        for p in (a, b, c, d):
            p -= learning_rate * p.grad
            p.grad = None
assert torch.autograd.gradcheck(LegendrePolynomial3.apply,
                                (torch.randn(4, dtype=torch.double, requires_grad=True),))
print(f"OK loss={loss.item():.2f}")
