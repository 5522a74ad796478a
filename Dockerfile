# syntax=docker/dockerfile:1
#
# longrun's HTTP API in a container: a build stage compiles the single executable (Bun's
# runtime, libSQL's native module and the memory Worker inside), a runtime stage holds only that
# executable on distroless/cc (glibc, libgcc_s and libstdc++, no shell, no package manager), as a
# non-root user.
#
#   docker build -t longrun .
#   docker run --rm -p 8080:8080 -v longrun-data:/data --read-only longrun
#   docker buildx build --platform linux/amd64,linux/arm64 -t longrun .   (cross-compiled, no emulation)
#
# The project root is /data (a volume): memory.db, raw_data/, and .longrun/http.json with the
# URL and, unless they are given, the host, agent and metrics bearer tokens (mode 0600, readable
# by the same user only), kept across restarts. Given tokens: LONGRUN_HOST_TOKEN_FILE,
# LONGRUN_AGENT_TOKEN_FILE, LONGRUN_METRICS_TOKEN_FILE naming mounted secrets (examples/sidecar/
# does), read again when they change. The server answers to the Host `longrun` (the name other
# containers reach it by) and to localhost. The status page's login link is not printed (it
# would be in `docker logs`): `docker exec <container> longrun open --no-browser` asks the
# server for one. HEALTHCHECK runs `longrun health` (no shell or curl here).
#
# What the runtime needs, as tests/release/container.test.ts checks without an image: /proc (every
# runtime mounts it), glibc, libgcc_s.so.1 (libSQL's native module), and one place to load that
# module from. The executable writes it once to $HOME/.cache/longrun/; on a read-only root file
# system (--read-only, readOnlyRootFilesystem) it loads it from memory instead, so a read-only
# and noexec /tmp is fine. Set LONGRUN_NATIVE_DIR to pin the place.

ARG NODE_IMAGE=node:22-bookworm-slim
ARG RUNTIME_IMAGE=gcr.io/distroless/cc-debian12:nonroot

# ---- build: compile for the platform being built (buildx sets TARGETARCH), on the build machine
FROM --platform=$BUILDPLATFORM ${NODE_IMAGE} AS build
ARG TARGETARCH
ARG BUILDARCH
# the commit `longrun --version` names (.git is not in the build context): --build-arg LONGRUN_COMMIT=$(git rev-parse --short=12 HEAD)
ARG LONGRUN_COMMIT=unknown
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
RUN case "$TARGETARCH" in \
      amd64) target=linux-x64 ;; \
      arm64) target=linux-arm64 ;; \
      *) echo "no longrun build for $TARGETARCH (amd64 and arm64 only)" >&2; exit 1 ;; \
    esac \
 && LONGRUN_COMMIT="$LONGRUN_COMMIT" node_modules/.bin/bun scripts/compile.ts /out/longrun --target "$target" \
 && if [ "$TARGETARCH" = "$BUILDARCH" ]; then /out/longrun --version; fi \
 && mkdir -p /out/data

# ---- runtime
FROM ${RUNTIME_IMAGE}
COPY --from=build /out/longrun /usr/local/bin/longrun
# the volume's first contents: an empty root owned by the runtime user (distroless nonroot = 65532)
COPY --from=build --chown=65532:65532 /out/data /data
USER 65532:65532
ENV HOME=/home/nonroot
WORKDIR /data
VOLUME ["/data"]
EXPOSE 8080
STOPSIGNAL SIGTERM
HEALTHCHECK --interval=30s --timeout=5s --start-period=10s --retries=3 CMD ["/usr/local/bin/longrun", "health", "--timeout", "4"]
ENTRYPOINT ["/usr/local/bin/longrun"]
CMD ["http", "--root", "/data", "--host", "0.0.0.0", "--port", "8080", "--expose", "--allowed-host", "longrun"]
