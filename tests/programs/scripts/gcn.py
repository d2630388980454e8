"""Graph Convolutional Network (Kipf & Welling; in the style of the pygcn reference code) for
semi-supervised node classification on a sparse, symmetrically normalised adjacency matrix
(torch.sparse_coo_tensor, torch.sparse.mm). The graph is a stochastic block model: four
communities, noisy node features, labels known for only 10 nodes of each community.

    python gcn.py --out runs/gcn
"""
import argparse
import json
import math
import os

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.nn.parameter import Parameter


class GraphConvolution(nn.Module):
    def __init__(self, in_features, out_features, bias=True):
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        self.weight = Parameter(torch.FloatTensor(in_features, out_features))
        if bias:
            self.bias = Parameter(torch.FloatTensor(out_features))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.weight.size(1))
        self.weight.data.uniform_(-stdv, stdv)
        if self.bias is not None:
            self.bias.data.uniform_(-stdv, stdv)

    def forward(self, input, adj):
        support = torch.mm(input, self.weight)
        output = torch.sparse.mm(adj, support)
        return output + self.bias if self.bias is not None else output

    def __repr__(self):
        return f"{self.__class__.__name__} ({self.in_features} -> {self.out_features})"


class GCN(nn.Module):
    def __init__(self, nfeat, nhid, nclass, dropout):
        super().__init__()
        self.gc1 = GraphConvolution(nfeat, nhid)
        self.gc2 = GraphConvolution(nhid, nclass)
        self.dropout = dropout

    def forward(self, x, adj):
        x = F.relu(self.gc1(x, adj))
        x = F.dropout(x, self.dropout, training=self.training)
        return F.log_softmax(self.gc2(x, adj), dim=1)


def build_model():
    return GCN(nfeat=16, nhid=16, nclass=4, dropout=0.5)


def stochastic_block_model(sizes, p_in, p_out, nfeat, seed):
    rng = np.random.default_rng(seed)
    labels = np.repeat(np.arange(len(sizes)), sizes)
    n = len(labels)
    same = labels[:, None] == labels[None, :]
    upper = np.triu(rng.random((n, n)) < np.where(same, p_in, p_out), k=1)
    edges = np.argwhere(upper | upper.T)
    centres = rng.normal(0, 1, size=(len(sizes), nfeat))
    features = centres[labels] + rng.normal(0, 2.0, size=(n, nfeat))
    return edges, features.astype(np.float32), labels


def normalized_adjacency(edges, n):
    """D^-1/2 (A + I) D^-1/2 as a sparse COO tensor."""
    self_loops = torch.arange(n).repeat(2, 1)
    indices = torch.cat([torch.from_numpy(edges.T.copy()), self_loops], dim=1)
    values = torch.ones(indices.size(1))
    adj = torch.sparse_coo_tensor(indices, values, (n, n)).coalesce()
    degree = torch.sparse.sum(adj, dim=1).to_dense()
    d_inv_sqrt = degree.pow(-0.5)
    row, col = adj.indices()
    return torch.sparse_coo_tensor(adj.indices(), d_inv_sqrt[row] * adj.values() * d_inv_sqrt[col],
                                   (n, n)).coalesce()


def accuracy(output, labels):
    preds = output.max(1)[1].type_as(labels)
    return preds.eq(labels).double().sum().item() / len(labels)


def main():
    parser = argparse.ArgumentParser(description="GCN on a stochastic block model")
    parser.add_argument("--epochs", type=int, default=60)
    parser.add_argument("--lr", type=float, default=0.01)
    parser.add_argument("--weight_decay", type=float, default=5e-4)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--out", default="runs/gcn")
    args = parser.parse_args()
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    os.makedirs(args.out, exist_ok=True)

    edges, features, labels = stochastic_block_model([40] * 4, 0.2, 0.01, 16, args.seed)
    n = len(labels)
    adj = normalized_adjacency(edges, n)
    features, labels = torch.from_numpy(features), torch.LongTensor(labels)
    idx_train = torch.cat([torch.arange(c * 40, c * 40 + 10) for c in range(4)])
    idx_test = torch.cat([torch.arange(c * 40 + 10, c * 40 + 40) for c in range(4)])
    print(f"{n} nodes, {len(edges) // 2} edges, adjacency nnz {adj._nnz()}, "
          f"layout {adj.layout}")

    model = build_model()
    print(model)
    optimizer = optim.Adam(model.parameters(), lr=args.lr, weight_decay=args.weight_decay)
    losses = []
    for epoch in range(args.epochs):
        model.train()
        optimizer.zero_grad()
        output = model(features, adj)
        loss_train = F.nll_loss(output[idx_train], labels[idx_train])
        loss_train.backward()
        optimizer.step()
        losses.append(loss_train.item())
        if epoch % 20 == 0:
            print(f"Epoch: {epoch + 1:04d} loss_train: {loss_train.item():.4f} "
                  f"acc_train: {accuracy(output[idx_train], labels[idx_train]):.4f}")

    model.eval()
    with torch.no_grad():
        output = model(features, adj)
    acc_test = accuracy(output[idx_test], labels[idx_test])
    # the features alone, without the graph, for comparison: a GCN whose adjacency is I
    eye = torch.sparse_coo_tensor(torch.arange(n).repeat(2, 1), torch.ones(n), (n, n))
    with torch.no_grad():
        acc_no_graph = accuracy(model(features, eye)[idx_test], labels[idx_test])
    print(f"Test set results: accuracy= {acc_test:.4f} (features only: {acc_no_graph:.4f})")
    torch.save(model.state_dict(), os.path.join(args.out, "gcn.pt"))
    torch.save({"input": features, "adj": adj, "output": output},
               os.path.join(args.out, "probe.pt"))
    with open(os.path.join(args.out, "metrics.json"), "w") as f:
        json.dump({"losses": losses, "accuracy": acc_test, "nnz": adj._nnz(),
                   "edges": len(edges) // 2}, f)


if __name__ == "__main__":
    main()
