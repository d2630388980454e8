"""GeneralizedRCNN (torchvision.models.detection.generalized_rcnn): transform -> backbone ->
RPN -> RoI heads -> boxes back to the input sizes. Training mode returns the dict of
losses, eval mode the list of detections (one dict of boxes, labels, scores per image)."""
from collections import OrderedDict

from .... import nn, where
from ._utils import _assert

__all__ = ["GeneralizedRCNN"]


def _check_training_targets(targets):
    if targets is None:
        _assert(False, "targets should not be none when in training mode")
    for target in targets:
        boxes = target["boxes"]
        if not hasattr(boxes, "dim"):
            _assert(False, f"Expected target boxes to be of type Tensor, got {type(boxes)}.")
        _assert(boxes.dim() == 2 and boxes.shape[-1] == 4,
                f"Expected target boxes to be a tensor of shape [N, 4], got {boxes.shape}.")


def _original_sizes(images):
    sizes = []
    for img in images:
        val = img.shape[-2:]
        _assert(len(val) == 2, "expecting the last two dimensions of the Tensor to be H and W "
                               f"instead got {img.shape[-2:]}")
        sizes.append((int(val[0]), int(val[1])))
    return sizes


def _check_degenerate_boxes(targets):
    for target_idx, target in enumerate(targets):
        boxes = target["boxes"]
        degenerate = boxes[:, 2:] <= boxes[:, :2]
        if degenerate.any():
            bb_idx = where(degenerate.any(dim=1))[0][0]
            _assert(False, "All bounding boxes should have positive height and width. Found "
                           f"invalid box {boxes[bb_idx].tolist()} for target at index "
                           f"{target_idx}.")


class GeneralizedRCNN(nn.Module):
    def __init__(self, backbone, rpn, roi_heads, transform):
        super().__init__()
        self.transform = transform
        self.backbone = backbone
        self.rpn = rpn
        self.roi_heads = roi_heads
        self._has_warned = False

    def eager_outputs(self, losses, detections):
        return losses if self.training else detections

    def forward(self, images, targets=None):
        if self.training:
            _check_training_targets(targets)
        original_image_sizes = _original_sizes(images)
        images, targets = self.transform(images, targets)
        if targets is not None:
            _check_degenerate_boxes(targets)
        features = self.backbone(images.tensors)
        if hasattr(features, "dim"):
            features = OrderedDict([("0", features)])
        proposals, proposal_losses = self.rpn(images, features, targets)
        detections, detector_losses = self.roi_heads(features, proposals, images.image_sizes,
                                                     targets)
        detections = self.transform.postprocess(detections, images.image_sizes,
                                                original_image_sizes)
        losses = {}
        losses.update(detector_losses)
        losses.update(proposal_losses)
        return self.eager_outputs(losses, detections)
