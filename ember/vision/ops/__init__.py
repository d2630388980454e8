"""`ember.vision.ops`: torchvision.ops — box utilities, NMS, RoI pooling, focal loss and the
building blocks the models use."""
from .boxes import (batched_nms, box_area, box_convert, box_iou, clip_boxes_to_image,
                    complete_box_iou, distance_box_iou, generalized_box_iou, masks_to_boxes,
                    nms, remove_small_boxes)
from .deform_conv import DeformConv2d, deform_conv2d
from .drop_block import DropBlock2d, DropBlock3d, drop_block2d, drop_block3d
from .ciou_loss import complete_box_iou_loss
from .diou_loss import distance_box_iou_loss
from .feature_pyramid_network import FeaturePyramidNetwork
from .giou_loss import generalized_box_iou_loss
from .misc import (MLP, Conv2dNormActivation, Conv3dNormActivation, FrozenBatchNorm2d, Permute,
                   SqueezeExcitation)
from .ps_roi import PSRoIAlign, PSRoIPool, ps_roi_align, ps_roi_pool
from .poolers import MultiScaleRoIAlign
from .roi import RoIAlign, RoIPool, roi_align, roi_pool, sigmoid_focal_loss
from .stochastic_depth import StochasticDepth, stochastic_depth

__all__ = ["box_area", "box_iou", "generalized_box_iou", "distance_box_iou",
           "complete_box_iou", "box_convert", "clip_boxes_to_image", "remove_small_boxes",
           "nms", "batched_nms", "roi_align", "RoIAlign", "roi_pool", "RoIPool",
           "sigmoid_focal_loss", "Conv2dNormActivation", "FrozenBatchNorm2d", "MLP", "Permute",
           "SqueezeExcitation", "StochasticDepth", "stochastic_depth", "FeaturePyramidNetwork",
           "MultiScaleRoIAlign", "generalized_box_iou_loss", "distance_box_iou_loss",
           "complete_box_iou_loss", "masks_to_boxes", "deform_conv2d", "DeformConv2d",
           "drop_block2d", "DropBlock2d", "drop_block3d", "DropBlock3d", "Conv3dNormActivation",
           "ps_roi_align", "PSRoIAlign", "ps_roi_pool", "PSRoIPool"]
