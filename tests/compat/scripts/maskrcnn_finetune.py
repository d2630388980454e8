"""The TorchVision object detection fine-tuning tutorial (Mask R-CNN on Penn-Fudan), on a
synthetic Penn-Fudan-style folder: PNGImages/ and PedMasks/ (one id per person instance, 0
background) read with torchvision.io.read_image, targets built with masks_to_boxes and
tv_tensors, the v2 transforms, maskrcnn_resnet50_fpn with its box and mask predictors
replaced for two classes, SGD + StepLR, two training steps, then an eval prediction with
masks. (No pretrained weights can be fetched here, and small images keep it short.)"""
import os
import tempfile

import numpy as np
import torch
import torchvision
from PIL import Image
from torchvision import tv_tensors
from torchvision.io import read_image
from torchvision.models.detection.faster_rcnn import FastRCNNPredictor
from torchvision.models.detection.mask_rcnn import MaskRCNNPredictor
from torchvision.ops.boxes import masks_to_boxes
from torchvision.transforms import v2 as T
from torchvision.transforms.v2 import functional as F

torch.manual_seed(0)


def write_pennfudan_like(root, n=4, size=(90, 120)):
    rng = np.random.default_rng(0)
    os.makedirs(os.path.join(root, "PNGImages"))
    os.makedirs(os.path.join(root, "PedMasks"))
    for i in range(n):
        img = (rng.random(size + (3,)) * 80).astype(np.uint8)
        mask = np.zeros(size, np.uint8)
        for person in (1, 2):
            x0 = int(rng.integers(0, size[1] // 2))
            y0 = int(rng.integers(0, size[0] // 3))
            w, h = int(rng.integers(15, 40)), int(rng.integers(30, 55))
            mask[y0:y0 + h, x0:x0 + w] = person
            img[y0:y0 + h, x0:x0 + w] = (200, 60 * person, 40)
        Image.fromarray(img).save(os.path.join(root, "PNGImages", f"FudanPed{i:05d}.png"))
        Image.fromarray(mask).save(os.path.join(root, "PedMasks", f"FudanPed{i:05d}_mask.png"))


class PennFudanDataset(torch.utils.data.Dataset):
    def __init__(self, root, transforms):
        self.root = root
        self.transforms = transforms
        self.imgs = list(sorted(os.listdir(os.path.join(root, "PNGImages"))))
        self.masks = list(sorted(os.listdir(os.path.join(root, "PedMasks"))))

    def __getitem__(self, idx):
        img_path = os.path.join(self.root, "PNGImages", self.imgs[idx])
        mask_path = os.path.join(self.root, "PedMasks", self.masks[idx])
        img = read_image(img_path)
        mask = read_image(mask_path)
        obj_ids = torch.unique(mask)
        obj_ids = obj_ids[1:]  # the first id is the background
        num_objs = len(obj_ids)
        masks = (mask == obj_ids[:, None, None]).to(dtype=torch.uint8)
        boxes = masks_to_boxes(masks)
        labels = torch.ones((num_objs,), dtype=torch.int64)
        image_id = idx
        area = (boxes[:, 3] - boxes[:, 1]) * (boxes[:, 2] - boxes[:, 0])
        iscrowd = torch.zeros((num_objs,), dtype=torch.int64)
        img = tv_tensors.Image(img)
        target = {}
        target["boxes"] = tv_tensors.BoundingBoxes(boxes, format="XYXY",
                                                   canvas_size=F.get_size(img))
        target["masks"] = tv_tensors.Mask(masks)
        target["labels"] = labels
        target["image_id"] = image_id
        target["area"] = area
        target["iscrowd"] = iscrowd
        if self.transforms is not None:
            img, target = self.transforms(img, target)
        return img, target

    def __len__(self):
        return len(self.imgs)


def get_model_instance_segmentation(num_classes):
    # the tutorial loads weights="DEFAULT"; nothing can be downloaded here
    model = torchvision.models.detection.maskrcnn_resnet50_fpn(
        weights=None, weights_backbone=None, min_size=96, max_size=128,
        rpn_post_nms_top_n_train=200, box_batch_size_per_image=64, box_detections_per_img=8)
    in_features = model.roi_heads.box_predictor.cls_score.in_features
    model.roi_heads.box_predictor = FastRCNNPredictor(in_features, num_classes)
    in_features_mask = model.roi_heads.mask_predictor.conv5_mask.in_channels
    hidden_layer = 256
    model.roi_heads.mask_predictor = MaskRCNNPredictor(in_features_mask, hidden_layer,
                                                       num_classes)
    return model


def get_transform(train):
    transforms = []
    if train:
        transforms.append(T.RandomHorizontalFlip(0.5))
    transforms.append(T.ToDtype(torch.float, scale=True))
    transforms.append(T.ToPureTensor())
    return T.Compose(transforms)


def collate_fn(batch):
    return tuple(zip(*batch))


root = tempfile.mkdtemp()
write_pennfudan_like(root)
device = torch.device("cuda") if torch.cuda.is_available() else torch.device("cpu")
num_classes = 2
dataset = PennFudanDataset(root, get_transform(train=True))
dataset_test = PennFudanDataset(root, get_transform(train=False))
data_loader = torch.utils.data.DataLoader(dataset, batch_size=2, shuffle=True,
                                          collate_fn=collate_fn)
model = get_model_instance_segmentation(num_classes)
model.to(device)
params = [p for p in model.parameters() if p.requires_grad]
optimizer = torch.optim.SGD(params, lr=0.005, momentum=0.9, weight_decay=0.0005)
lr_scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=3, gamma=0.1)

model.train()
for images, targets in data_loader:  # one epoch: two steps
    images = list(image.to(device) for image in images)
    targets = [{k: v.to(device) if isinstance(v, torch.Tensor) else v for k, v in t.items()}
               for t in targets]
    loss_dict = model(images, targets)
    assert set(loss_dict) == {"loss_classifier", "loss_box_reg", "loss_mask",
                              "loss_objectness", "loss_rpn_box_reg"}, loss_dict
    losses = sum(loss for loss in loss_dict.values())
    assert torch.isfinite(losses), loss_dict
    optimizer.zero_grad()
    losses.backward()
    optimizer.step()
    print({k: round(v.item(), 4) for k, v in loss_dict.items()})
lr_scheduler.step()

image, _ = dataset_test[0]
model.eval()
with torch.no_grad():
    prediction = model([image.to(device)])[0]
assert set(prediction) == {"boxes", "labels", "scores", "masks"}
n = prediction["boxes"].shape[0]
assert prediction["masks"].shape == (n, 1, 90, 120), prediction["masks"].shape
assert prediction["masks"].dtype == torch.float32
if n:
    assert 0.0 <= float(prediction["masks"].min()) and float(prediction["masks"].max()) <= 1.0
    assert bool((prediction["labels"] == 1).all())
print("OK")
