"""Full-batch curve fitting with torch.optim.LBFGS: a small tanh network learns
y = sin(3x) + 0.3x on [-2, 2]. LBFGS re-evaluates the loss itself, through a closure
(with the strong Wolfe line search).

    python lbfgs_fit.py --out runs/lbfgs
"""
import argparse
import json
import os

import torch
import torch.nn as nn


def build_model():
    return nn.Sequential(nn.Linear(1, 20), nn.Tanh(), nn.Linear(20, 20), nn.Tanh(),
                         nn.Linear(20, 1))


def main():
    parser = argparse.ArgumentParser(description="fit a curve with LBFGS")
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default="runs/lbfgs")
    parser.add_argument("--device", default="cpu", help="cpu or cuda")
    args = parser.parse_args()
    torch.manual_seed(args.seed)
    os.makedirs(args.out, exist_ok=True)

    x = torch.linspace(-2, 2, 128).unsqueeze(1)
    y = torch.sin(3 * x) + 0.3 * x
    x_test = torch.rand(64, 1) * 4 - 2
    y_test = torch.sin(3 * x_test) + 0.3 * x_test
    device = torch.device(args.device)
    x, y, x_test, y_test = x.to(device), y.to(device), x_test.to(device), y_test.to(device)
    model = build_model().to(device)
    criterion = nn.MSELoss()
    optimizer = torch.optim.LBFGS(model.parameters(), lr=1, max_iter=20, history_size=10,
                                  line_search_fn="strong_wolfe")
    evaluations = 0

    def closure():
        nonlocal evaluations
        evaluations += 1
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        return loss

    losses = [criterion(model(x), y).item()]
    for step in range(args.steps):
        loss = optimizer.step(closure)
        losses.append(criterion(model(x), y).item())
        print(f"step {step:2d}: loss {loss.item():.6f} -> {losses[-1]:.6f}")
    with torch.no_grad():
        test_loss = criterion(model(x_test), y_test).item()
    state = optimizer.state[optimizer._params[0]]
    print(f"test loss {test_loss:.6f} after {evaluations} closure evaluations, "
          f"{state['n_iter']} iterations")
    torch.save(model.state_dict(), os.path.join(args.out, "model.pt"))
    torch.save(optimizer.state_dict(), os.path.join(args.out, "lbfgs_state.pt"))
    with torch.no_grad():
        torch.save({"input": x_test, "output": model(x_test)}, os.path.join(args.out, "probe.pt"))
    with open(os.path.join(args.out, "metrics.json"), "w") as f:
        json.dump({"losses": losses, "test_loss": test_loss, "evaluations": evaluations,
                   "n_iter": state["n_iter"]}, f)


if __name__ == "__main__":
    main()
