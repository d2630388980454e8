# A classic PyTorch tutorial script (MNIST-style CNN with DataLoader), run unchanged.
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)


class Net(nn.Module):
    def __init__(self):
        super(Net, self).__init__()
        self.conv1 = nn.Conv2d(1, 8, 3, 1)
        self.conv2 = nn.Conv2d(8, 16, 3, 1)
        self.dropout1 = nn.Dropout(0.25)
        self.fc1 = nn.Linear(16 * 5 * 5, 32)
        self.fc2 = nn.Linear(32, 10)

    def forward(self, x):
        x = F.relu(self.conv1(x))
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = self.dropout1(x)
        x = torch.flatten(x, 1)
        x = F.relu(self.fc1(x))
        return F.log_softmax(self.fc2(x), dim=1)


device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
images = torch.randn(96, 1, 14, 14)
labels = (images.mean((1, 2, 3)) > 0).long() + 2 * (images[:, 0, 0, 0] > 0).long()
loader = DataLoader(TensorDataset(images, labels), batch_size=32, shuffle=True)
model = Net().to(device)
optimizer = optim.Adadelta(model.parameters(), lr=1.0)
scheduler = optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.7)
for epoch in range(1, 4):
    model.train()
    for data, target in loader:
        data, target = data.to(device), target.to(device)
        optimizer.zero_grad()
        loss = F.nll_loss(model(data), target)
        loss.backward()
        optimizer.step()
    scheduler.step()
model.eval()
with torch.no_grad():
    correct = (model(images).argmax(dim=1, keepdim=True) == labels.view(-1, 1)).sum().item()
print(f"OK loss={loss.item():.4f} correct={correct}")
