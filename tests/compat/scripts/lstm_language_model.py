# The word-language-model example, in small: Embedding -> LSTM -> Linear, truncated BPTT with
# detached hidden states, gradient clipping, perplexity going down.
import math

import torch
import torch.nn as nn

torch.manual_seed(0)


class RNNModel(nn.Module):
    def __init__(self, ntoken, ninp, nhid, nlayers, dropout=0.2):
        super().__init__()
        self.drop = nn.Dropout(dropout)
        self.encoder = nn.Embedding(ntoken, ninp)
        self.rnn = nn.LSTM(ninp, nhid, nlayers, dropout=dropout)
        self.decoder = nn.Linear(nhid, ntoken)
        self.nlayers, self.nhid = nlayers, nhid

    def forward(self, input, hidden):
        emb = self.drop(self.encoder(input))
        output, hidden = self.rnn(emb, hidden)
        return self.decoder(self.drop(output)).view(-1, self.decoder.out_features), hidden

    def init_hidden(self, bsz):
        weight = next(self.parameters())
        return (weight.new_zeros(self.nlayers, bsz, self.nhid),
                weight.new_zeros(self.nlayers, bsz, self.nhid))


def repackage_hidden(h):
    return h.detach() if isinstance(h, torch.Tensor) else tuple(repackage_hidden(v) for v in h)


ntokens, bptt, batch = 12, 8, 4
data = torch.arange(0, 12).repeat(40) % ntokens  # a periodic "corpus": learnable
data = data[: (data.size(0) // batch) * batch].view(batch, -1).t().contiguous()
model = RNNModel(ntokens, 16, 32, 2)
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=2.0)
losses = []
for epoch in range(4):
    model.train()
    hidden = model.init_hidden(batch)
    total = 0.0
    for i in range(0, data.size(0) - 1, bptt):
        seq_len = min(bptt, data.size(0) - 1 - i)
        source, target = data[i:i + seq_len], data[i + 1:i + 1 + seq_len].reshape(-1)
        hidden = repackage_hidden(hidden)
        model.zero_grad()
        output, hidden = model(source, hidden)
        loss = criterion(output, target)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 0.25)
        optimizer.step()
        total += loss.item()
    losses.append(total)
assert losses[-1] < losses[0], losses
print(f"OK ppl={math.exp(losses[-1] / 15):.2f}")
