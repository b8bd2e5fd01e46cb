# Build: the release binary, with SQLite and libpq built in.
FROM rust:1.95-bookworm AS build
RUN apt-get update && apt-get install -y --no-install-recommends libssl-dev pkg-config && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
RUN cargo build --release --locked --bin leekha

# Run: a small image with only the binary and its runtime libraries.
FROM debian:bookworm-slim
RUN apt-get update && apt-get install -y --no-install-recommends ca-certificates libssl3 curl \
    && rm -rf /var/lib/apt/lists/* && useradd --system --home /var/lib/leekha leekha \
    && mkdir -p /var/lib/leekha && chown leekha /var/lib/leekha
COPY --from=build /src/target/release/leekha /usr/local/bin/leekha
USER leekha
WORKDIR /var/lib/leekha
ENV LEEKHA_BIND=0.0.0.0:8080
EXPOSE 8080
HEALTHCHECK --interval=10s --timeout=3s --retries=3 CMD curl -fsS http://127.0.0.1:8080/readyz || exit 1
ENTRYPOINT ["leekha"]
CMD ["serve"]
