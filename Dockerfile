# Transcript Bridge: one static binary on distroless, running as a non-root user.
#
#   docker build -t transcript-bridge --build-arg VERSION=v1.2.3 --build-arg COMMIT=$(git rev-parse HEAD) .
#   docker run -p 8080:8080 -v bridge-data:/data transcript-bridge
#
# The build stage only runs scripts/build.sh, which CI runs outside Docker too (.ci/run starts
# the binary it makes in an empty environment and waits for /healthz): what CI proves is what
# this image runs. cmd/bridge/container_test.go keeps the rules of this file (pinned images,
# one USER, the HEALTHCHECK, the build through scripts/build.sh).
#
# Base images are pinned by version and by digest (the multi-platform index digest, so
# linux/amd64 and linux/arm64 both resolve).

FROM golang:1.26.8-bookworm@sha256:a688600ca24f8a4d3ca77f95b0dd40704a9fc787c826660eb7ba0b641b8b175d AS build
WORKDIR /src
# The modules first, so that a change of the source alone does not download them again.
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
ARG COMMIT=unknown
ARG DATE=
# gcc and glibc's static libraries come with the golang image: no apt-get needed.
RUN VERSION="$VERSION" COMMIT="$COMMIT" DATE="$DATE" scripts/build.sh /out/bridge \
 && mkdir -p /out/data/inbox

# distroless/static: CA certificates, tzdata, /tmp and /etc/passwd (user nonroot, 65532); no
# shell and no libc, which the static binary does not need.
FROM gcr.io/distroless/static-debian12:nonroot@sha256:afa5c872c891853ca7fcf1f12c3edb23f7eeef36189728842dd51042ff57f7ab
ARG VERSION=dev
ARG COMMIT=unknown
LABEL org.opencontainers.image.title="Transcript Bridge" \
      org.opencontainers.image.description="Recordings from Zoom, Google Drive, S3 and folders to the transcription API; results out as signed webhooks and nightly exports" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${COMMIT}" \
      org.opencontainers.image.source="https://github.com/transcript-bridge/bridge"
COPY --from=build /out/bridge /usr/local/bin/bridge
COPY configs/docker/bridge.yaml /etc/bridge/bridge.yaml
# /data (new in this image, made from /out/data) and /data/inbox belong to the user; a named
# volume mounted there starts with that owner.
COPY --from=build --chown=65532:65532 /out/data /data
# Relative paths of any configuration (./bridge.db, ./inbox) land in the volume.
WORKDIR /data
VOLUME ["/data"]
# The server must listen on every interface of the container, whichever configuration is
# mounted at /etc/bridge/bridge.yaml (a variable overrides the file; bridge healthcheck reads
# it too). The server also takes sources' webhooks (/hooks/<type>/<name>).
ENV BRIDGE_SERVER__ADDR=0.0.0.0:8080
EXPOSE 8080
USER 65532:65532
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD ["/usr/local/bin/bridge", "healthcheck"]
ENTRYPOINT ["/usr/local/bin/bridge"]
CMD ["run", "--config", "/etc/bridge/bridge.yaml"]
