"""Real architectures for benchmarks/bench_models.py, each written once as a function of the
library module `lib` (ember or PyTorch), so both libraries run the same class body.

Every builder takes its sizes as keywords, so the smoke test (tests/benchmarks) can build the
same body at a tiny size."""


def basic_block(lib):
    """ResNet's BasicBlock (two 3x3 convs with BatchNorm, identity or 1x1-conv shortcut)."""
    nn, F = lib.nn, lib.nn.functional

    class BasicBlock(nn.Module):
        def __init__(self, inplanes, planes, stride=1):
            super().__init__()
            self.conv1 = nn.Conv2d(inplanes, planes, 3, stride, 1, bias=False)
            self.bn1 = nn.BatchNorm2d(planes)
            self.conv2 = nn.Conv2d(planes, planes, 3, 1, 1, bias=False)
            self.bn2 = nn.BatchNorm2d(planes)
            self.downsample = None
            if stride != 1 or inplanes != planes:
                self.downsample = nn.Sequential(nn.Conv2d(inplanes, planes, 1, stride, bias=False),
                                                nn.BatchNorm2d(planes))

        def forward(self, x):
            out = F.relu(self.bn1(self.conv1(x)))
            out = self.bn2(self.conv2(out))
            shortcut = x if self.downsample is None else self.downsample(x)
            return F.relu(out + shortcut)
    return BasicBlock


def _stage(lib, block, inplanes, planes, blocks, stride):
    layers = [block(inplanes, planes, stride)] + [block(planes, planes) for _ in range(blocks - 1)]
    return lib.nn.Sequential(*layers)


def cifar_resnet(lib, widths=(16, 32, 64), blocks=3, classes=10):
    """The CIFAR ResNet of He et al. (ResNet-20 with blocks=3): a 3x3 stem, three stages."""
    nn = lib.nn
    block = basic_block(lib)

    class CifarResNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.stem = nn.Sequential(nn.Conv2d(3, widths[0], 3, 1, 1, bias=False),
                                      nn.BatchNorm2d(widths[0]), nn.ReLU())
            stages, inplanes = [], widths[0]
            for i, planes in enumerate(widths):
                stages.append(_stage(lib, block, inplanes, planes, blocks, 1 if i == 0 else 2))
                inplanes = planes
            self.stages = nn.Sequential(*stages)
            self.pool = nn.AdaptiveAvgPool2d(1)
            self.fc = nn.Linear(widths[-1], classes)

        def forward(self, x):
            return self.fc(lib.flatten(self.pool(self.stages(self.stem(x))), 1))
    return CifarResNet()


def resnet18(lib, widths=(64, 128, 256, 512), classes=1000):
    """ResNet-18 (ImageNet layout: 7x7 stride-2 stem, max pool, four stages of two blocks)."""
    nn = lib.nn
    block = basic_block(lib)

    class ResNet18(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(3, widths[0], 7, 2, 3, bias=False)
            self.bn1 = nn.BatchNorm2d(widths[0])
            self.relu = nn.ReLU(inplace=True)
            self.maxpool = nn.MaxPool2d(3, 2, 1)
            inplanes = widths[0]
            for i, planes in enumerate(widths):
                setattr(self, f"layer{i + 1}",
                        _stage(lib, block, inplanes, planes, 2, 1 if i == 0 else 2))
                inplanes = planes
            self.avgpool = nn.AdaptiveAvgPool2d(1)
            self.fc = nn.Linear(widths[-1], classes)

        def forward(self, x):
            x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
            x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
            return self.fc(lib.flatten(self.avgpool(x), 1))
    return ResNet18()


def gpt(lib, vocab=1000, width=128, layers=4, heads=4, block=64):
    """A GPT-style decoder (pre-LayerNorm blocks, causal scaled_dot_product_attention, GELU
    MLP, output head tied to the token embedding), no dropout so both libraries agree."""
    nn, F = lib.nn, lib.nn.functional

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1 = nn.LayerNorm(width)
            self.qkv = nn.Linear(width, 3 * width)
            self.proj = nn.Linear(width, width)
            self.ln2 = nn.LayerNorm(width)
            self.mlp = nn.Sequential(nn.Linear(width, 4 * width), nn.GELU(),
                                     nn.Linear(4 * width, width))

        def forward(self, x):
            b, t, c = x.shape
            q, k, v = self.qkv(self.ln1(x)).split(width, dim=2)
            q, k, v = (z.view(b, t, heads, c // heads).transpose(1, 2) for z in (q, k, v))
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            x = x + self.proj(y.transpose(1, 2).contiguous().view(b, t, c))
            return x + self.mlp(self.ln2(x))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.tok = nn.Embedding(vocab, width)
            self.pos = nn.Embedding(block, width)
            self.blocks = nn.Sequential(*[Block() for _ in range(layers)])
            self.ln_f = nn.LayerNorm(width)
            self.head = nn.Linear(width, vocab, bias=False)
            self.head.weight = self.tok.weight
            for embedding in (self.tok, self.pos):  # GPT-2's scale, so logits start near 0
                nn.init.normal_(embedding.weight, std=0.02)

        def forward(self, idx):
            x = self.tok(idx) + self.pos(lib.arange(idx.shape[1]))
            return self.head(self.ln_f(self.blocks(x)))
    return GPT()


def lstm_lm(lib, vocab=5000, embed=128, hidden=512):
    """A word-level LSTM language model (one LSTM layer, sequence-first, as PyTorch's
    word_language_model example lays it out)."""
    nn = lib.nn

    class LSTMLM(nn.Module):
        def __init__(self):
            super().__init__()
            self.encoder = nn.Embedding(vocab, embed)
            self.rnn = nn.LSTM(embed, hidden)
            self.decoder = nn.Linear(hidden, vocab)

        def forward(self, tokens):
            output, _ = self.rnn(self.encoder(tokens))
            return self.decoder(output)
    return LSTMLM()


def gru_seq2seq(lib, vocab=1000, hidden=256):
    """A GRU encoder-decoder with Luong (dot) attention, teacher-forced: the decoder GRU runs
    over the whole target, each output attends over the encoder's outputs."""
    nn = lib.nn

    class Seq2Seq(nn.Module):
        def __init__(self):
            super().__init__()
            self.src_embed = nn.Embedding(vocab, hidden)
            self.encoder = nn.GRU(hidden, hidden, batch_first=True)
            self.tgt_embed = nn.Embedding(vocab, hidden)
            self.decoder = nn.GRU(hidden, hidden, batch_first=True)
            self.combine = nn.Linear(2 * hidden, hidden)
            self.out = nn.Linear(hidden, vocab)

        def forward(self, src, tgt):
            enc, h = self.encoder(self.src_embed(src))
            dec, _ = self.decoder(self.tgt_embed(tgt), h)
            weights = lib.softmax(lib.bmm(dec, enc.transpose(1, 2)), dim=-1)
            context = lib.bmm(weights, enc)
            return self.out(lib.tanh(self.combine(lib.cat([dec, context], dim=-1))))
    return Seq2Seq()
