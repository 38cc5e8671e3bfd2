# The l3mp service: the REST API over a Neo4j store (see docker-compose.yml).
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1 \
    HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
WORKDIR /app

# CPU-only PyTorch first, or pip pulls a multi-GB CUDA build with sentence-transformers.
RUN pip install --index-url https://download.pytorch.org/whl/cpu torch==2.13.0

COPY pyproject.toml README.md ./
COPY kg_memory kg_memory
COPY retrieval retrieval
COPY planning planning
COPY perception perception
COPY sim sim
COPY l3mp l3mp
RUN pip install .

RUN useradd --create-home l3mp && mkdir -p /data && chown l3mp /data
USER l3mp
VOLUME ["/data"]
EXPOSE 8000

HEALTHCHECK --interval=10s --timeout=5s --retries=6 \
  CMD python -c "import urllib.request, sys; sys.exit(urllib.request.urlopen('http://127.0.0.1:8000/health').status != 200)"

CMD ["l3mp", "serve", "--host", "0.0.0.0", "--port", "8000"]
