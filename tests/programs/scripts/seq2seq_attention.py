"""Sequence to sequence with attention (PyTorch's "NLP From Scratch: Translation with a
Sequence to Sequence Network and Attention" tutorial, batched): a GRU encoder, a GRU decoder
with Bahdanau (additive) attention, teacher forcing, NLLLoss over log_softmax. The "language
pair" is made up: the target is the source sequence reversed.

    python seq2seq_attention.py --out runs/seq2seq
"""
import argparse
import json
import os
import random

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import optim
from torch.utils.data import DataLoader, TensorDataset

SOS_token, EOS_token = 0, 1
N_SYMBOLS = 8          # tokens 2..9
MAX_LENGTH = 6         # five symbols and EOS


class EncoderRNN(nn.Module):
    def __init__(self, input_size, hidden_size, dropout_p=0.1):
        super().__init__()
        self.embedding = nn.Embedding(input_size, hidden_size)
        self.gru = nn.GRU(hidden_size, hidden_size, batch_first=True)
        self.dropout = nn.Dropout(dropout_p)

    def forward(self, input):
        embedded = self.dropout(self.embedding(input))
        return self.gru(embedded)


class BahdanauAttention(nn.Module):
    def __init__(self, hidden_size):
        super().__init__()
        self.Wa = nn.Linear(hidden_size, hidden_size)
        self.Ua = nn.Linear(hidden_size, hidden_size)
        self.Va = nn.Linear(hidden_size, 1)

    def forward(self, query, keys):
        scores = self.Va(torch.tanh(self.Wa(query) + self.Ua(keys)))
        scores = scores.squeeze(2).unsqueeze(1)
        weights = F.softmax(scores, dim=-1)
        context = torch.bmm(weights, keys)
        return context, weights


class AttnDecoderRNN(nn.Module):
    def __init__(self, hidden_size, output_size, dropout_p=0.1):
        super().__init__()
        self.embedding = nn.Embedding(output_size, hidden_size)
        self.attention = BahdanauAttention(hidden_size)
        self.gru = nn.GRU(2 * hidden_size, hidden_size, batch_first=True)
        self.out = nn.Linear(hidden_size, output_size)
        self.dropout = nn.Dropout(dropout_p)

    def forward(self, encoder_outputs, encoder_hidden, target_tensor=None):
        batch_size = encoder_outputs.size(0)
        decoder_input = torch.empty(batch_size, 1, dtype=torch.long).fill_(SOS_token)
        decoder_hidden = encoder_hidden
        decoder_outputs, attentions = [], []
        for i in range(MAX_LENGTH):
            decoder_output, decoder_hidden, attn_weights = self.forward_step(
                decoder_input, decoder_hidden, encoder_outputs)
            decoder_outputs.append(decoder_output)
            attentions.append(attn_weights)
            if target_tensor is not None:
                decoder_input = target_tensor[:, i].unsqueeze(1)  # teacher forcing
            else:
                _, topi = decoder_output.topk(1)
                decoder_input = topi.squeeze(-1).detach()
        decoder_outputs = F.log_softmax(torch.cat(decoder_outputs, dim=1), dim=-1)
        return decoder_outputs, decoder_hidden, torch.cat(attentions, dim=1)

    def forward_step(self, input, hidden, encoder_outputs):
        embedded = self.dropout(self.embedding(input))
        query = hidden.permute(1, 0, 2)
        context, attn_weights = self.attention(query, encoder_outputs)
        output, hidden = self.gru(torch.cat((embedded, context), dim=2), hidden)
        return self.out(output), hidden, attn_weights


class Seq2Seq(nn.Module):
    def __init__(self, hidden_size=32):
        super().__init__()
        self.encoder = EncoderRNN(N_SYMBOLS + 2, hidden_size)
        self.decoder = AttnDecoderRNN(hidden_size, N_SYMBOLS + 2)

    def forward(self, source, target=None):
        encoder_outputs, encoder_hidden = self.encoder(source)
        return self.decoder(encoder_outputs, encoder_hidden, target)


def build_model():
    return Seq2Seq()


def make_pairs(n, seed):
    rnd = random.Random(seed)
    sources, targets = [], []
    for _ in range(n):
        seq = [rnd.randrange(2, N_SYMBOLS + 2) for _ in range(MAX_LENGTH - 1)]
        sources.append(seq + [EOS_token])
        targets.append(seq[::-1] + [EOS_token])
    return torch.tensor(sources), torch.tensor(targets)


def main():
    parser = argparse.ArgumentParser(description="GRU seq2seq with Bahdanau attention")
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--lr", type=float, default=0.01)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default="runs/seq2seq")
    args = parser.parse_args()
    torch.manual_seed(args.seed)
    os.makedirs(args.out, exist_ok=True)

    train_loader = DataLoader(TensorDataset(*make_pairs(640, 1)), batch_size=args.batch_size,
                              shuffle=True)
    test_source, test_target = make_pairs(200, 2)
    model = build_model()
    optimizer = optim.Adam(model.parameters(), lr=args.lr)
    criterion = nn.NLLLoss()

    losses = []
    for epoch in range(1, args.epochs + 1):
        model.train()
        total = 0.0
        for source, target in train_loader:
            optimizer.zero_grad()
            decoder_outputs, _, _ = model(source, target)
            loss = criterion(decoder_outputs.view(-1, decoder_outputs.size(-1)), target.view(-1))
            loss.backward()
            optimizer.step()
            total += loss.item()
        losses.append(total / len(train_loader))
        model.eval()
        with torch.no_grad():
            decoder_outputs, _, attentions = model(test_source)
        predicted = decoder_outputs.argmax(-1)
        token_acc = (predicted == test_target).float().mean().item()
        seq_acc = (predicted == test_target).all(dim=1).float().mean().item()
        print(f"epoch {epoch} loss {losses[-1]:.4f} token accuracy {token_acc:.3f} "
              f"sequence accuracy {seq_acc:.3f}")

    # attention of the first output (the last source symbol) should look at the end
    first_step_focus = attentions[:, 0].argmax(-1).float().mean().item()
    torch.save(model.state_dict(), os.path.join(args.out, "seq2seq.pt"))
    torch.save({"input": test_source[:8], "output": decoder_outputs[:8]},
               os.path.join(args.out, "probe.pt"))
    with open(os.path.join(args.out, "metrics.json"), "w") as f:
        json.dump({"losses": losses, "token_accuracy": token_acc, "sequence_accuracy": seq_acc,
                   "first_step_focus": first_step_focus}, f)


if __name__ == "__main__":
    main()
