# syntax=docker/dockerfile:1
# The service as production runs it: Node 24 on Debian slim, the production dependencies from the
# lockfile, our TypeScript run as-is (Node strips the types; no build step), as the unprivileged `node`
# user. test/deploy/dockerfile.test.ts replays these steps and lints these rules.
FROM node:24-bookworm-slim

WORKDIR /app

# Dependencies first, so a change to the code reuses the installed layer. The cache mount keeps npm's
# download cache out of the image. `prepare` skips tap's build when tap (a dev dependency) is absent.
COPY package.json package-lock.json ./
RUN --mount=type=cache,target=/root/.npm npm ci --omit=dev --no-audit --no-fund

# Only what the service imports at run time; files stay owned by root, read-only to the service.
COPY schemas/ schemas/
COPY src/ src/

USER node
EXPOSE 3000
# node itself is the main process (never npm), so SIGTERM reaches the graceful shutdown. The V8 flags are
# npm start's (a test keeps them equal); configuration comes from the environment only.
CMD ["node", "--max-semi-space-size=4", "--max-old-space-size=256", "src/server.ts"]
