# Forms tx has no op for (slicing, splitting, layer norms, a (1 + weight)
# norm): each class is one error of errors.test.
import torch
from torch import nn


class TokenSlice(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.proj = nn.Linear(config.hidden_size, config.hidden_size, bias=False)

    def forward(self, hidden_states):
        return self.proj(hidden_states[:, 1:])


class StepSlice(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.proj = nn.Linear(config.hidden_size // 2, config.hidden_size, bias=False)

    def forward(self, hidden_states):
        return self.proj(hidden_states[..., ::2])


class OnePosition(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.proj = nn.Linear(config.hidden_size, config.hidden_size, bias=False)

    def forward(self, hidden_states):
        h = self.proj(hidden_states)
        return h + h[:, 0]


class CatTokens(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.proj = nn.Linear(config.hidden_size, config.hidden_size, bias=False)

    def forward(self, hidden_states):
        return torch.cat([self.proj(hidden_states), hidden_states], dim=1)


class CopyingView(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.qkv = nn.Linear(config.hidden_size, 3 * config.hidden_size, bias=False)
        self.out = nn.Linear(config.hidden_size, config.hidden_size, bias=False)

    def forward(self, hidden_states):
        qkv = self.qkv(hidden_states).view(1, -1, 4, 3 * self.out.in_features // 4)
        q, k, v = qkv.chunk(3, dim=-1)
        return self.out(q.view(1, -1, self.out.in_features))


class BadSplit(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.proj = nn.Linear(config.hidden_size, config.hidden_size, bias=False)

    def forward(self, hidden_states):
        a, b = torch.split(self.proj(hidden_states), [10, 20], dim=-1)
        return a


class OwnLayerNorm(nn.Module):
    def __init__(self, dim, eps=1e-5):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.bias = nn.Parameter(torch.zeros(dim))
        self.eps = eps


class NormedBlock(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.norm = OwnLayerNorm(config.hidden_size)

    def forward(self, hidden_states):
        return self.norm(hidden_states)


class GemmaRMSNorm(nn.Module):
    def __init__(self, dim: int, eps: float = 1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.zeros(dim))

    def _norm(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)

    def forward(self, x):
        output = self._norm(x.float())
        # Llama does x.to(float16) * w whilst Gemma is (x * w).to(float16)
        output = output * (1.0 + self.weight.float())
        return output.type_as(x)


class UnitOffsetNorm(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.norm = GemmaRMSNorm(config.hidden_size)

    def forward(self, hidden_states):
        return self.norm(hidden_states)


class OutOfRange(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.qkv = nn.Linear(config.hidden_size, 3 * config.hidden_size, bias=False)

    def forward(self, hidden_states):
        qkv = self.qkv(hidden_states).view(1, -1, 3, self.qkv.in_features)
        return qkv[:, :, 3]


class BatchIndex(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.proj = nn.Linear(config.hidden_size, config.hidden_size, bias=False)

    def forward(self, hidden_states):
        return self.proj(hidden_states)[1]
