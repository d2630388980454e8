# A graph convolution over a CSR adjacency matrix: the layouts, conversions, products with
# gradients to the dense weights, and a checkpoint round trip of the sparse matrix.
import io
import warnings

import torch

warnings.filterwarnings("ignore", message="Sparse")
torch.manual_seed(0)
edges = torch.tensor([[0, 1, 1, 2, 3, 4, 4], [1, 0, 2, 1, 4, 3, 0]])
dense_adj = torch.zeros(5, 5).index_put_(tuple(edges), torch.ones(7)) + torch.eye(5)
adj = dense_adj.to_sparse(layout=torch.sparse_csr)
assert adj.layout is torch.sparse_csr and adj.is_sparse_csr and not adj.is_sparse
assert adj.crow_indices().tolist() == [0, 2, 5, 7, 9, 12]
assert torch.equal(adj.to_sparse_csc().to_dense(), dense_adj)
assert torch.equal(adj.to_sparse().to_dense(), dense_adj)
rows = torch.crow_indices_copy(adj)
assert rows.tolist() == adj.crow_indices().tolist()
built = torch.sparse_csr_tensor(adj.crow_indices(), adj.col_indices(), adj.values(),
                                size=(5, 5), check_invariants=True)
assert "layout=torch.sparse_csr" in repr(built)

features = torch.randn(5, 3)
target = torch.randn(5, 2)
weight = torch.nn.Parameter(torch.randn(3, 2) * 0.1)
opt = torch.optim.SGD([weight], lr=0.1)
losses = []
for _ in range(30):
    out = torch.sparse.mm(adj, features @ weight) * 0.5
    loss = ((out - target) ** 2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    losses.append(loss.item())
assert losses[-1] < losses[0]
assert torch.allclose(adj @ features, dense_adj @ features)
assert torch.allclose(torch.mv(adj, features[:, 0]), dense_adj @ features[:, 0])

buffer = io.BytesIO()
torch.save({"adj": adj, "weight": weight.detach()}, buffer)
buffer.seek(0)
state = torch.load(buffer)
assert state["adj"].layout == torch.sparse_csr
assert torch.equal(state["adj"].to_dense(), dense_adj)
print("OK", round(losses[0], 4), round(losses[-1], 4))
