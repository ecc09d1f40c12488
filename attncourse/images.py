"""Images the course trains on (notebook 06), shipped with a package — never downloaded.

The 1,797 8×8 digits that scikit-learn ships (:func:`digits`), split once, stratified and
seeded, into 1,437 training and 360 test images; a light torchvision augmentation
(:func:`digit_augmentation`); and, for learners who are online, torchvision's MNIST or
CIFAR-10 (:func:`torchvision_images`), which says so plainly when it cannot download.
"""

from dataclasses import dataclass

import torch

from attncourse.errors import expect

# The 1,797 8×8 grey-scale digits that scikit-learn ships with (the test set of the UCI
# "Optical Recognition of Handwritten Digits" data by Alpaydin and Kaynak, 1998, 16 grey
# levels; CC BY 4.0), so nothing is downloaded. A stratified, seeded split sets aside a
# test set that training never sees.


@dataclass
class ImageData:
    """Images and labels split into train and test: images ``(n, C, H, W)`` floats in
    ``[0, 1]``, labels ``(n,)`` class ids."""

    train_images: torch.Tensor
    train_labels: torch.Tensor
    test_images: torch.Tensor
    test_labels: torch.Tensor
    classes: tuple = ()

    def batches(self, batch_size=64, generator=None):
        """One pass over the training images in shuffled ``(images, labels)`` batches; pass a
        seeded ``generator`` for the same order every run."""
        order = torch.randperm(len(self.train_labels), generator=generator)
        for start in range(0, len(order), batch_size):
            chosen = order[start:start + batch_size].to(self.train_labels.device)
            yield self.train_images[chosen], self.train_labels[chosen]

    def to(self, device):
        """The same data on another device (e.g. ``"cuda"``)."""
        return ImageData(*(t.to(device) for t in (self.train_images, self.train_labels,
                                                  self.test_images, self.test_labels)),
                         self.classes)

    def __repr__(self):
        shape = "×".join(str(s) for s in self.train_images.shape[1:])
        return (f"ImageData({len(self.train_labels)} train and {len(self.test_labels)} test "
                f"images of {shape}, {len(self.classes)} classes)")


def digits(n_test=360, seed=0):
    """scikit-learn's 8×8 handwritten digits as :class:`ImageData`: ``n_test`` images (36 of
    each digit by default) held out for testing, the rest (1,437) for training."""
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    bunch = load_digits()
    images = torch.tensor(bunch.images, dtype=torch.float32).unsqueeze(1) / 16.0  # (n, 1, 8, 8)
    labels = torch.tensor(bunch.target)
    train, test = train_test_split(torch.arange(len(labels)).numpy(), test_size=n_test,
                                   random_state=seed, stratify=bunch.target)
    train, test = torch.from_numpy(train), torch.from_numpy(test)
    return ImageData(images[train], labels[train], images[test], labels[test],
                     tuple(str(d) for d in range(10)))


def digit_augmentation(degrees=10, shift=0.125, scale=(0.9, 1.1)):
    """A light torchvision augmentation for small digits: a random rotation, shift (a fraction
    of the side: 0.125 of 8 pixels is one pixel) and zoom, the same for a whole batch."""
    from torchvision.transforms import v2

    return v2.RandomAffine(degrees=degrees, translate=(shift, shift), scale=scale,
                           interpolation=v2.InterpolationMode.BILINEAR)


def torchvision_images(name="MNIST", root=None):
    """A torchvision data set (``"MNIST"``, ``"FashionMNIST"``, ``"CIFAR10"``) as
    :class:`ImageData`, downloaded on first use into ``root`` (default: the user's cache
    directory). Returns ``None`` with a message when it cannot be had (e.g. offline),
    removing whatever the failed attempt left behind."""
    import shutil
    from pathlib import Path

    import torchvision
    from platformdirs import user_cache_dir

    expect(name in ("MNIST", "FashionMNIST", "CIFAR10"),
           f"choose 'MNIST', 'FashionMNIST' or 'CIFAR10', not {name!r}.")
    folder = Path(root or user_cache_dir("attncourse")) / name
    existed = folder.exists()
    try:
        parts = [getattr(torchvision.datasets, name)(folder, train=train, download=True)
                 for train in (True, False)]
    except Exception as exc:  # no network, a proxy, a full disk: say so, never a traceback
        if not existed:
            shutil.rmtree(folder, ignore_errors=True)
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        print(f"{name} is not available here: the download failed ({reason[:120]}). "
              f"Nothing in the course needs it; the digits work offline.")
        return None
    tensors = []
    for part in parts:  # uint8 pixels: (n, H, W) grey or (n, H, W, 3) colour
        pixels = torch.as_tensor(part.data)
        pixels = pixels.permute(0, 3, 1, 2) if pixels.dim() == 4 else pixels.unsqueeze(1)
        tensors += [pixels.float() / 255.0, torch.as_tensor(part.targets)]  # (n, C, H, W)
    return ImageData(*tensors, tuple(parts[0].classes))
