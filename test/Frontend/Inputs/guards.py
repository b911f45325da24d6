from torch import nn


class Guards(nn.Module):
    def __init__(self, config):
        super().__init__()
        h = config.hidden_size
        self.a = nn.Linear(h, h, bias=False)
        self.b = nn.Linear(h, h, bias=False) if config.with_b else None
        self.c = nn.Linear(h, h, bias=False) if not config.with_b else None

    def forward(self, hidden_states):
        y = self.a(hidden_states)
        if self.b:
            y = y + self.b(hidden_states)
        if not self.c:
            y.mul_(2)
        if self.b == None or self.c != None:
            y = y - 1.0
        z = self.b(hidden_states) if self.b is not None and self.c is None else y
        return z
