# syntax=docker/dockerfile:1
#
# docker build -t ledgerbase --build-arg VERSION=$(git describe --always) .
# docker run -p 8080:8080 -v ledgerbase-data:/data ledgerbase
#
# Build: both binaries (cmd/ledgerbase and, when present, cmd/ledgerbase-mcp)
# with cgo, which SQLite (mattn/go-sqlite3) needs. Bookworm here matches the
# distroless Debian 12 runtime below, so the glibc the binaries link against
# is the one they run with.
FROM golang:1.26-bookworm AS build
WORKDIR /src
ENV CGO_ENABLED=1 GOFLAGS=-buildvcs=false
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod go mod download
COPY . .
ARG VERSION=dev
RUN --mount=type=cache,target=/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build \
    mkdir -p /out /data && \
    go build -trimpath -ldflags="-s -w -X main.version=${VERSION}" -o /out/ ./cmd/...

# Run: glibc and CA certificates, no shell, no package manager, user 65532.
FROM gcr.io/distroless/cc-debian12:nonroot
COPY --from=build /out/ /usr/local/bin/
# The data volume must belong to the user the server runs as.
COPY --from=build --chown=65532:65532 /data /data
USER 65532:65532
WORKDIR /data
ENV LEDGERBASE_ADDR=0.0.0.0:8080 \
    LEDGERBASE_DATABASE_URL=sqlite:/data/ledgerbase.db \
    LEDGERBASE_LOG_FORMAT=json
VOLUME ["/data"]
EXPOSE 8080
# `ledgerbase healthcheck` reads the same settings as serve (LEDGERBASE_ADDR,
# LEDGERBASE_TLS_*, LEDGERBASE_CONFIG) and asks /healthz on loopback: the
# image has no curl or wget.
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
    CMD ["/usr/local/bin/ledgerbase", "healthcheck"]
# serve shuts down gracefully on SIGTERM (docker stop); give it more than
# its shutdown_grace with `docker stop -t 30` or `docker run --stop-timeout 30`.
STOPSIGNAL SIGTERM
ENTRYPOINT ["/usr/local/bin/ledgerbase"]
CMD ["serve"]
