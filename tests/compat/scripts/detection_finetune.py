"""The TorchVision object detection fine-tuning tutorial's shape, on a synthetic data set:
coloured rectangles on noise, a Faster R-CNN whose box predictor is replaced for our classes
(`FastRCNNPredictor(in_features, num_classes)`), a DataLoader with the detection
collate_fn, SGD; the losses must fall, and eval must return one well-formed dict per image.
A small backbone (the tutorial's "custom backbone" route) keeps it a few seconds long."""
import torch
import torchvision
from torch import nn
from torch.utils.data import DataLoader, Dataset
from torchvision.models.detection import FasterRCNN
from torchvision.models.detection.faster_rcnn import FastRCNNPredictor
from torchvision.models.detection.rpn import AnchorGenerator

torch.manual_seed(0)
NUM_CLASSES = 3  # background, red rectangles, green rectangles


class Rectangles(Dataset):
    def __init__(self, n, size=64):
        self.items = []
        for i in range(n):
            img = torch.rand(3, size, size) * 0.3
            boxes, labels = [], []
            for label in (1, 2):
                x0, y0 = torch.randint(0, size // 2, (2,)).tolist()
                w, h = torch.randint(16, size // 2, (2,)).tolist()
                img[label - 1, y0:y0 + h, x0:x0 + w] = 1.0
                boxes.append([x0, y0, x0 + w, y0 + h])
                labels.append(label)
            target = {"boxes": torch.tensor(boxes, dtype=torch.float32),
                      "labels": torch.tensor(labels, dtype=torch.int64),
                      "image_id": i}
            self.items.append((img, target))

    def __len__(self):
        return len(self.items)

    def __getitem__(self, idx):
        return self.items[idx]


backbone = nn.Sequential(
    nn.Conv2d(3, 16, 3, stride=2, padding=1), nn.ReLU(),
    nn.Conv2d(16, 32, 3, stride=2, padding=1), nn.ReLU(),
    nn.Conv2d(32, 32, 3, stride=2, padding=1), nn.ReLU())
backbone.out_channels = 32
anchor_generator = AnchorGenerator(sizes=((16, 32),), aspect_ratios=((0.5, 1.0, 2.0),))
roi_pooler = torchvision.ops.MultiScaleRoIAlign(featmap_names=["0"], output_size=7,
                                                sampling_ratio=2)
model = FasterRCNN(backbone, num_classes=91, rpn_anchor_generator=anchor_generator,
                   box_roi_pool=roi_pooler, min_size=64, max_size=64,
                   rpn_pre_nms_top_n_train=200, rpn_post_nms_top_n_train=100,
                   rpn_pre_nms_top_n_test=100, rpn_post_nms_top_n_test=50,
                   box_batch_size_per_image=64)
# the tutorial's fine-tuning step: a new box predictor for our number of classes
in_features = model.roi_heads.box_predictor.cls_score.in_features
model.roi_heads.box_predictor = FastRCNNPredictor(in_features, NUM_CLASSES)

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
model.to(device)
data_loader = DataLoader(Rectangles(4), batch_size=2, shuffle=True,
                         collate_fn=lambda batch: tuple(zip(*batch)))
params = [p for p in model.parameters() if p.requires_grad]
optimizer = torch.optim.SGD(params, lr=0.02, momentum=0.9, weight_decay=0.0005)

history, recognition = [], []
model.train()
for epoch in range(6):
    epoch_loss = epoch_recognition = 0.0
    for images, targets in data_loader:
        images = [image.to(device) for image in images]
        targets = [{k: v.to(device) if isinstance(v, torch.Tensor) else v
                    for k, v in t.items()} for t in targets]
        loss_dict = model(images, targets)
        assert set(loss_dict) == {"loss_classifier", "loss_box_reg", "loss_objectness",
                                  "loss_rpn_box_reg"}, loss_dict
        losses = sum(loss for loss in loss_dict.values())
        optimizer.zero_grad()
        losses.backward()
        optimizer.step()
        epoch_loss += losses.item()
        epoch_recognition += (loss_dict["loss_classifier"] + loss_dict["loss_objectness"]).item()
    history.append(epoch_loss / len(data_loader))
    recognition.append(epoch_recognition / len(data_loader))
print("epoch losses", [round(v, 4) for v in history])
# the box regression losses grow at first as the classifier starts finding the objects; what
# is learnt first is telling the rectangles from the background
assert history[-1] < history[0], history
assert recognition[-1] < 0.8 * recognition[0], recognition

model.eval()
with torch.no_grad():
    images = [data_loader.dataset[i][0].to(device) for i in range(2)]
    predictions = model(images)
assert isinstance(predictions, list) and len(predictions) == 2
for p in predictions:
    assert set(p) == {"boxes", "labels", "scores"}
    n = p["boxes"].shape[0]
    assert p["boxes"].shape == (n, 4) and p["boxes"].dtype == torch.float32
    assert p["labels"].shape == (n,) and p["labels"].dtype == torch.int64
    assert p["scores"].shape == (n,) and p["scores"].dtype == torch.float32
    if n:
        assert bool((p["boxes"][:, 2:] >= p["boxes"][:, :2]).all())
        assert bool((p["boxes"] >= 0).all()) and bool((p["boxes"] <= 64).all())
        assert bool((p["scores"][:-1] >= p["scores"][1:]).all())
        assert 1 <= int(p["labels"].min()) and int(p["labels"].max()) < NUM_CLASSES
print("OK")
