"""LeNet-5 for 1x28x28 inputs (MNIST-sized; not part of torchvision): two 5x5 convs with max
pooling, then three fully connected layers."""
from ... import flatten, nn
from ...nn import functional as F
from ._utils import handle_legacy_interface, load_weights

__all__ = ["LeNet", "lenet"]


class LeNet(nn.Module):
    def __init__(self, num_classes=10, in_channels=1):
        super().__init__()
        self.conv1 = nn.Conv2d(in_channels, 6, kernel_size=5, padding=2)
        self.conv2 = nn.Conv2d(6, 16, kernel_size=5)
        self.fc1 = nn.Linear(16 * 5 * 5, 120)
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, num_classes)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = flatten(x, 1)
        return self.fc3(F.relu(self.fc2(F.relu(self.fc1(x)))))


@handle_legacy_interface(weights=("pretrained", None))  # no published weights: a local path
def lenet(*, weights=None, progress=True, **kwargs):
    return load_weights(LeNet(**kwargs), weights, progress)
