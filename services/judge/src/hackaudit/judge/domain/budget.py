"""What the judge may spend, and what it has: tokens and dollars, with a hard cap.

Cost = input tokens x the input price + output tokens x the output price, prices per million
tokens from the settings (HACKAUDIT_JUDGE_PRICE_INPUT_PER_MTOK / _OUTPUT_PER_MTOK, with defaults
for the default models). Before a sample is sent, its worst case (the prompt's estimated tokens
plus the output limit) is reserved; the reservation is settled with the usage the backend
reports. A sample whose worst case no longer fits is not sent, and is recorded as not asked. So
the cap holds even with samples in flight at once, as long as a prompt has no more tokens than
its estimate (one per three characters, high for English and code).
"""

from __future__ import annotations

from dataclasses import dataclass, field

CHARS_PER_TOKEN = 3  # a deliberately high estimate of prompt tokens (English and code: ~3.5-4)


@dataclass(frozen=True)
class Prices:
    """USD per million tokens; None: unpriced (a self-hosted model, or an unknown one)."""

    input_per_mtok: float | None = None
    output_per_mtok: float | None = None

    @property
    def priced(self) -> bool:
        return self.input_per_mtok is not None and self.output_per_mtok is not None

    def cost(self, input_tokens: int, output_tokens: int) -> float:
        if self.input_per_mtok is None or self.output_per_mtok is None:
            return 0.0
        return (input_tokens * self.input_per_mtok + output_tokens * self.output_per_mtok) / 1e6


# List prices (USD per million tokens) assumed for the default models; check them against your
# contract and set the prices for anything else (self-hosted models are unpriced: cost 0).
KNOWN_PRICES: dict[str, Prices] = {
    "claude-sonnet-4-6": Prices(3.0, 15.0),
    "claude-sonnet-4-5": Prices(3.0, 15.0),
    "gpt-4.1": Prices(2.0, 8.0),
}


def estimate_tokens(chars: int) -> int:
    return chars // CHARS_PER_TOKEN + 1


@dataclass
class Budget:
    """The judge's spending limits (None: no limit) and its running totals."""

    prices: Prices = field(default_factory=Prices)
    max_usd: float | None = None
    max_tokens: int | None = None
    spent_usd: float = 0.0
    spent_tokens: int = 0
    _reserved_usd: float = 0.0
    _reserved_tokens: int = 0

    def reserve(self, prompt_chars: int, max_output_tokens: int) -> tuple[int, float] | None:
        """Hold the worst case of one call; None when it does not fit (ask no more)."""
        tokens = estimate_tokens(prompt_chars) + max_output_tokens
        usd = self.prices.cost(estimate_tokens(prompt_chars), max_output_tokens)
        over_tokens = (
            self.max_tokens is not None
            and self.spent_tokens + self._reserved_tokens + tokens > self.max_tokens
        )
        over_usd = (
            self.max_usd is not None
            and self.prices.priced
            and self.spent_usd + self._reserved_usd + usd > self.max_usd
        )
        if over_tokens or over_usd:
            return None
        self._reserved_tokens += tokens
        self._reserved_usd += usd
        return tokens, usd

    def settle(self, held: tuple[int, float], input_tokens: int, output_tokens: int) -> float:
        """Release a reservation and book what the call really used; returns its cost."""
        self._reserved_tokens -= held[0]
        self._reserved_usd -= held[1]
        cost = self.prices.cost(input_tokens, output_tokens)
        self.spent_tokens += input_tokens + output_tokens
        self.spent_usd += cost
        return cost

    @property
    def limit_text(self) -> str:
        limits = []
        if self.max_usd is not None:
            limits.append(f"${self.spent_usd:.4f} of ${self.max_usd:.2f}")
        if self.max_tokens is not None:
            limits.append(f"{self.spent_tokens} of {self.max_tokens} tokens")
        return ", ".join(limits) or "no limit"
