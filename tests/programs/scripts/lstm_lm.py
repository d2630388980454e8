"""Word-level language model (PyTorch's examples/word_language_model, shrunk): an LSTM with
tied encoder/decoder weights, truncated BPTT with repackaged hidden states, gradient clipping,
the whole model saved with torch.save(model) at the best validation loss and loaded back with
torch.load(weights_only=False) for the final test. The corpus is made up by a small grammar.

    python lstm_lm.py --out runs/lm
"""
import argparse
import json
import math
import os
import random

import torch
import torch.nn as nn


def make_corpus(n_sentences, seed):
    rnd = random.Random(seed)
    subjects = ["the cat", "the dog", "a bird", "my friend", "the teacher", "a child"]
    verbs = ["sees", "likes", "follows", "finds", "calls"]
    objects = ["the ball", "a tree", "the house", "the river", "a book", "the garden"]
    endings = ["today", "again", "quietly", "at night"]
    return [" ".join([rnd.choice(subjects), rnd.choice(verbs), rnd.choice(objects),
                      rnd.choice(endings)]) for _ in range(n_sentences)]


class Dictionary:
    def __init__(self):
        self.word2idx = {}
        self.idx2word = []

    def add_word(self, word):
        if word not in self.word2idx:
            self.idx2word.append(word)
            self.word2idx[word] = len(self.idx2word) - 1
        return self.word2idx[word]

    def __len__(self):
        return len(self.idx2word)


class Corpus:
    def __init__(self, seed=0):
        self.dictionary = Dictionary()
        self.train = self.tokenize(make_corpus(400, seed))
        self.valid = self.tokenize(make_corpus(60, seed + 1))
        self.test = self.tokenize(make_corpus(60, seed + 2))

    def tokenize(self, lines):
        idss = []
        for line in lines:
            words = line.split() + ["<eos>"]
            idss.append(torch.tensor([self.dictionary.add_word(w) for w in words],
                                     dtype=torch.int64))
        return torch.cat(idss)


class RNNModel(nn.Module):
    """Container module with an encoder, a recurrent module, and a decoder."""

    def __init__(self, ntoken, ninp, nhid, nlayers, dropout=0.2, tie_weights=True):
        super().__init__()
        self.ntoken = ntoken
        self.drop = nn.Dropout(dropout)
        self.encoder = nn.Embedding(ntoken, ninp)
        self.rnn = nn.LSTM(ninp, nhid, nlayers, dropout=dropout)
        self.decoder = nn.Linear(nhid, ntoken)
        if tie_weights:
            if nhid != ninp:
                raise ValueError("When using the tied flag, nhid must be equal to emsize")
            self.decoder.weight = self.encoder.weight
        self.init_weights()
        self.nhid, self.nlayers = nhid, nlayers

    def init_weights(self):
        initrange = 0.1
        nn.init.uniform_(self.encoder.weight, -initrange, initrange)
        nn.init.zeros_(self.decoder.bias)

    def forward(self, input, hidden):
        emb = self.drop(self.encoder(input))
        output, hidden = self.rnn(emb, hidden)
        output = self.drop(output)
        decoded = self.decoder(output).view(-1, self.ntoken)
        return nn.functional.log_softmax(decoded, dim=1), hidden

    def init_hidden(self, bsz):
        weight = next(self.parameters())
        return (weight.new_zeros(self.nlayers, bsz, self.nhid),
                weight.new_zeros(self.nlayers, bsz, self.nhid))


NTOKENS = 26  # the grammar's 25 words and <eos>


def build_model():
    return RNNModel(NTOKENS, 32, 32, 1, dropout=0.0)


def batchify(data, bsz):
    nbatch = data.size(0) // bsz
    data = data.narrow(0, 0, nbatch * bsz)
    return data.view(bsz, -1).t().contiguous()


def get_batch(source, i, bptt):
    seq_len = min(bptt, len(source) - 1 - i)
    data = source[i:i + seq_len]
    target = source[i + 1:i + 1 + seq_len].view(-1)
    return data, target


def repackage_hidden(h):
    """Wraps hidden states in new Tensors, to detach them from their history."""
    if isinstance(h, torch.Tensor):
        return h.detach()
    return tuple(repackage_hidden(v) for v in h)


def main():
    parser = argparse.ArgumentParser(description="LSTM language model with tied weights")
    parser.add_argument("--lr", type=float, default=20)
    parser.add_argument("--clip", type=float, default=0.25)
    parser.add_argument("--epochs", type=int, default=4)
    parser.add_argument("--batch_size", type=int, default=16)
    parser.add_argument("--bptt", type=int, default=12)
    parser.add_argument("--seed", type=int, default=1111)
    parser.add_argument("--out", default="runs/lm")
    parser.add_argument("--device", default="cpu", help="cpu or cuda")
    args = parser.parse_args()
    torch.manual_seed(args.seed)
    os.makedirs(args.out, exist_ok=True)
    save = os.path.join(args.out, "model.pt")

    corpus = Corpus()
    ntokens = len(corpus.dictionary)
    assert ntokens == NTOKENS, ntokens
    device = torch.device(args.device)
    train_data = batchify(corpus.train, args.batch_size).to(device)
    val_data = batchify(corpus.valid, 10).to(device)
    test_data = batchify(corpus.test, 10).to(device)
    model = build_model().to(device)
    assert model.decoder.weight is model.encoder.weight
    criterion = nn.NLLLoss()

    def evaluate(data_source):
        model.eval()
        total_loss = 0.0
        hidden = model.init_hidden(10)
        with torch.no_grad():
            for i in range(0, data_source.size(0) - 1, args.bptt):
                data, targets = get_batch(data_source, i, args.bptt)
                output, hidden = model(data, hidden)
                hidden = repackage_hidden(hidden)
                total_loss += len(data) * criterion(output, targets).item()
        return total_loss / (len(data_source) - 1)

    lr = args.lr
    best_val_loss = None
    history = {"train": [], "valid": [evaluate(val_data)]}
    for epoch in range(1, args.epochs + 1):
        model.train()
        hidden = model.init_hidden(args.batch_size)
        for batch, i in enumerate(range(0, train_data.size(0) - 1, args.bptt)):
            data, targets = get_batch(train_data, i, args.bptt)
            hidden = repackage_hidden(hidden)
            model.zero_grad()
            output, hidden = model(data, hidden)
            loss = criterion(output, targets)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), args.clip)
            for p in model.parameters():
                p.data.add_(p.grad, alpha=-lr)
            history["train"].append(loss.item())
        val_loss = evaluate(val_data)
        history["valid"].append(val_loss)
        print(f"| end of epoch {epoch:3d} | valid loss {val_loss:5.2f} | "
              f"valid ppl {math.exp(val_loss):8.2f}")
        if not best_val_loss or val_loss < best_val_loss:
            with open(save, "wb") as f:
                torch.save(model, f)
            best_val_loss = val_loss
        else:
            lr /= 4.0

    with open(save, "rb") as f:
        model = torch.load(f, weights_only=False)
        model.rnn.flatten_parameters()
    assert model.decoder.weight is model.encoder.weight, "tied weights survive the pickle"
    test_loss = evaluate(test_data)
    print(f"| End of training | test loss {test_loss:5.2f} | test ppl {math.exp(test_loss):8.2f}")
    torch.save(model.state_dict(), os.path.join(args.out, "model_state.pt"))
    with torch.no_grad():
        data = test_data[:8, :4]
        output, _ = model(data, model.init_hidden(4))
    torch.save({"input": data, "output": output}, os.path.join(args.out, "probe.pt"))
    with open(os.path.join(args.out, "metrics.json"), "w") as f:
        json.dump(dict(history, test=test_loss, best_valid=best_val_loss), f)


if __name__ == "__main__":
    main()
