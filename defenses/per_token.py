"""A defense applied to each token of a sequence cut on its own (the GPT-2 payloads)."""
from __future__ import annotations

from torch import Tensor, nn

from defenses.base import Defense
from defenses.payload import Payload


class PerTokenDefense(Defense):
    """Runs ``inner``, a defense built for one token's ``(d,)`` state, on every token of a ``(T, d)`` cut.

    The payload of a batch is the inner payload of its ``B·T`` tokens, one row per token in order;
    the server decodes every row and restores ``(B, T, d)``. So a LightSplit projection is ``Rᵀ``
    along the model dimension, ``CR = d / k`` per token and per sequence alike, and top-K keeps the
    largest values of each token. Bytes per sample count a whole sequence.

    Paper: LightSplit (arXiv:2605.13265), App. B-B5 (the residual state projected per token).
    Threat model: that of ``inner``, token by token.

    Args:
        inner: the defense at cut shape ``(d,)``.
        tokens: ``T``, tokens per sequence.
    """

    def __init__(self, inner: Defense, *, tokens: int) -> None:
        super().__init__(cut_shape=(tokens, *inner.cut_shape), seed=inner.seed)
        self.inner = inner
        self.tokens = tokens
        self.knobs = inner.knobs
        self.straight_through = inner.straight_through

    def _rows(self, z: Tensor) -> Tensor:
        return z.reshape(-1, *self.inner.cut_shape)

    def _sequences(self, rows: Tensor) -> Tensor:
        return rows.reshape(-1, *self.cut_shape)

    def encode(self, z: Tensor) -> Payload:
        return self.inner.encode(self._rows(z))

    def decode(self, payload: Payload) -> Tensor:
        return self._sequences(self.inner.decode(payload))

    def cut_map(self, payload: Payload) -> Tensor:
        return self._sequences(self.inner.cut_map(payload))

    def attacker_encode(self, z: Tensor) -> Payload:
        return self.inner.attacker_encode(self._rows(z))

    def calibrate(self, z: Tensor) -> None:
        self.inner.calibrate(self._rows(z))

    def client_loss(self, payload: Payload, y: Tensor, *, inputs: Tensor) -> Tensor:
        """The inner loss over the token rows; ``inputs`` stay per sequence (a defense that pairs
        inputs with payload rows, NoPeek, does not apply to token cuts)."""
        return self.inner.client_loss(payload, y.reshape(-1), inputs=inputs)

    def proxy_loss(self, payload: Payload, inputs: Tensor) -> Tensor | None:
        return self.inner.proxy_loss(payload, inputs)

    def proxy_parameters(self) -> list[nn.Parameter]:
        return self.inner.proxy_parameters()

    def public_state(self) -> dict[str, Tensor]:
        return self.inner.public_state()

    def accounting(self, *, epochs: int) -> dict[str, float]:
        return self.inner.accounting(epochs=epochs)

    def client_parameters(self) -> list[nn.Parameter]:
        return self.inner.client_parameters()

    def server_parameters(self) -> list[nn.Parameter]:
        return self.inner.server_parameters()

    def describe(self) -> dict[str, float]:
        """Per sequence, as for images (values, wire bytes, realised CR), and the values per token
        (the base measurement's first payload row is one token's)."""
        described = super().describe()
        per_token = described["payload_values"]
        return {**described, "payload_values": per_token * self.tokens, "payload_values_per_token": per_token}
