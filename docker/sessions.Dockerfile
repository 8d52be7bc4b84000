# syntax=docker/dockerfile:1.7
# sessions: the WhatsApp links, sharded by user; replica k of the StatefulSet is shard k. Carries Chromium
# (Debian package) for WA_ENGINE=webjs; puppeteer never downloads a browser of its own.
# Build from the repository root:  docker build -f docker/sessions.Dockerfile -t bns/sessions:<version> .

# ---- build: compile the two libraries and the service with tsc ------------------------------------
FROM node:24.21.0-bookworm-slim AS build
WORKDIR /app
ENV PUPPETEER_SKIP_DOWNLOAD=true NPM_CONFIG_UPDATE_NOTIFIER=false
COPY package.json package-lock.json .npmrc .puppeteerrc.cjs tsconfig.base.json ./
COPY libs/contracts/package.json libs/contracts/
COPY libs/service-kit/package.json libs/service-kit/
COPY services/sessions/package.json services/sessions/
COPY docker/scripts/prune-workspaces.mjs docker/scripts/
RUN node docker/scripts/prune-workspaces.mjs --build libs/contracts libs/service-kit services/sessions \
 && npm install --ignore-scripts --no-audit --no-fund
COPY libs/contracts/ libs/contracts/
COPY libs/service-kit/ libs/service-kit/
COPY services/sessions/ services/sessions/
RUN npx tsc -p libs/contracts/tsconfig.build.json \
 && npx tsc -p libs/service-kit/tsconfig.build.json \
 && npx tsc -p services/sessions/tsconfig.build.json

# ---- prod-deps: production dependencies of this service only -------------------------------------
FROM node:24.21.0-bookworm-slim AS prod-deps
WORKDIR /app
ENV PUPPETEER_SKIP_DOWNLOAD=true NPM_CONFIG_UPDATE_NOTIFIER=false
COPY package.json package-lock.json .npmrc .puppeteerrc.cjs ./
COPY libs/contracts/package.json libs/contracts/
COPY libs/service-kit/package.json libs/service-kit/
COPY services/sessions/package.json services/sessions/
COPY docker/scripts/prune-workspaces.mjs docker/scripts/
# The pinned fixes of whatsapp-web.js 1.34.7 (see services/sessions/README.md): scripts are off here, so
# patch-package runs by hand.
COPY patches/ patches/
RUN node docker/scripts/prune-workspaces.mjs libs/contracts libs/service-kit services/sessions \
 && npm install --omit=dev --ignore-scripts --no-audit --no-fund \
 && npx --yes patch-package@8.0.1 --error-on-fail \
 && rm -rf patches \
 && npm cache clean --force

# ---- runtime ---------------------------------------------------------------------------------------
FROM node:24.21.0-bookworm-slim AS runtime
# tini reaps the Chromium processes whatsapp-web.js leaves behind; node as PID 1 would not.
RUN apt-get update \
 && apt-get install -y --no-install-recommends chromium fonts-liberation ca-certificates tini \
 && rm -rf /var/lib/apt/lists/*
ENV NODE_ENV=production PORT=3001 \
    PUPPETEER_SKIP_DOWNLOAD=true CHROMIUM_PATH=/usr/bin/chromium WEBJS_DATA_PATH=/tmp/wwebjs
WORKDIR /app
# Everything belongs to root and is only readable by the app user: the process cannot rewrite its code.
COPY --from=prod-deps /app/node_modules node_modules/
COPY --from=build /app/libs/contracts/package.json libs/contracts/
COPY --from=build /app/libs/contracts/dist libs/contracts/dist/
COPY --from=build /app/libs/service-kit/package.json libs/service-kit/
COPY --from=build /app/libs/service-kit/dist libs/service-kit/dist/
COPY --from=build /app/services/sessions/package.json services/sessions/
COPY --from=build /app/services/sessions/dist services/sessions/dist/
COPY docker/scripts/probe.mjs docker/scripts/wait-for.mjs docker/scripts/sessions-entrypoint.sh docker/
# whatsapp-web.js caches the WhatsApp Web version in ./.wwebjs_cache (the working directory): the one
# folder under /app the app user may write.
RUN mkdir -p /app/.wwebjs_cache && chown 1000:1000 /app/.wwebjs_cache
# The node user of the base image, by number so Kubernetes' runAsNonRoot can verify it.
USER 1000:1000
EXPOSE 3001
HEALTHCHECK --interval=15s --timeout=5s --start-period=30s --retries=3 CMD ["node", "/app/docker/probe.mjs", "/healthz"]
ENTRYPOINT ["/usr/bin/tini", "--", "/app/docker/sessions-entrypoint.sh"]
CMD ["node", "services/sessions/dist/main.js"]
