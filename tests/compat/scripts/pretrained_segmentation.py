# Semantic segmentation with torchvision's weights API: the weights enum gives the checkpoint
# (read from the hub cache, $TORCH_HOME/hub/checkpoints, where a file is put by hand when
# offline), the preprocessing preset and the category names.
import os
import tempfile

import torch
from torchvision.models import get_model, get_model_weights, list_models
from torchvision.models.segmentation import (LRASPP_MobileNet_V3_Large_Weights,
                                             lraspp_mobilenet_v3_large)

with tempfile.TemporaryDirectory() as home:
    os.environ["TORCH_HOME"] = home
    weights = LRASPP_MobileNet_V3_Large_Weights.DEFAULT
    assert "lraspp_mobilenet_v3_large" in list_models()
    assert get_model_weights("lraspp_mobilenet_v3_large") is LRASPP_MobileNet_V3_Large_Weights

    # stand in for the published checkpoint: a model of the same shape, saved where the hub
    # cache keeps the file its url names
    torch.manual_seed(0)
    trained = lraspp_mobilenet_v3_large(weights=None, weights_backbone=None)
    cache = os.path.join(home, "hub", "checkpoints")
    os.makedirs(cache)
    torch.save(trained.state_dict(), os.path.join(cache, os.path.basename(weights.url)))

    model = get_model("lraspp_mobilenet_v3_large", weights="DEFAULT").eval()
    for name, value in trained.state_dict().items():
        assert torch.equal(model.state_dict()[name], value), name

    preprocess = weights.transforms(resize_size=None)
    image = torch.randint(0, 256, (3, 48, 64), dtype=torch.uint8)
    batch = preprocess(image).unsqueeze(0)
    with torch.no_grad():
        scores = model(batch)["out"]
    assert scores.shape == (1, len(weights.meta["categories"]), 48, 64)
    labels = scores.argmax(1)
    names = {weights.meta["categories"][i] for i in labels.unique().tolist()}
    print("classes found:", sorted(names))
print("OK")
