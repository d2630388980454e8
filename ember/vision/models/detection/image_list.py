"""ImageList (torchvision.models.detection.image_list): a padded batch of images of
different sizes, with each image's size before padding."""


class ImageList:
    def __init__(self, tensors, image_sizes):
        self.tensors = tensors
        self.image_sizes = image_sizes

    def to(self, device):
        return ImageList(self.tensors.to(device), self.image_sizes)
