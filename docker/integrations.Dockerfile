# syntax=docker/dockerfile:1.7
# integrations: API keys, webhook endpoints and the signed webhook deliveries (the one service with outbound HTTP).
# Build from the repository root:  docker build -f docker/integrations.Dockerfile -t bns/integrations:<version> .

# ---- build: compile the two libraries and the service with tsc ------------------------------------
FROM node:24.21.0-bookworm-slim AS build
WORKDIR /app
ENV PUPPETEER_SKIP_DOWNLOAD=true NPM_CONFIG_UPDATE_NOTIFIER=false
COPY package.json package-lock.json .npmrc .puppeteerrc.cjs tsconfig.base.json ./
COPY libs/contracts/package.json libs/contracts/
COPY libs/service-kit/package.json libs/service-kit/
COPY services/integrations/package.json services/integrations/
COPY docker/scripts/prune-workspaces.mjs docker/scripts/
RUN node docker/scripts/prune-workspaces.mjs --build libs/contracts libs/service-kit services/integrations \
 && npm install --ignore-scripts --no-audit --no-fund
COPY libs/contracts/ libs/contracts/
COPY libs/service-kit/ libs/service-kit/
COPY services/integrations/ services/integrations/
RUN npx tsc -p libs/contracts/tsconfig.build.json \
 && npx tsc -p libs/service-kit/tsconfig.build.json \
 && npx tsc -p services/integrations/tsconfig.build.json

# ---- prod-deps: production dependencies of this service only -------------------------------------
FROM node:24.21.0-bookworm-slim AS prod-deps
WORKDIR /app
ENV PUPPETEER_SKIP_DOWNLOAD=true NPM_CONFIG_UPDATE_NOTIFIER=false
COPY package.json package-lock.json .npmrc .puppeteerrc.cjs ./
COPY libs/contracts/package.json libs/contracts/
COPY libs/service-kit/package.json libs/service-kit/
COPY services/integrations/package.json services/integrations/
COPY docker/scripts/prune-workspaces.mjs docker/scripts/
RUN node docker/scripts/prune-workspaces.mjs libs/contracts libs/service-kit services/integrations \
 && npm install --omit=dev --ignore-scripts --no-audit --no-fund \
 && npm cache clean --force

# ---- runtime ---------------------------------------------------------------------------------------
FROM node:24.21.0-bookworm-slim AS runtime
ENV NODE_ENV=production PORT=3005
WORKDIR /app
# Everything belongs to root and is only readable by the app user: the process cannot rewrite its code.
COPY --from=prod-deps /app/node_modules node_modules/
COPY --from=build /app/libs/contracts/package.json libs/contracts/
COPY --from=build /app/libs/contracts/dist libs/contracts/dist/
COPY --from=build /app/libs/service-kit/package.json libs/service-kit/
COPY --from=build /app/libs/service-kit/dist libs/service-kit/dist/
COPY --from=build /app/services/integrations/package.json services/integrations/
COPY --from=build /app/services/integrations/dist services/integrations/dist/
COPY docker/scripts/probe.mjs docker/scripts/wait-for.mjs docker/
# The node user of the base image, by number so Kubernetes' runAsNonRoot can verify it.
USER 1000:1000
EXPOSE 3005
HEALTHCHECK --interval=15s --timeout=5s --start-period=30s --retries=3 CMD ["node", "/app/docker/probe.mjs", "/healthz"]
CMD ["node", "services/integrations/dist/main.js"]
