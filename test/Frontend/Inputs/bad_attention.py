# Attention written out whose scores or probabilities are used other than
# by the chain tx.attention computes (errors.test, attention-inline-torch.test):
# each one class, its forward built on Base.qkv.
import torch
import torch.nn.functional as F
from torch import nn


class Base(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.qkv = nn.Linear(config.hidden_size, 3 * config.hidden_size, bias=False)
        self.out = nn.Linear(config.hidden_size, config.hidden_size, bias=False)

    def heads(self, hidden_states):
        q, k, v = self.qkv(hidden_states).split(64, dim=-1)
        return (q.view(1, -1, 4, 16).transpose(1, 2), k.view(1, -1, 4, 16).transpose(1, 2),
                v.view(1, -1, 4, 16).transpose(1, 2))

    def finish(self, o):
        return self.out(o.transpose(1, 2).reshape(1, -1, 64))


class ReturnsProbs(Base):
    def forward(self, hidden_states, attention_mask=None):
        q, k, v = self.heads(hidden_states)
        probs = F.softmax(torch.matmul(q, k.transpose(2, 3)) * 0.25 + attention_mask, dim=-1)
        return self.finish(torch.matmul(probs, v)), probs


class MaskedFill(Base):
    def forward(self, hidden_states, attention_mask=None):
        q, k, v = self.heads(hidden_states)
        scores = torch.matmul(q, k.transpose(2, 3)) * 0.25
        scores = scores.masked_fill(attention_mask, -1e9)
        return self.finish(torch.matmul(F.softmax(scores, dim=-1), v))


class OtherBias(Base):
    def forward(self, hidden_states, attention_mask=None):
        q, k, v = self.heads(hidden_states)
        bias = q * 0.5
        scores = torch.matmul(q, k.transpose(2, 3)) + bias
        return self.finish(torch.matmul(F.softmax(scores, dim=-1), v))


class SoftmaxDim(Base):
    def forward(self, hidden_states, attention_mask=None):
        q, k, v = self.heads(hidden_states)
        scores = torch.matmul(q, k.transpose(2, 3)) * 0.25 + attention_mask
        return self.finish(torch.matmul(F.softmax(scores, dim=2), v))


class SwappedOrder(Base):
    def forward(self, hidden_states, attention_mask=None):
        q, k, v = self.heads(hidden_states)
        probs = F.softmax(torch.matmul(q, k.transpose(2, 3)) * 0.25 + attention_mask, dim=-1)
        return self.finish(torch.matmul(v, probs))


class SoftCap(Base):
    def forward(self, hidden_states, attention_mask=None):
        q, k, v = self.heads(hidden_states)
        scores = torch.matmul(q, k.transpose(2, 3)) * 0.25
        scores = torch.tanh(scores / 50.0) * 50.0
        return self.finish(torch.matmul(F.softmax(scores + attention_mask, dim=-1), v))


class ScaledProbs(Base):
    def forward(self, hidden_states, attention_mask=None):
        q, k, v = self.heads(hidden_states)
        probs = F.softmax(torch.matmul(q, k.transpose(2, 3)) + attention_mask, dim=-1)
        return self.finish(torch.matmul(probs * 0.25, v))


class StoredProbs(Base):
    def forward(self, hidden_states, attention_mask=None, shared_kv_states=None):
        q, k, v = self.heads(hidden_states)
        probs = F.softmax(torch.matmul(q, k.transpose(2, 3)) * 0.25 + attention_mask, dim=-1)
        shared_kv_states[0] = probs
        return self.finish(torch.matmul(probs, v))


class TrainingDropout(Base):
    def forward(self, hidden_states, attention_mask=None):
        q, k, v = self.heads(hidden_states)
        probs = F.softmax(torch.matmul(q, k.transpose(2, 3)) * 0.25 + attention_mask, dim=-1)
        probs = F.dropout(probs, p=0.1)
        return self.finish(torch.matmul(probs, v))


class NegativeScale(Base):
    def forward(self, hidden_states, attention_mask=None):
        q, k, v = self.heads(hidden_states)
        probs = F.softmax((torch.matmul(q, k.transpose(2, 3)) + attention_mask) * -1.0, dim=-1)
        return self.finish(torch.matmul(probs, v))


class CappedAfterMask(Base):
    def forward(self, hidden_states, attention_mask=None):
        q, k, v = self.heads(hidden_states)
        scores = torch.matmul(q, k.transpose(2, 3)) * 0.25 + attention_mask
        scores = torch.tanh(scores / 50.0) * 50.0
        return self.finish(torch.matmul(F.softmax(scores, dim=-1), v))


class CappedTwice(Base):
    def forward(self, hidden_states, attention_mask=None):
        q, k, v = self.heads(hidden_states)
        scores = torch.tanh(torch.matmul(q, k.transpose(2, 3)) * 0.25)
        scores = torch.tanh(scores)
        return self.finish(torch.matmul(F.softmax(scores + attention_mask, dim=-1), v))


class WrittenBetween(Base):
    def forward(self, hidden_states, attention_mask=None):
        q, k, v = self.heads(hidden_states)
        scores = torch.matmul(q, k.transpose(2, 3)) * 0.25 + attention_mask
        k.mul_(2.0)
        return self.finish(torch.matmul(F.softmax(scores, dim=-1), v))
