"""REINFORCE (PyTorch's examples/reinforcement_learning/reinforce.py) on a tiny hand-written
environment: a corridor of seven cells; the agent starts in the middle and is shown which end
holds the treasure (+1; the other end costs -1, each step -0.02). The policy samples actions
from torch.distributions.Categorical and learns from discounted, normalised returns.

    python reinforce.py --out runs/reinforce
"""
import argparse
import json
import os
import random

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.distributions import Categorical


class Corridor:
    """A minimal gym-like environment: reset() -> state, step(action) -> state, reward, done."""
    length = 7
    max_steps = 12

    def __init__(self, seed=None):
        self.rng = random.Random(seed)

    def observation(self):
        obs = np.zeros(self.length + 2, dtype=np.float32)
        obs[self.position] = 1.0
        obs[self.length + self.goal] = 1.0
        return obs

    def reset(self):
        self.position, self.goal, self.steps = self.length // 2, self.rng.randrange(2), 0
        return self.observation()

    def step(self, action):  # 0: left, 1: right
        self.position += 1 if action == 1 else -1
        self.steps += 1
        if self.position in (0, self.length - 1):
            reached = 0 if self.position == 0 else 1
            return self.observation(), (1.0 if reached == self.goal else -1.0), True
        return self.observation(), -0.02, self.steps >= self.max_steps


class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.affine1 = nn.Linear(Corridor.length + 2, 32)
        self.dropout = nn.Dropout(p=0.1)
        self.affine2 = nn.Linear(32, 2)
        self.saved_log_probs = []
        self.rewards = []

    def forward(self, x):
        x = F.relu(self.dropout(self.affine1(x)))
        return F.softmax(self.affine2(x), dim=1)


def build_model():
    return Policy()


def main():
    parser = argparse.ArgumentParser(description="REINFORCE on a corridor")
    parser.add_argument("--gamma", type=float, default=0.95)
    parser.add_argument("--episodes", type=int, default=150)
    parser.add_argument("--seed", type=int, default=543)
    parser.add_argument("--log-interval", type=int, default=50)
    parser.add_argument("--out", default="runs/reinforce")
    args = parser.parse_args()
    torch.manual_seed(args.seed)
    os.makedirs(args.out, exist_ok=True)

    env = Corridor(seed=args.seed)
    policy = Policy()
    optimizer = optim.Adam(policy.parameters(), lr=1e-2)
    eps = np.finfo(np.float32).eps.item()

    def select_action(state):
        state = torch.from_numpy(state).float().unsqueeze(0)
        probs = policy(state)
        m = Categorical(probs)
        action = m.sample()
        policy.saved_log_probs.append(m.log_prob(action))
        return action.item()

    def finish_episode():
        R = 0
        policy_loss, returns = [], []
        for r in policy.rewards[::-1]:
            R = r + args.gamma * R
            returns.insert(0, R)
        returns = torch.tensor(returns)
        if len(returns) > 1:
            returns = (returns - returns.mean()) / (returns.std() + eps)
        for log_prob, R in zip(policy.saved_log_probs, returns):
            policy_loss.append(-log_prob * R)
        optimizer.zero_grad()
        policy_loss = torch.cat(policy_loss).sum()
        policy_loss.backward()
        optimizer.step()
        del policy.rewards[:]
        del policy.saved_log_probs[:]

    episode_returns = []
    running_reward = 0.0
    for i_episode in range(1, args.episodes + 1):
        state, ep_reward = env.reset(), 0.0
        for t in range(1, Corridor.max_steps + 1):
            action = select_action(state)
            state, reward, done = env.step(action)
            policy.rewards.append(reward)
            ep_reward += reward
            if done:
                break
        running_reward = 0.05 * ep_reward + (1 - 0.05) * running_reward
        episode_returns.append(ep_reward)
        finish_episode()
        if i_episode % args.log_interval == 0:
            print(f"Episode {i_episode}\tLast reward: {ep_reward:.2f}\t"
                  f"Average reward: {running_reward:.2f}")

    # greedy evaluation: both goals, from the start
    policy.eval()
    solved = 0
    for goal in (0, 1):
        env.reset()
        env.goal = goal
        state, done = env.observation(), False
        while not done:
            with torch.no_grad():
                action = policy(torch.from_numpy(state).unsqueeze(0)).argmax(1).item()
            state, reward, done = env.step(action)
        solved += reward > 0
    print(f"greedy policy reaches the treasure for {solved} of 2 goals")
    torch.save(policy.state_dict(), os.path.join(args.out, "policy.pt"))
    probe = torch.eye(Corridor.length + 2)[: Corridor.length] + \
        torch.eye(Corridor.length + 2)[Corridor.length]
    with torch.no_grad():
        torch.save({"input": probe, "output": policy(probe)}, os.path.join(args.out, "probe.pt"))
    with open(os.path.join(args.out, "metrics.json"), "w") as f:
        json.dump({"returns": episode_returns, "solved": int(solved),
                   "running_reward": running_reward}, f)


if __name__ == "__main__":
    main()
