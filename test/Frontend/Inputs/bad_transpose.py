from torch import nn


class ViewsTransposed(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.proj = nn.Linear(config.hidden_size, config.hidden_size, bias=False)

    def forward(self, hidden_states):
        x = self.proj(hidden_states).view(1, -1, 4, 16).transpose(1, 2)
        return x.reshape(1, -1, 64)
