# syntax=docker/dockerfile:1
# The service as production runs it: Node 24 on Debian slim, the production dependencies from the
# lockfile, our TypeScript run as-is (Node strips the types; no build step), as the unprivileged `node`
# user. test/deploy/dockerfile-replay.test.ts replays these steps; dockerfile-lint.test.ts lints these rules.
FROM node:24-bookworm-slim

WORKDIR /app

# npm start's environment (a test keeps them equal): one glibc malloc arena for every thread, so resident memory
# stays level over hours (docs/performance.md), and Node's compile cache, filled below, so the service never loads
# Node's type stripper (about 17 MiB less resident memory per instance).
ENV MALLOC_ARENA_MAX=1 NODE_COMPILE_CACHE=node_modules/.cache/node-compile-cache

# Dependencies first, so a change to the code reuses the installed layer. The cache mount keeps npm's
# download cache out of the image. `prepare` skips tap's build when tap (a dev dependency) is absent.
COPY package.json package-lock.json ./
RUN --mount=type=cache,target=/root/.npm npm ci --omit=dev --no-audit --no-fund

# Only what the service imports at run time; files stay owned by root, read-only to the service.
COPY schemas/ schemas/
COPY src/ src/

# The compile cache belongs to the node user (uid 1000 in the official image), who fills it with the CMD's
# flags: Node keys the cache by the user and the V8 flags. The service then strips no TypeScript at start,
# and never loads Node's type stripper. Read-only at run time (readOnlyRootFilesystem): a file that differs
# from its cached copy is simply stripped again.
RUN mkdir -p node_modules/.cache/node-compile-cache && chown 1000:1000 node_modules/.cache/node-compile-cache
USER node
RUN ["node", "--max-semi-space-size=32", "--max-old-space-size=256", "src/compile-cache.ts"]
EXPOSE 3000
# node itself is the main process (never npm), so SIGTERM reaches the graceful shutdown. The V8 flags are
# npm start's (a test keeps them equal), pinned because Node sizes the young generation from the container's
# memory limit otherwise (1 MiB semi-spaces in a 512 Mi pod); configuration comes from the environment only.
CMD ["node", "--max-semi-space-size=32", "--max-old-space-size=256", "src/server.ts"]
