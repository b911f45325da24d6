from torch import nn


class Broken(nn.Module):
    def forward(self, hidden_states):
        return hidden_states +
